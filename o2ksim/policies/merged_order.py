"""The waiting jobs as a merge of fixed-order runs, and the backfill scan over it.

:class:`~o2ksim.policies.order_scan.InstantIndex` cuts a weighted priority's
jobs into *runs* whose order does not change with time (one submission instant
and base, ordered by slope; or one slope, ordered by ``a = base - slope *
submit``).  :class:`MergedOrder` hands the waiting jobs out highest score first
by merging the runs' heads on a heap, and :class:`MergedScan` finds the next
job in that order that passes a backfill test, from each run's block minima.
Both give exactly :meth:`~o2ksim.policies.priority.Priority.order`'s ranking:
the floats it computes, ties in submission order.

**Near ties.**  In a run by slope the exact order of two jobs is the order of
their ``a``, but their float scores err by a few ulps of the scores' size,
which grows with the wait: two jobs whose ``a`` are closer than that error
bound, ``tau``, may round to one score (then submission order) or even the
other way.  A run's neighbouring *classes* (jobs with one base and submission
time: the same float score at every pass, in row order) closer than ``tau``
are linked into a *segment*, whose jobs are ordered by their float scores at
the pass, as the full sort orders them; jobs of different segments are further
apart than ``tau``, so their floats keep the run's order.  ``tau`` is 0 for
runs by instant, whose distinct slopes are checked apart for the whole pass
(:meth:`~o2ksim.policies.order_scan.InstantIndex._distinct`), and a segment
is then one job.  Where scores lie far apart next to their rounding, segments
are one class; when ``tau`` outgrows a run's spacing they grow, and a pass
costs what ranking did.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterator
from dataclasses import dataclass

import numpy as np

from o2ksim.engine.block_minima import RequestTest
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.jobs import Job


@dataclass(frozen=True, eq=False)
class RunColumns:
    """The per-run arrays a merged order reads, by position in ``ranked`` (the jobs in
    run order): each job's ``base``, ``slope`` and row of the engine's ``index``; for
    runs by slope also ``gap``, how far the last ``a`` of a job's *class* (the jobs
    with its base and submission time: the same float score at every pass) lies above
    the next class's in the same run (``inf`` at a run's end), and ``class_end``, the
    last position of its class."""

    index: QueueIndex
    ranked: QueueIndex
    base: np.ndarray
    slope: np.ndarray
    row: np.ndarray
    gap: np.ndarray | None = None
    class_end: np.ndarray | None = None


class MergedOrder(Collection[Job]):
    """The waiting jobs of a few runs, merged by the current score.

    ``runs``: per run, its first job's wait and the positions ``[lo, hi)`` of its
    jobs in ``ranked`` (each run in its fixed order); ``procs``: per run, the fewest
    processors one of its jobs asks for; ``tau``: the near-tie bound of the pass
    (module docstring).  Iterating hands the jobs out lazily, highest score first,
    ties to the earlier submission; :meth:`scan_after` goes on from where it stopped.
    """

    __slots__ = ("cols", "cut", "handed", "n", "now", "procs", "runs", "submit", "tau")

    def __init__(
        self,
        cols: RunColumns,
        runs: list[tuple[float, int, int]],
        n: int,
        procs: list[float],
        now: float,
        tau: float = 0.0,
    ) -> None:
        self.cols = cols
        self.now = now
        self.submit = cols.ranked.submit  # by position
        self.runs = runs
        self.n = n
        self.procs = procs
        self.tau = tau
        # per run: every position before it was handed out (or does not wait); the
        # positions handed out at or after it (a segment handed out in part)
        self.cut = [lo for _, lo, _ in runs]
        self.handed: set[int] = set()

    def __len__(self) -> int:
        return self.n

    def __contains__(self, job: object) -> bool:
        index = self.cols.index
        row = index.row_of.get(job.id) if isinstance(job, Job) else None
        return row is not None and bool(index.queued[row])

    def key(self, pos: int) -> tuple[float, int]:
        """Sort key of position ``pos``: (-score, row), the floats of Priority.order."""
        cols = self.cols
        wait = self.now - float(self.submit[pos])
        return -(float(cols.base[pos]) + float(cols.slope[pos]) * wait), int(cols.row[pos])

    def segment_end(self, pos: int, hi: int) -> int:
        """The last position of the segment that starts at ``pos`` (``hi``: the run's end),
        or ``pos`` itself when the segment is one class (whose fixed order is right):
        ``pos``'s class and the classes after it linked by gaps of at most ``tau``."""
        gap, class_end = self.cols.gap, self.cols.class_end
        if not self.tau or gap is None or class_end is None:
            return pos
        end = int(class_end[pos])
        if end + 1 >= hi or gap[end] > self.tau:
            return pos
        while end + 1 < hi and gap[end] <= self.tau:
            end = int(class_end[end + 1])
        return end

    def segment(self, pos: int, hi: int) -> list[int]:
        """The waiting positions of the segment that starts at ``pos`` (a waiting one)."""
        end = self.segment_end(pos, hi)
        ranked = self.cols.ranked
        members = []
        while 0 <= pos <= end:
            members.append(pos)
            pos = ranked.next_waiting(pos + 1)
        return members

    def __iter__(self) -> Iterator[Job]:
        ranked = self.cols.ranked
        heap: list[tuple[tuple[float, int], int, int]] = []
        left = [0] * len(self.runs)  # per run: its entries on the heap (one segment's)
        ends = [0] * len(self.runs)  # per run: the end of that segment

        def push(i: int, pos: int) -> None:
            hi = self.runs[i][2]
            ends[i] = self.segment_end(pos, hi)
            members = self.segment(pos, hi)
            for p in members:
                heapq.heappush(heap, (self.key(p), i, p))
            left[i] = len(members)

        for i, (_, lo, hi) in enumerate(self.runs):
            pos = ranked.next_waiting(lo)
            if 0 <= pos < hi:
                push(i, pos)
        while heap:
            _, i, pos = heapq.heappop(heap)
            left[i] -= 1
            if left[i]:  # a segment handed out in part: the cut stays at its start
                self.handed.add(pos)
            else:
                self.cut[i] = ends[i] + 1
                nxt = ranked.next_waiting(self.cut[i])
                if 0 <= nxt < self.runs[i][2]:
                    push(i, nxt)
            yield ranked.jobs[pos]

    def scan_after(self, last: Job) -> MergedScan:
        """The backfill scan of the jobs not handed out yet (``last`` was the last one)."""
        return MergedScan(self)


class MergedScan:
    """The backfill scan over a :class:`MergedOrder`: per run, the first position that
    passes the test (the best of its segment); the job with the best key among them is
    the first in the order (every job before it in its run failed, and every job of
    another run before it comes before that run's first passing one)."""

    __slots__ = ("lo", "order", "taken")

    def __init__(self, order: MergedOrder) -> None:
        self.order = order
        self.lo = list(order.cut)  # per run: every position before it fails (or is taken)
        self.taken = set(order.handed)  # positions handed out or started: passed over

    def _bound(self, i: int, hi: int) -> tuple[float, int]:
        """No job of run ``i`` from ``lo[i]`` on has a better key than this: the best key
        of the segment at ``lo[i]`` (keys rise from one segment to the next)."""
        order = self.order
        lo = self.lo[i]
        end = order.segment_end(lo, hi)
        return order.key(lo) if end == lo else min(map(order.key, range(lo, end + 1)))

    def _first(self, i: int, test: RequestTest, max_procs: float) -> int:
        """Run ``i``'s first passing position in the order, not taken; -1 when none."""
        order = self.order
        ranked = order.cols.ranked
        hi = order.runs[i][2]
        pos = ranked.first(self.lo[i], test, max_procs, stop=hi)
        while pos >= 0 and pos in self.taken:
            pos = ranked.first(pos + 1, test, max_procs, stop=hi)
        self.lo[i] = hi if pos < 0 else pos  # every position before fails or is taken
        end = pos if pos < 0 else order.segment_end(pos, hi)
        if end == pos:
            return pos
        best, best_key = pos, order.key(pos)
        k = ranked.first(pos + 1, test, max_procs, stop=end + 1)
        while k >= 0:  # the segment's other passing jobs: the best float key first
            if k not in self.taken and order.key(k) < best_key:
                best, best_key = k, order.key(k)
            k = ranked.first(k + 1, test, max_procs, stop=end + 1)
        return best

    def first(self, test: RequestTest, max_procs: float) -> Job | None:
        """The first job in the merged order that passes ``test``.  A run whose every job
        asks for more than ``max_procs`` processors fails it whole.  The others are
        searched best bound first: once a run's bound is no better than the best job
        found, neither is any of its jobs, nor any of the runs after it (branch and
        bound: with many runs, most are never searched)."""
        order = self.order
        lo = self.lo
        procs = order.procs
        heads = sorted(
            (self._bound(i, hi), i)
            for i, (_, _, hi) in enumerate(order.runs)
            if lo[i] < hi and procs[i] <= max_procs  # else no job of the run passes
        )
        best: tuple[tuple[float, int], int] | None = None
        for bound, i in heads:
            if best is not None and bound >= best[0]:
                break
            pos = self._first(i, test, max_procs)
            if pos >= 0:
                key = order.key(pos)
                if best is None or key < best[0]:
                    best = (key, pos)
        return None if best is None else order.cols.ranked.jobs[best[1]]

    def skip(self, job: Job) -> None:
        """``job`` (the last :meth:`first`) started: pass over it from now on."""
        self.taken.add(self.order.cols.ranked.row_of[job.id])
