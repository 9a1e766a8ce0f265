"""``utilisation_up`` in summary.json: busy processor-time over the capacity that was up.

Worked out by hand on the schedule of ``tests/test_availability.py`` (a
10-processor host, EASY): jobs 1 (6 processors) and 2 (4) run 0-100; 4
processors go down from 50 to 300, so the drain holds them from 100 (when
jobs 1 and 2 end) to 300; job 4 (2 processors, 20 s) runs 100-120 and job 3
(8 processors, 50 s) 300-350.

Busy: 6*100 + 4*100 + 2*20 + 8*50 = 1440 processor-seconds.  Over the run
(first submit 0 to last end 350): the machine 10*350 = 3500, down 4*200 = 800,
so ``utilisation`` = 1440/3500 and ``utilisation_up`` = 1440/2700.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_drain_trace

import o2ksim
from o2ksim.availability import Outage
from o2ksim.cli import main
from o2ksim.jobs import JobSpec
from o2ksim.machine import single_host
from o2ksim.metrics import utilisation_up

MACHINE = single_host(10)
JOBS = [JobSpec(1, 0, 6, 0, 100, 100), JobSpec(2, 0, 4, 0, 100, 100),
        JobSpec(3, 60, 8, 0, 50, 50), JobSpec(4, 70, 2, 0, 20, 20)]  # fmt: skip


def test_whole_run_divides_by_the_capacity_held_down_after_the_drain():
    r = o2ksim.simulate(JOBS, MACHINE, "fcfs-backfill", availability=[Outage("machine", 50, 300, 4)])
    assert r.summary["utilisation"] == pytest.approx(1440 / 3500)
    assert r.summary["utilisation_up"] == pytest.approx(1440 / 2700)


def write_trace(tmp_path: Path) -> Path:
    return write_drain_trace(tmp_path / "t.swf")


def test_window_clips_the_period_down(tmp_path: Path):
    # window [0, 200): busy 1000 (jobs 1, 2) + 40 (job 4); machine 2000; down 4*(200-100) = 400
    r = o2ksim.simulate(
        write_trace(tmp_path), MACHINE, "fcfs-backfill", window=(0, 200, 0), availability=[Outage("machine", 50, 300, 4)]
    )
    assert r.summary["utilisation"] == pytest.approx(1040 / 2000)
    assert r.summary["utilisation_up"] == pytest.approx(1040 / 1600)


def test_a_called_off_drain_takes_nothing_and_no_availability_adds_no_figure():
    # 4 processors asked for from 50 to 90: jobs 1 and 2 hold them until 100, the drain is
    # called off; jobs 3 and 4 start at 100 (8 + 2 processors): busy 1440 over 10*150
    r = o2ksim.simulate(JOBS, MACHINE, "fcfs-backfill", availability=[Outage("machine", 50, 90, 4)])
    assert r.summary["utilisation"] == pytest.approx(1440 / 1500)
    assert r.summary["utilisation_up"] == pytest.approx(1440 / 1500)
    assert "utilisation_up" not in o2ksim.simulate(JOBS, MACHINE, "fcfs-backfill").summary


def test_the_function_clips_each_period_to_the_span():
    import pandas as pd

    segments = pd.DataFrame({"start": [0.0], "end": [10.0], "procs": [2]})
    # 4 processors, span [0, 10): busy 20; down 2 processors on [5, 20) -> 10 lost of 40
    assert utilisation_up(segments, 4, (0.0, 10.0), [(5.0, 20.0, 2)]) == pytest.approx(20 / 30)
    assert utilisation_up(segments, 4, (0.0, 10.0), [(10.0, 20.0, 2)]) == pytest.approx(20 / 40)


def test_cli_summary_json_holds_both(tmp_path: Path):
    trace = write_trace(tmp_path)
    machine = tmp_path / "m.toml"
    machine.write_text('name = "m"\n[[host]]\nname = "m"\nprocs = 10\n')
    down = tmp_path / "down.csv"
    down.write_text("host,from,to,procs\nm,50,300,4\n")
    out = tmp_path / "out"
    args = ["run", "--trace", str(trace), "--machine", str(machine), "--policy", "fcfs-backfill", "-q"]
    assert main([*args, "--availability", str(down), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["utilisation"] == pytest.approx(1440 / 3500)
    assert summary["utilisation_up"] == pytest.approx(1440 / 2700)
