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
import itertools
import math
from collections.abc import Sequence
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

    @classmethod
    def reserve(
        cls,
        now: float,
        free: tuple[float, float],
        releases: tuple[np.ndarray, np.ndarray, np.ndarray],
        request: tuple[float, float, float],
    ) -> tuple[float, Shadow | None]:
        """Where one reservation goes on an untouched host, and the shadow it leaves.

        ``free``: processors and memory free now; ``releases``: times,
        processors and memory of the expected releases, sorted by time, then
        processors, then memory (releases due by now count now); ``request``:
        the reserved job's processors, memory and requested runtime.  Gives
        what building the host's profile, taking its earliest start and
        reserving it there would (``Profile.from_release_index``,
        ``earliest``, ``reserve``, then :meth:`of`), without building it:
        resources only come back, so the start is the first release after
        which both suffice, and the extra is what is left there once the
        releases the job needs at that instant (smallest first) are counted.
        ``(inf, None)`` when the host never has enough.
        """
        t, p, m = releases
        procs, mem = request[0], request[1]
        cum_procs = np.cumsum(p) + free[0]
        cum_mem = np.cumsum(m) + free[1]
        due = int(t.searchsorted(now, side="right"))  # releases at or before now
        if free[0] >= procs and free[1] >= mem:
            enough = -1  # no release needed
        else:
            enough = max(int(cum_procs.searchsorted(procs)), int(cum_mem.searchsorted(mem)))
            if enough >= len(t):
                return math.inf, None
        now_procs = float(cum_procs[due - 1]) if due else float(free[0])
        now_mem = float(cum_mem[due - 1]) if due else float(free[1])
        if enough >= due:  # at the release time t[enough]: its same-time releases, smallest
            at = float(t[enough])  # first, are already in sorted order up to ``enough``
            have_procs, have_mem = float(cum_procs[enough]), float(cum_mem[enough])
        else:  # now: the releases due by now, smallest first, until both suffice
            at = now
            have_procs, have_mem = _due_until_enough(
                float(free[0]), float(free[1]), p[:due].tolist(), m[:due].tolist(), procs, mem
            )
        return at, _shadow_after_hold(now, now_procs, now_mem, at, have_procs, have_mem, request)

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


class Releases:
    """A host's expected releases as plain Python lists, ready for many reservations.

    :meth:`Shadow.reserve` does the same with numpy; on the hosts of an O2K
    (8-64 processors, a handful of running jobs) numpy's per-call cost, not
    the arithmetic, was most of a pass, so these are lists with their
    running sums precomputed.  Built from ``(time, procs, mem)`` rows sorted
    by time, then processors, then memory, and the host's free processors and
    memory; the running sums are summed left to right exactly as
    ``numpy.cumsum`` does, so :meth:`reserve` gives :meth:`Shadow.reserve`'s
    floats bit for bit.

    **Why one instance serves every pass while the host is unchanged** (the
    memo kept by ``version``, :func:`~o2ksim.policies.backfill.host_releases`).
    While no allocation on the host changes, its free resources are fixed
    and each expected release has the form ``max(c_i, now)`` with ``c_i``
    fixed (:meth:`~o2ksim.jobs.Job.predicted_end`); the releases predicted at
    the pass that built the rows, ``max(c_i, then)``, are of the same form, so
    take them as the ``c_i``.  Keep the rows in the order of the ``c_i``.  The job needs ``k`` releases, where ``k`` is the
    first index at which the running sums (plus the free resources) reach
    its processors and memory; those sums do not involve the times, so ``k``
    does not depend on ``now``.  Raising every ``c_i`` to ``now`` keeps the
    rows sorted, so the profile's earliest start is the time of release
    ``k``: ``max(c_k, now)`` (``now`` when the free resources suffice,
    never when even all releases do not).  At ``now`` the releases due by
    then are taken smallest first, and after ``now`` release ``k`` and those
    before it are exactly the ones that sorted order (the tie rule, smallest
    first) counts — so :meth:`reserve` from the ``c_i`` gives what building
    the profile afresh from the raised releases would.

    **Why it may be updated instead of rebuilt when the host changes**
    (:func:`~o2ksim.policies.backfill.host_releases`).  The argument above
    needs only that each row is ``max(c_i, then_i)`` for *some* earlier pass
    ``then_i`` (so ``max(row, now)`` is the release now) and that the rows
    stay in order.  A job that kept running with its allocation untouched
    keeps its row; a job that left loses it (:meth:`remove`); a job that
    started gets ``max(c, now)``, put where sorting would put it
    (:meth:`insert`).  :meth:`resum` then recomputes the running sums from
    the first changed row on, continuing from the last unchanged sum, so they
    are the left-to-right sums of a fresh instance of the same rows.
    ``rows_of`` (job id -> row) tells which row is whose.
    """

    __slots__ = (
        "cum_mem",
        "cum_procs",
        "free_mem",
        "free_procs",
        "mem",
        "procs",
        "rows_of",
        "sum_mem",
        "sum_procs",
        "times",
        "version",
    )

    def __init__(
        self,
        rows: Sequence[tuple[float, float, float]],
        free_procs: float,
        free_mem: float,
        version: int = -1,
        rows_of: dict[int, tuple[float, float, float]] | None = None,
    ) -> None:
        self.version = version  # the host allocation version these rows were read at
        self.rows_of = rows_of  # job id -> its row, when the rows are a host's running jobs
        self.free_procs, self.free_mem = free_procs, free_mem
        times, procs, mem = zip(*rows, strict=True) if rows else ((), (), ())
        self.times = list(map(float, times))
        self.procs = list(map(float, procs))
        self.mem = list(map(float, mem))
        self.sum_procs = list(itertools.accumulate(self.procs))  # without the free resources
        self.sum_mem = list(itertools.accumulate(self.mem))
        self.cum_procs = [total + free_procs for total in self.sum_procs]
        self.cum_mem = [total + free_mem for total in self.sum_mem]

    def remove(self, row: tuple[float, float, float]) -> int:
        """Take one row equal to ``row`` out (a job that left); where it was.

        Call :meth:`resum` from the smallest position returned before asking again.
        """
        t, p, m = row
        times, procs, mem = self.times, self.procs, self.mem
        i = bisect.bisect_left(times, t)
        end = bisect.bisect_right(times, t, i)
        while i < end and (procs[i] != p or mem[i] != m):
            i += 1
        if i == end:
            raise LookupError(f"no release {row!r} to remove")  # the caller's bookkeeping is wrong
        del times[i], procs[i], mem[i]
        return i

    def insert(self, row: tuple[float, float, float]) -> int:
        """Put ``row`` (a job that started) where sorting the rows would; where it went.

        After every row that sorts before or equal to it: by time, then
        processors, then memory.  Call :meth:`resum` before asking again.
        """
        t, p, m = row
        times, procs, mem = self.times, self.procs, self.mem
        i = bisect.bisect_left(times, t)
        end = bisect.bisect_right(times, t, i)
        while i < end and (procs[i] < p or (procs[i] == p and mem[i] <= m)):
            i += 1
        times.insert(i, float(t))
        procs.insert(i, float(p))
        mem.insert(i, float(m))
        return i

    def resum(self, first: int, free_procs: float, free_mem: float, version: int) -> None:
        """Bring the running sums up to date after :meth:`remove`/:meth:`insert` changed
        rows from position ``first`` on, with the host's new free resources and version.

        The sums before ``first`` are kept; from there they go on from the last
        kept one, adding left to right, so every sum is the one a fresh
        ``Releases`` of these rows would hold, bit for bit.
        """
        self.version = version
        self.free_procs, self.free_mem = free_procs, free_mem
        for values, sums in ((self.procs, self.sum_procs), (self.mem, self.sum_mem)):
            if first == 0:
                sums[:] = itertools.accumulate(values)
            else:
                sums[first:] = itertools.accumulate(values[first:], initial=sums[first - 1])
                del sums[first]  # the kept sum ``accumulate`` began with
        self.cum_procs = [total + free_procs for total in self.sum_procs]
        self.cum_mem = [total + free_mem for total in self.sum_mem]

    def start(self, now: float, procs: float, mem: float) -> float:
        """The reservation's start (:meth:`reserve`'s first value) alone: two bisections."""
        if self.free_procs >= procs and self.free_mem >= mem:
            return now
        enough = bisect.bisect_left(self.cum_procs, procs)
        by_mem = bisect.bisect_left(self.cum_mem, mem)
        if by_mem > enough:
            enough = by_mem
        if enough >= len(self.times):
            return math.inf
        at = self.times[enough]
        return at if at > now else now

    def reserve(self, now: float, request: tuple[float, float, float]) -> tuple[float, Shadow | None]:
        """:meth:`Shadow.reserve` on these releases (every time raised to ``now``)."""
        procs, mem = request[0], request[1]
        times, cum_procs, cum_mem = self.times, self.cum_procs, self.cum_mem
        at = self.start(now, procs, mem)
        if at == math.inf:
            return at, None
        due = bisect.bisect_right(times, now)  # releases at or before now
        now_procs = cum_procs[due - 1] if due else float(self.free_procs)
        now_mem = cum_mem[due - 1] if due else float(self.free_mem)
        if at > now:  # at release ``enough``, the first whose running sums suffice
            enough = max(bisect.bisect_left(cum_procs, procs), bisect.bisect_left(cum_mem, mem))
            have_procs, have_mem = cum_procs[enough], cum_mem[enough]
        else:  # now: the releases due by now, smallest first, until both suffice
            have_procs, have_mem = _due_until_enough(
                float(self.free_procs), float(self.free_mem), self.procs[:due], self.mem[:due], procs, mem
            )
        return at, _shadow_after_hold(now, now_procs, now_mem, at, have_procs, have_mem, request)


def _due_until_enough(
    have_procs: float,
    have_mem: float,
    due_procs: Sequence[float],
    due_mem: Sequence[float],
    procs: float,
    mem: float,
) -> tuple[float, float]:
    """What is free now once the releases due by now are counted, smallest first, until both suffice."""
    for rp, rm in sorted(zip(due_procs, due_mem, strict=True)):
        if have_procs >= procs and have_mem >= mem:
            break
        have_procs += rp
        have_mem += rm
    return have_procs, have_mem


def _shadow_after_hold(
    now: float,
    now_procs: float,
    now_mem: float,
    at: float,
    have_procs: float,
    have_mem: float,
    request: tuple[float, float, float],
) -> Shadow:
    """The shadow a reservation at ``at`` leaves, once the job's own hold is taken off."""
    procs, mem, duration = request
    if duration > 0 and at + duration > at:  # the job's own hold (Profile.take skips none)
        have_procs -= procs
        have_mem -= mem
    if at == now:
        now_procs, now_mem = have_procs, have_mem
    return Shadow(now, now_procs, now_mem, at, have_procs, have_mem)
