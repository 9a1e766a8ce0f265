"""Suspected outages inferred from a recorded schedule: hand traces and a schedule with a known outage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from o2ksim import simulate
from o2ksim.analysis.validate import validate
from o2ksim.analysis.validate_availability import (
    RecordedSchedule,
    recorded_running,
    suspected_outages,
    wait_in_periods,
)
from o2ksim.workloads.swf import read_swf


def schedule(rows: list[tuple[int, int, int, int, int]]) -> RecordedSchedule:
    """(job, submit, wait, run, procs) rows as a recorded schedule."""
    f = pd.DataFrame(rows, columns=["job_id", "submit", "wait", "run_time", "alloc_procs"])
    f["req_procs"] = f["alloc_procs"]
    return RecordedSchedule.from_columns(f)


def test_an_inserted_outage_is_found():
    # 4 processors; job 1 (1 proc) runs 0-100; job 2 (2 procs) arrives at 10 and starts only at
    # 5010 although 3, then 4, processors are free and nothing else starts: at least
    # min(3, 4) - 2 + 1 = 2 processors must have been down from 10 to 5010
    s = schedule([(1, 0, 0, 100, 1), (2, 10, 5000, 10, 2)])
    o = suspected_outages(s, 4, min_duration=3600)
    assert o[["start", "end", "head_job", "need", "free_max", "down_at_least"]].values.tolist() == [
        [10, 5010, 2, 2, 4, 2]
    ]
    assert o["hours"].iloc[0] == pytest.approx(5000 / 3600)
    assert suspected_outages(s, 4, min_duration=5001).empty


def test_a_strict_fcfs_schedule_has_none():
    # the FCFS schedule of tests/test_validate.py: every wait is for processors that were busy
    s = schedule([(1, 0, 0, 100, 4), (2, 10, 90, 50, 2), (3, 20, 80, 30, 2), (4, 30, 100, 30, 1)])
    assert suspected_outages(s, 4, min_duration=0).empty


def test_starts_split_periods():
    # job 2 (held by its user, say) waits 0-8000 with 3 processors free; job 3 arrives at
    # 4000 and starts at once: the scheduler was running then, so the period is cut in two
    # at 4000, and neither half lasts 4001 s
    s = schedule([(1, 0, 0, 10000, 1), (2, 0, 8000, 10, 1), (3, 4000, 0, 10, 1)])
    o = suspected_outages(s, 4, min_duration=0)
    assert o[["start", "end"]].values.tolist() == [[0, 4000], [4000, 8000]]
    assert suspected_outages(s, 4, min_duration=4001).empty


def test_recorded_running_and_wait_in_periods_by_hand():
    s = schedule([(1, 0, 0, 100, 4), (2, 10, 90, 50, 2), (3, 20, 80, 30, 2)])
    times, level = recorded_running(s)
    assert times.tolist() == [0, 100, 130, 150]
    assert level.tolist() == [4, 4, 2, 0]
    periods = pd.DataFrame({"start": [10.0, 200.0], "end": [50.0, 300.0]})
    got = wait_in_periods(np.array([0.0, 40, 60, 250]), np.array([20.0, 250, 70, 400]), periods)
    assert got.tolist() == [10, 10 + 50, 0, 50]


def test_an_outage_inserted_into_an_o2ksim_schedule_is_found(tmp_path: Path):
    """o2ksim schedules a busy 16-processor machine under FCFS with a full-width 'maintenance'
    job; the trace written from that schedule without the maintenance job hides the outage.
    The inference must find it, inside its true interval, and nothing else."""
    rng = np.random.default_rng(3)
    n = 300
    submit = np.cumsum(rng.exponential(120, n)).round()
    procs = rng.choice([1, 2, 4, 8, 16], n)
    run = rng.integers(60, 1200, n)
    lines = [f"{i + 1} {int(submit[i])} -1 {run[i]} {procs[i]} -1 -1 {procs[i]} {run[i]} -1 1 1 1 -1 -1 -1 -1 -1"
             for i in range(n)]  # fmt: skip
    t_out = int(submit[n // 2])
    lines.append(f"{n + 1} {t_out} -1 20000 16 -1 -1 16 20000 -1 1 1 1 -1 -1 -1 -1 -1")
    src = tmp_path / "sim.swf"
    src.write_text("; MaxProcs: 16\n" + "\n".join(lines) + "\n")
    jobs = simulate(str(src), None, "fcfs").jobs.set_index("job_id")
    b_start = float(jobs.loc[n + 1, "start"])
    b_end = b_start + 20000
    rec = [
        (j, int(jobs.loc[j, "submit"]), int(jobs.loc[j, "wait"]), int(run[j - 1]), int(procs[j - 1]))
        for j in range(1, n + 1)
    ]
    o = suspected_outages(schedule(rec), 16, min_duration=3600)
    assert len(o) == 1
    assert b_start <= o["start"].iloc[0] and o["end"].iloc[0] == b_end
    assert o["end"].iloc[0] - o["start"].iloc[0] > 0.9 * 20000  # jobs queued soon after it began
    assert o["down_at_least"].iloc[0] >= 1
    # and validate() reports it, with the recorded waiting time it holds
    rec_trace = tmp_path / "rec.swf"
    rec_trace.write_text(
        "; MaxProcs: 16\n"
        + "\n".join(f"{j} {s} {w} {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 -1 -1 -1 -1" for j, s, w, r, p in rec)
        + "\n"
    )
    assert len(read_swf(rec_trace)) == n
    v = validate(rec_trace, None, "fcfs")
    assert v.availability["periods"] == 1
    assert 0 < v.availability["wait_share"] <= 1
    assert v.overall["rec_mean"] > v.overall["sim_mean"]  # the replay on the full machine waits less
