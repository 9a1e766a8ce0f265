"""Jobs cancelled without running (SWF status 5, run time 0), said on screen (issue 27, D15).

The Parallel Workloads Archive keeps them as submitted jobs (CEA-Curie has 14,730);
o2ksim simulates them as jobs of 0 seconds, which start and end at once.  That was
silent: ``completed 4`` with 0-second runtimes and no word.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from o2ksim.cli import main

LINES = """\
; MaxProcs: 16
1    0    0 3600  8 3420 200000  8  7200  262144 1 1 1 1 1 1 -1 -1
2   60   10    0  0   -1     -1  4  3600  131072 5 2 1 2 1 1 -1 -1
3  300   20    0 -1   -1     -1 16 10800  524288 5 3 2 3 1 1 -1 -1
4  900    0  600  2  580  60000  2  1800   65536 5 1 1 4 1 1 -1 -1
5 1200    5    0  1   -1     -1  1   900   32768 5 4 2 5 1 1 -1 -1
"""
# status 5 and run time 0: jobs 2, 3, 5 (job 4 was cancelled while running, for 600 s);
# of these, 2 and 3 have no processor allocated (0, -1): cancelled before they started
NOTE = "3 of 5 jobs were cancelled without running (status 5, run time 0; 2 of them never got a processor)"


def _trace(tmp_path: Path) -> Path:
    path = tmp_path / "cancelled.swf"
    path.write_text(LINES)
    return path


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if "cancelled without running" in line]


def test_run_says_how_many_and_how_they_are_simulated(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", "--trace", str(_trace(tmp_path)), "--out", str(out)]) == 0
    notes = _notes(capsys.readouterr().err)
    assert len(notes) == 1 and NOTE in notes[0] and notes[0].startswith("o2ksim: note: ")
    jobs = pd.read_csv(out / "jobs.csv").set_index("job_id")
    for j in (2, 3, 5):  # what the note says: 0 seconds, completed
        assert jobs.loc[j, "status"] == "completed" and jobs.loc[j, "end"] == jobs.loc[j, "start"]


def test_validate_says_it_too(tmp_path, capsys):
    assert main(["validate", str(_trace(tmp_path))]) == 0
    notes = _notes(capsys.readouterr().err)
    assert len(notes) == 1 and NOTE in notes[0]


def test_quiet_and_refusals_stay_silent_about_it(tmp_path, capsys):
    trace = str(_trace(tmp_path))
    assert main(["run", "--trace", trace, "-q"]) == 0
    assert _notes(capsys.readouterr().err) == []
    assert main(["run", "--trace", trace, "--policy", "no-such-policy"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "no-such-policy" in err[0]
