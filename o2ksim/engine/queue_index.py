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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from o2ksim.jobs import Job


class QueueIndex:
    """Per-run columns of every job's request, and which jobs wait now.

    ``procs``, ``mem`` (KB), ``req_time`` and ``submit`` are float arrays with
    one entry per job of the run (row = arrival order); ``jobs[row]`` is the
    job and ``row_of[job_id]`` its row.  :meth:`rows` gives the rows of the
    waiting jobs, in queue order.
    """

    __slots__ = ("_hi", "_lo", "_n", "_rows", "jobs", "mem", "procs", "queued", "req_time", "row_of", "submit")

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

    def add(self, job: Job) -> None:
        """``job`` joined the queue (arrival or requeue)."""
        row = self.row_of[job.id]
        self.queued[row] = True
        self._n += 1
        if row >= self._hi:
            self._hi = row + 1
        if row < self._lo:
            self._lo = row
        self._rows = None

    def remove(self, job: Job) -> None:
        """``job`` left the queue (started, killed or rejected)."""
        self.queued[self.row_of[job.id]] = False
        self._n -= 1
        self._rows = None

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
