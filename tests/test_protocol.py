"""The month-with-warm-up protocol (T§3.4, SPEC §5), metrics and the runtime groups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from o2ksim import Window, simulate
from o2ksim.errors import O2KSimError
from o2ksim.machine import single_host
from o2ksim.metrics import RUNTIME_GROUP_BOUNDS_MIN, by_runtime_group, runtime_group, summary
from o2ksim.workloads.swf import SWF_FIELDS
from o2ksim.workloads.transforms import parse_duration, select_window

DAY = 86400.0


def frame(rows):
    """SWF frame from (id, submit, run, procs, req) tuples."""
    data = {f: [-1] * len(rows) for f in SWF_FIELDS}
    for k, (i, s, run, p, req) in enumerate(rows):
        data["job_id"][k], data["submit"][k], data["run_time"][k] = i, s, run
        data["req_procs"][k], data["req_time"][k], data["status"][k] = p, req, 1
    return pd.DataFrame(data).astype("int64")


def test_window_keeps_warmup_jobs_simulated_but_not_analysed():
    rows = [(1, 0, 100, 4, 100), (2, 5 * DAY, 100, 4, 100), (3, 8 * DAY, 50, 4, 50), (4, 20 * DAY, 10, 4, 10)]
    win = Window(7 * DAY, 14 * DAY, warmup=3 * DAY)
    kept, analysed = select_window(frame(rows), win)
    assert list(kept["job_id"]) == [2, 3, 4]  # job 1 is before the warm-up
    assert list(analysed) == [3]
    r = simulate(frame(rows), machine=single_host(4), policy="fcfs", window=win)
    assert r.summary["jobs"] == 1
    assert list(r.jobs.loc[r.jobs.analysed, "job_id"]) == [3]
    # the run stops once job 3 is done; job 4 (after the window) never arrives: it has no
    # row, and is counted (issue 27: a window run writes the jobs of the run, counts the others)
    assert r.stats.sim_end == 8 * DAY + 50
    assert list(r.jobs["job_id"]) == [2, 3]
    assert r.summary["not_arrived"] == 1


def test_window_keeps_simulating_until_window_jobs_finish():
    rows = [(1, 0, 10 * DAY, 4, 10 * DAY), (2, DAY, 100, 4, 100), (3, 3 * DAY, 100, 1, 100)]
    r = simulate(frame(rows), machine=single_host(4), policy="fcfs-backfill", window=Window(0, 2 * DAY))
    t = r.jobs.set_index("job_id")
    assert t.loc[2, "start"] == 10 * DAY  # started long after the window closed
    assert r.summary["jobs"] == 2 and r.summary["max_wait"] == 9 * DAY


def test_empty_window_is_a_clear_error():
    with pytest.raises(O2KSimError, match="no job is submitted in the window"):
        select_window(frame([(1, 0, 1, 1, 1)]), Window(DAY, 2 * DAY))
    with pytest.raises(O2KSimError, match="must be after"):
        Window(5, 5)


def test_summary_measures_by_hand():
    rows = [(1, 0, 100, 4, 100), (2, 0, 30, 4, 30), (3, 10, 5, 4, 5)]
    r = simulate(frame(rows), machine=single_host(4), policy="fcfs")
    s = r.summary
    # starts 0, 100, 130 -> waits 0, 100, 120
    assert s["mean_wait"] == pytest.approx(220 / 3)
    assert s["max_wait"] == 120
    assert s["p95_wait"] == pytest.approx(np.percentile([0, 100, 120], 95))
    # slowdowns: 100/100, 130/30, 125/5 ; bounded (G§4: a job under a minute counts
    # as a one-minute job): 100/100, (100 + 60)/60, (120 + 60)/60
    assert s["mean_slowdown"] == pytest.approx((1 + 130 / 30 + 125 / 5) / 3)
    assert s["mean_bounded_slowdown"] == pytest.approx((1 + 160 / 60 + 180 / 60) / 3)
    assert s["utilisation"] == pytest.approx(135 * 4 / (4 * 135))


def test_runtime_groups_follow_the_thesis_bounds():
    assert len(RUNTIME_GROUP_BOUNDS_MIN) == 11
    assert RUNTIME_GROUP_BOUNDS_MIN[0] == pytest.approx(0.1) and RUNTIME_GROUP_BOUNDS_MIN[-1] == pytest.approx(1e4)
    # 6 s = 0.1 min is in group 0 (upper bound inclusive); 7 s in group 1; a week+ in the last group
    assert list(runtime_group(np.array([1, 6, 7, 60, 600, 30 * DAY]))) == [0, 0, 1, 2, 4, 10]


def test_by_runtime_group_table():
    rows = [(i, i * 10, rt, 1, rt) for i, rt in enumerate([1, 2, 3, 500, 600], start=1)]
    r = simulate(frame(rows), machine=single_host(1), policy="fcfs")
    table = by_runtime_group(r.jobs)
    assert list(table["jobs"]) == [3, 2]
    assert table.loc[0, "runtime_gmean"] == pytest.approx(6 ** (1 / 3))
    assert (table["max_wait"] >= table["mean_wait"]).all()


def test_durations():
    assert parse_duration("7d") == 7 * DAY and parse_duration("5m") == 300 and parse_duration(90) == 90
    with pytest.raises(O2KSimError):
        parse_duration("soon")


def test_summary_of_empty_selection_is_nan_not_an_error():
    jobs = pd.DataFrame({"status": ["rejected"], "wait": [np.nan], "slowdown": [np.nan], "bounded_slowdown": [np.nan]})
    s = summary(jobs)
    assert s["jobs"] == 1 and s["rejected"] == 1 and np.isnan(s["mean_wait"])
