"""Jobs: the immutable request read from a workload, and the live job the engine runs.

A :class:`JobSpec` is what the user submitted (SPEC §2): submit time, requested
processors ``P``, memory ``M``, requested runtime ``R`` and the actual runtime
``T`` the trace says it ran.  A :class:`Job` wraps a spec with the state the
simulation gives it: where it runs, on how many processors, how much work is
left.  Its lifecycle is an explicit state machine (:class:`JobState`); an
illegal move raises :class:`IllegalTransition`, which is always an engine or
policy bug, never a user error.

Work is measured in processor-seconds at the requested size: a job has work
``T * P`` and on ``p`` processors progresses at rate ``p`` (so at ``p / P`` of
its full speed, the linear slowdown of thesis §3.2.3).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from o2ksim.engine.errors import IllegalTransition

#: What the scheduler predicts for a running job past its runtime estimate: its end is
#: ``now`` until it ends (SPEC §2), or its prediction is raised to the user's
#: ``requested`` runtime R first (Tsafrir, Etsion & Feitelson 2007); RunSettings.overrun.
OVERRUN_RULES = ("now", "requested")


class JobState(enum.Enum):
    """Where a job is in its life.  See ``_TRANSITIONS`` for the legal moves."""

    PENDING = "pending"  # not yet submitted (simulated time < submit)
    QUEUED = "queued"  # submitted, waiting for the scheduler
    RUNNING = "running"  # holds processors and memory and makes progress
    PREEMPTED = "preempted"  # gave its processors back, keeps its memory, no progress
    COMPLETED = "completed"  # ran all its work
    KILLED = "killed"  # stopped by the scheduler before finishing (e.g. past R + grace)
    REJECTED = "rejected"  # can never run on this machine; never started

    # Members are singletons compared by identity: hash them by identity too (in C),
    # instead of Enum's hash of the name in Python (the engine looks states up per event).
    __hash__ = object.__hash__

    @property
    def terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL = frozenset({JobState.COMPLETED, JobState.KILLED, JobState.REJECTED})

_TRANSITIONS: dict[JobState, frozenset[JobState]] = {
    JobState.PENDING: frozenset({JobState.QUEUED, JobState.REJECTED}),
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.REJECTED, JobState.KILLED}),
    JobState.RUNNING: frozenset(
        {JobState.PREEMPTED, JobState.COMPLETED, JobState.KILLED, JobState.QUEUED}
    ),
    JobState.PREEMPTED: frozenset({JobState.RUNNING, JobState.KILLED}),
    JobState.COMPLETED: frozenset(),
    JobState.KILLED: frozenset(),
    JobState.REJECTED: frozenset(),
}


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One submitted job, as the workload describes it.

    Times are seconds, memory is kilobytes for the whole job (``0`` = not
    constrained).  ``req_time`` is what the scheduler is told (the user's
    requested runtime, or a transformed estimate); ``run_time`` is what the job
    really needs at its requested size.  ``requested_time`` is the user's
    requested runtime ``R`` when a runtime-estimate scenario replaced it in
    ``req_time`` (``--estimates``): ``None`` when ``req_time`` is ``R``
    itself, ``inf`` when the trace records no ``R``.  The kill rule stops a
    job at ``R`` (+ grace) and the ``requested`` overrun rule raises an
    overrun prediction to ``R`` (:attr:`user_request`), whatever the scheduler
    plans with.
    """

    job_id: int
    submit: float
    procs: int
    mem: int
    req_time: float
    run_time: float
    used_mem: int = 0
    user: int = -1
    queue: int = -1
    requested_time: float | None = None

    @property
    def work(self) -> float:
        """Processor-seconds the job needs: ``run_time * procs``."""
        return self.run_time * self.procs

    @property
    def user_request(self) -> float:
        """``R``, the runtime the user asked for (``inf`` when unknown)."""
        return self.req_time if self.requested_time is None else self.requested_time

    @property
    def kill_after(self) -> float:
        """Runtime after which the kill rule stops the job, before the grace (SPEC §2).

        The user's request ``R``, never a prediction below it (a
        ``user-recent`` estimate), and never less than the runtime the
        scheduler plans with: with ``--estimates actual`` a job whose trace
        runtime ``T`` exceeds ``R`` is planned, and let run, to ``T``.
        """
        r = self.user_request
        return r if r > self.req_time else self.req_time


@dataclass(slots=True, eq=False)
class Job:
    """A job inside one simulation run.  Only the engine mutates it.

    Policies read it through a snapshot: ``spec`` fields, ``state``, ``host``,
    ``alloc_procs`` (current processors), ``first_start``, ``last_start``,
    ``attained`` (processor-seconds of work done) and the derived measures.
    """

    spec: JobSpec
    state: JobState = JobState.PENDING
    host: str | None = None
    alloc_procs: int = 0
    alloc_mem: int = 0
    first_start: float = math.nan
    last_start: float = math.nan  # start of the current uninterrupted running segment
    end: float = math.nan
    remaining_work: float = 0.0
    segment_start: float = math.nan  # when the current rate began (start/resume/resize)
    preemptions: int = 0
    resizes: int = 0
    restarts: int = 0
    resume_procs: int = 0  # processors a preempted job held before it was preempted
    reduced: bool = False  # ever ran on fewer processors than it requested
    can_finish: bool = True  # False: a trial run with less memory than the job's peak use
    time_limit: float = math.inf  # absolute time at which the engine stops the current run
    overrun_time: float = 0.0  # runtime an overrun prediction is raised to (R; 0: none, "now")
    limit_action: str = "kill"  # "kill" or "requeue" when time_limit is reached
    reason: str = ""  # why the job was rejected or killed
    id: int = field(init=False)  # ``spec.job_id`` (a plain attribute: read in every inner loop)

    def __post_init__(self) -> None:
        self.remaining_work = self.spec.work
        self.id = self.spec.job_id

    # -- identity and read-only conveniences -------------------------------------------------

    @property
    def submit(self) -> float:
        return self.spec.submit

    @property
    def procs(self) -> int:
        """Requested processors ``P``."""
        return self.spec.procs

    @property
    def mem(self) -> int:
        """Requested memory (KB for the whole job)."""
        return self.spec.mem

    @property
    def req_time(self) -> float:
        """The runtime the scheduler is told (requested runtime or an estimate)."""
        return self.spec.req_time

    def predicted_end(self, now: float) -> float:
        """When the scheduler expects this running job to release its processors.

        ``last_start + req_time`` for a job that has always run on its full
        request; a job that started on fewer processors, was resized or was
        preempted is predicted from the requested runtime still owed
        (``P * R - work done``) at its current rate (:meth:`rate_end`, a time
        fixed through each segment).  A job that has overrun
        its estimate (its predicted end is not after ``now``) is predicted the
        same way from ``overrun_time`` when the engine set one (the overrun
        rule ``requested``: the prediction raised to the user's request, the
        simplest of Tsafrir, Etsion & Feitelson's corrections of predictions
        "proved wrong").  A run with a time limit (a trial
        run, or a kill at R + grace) ends by the limit at the latest.  A job
        that has overrun what it is predicted from ends *now* (SPEC §2),
        never in the past.  A preempted job holds no processors: ``inf``.
        """
        spec = self.spec
        if self.alloc_procs == spec.procs and not (self.resizes or self.preemptions or self.reduced):
            predicted = self.last_start + spec.req_time
            if predicted <= now and self.overrun_time:
                predicted = self.last_start + self.overrun_time
        elif self.alloc_procs:
            predicted = self.rate_end(spec.req_time)
            if predicted <= now and self.overrun_time:
                predicted = self.rate_end(self.overrun_time)
        else:
            return math.inf
        if self.time_limit < predicted:
            predicted = self.time_limit
        return predicted if predicted > now else now

    def raised_at(self, now: float) -> float:
        """When :meth:`predicted_end` will raise this running job's prediction to
        ``overrun_time``: the end its estimate predicts, if after ``now`` and before its
        time limit; ``inf`` when no such raise is ahead.

        Until then its predicted end keeps the form ``max(constant, now)``, which
        the policies' memos of predicted ends rely on
        (:func:`o2ksim.policies.running_releases.raise_due`).
        """
        if not self.overrun_time or not self.alloc_procs:
            return math.inf
        spec = self.spec
        if self.alloc_procs == spec.procs and not (self.resizes or self.preemptions or self.reduced):
            end = self.last_start + spec.req_time
        else:
            end = self.rate_end(spec.req_time)
        return end if now < end < self.time_limit else math.inf

    def rate_end(self, runtime: float) -> float:
        """When this running job would have done ``procs * runtime`` of work at its current
        rate: the start of the current segment plus the work then still owed over the
        processors it holds.

        The same value, in exact arithmetic, as *now* plus the work owed *now* over
        them; written from the segment's start it is the same float at every pass
        of a segment (a prediction that does not move with *now*, as a plain
        job's ``last_start + req_time``), and takes fewer roundings.
        """
        spec = self.spec
        done = spec.work - self.remaining_work  # by the start of the current segment
        return self.segment_start + (spec.procs * runtime - done) / self.alloc_procs

    def progress_since_segment(self, now: float) -> float:
        """Processor-seconds done since the current rate began."""
        if self.state is not JobState.RUNNING:
            return 0.0
        return (now - self.segment_start) * self.alloc_procs

    def work_done(self, now: float) -> float:
        """Processor-seconds of work completed by ``now``."""
        return self.spec.work - self.remaining_work + self.progress_since_segment(now)

    def wait(self, now: float) -> float:
        """Current wait: time since submission for a queued job."""
        return now - self.spec.submit

    # -- lifecycle -----------------------------------------------------------------------------
    def move(self, new: JobState, now: float, note: str = "") -> None:
        """Change state, checking the lifecycle."""
        if new not in _TRANSITIONS[self.state]:
            raise IllegalTransition(
                f"job {self.id} at t={now:g}: illegal move {self.state.value} -> {new.value}"
                + (f" ({note})" if note else "")
            )
        self.state = new
