"""Offered load (``generate``) and utilisation (``run``) say what they are measured over (issue 27).

The tiny workload, worked by hand: one host of 4 processors; job 1 (2 processors,
100 s) at 0, job 2 (4 processors, 100 s) at 50.  Job 2 waits for job 1 and runs
from 100 to 200.  Work = 2 x 100 + 4 x 100 = 600 processor-seconds.
* offered load over the arrivals' span (50 s x n / (n - 1) = 100 s): 600 / (4 x 100) = 1.5;
* utilisation over first submit to last end (200 s): 600 / (4 x 200) = 0.75.
"""

from __future__ import annotations

import json
import re

import pytest

from o2ksim.cli import main
from o2ksim.workloads.reshape import offered_load
from o2ksim.workloads.swf import read_swf

JOBS = ["1  0 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1", "2 50 -1 100 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1"]


def test_load_and_utilisation_by_hand(tmp_path, capsys):
    trace = tmp_path / "two.swf"
    trace.write_text("; MaxProcs: 4\n" + "\n".join(JOBS) + "\n")
    assert offered_load(read_swf(trace)) == pytest.approx(1.5)
    assert main(["run", "--trace", str(trace), "--policy", "fcfs", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["utilisation"] == pytest.approx(0.75)
    assert summary["utilisation_span"] == 200.0
    assert "utilisation 0.750 (of 4 processors over 0.00231 days, first submit to last end)" in out


def test_generate_states_what_its_load_is(tmp_path, capsys):
    """The printed load is the SWF file's processors x runtime over processors x span, computed
    here from the file's numbers."""
    out = tmp_path / "m.swf"
    assert main(["generate", "--model", "o2k", "--span", "2d", "--seed", "3", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    rows = [ln.split() for ln in out.read_text().splitlines() if ln.strip() and not ln.startswith(";")]
    work = sum(max(int(r[7]) if int(r[7]) > 0 else int(r[4]), 0) * max(int(r[3]), 0) for r in rows)
    load = work / (960 * 2 * 86400)
    printed = float(re.search(r"offered load ([0-9.]+) of 960 processors", line).group(1))
    assert printed == pytest.approx(load, abs=5e-4)
    assert "of 960 processors over the 2 days of arrivals (a run states its utilisation over first submit to last end)" in line
