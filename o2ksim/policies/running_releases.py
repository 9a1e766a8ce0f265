"""How an availability profile reads a running job: when it gives its resources back.

Kept apart from :mod:`o2ksim.policies.profile` (the step function itself) because the
EASY shadows of :mod:`o2ksim.policies.shadow` and the carried plan read the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from typing import Any, Protocol

from o2ksim.engine.snapshot import HostView


class Releasing(Protocol):
    """What a profile reads of a running job.

    A :class:`~o2ksim.jobs.Job`, or a stand-in with these fields: immediate
    service shows the backfill pass each preempted job still owed processors
    as one (``immediate._Borrowed``).
    """

    @property
    def id(self) -> int: ...
    @property
    def alloc_procs(self) -> int: ...
    @property
    def alloc_mem(self) -> int: ...
    @property
    def time_limit(self) -> float: ...
    def predicted_end(self, now: float) -> float: ...


def running_jobs(h: HostView) -> Collection[Releasing]:
    """The jobs running on ``h``, as a profile reads them (:class:`Releasing`)."""
    return h.running


def release_time(job: Releasing, now: float) -> float:
    """When a running job is expected to give its processors and memory back.

    Its predicted end (start + requested runtime, or *now* once overrun,
    SPEC §2 -- under the overrun rule ``requested``, start + the user's
    request R once an estimate below R is overrun, then *now*; from the work
    still owed if it was resized or preempted), but never after the time
    limit it was started with (``Start.time_limit``): there the engine kills
    or requeues it, and either way it releases everything.
    """
    end = job.predicted_end(now)
    limit = job.time_limit
    return limit if limit < end else end


def raise_due(jobs: Iterable[Any], now: float) -> float:
    """The first time after ``now`` at which one of the running ``jobs`` has its
    prediction raised to its request (the overrun rule ``requested``,
    :meth:`~o2ksim.jobs.Job.raised_at`); ``inf`` when none will.

    Until then every release time of these jobs keeps the form
    ``max(constant, now)``, so a memo of a host's releases or profile built
    now stays valid for a later pass before that time; from it on, the memo
    must be rebuilt.  Stand-ins without ``raised_at`` (:class:`Releasing`) raise nothing.
    """
    due = math.inf
    for j in jobs:
        if getattr(j, "overrun_time", 0.0):
            t = j.raised_at(now)
            if t < due:
                due = t
    return due


__all__ = ["Releasing", "raise_due", "release_time", "running_jobs"]
