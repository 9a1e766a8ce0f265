"""``o2ksim report DIR`` and ``o2ksim gantt DIR`` on a folder written by ``o2ksim run --out DIR``.

With ``--report`` the run is stored as a one-run results directory in
``DIR/results``: both commands read it from ``DIR``.  Without it the folder
holds no allocation segments: ``report`` refuses in one line naming the flag
to add; ``gantt`` simulates the run again from ``run.json`` (and refuses like
``report`` when ``run.json`` has no replay configuration).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from o2ksim.cli import main

REPO = Path(__file__).resolve().parents[1]
SWF = """; MaxProcs: 4
1 0 0 600 2 -1 -1 2 600 -1 1 1 1 -1 1 -1 -1 -1
2 60 0 300 4 -1 -1 4 600 -1 1 1 1 -1 1 -1 -1 -1
3 120 0 300 2 -1 -1 2 300 -1 1 1 1 -1 1 -1 -1 -1
"""


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.swf"
    p.write_text(SWF)
    return p


def test_run_out_without_report_names_the_flag(tmp_path, trace, capsys):
    out = tmp_path / "run"
    assert main(["run", "--trace", str(trace), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "add --report to that `o2ksim run` command" in err and str(out) in err
    assert f"o2ksim report {out}" in err
    # the Gantt chart simulates the run again from run.json (its replay configuration)
    png = tmp_path / "g.png"
    assert main(["gantt", str(out), "-o", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    # without the replay configuration (an older o2ksim): the flag to add, as before
    meta = json.loads((out / "run.json").read_text())
    del meta["replay"]
    (out / "run.json").write_text(json.dumps(meta))
    assert main(["gantt", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "add --report to that `o2ksim run` command" in err and f"o2ksim gantt {out}" in err


def test_run_out_with_report(tmp_path, trace, capsys):
    out = tmp_path / "run"
    assert main(["run", "--trace", str(trace), "--out", str(out), "--report"]) == 0
    (out / "report").rename(out / "first-report")
    assert main(["report", str(out), "-q"]) == 0
    assert (out / "report" / "report.html").exists()  # next to the run, not under results/
    png = tmp_path / "g.png"
    assert main(["gantt", str(out), "-o", str(png)]) == 0
    assert png.stat().st_size > 1000
    assert "Gantt chart" in capsys.readouterr().out


def test_a_host_whose_name_has_a_comma(tmp_path, capsys):
    """A machine sized from a trace header is named after its Computer line, commas and all
    (spaces become dashes): ``--host NAME`` names it exactly; ``--hosts``, which splits at
    commas, is refused in one line that says so (issue 27, fourth audit)."""
    trace = tmp_path / "comma.swf"
    trace.write_text("; Computer: one box, 4 processors\n" + SWF)
    out = tmp_path / "run"
    assert main(["run", "--trace", str(trace), "--out", str(out), "-q"]) == 0
    name = "one-box,-4-processors"  # the Computer line with its spaces made dashes
    png = tmp_path / "g.png"
    assert main(["gantt", str(out), "--host", name, "-o", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    png.unlink()
    assert main(["gantt", str(out), "--hosts", name, "-o", str(png)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "'one-box'" in lines[0] and "--host NAME" in lines[0]
    assert not png.exists()
