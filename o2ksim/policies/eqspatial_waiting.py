"""EQspatial's jobs waiting for a host, in the order they are offered one, and the search for
the first that some host can take (T§3.2.3's placement, issue 27 D29).

At every pass after a departure, EQspatial offers the waiting jobs a host in submission
order (ties by id), each against the hosts' loads as the jobs before it left them
(:func:`~o2ksim.policies.equipartition.choose_host`).  Walking every waiting job at every
such pass costs O(q) a pass (and sorting them O(q log q)): a flood of n jobs on one host
cost about n^2.  :class:`WaitingOrder` numbers the run's jobs once in that order and keeps
a flag per job, with the block minima of the engine's backfill scan
(:class:`~o2ksim.engine.block_minima.BlockMinima`) over the processors ``p`` and the
memory ``m``.  ``choose_host`` takes a job on host ``h`` iff ``m <= h.free_mem``,
``p <= h.capacity`` and ``h.jobs < h.capacity`` (the ratio only ranks the hosts that
pass), a test each of whose terms only passes more for smaller ``p`` and ``m``: a block
or node whose minima fail it for every host holds no job any host can take
(:meth:`WaitingOrder.first`).  On one host without memory the minima pass iff some job
does, so a pass visits only the jobs it places and the ones it verifies: O(log q) tests
a search.  With several hosts or memory the
minima may come from different jobs (a descent that finds nothing: sound, slower).
Every job the search returns is still offered through ``choose_host``: the search only
skips.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from o2ksim.engine.block_minima import BlockMinima, RequestTest
from o2ksim.engine.queue_index import BLOCK_SHIFT
from o2ksim.jobs import Job
from o2ksim.policies.equipartition import HostLoad


def offer_order(job: Job) -> tuple[float, int]:
    """The order in which jobs are offered a host: submission, ties by id."""
    return (job.spec.submit, job.id)


def placeable(loads: Sequence[HostLoad]) -> tuple[RequestTest, float] | None:
    """The test of ``(p, m, _)`` arrays that passes every job some host of ``loads`` can
    take (module docstring; the third column, the backfill scan's runtime, is not read),
    and the largest request it can pass; ``None``: no host has room for another job."""
    room = [h for h in loads if h.jobs < h.capacity]
    if not room:
        return None
    caps = np.array([h.capacity for h in room], dtype=float)
    mems = np.array([h.free_mem for h in room], dtype=float)

    def test(p: np.ndarray, m: np.ndarray, _unread: np.ndarray) -> np.ndarray:
        ok = (p[:, None] <= caps) & (m[:, None] <= mems)
        return np.asarray(ok.any(axis=1))

    return test, float(caps.max())


class WaitingOrder:
    """Jobs waiting for a host, by :func:`offer_order`, and :meth:`first`'s search.

    Invariant: ``jobs[row]`` are every job the index knows, in :func:`offer_order`, and
    ``waiting[row]`` is set exactly for the ones added and not removed.  ``add`` and
    ``remove`` cost O(1) (a block is marked; its minima are recomputed before the next
    search, O(block + levels x fan x bounds) numpy work); a search costs O(log q) tests
    when the minima are exact (module docstring).  Built once over every job of the run
    (the engine's :class:`~o2ksim.engine.queue_index.QueueIndex` numbers them all); a job
    it does not know (a snapshot without the engine's index) rebuilds it, O(n log n).
    """

    __slots__ = ("_minima", "jobs", "row_of", "waiting")

    def __init__(self, jobs: Iterable[Job]) -> None:
        self.jobs = sorted(jobs, key=offer_order)
        self.row_of = {job.id: row for row, job in enumerate(self.jobs)}
        n = len(self.jobs)
        procs = np.fromiter((j.spec.procs for j in self.jobs), dtype=float, count=n)
        mem = np.fromiter((j.spec.mem for j in self.jobs), dtype=float, count=n)
        self.waiting = np.zeros(n, dtype=bool)
        no_runtime = np.zeros(n)  # placement reads no runtime: the third column is unused
        self._minima = BlockMinima(procs, mem, no_runtime, self.waiting, BLOCK_SHIFT)

    def knows(self, jobs: Iterable[Job]) -> bool:
        return all(job.id in self.row_of for job in jobs)

    def rebuilt(self, more: Iterable[Job]) -> WaitingOrder:
        """The same index with ``more`` jobs known too (their flags clear)."""
        known = {job.id: job for job in self.jobs}
        known.update((job.id, job) for job in more)
        out = WaitingOrder(known.values())
        for row in np.flatnonzero(self.waiting).tolist():
            out.add(self.jobs[row])
        return out

    def add(self, job: Job) -> None:
        row = self.row_of[job.id]
        self.waiting[row] = True
        self._minima.changed(row)

    def remove(self, job: Job) -> None:
        row = self.row_of[job.id]
        self.waiting[row] = False
        self._minima.changed(row)

    def first(self, start: int, loads: Sequence[HostLoad]) -> int:
        """The first waiting row at or after ``start`` that passes :func:`placeable` for
        ``loads`` (read now); -1 when none does."""
        n = len(self.jobs)
        if start >= n:
            return -1
        found = placeable(loads)
        if found is None:
            return -1
        test, most = found
        return self._minima.first(start, n, test, most)
