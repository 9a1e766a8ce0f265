"""What the recorded schedule says about the machine's availability (suspected outages and drains).

A trace records when each job was submitted, how long it waited (SWF field
3) and ran (field 4) and on how many processors (field 5, else 8); so it
records how many processors were busy at every moment (:func:`recorded_running`).
What it does not record is how many were *available*: outages, drained or
dedicated nodes and reservations leave no line in the log, but they leave a
trace in the schedule -- jobs wait although the processors the log shows as
free would have held them.

:func:`suspected_outages` finds the periods where the **oldest waiting job**
(the earliest submitted job that had not started yet) needed no more
processors than the recorded free ones (machine size minus recorded busy),
for at least ``min_duration`` while no job started at all.  Under FCFS and EASY backfill (KTH-SP2) the
oldest waiting job is the head of the queue and would have started at once:
during such a period at least ``free - need + 1`` processors must have been
unavailable (the ``down_at_least`` column, the smallest over the period).
Requiring that no job starts during the period keeps out the jobs that wait
for another reason (held by their user, waiting for a dependency) while the
scheduler starts others as usual: such a job makes the oldest waiting job
fit the free processors for days on a machine that was fully available.
Under a priority scheduler (Maui, fair-share) the oldest job may simply not
have been the head, so the periods are *suspected*, not proven; the
assumption is the same for every trace and nothing is tuned.

Jobs without a recorded wait or runtime are left out (when they ran is
unknown): they can only make the machine look freer than it was.

The timeline is reported (``outages.csv``, the page's figure) and, with
``validate(..., availability="inferred")``, replayed as processors down
(:func:`o2ksim.analysis.validate.inferred_availability`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["RecordedSchedule", "recorded_running", "suspected_outages", "wait_in_periods"]


@dataclass(frozen=True)
class RecordedSchedule:
    """The recorded schedule of the jobs with a known wait and runtime, in submit order.

    ``job_id``, ``submit``, ``start`` (submit + recorded wait), ``end`` (start +
    runtime) and ``procs`` (allocated, else requested) are equal-length arrays.
    """

    job_id: np.ndarray
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    procs: np.ndarray

    @classmethod
    def from_columns(cls, table: object) -> RecordedSchedule:
        """From a trace's SWF columns (:attr:`Trace.table <o2ksim.workloads.swf.Trace.table>` or a frame)."""

        def col(name: str) -> np.ndarray:
            return np.asarray(table[name], dtype=float)  # type: ignore[index]

        submit, wait, run = col("submit"), col("wait"), col("run_time")
        alloc = col("alloc_procs")
        procs = np.where(alloc > 0, alloc, col("req_procs"))
        ok = (wait >= 0) & (run >= 0) & (procs > 0) & (submit >= 0)
        order = np.argsort(submit[ok], kind="stable")
        start = (submit + wait)[ok][order]
        return cls(
            job_id=np.asarray(table["job_id"], dtype=np.int64)[ok][order],  # type: ignore[index]
            submit=submit[ok][order],
            start=start,
            end=start + run[ok][order],
            procs=procs[ok][order],
        )


def recorded_running(s: RecordedSchedule) -> tuple[np.ndarray, np.ndarray]:
    """The busy processors of the recorded schedule as a step function: ``(times, level)``,
    ``level[k]`` holding from ``times[k]`` to ``times[k + 1]``."""
    times = np.unique(np.concatenate([s.start, s.end]))
    delta = np.zeros(len(times))
    np.add.at(delta, np.searchsorted(times, s.start), s.procs)
    np.add.at(delta, np.searchsorted(times, s.end), -s.procs)
    return times, np.cumsum(delta)


def suspected_outages(s: RecordedSchedule, capacity: int, min_duration: float = 3600.0) -> pd.DataFrame:
    """Periods of at least ``min_duration`` seconds where the oldest waiting job fit the recorded
    free processors and no job started.

    Columns: ``start``, ``end``, ``hours``, ``head_job`` (the oldest waiting
    job when the period began), ``need`` (its processors), ``free_max`` (the
    most processors recorded free), ``down_at_least`` (the fewest processors
    that must have been unavailable for that job not to start: free - need +
    1, the smallest over the period), ``waiting_max`` (most jobs waiting).
    """
    cols = ["start", "end", "hours", "head_job", "need", "free_max", "down_at_least", "waiting_max"]
    if len(s.submit) == 0:
        return pd.DataFrame(columns=cols)
    times = np.unique(np.concatenate([s.submit, s.start, s.end]))
    rt, level = recorded_running(s)
    busy = np.zeros(len(times))
    k = np.searchsorted(rt, times, side="right") - 1
    busy[k >= 0] = level[k[k >= 0]]
    free = capacity - busy
    arrived = np.searchsorted(s.submit, times, side="right")
    started_by = np.sort(s.start)
    has_start = np.isin(times, s.start)
    rows: list[dict[str, float]] = []
    cur: dict[str, float] | None = None
    p = 0
    start = s.start
    for i in range(len(times) - 1):
        t = times[i]
        n_arr = arrived[i]
        while p < n_arr and start[p] <= t:
            p += 1
        fits = p < n_arr and s.procs[p] <= free[i]
        if fits:
            waiting = n_arr - int(np.searchsorted(started_by, t, side="right"))
            down = free[i] - s.procs[p] + 1
            if cur is not None and has_start[i]:  # a job started: the scheduler was running
                rows.append(cur)
                cur = None
            if cur is None:
                cur = {"start": t, "head_job": int(s.job_id[p]), "need": float(s.procs[p]),
                       "free_max": free[i], "down_at_least": down, "waiting_max": waiting}  # fmt: skip
            else:
                cur["free_max"] = max(cur["free_max"], free[i])
                cur["down_at_least"] = min(cur["down_at_least"], down)
                cur["waiting_max"] = max(cur["waiting_max"], waiting)
            cur["end"] = times[i + 1]
        elif cur is not None:
            rows.append(cur)
            cur = None
    if cur is not None:
        rows.append(cur)
    out = pd.DataFrame(rows, columns=cols)
    out["hours"] = (out["end"] - out["start"]) / 3600.0
    out = out.loc[out["end"] - out["start"] >= min_duration].reset_index(drop=True)
    return out.astype({"head_job": np.int64, "need": np.int64, "free_max": np.int64,
                       "down_at_least": np.int64, "waiting_max": np.int64})  # fmt: skip


def wait_in_periods(wait_start: np.ndarray, wait_end: np.ndarray, periods: pd.DataFrame) -> np.ndarray:
    """Seconds of each interval ``[wait_start, wait_end)`` that fall inside the ``periods`` (disjoint, sorted)."""
    a = np.asarray(wait_start, dtype=float)
    b = np.asarray(wait_end, dtype=float)
    if len(periods) == 0:
        return np.zeros(len(a))
    bounds = np.column_stack([periods["start"], periods["end"]]).ravel().astype(float)
    covered = np.concatenate([[0.0], np.cumsum(np.diff(bounds) * (np.arange(len(bounds) - 1) % 2 == 0))])

    def cum(t: np.ndarray) -> np.ndarray:  # seconds of the periods before t
        return np.interp(t, bounds, covered, left=0.0, right=float(covered[-1]))

    return np.maximum(cum(b) - cum(a), 0.0)
