"""Window dates are read in the trace header's time zone, and the run says which (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.units import parse_time, trace_zone
from o2ksim.workloads.swf_header import SWFHeader

# 1,000,000,000 s = 2001-09-09 01:46:40 UTC, so 2001-09-10 00:00 UTC is 80,000 s into the trace
UNIX = 1_000_000_000
MIDNIGHT_UTC = 80_000


@pytest.mark.parametrize(
    ("header", "seconds", "label"),
    [
        # New York is on daylight saving time (UTC-4) in September: midnight there is 04:00 UTC
        ({"time_zone_string": "America/New_York", "time_zone": -18000}, MIDNIGHT_UTC + 4 * 3600, "America/New_York"),
        ({"time_zone": 3600}, MIDNIGHT_UTC - 3600, "UTC+01:00"),  # a fixed offset, no DST
        ({"time_zone_string": "Not/AZone", "time_zone": -7200}, MIDNIGHT_UTC + 7200, "UTC-02:00"),
        ({}, MIDNIGHT_UTC, "UTC"),
    ],
)
def test_a_date_is_read_in_the_header_zone(header, seconds, label):
    zone, text = trace_zone(SWFHeader(unix_start_time=UNIX, **header))
    assert parse_time("2001-09-10", UNIX, zone) == seconds
    assert text.split(" ")[0] == label
    assert parse_time("2001-09-10T00:00+00:00", UNIX, zone) == MIDNIGHT_UTC  # its own offset wins


def _trace(path: Path) -> Path:
    """Jobs every 6 hours from 2001-09-09 01:46:40 UTC on, on a New York clock."""
    lines = [f"; UnixStartTime: {UNIX}", "; TimeZoneString: America/New_York", "; MaxProcs: 4"]
    lines += [f"{i} {21600 * (i - 1)} 0 60 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1" for i in range(1, 41)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_run_says_which_zone_and_warns_in_dates(tmp_path, capsys):
    trace = _trace(tmp_path / "ny.swf")
    args = ["run", "--trace", str(trace), "--policy", "fcfs", "--window", "2001-09-12", "2001-09-14"]
    assert main([*args, "--warmup", "1", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert (
        "o2ksim: note: --window dates read in America/New_York (the trace header's TimeZoneString): "
        "[2001-09-12 00:00 EDT, 2001-09-14 00:00 EDT)"
    ) in err
    # the window starts at 2001-09-12 04:00 UTC = 80,000 + 2 x 86,400 + 14,400 s = 267,200 s;
    # a day earlier, 180,800 s: jobs 0 .. 8 (one every 6 h) are submitted before
    start = MIDNIGHT_UTC + 2 * 86400 + 4 * 3600
    before = len([i for i in range(40) if 21600 * i < start - 86400])
    assert before == 9
    assert f"--window: {before} job(s) submitted before 2001-09-11 00:00 EDT (window start - warm-up of 1d)" in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["window_zone"] == "America/New_York"
    # analysed: the jobs submitted in [2001-09-12 04:00 UTC, 2001-09-14 04:00 UTC): 13 .. 20
    assert summary["jobs"] == len([i for i in range(40) if start <= 21600 * i < start + 2 * 86400]) == 8


def test_an_empty_window_is_refused_in_dates(tmp_path, capsys):
    trace = _trace(tmp_path / "ny.swf")
    assert main(["run", "--trace", str(trace), "--window", "2002-01-01", "2002-01-02"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "o2ksim: error: --window 2002-01-01 2002-01-02: no job of the trace is submitted in "
        "[2002-01-01, 2002-01-02) (its jobs are submitted from "
        "2001-09-08 21:46:40 EDT to 2001-09-18 15:46:40 EDT); dates read in America/New_York "
        "(the trace header's TimeZoneString)"
    )


def test_durations_stay_durations(tmp_path, capsys):
    trace = _trace(tmp_path / "ny.swf")
    assert main(["run", "--trace", str(trace), "--policy", "fcfs", "--window", "3d", "5d", "--warmup", "1"]) == 0
    err = capsys.readouterr().err
    assert "dates read in" not in err
    assert "submitted before 2d after the trace start (window start - warm-up of 1d)" in err


def test_a_scenario_window_reads_dates_in_the_header_zone_too(tmp_path):
    """A scenario's ``[protocol] window`` goes through the same reading as ``--window``."""
    from o2ksim.run.config import RunConfig

    trace = _trace(tmp_path / "ny.swf")
    config = RunConfig.from_dict(
        {
            "machine": None,
            "workload": {"trace": str(trace)},
            "policy": {"name": "fcfs"},
            "protocol": {"window": ["2001-09-12", "2001-09-14"], "warmup": 0},
        }
    )
    start = MIDNIGHT_UTC + 2 * 86400 + 4 * 3600  # 2001-09-12 00:00 EDT
    assert (config.window.start, config.window.end) == (start, start + 2 * 86400)


@pytest.mark.parametrize(
    ("window", "needle"),
    [
        (["2001-09-14", "2001-09-12"], "must be after its start"),  # reversed
        (["2001-09-12", "2001-09-12"], "must be after its start"),  # empty
        (["2005-01-01", "2005-02-01"], "no job of the trace is submitted in [2005-01-01, 2005-02-01)"),
        (["1000d", "2000d"], "no job is submitted in the window"),  # beyond, in durations
    ],
)
def test_a_scenario_window_that_selects_nothing_is_refused_before_anything_runs(
    tmp_path, capsys, window, needle
):
    """Found again by the issue-27 audit: a dated window (read against the trace header, so
    not checked when the file is loaded) or one beyond the trace created the results folder,
    stored a failed run and exited 1.  Now: exit 2, one line naming file and field, no folder."""
    trace = _trace(tmp_path / "ny.swf")
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        f'name = "s"\npolicies = ["fcfs"]\n[workload]\ntrace = "{trace}"\n'
        f"[protocol]\nwindow = {json.dumps(window)}\nwarmup = 0\n"
    )
    out = tmp_path / "res"
    capsys.readouterr()
    assert main(["scenario", "run", str(scenario), "--out", str(out), "-q", "-j", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{scenario}: field protocol.window" in err[0] and needle in err[0]
    assert not out.exists()


def test_a_window_reaching_past_the_trace_is_said(tmp_path, capsys):
    """Found by the issue-27 audit: KTH-SP2 --window 1997-08-25 1997-12-01 reported
    utilisation 0.024 over 98 days for a trace whose last job comes 4 days into the window.
    The hand-made trace submits 40 jobs 6 h apart from 2001-09-09 01:46:40 UTC: the last one
    at 01:46:40 + 39 x 6 h = 2001-09-18 19:46:40 UTC, 15:46:40 EDT."""
    trace = _trace(tmp_path / "ny.swf")
    args = ["run", "--trace", str(trace), "--policy", "fcfs", "--window", "2001-09-12", "2001-10-12"]
    assert main(args) == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if "stretch without arrivals" in ln]
    gap = (30 - 6) * 86400 - (15 * 3600 + 46 * 60 + 40)  # 2001-09-18 15:46:40 to 2001-10-12 EDT
    assert err == [
        "o2ksim: warning: --window: the trace's last job is submitted at 2001-09-18 15:46:40 "
        f"EDT, {gap / 86400:.3g}d before the window's end; the window's measures (utilisation) "
        "count that stretch without arrivals"
    ]
    assert main([*args[:-2], "2001-09-12", "2001-09-18"]) == 0  # inside the trace: no warning
    assert "stretch without arrivals" not in capsys.readouterr().err


def test_the_api_records_the_zone_of_its_window_dates(tmp_path):
    """Found by the session-13 audit: ``simulate(window=dates)`` read them in the header's
    zone but said so nowhere (the CLI alone wrote ``window_zone``)."""
    from o2ksim import simulate

    trace = _trace(tmp_path / "ny.swf")
    dated = simulate(trace, policy="fcfs", window=("2001-09-12", "2001-09-14", "1d"))
    assert dated.summary["window_zone"] == "America/New_York"
    start = MIDNIGHT_UTC + 2 * 86400 + 4 * 3600  # 2001-09-12 00:00 EDT, worked out above
    assert dated.config["window"][:2] == [start, start + 2 * 86400]
    assert "window_zone" not in simulate(trace, policy="fcfs", window=("3d", "5d", "1d")).summary
