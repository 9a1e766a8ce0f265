"""Immediate service: a quantum trial run for new jobs, with limited preemption (T§3.2.2, T§5.5).

The thesis's definition (T§3.2.2):

    "With the preemptive immediate service, if a new job can't be started as a
    full job, the job is given a preemptive priority to start on as many
    processors as requested and an initial memory for a very short quantum.
    [...] If a host has enough free (i.e., unoccupied) processors and the
    initial memory to give an immediate service to the new job, the job
    receives an immediate service on the host without preemption.  If more
    than one such hosts are found, the host that has the smallest number of
    free processors is chosen.  Otherwise, the currently executing jobs are
    chosen to be preempted as follows.  To avoid memory overhead, only the
    processors (but not the memory) of the currently executing jobs can be
    preempted [...].  An executing job is eligible to be preempted if (1) it
    has been running without interruption for longer than t, and (2) its
    expected remaining runtime is longer than t.  For each host that has at
    least an amount of the initial memory, each job eligible for preemption is
    considered in the order of increasing estimated current job slowdown,
    which is the ratio of the elapsed time since the job arrived divided by
    the time it has actually run so far [...].  As many such jobs on the host
    as required are selected, until the sum of the total number of processors
    occupied by these jobs plus the currently free processors on the host is
    at least as large as requested by the new job.  Note that if the number of
    these processors is greater than requested, some of the selected jobs may
    be de-selected to avoid unnecessary preemption.  The host that will have
    the fewest number of idle processors due to preemption is chosen [...].
    If the new job completes in the initial quantum and the initial memory, it
    leaves the system.  Otherwise, it is killed and waits in the queue to be
    scheduled as a full job."

The pieces, usable by any policy:

* :class:`TrialSettings` — quantum ``q``, initial memory, eligibility ``t``
  (default ``10 q``, T§3.2.2) and the mode (``preemptive``, ``soon`` = the
  non-preemptive test run of [PK00] evaluated in T§5.5, or ``off``);
* :func:`plan_trial` — where a job's trial runs and whom it preempts (the
  rules quoted above); :func:`trial_decisions` turns a plan into engine
  decisions (``Preempt`` the victims, ``Start`` the job with
  ``time_limit=q, on_limit="requeue"``, the initial memory and
  ``resumes`` = the victims, which the engine resumes on the processors they
  had the moment the trial ends);
* :class:`TrialBook` — trials in progress, their victims (any the engine
  could not resume at the trial's end are resumed by the next pass), the
  processors those victims are owed per host, and the counters;
* :class:`EligibilityCache` — per host, what eligibility needs of each
  running job and the eligible jobs until the next time that could change,
  kept between passes so that a pass does not rescan every running job;
* :class:`ImmediateService` — the option of every backfill policy: it runs
  the backfill pass on a view in which the victims still hold their
  processors (so the availability profile never promises them twice), then
  gives a trial to every new job the pass did not start.

Choices where the thesis is silent (each tested in ``tests/test_immediate.py``):

* A trial on free processors does **not** respect backfill reservations: it
  has the "preemptive priority" of T§3.2.2 and lasts at most ``q``, so it can
  delay a reserved start by at most ``q`` — the same bound by which a
  preemptive trial delays the jobs it preempts.
* A victim's remaining runtime is judged from its *requested* runtime (the
  only thing the scheduler knows), so a job that will really end within the
  trial may still be preempted; eligibility boundaries are "run uninterrupted
  for at least ``t``" and "predicted to need more than ``t``".
* De-selection tries the selected jobs in reverse selection order (highest
  current slowdown first) and drops each one the others can do without.
* Ties: slowdown ties go to the lower job id, host ties to machine order.
* While a preempting trial runs, its victims' processors stay theirs: no other
  job may start on the spare part of them, and the backfill profile shows them
  coming back when the trial ends (predicted from the trial's time limit or
  requested runtime, whichever is earlier) and held until the victim's
  requested runtime is served.
* A trial gets ``min(initial memory, requested memory)`` (the initial memory
  when the request is unknown); it fails when the job's peak memory (the
  trace's used-memory field) exceeds that, and then runs the whole quantum
  before it is killed (the issue's rule: "killed at the end of the quantum").
  A trace without the used-memory field judges trials on time only.
* A job that cannot get a trial when it arrives waits for one; the policy asks
  for a pass when the next running job becomes eligible for preemption (the
  thesis simulator's extra event, T§3.4).  Waiting jobs are served in arrival
  order.
* Passes: the policy opts in to the engine's skipping of passes where no
  waiting job fits (:mod:`o2ksim.engine.contract`) and keeps the ones where
  it may still act -- a new job or one still waiting for a trial, or a victim
  to resume (:meth:`ImmediateService.has_pending_work`); in such a kept pass
  the backfill pass itself is left out when it keeps the same promise (it
  would decide nothing).  Schedules are those of a run with every pass.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any, Protocol, cast, runtime_checkable

from o2ksim.engine.decisions import Preempt, Resume, Start, WakeAt
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.errors import O2KSimError
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import KB_PER_GB, KB_PER_MB
from o2ksim.policies.base import Param
from o2ksim.workloads.transforms import parse_duration

MODES = ("off", "preemptive", "soon")
DEFAULT_QUANTUM = 60.0  # seconds (T§5.5)
DEFAULT_INITIAL_MEMORY = KB_PER_GB  # KB (T§5.5: "up to 1 GB")
ELIGIBLE_FACTOR = 10.0  # t = 10 q (T§3.2.2)

_MEM_UNITS = {"kb": 1, "k": 1, "mb": KB_PER_MB, "m": KB_PER_MB, "gb": KB_PER_GB, "g": KB_PER_GB}


def parse_memory(value: str | float | int) -> int:
    """Kilobytes from ``1GB``, ``512MB``, ``2048KB`` or a bare number of megabytes."""
    if isinstance(value, bool):
        raise O2KSimError(f"'{value}' is not an amount of memory (examples: 1GB, 512MB)")
    if isinstance(value, int | float):
        if value < 0 or not math.isfinite(value):
            raise O2KSimError(f"memory must be a non-negative number of MB, got {value!r}")
        return round(value * KB_PER_MB)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*", str(value).lower())
    if not m or m.group(2) not in ("", *_MEM_UNITS):
        raise O2KSimError(f"'{value}' is not an amount of memory (examples: 1GB, 512MB)")
    return round(float(m.group(1)) * _MEM_UNITS.get(m.group(2) or "mb", KB_PER_MB))


def _ok(parse: Callable[[Any], float], positive: bool) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        if isinstance(v, bool):
            return False
        try:
            x = parse(v)
        except O2KSimError:
            return False
        return x > 0 if positive else x >= 0

    return check


PARAMS: dict[str, Param] = {
    "immediate_service": Param(
        str,
        "off",
        "quantum trial run for each new job that cannot start as a full job (T§3.2.2, T§5.5): "
        "preemptive (free processors, else preempt eligible jobs' processors) | soon "
        "(free processors only, [PK00]) | off",
        choices=MODES,
    ),
    "quantum": Param(
        (int, float, str),
        "1m",
        "immediate service: length q of the trial run (seconds or e.g. '1m')",
        check=_ok(parse_duration, positive=True),
        check_help="must be a positive duration (seconds, or e.g. '1m')",
    ),
    "initial_memory": Param(
        (int, float, str),
        "1GB",
        "immediate service: memory of the trial run (MB, or e.g. '1GB', '512MB'); a trial "
        "fails when the job's peak memory exceeds it",
        check=_ok(parse_memory, positive=False),
        check_help="must be an amount of memory (MB, or e.g. '1GB')",
    ),
    "eligible_after": Param(
        (int, float, str),
        None,
        "immediate service: t — a running job may be preempted once it has run uninterrupted "
        "for t and is predicted to need more than t (default 10 x quantum)",
        check=_ok(parse_duration, positive=False),
        check_help="must be a duration >= 0 (seconds, or e.g. '10m')",
    ),
}
"""The immediate-service parameters every backfill policy accepts."""


@dataclass(frozen=True, slots=True)
class TrialSettings:
    """Immediate-service parameters: mode, quantum ``q`` (s), initial memory (KB), ``t`` (s)."""

    mode: str = "preemptive"
    quantum: float = DEFAULT_QUANTUM
    initial_memory: int = DEFAULT_INITIAL_MEMORY
    eligible_after: float = ELIGIBLE_FACTOR * DEFAULT_QUANTUM

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> TrialSettings:
        """Settings from validated policy parameters (see :data:`PARAMS`)."""
        q = parse_duration(params.get("quantum") or DEFAULT_QUANTUM)
        t = params.get("eligible_after")
        return cls(
            mode=params.get("immediate_service") or "off",
            quantum=q,
            initial_memory=parse_memory(
                DEFAULT_INITIAL_MEMORY / KB_PER_MB
                if params.get("initial_memory") is None
                else params["initial_memory"]
            ),
            eligible_after=ELIGIBLE_FACTOR * q if t is None else parse_duration(t),
        )

    @property
    def preemptive(self) -> bool:
        return self.mode == "preemptive"

    def trial_memory(self, spec: JobSpec) -> int:
        """Memory a trial gets: the initial memory, or the request when that is smaller."""
        return min(self.initial_memory, spec.mem) if spec.mem > 0 else self.initial_memory


@dataclass(frozen=True, slots=True)
class TrialPlan:
    """Where a job's trial runs, with how much memory, and whom it preempts."""

    job: Job
    host: str
    mem: int
    victims: tuple[Job, ...] = ()
    idle_after: int = 0  # processors left idle on the host once the trial has started


def current_slowdown(job: Job, now: float) -> float:
    """Time since arrival divided by the time the job has actually run (T§3.2.2).

    The time run is the work done in the current run (since its last start
    from the queue) at the requested size, so time spent preempted is excluded.
    """
    ran = job.work_done(now) / job.spec.procs if job.spec.procs else 0.0
    return (now - job.spec.submit) / ran if ran > 0 else math.inf


def is_eligible_victim(job: Job, now: float, t: float) -> bool:
    """Run uninterrupted for at least ``t`` and predicted (by its request) to need more than ``t``."""
    return now - job.last_start >= t and job.predicted_end(now) - now > t


def choose_victims(
    candidates: Sequence[Job], free: int, need: int
) -> list[Job] | None:
    """Victims among ``candidates`` (already in preemption order) so that ``free`` plus
    their processors reach ``need``; ``None`` when even all of them are not enough.

    Jobs are selected in order until enough processors are found, then the
    selected ones are tried in reverse order and each one not needed is dropped.
    """
    chosen: list[Job] = []
    have = free
    for job in candidates:
        if have >= need:
            break
        chosen.append(job)
        have += job.alloc_procs
    if have < need:
        return None
    for job in reversed(list(chosen)):
        if have - job.alloc_procs >= need:
            chosen.remove(job)
            have -= job.alloc_procs
    return chosen


_Entry = tuple[Job, float, float, bool]  # (job, last_start, predicted end, exact?)
_Kept = tuple[float, int, float, _Entry]  # (segment start, processors, time limit, entry)
_SLACK = 1e-3  # s: within this of the eligibility boundary, ask the job itself (rounding)


class EligibilityCache:
    """Per host, what eligibility needs of each running job, rebuilt only when the host changes.

    Keyed by :attr:`HostView.version` (bumped by the engine on every start,
    preemption, resumption, resize or departure on the host), so between two
    such events a pass reuses the host's entries instead of asking every
    running job again.  An entry keeps the job, the start of its current
    uninterrupted run and its predicted end, constant during the run: exact
    for a job running on its full request as it started (the same sum
    :meth:`Job.predicted_end` makes), otherwise the end at its current rate
    seen when the entry was made, which can differ from the job's own answer
    by rounding only -- so within ``_SLACK`` of the boundary the pass asks the
    job.  The per-pass eligibility test is then two float comparisons per job,
    with the same outcome as :func:`is_eligible_victim`.
    """

    __slots__ = ("_eligible", "_hosts")

    def __init__(self) -> None:
        # per host: (version, entries, job id -> (segment start, processors, time limit, entry))
        self._hosts: dict[str, tuple[int, list[_Entry], dict[int, _Kept]]] = {}
        # per host: (version, t, valid from, valid until, eligible jobs, their ids)
        self._eligible: dict[str, tuple[int, float, float, float, list[Job], frozenset[int]]] = {}

    def eligible(self, host: HostView, now: float, t: float) -> tuple[list[Job], frozenset[int]]:
        """``host``'s running jobs eligible for preemption at ``now`` (:func:`is_eligible_victim`),
        and their ids.

        The answer is kept until the host changes or the first time at which
        some job's eligibility could change (a job reaching ``t`` of
        uninterrupted run, or an eligible job's predicted end coming within
        ``t``), less ``_SLACK``; so a pass usually reuses it without a scan.
        """
        name = host.name
        kept = self._eligible.get(name)
        if (
            kept is not None and kept[0] == host.version and kept[1] == t
            and kept[2] <= now < kept[3]
        ):  # fmt: skip
            return kept[4], kept[5]
        got: list[Job] = []
        until = math.inf
        for v, last_start, end, exact in self.entries(host, now):
            if now - last_start < t:
                until = min(until, last_start + t - _SLACK)
                continue
            margin = end - now - t
            if exact:
                ok = end - now > t
            elif margin > _SLACK:
                ok = True
            elif margin < -_SLACK:
                ok = False
            else:
                ok = v.predicted_end(now) - now > t
                until = now  # rounding decides: ask again next time
            if ok:
                got.append(v)
                until = min(until, end - t - _SLACK)
        ids = frozenset(v.spec.job_id for v in got)
        self._eligible[name] = (host.version, t, now, until, got, ids)
        return got, ids

    def entries(self, host: HostView, now: float) -> list[_Entry]:
        """``host``'s running jobs as ``(job, last_start, predicted end, exact?)``."""
        cached = self._hosts.get(host.name)
        if cached is not None and cached[0] == host.version:
            return cached[1]
        before = cached[2] if cached is not None else {}
        got: list[_Entry] = []
        by_job: dict[int, _Kept] = {}
        for v in host.running:
            spec = v.spec
            old = before.get(spec.job_id)
            if (
                old is not None and old[0] == v.segment_start and old[1] == v.alloc_procs
                and old[2] == v.time_limit
            ):  # fmt: skip
                got.append(old[3])  # the same run as when its entry was made
                by_job[spec.job_id] = old
                continue
            exact = v.alloc_procs == spec.procs and not (v.resizes or v.preemptions or v.reduced)
            if exact:
                end = v.last_start + spec.req_time
            elif v.alloc_procs:
                end = now + (spec.procs * spec.req_time - v.work_done(now)) / v.alloc_procs
            else:
                end = math.inf
            if v.time_limit < end:
                end = v.time_limit
            entry = (v, v.last_start, end, exact)
            got.append(entry)
            by_job[spec.job_id] = (v.segment_start, v.alloc_procs, v.time_limit, entry)
        self._hosts[host.name] = (host.version, got, by_job)
        return got


class VictimLists:
    """Per host, the jobs eligible for preemption in preemption order, built once per pass.

    :func:`plan_trial` asks for a host's list; it is computed on first use
    (eligible running jobs by increasing current slowdown, ties by id) and
    reused for every other job that wants a trial in the same pass.
    :meth:`remove` drops jobs chosen as victims (or started as trials) so that
    nobody is preempted twice.  ``cache`` (kept by the caller between passes)
    saves rebuilding what each running job's eligibility depends on.
    """

    def __init__(
        self,
        now: float,
        t: float,
        protected: Iterable[int] = (),
        cache: EligibilityCache | None = None,
    ) -> None:
        self.now = now
        self.t = t
        self.removed: set[int] = set(protected)
        self._cache = cache if cache is not None else EligibilityCache()
        self._lists: dict[str, list[Job]] = {}
        self._sorted: set[str] = set()
        self._procs: dict[str, int] = {}

    def total(self, host: HostView) -> int:
        """Processors of ``host``'s eligible jobs (no sorting needed for this bound)."""
        name = host.name
        if name not in self._lists:
            removed = self.removed
            eligible, ids = self._cache.eligible(host, self.now, self.t)
            if removed.isdisjoint(ids):
                got = list(eligible)
            else:
                got = [v for v in eligible if v.spec.job_id not in removed]
            self._lists[name] = got
            self._procs[name] = sum(v.alloc_procs for v in got)
        return self._procs[name]

    def of(self, host: HostView) -> tuple[list[Job], int]:
        """``host``'s eligible jobs in preemption order and their total processors."""
        total = self.total(host)
        name = host.name
        got = self._lists[name]
        if name not in self._sorted:
            now = self.now
            inf = math.inf
            keyed = []
            for v in got:  # current_slowdown's arithmetic, inlined: this is the hot loop
                spec = v.spec
                ran = (
                    (spec.work - v.remaining_work + (now - v.segment_start) * v.alloc_procs) / spec.procs
                    if spec.procs else 0.0
                )  # fmt: skip
                keyed.append(((now - spec.submit) / ran if ran > 0 else inf, spec.job_id, v))
            keyed.sort()
            got[:] = [k[2] for k in keyed]
            self._sorted.add(name)
        return got, total

    def remove(self, jobs: Iterable[Job]) -> None:
        for job in jobs:
            self.removed.add(job.id)
            if job.host in self._lists and job in self._lists[job.host]:
                self._lists[job.host].remove(job)
                self._procs[job.host] -= job.alloc_procs


def plan_trial(
    job: Job,
    hosts: Iterable[HostView],
    free: dict[str, list[float]],
    now: float,
    settings: TrialSettings,
    *,
    preempt: bool,
    protected: frozenset[int] | set[int] = frozenset(),
    victims: VictimLists | None = None,
) -> TrialPlan | None:
    """Where ``job``'s trial runs (T§3.2.2), or ``None`` when it cannot run now.

    ``free`` maps host name to ``[processors, memory]`` the trial may use
    (processors owed to preempted jobs already deducted).  First choice: a
    host with enough free processors and the trial memory, the one with the
    fewest free processors.  Otherwise, when ``preempt``: on every host with
    the trial memory, eligible running jobs (not in ``protected``, e.g. other
    trials) in increasing current slowdown, selected and de-selected by
    :func:`choose_victims`; the host left with the fewest idle processors wins.
    ``victims`` shares the eligible lists between the trials of one pass.
    """
    spec = job.spec
    need = spec.procs
    mem = settings.trial_memory(spec)
    best: str | None = None
    best_free = math.inf
    hosts = tuple(hosts)
    for h in hosts:
        f = free[h.name]
        if f[0] >= need and f[1] >= mem and f[0] < best_free:
            best, best_free = h.name, f[0]
    if best is not None:
        return TrialPlan(job, best, mem, (), int(best_free - need))
    if not preempt:
        return None
    if victims is None:
        victims = VictimLists(now, settings.eligible_after, protected)
    plan: TrialPlan | None = None
    for h in hosts:
        f = free[h.name]
        if f[1] < mem or h.spec.procs < need:
            continue
        if f[0] + victims.total(h) < need:
            continue
        candidates, _total = victims.of(h)
        chosen = choose_victims(candidates, int(f[0]), need)
        if chosen is None:
            continue
        idle = int(f[0]) + sum(v.alloc_procs for v in chosen) - need
        if plan is None or idle < plan.idle_after:
            plan = TrialPlan(job, h.name, mem, tuple(chosen), idle)
            if idle == 0:
                break  # no later host can do better (host ties go to machine order)
    return plan


def trial_decisions(plan: TrialPlan, settings: TrialSettings, now: float) -> list[Any]:
    """``Preempt`` each victim, then ``Start`` the trial (time limit ``q``, requeue on failure;
    the engine resumes the victims when it ends)."""
    out: list[Any] = []
    job = plan.job
    for v in plan.victims:
        ran = now - v.last_start
        out.append(
            Preempt(
                v,
                note=f"for J{job.id}'s trial: ran uninterrupted {ran:g} s >= t, "
                f"predicted to need {v.predicted_end(now) - now:g} s more > t, "
                f"current slowdown {current_slowdown(v, now):.3g}",
            )
        )
    if plan.victims:
        why = "preempting " + ", ".join(f"J{v.id}" for v in plan.victims)
    else:
        why = "on free processors"
    out.append(
        Start(
            job,
            plan.host,
            procs=job.spec.procs,
            mem=plan.mem,
            time_limit=settings.quantum,
            on_limit="requeue",
            resumes=plan.victims,
            note=f"immediate service: {settings.quantum:g} s trial with "
            f"{plan.mem / KB_PER_MB:g} MB, {why}",
        )
    )
    return out


@runtime_checkable
class SummaryCounts(Protocol):
    """A policy that adds counters over the analysed jobs to ``summary.json``."""

    def summary_counts(self, ids: set[int] | None = None) -> Mapping[str, int]:
        """Counters over the jobs in ``ids`` (``None``: every job)."""
        ...


class _Borrowed:
    """A preempted job as the backfill pass must see it: holding the processors it will
    take back when the trial that preempted it ends, until its request is served."""

    __slots__ = (
        "alloc_mem", "alloc_procs", "host", "id", "job", "resume_at", "spec", "state", "time_limit",
    )  # fmt: skip

    def __init__(self, job: Job, resume_at: float) -> None:
        self.job = job
        self.spec = job.spec
        self.id = job.id
        self.host = job.host
        self.state = JobState.RUNNING
        self.alloc_procs = job.resume_procs
        self.alloc_mem = job.alloc_mem
        self.resume_at = resume_at
        self.time_limit = math.inf

    @property
    def last_start(self) -> float:
        return self.resume_at

    def predicted_end(self, now: float) -> float:
        spec = self.spec
        owed = spec.procs * spec.req_time - self.job.work_done(now)
        start = max(self.resume_at, now)
        return start + max(owed, 0.0) / self.alloc_procs


@dataclass
class TrialBook:
    """Trials in progress and what they owe; the immediate-service counters.

    ``start`` records a planned trial; ``ended`` notes the trials that left
    (completed or requeued) and any of their victims still preempted (the
    engine resumes them itself when their processors are free at the trial's
    end, ``Start.resumes``); ``resume`` returns the ``Resume`` decisions for
    those; ``borrowed`` gives, per host, the victims still owed processors.
    """

    running: dict[int, tuple[Job, tuple[Job, ...]]] = field(default_factory=dict)
    to_resume: dict[str, list[Job]] = field(default_factory=dict)
    given: set[int] = field(default_factory=set)
    completed: set[int] = field(default_factory=set)
    preempting: set[int] = field(default_factory=set)
    preemptions: int = 0

    def start(self, plan: TrialPlan) -> None:
        self.running[plan.job.id] = (plan.job, plan.victims)
        self.given.add(plan.job.id)
        if plan.victims:
            self.preempting.add(plan.job.id)
            self.preemptions += len(plan.victims)

    def ended(self, departed: Iterable[Job]) -> None:
        """Note the trials among ``departed`` that left (completed or back in the queue)."""
        for job in departed:
            entry = self.running.pop(job.id, None)
            if entry is None:
                continue
            if job.state is JobState.COMPLETED:
                self.completed.add(job.id)
            for v in entry[1]:
                if v.state is JobState.PREEMPTED:
                    self.to_resume.setdefault(v.host or "", []).append(v)

    def resume(self, free: dict[str, list[float]]) -> tuple[list[Any], list[Job]]:
        """``Resume`` every victim whose trial has ended and whose processors are free.

        Returns the decisions and the jobs they resume (their processors are
        booked in ``free``); a victim that does not fit yet stays owed.
        """
        out: list[Any] = []
        resumed: list[Job] = []
        for host, waiting in list(self.to_resume.items()):
            f = free[host]
            left = []
            for v in waiting:
                if v.state is not JobState.PREEMPTED:
                    continue
                if v.resume_procs <= f[0]:
                    f[0] -= v.resume_procs
                    resumed.append(v)
                    out.append(
                        Resume(v, note="the trial that preempted it has ended; "
                                       f"back on its {v.resume_procs} processors")
                    )  # fmt: skip
                else:
                    left.append(v)
            if left:
                self.to_resume[host] = left
            else:
                del self.to_resume[host]
        return out, resumed

    def borrowed(self, now: float, resumed: Iterable[Job] = ()) -> dict[str, list[_Borrowed]]:
        """Per host: the preempted victims still owed processors, with when they get them
        back (``resumed``: victims being resumed in this pass, i.e. now)."""
        out: dict[str, list[_Borrowed]] = {}
        for trial, victims in self.running.values():
            at = trial.predicted_end(now)
            for v in victims:
                if v.state is JobState.PREEMPTED:
                    out.setdefault(v.host or "", []).append(_Borrowed(v, at))
        for v in chain(resumed, chain.from_iterable(self.to_resume.values())):
            if v.state is JobState.PREEMPTED:
                out.setdefault(v.host or "", []).append(_Borrowed(v, now))
        return out

    def counts(self, ids: set[int] | None = None) -> dict[str, int]:
        """The summary counters, over ``ids`` (e.g. the analysed jobs) or every job."""

        def n(s: set[int]) -> int:
            return len(s if ids is None else s & ids)

        # a trial that finished after the last pass that ran is not noted yet (the
        # engine skips passes with nothing to decide): count it here
        done = JobState.COMPLETED
        completed = self.completed | {i for i, (t, _) in self.running.items() if t.state is done}
        return {
            "immediate_service_jobs": n(self.given),
            "immediate_service_completed": n(completed),
            "immediate_service_preempting": n(self.preempting),
        }


class ImmediateService:
    """The immediate-service option around a scheduling pass (see the module docstring).

    ``schedule(snap, inner)`` resumes any victim of an ended trial the engine
    could not resume itself, runs ``inner`` (the backfill pass) on a snapshot
    in which the victims of running trials hold the processors they are owed
    (the plain snapshot when there are none), then gives a trial to each new
    job the pass did not start (and to earlier jobs still waiting for one).
    """

    def __init__(self, settings: TrialSettings) -> None:
        if settings.mode not in MODES or settings.mode == "off":
            raise ValueError(f"immediate service mode must be preemptive or soon, not {settings.mode!r}")
        self.settings = settings
        self.book = TrialBook()
        self._awaiting: dict[int, Job] = {}
        self._wakes: set[float] = set()
        self._eligibility = EligibilityCache()

    def schedule(
        self,
        snap: Snapshot,
        inner: Callable[[Snapshot], Sequence[Any]],
        inner_idle_when_nothing_fits: bool = False,
    ) -> list[Any]:
        """One pass around ``inner``; ``inner_idle_when_nothing_fits``: ``inner`` keeps the
        engine's promise (:mod:`o2ksim.engine.contract`), so when no waiting job fits any
        host it is not run at all (it would decide nothing)."""
        now = snap.now
        if inner_idle_when_nothing_fits and not snap.explain and _nothing_fits(snap):
            inner = _no_decisions
        book = self.book
        awaiting = self._awaiting
        owed: dict[str, int] = {}  # processors the preempted victims will take back, per host
        view = snap
        if book.running or book.to_resume:
            book.ended(snap.departed)
            decisions: list[Any] = []
            resumed: list[Job] = []
            if book.to_resume:
                decisions, resumed = book.resume(
                    {h.name: [h.free_procs, h.free_mem] for h in snap.hosts}
                )
            borrowed = book.borrowed(now, resumed)
            if borrowed:
                view = _view(snap, borrowed)
                owed = {host: sum(b.alloc_procs for b in items) for host, items in borrowed.items()}
            inner_decisions = inner(view)
            decisions.extend(inner_decisions)
        else:  # no trial running, nobody owed: the pass is the plain backfill pass
            inner_decisions = decisions = list(inner(view))
        for job in snap.arrived:
            if job.state is JobState.QUEUED:
                awaiting[job.id] = job
        if not awaiting:
            return decisions
        preemptive = self.settings.preemptive
        if not preemptive:  # soon: a trial needs free processors, which this pass cannot add
            most = max(h.free_procs for h in snap.hosts)
            if all(j.spec.procs > most for j in awaiting.values()):
                return decisions
        started: set[int] = set()
        for d in inner_decisions:
            if isinstance(d, Start):
                started.add(d.job.id)
        queued = JobState.QUEUED
        for job_id in [i for i, j in awaiting.items() if i in started or j.state is not queued]:
            del awaiting[job_id]
        if not awaiting:
            return decisions
        free = {h.spec.name: [h.free_procs, h.free_mem] for h in snap.hosts}
        for host, procs in owed.items():
            free[host][0] -= procs
        for d in inner_decisions:
            if isinstance(d, Start):
                f = free[d.host]
                f[0] -= d.job.spec.procs if d.procs is None else d.procs
                f[1] -= d.job.spec.mem if d.mem is None else d.mem
        if decisions is inner_decisions:
            decisions = list(decisions)
        protected = set(book.running)
        victims = VictimLists(now, self.settings.eligible_after, protected, self._eligibility)
        # Most processors a trial could get on one host now (an upper bound), worked out
        # after a search fails so that later jobs too wide for it skip the search; not
        # before, as a search that succeeds usually stops at the first host it can fill
        # exactly and needs no other host's eligible jobs.
        room = math.inf
        for job_id, job in list(awaiting.items()):
            if job.spec.procs > room:
                continue  # no host can give it a trial now: skip the search
            plan = plan_trial(
                job, snap.hosts, free, now, self.settings,
                preempt=preemptive, victims=victims,
            )  # fmt: skip
            if plan is None:
                if preemptive:
                    room = max(free[h.spec.name][0] + victims.total(h) for h in snap.hosts)
                else:
                    room = max(f[0] for f in free.values())
                continue
            del awaiting[job_id]
            f = free[plan.host]
            f[0] += sum(v.alloc_procs for v in plan.victims) - job.spec.procs
            f[1] -= plan.mem
            book.start(plan)
            protected.add(job_id)
            victims.remove(plan.victims)  # still "running" in this snapshot
            room = math.inf
            decisions.extend(trial_decisions(plan, self.settings, now))
        if awaiting and self.settings.preemptive:
            fresh = [d.job for d in inner_decisions if isinstance(d, Start)]
            decisions.extend(self._next_eligibility(snap, protected, fresh))
        return decisions

    def has_pending_work(self, arrived: bool) -> bool:
        """Whether a pass may decide something even when no waiting job fits as a full job.

        The engine skips such a pass otherwise (:mod:`o2ksim.engine.contract`,
        "Work that does not need a full job to fit").  A pass where nothing fits
        starts no full job, so it can only: give a trial to a job that arrived
        since the last pass (``arrived``) or still waits for one
        (``_awaiting``); resume a victim the engine did not resume when its
        trial ended (``book.to_resume``, or a trial no longer running with a
        victim still preempted: the engine asks for a pass when it leaves a
        victim to the policy).  Noting a trial that left is deferred to the
        next pass that runs (``Snapshot.departed`` covers every departure
        since the last pass; :meth:`TrialBook.counts` counts a completed trial
        not yet noted); the borrowed view and the backfill pass itself decide
        and change nothing when nothing fits.  Timers (eligibility wakes)
        always force a pass.  Cost: O(1) plus the trials in progress (a few:
        each lasts at most ``q``).
        """
        book = self.book
        if arrived or self._awaiting or book.to_resume:
            return True
        running, preempted = JobState.RUNNING, JobState.PREEMPTED
        for trial, victims in book.running.values():
            if trial.state is not running and any(v.state is preempted for v in victims):
                return True
        return False

    def _next_eligibility(
        self, snap: Snapshot, protected: set[int], fresh: Sequence[Job]
    ) -> list[WakeAt]:
        """A pass when the next running job becomes eligible for preemption (T§3.4).

        ``fresh`` are the jobs started as full jobs in this pass (not yet running
        in the snapshot): they become eligible ``t`` from now.
        """
        now = snap.now
        t = self.settings.eligible_after
        soonest = math.inf
        for h in snap.hosts:
            for v in h.running:
                at = v.last_start + t
                if now < at < soonest and v.id not in protected and v.predicted_end(now) - at > t:
                    soonest = at
        if any(j.spec.req_time > 2 * t for j in fresh) and now + t < soonest:
            soonest = now + t
        self._wakes = {w for w in self._wakes if w > now}
        if not now < soonest < math.inf or soonest in self._wakes:
            return []
        self._wakes.add(soonest)
        return [WakeAt(soonest, tag="immediate service: a running job becomes eligible for preemption")]

    def counts(self, ids: set[int] | None = None) -> dict[str, int]:
        return self.book.counts(ids)


def _no_decisions(snap: Snapshot) -> Sequence[Any]:
    return ()


def _nothing_fits(snap: Snapshot) -> bool:
    """No waiting job fits the free processors and memory of any host (the engine's
    O(hosts) test against the queue's smallest requests; ``False`` when unknown)."""
    index = snap.queue_index
    if index is None:
        return False
    procs = index.smallest_procs()
    mem = None
    for h in snap.hosts:
        if h.free_procs >= procs:
            if mem is None:
                mem = index.smallest_mem()
            if h.free_mem >= mem:
                return False
    return True


def _view(snap: Snapshot, borrowed: dict[str, list[_Borrowed]]) -> Snapshot:
    """``snap`` as the backfill pass must see it: preempted victims hold what they are owed."""
    hosts = []
    for h in snap.hosts:
        items = borrowed.get(h.name)
        if not items:
            hosts.append(h)
            continue
        owed = sum(b.alloc_procs for b in items)
        version = hash((h.version, tuple((b.id, b.resume_at) for b in items)))
        hosts.append(
            HostView(
                h.spec,
                h.free_procs - owed,
                h.free_mem,
                (*h.running, *cast("list[Job]", items)),  # duck-typed: see _Borrowed
                tuple(p for p in h.preempted if all(p is not b.job for b in items)),
                version,
            )
        )
    views = tuple(hosts)
    return replace(snap, hosts=views, host_by_name={v.name: v for v in views})


__all__ = [
    "MODES",
    "PARAMS",
    "EligibilityCache",
    "ImmediateService",
    "SummaryCounts",
    "TrialBook",
    "TrialPlan",
    "TrialSettings",
    "VictimLists",
    "choose_victims",
    "current_slowdown",
    "is_eligible_victim",
    "parse_memory",
    "plan_trial",
    "trial_decisions",
]
