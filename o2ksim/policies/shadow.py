"""The two cheap forms of a host's availability profile (T§3.2.1): EASY's shadow and
the untouched host's running sums.

:class:`~o2ksim.policies.profile.Profile` is the step function itself; a pass
with one reservation (EASY: FCFS-backfill, LXF&W-backfill, ...) needs only:

* :class:`Releases` -- the profile of a host nobody has reserved yet, kept as
  its sorted releases with running sums: where would a job's reservation go
  (two bisections), and what shadow would it leave;
* :class:`Shadow` -- the profile of a host holding one reservation, reduced to
  EASY's *shadow time* and *extra* processors and memory: may a job start now
  without delaying it.

Both give exactly what the full profile would (tests compare them).

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

from o2ksim.engine.snapshot import HostView
from o2ksim.policies.running_releases import raise_due, release_time, running_jobs


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
        self,
        now: float,
        now_procs: float,
        now_mem: float,
        at: float,
        extra_procs: float,
        extra_mem: float,
    ) -> None:
        self.now, self.now_procs, self.now_mem = now, now_procs, now_mem
        self.at, self.extra_procs, self.extra_mem = at, extra_procs, extra_mem

    @classmethod
    def of(cls, profile: Any, at: float) -> Shadow | None:
        """The shadow of a profile (``times``/``procs``/``mem`` steps from now) holding
        one reservation from ``at``; ``None`` when the reduction would not be exact."""
        times = profile.times
        k = (
            bisect.bisect_left(times, at)
            if isinstance(times, list)
            else int(times.searchsorted(at))
        )
        if k >= len(times) or times[k] != at:
            return None  # the reservation made no step of its own (nothing to protect there)
        procs, mem, lo = profile.procs, profile.mem, profile.lo  # lo: the step at now
        if k > lo and not _lowest_first(procs, mem, lo, k):
            return None
        if not _lowest_first(procs, mem, k, len(times)):
            return None
        return cls(times[lo], procs[lo], mem[lo], at, procs[k], mem[k])

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
    """The profile of an untouched host: its expected releases with running sums.

    Built from ``(time, procs, mem)`` rows sorted by time, then processors,
    then memory (the tie rule: same-time releases count smallest first), and
    the host's free processors and memory.  Resources only come back, so the
    profile's earliest start for a job is the time of the first release after
    which the running sums (plus what is free) cover both its processors and
    memory (:meth:`start`), and :meth:`reserve` gives the :class:`Shadow` the
    reservation leaves there.  On the hosts of an O2K (8-64 processors, a
    handful of running jobs) these are plain lists, kept between passes
    (:func:`host_releases`); a host running many jobs gets numpy arrays read
    from the engine's sorted release index (:meth:`from_arrays`), summed left
    to right the same way, so both give the same floats bit for bit.

    **Why one instance serves every pass while the host is unchanged** (the
    memo kept by ``version``, :func:`host_releases`).
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
    (:func:`host_releases`).  The argument above
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
        "valid_until",
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
        self.valid_until = math.inf  # a memo: first time a row's job has its prediction raised
        self.free_procs, self.free_mem = free_procs, free_mem
        times, procs, mem = zip(*rows, strict=True) if rows else ((), (), ())
        self.times = list(map(float, times))
        self.procs = list(map(float, procs))
        self.mem = list(map(float, mem))
        self.sum_procs = list(itertools.accumulate(self.procs))  # without the free resources
        self.sum_mem = list(itertools.accumulate(self.mem))
        self.cum_procs = [total + free_procs for total in self.sum_procs]
        self.cum_mem = [total + free_mem for total in self.sum_mem]

    @classmethod
    def from_arrays(
        cls, t: np.ndarray, p: np.ndarray, m: np.ndarray, free_procs: float, free_mem: float
    ) -> Releases:
        """The releases of a host running many jobs, from sorted numpy arrays
        (:func:`~o2ksim.policies.release_arrays.with_added`); read-only (no :meth:`insert`)."""
        self = cls.__new__(cls)
        self.version, self.rows_of, self.valid_until = -1, None, math.inf
        self.free_procs, self.free_mem = free_procs, free_mem
        self.times, self.procs, self.mem = t, p, m  # type: ignore[assignment]
        self.sum_procs, self.sum_mem = [], []
        self.cum_procs = np.cumsum(p) + free_procs  # type: ignore[assignment]
        self.cum_mem = np.cumsum(m) + free_mem  # type: ignore[assignment]
        return self

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

    def _enough(self, procs: float, mem: float) -> int:
        """Index of the first release after which the running sums (plus what is free)
        cover both ``procs`` and ``mem``; the number of releases when none does."""
        cum_procs, cum_mem = self.cum_procs, self.cum_mem
        if isinstance(cum_procs, list):
            by_procs, by_mem = (
                bisect.bisect_left(cum_procs, procs),
                bisect.bisect_left(cum_mem, mem),
            )
        else:  # read from the engine's arrays (from_arrays)
            by_procs = int(cum_procs.searchsorted(procs))
            by_mem = int(cum_mem.searchsorted(mem))
        return by_procs if by_procs > by_mem else by_mem

    def start(self, now: float, procs: float, mem: float) -> float:
        """The reservation's start (:meth:`reserve`'s first value) alone: two bisections."""
        if self.free_procs >= procs and self.free_mem >= mem:
            return now
        enough = self._enough(procs, mem)
        if enough >= len(self.times):
            return math.inf
        at = self.times[enough]
        return at if at > now else now

    def reserve(
        self, now: float, request: tuple[float, float, float], together: bool = False
    ) -> tuple[float, Shadow | None]:
        """Where one reservation for ``request`` (processors, memory, requested runtime)
        goes on this host, and the :class:`Shadow` it leaves; ``(inf, None)`` when the
        host never has enough.

        What building the host's profile, taking its earliest start and reserving
        it there would give (``Profile.earliest``, ``Profile.reserve``, then
        :meth:`Shadow.of`), without building it: the extra is what is left at the
        start once the releases the job needs there (smallest first) are counted,
        or, ``together`` (``release_ties = "together"``), every release at the start.
        """
        procs, mem = request[0], request[1]
        times, cum_procs, cum_mem = self.times, self.cum_procs, self.cum_mem
        at = self.start(now, procs, mem)
        if at == math.inf:
            return at, None
        due = _right(times, now)  # releases at or before now
        now_procs = cum_procs[due - 1] if due else float(self.free_procs)
        now_mem = cum_mem[due - 1] if due else float(self.free_mem)
        if at > now:  # at release ``enough``, the first whose running sums suffice
            enough = self._enough(procs, mem)
            if together:  # ... and every other release at that time
                enough = _right(times, times[enough]) - 1
            have_procs, have_mem = cum_procs[enough], cum_mem[enough]
        elif together:  # now: every release due by now
            have_procs, have_mem = now_procs, now_mem
        else:  # now: the releases due by now, smallest first, until both suffice
            have_procs, have_mem = _due_until_enough(
                float(self.free_procs),
                float(self.free_mem),
                list(self.procs[:due]),
                list(self.mem[:due]),
                procs,
                mem,
            )
        return at, _shadow_after_hold(now, now_procs, now_mem, at, have_procs, have_mem, request)


def _right(values: Sequence[float], x: float) -> int:
    """``bisect_right`` on a list, numpy's own binary search on an array."""
    if isinstance(values, list):
        return bisect.bisect_right(values, x)
    return int(values.searchsorted(x, side="right"))  # type: ignore[attr-defined]


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


def host_releases(
    h: HostView,
    now: float,
    added: list[tuple[float, int, float]] | None,
    cache: dict[str, Releases],
) -> Releases:
    """A host's expected releases and free resources, with the jobs ``added`` in this
    pass counted as running (plain lists; the host's running jobs one by one).

    Without ``added``, ``cache`` keeps a host's :class:`Releases` between
    passes while its allocations are unchanged (its ``version``): every
    release time has the form ``max(constant, now)``
    (:meth:`~o2ksim.jobs.Job.predicted_end`), so the releases of an earlier
    pass, in the order of their constants, answer for this one
    (:class:`Releases` explains why).  When the version has changed, the
    kept instance is updated for the jobs that left and started since
    (:func:`_update_releases`) where that is exact, and rebuilt otherwise.
    Either way it is rebuilt once a running job has its prediction raised to
    its request (the overrun rule ``requested``; ``valid_until``,
    :func:`~o2ksim.policies.running_releases.raise_due`): that release time changes
    its constant.
    """
    if not added:
        entry = cache.get(h.name)
        if (
            entry is None
            or now >= entry.valid_until
            or (entry.version != h.version and not _update_releases(entry, h, now))
        ):
            jobs = running_jobs(h)
            rows_of: dict[int, tuple[float, float, float]] = {
                j.id: (release_time(j, now), j.alloc_procs, j.alloc_mem) for j in jobs
            }
            entry = Releases(sorted(rows_of.values()), h.free_procs, h.free_mem, h.version, rows_of)
            entry.valid_until = raise_due(jobs, now)
            cache[h.name] = entry
        return entry
    raised: list[tuple[float, float, float]] = [
        (max(release_time(j, now), now), j.alloc_procs, j.alloc_mem) for j in running_jobs(h)
    ]
    raised.extend(added)
    raised.sort()
    free_procs = h.free_procs - sum(b for _a, b, _c in added)
    free_mem = h.free_mem - sum(c for _a, _b, c in added)
    return Releases(raised, free_procs, free_mem)


def _update_releases(entry: Releases, h: HostView, now: float) -> bool:
    """Bring a host's kept :class:`Releases` to its current version in place, from the
    jobs that left and started since; ``False`` (untouched) when that would not be exact.

    Exact when every allocation change since ``entry.version`` is one of
    those starts or departures: then every job running both then and now was
    left alone and keeps its row (:class:`Releases`).  The engine bumps a
    host's version by one per allocation change (``Host.take``/``give``:
    start, end, preemption, resumption, resize), so that holds iff the
    version moved by exactly the number of jobs that started or left; a
    resize, a job that left and came back (requeued, resumed) or a job that
    came and went in between all make the count differ.
    """
    rows_of = entry.rows_of
    if rows_of is None:
        return False
    running = getattr(h.running, "mapping", None)  # the engine's live dict of running jobs
    if running is None:
        running = {j.id: j for j in running_jobs(h)}
    left = rows_of.keys() - running.keys()
    started = running.keys() - rows_of.keys()
    if h.version - entry.version != len(left) + len(started):
        return False
    first = len(entry.times)
    for job_id in left:
        i = entry.remove(rows_of.pop(job_id))
        if i < first:
            first = i
    for job_id in started:
        j = running[job_id]
        row = rows_of[job_id] = (release_time(j, now), j.alloc_procs, j.alloc_mem)
        due = raise_due((j,), now)
        if due < entry.valid_until:
            entry.valid_until = due
        i = entry.insert(row)
        if i < first:
            first = i
    entry.resum(first, h.free_procs, h.free_mem, h.version)
    return True
