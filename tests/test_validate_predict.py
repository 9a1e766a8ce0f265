"""``o2ksim predict --schedule recorded``: Downey's predictors scored against what really happened.

The trace below on 4 processors, recorded: job 1 (4 procs) runs 0-100; job 2 (2 procs,
submitted at 10) starts at 100 (recorded wait 90); job 3 (2 procs, at 20) starts at 100 too;
job 4 (2 procs, at 25) has no recorded wait; jobs 11-18 run alone much later, without
waiting (they only make the model fit, which needs ten jobs).

At the head of the queue in reality: job 2 at 10 (job 1 had started; 0 free, needs 2) until
100, actual 90; job 3 reached the head at 100 and started then (no wait at the head); job 4
is left out (no recorded wait), counted.  The simulated schedule (FCFS) also has job 4,
which reaches the head at 100 and starts at 130: a second event, actual 30.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.prediction import predict

LINES = [
    "; MaxProcs: 4",
    "1 0 0 100 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1",
    "2 10 90 50 2 -1 -1 2 50 -1 1 1 1 -1 1 -1 -1 -1",
    "3 20 80 30 2 -1 -1 2 30 -1 1 1 1 -1 1 -1 -1 -1",
    "4 25 -1 30 2 -1 -1 2 30 -1 1 1 1 -1 1 -1 -1 -1",
    *(f"{10 + i} {10000 + 1000 * i} 0 {10 * i + 5} 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1" for i in range(1, 9)),
]


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "rec.swf"
    path.write_text("\n".join(LINES) + "\n")
    return path


def test_recorded_schedule_events_are_the_recorded_waits_at_the_head(trace):
    r = predict(trace, schedule="recorded", whole_queue=False)
    heads = r.predictions.loc[r.predictions["predictor"] == "combined"]
    assert heads[["job_id", "time", "need", "actual"]].values.tolist() == [[2, 10, 2, 90]]
    assert r.config["schedule"] == "recorded" and r.config["no_recorded_wait"] == 1
    assert r.config["policy"] == "recorded schedule"
    # busy 4*100 + 2*50 + 2*30 + sum(10 i + 5) processor-seconds over 0..18085
    busy = 400 + 100 + 60 + sum(10 * i + 5 for i in range(1, 9))
    assert r.config["utilisation"] == pytest.approx(busy / (4 * (18000 + 85)))


def test_simulated_schedule_has_job_4_too(trace):
    r = predict(trace, whole_queue=False)
    heads = r.predictions.loc[r.predictions["predictor"] == "combined"]
    assert heads[["job_id", "actual"]].values.tolist() == [[2, 90], [4, 30]]


def test_no_recorded_waits_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "none.swf"
    path.write_text("\n".join(line if line.startswith(";") else " ".join(
        [*line.split()[:2], "-1", *line.split()[3:]]) for line in LINES) + "\n")  # fmt: skip
    with pytest.raises(O2KSimError, match="0 jobs have a recorded wait"):
        predict(path, schedule="recorded", whole_queue=False)
    assert main(["predict", str(path), "--schedule", "recorded", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "recorded wait" in err


def test_cli_writes_the_recorded_run(trace, tmp_path):
    out = tmp_path / "out"
    assert main(["predict", str(trace), "--schedule", "recorded", "--no-whole-queue", "--out", str(out)]) == 0
    assert (out / "predictions.csv").exists() and (out / "summary.json").exists()
