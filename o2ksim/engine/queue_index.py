"""The waiting queue as numpy columns, kept up to date by the engine.

A policy that scans a deep queue (backfill looking for a job that fits) would
otherwise loop over every waiting job in Python at every pass.  The engine
knows every job at the start of the run, so it numbers them once, in arrival
order (submission order, ties in the given order), and keeps one boolean per
job saying whether it is waiting now.  A queue change costs one store; a
policy gets the rows of the waiting jobs in queue order with one
``numpy.flatnonzero`` and their requests by fancy indexing.

``Snapshot.queue_index`` describes exactly ``Snapshot.queue``: a wrapper that
hands a policy a different queue must drop it (``queue_index=None``), and
policies must then fall back to looking at the jobs.

The index also keeps the smallest processor and memory request among the
waiting jobs (:meth:`QueueIndex.smallest_request`), so a policy can tell in
O(hosts) that no waiting job fits any host now and return from a pass that
could start nothing (``o2ksim.policies.backfill.nothing_fits``), and prune a
scan once no host has as many free processors as the smallest request.

And it keeps the smallest processor, memory and runtime requests among the
waiting jobs of each block of :data:`BLOCK` consecutive rows, per processor
bound, in a tree (:class:`~o2ksim.engine.block_minima.BlockMinima`), so a scan
for the first waiting job (in queue order) that passes a test which is
monotone in the request -- fits now, delays no reservation -- skips every
block and group of blocks whose minima fail it (:meth:`QueueIndex.first`): a
pass that backfills one job out of a million waiting ones tests a few nodes
per tree level and one block, not every waiting job nor every block.

A policy whose queue order is a fixed key of each job (shortest requested
runtime first, any priority that does not change with time) asks for a
second index over the same jobs in that order (:meth:`QueueIndex.ordered`),
which this one keeps up to date: the policy then walks its order lazily
(:meth:`QueueIndex.iter_rows`) and scans it by block minima, instead of
ranking the whole queue at every pass.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence

import numpy as np

from o2ksim.engine.block_minima import BlockMinima, RequestTest
from o2ksim.jobs import Job

BLOCK_SHIFT = 10
BLOCK = 1 << BLOCK_SHIFT  # rows per block of the block minima (:meth:`QueueIndex.first`)


class QueueIndex:
    """Per-run columns of every job's request, and which jobs wait now.

    ``procs``, ``mem`` (KB), ``req_time`` and ``submit`` are float arrays with
    one entry per job of the run (row = arrival order); ``jobs[row]`` is the
    job and ``row_of[job_id]`` its row.  :meth:`rows` gives the rows of the
    waiting jobs, in queue order.
    """

    __slots__ = (
        "_count", "_followers", "_hi", "_lo", "_mem_min", "_minima", "_n", "_procs_min", "_rows",
        "jobs", "mem", "procs", "queued", "req_time", "row_of", "submit",
    )  # fmt: skip

    def __init__(self, jobs: Sequence[Job]) -> None:
        n = len(jobs)
        self.jobs = list(jobs)
        self.row_of = {job.id: i for i, job in enumerate(jobs)}
        self.procs = np.fromiter((j.spec.procs for j in jobs), dtype=float, count=n)
        self.mem = np.fromiter((j.spec.mem for j in jobs), dtype=float, count=n)
        self.req_time = np.fromiter((j.spec.req_time for j in jobs), dtype=float, count=n)
        self.submit = np.fromiter((j.spec.submit for j in jobs), dtype=float, count=n)
        self.queued = np.zeros(n, dtype=bool)
        self._lo = 0  # no waiting job before this row
        self._hi = 0  # no waiting job at or after this row
        self._rows: np.ndarray | None = None
        self._n = 0  # waiting jobs
        self._procs_min = _RunningMin()
        self._mem_min = _RunningMin()
        n_blocks = (n + BLOCK - 1) >> BLOCK_SHIFT
        self._count = np.zeros(n_blocks, dtype=np.int64)  # waiting jobs per block
        self._minima = BlockMinima(self.procs, self.mem, self.req_time, self.queued, BLOCK_SHIFT)
        self._followers: list[QueueIndex] = []  # indexes of the same jobs in other orders

    def add(self, job: Job) -> None:
        """``job`` joined the queue (arrival or requeue)."""
        row = self.row_of[job.id]
        self.queued[row] = True
        self._n += 1
        spec = job.spec
        self._procs_min.add(spec.procs)
        self._mem_min.add(spec.mem)
        if row >= self._hi:
            self._hi = row + 1
        if row < self._lo:
            self._lo = row
        self._rows = None
        self._minima.changed(row)
        self._count[row >> BLOCK_SHIFT] += 1
        for other in self._followers:
            other.add(job)

    def remove(self, job: Job) -> None:
        """``job`` left the queue (started, killed or rejected)."""
        row = self.row_of[job.id]
        self.queued[row] = False
        self._n -= 1
        self._rows = None
        self._minima.changed(row)
        self._count[row >> BLOCK_SHIFT] -= 1
        spec = job.spec
        self._procs_min.remove(spec.procs)
        self._mem_min.remove(spec.mem)
        for other in self._followers:
            other.remove(job)

    def ordered(self, key: np.ndarray) -> QueueIndex:
        """An index of the same jobs with rows in ascending ``key`` order (one value
        per row of this index; ties in this index's order), kept up to date by
        this one from now on.

        A stable sort of the whole run's keys restricted to the waiting jobs is
        the stable sort of the waiting jobs' keys, so its :meth:`iter_rows` is
        the queue ranked by ``key`` at every moment.  O(n log n) once; then
        O(log n) more per queue change.
        """
        if len(key) != len(self.jobs):
            raise ValueError(f"{len(key)} keys for {len(self.jobs)} jobs")
        jobs = self.jobs
        other = QueueIndex([jobs[r] for r in np.argsort(key, kind="stable").tolist()])
        for r in self.rows().tolist():
            other.add(jobs[r])
        self._followers.append(other)
        return other

    def iter_rows(self) -> Iterator[int]:
        """The rows of the waiting jobs in queue order, a block at a time: a caller that
        stops after a few jobs reads the per-block counts and a few blocks, not every
        row.  Valid while the queue does not change."""
        lo, hi = self._lo, self._hi
        if lo >= hi:
            return
        shift, queued = BLOCK_SHIFT, self.queued
        b0 = lo >> shift
        for b in (np.flatnonzero(self._count[b0 : ((hi - 1) >> shift) + 1]) + b0).tolist():
            start = max(b << shift, lo)
            yield from (np.flatnonzero(queued[start : (b + 1) << shift]) + start).tolist()

    def next_waiting(self, start: int) -> int:
        """The first waiting row at or after ``start``; -1 when none.  O(1) when it is in
        ``start``'s block, else O(blocks) on the per-block counts."""
        hi = self._hi
        if start >= hi:
            return -1
        shift, queued = BLOCK_SHIFT, self.queued
        b = start >> shift
        end = min((b + 1) << shift, hi)
        i = int(queued[start:end].argmax())
        if queued[start + i]:
            return start + i
        later = np.flatnonzero(self._count[b + 1 : ((hi - 1) >> shift) + 1])
        if not len(later):
            return -1
        lo = (b + 1 + int(later[0])) << shift
        return lo + int(queued[lo : lo + (1 << shift)].argmax())

    def smallest_request(self) -> tuple[float, float]:
        """The fewest processors and the least memory (KB) any waiting job asks for.

        Two separate minima (possibly of two different jobs): a host with fewer
        free processors than the first or less free memory than the second can
        start no waiting job.  ``(inf, inf)`` when nobody waits.
        """
        return self._procs_min.value(), self._mem_min.value()

    def smallest_procs(self) -> float:
        """The fewest processors any waiting job asks for (``inf`` when nobody waits)."""
        return self._procs_min.value()

    def smallest_mem(self) -> float:
        """The least memory (KB) any waiting job asks for (``inf`` when nobody waits)."""
        return self._mem_min.value()

    def rows(self) -> np.ndarray:
        """Rows of the waiting jobs in queue order (read-only; valid until the queue changes)."""
        if self._rows is None:
            rows = np.flatnonzero(self.queued[self._lo : self._hi]) + self._lo
            self._lo = int(rows[0]) if len(rows) else self._hi
            rows.flags.writeable = False
            self._rows = rows
        return self._rows

    def __len__(self) -> int:
        return self._n

    def first(
        self, start: int, test: RequestTest, max_procs: float = math.inf, stop: int | None = None
    ) -> int:
        """The first waiting row at or after ``start`` (queue order) and before ``stop``
        (default: the end) whose request passes ``test``; -1 when none does.

        ``test`` must be monotone -- if it passes a request, it passes every
        request asking for no more processors, memory or runtime -- and fail
        every request for more than ``max_procs`` processors.  Then a block or
        group of blocks whose minima (over its waiting jobs asking at most
        ``max_procs``) fail it holds no passing job and is skipped
        (:class:`~o2ksim.engine.block_minima.BlockMinima`); the rows of a block
        whose minima pass are tested (vectorised), in order.
        """
        hi = self._hi if stop is None else min(self._hi, stop)
        if start >= hi:
            return -1
        return self._minima.first(start, hi, test, max_procs)

    def block_minima(self, level: int, lo: int, hi: int, max_procs: float = math.inf) -> np.ndarray:
        """The minima of nodes ``lo:hi`` of the tree's ``level`` (0: blocks)
        (:meth:`~o2ksim.engine.block_minima.BlockMinima.minima`)."""
        return self._minima.minima(level, lo, hi, max_procs)


class _RunningMin:
    """The minimum of a multiset of numbers under insertions and deletions.

    A count per distinct value and a heap of the values; a value whose count
    fell to zero is dropped from the heap only when it reaches the top
    (amortised O(log n) per change, O(1) per query when nothing changed).
    """

    __slots__ = ("_count", "_heap")

    def __init__(self) -> None:
        self._count: dict[float, int] = {}
        self._heap: list[float] = []

    def add(self, value: float) -> None:
        count = self._count.get(value, 0)
        if count == 0:
            heapq.heappush(self._heap, value)
        self._count[value] = count + 1

    def remove(self, value: float) -> None:
        count = self._count[value] - 1
        if count:
            self._count[value] = count
        else:
            del self._count[value]

    def value(self) -> float:
        heap, count = self._heap, self._count
        while heap and heap[0] not in count:
            heapq.heappop(heap)
        return heap[0] if heap else math.inf
