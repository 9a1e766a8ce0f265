"""A host's availability profile: its free processors and memory from *now* on (T§3.2.1).

The step function the backfill family places reservations in and checks
backfilled jobs against (thesis §3.2.1, Fig. 1 and 2), built from the running
jobs' predicted ends: the *one* availability structure of o2ksim.  Its two
cheaper forms, for the two questions a pass asks most, live in
:mod:`o2ksim.policies.shadow`: :class:`~o2ksim.policies.shadow.Releases` is
the profile of an untouched host held as running sums of its sorted releases
(where does one reservation go?), and :class:`~o2ksim.policies.shadow.Shadow`
is the profile of a host holding one reservation reduced to EASY's shadow
time and extra processors (may this job start now?).

:func:`host_profiles` builds every host's profile for a snapshot; the
backfill pass and the goal-oriented search (:mod:`o2ksim.policies.goal`)
both use it.

What the profile assumes about the jobs on a host:

* a RUNNING job releases its processors and memory at its predicted end
  (start + requested runtime; *now* once it has overrun, SPEC §2, or, under
  the overrun rule ``requested``, start + the user's request R once it has
  overrun an estimate below R; from the work still owed if it was resized or
  resumed), or at the time limit it was started with (``Start.time_limit``)
  if that comes first -- there the engine kills or requeues it
  (:func:`release_time`);
* a PREEMPTED job holds its memory and no processors, and the profile never
  gives that memory back: when it will resume and end is not known, so the
  memory stays unavailable to reservations and backfilled jobs (the free
  memory the host reports already excludes it);
* jobs started earlier in the same pass count as running jobs from now.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from o2ksim.engine.releases import ReleaseIndex
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.policies.profile_memo import remember, unneeded_releases
from o2ksim.policies.release_arrays import SortedReleases, with_added
from o2ksim.policies.running_releases import raise_due, release_time, running_jobs

ARRAY_PROFILE_MIN = 64
HOLES_MAX = 64  # resources given back in one profile before its search memos are dropped  # running jobs from which a host's profile is built from the engine's arrays

#: A job started earlier in the pass, as a release: (host, predicted end, procs, memory).
Started = tuple[str, float, int, float]


class Profile:
    """Free processors and memory of one host from *now* on, as a step function.

    ``times[i]`` starts the step whose availability is ``procs[i]``/``mem[i]``;
    the last step lasts forever.  Built from the predicted ends of the running
    jobs; reservations and backfilled jobs are subtracted from it.

    Same-time releases are counted one job at a time, smallest first (the tie
    rule of SPEC §3.1 and of the reference EASY implementation): a reservation
    placed at a release time ``s`` takes only the releases it needs at ``s``;
    the others become available an instant later, so a job backfilled across
    ``s`` may use only the processors left over by that minimal set.

    ``rising``: nothing has been taken from it yet, so its steps never
    decrease (running jobs only give resources back) and :meth:`earliest` is
    a binary search.

    ``short`` and ``found``: what :meth:`earliest` has learnt.  ``short[p]``
    is a time before which no step has ``p`` free processors;
    ``found[(p, m)]`` the answers of earlier searches for ``p`` processors and ``m``
    memory, as durations and answers both rising (:func:`~o2ksim.policies.profile_memo.remember`): a request for
    at least as long cannot start before the answer for the longest duration
    not above its own.  A
    profile only loses resources (:meth:`take`; a step it splits has the
    value of the step it came from), so no earlier start can fit later in the
    pass either, and the next search starts there instead of at *now*
    (conservative backfilling places every waiting job in one profile, and
    without them each search walks every step the earlier reservations
    filled).  A profile that gained resources would have to clear them.
    """

    __slots__ = ("found", "holes", "lo", "mem", "procs", "releases", "rising", "short", "times")

    def __init__(
        self,
        now: float,
        free_procs: int,
        free_mem: float,
        releases: Iterable[tuple[float, int, float]],
    ) -> None:
        times = [now]
        procs = [free_procs]
        mem = [free_mem]
        at: dict[float, list[tuple[int, float]]] = {}
        for t, p, m in sorted((max(t, now), p, m) for t, p, m in releases):
            if t != times[-1]:
                times.append(t)
                procs.append(procs[-1])
                mem.append(mem[-1])
            procs[-1] += p
            mem[-1] += m
            at.setdefault(t, []).append((p, m))
        self.times: list[float] = times
        self.procs = procs
        self.mem = mem
        self.releases: Any = at  # time -> [(procs, mem)] released then (``.get`` only)
        self.rising = True
        self.lo = 0  # the step in force at now (the steps before it are past: advance)
        self.short: dict[int, float] = {}
        self.found: dict[tuple[int, float], tuple[list[float], list[float]]] = {}
        self.holes: list[tuple[float, float]] = []

    @classmethod
    def _of(
        cls,
        times: list[float],
        procs: list[int],
        mem: list[float],
        releases: Any,
    ) -> Profile:
        profile = cls.__new__(cls)
        profile.times, profile.procs, profile.mem, profile.releases = times, procs, mem, releases
        profile.rising = True
        profile.lo = 0
        profile.short = {}
        profile.found = {}
        profile.holes = []
        return profile

    @classmethod
    def from_release_index(
        cls,
        now: float,
        free_procs: int,
        free_mem: float,
        index: ReleaseIndex,
        added: list[tuple[float, int, float]],
    ) -> Profile:
        """The profile of a host from the engine's sorted releases (numpy, no Python loop
        over the running jobs; for hosts running many jobs).

        Gives exactly ``Profile(now, free_procs - added procs, free_mem - added memory,
        releases + added)``; ``index`` must have no irregular jobs.
        """
        t, p, m, free_procs, free_mem = with_added(now, free_procs, free_mem, index, added)
        k0 = int(t.searchsorted(now, side="right"))  # releases due by now count now
        cp = np.cumsum(p) + free_procs
        cm = np.cumsum(m) + free_mem
        later = t[k0:]
        ends = np.flatnonzero(later[1:] != later[:-1])
        ends = np.append(ends, len(later) - 1) + k0 if len(later) else ends
        times = np.concatenate(([now], later[ends - k0]))
        procs = np.concatenate(([cp[k0 - 1] if k0 else free_procs], cp[ends]))
        mem = np.concatenate(([cm[k0 - 1] if k0 else free_mem], cm[ends]))
        at_now = sorted(zip(p[:k0].tolist(), m[:k0].tolist(), strict=True))
        releases = SortedReleases(now, at_now, later, p[k0:], m[k0:])
        # processors are whole numbers: kept as ints, as in a profile built from the jobs
        return cls._of(times.tolist(), procs.astype(np.int64).tolist(), mem.tolist(), releases)

    def seen_at(self, now: float) -> Profile:
        """A fresh, modifiable copy of this unmodified profile as seen from ``now`` (>= its start).

        Valid while the host's allocations are unchanged: steps up to ``now``
        merge into the first one, and their releases count as releases at ``now``.
        """
        times = self.times
        k = bisect.bisect_right(times, now) - 1
        if k <= 0 and times[0] == now:
            return Profile._of(list(times), list(self.procs), list(self.mem), self.releases)
        k = max(k, 0)
        merged: list[tuple[int, float]] = []
        for t in times[: k + 1]:
            merged.extend(self.releases.get(t, ()))
        releases = dict(self.releases)
        if merged:
            merged.sort()
            releases[now] = merged
        return Profile._of([now, *times[k + 1 :]], self.procs[k:], self.mem[k:], releases)

    def advance(self, now: float) -> None:
        """Start the profile at ``now`` (a plan carried from pass to pass, later than its start).

        The step in force at ``now`` is made to start there and becomes :attr:`lo`,
        where every search begins; the steps before it are past.  They are deleted
        only once they are over half of the list, so that a pass costs O(1)
        amortized rather than moving every later step (a list's front deletion:
        221 us a pass, 65 of 316 s profiled, with 3x10^5 jobs queued).
        """
        times = self.times
        k = max(bisect.bisect_right(times, now) - 1, 0)
        times[k] = now
        if 2 * k > len(times):
            del times[:k], self.procs[:k], self.mem[:k]
            k = 0
        self.lo = k
        if self.holes:
            self.holes = [h for h in self.holes if h[1] > now]

    def _split(self, t: float) -> int:
        """Index of the step starting exactly at ``t`` (creating it if needed)."""
        i = bisect.bisect_right(self.times, t) - 1
        if i >= 0 and self.times[i] == t:
            return i
        self.times.insert(i + 1, t)
        self.procs.insert(i + 1, self.procs[i])
        self.mem.insert(i + 1, self.mem[i])
        return i + 1

    def fits(self, start: float, procs: int, mem: float, duration: float) -> bool:
        """Whether ``procs``/``mem`` are free over ``[start, start + duration)``."""
        times = self.times
        i = max(0, bisect.bisect_right(times, start) - 1)
        end = start + duration
        n = len(times)
        while True:
            if self.procs[i] < procs or self.mem[i] < mem:
                return False
            i += 1
            if i >= n or times[i] >= end:
                return True

    def earliest(
        self, procs: int, mem: float, duration: float, not_before: float | None = None
    ) -> float:
        """Earliest start (a step start, or ``not_before``) at which ``procs``/``mem``
        stay free for ``duration``; ``inf`` when never."""
        times = self.times
        n = len(times)
        at_now = self.lo  # the step in force now
        if not_before is None or not_before <= times[at_now]:
            i, floor = at_now, times[at_now]
        else:
            i, floor = bisect.bisect_right(times, not_before) - 1, not_before
        if self.rising:  # the first step with enough of both keeps enough for ever
            first = max(bisect.bisect_left(self.procs, procs), bisect.bisect_left(self.mem, mem), i)
            return math.inf if first >= n else max(times[first], floor)
        if floor != times[at_now]:  # a non-sliding reservation's earliest time: no memo
            return self._search(i, floor, procs, mem, duration)
        # Memos of this profile's earlier searches (class docstring): no step before
        # short[procs] has the processors, and no request as long fits before found[(procs, mem)]
        known = self.short.get(procs, floor)
        if known == math.inf:
            return known
        if known > floor:
            i = bisect.bisect_right(times, known) - 1
        free = self.procs
        while i < n and free[i] < procs:
            i += 1
        if i >= n:
            self.short[procs] = math.inf
            return math.inf
        self.short[procs] = times[i]
        key = (procs, mem)
        memo = self.found.get(key)
        after = -math.inf
        if memo is not None:
            j = bisect.bisect_right(memo[0], duration) - 1
            if j >= 0:
                after = memo[1][j]
                if after == math.inf and not self.holes:
                    return after
                if after > times[i]:
                    i = bisect.bisect_right(times, after) - 1
        at = math.inf if after == math.inf else self._search(i, floor, procs, mem, duration)
        for lo, hi in self.holes:  # starts the memos ruled out before resources came back
            if hi > floor and lo - duration < at:
                at = self._search_covering(lo, hi, floor, at, procs, mem, duration)
        remember(self.found, key, duration, at)
        return at

    def _search_covering(
        self,
        lo: float,
        hi: float,
        floor: float,
        before: float,
        procs: int,
        mem: float,
        duration: float,
    ) -> float:
        """The earliest start before ``before`` whose window meets ``[lo, hi)`` and fits;
        ``before`` when none does."""
        times = self.times
        i = max(bisect.bisect_right(times, max(floor, lo - duration)) - 1, 0)
        n = len(times)
        while i < n and times[i] < hi:
            start = times[i] if times[i] > floor else floor
            if start >= before:
                break
            if start + duration > lo and self.fits(start, procs, mem, duration):
                return start
            i += 1
        return before

    def give_back(self, start: float, procs: int, mem: float, duration: float) -> None:
        """Undo :meth:`take` over ``[start, start + duration)``: the resources come back,
        so the memos of :meth:`earliest` no longer rule out starts whose windows meet it
        (a *hole*, searched first; ``short`` lowered)."""
        if duration <= 0:
            return
        self.take(start, -procs, -mem, duration)
        self.gained(start, start + duration)

    def gained(self, lo: float, hi: float) -> None:
        """Resources came back over ``[lo, hi)`` (:meth:`give_back`, or a :meth:`take` of
        a negative amount): keep the memos of :meth:`earliest` true."""
        if not self.found and not self.short:
            return
        if len(self.holes) >= HOLES_MAX:
            self.found, self.short, self.holes = {}, {}, []
            return
        self.holes.append((lo, hi))
        short = self.short
        for p, t in short.items():
            if t > lo:
                short[p] = lo

    def _search(self, i: int, floor: float, procs: int, mem: float, duration: float) -> float:
        """:meth:`earliest` from step ``i`` on (no earlier step start can do)."""
        times, free_procs, free_mem = self.times, self.procs, self.mem
        n = len(times)
        while i < n:
            if free_procs[i] < procs or free_mem[i] < mem:
                i += 1
                continue
            start = times[i] if times[i] > floor else floor
            end = start + duration
            k = i + 1
            while k < n and times[k] < end:
                if free_procs[k] < procs or free_mem[k] < mem:
                    break
                k += 1
            else:
                return start
            i = k + 1
        return math.inf

    def reserve(self, start: float, procs: int, mem: float, duration: float) -> tuple[int, float]:
        """Hold ``procs``/``mem`` from ``start`` for ``duration`` for a reserved job.

        Releases at ``start`` that the job does not need are deferred by one
        representable instant (see the class docstring); returns what was deferred.
        """
        spare_p, spare_m = self.deferred(start, procs, mem)
        if spare_p or spare_m:
            later = math.nextafter(start, math.inf)
            self.take(start, spare_p, spare_m, later - start)
        self.take(start, procs, mem, duration)
        return spare_p, spare_m

    def _step_at(self, t: float) -> int:
        """Index of the profile step in force at ``t``."""
        return bisect.bisect_right(self.times, t) - 1

    def deferred(self, start: float, procs: int, mem: float) -> tuple[int, float]:
        """What :meth:`reserve` at ``start`` defers by one instant (the tie rule)."""
        rel = self.releases.get(start)
        if not rel:
            return 0, 0.0
        return unneeded_releases(rel, self.value_at(start), procs, mem)

    def value_at(self, t: float) -> tuple[int, float]:
        """Free processors and memory at ``t`` (the step in force then)."""
        i = self._step_at(t)
        return self.procs[i], self.mem[i]

    def take(self, start: float, procs: int, mem: float, duration: float) -> None:
        """Subtract a job's use over ``[start, start + duration)``."""
        if duration <= 0:
            return
        self.rising = False
        i = self._split(start)
        end = start + duration
        j = self._split(end) if math.isfinite(end) else len(self.times)
        for k in range(i, j):
            self.procs[k] -= procs
            self.mem[k] -= mem


def indexed(h: HostView) -> bool:
    """Whether the host's profile is built from the engine's sorted release arrays:
    it runs many jobs, all with a fixed predicted end (``ReleaseIndex.irregular`` empty)."""
    index = h.releases
    return (
        index is not None
        and len(index) >= ARRAY_PROFILE_MIN
        and not index.irregular
        and len(index) == len(h.running)
    )


def added_by_host(
    started: Sequence[Started], now: float
) -> dict[str, list[tuple[float, int, float]]]:
    """Jobs started earlier in the pass as releases ``(end, procs, mem)``, by host."""
    added: dict[str, list[tuple[float, int, float]]] = {}
    for host, end, p, m in started:
        added.setdefault(host, []).append((max(end, now), p, m))
    return added


def build_profile(
    h: HostView, now: float, added: Iterable[tuple[float, int, float]] = ()
) -> Profile:
    """The profile of ``h`` from its running jobs one by one, plus the releases ``added``."""
    added = list(added)
    releases: list[tuple[float, int, float]] = [
        (release_time(j, now), j.alloc_procs, j.alloc_mem) for j in running_jobs(h)
    ]
    releases.extend(added)
    return Profile(
        now,
        h.free_procs - sum(p for _, p, _m in added),
        h.free_mem - sum(m for _, _p, m in added),
        releases,
    )


#: A host's profile kept between passes: (host version, valid before, profile).
ProfileMemo = tuple[int, float, Profile]


def host_profiles(
    snap: Snapshot,
    started: Sequence[Started] = (),
    cache: dict[str, ProfileMemo] | None = None,
    *,
    use_index: bool = True,
) -> dict[str, Profile]:
    """Every host's availability profile, by name: running jobs plus ``started`` (jobs
    started earlier in this pass); each profile is the caller's to modify.

    A host running many jobs with fixed predicted ends is built from the
    engine's sorted release arrays (:func:`indexed`; same steps, unless
    ``use_index`` is false); otherwise from its
    running jobs one by one, and ``cache`` (one dict per run) then keeps each
    host's profile between passes, reused as a copy seen from now while the
    host's allocations (its ``version``) are unchanged and no running job's
    prediction has been raised since (:func:`raise_due`).
    """
    now = snap.now
    extra = added_by_host(started, now)
    profiles = {}
    for h in snap.hosts:
        added = extra.get(h.name)
        index = h.releases
        if use_index and index is not None and indexed(h):
            profiles[h.name] = Profile.from_release_index(
                now, h.free_procs, h.free_mem, index, added or []
            )
        elif added is None and cache is not None:
            entry = cache.get(h.name)
            if entry is None or entry[0] != h.version or now >= entry[1]:
                base = build_profile(h, now)
                cache[h.name] = (h.version, raise_due(running_jobs(h), now), base)
            else:
                base = entry[2]
            profiles[h.name] = base.seen_at(now)
        else:
            profiles[h.name] = build_profile(h, now, added or ())
    return profiles
