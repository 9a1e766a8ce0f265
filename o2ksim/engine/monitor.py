"""Monitors: observers that listen to engine events and build DataFrames at the end.

The engine calls an observer's hooks; nothing inside the model writes output.
:class:`Monitor` is always attached: it records every allocation segment (who
held how many processors and how much memory of which host, from when to when)
and turns the jobs into one row each.  Other observers (decision logs,
progress bars) implement the same :class:`Observer` hooks.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from o2ksim import metrics
from o2ksim.jobs import Job, JobState
from o2ksim.machine import KB_PER_MB
from o2ksim.table import ColumnTable

if TYPE_CHECKING:  # the tables are DataFrames only when asked for (segments, jobs_table)
    import pandas as pd

JOB_COLUMNS = (
    "job_id", "submit", "start", "end", "wait", "run_time", "req_time", "procs", "mem", "host",
    "status", "response", "slowdown", "bounded_slowdown", "preemptions", "restarts", "resizes",
    "user", "queue", "reason",
)  # fmt: skip

BOUNDED_SLOWDOWN_FLOOR = metrics.BOUNDED_SLOWDOWN_FLOOR  # seconds (G§4, SPEC §5)


class Observer:
    """Hooks the engine calls; override the ones you need."""

    def on_arrival(self, job: Job, now: float) -> None: ...

    def on_allocation(self, job: Job, now: float) -> None:
        """``job`` now holds ``job.alloc_procs``/``job.alloc_mem`` on ``job.host`` (0 procs when preempted)."""

    def on_release(self, job: Job, now: float) -> None:
        """``job`` gave back everything it held (end, kill, requeue)."""

    def on_end(self, job: Job, now: float) -> None:
        """``job`` reached a terminal state (completed, killed, rejected)."""

    def on_decision(self, now: float, decision: Any) -> None: ...

    def on_pass(self, now: float, n_decisions: int) -> None: ...

    def close(self) -> None:
        """The run is over (``simulate`` calls it): flush or close what the observer holds."""


class Monitor(Observer):
    """Records allocation segments and pass counts; builds the result tables."""

    def __init__(self) -> None:
        self._open: dict[int, tuple[float, str, int, int]] = {}
        self._segments: list[tuple[int, str, float, float, int, int]] = []
        self.passes = 0
        self.decisions = 0

    def on_allocation(self, job: Job, now: float) -> None:
        job_id = job.spec.job_id
        seg = self._open.pop(job_id, None)
        if seg is not None:
            self._segments.append((job_id, seg[1], seg[0], now, seg[2], seg[3]))
        self._open[job_id] = (now, job.host or "", job.alloc_procs, job.alloc_mem)

    def on_release(self, job: Job, now: float) -> None:
        job_id = job.spec.job_id
        seg = self._open.pop(job_id, None)
        if seg is not None:
            self._segments.append((job_id, seg[1], seg[0], now, seg[2], seg[3]))

    def on_pass(self, now: float, n_decisions: int) -> None:
        self.passes += 1
        self.decisions += n_decisions

    def _close(self, job: Job, now: float) -> None:
        seg = self._open.pop(job.id, None)
        if seg is not None:
            start, host, procs, mem = seg
            self._segments.append((job.id, host, start, now, procs, mem))

    def close_all(self, now: float, jobs: dict[int, Job]) -> None:
        """Close segments of jobs still holding resources when the run stops."""
        for job_id in list(self._open):
            self._close(jobs[job_id], now)

    def segments(self, *, release: bool = False) -> pd.DataFrame:
        """One row per allocation interval: job_id, host, start, end, procs, mem (MB).

        ``release``: the run is over and the rows are needed only once -- the
        recorded rows are dropped as the table is built (on a year-long trace
        they are about 100 MB of Python tuples); a later call returns only
        rows recorded after this one.
        """
        if not self._segments:
            import pandas as pd

            df = pd.DataFrame([], columns=list(SEGMENT_COLUMNS))
            df["mem"] = df["mem"].astype(float) / KB_PER_MB
            return df
        return self.segment_table(release=release).to_frame()

    def segment_table(self, *, release: bool = False) -> ColumnTable:
        """:meth:`segments` as numpy columns (``host`` an object array of names), without pandas."""
        rows = self._segments
        if release:
            self._segments = []
        if not rows:
            return ColumnTable(
                {
                    "job_id": np.zeros(0, np.int64),
                    "host": np.empty(0, object),
                    "start": np.zeros(0),
                    "end": np.zeros(0),
                    "procs": np.zeros(0, np.int64),
                    "mem": np.zeros(0),
                },
                0,
            )
        job_id, host, start, end, procs, mem = zip(*rows, strict=True)
        if release:
            rows.clear()
        hosts = np.empty(len(host), dtype=object)
        hosts[:] = host
        # np.array infers int64 or float64 from the values, as the row-wise constructor did
        columns = [np.array(job_id), hosts, np.array(start), np.array(end), np.array(procs)]
        table = dict(zip(SEGMENT_COLUMNS, columns, strict=False))
        table["mem"] = np.array(mem).astype(float) / KB_PER_MB
        return ColumnTable(table, len(hosts))


SEGMENT_COLUMNS = ("job_id", "host", "start", "end", "procs", "mem")


def jobs_table(jobs: list[Job]) -> pd.DataFrame:
    """One row per job with the per-job measures of SPEC §5 (the columns of :func:`job_columns`)."""
    import pandas as pd

    return pd.DataFrame(job_columns(jobs))


def job_columns(jobs: list[Job]) -> dict[str, np.ndarray]:
    """The columns of the per-job table, in :data:`JOB_COLUMNS` order, as numpy arrays.

    ``wait`` is start - submit, except for a job that was preempted, resized,
    restarted or ever ran on fewer processors than it requested, whose wait is
    response - actual runtime (T§3.5: the actual runtime is on the requested
    processors).  ``mem`` is MB.  Each attribute is read from the jobs once and
    every measure is computed on whole columns (``host``, ``status`` and
    ``reason`` are object arrays of strings, ``None`` for a job never placed).
    """
    n = len(jobs)
    specs = [j.spec for j in jobs]

    def column(items: list[Any], name: str, dtype: Any) -> np.ndarray:
        return np.fromiter(map(attrgetter(name), items), dtype=dtype, count=n)

    def text(values: Any) -> np.ndarray:
        out = np.empty(n, dtype=object)
        out[:] = list(values)
        return out

    submit = column(specs, "submit", float)
    start = column(jobs, "first_start", float)
    end = column(jobs, "end", float)
    run_time = column(specs, "run_time", float)
    preemptions = column(jobs, "preemptions", np.int64)
    restarts = column(jobs, "restarts", np.int64)
    resizes = column(jobs, "resizes", np.int64)
    status = text(map(_STATUS.__getitem__, map(id, map(attrgetter("state"), jobs))))
    completed = status == "completed"
    response = end - submit
    interrupted = ((preemptions + restarts + resizes) > 0) | column(jobs, "reduced", bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        wait = np.where(interrupted & completed, response - run_time, start - submit)
        runtime = np.where(run_time > 0, run_time, np.nan)
        slowdown = np.where(completed, response / runtime, np.nan)
        bounded = np.where(completed, metrics.bounded_slowdown(wait, run_time), np.nan)
    cols = {
        "job_id": column(specs, "job_id", np.int64),
        "submit": submit,
        "start": start,
        "end": end,
        "wait": wait,
        "run_time": run_time,
        "req_time": column(specs, "req_time", float),
        "procs": column(specs, "procs", np.int64),
        "mem": column(specs, "mem", float) / KB_PER_MB,
        "host": text(map(attrgetter("host"), jobs)),
        "status": status,
        "response": response,
        "slowdown": slowdown,
        "bounded_slowdown": bounded,
        "preemptions": preemptions,
        "restarts": restarts,
        "resizes": resizes,
        "user": column(specs, "user", np.int64),
        "queue": column(specs, "queue", np.int64),
        "reason": text(map(attrgetter("reason"), jobs)),
    }
    return cols


def _status_of(state: JobState) -> str:
    if state.terminal:
        return state.value
    if state is JobState.RUNNING or state is JobState.PREEMPTED:
        return "unfinished"
    return "not_started"


_STATUS = {id(state): _status_of(state) for state in JobState}
"""The ``status`` column by the ``id`` of each job state (members are singletons;
hashing an enum member runs Python code, ``id`` does not)."""


__all__ = ["JOB_COLUMNS", "Monitor", "Observer", "job_columns", "jobs_table"]
