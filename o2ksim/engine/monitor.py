"""Monitors: observers that listen to engine events and build DataFrames at the end.

The engine calls an observer's hooks; nothing inside the model writes output.
:class:`Monitor` is always attached: it records every allocation segment (who
held how many processors and how much memory of which host, from when to when)
and turns the jobs into one row each.  Other observers (decision logs,
progress bars) implement the same :class:`Observer` hooks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from o2ksim import metrics
from o2ksim.jobs import Job, JobState
from o2ksim.machine import KB_PER_MB

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

    def segments(self) -> pd.DataFrame:
        """One row per allocation interval: job_id, host, start, end, procs, mem (MB)."""
        df = pd.DataFrame(
            self._segments, columns=["job_id", "host", "start", "end", "procs", "mem"]
        )
        df["mem"] = df["mem"].astype(float) / KB_PER_MB
        return df


def jobs_table(jobs: list[Job]) -> pd.DataFrame:
    """One row per job with the per-job measures of SPEC §5.

    ``wait`` is start - submit, except for a job that was preempted, resized,
    restarted or ever ran on fewer processors than it requested, whose wait is
    response - actual runtime (T§3.5: the actual runtime is on the requested
    processors).  ``mem`` is MB.
    """
    n = len(jobs)
    cols: dict[str, Any] = {
        "job_id": np.fromiter((j.id for j in jobs), dtype=np.int64, count=n),
        "submit": np.fromiter((j.spec.submit for j in jobs), dtype=float, count=n),
        "start": np.fromiter((j.first_start for j in jobs), dtype=float, count=n),
        "end": np.fromiter((j.end for j in jobs), dtype=float, count=n),
        "run_time": np.fromiter((j.spec.run_time for j in jobs), dtype=float, count=n),
        "req_time": np.fromiter((j.spec.req_time for j in jobs), dtype=float, count=n),
        "procs": np.fromiter((j.spec.procs for j in jobs), dtype=np.int64, count=n),
        "mem": np.fromiter((j.spec.mem for j in jobs), dtype=float, count=n) / KB_PER_MB,
        "host": [j.host for j in jobs],
        "status": [_status(j) for j in jobs],
        "preemptions": np.fromiter((j.preemptions for j in jobs), dtype=np.int64, count=n),
        "restarts": np.fromiter((j.restarts for j in jobs), dtype=np.int64, count=n),
        "resizes": np.fromiter((j.resizes for j in jobs), dtype=np.int64, count=n),
        "user": np.fromiter((j.spec.user for j in jobs), dtype=np.int64, count=n),
        "queue": np.fromiter((j.spec.queue for j in jobs), dtype=np.int64, count=n),
        "reason": [j.reason for j in jobs],
    }
    df = pd.DataFrame(cols)
    df["response"] = df["end"] - df["submit"]
    reduced = np.fromiter((j.reduced for j in jobs), dtype=bool, count=n)
    interrupted = ((df["preemptions"] + df["restarts"] + df["resizes"]) > 0) | reduced
    df["wait"] = np.where(
        interrupted & (df["status"] == "completed"),
        df["response"] - df["run_time"],
        df["start"] - df["submit"],
    )
    completed = df["status"] == "completed"
    runtime = df["run_time"].where(df["run_time"] > 0)
    df["slowdown"] = (df["response"] / runtime).where(completed)
    df["bounded_slowdown"] = metrics.bounded_slowdown(df["wait"], df["run_time"]).where(completed)
    return df.loc[:, list(JOB_COLUMNS)]


def _status(job: Job) -> str:
    state = job.state
    if state.terminal:
        return state.value
    if state is JobState.RUNNING or state is JobState.PREEMPTED:
        return "unfinished"
    return "not_started"


__all__ = ["JOB_COLUMNS", "Monitor", "Observer", "jobs_table"]
