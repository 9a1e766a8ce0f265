"""What a policy may ask the engine to do.

A policy returns a list of these from ``schedule(snapshot)``; the engine applies
them in order, validating each (an impossible decision — starting a job on a
host without the processors, resuming a job that is not preempted — raises
:class:`PolicyError`, because it is a bug in the policy, not in the input).
Every decision carries an optional ``note``: the reason, shown by the decision
log (``o2ksim explain``).
"""

from __future__ import annotations

from dataclasses import dataclass

from o2ksim.engine.errors import PolicyError
from o2ksim.jobs import Job

__all__ = [
    "Decision", "Kill", "PolicyError", "Preempt", "Reject", "Reserve", "Resize", "Resume", "Start",
    "WakeAt",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Start:
    """Start a queued job on ``host``.

    ``procs``/``mem`` default to the job's request.  ``time_limit`` (seconds of
    run time from now) bounds this run; when it is reached the job is killed
    (``on_limit="kill"``) or returned to the queue with its work reset
    (``on_limit="requeue"``, the trial run of immediate service, T§3.2.2).
    ``resumes``: jobs on ``host`` preempted (earlier in the same pass) to make
    room for this run; the moment it ends, however it ends, the engine resumes
    each one still preempted on the processors it had, in this order, as if the
    policy had returned ``Resume`` for it then (a trial's end and its victims'
    resumption are one step, and no pass sees the victims' processors idle).
    """

    job: Job
    host: str
    procs: int | None = None
    mem: int | None = None
    time_limit: float | None = None
    on_limit: str = "kill"
    note: str = ""
    resumes: tuple[Job, ...] = ()


@dataclass(frozen=True, slots=True)
class Preempt:
    """Take a running job's processors away; it keeps its memory and remaining work."""

    job: Job
    note: str = ""


@dataclass(frozen=True, slots=True)
class Resume:
    """Give a preempted job processors again (default: its previous allocation)."""

    job: Job
    procs: int | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Resize:
    """Change a running job's processor count; its work T*P proceeds at rate p/P."""

    job: Job
    procs: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class Kill:
    """Stop a queued, running or preempted job for good (status ``killed``)."""

    job: Job
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Reject:
    """Refuse a queued job that can never run (status ``rejected``)."""

    job: Job
    reason: str = ""


@dataclass(frozen=True, slots=True)
class WakeAt:
    """Run a scheduling pass at ``time`` (absolute); ``host``/``tag`` come back in the snapshot."""

    time: float
    host: str | None = None
    tag: str = ""


@dataclass(frozen=True, slots=True)
class Reserve:
    """Information only: the policy reserved ``host`` for ``job`` from ``at``.

    The engine does not act on it; the decision log records it so that a
    schedule can be explained.  Policies emit it only when ``snapshot.explain``.
    """

    job: Job
    host: str
    at: float
    note: str = ""


Decision = Start | Preempt | Resume | Resize | Kill | Reject | WakeAt | Reserve
