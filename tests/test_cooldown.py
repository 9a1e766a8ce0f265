"""The protocol's cool-down (T§3.4, SPEC §5): arrivals go on until every analysed job has started.

Hand-made traces show why (a job that arrives after the window still competes
with the window's last jobs) and what the summary reports; a generated
workload's tail leaves the analysed jobs unchanged.
"""

from __future__ import annotations

import pandas as pd
import pytest

from o2ksim import Window, simulate
from o2ksim.machine import single_host
from o2ksim.workloads.cooldown import append_tail, run_with_cooldown
from o2ksim.workloads.models import generate
from o2ksim.workloads.swf import SWF_FIELDS


def frame(rows):
    """SWF frame from (id, submit, run, procs, req) tuples."""
    data = {f: [-1] * len(rows) for f in SWF_FIELDS}
    for k, (i, s, run, p, req) in enumerate(rows):
        data["job_id"][k], data["submit"][k], data["run_time"][k] = i, s, run
        data["req_procs"][k], data["req_time"][k], data["status"][k] = p, req, 1
    return pd.DataFrame(data).astype("int64")


# SJF-backfill on 4 processors.  J1 (4p) runs 0-100.  J2 (4p, 50 s) is the window's
# last job (window [0, 15)).  J3 (4p, requests 10 s) arrives at 20, after the window.
ROWS = [(1, 0, 100, 4, 100), (2, 10, 50, 4, 50), (3, 20, 10, 4, 10)]


def test_later_arrivals_still_compete_with_the_windows_jobs():
    win = Window(0, 15)
    with_tail = simulate(frame(ROWS), machine=single_host(4), policy="sjf-backfill", window=win)
    t = with_tail.jobs.set_index("job_id")
    # at 100 SJF starts J3 (10 s) before J2: J2 starts at 110 and waits 100 s
    assert t.loc[3, "start"] == 100 and t.loc[2, "start"] == 110
    assert with_tail.summary["max_wait"] == 100
    cut = simulate(frame(ROWS[:2]), machine=single_host(4), policy="sjf-backfill", window=win)
    assert cut.summary["max_wait"] == 90  # arrivals stopped at the window's end: understated


def test_summary_says_how_long_the_cooldown_was_and_whether_it_was_enough():
    win = Window(0, 15)
    r = simulate(frame(ROWS), machine=single_host(4), policy="sjf-backfill", window=win)
    # J2 starts at 110 but the trace's last arrival is at 20: not enough arrivals
    assert r.summary["cooldown_short"] is True
    assert r.summary["cooldown_seconds"] == 20 - 15 and r.summary["cooldown_arrivals"] == 1
    r = simulate(frame([*ROWS, (4, 200, 5, 1, 5)]), machine=single_host(4), policy="sjf-backfill", window=win)
    # the run stops when J2 ends at 160 (J4 never arrives): arrivals were used 15..160
    assert r.summary["cooldown_short"] is False
    assert r.summary["cooldown_seconds"] == 160 - 15 and r.summary["cooldown_arrivals"] == 1


def test_a_generated_tail_leaves_the_analysed_jobs_unchanged():
    trace = generate("o2k", span="2d", seed=5)
    longer = append_tail(trace, "o2k", after=2 * 86400, seed=5, chunks=2, chunk_length=86400)
    n = len(trace)
    assert longer.jobs.iloc[:n].equals(trace.jobs)
    tail = longer.jobs.iloc[n:]
    assert len(tail) > 0 and tail["submit"].min() >= 2 * 86400
    assert tail["submit"].max() < 4 * 86400
    assert longer.jobs["job_id"].is_unique
    again = append_tail(trace, "o2k", after=2 * 86400, seed=5, chunks=1, chunk_length=86400)
    assert longer.jobs.iloc[: len(again)].equals(again.jobs)  # chunk 0 is the same either way


def test_run_with_cooldown_adds_chunks_until_enough():
    calls = []

    class Fake:
        def __init__(self, k):
            self.summary = {"cooldown_short": k < 3}

    def run(trace):
        calls.append(trace)
        return Fake(trace)

    result = run_with_cooldown(run, None, lambda _t, k: k, max_chunks=8)
    assert calls == [1, 2, 4] and result.summary["cooldown_short"] is False
    calls.clear()
    run_with_cooldown(run, None, lambda _t, k: k, max_chunks=2)
    assert calls == [1, 2]

    class Needs:  # the first run says it needed 250 s of arrivals after the window
        def __init__(self, k):
            self.summary = {"cooldown_short": k * 100 < 250, "cooldown_needed": 250.0}

    calls.clear()
    run_with_cooldown(lambda k: calls.append(k) or Needs(k), None, lambda _t, k: k, chunk_length=100)
    assert calls == [1, 4]  # ceil(250 / 100) + 1 chunks at once, not 2 then 4


@pytest.mark.parametrize("policy", ["fcfs-backfill"])
def test_cli_generated_month_reports_its_cooldown(policy, capsys):
    from o2ksim.cli import main

    assert main(["run", "--span", "2d", "--warmup", "1", "--policy", policy, "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "cool-down: arrivals continued" in out and "WARNING" not in out
