"""The waiting queue as a priority function sees it, and the queue in priority order.

:class:`QueueView` hands a priority function the waiting jobs as numpy arrays
(T Table 13's measures derived on first use); :class:`RankedQueue` is a ranked
queue held as :class:`~o2ksim.engine.queue_index.QueueIndex` rows, and
:class:`IndexedOrder` the queue of a static priority read from an index whose
rows are in its order (:meth:`~o2ksim.policies.priority.Priority.order`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from o2ksim.jobs import Job

if TYPE_CHECKING:
    pass

MB_PER_MEMORY_UNIT = 358.4  # Jm = requested MB / 358.4 (T Table 13)
KB_PER_MEMORY_UNIT = MB_PER_MEMORY_UNIT * 1024.0  # JobSpec.mem is KB
MIN_REQUESTED_SECONDS = 1.0  # Jx floor: a zero requested runtime counts as one second


class QueueView:
    """The waiting jobs of one pass as numpy arrays (one entry per job, queue order).

    ``submit``, ``req_time`` (seconds), ``procs`` and ``mem`` (KB, 0 = not
    constrained) come from the job requests; the Table 13 measures ``jw``,
    ``jx``, ``jp``, ``jm`` and ``jpe`` are derived on first use.
    """

    def __init__(self, jobs: Sequence[Job], now: float, columns: Sequence[np.ndarray]) -> None:
        self.jobs = jobs
        self.now = now
        self.submit, self.req_time, self.procs, self.mem = columns

    def __len__(self) -> int:
        return len(self.jobs)

    @cached_property
    def wait(self) -> np.ndarray:
        """Current wait, seconds."""
        return self.now - self.submit

    @cached_property
    def jw(self) -> np.ndarray:
        """Current wait, hours (Table 13 Jw)."""
        return self.wait / 3600.0

    @cached_property
    def jx(self) -> np.ndarray:
        """Estimated current expansion factor (wait + R) / R (Table 13 Jx)."""
        req = np.maximum(self.req_time, MIN_REQUESTED_SECONDS)
        return (self.wait + req) / req

    @property
    def jp(self) -> np.ndarray:
        """Requested processors (Table 13 Jp)."""
        return self.procs

    @cached_property
    def jm(self) -> np.ndarray:
        """Requested memory in units of 358.4 MB (Table 13 Jm)."""
        return self.mem / KB_PER_MEMORY_UNIT

    @cached_property
    def jpe(self) -> np.ndarray:
        """max(Jp, Jm): the larger of processors and normalised memory (Table 12 Wpe)."""
        return np.maximum(self.procs, self.jm)


class RequestColumns:
    """Per-run cache of every job's request columns, so a pass without the engine's
    queue index gathers them with one fancy index instead of a Python loop per column."""

    __slots__ = ("cols", "n", "row_of")

    def __init__(self) -> None:
        self.row_of: dict[Job, int] = {}
        self.cols = [np.empty(1024) for _ in range(4)]
        self.n = 0

    def _add(self, jobs: Iterable[Job]) -> None:
        row_of = self.row_of
        for job in jobs:
            if job in row_of:
                continue
            if self.n == len(self.cols[0]):
                self.cols = [np.concatenate([c, np.empty_like(c)]) for c in self.cols]
            spec = job.spec
            row = (spec.submit, spec.req_time, spec.procs, spec.mem)
            for col, value in zip(self.cols, row, strict=True):
                col[self.n] = value
            row_of[job] = self.n
            self.n += 1

    def gather(self, jobs: Sequence[Job]) -> list[np.ndarray]:
        """``submit``, ``req_time``, ``procs`` and ``mem`` of ``jobs``, in their order."""
        get = self.row_of.__getitem__
        try:
            idx = np.fromiter(map(get, jobs), dtype=np.intp, count=len(jobs))
        except KeyError:
            self._add(jobs)
            idx = np.fromiter(map(get, jobs), dtype=np.intp, count=len(jobs))
        return [c[idx] for c in self.cols]


class RankedQueue(Sequence[Job]):
    """Waiting jobs held as :class:`~o2ksim.engine.queue_index.QueueIndex` rows: a job
    object is looked up only when a pass reaches it, and a scan of the rest takes the
    rows as they are (``rows``)."""

    __slots__ = ("jobs", "rows")

    def __init__(self, jobs: Sequence[Job], rows: np.ndarray) -> None:
        self.jobs = jobs  # every job of the run, by row
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.jobs[r] for r in self.rows[i].tolist()]
        return self.jobs[int(self.rows[i])]

    def __iter__(self) -> Iterator[Job]:
        jobs, rows = self.jobs, self.rows
        for lo in range(0, len(rows), _CHUNK):
            yield from map(jobs.__getitem__, rows[lo : lo + _CHUNK].tolist())


_CHUNK = 64  # rows turned into jobs at a time while a RankedQueue is iterated
