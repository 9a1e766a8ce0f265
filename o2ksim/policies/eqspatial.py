"""EQspatial-MinInterval: dynamic equal space partitioning across hosts (T§3.2.3, T§6.1, SPEC §3.4).

Every job gets all the memory it requests; the processors of each host are
repartitioned as equally as possible among the jobs placed on it, never more
than a job requested, with linear slowdown on fewer processors (the engine's
``Resize``).  One pass:

1. books the catch-up credit waiting jobs earned since the last pass
   (:class:`~o2ksim.policies.equipartition.CreditLedger`), forgets departed
   jobs (their host must be repartitioned), notices jobs that finished
   catching up or passed the long-job threshold (``/>50hr``);
2. places new (and, after a departure, waiting) jobs in submission order, each
   on the host with enough free memory and the largest ratio processors /
   requested processors (:func:`~o2ksim.policies.equipartition.choose_host`);
   a job no host can take gets the preemptive immediate service of T§3.2.2
   (a quantum on its requested processors with the initial memory, through
   :mod:`o2ksim.policies.immediate`) and, if it does not finish in it, waits
   in the queue for memory, earning catch-up credit;
3. repartitions each host that needs it, if MinInterval allows and no trial
   run is using (or owes back) processors there
   (:func:`~o2ksim.policies.equipartition.host_allocation`: shrinks first, then
   starts, then grows, so the engine never sees an over-commit); a host that
   may not repartition yet lets newly placed jobs run on its free processors
   and asks for a pass at the time it may (``WakeAt``, the extra event of
   T§3.4).

A *repartitioning* is a recomputation that resizes at least one running job;
only those count against MinInterval (starting a placed job on processors that
are free is not one).  All the choices the thesis leaves open are listed in
``docs/background/policies/eqspatial.md``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from o2ksim.clock import clock
from o2ksim.engine.decisions import Resize, Start, WakeAt
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.machine import MachineSpec
from o2ksim.policies import immediate
from o2ksim.policies.base import POLICIES, Param, Policy
from o2ksim.policies.equipartition import (
    CreditLedger,
    Deadlines,
    HostJob,
    HostLoad,
    RepartitionClock,
    choose_host,
    equipartition,
    host_allocation,
    placement_ratio,
)
from o2ksim.policies.immediate.hosts import HostTrials
from o2ksim.policies.immediate.settings import amount_check
from o2ksim.units import parse_duration

CATCHING_UP, LONG_RUNNING = 1, 2  # HostJob.privileged


@dataclass(eq=False)
class _Host:
    """The policy's view of one host between passes."""

    name: str
    capacity: int
    jobs: dict[int, Job] = field(default_factory=dict)  # placed: running or waiting for processors
    pending: dict[int, Job] = field(default_factory=dict)  # placed, not started yet
    pending_mem: int = 0  # memory promised to pending jobs (the engine does not know it)
    requested: int = 0  # requested processors of placed jobs not catching up
    catchup_procs: int = 0  # requested processors of placed jobs catching up
    dirty: bool = False  # the allocation may differ from an equipartition
    reasons: list[str] = field(default_factory=list)
    timer: float | None = None  # pending repartitioning wake-up

    def touch(self, reason: str) -> None:
        self.dirty = True
        if len(self.reasons) < 6:
            self.reasons.append(reason)
        elif len(self.reasons) == 6:
            self.reasons.append("...")


class EQSpatial(Policy):
    """EQspatial-MinInterval (T§3.2.3): equal processor shares per host, repartitioned at most every MinInterval."""

    kind = "eqspatial"
    description = "dynamic equal space partitioning per host, MinInterval between repartitionings"
    source = "T§3.2.3, T§6.1"
    follows_free_procs = False  # partitions each host's full size (no availability periods)
    PARAMS: ClassVar[dict[str, Param]] = {
        "min_interval": Param(
            (int, float, str),
            "5m",
            "minimum time between two processor repartitionings on one host "
            "(seconds or e.g. '5m'; 0 = repartition at every arrival and departure)",
            check=amount_check(parse_duration, positive=False),
            check_help="must be a duration >= 0 (seconds, or e.g. '5m')",
            option=True,
            metavar="DURATION",
        ),
        "long_job_threshold": Param(
            (int, float, str),
            None,
            "jobs that have run longer than this keep their full request while every other "
            "job on the host has a processor (EQspatial/>50hr: '50h'); unset = off",
            check=amount_check(parse_duration, positive=True),
            check_help="must be a positive duration (seconds, or e.g. '50h')",
            option=True,
            metavar="DURATION",
        ),
        # the immediate service of T§3.2.2 for jobs no host has the memory for (T§3.2.3)
        **immediate.PARAMS,
        "immediate_service": replace(
            immediate.PARAMS["immediate_service"],
            default="preemptive",
            help="immediate service for a job no host has the memory for (T§3.2.3 -> T§3.2.2): "
            "preemptive | soon (free processors only) | off (it just waits)",
        ),
    }

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        p = self.params
        self.min_interval = parse_duration(p["min_interval"])
        t = p["long_job_threshold"]
        self.long_threshold: float | None = None if t is None else parse_duration(t)
        self.trial_settings = immediate.TrialSettings.from_params(p)
        self._reset()

    def _reset(self) -> None:
        self._hosts: dict[str, _Host] = {}
        self._where: dict[int, str] = {}  # job id -> host it is placed on
        self._credit: dict[int, float] = {}  # catching-up job -> credit (processor-seconds)
        self._long: set[int] = set()
        self._catchup_due = Deadlines()
        self._long_due = Deadlines()
        self._ledger = CreditLedger()
        self._waiting: dict[int, Job] = {}  # not placed, waiting for memory
        self._in_system: Counter[int] = Counter()  # requested processors -> jobs in the system
        self._clock = RepartitionClock(self.min_interval)
        self._total_procs = 0
        self.credits: dict[int, float] = {}  # every job's catch-up credit, for the output
        self._notes: dict[int, str] = {}  # placement reasons, for the decision log (explain)
        self._trials = HostTrials(self.trial_settings, lambda name: self._hosts[name].pending_mem)
        self.counters: Counter[str] = Counter()
        self._blocked: set[str] = set()
        self._job_counts: dict[str, set[int]] = {
            "placed_on_arrival": set(), "waited": set(), "catchups": set(), "long_jobs": set(),
            "started_on_free": set(),
        }  # fmt: skip

    def bind(self, machine: MachineSpec, rng: np.random.Generator | None = None) -> None:
        super().bind(machine, rng)
        self._reset()
        self._hosts = {h.name: _Host(h.name, h.procs) for h in machine.hosts}
        self._total_procs = machine.total_procs
        self.counters["repartitions"] = 0
        self.counters["resizes"] = 0

    # ------------------------------------------------------------------------------ the pass
    def schedule(self, snap: Snapshot) -> list[Any]:
        now = snap.now
        out: list[Any] = []
        self._trials.begin_pass()
        self._ledger.accrue(now)
        in_system = self._in_system
        for job in snap.arrived:
            in_system[job.procs] += 1
        for job in snap.departed:
            if job.state.terminal:
                in_system[job.procs] -= 1
            self._forget(job)
        if self._trials.book.running or self._trials.book.to_resume:
            self._end_trials(snap, out)
        for timer in snap.timers:
            if timer.tag.startswith("repartition") and timer.host in self._hosts:
                h = self._hosts[timer.host]
                if h.timer is not None and h.timer <= now + 1e-9:
                    h.timer = None
        self._deadlines(now)
        self._place(snap, out)
        if self._trials.awaiting and (snap.departed or snap.timers):
            self._trials.retry(
                snap, out, self._waiting
            )  # free processors or eligibility may have changed
        self._blocked = self._trials.blocked_hosts()
        for h in self._hosts.values():
            if h.dirty or h.pending:
                self._resolve(h, snap.host_by_name[h.name], snap, out)
        if self._ledger.waiting:
            self._ledger.set_level(now, self._total_procs, self._in_system)
        else:
            self._ledger.since = now
        return out

    # ------------------------------------------------------------------------------ bookkeeping
    def _count(self, what: str, job_id: int) -> None:
        self._job_counts[what].add(job_id)

    def _forget(self, job: Job) -> None:
        if job.state.terminal and job.id in self._waiting:  # finished in its trial run
            del self._waiting[job.id]
            self._ledger.stop(job.id)
            self._ledger.credit.pop(job.id, None)
        name = self._where.pop(job.id, None)
        if name is None:
            return
        h = self._hosts[name]
        h.jobs.pop(job.id, None)
        if job.id in self._credit:
            del self._credit[job.id]
            self._catchup_due.drop(job.id)
            h.catchup_procs -= job.procs
        else:
            h.requested -= job.procs
        self._long.discard(job.id)
        self._long_due.drop(job.id)
        h.touch(f"J{job.id} left")

    def _deadlines(self, now: float) -> None:
        for job_id in self._catchup_due.due(now):
            name = self._where.get(job_id)
            if name is None or job_id not in self._credit:
                continue
            h = self._hosts[name]
            job = h.jobs[job_id]
            owed = self._credit[job_id] - job.work_done(now)
            if owed <= 1e-9 * max(1.0, self._credit[job_id]) + 1e-6:
                del self._credit[job_id]
                h.catchup_procs -= job.procs
                h.requested += job.procs
                h.touch(f"J{job_id} caught up")
            elif job.alloc_procs > 0:
                self._catchup_due.set(job_id, now + owed / job.alloc_procs)
        for job_id in self._long_due.due(now):
            name = self._where.get(job_id)
            if name is None:
                continue
            self._long.add(job_id)
            self._count("long_jobs", job_id)
            self._hosts[name].touch(f"J{job_id} has run {(self.long_threshold or 0) / 3600:g} h")

    # ------------------------------------------------------------------------------ placement
    def _place(self, snap: Snapshot, out: list[Any]) -> None:
        new = [j for j in snap.arrived if j.state is JobState.QUEUED]
        new.extend(j for j in snap.departed if j.state is JobState.QUEUED)  # back from a trial run
        retry = bool(snap.departed) and bool(self._waiting)
        if not new and not retry:
            return
        candidates = (
            [j for j in self._waiting.values() if j.state is JobState.QUEUED] if retry else []
        )
        candidates.extend(j for j in new if j.id not in self._waiting)
        candidates.sort(key=lambda j: (j.spec.submit, j.id))
        loads = [self._load(h, snap.host_by_name[h.name]) for h in self._hosts.values()]
        most_mem = max(x.free_mem for x in loads)
        for job in candidates:
            best = None if job.mem > most_mem else choose_host(loads, job.procs, job.mem)
            if best is None:
                if job.id not in self._waiting:
                    self._no_host(job, snap, out)
                continue
            self._trials.awaiting.pop(job.id, None)
            self._put(job, self._hosts[best.name], snap, loads)
            # keep this pass's loads current for the next job
            best.free_mem -= job.mem
            best.jobs += 1
            if job.id in self._credit:
                best.procs -= job.procs
            else:
                best.requested += job.procs
            most_mem = max(x.free_mem for x in loads)

    def _load(self, h: _Host, view: HostView) -> HostLoad:
        return HostLoad(
            h.name,
            h.capacity,
            h.capacity - h.catchup_procs,
            h.requested,
            view.free_mem - h.pending_mem,
            len(h.jobs),
        )

    def _put(self, job: Job, h: _Host, snap: Snapshot, loads: list[HostLoad]) -> None:
        waited = job.id in self._waiting
        self._waiting.pop(job.id, None)
        credit = self._ledger.stop(job.id)
        self._ledger.credit.pop(job.id, None)
        self._where[job.id] = h.name
        h.jobs[job.id] = job
        h.pending[job.id] = job
        h.pending_mem += job.mem
        if credit > 0:
            self._credit[job.id] = credit
            self.credits[job.id] = credit
            h.catchup_procs += job.procs
            self._count("catchups", job.id)
        else:
            h.requested += job.procs
        if not waited:
            self._count("placed_on_arrival", job.id)
        if snap.explain:
            ratios = ", ".join(
                f"{x.name} {x.procs}/({x.requested}+{job.procs})="
                f"{placement_ratio(x.procs, x.requested, job.procs):.2f}"
                for x in loads
                if x.free_mem >= job.mem and x.capacity >= job.procs and x.jobs < x.capacity
            )
            why = f"placed on {h.name}, the largest procs/requested ratio ({ratios})"
            if credit > 0:
                why += f"; catches up the {credit:.0f} processor-seconds it earned while waiting"
            self._notes[job.id] = why
        h.touch(f"J{job.id} placed")

    def _no_host(self, job: Job, snap: Snapshot, out: list[Any]) -> None:
        """No host has the memory (or a processor) for ``job``: immediate service, then wait.

        T§3.2.3: the job gets the immediate service of T§3.2.2 -- a quantum on
        its requested processors with the initial memory, on free processors or
        by preempting eligible jobs' processors (:mod:`o2ksim.policies.immediate`);
        if it does not finish there it is killed and waits in the queue for
        memory.  While it waits it earns catch-up credit.
        """
        self._waiting[job.id] = job
        self._ledger.wait(job.id, job.procs)
        self._count("waited", job.id)
        self._trials.give(job, snap, out)

    def _end_trials(self, snap: Snapshot, out: list[Any]) -> None:
        """Victims of trials that ended get their processors back; their host repartitions after."""
        for name in self._trials.end_trials(snap, out):
            h = self._hosts.get(name)
            if h is not None and (h.dirty or h.pending):
                # the victims are back on their processors, but this snapshot predates
                # that: repartition in a new pass at this instant
                out.append(WakeAt(snap.now, name, "repartition: a trial run ended"))

    # ------------------------------------------------------------------------------ repartitioning
    def _resolve(self, h: _Host, view: HostView, snap: Snapshot, out: list[Any]) -> None:
        now = snap.now
        if view.preempted or h.name in self._blocked:
            return  # a trial run holds processors (maybe of preempted jobs): wait until it ends
        if h.dirty and self._clock.can(h.name, now):
            self._repartition(h, view, snap, out)
            return
        if h.pending:
            self._start_on_free(h, view, snap, out)
        if h.dirty and h.timer is None:
            h.timer = self._clock.next_allowed(h.name)
            tag = "repartition"
            if snap.explain:
                last = clock(self._clock.last[h.name])
                tag += f": {', '.join(h.reasons)}; {h.name} last repartitioned at {last}"
            out.append(WakeAt(h.timer, h.name, tag))

    def _host_jobs(self, h: _Host, now: float) -> list[HostJob]:
        out = []
        for job in h.jobs.values():
            if job.id in self._credit:
                kind = CATCHING_UP
            elif job.id in self._long:
                kind = LONG_RUNNING
            else:
                kind = 0
            started = job.first_start if job.state is JobState.RUNNING else now
            out.append(HostJob(job.id, job.procs, kind, started,
                               (-job.alloc_procs, job.spec.submit, job.id)))  # fmt: skip
        return out

    def _repartition(self, h: _Host, view: HostView, snap: Snapshot, out: list[Any]) -> None:
        now = snap.now
        target = host_allocation(h.capacity, self._host_jobs(h, now))
        shrink, grow, start = [], [], []
        for job in h.jobs.values():
            new = target[job.id]
            if job.id in h.pending:
                if new > 0:
                    start.append((job, new))
            elif new < job.alloc_procs:
                shrink.append((job, new))
            elif new > job.alloc_procs:
                grow.append((job, new))
        resized = len(shrink) + len(grow)
        if resized:
            self._clock.mark(h.name, now)
            self.counters["repartitions"] += 1
            self.counters["resizes"] += resized
        note = rest = ""
        if snap.explain:
            note = self._repartition_note(h, target, now, resized > 0)
            rest = f"same repartitioning of {h.name}" if resized else ""
        for job, new in shrink:
            out.append(Resize(job, new, note=note))
            note = rest or note
        for job, new in start:
            self._start(h, job, new, now, out, note)
            note = rest or note
        for job, new in grow:
            out.append(Resize(job, new, note=note))
            note = rest or note
        for job, new in shrink + grow:
            self._catchup_timer(h, job, new, now, out)
        h.dirty = False
        h.reasons.clear()

    def _repartition_note(
        self, h: _Host, target: Mapping[Hashable, int], now: float, counted: bool
    ) -> str:
        why = ", ".join(h.reasons) or "timer"
        equal = [target[j] for j in h.jobs if j not in self._credit and j not in self._long]
        if counted:
            text = f"repartitioning {h.name} ({why})"
        else:
            text = f"shares of {h.name} ({why}) need no running job resized"
        if equal:
            lo, hi = min(equal), max(equal)
            text += f": equal share {lo}" if lo == hi else f": equal share {lo}-{hi}"
        held = [f"J{j} catching up" for j in h.jobs if j in self._credit]
        held += [
            f"J{j} running over {(self.long_threshold or 0) / 3600:g} h"
            for j in h.jobs
            if j in self._long
        ]
        if held:
            text += "; full request for " + ", ".join(held)
        if counted and self.min_interval > 0:
            text += f"; next repartitioning of {h.name} at {clock(now + self.min_interval)} at the earliest"
        return text

    def _start_on_free(self, h: _Host, view: HostView, snap: Snapshot, out: list[Any]) -> None:
        """The host may not repartition yet: placed jobs share the free processors (T§3.2.3)."""
        free = view.free_procs
        if free <= 0:
            return
        jobs = list(h.pending.values())
        shares = equipartition(free, [j.procs for j in jobs])
        note = ""
        if snap.explain:
            note = (f"runs on free processors until {h.name} may repartition at "
                    f"{clock(self._clock.next_allowed(h.name))}")  # fmt: skip
        for job, n in zip(jobs, shares, strict=True):
            if n > 0:
                self._start(h, job, n, snap.now, out, note)
                self._count("started_on_free", job.id)

    def _start(self, h: _Host, job: Job, procs: int, now: float, out: list[Any], note: str) -> None:
        del h.pending[job.id]
        h.pending_mem -= job.mem
        placed = self._notes.pop(job.id, "")
        if placed:
            note = f"{placed}; {note}" if note else placed
        out.append(Start(job, h.name, procs=procs, note=note))
        threshold = self.long_threshold
        if threshold is not None:  # its real start (a trial run before it does not count)
            self._long_due.set(job.id, now + threshold)
            out.append(WakeAt(now + threshold, h.name, "long-running"))
        self._catchup_timer(h, job, procs, now, out)

    def _catchup_timer(self, h: _Host, job: Job, procs: int, now: float, out: list[Any]) -> None:
        credit = self._credit.get(job.id)
        if credit is None or procs <= 0:
            return
        owed = max(0.0, credit - job.work_done(now))
        when = now + owed / procs
        if self._catchup_due.set(job.id, when):
            out.append(WakeAt(when, h.name, "caught up"))

    # ------------------------------------------------------------------------------ output
    def summary_counts(self, ids: AbstractSet[int] | None = None) -> dict[str, int]:
        """Counters for ``summary.json``.

        ``repartitions`` is per run (every host, warm-up included); the others
        count jobs among ``ids`` (the analysed jobs, or all): placed on
        arrival, waited for memory, caught up, ran past the long-job threshold,
        started on free processors of a host that could not repartition yet,
        and the immediate-service counters of :mod:`o2ksim.policies.immediate`.
        """
        out = {"repartitions": int(self.counters["repartitions"])}
        for key, jobs in self._job_counts.items():
            out[key] = len(jobs if ids is None else jobs & ids)
        out.update(self._trials.book.summary_counts(ids))
        return out

    def stats(self) -> dict[str, float]:
        """Run counters for ``run.json``: repartitionings and the resizes the policy asked for."""
        return {k: float(v) for k, v in self.counters.items()}

    def job_columns(self) -> dict[str, dict[int, float]]:
        """Per-job output columns: ``catchup_credit`` (processor-seconds earned while waiting)
        and ``immediate_service`` (1 for a job given a trial run, whose first segment it is)."""
        return {
            "catchup_credit": dict(self.credits),
            "immediate_service": dict.fromkeys(self._trials.book.given, 1),
        }


POLICIES.register(EQSpatial)
