"""Queue orders kept as indexes, and the backfill scan over them (same-instant floods).

Ranking the whole queue at every pass costs O(q log q); a flood of ``n`` jobs
submitted at once then costs O(n^2 log n).  Two kinds of order avoid it, each
giving exactly the ranking of :meth:`~o2ksim.policies.priority.Priority.order`
(score descending, ties in submission order):

* **Static scores** (:class:`IndexedOrder`): a priority whose score is a fixed
  number per job (SJF: the requested runtime) ranks the queue in the order of
  a stable sort of every job of the run, restricted to the waiting ones; a
  second :class:`~o2ksim.engine.queue_index.QueueIndex` with its rows in that
  order (:meth:`~o2ksim.engine.queue_index.QueueIndex.ordered`) is the ranking
  at every moment.
* **Few runs** (:class:`InstantIndex`): a weighted priority (LXF, LXF&W,
  Priority-backfill's ``Jw + 5 Jx + 0.2 Jp``, NCSA-MS*'s ``240 Jw + 1500 Jx +
  100 Jpe``; any signs) scores a job ``base + slope * wait`` with ``slope = Ww /
  3600 + Wx / R`` and ``base`` the terms that do not grow (``Wx`` and the
  weights on ``p``, ``m``, ``pe``).  Two kinds of *run* keep a fixed order:

  - jobs submitted at one instant with one ``base`` share the wait, so their
    score is a monotone function of the slope (the wait is never negative):
    largest slope first (*runs by instant*);
  - jobs with one slope (one requested runtime) score ``a + slope * now`` with
    ``a = base - slope * submit``, whenever they were submitted: largest ``a``
    first (*runs by slope*), one run however many instants it spans.

  Ties go in submission order.  Runs by instant need distinct slopes to give
  distinct scores at the pass's waits (checked: :meth:`InstantIndex._distinct`;
  when it fails, at wait 0 for one, the pass ranks the queue as before); in
  runs by slope, neighbours whose ``a`` are too close for the floats to keep
  them apart are ordered by their float scores at the pass
  (:mod:`~o2ksim.policies.merged_order`: near ties).  The kind is the one that gives fewer runs over
  the simulation's jobs: a flood at one instant asking one of a few processor
  counts is cut by instant; a burst over many instants, or a flood asking
  memory (a different amount each, under weights on ``m`` or ``pe``), with
  one of a few round runtimes, by slope.  The queue is then the merge, by the
  current score, of its fixed-order runs (:class:`MergedOrder`), when there
  are at most :data:`MAX_RUNS` of them.

The backfill scan (:class:`RowScan`, :class:`MergedScan`) finds the next job
in the order that passes a monotone test from block minima, as FCFS does.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator

import numpy as np

from o2ksim.engine.block_minima import RequestTest
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.jobs import Job
from o2ksim.policies.merged_order import MergedOrder, MergedScan, RunColumns

MAX_RUNS = 128  # runs (by instant and base, or by slope) among the waiting jobs for a merged order
#: Runs by slope are merged from this many waiting jobs on: their heads interleave, so a
#: pass searches many runs, and below it ranking costs less (a burst of 10^4 jobs:
#: 4.6 s ranked against 6.2 s merged; of 3 x 10^4: 31.2 against 16.8 s).
SLOPE_MERGE_MIN = 8192


class IndexedOrder(Collection[Job]):
    """The waiting jobs in a fixed order (a static priority), read lazily from a
    :class:`QueueIndex` whose rows are in that order: a pass that stops after a
    few jobs looks at a few, and the backfill scan skips blocks on their minima."""

    __slots__ = ("index",)

    def __init__(self, index: QueueIndex) -> None:
        self.index = index

    def __len__(self) -> int:
        return len(self.index)

    def __iter__(self) -> Iterator[Job]:
        return map(self.index.jobs.__getitem__, self.index.iter_rows())

    def __contains__(self, job: object) -> bool:
        row = self.index.row_of.get(job.id) if isinstance(job, Job) else None
        return row is not None and bool(self.index.queued[row])

    def scan_after(self, last: Job) -> RowScan:
        """The backfill scan of the jobs after ``last`` (the last one handed out)."""
        return RowScan(self.index, self.index.row_of[last.id] + 1)


class RowScan:
    """The waiting rows of one index from ``start`` on, in row order, for a scan that
    starts the first job passing a test again and again as resources shrink."""

    __slots__ = ("index", "start")

    def __init__(self, index: QueueIndex, start: int) -> None:
        self.index = index
        self.start = start

    def first(self, test: RequestTest, max_procs: float) -> Job | None:
        """The first job from here on that passes ``test`` (monotone; every job before it
        fails it, and will fail any later test, which is stricter)."""
        row = self.index.first(self.start, test, max_procs)
        if row < 0:
            return None
        self.start = row
        return self.index.jobs[row]

    def skip(self, job: Job) -> None:
        """``job`` (the last :meth:`first`) started: scan on after it."""
        self.start = self.index.row_of[job.id] + 1


class InstantIndex:
    """Per simulation run: every job's base and slope, and an index of the jobs in runs of
    a fixed order (see the module docstring): by instant (``by_base``: one submission
    time and base, slope descending) or by slope (one slope, ``base - slope * submit``
    descending); ties in submission order."""

    __slots__ = (
        "a_size", "base", "base_size", "by_base", "cols", "index", "ranked", "row", "run_end",
        "run_procs", "slope", "slope_gap", "too_many", "top",
    )  # fmt: skip

    def __init__(self, index: QueueIndex, base: np.ndarray, slope: np.ndarray) -> None:
        self.index = index
        n = len(index.jobs)
        submit = index.submit
        rows = np.arange(n)
        self.by_base = _runs(submit, base) <= len(np.unique(slope))
        gap: np.ndarray | None = None
        class_end: np.ndarray | None = None
        if self.by_base:
            order = np.lexsort((rows, -slope, base, submit))
            s, b = submit[order], base[order]
            new = np.flatnonzero((s[1:] != s[:-1]) | (b[1:] != b[:-1])) + 1
        else:  # a class (one base and submission time) together, by a within a run
            a = base - slope * submit  # the score at now is a + slope * now
            order = np.lexsort((rows, submit, base, -a, slope))
            new = np.flatnonzero(np.diff(slope[order])) + 1
            gap, class_end = _classes(a[order], base[order], submit[order], slope[order])
        slopes = np.unique(slope)
        # runs by instant: the least difference of two slopes, which order a run (_distinct)
        self.slope_gap = float(np.diff(slopes).min()) if len(slopes) > 1 else math.inf
        # runs by slope: the size of a = base - slope * submit, for its rounding (_near)
        self.a_size = float(np.abs(base).max() + np.abs(slope * submit).max()) if n else 0.0
        key = np.empty(n)
        key[order] = rows
        self.ranked = index.ordered(key)  # its rows: positions in ``order``
        self.row = order  # position -> the engine index's row
        self.slope = slope[order]  # by position
        self.base = base[order]  # by position
        self.run_end = np.append(new, n)  # the end of each run, rising
        starts = np.append(0, new)
        # the fewest processors any job of each run asks for: a run asking more than the
        # scan's test admits holds no passing job (MergedScan.first skips it unsearched)
        self.run_procs = np.minimum.reduceat(index.procs[order], starts) if n else starts
        self.cols = RunColumns(index, self.ranked, self.base, self.slope, order, gap, class_end)
        self.top = float(np.abs(slope).max()) if n else 0.0  # |slope| and |base| (_distinct)
        self.base_size = float(np.abs(base).max()) if n else 0.0
        self.too_many = 0  # the queue length when the runs last exceeded MAX_RUNS (0: never)

    @staticmethod
    def usable(index: QueueIndex, slope: np.ndarray) -> bool:
        """Finite slopes and rows in submission order (else: rank as before)."""
        s = index.submit
        return bool(np.isfinite(slope).all() and (s[1:] >= s[:-1]).all())

    def order(self, now: float, n: int) -> MergedOrder | None:
        """The ``n`` waiting jobs ranked at ``now`` as a merge of fixed-order runs, or
        ``None`` (rank them) when there are more than :data:`MAX_RUNS` runs, when runs by
        instant have two slopes that round to one score at a run's wait, or when runs by
        slope have fewer than :data:`SLOPE_MERGE_MIN` waiting jobs.  After too many runs,
        counting them again (a walk over :data:`MAX_RUNS` runs, every pass of a long
        queue submitted over time) waits until the queue has halved."""
        if (self.too_many and 2 * n > self.too_many) or (not self.by_base and n < SLOPE_MERGE_MIN):
            return None
        self.too_many = 0
        ranked = self.ranked
        submit = ranked.submit
        run_end = self.run_end
        runs: list[tuple[float, int, int]] = []
        procs: list[float] = []
        pos = ranked.next_waiting(0)
        while pos >= 0:
            if len(runs) == MAX_RUNS:
                self.too_many = n
                return None
            k = int(run_end.searchsorted(pos, side="right"))
            end = int(run_end[k])
            runs.append((now - float(submit[pos]), pos, end))
            procs.append(float(self.run_procs[k]))
            pos = ranked.next_waiting(end)
        if not runs:
            return MergedOrder(self.cols, runs, n, procs, now)
        if self.by_base:
            if math.isfinite(self.slope_gap) and not self._distinct(runs):
                return None
            return MergedOrder(self.cols, runs, n, procs, now)
        return MergedOrder(self.cols, runs, n, procs, now, self._near(now))

    def _distinct(self, runs: list[tuple[float, int, int]]) -> bool:
        """Runs by instant: whether distinct slopes give distinct float scores, in their
        order, at every run's wait (so each run's fixed order is the order of its scores).

        Scores are ``fl(base + fl(slope * wait))`` with one float ``wait`` per run, at
        most ``M = max|base| + max|slope| * max(wait)`` in size, so each errs by at most
        an ulp of ``M`` (the product and the sum); two slopes at least ``slope_gap`` apart
        give exact products at least ``slope_gap * wait`` apart, so more than ``4 ulp(M)``
        keeps them apart in the slopes' order.  Tested at the least wait (at wait 0
        every score is the base: the queue is ranked instead).
        """
        waits = [wait for wait, _, _ in runs]
        size = self.base_size + self.top * max(waits)
        return self.slope_gap * min(waits) > 4 * math.ulp(size)

    def _near(self, now: float) -> float:
        """Runs by slope: how close two classes' ``a`` may be and still round out of order,
        at ``now`` (``tau`` of :mod:`~o2ksim.policies.merged_order`).

        The exact scores of two jobs of a run differ by the exact difference of their
        ``a = base - slope * submit``, which is the float difference less at most two
        ulps of ``A = max|base| + max|slope * submit|`` (each ``a`` rounded twice).
        Scores are ``fl(base + fl(slope * fl(now - submit)))``, at most ``M = max|base|
        + max|slope| * W`` in size (``W`` the longest wait), each within less than ``4
        ulp(M)`` of its exact value (three roundings, relative error below ``3.01 u``):
        a float difference of ``a`` above ``2 ulp(A) + 8 ulp(M)`` keeps the order.
        """
        oldest = self.index.next_waiting(0)  # the engine's rows are in submission order
        size = self.base_size + self.top * (now - float(self.index.submit[oldest]))
        return 2 * math.ulp(self.a_size) + 8 * math.ulp(size)


def _classes(
    a: np.ndarray, base: np.ndarray, submit: np.ndarray, slope: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For jobs in run order (runs by slope): each position's ``gap``, how far ``a`` at the
    last position of a class (one base and submission time) lies above the next class's
    in the same run (``inf`` elsewhere), and ``class_end``, its class's last position
    (:class:`~o2ksim.policies.merged_order.RunColumns`)."""
    n = len(a)
    one_run = slope[1:] == slope[:-1]
    same = (base[1:] == base[:-1]) & (submit[1:] == submit[:-1]) & one_run
    starts = np.flatnonzero(np.append(True, ~same))  # each class's first position
    class_end = np.repeat(np.append(starts[1:], n) - 1, np.diff(np.append(starts, n)))
    gap = np.full(n, math.inf)
    inner = np.flatnonzero(~same & one_run)
    gap[inner] = a[inner] - a[inner + 1]
    return gap, class_end


def _runs(submit: np.ndarray, values: np.ndarray) -> int:
    """How many runs of one submission time and one value the jobs fall into."""
    if len(values) == 0:
        return 0
    order = np.lexsort((values, submit))
    s, v = submit[order], values[order]
    return 1 + int(np.count_nonzero((s[1:] != s[:-1]) | (v[1:] != v[:-1])))


class HeldFirst(Collection[Job]):
    """Fixed-job reservations' order (T§3.2.1): the held jobs first, in the order they were
    granted, then the rest of a kept order (:class:`IndexedOrder`, :class:`MergedOrder`)
    without them, handed out lazily like it.

    A pass hands out every held job before any other (each is started or reserved
    again, and there are at most ``N`` of them), so the backfill scan after it is
    the kept order's own scan that passes over the held jobs
    (:class:`SkippingScan`): a pass costs what the kept order's does, where the
    list of the whole ranking with the held jobs moved to the front cost O(q).
    """

    __slots__ = ("handed", "held", "held_set", "last_rest", "rest")

    def __init__(self, held: list[Job], rest: IndexedOrder | MergedOrder) -> None:
        self.held = held
        self.held_set = set(held)
        self.rest = rest
        self.handed = 0  # held jobs handed out so far
        self.last_rest: Job | None = None  # the last job of ``rest`` handed out

    def __len__(self) -> int:
        return len(self.rest)  # the held jobs wait: they are among the rest's jobs

    def __contains__(self, job: object) -> bool:
        return job in self.rest

    def __iter__(self) -> Iterator[Job]:
        for job in self.held:
            self.handed += 1
            yield job
        held = self.held_set
        for job in self.rest:
            if job not in held:
                self.last_rest = job
                yield job

    def scan_after(self, last: Job) -> SkippingScan | None:
        """The backfill scan of the jobs not handed out yet; ``None`` while some held job
        has not been handed out (then the rest is read job by job, in this order)."""
        if self.handed < len(self.held):
            return None
        rest = self.rest
        if self.last_rest is not None:
            scan: RowScan | MergedScan = rest.scan_after(self.last_rest)
        elif isinstance(rest, IndexedOrder):
            scan = RowScan(rest.index, 0)
        else:
            scan = rest.scan_after(last)  # its cut: nothing of it handed out yet
        return SkippingScan(scan, self.held_set)


class SkippingScan:
    """A :class:`RowScan` or :class:`MergedScan` that passes over some jobs (the held ones,
    handed out before it): the first job that passes the test and is not one of them."""

    __slots__ = ("scan", "skipped")

    def __init__(self, scan: RowScan | MergedScan, skipped: set[Job]) -> None:
        self.scan = scan
        self.skipped = skipped

    def first(self, test: RequestTest, max_procs: float) -> Job | None:
        job = self.scan.first(test, max_procs)
        while job is not None and job in self.skipped:
            self.scan.skip(job)  # every job before it failed the test: go on after it
            job = self.scan.first(test, max_procs)
        return job

    def skip(self, job: Job) -> None:
        self.scan.skip(job)

