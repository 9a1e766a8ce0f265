"""A host's availability profile: its free processors and memory from *now* on (T§3.2.1).

The step function the backfill family (:mod:`o2ksim.policies.backfill`) places
reservations in and checks backfilled jobs against, built from the running
jobs' expected releases: :class:`Profile` in plain lists, and
:class:`ArrayProfile` (the same answers, from the engine's sorted release
arrays, with numpy) for hosts running many jobs.  ``backfill`` re-exports both.

This module always runs as plain Python, also in the optional compiled build
(setup.py): :class:`ArrayProfile` keeps numpy arrays where :class:`Profile`
keeps lists, which a compiled class's typed attributes would refuse.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from o2ksim.engine.releases import ReleaseIndex


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
    """

    __slots__ = ("mem", "procs", "releases", "times")

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
        self.times = times
        self.procs = procs
        self.mem = mem
        self.releases = at

    @classmethod
    def _of(
        cls,
        times: list[float],
        procs: list[int],
        mem: list[float],
        releases: dict[float, list[tuple[int, float]]],
    ) -> Profile:
        profile = cls.__new__(cls)
        profile.times, profile.procs, profile.mem, profile.releases = times, procs, mem, releases
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
        """The profile of a host from the engine's sorted releases (no Python loop over them).

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
        releases = _SortedReleases(now, at_now, later, p[k0:], m[k0:])
        profile = ArrayProfile.__new__(ArrayProfile)
        profile.times, profile.procs, profile.mem = times, procs, mem  # type: ignore[assignment]
        profile.releases = releases  # type: ignore[assignment]
        profile.rising = True
        return profile

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
        if not_before is None or not_before <= times[0]:
            i, floor = 0, times[0]
        else:
            i, floor = bisect.bisect_right(times, not_before) - 1, not_before
        while i < n:
            if self.procs[i] < procs or self.mem[i] < mem:
                i += 1
                continue
            start = times[i] if times[i] > floor else floor
            end = start + duration
            k = i + 1
            while k < n and times[k] < end:
                if self.procs[k] < procs or self.mem[k] < mem:
                    break
                k += 1
            else:
                return start
            i = k + 1
        return math.inf

    def reserve(self, start: float, procs: int, mem: float, duration: float) -> None:
        """Hold ``procs``/``mem`` from ``start`` for ``duration`` for a reserved job.

        Releases at ``start`` that the job does not need are deferred by one
        representable instant (see the class docstring).
        """
        spare_p, spare_m = self._unneeded_releases(start, procs, mem)
        if spare_p or spare_m:
            later = math.nextafter(start, math.inf)
            self.take(start, spare_p, spare_m, later - start)
        self.take(start, procs, mem, duration)

    def _step_at(self, t: float) -> int:
        """Index of the profile step in force at ``t``."""
        return bisect.bisect_right(self.times, t) - 1

    def _unneeded_releases(self, start: float, procs: int, mem: float) -> tuple[int, float]:
        rel = self.releases.get(start)
        if not rel:
            return 0, 0.0
        i = self._step_at(start)
        have_p = self.procs[i] - sum(p for p, _ in rel)
        have_m = self.mem[i] - sum(m for _, m in rel)
        spare_p, spare_m = 0, 0.0
        for p, m in rel:
            if have_p >= procs and have_m >= mem:
                spare_p += p
                spare_m += m
            else:
                have_p += p
                have_m += m
        return spare_p, spare_m

    def take(self, start: float, procs: int, mem: float, duration: float) -> None:
        """Subtract a job's use over ``[start, start + duration)``."""
        if duration <= 0:
            return
        i = self._split(start)
        end = start + duration
        j = self._split(end) if math.isfinite(end) else len(self.times)
        for k in range(i, j):
            self.procs[k] -= procs
            self.mem[k] -= mem


class ArrayProfile(Profile):
    """The same step function in numpy arrays, with the same operations done by numpy.

    Built by :meth:`Profile.from_release_index` for the fast path; every
    method gives exactly what :class:`Profile`'s does (the property test
    compares the two passes, which use one each).

    ``rising``: nothing has been taken from it yet, so its steps never
    decrease (running jobs only give resources back); :meth:`earliest` is then
    a binary search.
    """

    __slots__ = ("rising",)

    def _split(self, t: float) -> int:
        times = self.times
        i = int(times.searchsorted(t, side="right")) - 1  # type: ignore[attr-defined]
        if i >= 0 and times[i] == t:
            return i
        self.times = _inserted(times, i + 1, t)  # type: ignore[arg-type, assignment]
        self.procs = _inserted(self.procs, i + 1, self.procs[i])  # type: ignore[arg-type, assignment]
        self.mem = _inserted(self.mem, i + 1, self.mem[i])  # type: ignore[arg-type, assignment]
        return i + 1

    def fits(self, start: float, procs: int, mem: float, duration: float) -> bool:
        times = self.times
        i = max(0, int(times.searchsorted(start, side="right")) - 1)  # type: ignore[attr-defined]
        j = max(int(times.searchsorted(start + duration, side="left")), i + 1)  # type: ignore[attr-defined]
        return bool(
            self.procs[i:j].min() >= procs and self.mem[i:j].min() >= mem  # type: ignore[attr-defined]
        )

    def earliest(
        self, procs: int, mem: float, duration: float, not_before: float | None = None
    ) -> float:
        times: np.ndarray = self.times  # type: ignore[assignment]
        n = len(times)
        if not_before is None or not_before <= times[0]:
            i0, floor = 0, times[0]
        else:
            i0, floor = int(np.searchsorted(times, not_before, side="right")) - 1, not_before
        if self.rising:  # the first step with enough of both keeps enough for ever
            first = max(
                int(np.searchsorted(self.procs, procs, side="left")),
                int(np.searchsorted(self.mem, mem, side="left")),
                i0,
            )
            return math.inf if first >= n else max(float(times[first]), float(floor))
        bad = (np.asarray(self.procs) < procs) | (np.asarray(self.mem) < mem)
        bad_at = np.flatnonzero(bad)
        steps = np.arange(i0, n)
        following = np.searchsorted(bad_at, steps, side="right")  # first bad step after each
        next_bad = np.append(bad_at, n)[following]
        starts = times[i0:].copy()
        if starts[0] < floor:
            starts[0] = floor
        limit = np.append(times, math.inf)[next_bad]
        ok = ~bad[i0:] & (limit >= starts + duration)
        k = int(np.argmax(ok))
        return float(starts[k]) if ok[k] else math.inf

    def _step_at(self, t: float) -> int:
        return int(np.searchsorted(self.times, t, side="right")) - 1

    def take(self, start: float, procs: int, mem: float, duration: float) -> None:
        if duration <= 0:
            return
        self.rising = False
        i = self._split(start)
        end = start + duration
        j = self._split(end) if math.isfinite(end) else len(self.times)
        procs_at: Any = self.procs  # numpy arrays here (lists in the base class)
        mem_at: Any = self.mem
        procs_at[i:j] -= procs
        mem_at[i:j] -= mem


class _SortedReleases:
    """Same-time releases of an array-built profile, looked up by time (``dict.get``-like)."""

    __slots__ = ("at_now", "m", "now", "p", "t")

    def __init__(
        self,
        now: float,
        at_now: list[tuple[float, float]],
        t: np.ndarray,
        p: np.ndarray,
        m: np.ndarray,
    ) -> None:
        self.now, self.at_now, self.t, self.p, self.m = now, at_now, t, p, m

    def get(self, time: float, default: Any = None) -> Any:
        if time == self.now:
            return self.at_now or default
        lo = int(self.t.searchsorted(time, side="left"))
        hi = int(self.t.searchsorted(time, side="right"))
        if lo == hi:
            return default
        return list(zip(self.p[lo:hi].tolist(), self.m[lo:hi].tolist(), strict=True))


def with_added(
    now: float, free_procs: int, free_mem: float, index: ReleaseIndex, added: list[tuple[float, int, float]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float]:
    """A host's sorted releases and free resources with the jobs ``added`` in this pass
    counted as running."""
    t, p, m = index.arrays()
    if added:
        t, p, m = _insert_sorted(t, p, m, sorted((max(a, now), b, c) for a, b, c in added))
        free_procs -= sum(b for _a, b, _c in added)
        free_mem -= sum(c for _a, _b, c in added)
    return t, p, m, free_procs, free_mem


def _inserted(values: np.ndarray, i: int, value: float) -> np.ndarray:
    """``values`` with ``value`` inserted before position ``i`` (``np.insert``, minus its overhead)."""
    out = np.empty(len(values) + 1, dtype=values.dtype)
    out[:i] = values[:i]
    out[i] = value
    out[i + 1 :] = values[i:]
    return out


def _insert_sorted(
    t: np.ndarray, p: np.ndarray, m: np.ndarray, extra: list[tuple[float, int, float]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t, p, m)`` (sorted by time, procs, memory) with ``extra`` (sorted) merged in."""
    where = []
    for a, b, c in extra:
        lo = int(np.searchsorted(t, a, side="left"))
        hi = int(np.searchsorted(t, a, side="right"))
        while lo < hi and (p[lo], m[lo]) < (b, c):
            lo += 1
        where.append(lo)
    return (
        np.insert(t, where, [a for a, _b, _c in extra]),
        np.insert(p, where, [b for _a, b, _c in extra]),
        np.insert(m, where, [c for _a, _b, c in extra]),
    )
