"""The waiting jobs of a goal-oriented decision point as numpy columns (issue 26).

A search (:class:`~o2ksim.policies.goal.search.Planner`) needs, per waiting
job, what the scheduler knows (submit time, runtime, processors, memory), a
few values derived from it (how long the plan holds the job's processors,
the runtime floor of the bounded slowdown, the hosts that could ever hold it)
and the job's measures if it started now (the lower bounds of the pruning
rule).  The first two kinds do not change while the job waits, so a run
derives them once per job (:class:`JobTable`) and a decision point gathers
its queue's rows with one index (:meth:`JobTable.gather`) instead of
converting Python lists of every job's attributes at every decision point;
the compiled search then reads the columns as they are.  The derivation is
written once (:func:`fixed_columns`, :func:`host_fits`): a planner made from
plain sequences (tests, the Python API) uses the same functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from o2ksim.jobs import Job

if TYPE_CHECKING:
    from o2ksim.engine.queue_index import QueueIndex

SLOWDOWN_FLOOR = 60.0  # seconds: runtime floor of the bounded slowdown (G§4)
MIN_HOLD = 1e-3  # seconds a zero-runtime job is planned to hold its processors
FIXED = ("submit", "runtime", "hold", "floor", "procs", "mem")
"""The rows of :func:`fixed_columns`: what a job's waiting does not change."""


class JobColumns(NamedTuple):
    """The waiting jobs of a planner as float64 arrays (``hosts_ok``: bool, jobs x hosts)."""

    submit: np.ndarray
    runtime: np.ndarray  # what the scheduler knows, at least 0
    hold: np.ndarray  # how long the plan holds the job's processors
    procs: np.ndarray
    mem: np.ndarray
    hosts_ok: np.ndarray  # [j, h]: host h could ever hold job j
    floor: np.ndarray  # runtime floored at SLOWDOWN_FLOOR (bounded slowdown)
    lb_wait: np.ndarray  # each job's measures if it started now: lower bounds
    lb_x: np.ndarray
    lb_tw: np.ndarray


def fixed_columns(
    submit: Sequence[float] | np.ndarray,
    runtime: Sequence[float] | np.ndarray,
    procs: Sequence[int] | np.ndarray,
    mem: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """The rows :data:`FIXED` of these jobs, a ``(6, n)`` float64 array.

    ``runtime`` is floored at 0; a job of runtime 0 still holds its processors
    ``MIN_HOLD`` seconds in the plan (the engine allocates them before it ends).
    """
    run = np.maximum(np.asarray(runtime, np.float64), 0.0)
    return np.stack([
        np.asarray(submit, np.float64), run, np.where(run > 0, run, MIN_HOLD),
        np.maximum(run, SLOWDOWN_FLOOR), np.asarray(procs, np.float64), np.asarray(mem, np.float64),
    ])  # fmt: skip


def host_fits(capacity: np.ndarray, procs: np.ndarray, mem: np.ndarray) -> np.ndarray:
    """``[j, h]``: host ``h`` (``capacity[h] = (procs, mem)``) could ever hold job ``j``."""
    return (capacity[:, 0] >= procs[:, None]) & (capacity[:, 1] >= mem[:, None])


def job_columns(
    now: float, fixed: np.ndarray, hosts_ok: np.ndarray, omega: float | None
) -> tuple[JobColumns, float, float, tuple[float, float, float]]:
    """The planner's columns: ``fixed`` (:func:`fixed_columns`) and each job's measures if
    it started ``now`` (wait, expansion factor, wait beyond the threshold); with the
    current wait of the oldest job, the Tw threshold (``omega``, or that wait when
    ``None``: the dynamic threshold) and the sums of the three measures over the jobs
    (Python's ``sum`` in job order: where every search, compiled or not, starts)."""
    submit, runtime, hold, floor, procs, mem = fixed
    lb_wait = now - submit
    waits = lb_wait.tolist()
    max_wait_now = max(waits, default=0.0)
    threshold = max_wait_now if omega is None else float(omega)
    over = lb_wait - threshold
    lb_x = (lb_wait + floor) / floor
    lb_tw = np.where(over > 0.0, over, 0.0)
    cols = JobColumns(submit, runtime, hold, procs, mem, hosts_ok, floor, lb_wait, lb_x, lb_tw)
    return cols, max_wait_now, threshold, (sum(waits), sum(lb_x.tolist()), sum(lb_tw.tolist()))


class JobTable:
    """Per run: the :data:`FIXED` rows and host fits of every job, one column per job,
    so a decision point gathers its queue with one index per array.

    Built from the engine's queue index (:class:`~o2ksim.engine.queue_index.QueueIndex`,
    every job of the run, in one pass; its rows are the index's), or, for a queue given
    without it, from each job when first seen waiting (added in batches)."""

    __slots__ = ("capacity", "fixed", "index", "n", "ok", "row_of")

    def __init__(self, capacity: np.ndarray, index: QueueIndex | None = None) -> None:
        self.capacity = capacity
        """Per host ``(procs, memory)``, float64, shape ``(hosts, 2)``."""
        self.index = index
        self.row_of: dict[Job, int] = {}
        if index is None:
            self.fixed = np.empty((len(FIXED), 256))
            self.ok = np.empty((256, len(capacity)), np.bool_)
            self.n = 0
        else:
            self.fixed = fixed_columns(index.submit, index.req_time, index.procs, index.mem)
            self.ok = host_fits(capacity, self.fixed[4], self.fixed[5])
            self.n = len(index.jobs)

    def _add(self, jobs: Sequence[Job]) -> None:
        row_of = self.row_of
        new = [job for job in dict.fromkeys(jobs) if job not in row_of]
        specs = [job.spec for job in new]
        fixed = fixed_columns([s.submit for s in specs], [s.req_time for s in specs],
                              [s.procs for s in specs], [s.mem for s in specs])  # fmt: skip
        end = self.n + len(new)
        if end > self.fixed.shape[1]:
            size = max(end, 2 * self.fixed.shape[1])
            grown = np.empty((len(FIXED), size))
            grown[:, : self.n] = self.fixed[:, : self.n]
            ok = np.empty((size, self.ok.shape[1]), np.bool_)
            ok[: self.n] = self.ok[: self.n]
            self.fixed, self.ok = grown, ok
        self.fixed[:, self.n : end] = fixed
        self.ok[self.n : end] = host_fits(self.capacity, fixed[4], fixed[5])
        for k, job in enumerate(new, self.n):
            row_of[job] = k
        self.n = end

    def gather(
        self, queue: Sequence[Job], index: QueueIndex | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The :data:`FIXED` rows ``(6, n)`` and host fits ``(n, hosts)`` of ``queue``,
        in its order, both C-contiguous (as the compiled search reads them).

        ``index``: the engine's columns of exactly this queue (``Snapshot.queue_index``);
        a table built from it reads the queue's rows there."""
        if self.index is not None:
            if index is not self.index or len(index) != len(queue):
                raise ValueError("a table built from a queue index gathers that index's queue")
            idx = index.rows()
        else:
            get = self.row_of.__getitem__
            try:
                idx = np.fromiter(map(get, queue), np.intp, len(queue))
            except KeyError:
                self._add(queue)
                idx = np.fromiter(map(get, queue), np.intp, len(queue))
        return np.take(self.fixed, idx, axis=1), np.take(self.ok, idx, axis=0)


__all__ = ["FIXED", "MIN_HOLD", "SLOWDOWN_FLOOR", "JobColumns", "JobTable", "fixed_columns",
           "host_fits", "job_columns"]  # fmt: skip
