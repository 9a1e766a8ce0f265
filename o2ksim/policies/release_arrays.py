"""A host's releases as the engine's sorted arrays, for the profile of a host running
many jobs (:meth:`o2ksim.policies.profile.Profile.from_release_index`) and the
single-reservation fast path of the backfill pass: no Python loop over the running jobs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from o2ksim.engine.releases import ReleaseIndex


class SortedReleases:
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
    now: float,
    free_procs: int,
    free_mem: float,
    index: ReleaseIndex,
    added: list[tuple[float, int, float]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float]:
    """A host's sorted releases and free resources with the jobs ``added`` in this pass
    counted as running."""
    t, p, m = index.arrays()
    if added:
        t, p, m = _insert_sorted(t, p, m, sorted((max(a, now), b, c) for a, b, c in added))
        free_procs -= sum(b for _a, b, _c in added)
        free_mem -= sum(c for _a, _b, c in added)
    return t, p, m, free_procs, free_mem


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


__all__ = ["SortedReleases", "with_added"]
