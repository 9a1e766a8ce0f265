"""Infinite values in o2ksim's JSON files (issue 27, D1): JSON has no infinity, and the
``null`` they were written as read back as "not set", so a run replayed differently.

They are written ``1e999``: a JSON number (RFC 8259's grammar puts no bound on the
exponent) that a reader turns into the nearest double, infinity.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import one_line

from o2ksim.cli import main
from o2ksim.run.api import run_config
from o2ksim.run.config import RunConfig
from o2ksim.run.results import write_json

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "traces" / "kth-sp2-sample.swf"


def test_infinities_round_trip_and_nan_stays_null(tmp_path):
    data = {"up": math.inf, "down": -math.inf, "nan": math.nan, "list": [1.5, math.inf]}
    path = tmp_path / "x.json"
    write_json(path, data)
    back = json.loads(path.read_text())
    assert back == {"up": math.inf, "down": -math.inf, "nan": None, "list": [1.5, math.inf]}
    # standard JSON: no bare Infinity/NaN token, which strict readers refuse
    assert "Infinity" not in path.read_text() and "NaN" not in path.read_text()


def test_the_word_infinity_inside_a_string_is_left_alone(tmp_path):
    data = {"Infinity": "-Infinity and \"Infinity\\", "n": [math.inf]}
    write_json(tmp_path / "x.json", data)
    assert json.loads((tmp_path / "x.json").read_text()) == data


def test_an_infinite_parameter_replays_as_it_ran(tmp_path):
    """``--eligible-after inf`` (no running job ever eligible for preemption) recorded as
    ``null`` replayed with the default, ten quanta: another schedule."""
    out = tmp_path / "run"
    args = ["run", "--trace", str(SAMPLE), "--machine", "kth-sp2", "--immediate-service",
            "preemptive", "--set", "eligible_after=inf", "-q", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    replay = json.loads((out / "run.json").read_text())["replay"]
    config = RunConfig.from_dict(replay)
    assert config.policy.params["eligible_after"] == math.inf  # type: ignore[union-attr]
    stored = json.loads((out / "summary.json").read_text())
    again = run_config(config).summary
    for key in ("mean_wait", "max_wait", "mean_bounded_slowdown", "completed"):
        assert again[key] == stored[key], key


@pytest.mark.parametrize("value", ["inf", "1e12", "1e300"])
def test_an_infinite_min_interval_is_refused(value, capsys):
    """``min_interval = inf`` put the next repartitioning at ``-inf + inf`` (NaN): the host
    never repartitioned at all; beyond the simulated range, as a trial quantum, it is refused."""
    args = ["run", "--trace", str(SAMPLE), "--machine", "kth-sp2", "--policy", "eqspatial",
            "--set", f"min_interval={value}", "-q"]  # fmt: skip
    assert main(args) == 2
    line = one_line(capsys.readouterr().err)
    assert "min_interval" in line and "beyond the largest time" in line
