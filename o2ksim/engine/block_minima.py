"""The smallest requests among the waiting jobs of each block of rows, by processor
bound, in a tree: the search behind :meth:`QueueIndex.first
<o2ksim.engine.queue_index.QueueIndex.first>` (the backfill scan of a deep queue).

The question a backfill pass asks again and again: the first waiting row at
or after ``start`` whose request passes a test that is monotone in the request
(fits the free processors now, delays no reservation).  A test that fails
the smallest processor, memory and runtime requests of a set of jobs fails
each of them, so a set whose minima fail can be skipped.  The minima are
taken among the jobs asking at most ``max_procs`` processors (the test
fails every larger request anyway), which makes the skip exact for the
commonest test: on one host without memory limits a job passes iff it asks
at most the free processors and either at most the processors left beside
the reservation or a runtime that ends before it, and the minima over the
jobs asking at most the free processors pass iff one of them does.

* **Bounds.**  The processor bounds are the distinct processor requests of
  the run, then ``inf``; a query for ``max_procs`` reads the minima under the
  greatest bound at or below it: exactly the jobs asking at most
  ``max_procs``.  A run with more than :data:`MAX_BOUNDS` distinct requests
  keeps that many of them (evenly spread, always the largest), and a query
  reads the least bound at or above ``max_procs``: a superset, still a sound
  skip.
* **Leaves.**  Rows are cut into blocks of ``2**shift``; each block keeps its
  rows sorted by processors, so after a change the running minima of
  processors, memory and runtime over its waiting rows along that order give
  the minima under every bound at one binary search each (O(BLOCK)).
* **Tree.**  Blocks are grouped ``2**FAN_SHIFT`` at a time, groups again, up to
  one level of at most that many nodes; a node keeps, per bound, the minima of
  its children.  A queue change updates one block and one node per level:
  O(BLOCK + levels x fan x bounds) numpy work, done lazily before the next
  search.  A search tests the blocks from ``start``'s to the end of its
  grandparent node (at most fan**2 blocks, in one vectorised call: a call of
  the test costs more than that much numpy work), then climbs, testing at
  each level the nodes to the right of the path, and goes down into a
  passing node's children, leftmost first, to a block whose rows are tested:
  O(levels) test calls when the minima are exact, plus one descent per node
  whose minima pass while none of its rows does.

``fmin`` keeps a NaN request out of every minimum (it fails every test and
must not hide a passing job).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

FAN_SHIFT = 4  # children per tree node: 16
MAX_BOUNDS = 128  # processor bounds kept per node (the distinct requests, or that many)

#: A test of many requests at once: (procs, mem, req_time) arrays -> boolean array.
RequestTest = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


class BlockMinima:
    """Minima of the waiting rows' requests per block and bound, and the tree over them.

    ``procs``, ``mem`` and ``req`` are the run's request columns (one row per
    job), ``queued`` the engine's waiting flags (read, never written), and
    ``shift`` the log2 of the rows per block.  Call :meth:`changed` for every
    row that joins or leaves the queue.
    """

    __slots__ = (
        "_bound_keys", "_bounds", "_dirty", "_every", "_fan", "_keys", "_order", "_shift",
        "_sorted", "_tree", "cols", "queued",
    )  # fmt: skip

    def __init__(
        self, procs: np.ndarray, mem: np.ndarray, req: np.ndarray, queued: np.ndarray, shift: int
    ) -> None:
        n = len(procs)
        self.cols = (procs, mem, req)
        self.queued = queued
        self._shift = shift
        self._fan = FAN_SHIFT
        finite = np.isfinite(procs)
        distinct = np.unique(procs[finite])
        self._every = len(distinct) <= MAX_BOUNDS  # every distinct request is a bound
        if not self._every:
            distinct = distinct[np.linspace(0, len(distinct) - 1, MAX_BOUNDS).round().astype(int)]
        self._bounds = np.append(distinct, np.inf)
        # within a block, rows by processors (NaN and inf last: the bound inf alone holds them)
        rank = np.where(finite, np.searchsorted(distinct, procs, side="left"), len(distinct))
        block = np.arange(n) >> shift
        self._order = np.lexsort((rank, block))
        self._keys = rank[self._order]  # within each block, ascending
        # the last position under each bound: rank <= k for bound k (the inf bound: all)
        self._bound_keys = np.arange(len(self._bounds))
        self._sorted = np.stack(self.cols)[:, self._order]
        n_nodes = (n + (1 << shift) - 1) >> shift
        self._tree = [np.full((3, len(self._bounds), n_nodes), np.inf)]  # level 0: blocks
        while n_nodes > 1 << self._fan:
            n_nodes = (n_nodes + (1 << self._fan) - 1) >> self._fan
            self._tree.append(np.full((3, len(self._bounds), n_nodes), np.inf))
        self._dirty: set[int] = set()  # blocks whose minima are out of date

    def changed(self, row: int) -> None:
        """``row`` joined or left the queue."""
        self._dirty.add(row >> self._shift)

    def bound_of(self, max_procs: float) -> int:
        """The bound whose minima answer for ``max_procs`` (module docstring); -1: no
        job asks at most ``max_procs``."""
        k = int(self._bounds.searchsorted(max_procs, side="right")) - 1
        if not self._every and k < len(self._bounds) - 2 and self._bounds[k] != max_procs:
            k += 1  # the bounds skip some requests below the largest: the least one above
        return k

    def minima(self, level: int, lo: int, hi: int, max_procs: float) -> np.ndarray:
        """Nodes ``lo:hi`` of ``level`` (0: blocks): the smallest processor, memory and
        runtime requests (rows 0, 1, 2) among their waiting rows asking at most
        ``max_procs`` (with fewer bounds than requests, a superset: :meth:`bound_of`;
        ``inf``: none)."""
        self._refresh()
        k = self.bound_of(max_procs)
        if k < 0:
            return np.full((3, max(hi - lo, 0)), np.inf)
        return self._tree[level][:, k, lo:hi]

    def first(self, start: int, hi: int, test: RequestTest, max_procs: float) -> int:
        """The first waiting row in ``[start, hi)`` whose request passes ``test``; -1 when
        none does (``test``: monotone, failing every request over ``max_procs``)."""
        k = self.bound_of(max_procs)
        if k < 0:
            return -1  # every waiting job asks for more than max_procs: the test fails them
        self._refresh()
        shift, fan = self._shift, self._fan
        lo, end = start >> shift, ((hi - 1) >> shift) + 1  # nodes of this level to look at
        top = len(self._tree) - 1
        # the blocks up to the end of start's grandparent node first, in one test (a
        # test call costs more than its numpy work on up to fan**2 blocks), then from
        # the grandparent level up: the right siblings of the path from start's block
        level, step = 0, 2
        while True:
            if level + step > top:  # the rest of this level: at most fan**step nodes, all at once
                return self._descend(level, lo, end, k, test, start, hi)
            cut = fan * step
            row = self._descend(level, lo, min(((lo >> cut) + 1) << cut, end), k, test, start, hi)
            if row >= 0:
                return row
            lo, end = (lo >> cut) + 1, ((end - 1) >> cut) + 1
            if lo >= end:
                return -1
            level, step = level + step, 1

    def _descend(
        self, level: int, lo: int, stop: int, k: int, test: RequestTest, start: int, hi: int
    ) -> int:
        """The first passing row under nodes ``lo:stop`` of ``level`` (-1: none)."""
        mins = self._tree[level][:, k, lo:stop]
        fan = self._fan
        for node in (np.flatnonzero(test(mins[0], mins[1], mins[2])) + lo).tolist():
            if level:
                last = ((hi - 1) >> (self._shift + fan * (level - 1))) + 1  # children before hi
                row = self._descend(
                    level - 1, node << fan, min((node + 1) << fan, last), k, test, start, hi
                )
            else:
                row = self._rows(node, test, start, hi)
            if row >= 0:
                return row
        return -1

    def _rows(self, block: int, test: RequestTest, start: int, hi: int) -> int:
        """The first waiting row of ``block`` in ``[start, hi)`` that passes ``test``."""
        lo, end = max(block << self._shift, start), min((block + 1) << self._shift, hi)
        procs, mem, req = self.cols
        ok = test(procs[lo:end], mem[lo:end], req[lo:end])
        ok &= self.queued[lo:end]
        i = int(ok.argmax())
        return lo + i if ok[i] else -1

    def _refresh(self) -> None:
        """Recompute the minima of the changed blocks, then of their ancestors."""
        if not self._dirty:
            return
        shift, n = self._shift, len(self._keys)
        leaves = self._tree[0]
        for b in self._dirty:
            lo, hi = b << shift, min((b + 1) << shift, n)
            at = np.flatnonzero(self.queued[self._order[lo:hi]]) + lo  # waiting, by processors
            if not len(at):
                leaves[:, :, b] = np.inf
                continue
            prefix = np.fmin.accumulate(self._sorted[:, at], axis=1)  # running minima
            last = self._keys[at].searchsorted(self._bound_keys, side="right") - 1
            leaves[:, :, b] = np.where(last >= 0, prefix[:, np.maximum(last, 0)], np.inf)
        nodes = self._dirty
        fan = self._fan
        for level in range(1, len(self._tree)):
            nodes = {b >> fan for b in nodes}
            below, here = self._tree[level - 1], self._tree[level]
            for j in nodes:
                here[:, :, j] = np.fmin.reduce(below[:, :, j << fan : (j + 1) << fan], axis=2)
        self._dirty = set()
