"""A ``--window`` that starts well before the trace's first job is said, as one that ends
well after its last one (issue 27, D7; the warning came with 71a8cd8, this pins the start).

The hand-made trace submits 40 jobs 6 h apart from 2001-09-09 01:46:40 UTC, on a New York
clock: the first one at 2001-09-08 21:46:40 EDT.
"""

from __future__ import annotations

from pathlib import Path

from o2ksim.cli import main

UNIX = 1_000_000_000  # 2001-09-09 01:46:40 UTC


def test_a_window_starting_before_the_trace_is_said(tmp_path: Path, capsys) -> None:
    lines = [f"; UnixStartTime: {UNIX}", "; TimeZoneString: America/New_York", "; MaxProcs: 4"]
    lines += [f"{i} {21600 * (i - 1)} 0 60 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1" for i in range(1, 41)]
    trace = tmp_path / "ny.swf"
    trace.write_text("\n".join(lines) + "\n")
    args = ["run", "--trace", str(trace), "--policy", "fcfs", "--window", "2001-09-01", "2001-09-12"]
    assert main(args) == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if "stretch without arrivals" in ln]
    gap = 7 * 86400 + 21 * 3600 + 46 * 60 + 40  # 2001-09-01 00:00 to 2001-09-08 21:46:40 EDT
    assert err == [
        "o2ksim: warning: --window: the trace's first job is submitted at 2001-09-08 21:46:40 "
        f"EDT, {gap / 86400:.3g}d after the window's start; the window's measures (utilisation) "
        "count that stretch without arrivals"
    ]
