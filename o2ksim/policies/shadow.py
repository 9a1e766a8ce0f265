"""A host's availability profile with one reservation, reduced to EASY's shadow time.

Once a backfill pass has placed all its reservations, the rest of the pass
only asks of a reserved host's profile "can a job start *now* for ``d``
seconds without delaying the reservation?" and books the jobs that can.
When the host holds exactly one reservation, starting at ``s``, the answer
needs only three numbers — EASY's test (Lifka 1995; T§3.2.1): a job fits iff
it fits what the profile has free now and either ends by the *shadow time*
``s`` or fits the resources left over at ``s`` (the *extra* processors and
memory).  Each started job then books those numbers down.  The pass stops
touching the profile's arrays: no step is split, no array is copied per job,
and the queue scan is a handful of array comparisons.

The reduction is exact when, before ``s``, the profile is lowest at its first
step and, from ``s`` on, lowest at ``s``: then the lowest step a job
starting now and ending at ``e`` meets is the first step if ``e <= s``, else
the lower of the first step and the step at ``s``.  Profiles built from
running jobs are non-decreasing (resources only come back), one reservation
dips them from ``s`` on at most down to its value at ``s`` (the tie rule
defers the releases it does not need at ``s`` by one instant, so the step at
``s`` is the lowest), and booking a job from now keeps both properties.
:meth:`Shadow.of` checks them on the actual profile and declines otherwise,
so the backfill pass then keeps the full profile.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np


class Shadow:
    """EASY's view of one reserved host: free now, the shadow time, and the extra at it.

    ``now_procs``/``now_mem``: the profile's first step (what a job starting
    now meets first); ``at``: the reservation's start (the shadow time);
    ``extra_procs``/``extra_mem``: the profile's step at ``at``.  Answers
    :meth:`fits` and :meth:`take` exactly like the profile it came from, for
    jobs starting now.
    """

    __slots__ = ("at", "extra_mem", "extra_procs", "now", "now_mem", "now_procs")

    def __init__(
        self, now: float, now_procs: float, now_mem: float, at: float, extra_procs: float, extra_mem: float
    ) -> None:
        self.now, self.now_procs, self.now_mem = now, now_procs, now_mem
        self.at, self.extra_procs, self.extra_mem = at, extra_procs, extra_mem

    @classmethod
    def of(cls, profile: Any, at: float) -> Shadow | None:
        """The shadow of a profile (``times``/``procs``/``mem`` steps from now) holding
        one reservation from ``at``; ``None`` when the reduction would not be exact."""
        times = profile.times
        k = bisect.bisect_left(times, at) if isinstance(times, list) else int(times.searchsorted(at))
        if k >= len(times) or times[k] != at:
            return None  # the reservation made no step of its own (nothing to protect there)
        procs, mem = profile.procs, profile.mem
        if k and not _lowest_first(procs, mem, 0, k):
            return None
        if not _lowest_first(procs, mem, k, len(times)):
            return None
        return cls(times[0], procs[0], mem[0], at, procs[k], mem[k])

    def fits(self, start: float, procs: float, mem: float, duration: float) -> bool:
        """Whether a job starting now (``start``) delays no reservation (``Profile.fits``)."""
        assert start == self.now, "a shadow answers for jobs starting now only"
        if procs > self.now_procs or mem > self.now_mem:
            return False
        return start + duration <= self.at or (procs <= self.extra_procs and mem <= self.extra_mem)

    def admits(self, procs: np.ndarray, mem: np.ndarray, req: np.ndarray) -> np.ndarray:
        """:meth:`fits` for many jobs starting now at once."""
        ok = (procs <= self.now_procs) & (mem <= self.now_mem)
        ok &= (self.now + req <= self.at) | ((procs <= self.extra_procs) & (mem <= self.extra_mem))
        return ok

    def take(self, start: float, procs: float, mem: float, duration: float) -> None:
        """Book a job started now (``Profile.take``): it holds the first step, and the
        step at the shadow time if it runs past it."""
        assert start == self.now, "a shadow answers for jobs starting now only"
        if duration <= 0:
            return
        self.now_procs -= procs
        self.now_mem -= mem
        if self.at < start + duration:
            self.extra_procs -= procs
            self.extra_mem -= mem


def _lowest_first(procs: Any, mem: Any, lo: int, hi: int) -> bool:
    """Whether steps ``lo:hi`` are lowest (processors and memory) at step ``lo``."""
    if isinstance(procs, list):
        return min(procs[lo:hi]) == procs[lo] and min(mem[lo:hi]) == mem[lo]
    return bool(procs[lo:hi].min() == procs[lo] and mem[lo:hi].min() == mem[lo])
