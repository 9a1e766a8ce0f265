"""Teaching view: every scheduling event of a small run, with its reason.

:class:`DecisionLog` is an :class:`~o2ksim.engine.monitor.Observer`: the
engine tells it about arrivals, allocations, releases, ends and every decision
a policy takes (with the policy's ``note``); it writes one line per event.
Runs are made with ``explain=True``, so backfill policies also report their
reservations (:class:`~o2ksim.engine.decisions.Reserve`).

The log adds the *why* a policy's short note leaves implicit: when a job is
backfilled, it names the reservations made earlier in the same pass and says
whether the job ends (by its requested runtime) before each reserved start on
its host, or runs past it on processors the reserved job does not need -- the
two cases of T§3.2.1, Figure 1.  After each pass it lists the jobs still
waiting and the free processors per host.

>>> from o2ksim.explain import explain
>>> result, log = explain("explain-backfill")
>>> print(log.lines()[0])
 0:00:00  J1    arrives     4 procs, requests 1:00:00 (runs 0:50:00)
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace
from typing import Any

from o2ksim.clock import clock
from o2ksim.engine.decisions import Kill, Preempt, Reject, Reserve, Resize, Resume, Start, WakeAt
from o2ksim.engine.monitor import Observer
from o2ksim.errors import O2KSimError
from o2ksim.experiments.scenario import Scenario, load_scenario
from o2ksim.jobs import Job, JobState
from o2ksim.machine import MachineSpec, machine_from_header
from o2ksim.run.api import run_config
from o2ksim.run.results import Result


def _reservations(items: list[tuple[int, float]], what: str) -> str:
    """``J3's reservation at 1:00:00`` or ``the reservations of J3 (1:00:00) and J4 (0:30:00)``."""
    if len(items) == 1:
        job, at = items[0]
        return f"J{job}'s {what} at {clock(at)}"
    listed = " and ".join(f"J{job} ({clock(at)})" for job, at in items)
    return f"the {what}s of {listed}"


@dataclass(frozen=True)
class LogEntry:
    """One line of the decision log."""

    time: float
    event: str
    job: int | None
    text: str
    host: str | None = None

    def line(self) -> str:
        who = f"J{self.job}" if self.job is not None else ""
        return f"{clock(self.time):>8}  {who:<5} {self.event:<11} {self.text}".rstrip()


class DecisionLog(Observer):
    """Records every event of a run as a :class:`LogEntry` (see the module docstring).

    ``queue``: after each pass, add a ``waiting`` line listing the queued jobs
    and the free processors per host.  Reservations are recomputed at every
    pass; a ``reserved`` line is written when a job gets one, or when its
    reservation moves (sliding, T§3.2.1 Fig. 2) -- every time with
    ``all_reservations`` -- and an ``unreserved`` line when a waiting job loses it.
    """

    def __init__(
        self, machine: MachineSpec, *, queue: bool = True, all_reservations: bool = False
    ) -> None:
        self.machine = machine
        self.queue = queue
        self.entries: list[LogEntry] = []
        self._free = {h.name: h.procs for h in machine.hosts}
        self._held: dict[int, tuple[str, int]] = {}
        self._waiting: dict[int, Job] = {}
        self._reserved: list[tuple[Job, str, float]] = []
        self._last_res: dict[int, tuple[str, float]] = {}
        self._this_res: dict[int, tuple[str, float]] = {}
        self.all_reservations = all_reservations

    # -- engine hooks ---------------------------------------------------------------------
    def on_arrival(self, job: Job, now: float) -> None:
        spec = job.spec
        mem = f", {spec.mem / 1024:g} MB" if spec.mem > 0 else ""
        self._add(now, "arrives", job.id,
                  f"{spec.procs} procs{mem}, requests {clock(spec.req_time)} "
                  f"(runs {clock(spec.run_time)})")  # fmt: skip
        self._waiting[job.id] = job

    def on_allocation(self, job: Job, now: float) -> None:
        old = self._held.pop(job.id, None)
        if old is not None:
            self._free[old[0]] += old[1]
        if job.host is not None:
            self._free[job.host] -= job.alloc_procs
            self._held[job.id] = (job.host, job.alloc_procs)
        self._waiting.pop(job.id, None)

    def on_release(self, job: Job, now: float) -> None:
        old = self._held.pop(job.id, None)
        if old is not None:
            self._free[old[0]] += old[1]
        if job.state is JobState.QUEUED:  # a trial run that did not finish (T§3.2.2)
            self._add(now, "requeued", job.id, "trial run over without finishing (in time or "
                      "in its trial memory): waits in the queue as a full job", old and old[0])
            self._waiting[job.id] = job

    def on_end(self, job: Job, now: float) -> None:
        self._waiting.pop(job.id, None)
        self._last_res.pop(job.id, None)
        state = job.state.value
        if state == "rejected":
            self._add(now, "rejected", job.id, job.reason or "rejected")
            return
        ran = now - job.last_start if not math.isnan(job.last_start) else 0.0
        text = f"on {job.host} after running {clock(ran)}"
        if state == "killed":
            text += f" ({job.reason})" if job.reason else ""
        elif job.spec.run_time < job.spec.req_time:
            text += f", {clock(job.spec.req_time - job.spec.run_time)} less than requested"
        self._add(now, "ends" if state == "completed" else state, job.id, text, job.host)

    def on_decision(self, now: float, d: Any) -> None:
        if isinstance(d, Start):
            procs = d.procs if d.procs is not None else d.job.spec.procs
            text = f"on {d.host} ({procs} procs)"
            waited = now - d.job.spec.submit
            if waited > 0:
                text += f" after waiting {clock(waited)}"
            if d.note:
                text += f": {d.note}"
            why = self._backfill_reason(d, now)
            if why:
                text += f"; {why}"
            held = self._last_res.get(d.job.id) if d.on_limit != "requeue" else None
            if held is not None and held[1] > now:
                text += (f"; earlier than its reservation ({clock(held[1])}): running jobs ended "
                         "before their requested times and the reservation slid")  # fmt: skip
            elif held is not None:
                text += "; at its reserved time"
            if d.time_limit is not None:
                text += f"; stopped at {clock(now + d.time_limit)} ({d.on_limit})"
            event = "backfilled" if d.note.startswith("backfilled") else "starts"
            self._add(now, event, d.job.id, text, d.host)
        elif isinstance(d, Reserve):
            self._reserved.append((d.job, d.host, d.at))
            self._this_res[d.job.id] = (d.host, d.at)
            last = self._last_res.get(d.job.id)
            if last == (d.host, d.at) and not self.all_reservations:
                return  # recomputed, unchanged
            free = self._free.get(d.host, 0)
            text = f"{d.host} from {clock(d.at)} for {d.job.spec.procs} procs ({free} free now)"
            if last is not None and last[0] == d.host and last != (d.host, d.at):
                text += f", moved {'earlier' if d.at < last[1] else 'later'} from {clock(last[1])}"
            elif last is not None and last[0] != d.host:
                text += f", moved from {last[0]} at {clock(last[1])}"
            self._add(now, "reserved", d.job.id, text + (f": {d.note}" if d.note else ""), d.host)
        elif isinstance(d, Preempt):
            self._add(now, "preempted", d.job.id, d.note or "loses its processors", d.job.host)
        elif isinstance(d, Resume):
            self._add(now, "resumes", d.job.id, d.note or "gets processors back", d.job.host)
        elif isinstance(d, Resize):
            self._add(now, "resized", d.job.id,
                      f"{d.job.alloc_procs} -> {d.procs} procs{': ' + d.note if d.note else ''}",
                      d.job.host)  # fmt: skip
        elif isinstance(d, Kill):
            self._add(now, "killed", d.job.id, d.reason or "killed by the policy")
        elif isinstance(d, Reject):
            self._add(now, "refused", d.job.id, d.reason or "rejected by the policy")
        elif isinstance(d, WakeAt):
            where = f" on {d.host}" if d.host else ""
            self._add(now, "timer", None, f"pass requested at {clock(d.time)}{where}"
                      f"{' (' + d.tag + ')' if d.tag else ''}")  # fmt: skip

    def on_pass(self, now: float, n_decisions: int) -> None:
        self._reserved = []
        for job_id, (host, at) in self._last_res.items():
            if job_id not in self._this_res and job_id in self._waiting:
                self._add(now, "unreserved", job_id,
                          f"loses its reservation on {host} at {clock(at)} (no longer among "
                          "the jobs the policy reserves for)")  # fmt: skip
        self._last_res, self._this_res = self._this_res, {}
        if self.queue and self._waiting:
            waiting = ", ".join(f"J{j.id}" for j in self._waiting.values())
            free = ", ".join(f"{h}={p}" for h, p in self._free.items())
            self._add(now, "waiting", None, f"{waiting}  (free procs: {free})")

    # -- reasons ----------------------------------------------------------------------------
    def _backfill_reason(self, d: Start, now: float) -> str:
        """Why a backfilled job delays no reservation made earlier in this pass (T§3.2.1 Fig. 1)."""
        if not d.note.startswith("backfilled") or not self._reserved:
            return ""
        end = now + d.job.spec.req_time
        before: list[tuple[int, float]] = []
        past: list[tuple[int, float]] = []
        for rjob, host, at in self._reserved:
            if host == d.host:
                (before if end <= at else past).append((rjob.id, at))
        parts = []
        if before:
            parts.append(f"it ends by {clock(end)} (its requested time), before "
                         + _reservations(before, "reservation"))  # fmt: skip
        if past:
            who = f"J{past[0][0]} does" if len(past) == 1 else "they do"
            parts.append(f"it may run past {_reservations(past, 'reserved start')}, but only on "
                         f"processors {who} not need")  # fmt: skip
        if not parts:
            hosts = sorted({h for _, h, _ in self._reserved})
            return f"{d.host} holds no reservation (reserved: {', '.join(hosts)})"
        return "; ".join(parts)

    def _add(self, now: float, event: str, job: int | None, text: str,
             host: str | None = None) -> None:  # fmt: skip
        entry = LogEntry(now, event, job, text, host)
        self.entries.append(entry)
        self.on_entry(entry)

    # -- state, for views that draw the log (o2ksim.report.player) ------------------------------
    def on_entry(self, entry: LogEntry) -> None:
        """Called after every line is added, with the state of the log already updated;
        override to record what the line's moment looked like (the player does)."""

    @property
    def free_procs(self) -> dict[str, int]:
        """Free processors per host, as the log has tracked them so far."""
        return dict(self._free)

    @property
    def waiting(self) -> list[Job]:
        """The jobs waiting now, in arrival order (requeued trials at the end)."""
        return list(self._waiting.values())

    # -- output -------------------------------------------------------------------------------
    def lines(self) -> list[str]:
        return [e.line() for e in self.entries]

    def text(self) -> str:
        return "\n".join(self.lines())


def explain(
    scenario: Any = "explain-backfill",
    *,
    policy: str | None = None,
    params: dict[str, Any] | None = None,
    queue: bool = True,
    all_reservations: bool = False,
    max_jobs: int = 200,
    observers: tuple[Any, ...] = (),
    log_class: type[DecisionLog] | None = None,
) -> tuple[Result, DecisionLog]:
    """Run the first run of a (small) scenario with the decision log attached.

    ``scenario``: a :class:`~o2ksim.experiments.scenario.Scenario`, a scenario file or the
    name of a shipped one (default: ``explain-backfill``, the backfill example
    of T§3.2.1, Figure 1).  ``policy``/``params`` replace the scenario's first
    policy or add parameter overrides (e.g. ``{"reservations": 2}``).
    ``observers`` are attached to the run too (e.g. a
    :class:`~o2ksim.report.gantt.GanttRecorder`).  ``log_class``: a subclass of
    :class:`DecisionLog` to record with (the player's, which keeps a frame per line).
    Returns the :class:`~o2ksim.run.results.Result` and the log.
    """
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    run = sc.plan()[0]
    if policy is not None or params:
        config = copy.deepcopy(run.config)
        if policy is not None:
            config["policy"] = {"name": policy, "label": policy, "params": {}}
        if params:
            config["policy"]["params"].update(params)
        run = replace(run, config=config)
    cfg = sc.run_config(run, explain=True)
    trace = cfg.workload.build(cfg.machine.total_procs if cfg.machine is not None else None)
    if len(trace) > max_jobs:
        raise O2KSimError(
            f"this workload has {len(trace)} jobs, above the limit of {max_jobs} (--max-jobs; "
            "max_jobs in Python): its decision log holds every event; use a smaller scenario "
            "or raise the limit"
        )
    machine = cfg.machine or machine_from_header(trace.header, trace.source)
    log = (log_class or DecisionLog)(machine, queue=queue, all_reservations=all_reservations)
    result = run_config(cfg, observers=[log, *observers])
    return result, log


__all__ = [
    "DecisionLog",
    "LogEntry",
    "clock",
    "explain",
    "rejected_lines",
    "run_header",
    "run_title",
]


def run_header(result: Any, overrides: dict[str, Any] | None = None) -> str:
    """One line naming the policy with every parameter override, the machine and the workload.

    ``overrides``: the parameters the user changed (``--set``, ``--reservations``);
    they are listed first, then the estimates and the window when set.
    """
    return f"{run_title(result, overrides)} on {result.machine.describe()}"


def run_title(result: Any, overrides: dict[str, Any] | None = None) -> str:
    """``policy (override=value, ...): workload[, estimates X]`` -- a chart title."""
    pol = result.policy.get("name", "?")
    shown = {k: result.policy.get(k, v) for k, v in (overrides or {}).items()}
    text = pol + (" (" + ", ".join(f"{k}={v}" for k, v in shown.items()) + ")" if shown else "")
    text += f": {result.config.get('workload', '')}"
    est = result.config.get("estimates")
    if est and est != "requested":
        text += f", estimates {est}"
    return text


def rejected_lines(result: Any) -> list[str]:
    """``J7: needs 12 procs, the largest host has 8`` for every job the run rejected."""
    jobs = result.jobs
    rej = jobs.loc[jobs["status"] == "rejected"]
    return [f"J{int(j)}: {r or 'rejected'}" for j, r in zip(rej["job_id"], rej["reason"], strict=True)]
