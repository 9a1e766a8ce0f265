"""The Python API takes what the CLI and TOML take (issue 15): durations and the 7-day warm-up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from o2ksim import Window, simulate
from o2ksim.errors import O2KSimError
from o2ksim.workloads.transforms import format_duration

DAY = 86400.0
REPO = Path(__file__).resolve().parents[1]
KTH = str(REPO / "traces" / "kth-sp2-sample.swf")


def test_window_takes_durations_and_defaults_to_the_cli_warmup():
    w = Window("14d", "28d")
    assert (w.start, w.end, w.warmup) == (14 * DAY, 28 * DAY, 7 * DAY)
    assert Window(0, "90m", warmup="12h").end == 5400.0
    assert Window(0, "90m", warmup="12h").warmup == 12 * 3600.0


def test_simulate_takes_duration_strings_for_window_and_interval():
    r = simulate(KTH, policy="fcfs-backfill", window=("8d", "20d"),
                 interval="5m")  # fmt: skip
    assert r.config["window"] == [8 * DAY, 20 * DAY, 7 * DAY]
    assert r.config["interval"] == 300.0


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (45, "45s"), (90, "1.5m"), (3600, "1h"), (1.728e6, "20d"), (5000 * DAY, "5,000d")],
)
def test_durations_are_shown_in_the_users_units(seconds, text):
    assert format_duration(seconds) == text


def test_errors_speak_durations_and_name_the_option():
    with pytest.raises(O2KSimError, match=r"window end \(1d\) must be after its start \(2d\)"):
        Window("2d", "1d")
    with pytest.raises(O2KSimError, match=r"\[1d, 3d\).*from 6\.94d to 29\.9d"):
        simulate(KTH, window=("1d", "3d"))
    out = subprocess.run(
        [sys.executable, "-m", "o2ksim", "run", "--span", "0d"], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "o2ksim: error: --span 0d: must be longer than 0 (e.g. 5m)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interval", "0"], "--interval 0: must be longer than 0 (e.g. 5m)"),
        (["--window", "0", "1h", "--warmup", "-1"],
         "--warmup -1: must not be negative (a duration such as 12h)"),
        (["--interval", "abc"], "--interval abc: 'abc' is not a duration"),
    ],
)  # fmt: skip
def test_cli_duration_errors_are_one_line_naming_the_option(args, message, capsys):
    from o2ksim.cli import main

    assert main(["run", "--trace", str(REPO / "traces" / "tiny.swf"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"o2ksim: error: {message}") and "\n" not in err
