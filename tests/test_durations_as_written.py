"""Durations and spans out of range are refused in the user's terms, before any work (issue
27: "warnings give seconds (2.8512e+06 s) where the user typed days or dates").

Found while looking for every message that gave seconds where days were typed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.run.api import simulate

ROOT = Path(__file__).resolve().parents[1]

TINY = Path(__file__).resolve().parents[1] / "traces" / "tiny.swf"


def one_line_error(capsys, code: int, *needles: str) -> str:
    """Exit 2, one stderr line starting ``o2ksim: error:``, holding every needle."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("o2ksim: error: "), err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.mark.parametrize("span", ["1e9d", "3661d", "1e12"])
def test_generate_refuses_a_span_beyond_the_limit_before_generating(tmp_path, capsys, span):
    """``generate --span 1e9d`` was taken and the process was killed for its memory (found
    while checking issue 27's window messages); 3660 days is the limit ``run --span`` keeps."""
    t0 = time.perf_counter()
    code = main(["generate", "--span", span, "--out", str(tmp_path / "x.swf")])
    one_line_error(capsys, code, "--span: at most 3660 days, got")
    assert time.perf_counter() - t0 < 10 and not (tmp_path / "x.swf").exists()


@pytest.mark.parametrize("span", ["1e400", "inf", "1e400d"])
def test_generate_says_an_infinite_span_is_not_finite(tmp_path, capsys, span):
    """Found by the session-13 audit: ``--span 1e400`` was refused as "must be positive"."""
    code = main(["generate", "--span", span, "--out", str(tmp_path / "x.swf")])
    one_line_error(capsys, code, f"--span {span}: '{span}' is not a finite length of time")


def test_a_bound_is_written_in_full(tmp_path, capsys):
    """Found by the session-13 audit: "must be at most 2.14748e+09, got 2.14748e+09"."""
    machine = tmp_path / "m.toml"
    machine.write_text('[[host]]\nname = "a"\nprocs = 2147483648\nmemory_gb = 1\n')
    code = main(["run", "--trace", str(ROOT / "traces" / "tiny.swf"), "--machine", str(machine)])
    one_line_error(capsys, code, "host[0].procs: must be at most 2147483647, got 2147483648")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('overrun_grace = "20000000d"', "protocol.overrun_grace: must be below 1e+12 s (11,574,074d), got '20000000d'"),
        ('interval = "0.5s"', "protocol.interval: must be at least 1 s, got '0.5s'"),
    ],
)
def test_a_scenario_duration_out_of_range_is_quoted_as_written(tmp_path, capsys, line, said):
    """It said ``got 1.728e+12`` (seconds) for 20,000,000 days typed (issue 27: "warnings give
    seconds where the user typed days").  10^12 s / 86,400 = 11,574,074 days."""
    path = tmp_path / "s.toml"
    path.write_text(f'name = "s"\npolicies = ["fcfs"]\n[workload]\ntrace = "{TINY}"\n[protocol]\n{line}\n')
    # the value is on line 6 of the file written above (counted by hand)
    assert one_line_error(capsys, main(["scenario", "show", str(path)])) == f"o2ksim: error: {path}:6: field {said}"


def test_an_api_duration_out_of_range_is_quoted_as_written():
    """``simulate(overrun_grace="20000000d")`` said ``got 1.728e+12`` (seconds)."""
    with pytest.raises(O2KSimError) as caught:
        simulate(str(TINY), overrun_grace="20000000d", kill_overrun=True)
    assert str(caught.value) == "overrun_grace: must be below 1e+12 s (11,574,074d), got '20000000d'"
