"""``o2ksim report DIR`` and ``o2ksim gantt DIR`` on a folder written by ``o2ksim run --out DIR``.

With ``--report`` the run is stored as a one-run results directory in
``DIR/results``: both commands read it from ``DIR``.  Without it the folder
holds no allocation segments: ``report`` refuses in one line naming the flag
to add; ``gantt`` simulates the run again from ``run.json`` (and refuses like
``report`` when ``run.json`` has no replay configuration).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import folder_held_elsewhere, one_line, snapshot

from o2ksim.cli import main
from o2ksim.outfiles import JOURNAL_NAME

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
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


def _read_only(folder: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``o2ksim ARGV`` run with ``folder`` mounted read-only for it alone (a private mount
    namespace, as a shared read-only mount would be; root can write a folder without write
    permission, a read-only mount it cannot).  Skipped where namespaces are not allowed."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode:
        pytest.skip("no user and mount namespaces here (unshare -rm)")
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(folder), sys.executable, "-m", "o2ksim", *argv],
        env=ENV, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_a_read_only_run_folder_is_reported_elsewhere(tmp_path, trace):
    """``o2ksim report RUN --out ELSEWHERE`` only reads ``RUN``: a read-only one is reported
    (it was refused: "cannot write there (Read-only file system)", as the report claimed
    ``RUN`` like a writer; issue 27, L2), and left as it was; the report into ``RUN`` itself
    is refused in one line."""
    out = tmp_path / "run"
    assert main(["run", "--trace", str(trace), "--out", str(out), "--report", "-q"]) == 0
    before = snapshot(out)
    elsewhere = tmp_path / "elsewhere"
    done = _read_only(out, ["report", str(out), "--out", str(elsewhere), "-q"])
    assert (done.returncode, done.stderr) == (0, "")
    assert (elsewhere / "report.html").is_file()
    assert snapshot(out) == before
    refused = _read_only(out, ["report", str(out)])
    assert refused.returncode == 2
    assert one_line(refused.stderr) == f"o2ksim: error: {out}: cannot write there (Read-only file system)"
    assert snapshot(out) == before


def test_a_read_only_run_folder_being_written_is_not_reported(tmp_path, trace):
    """Read-only here, writable elsewhere: a writer holding ``RUN`` (its lock file) is
    respected, and a commit cut short there, which only a writer can finish, is refused:
    one line each, nothing written elsewhere."""
    out = tmp_path / "run"
    assert main(["run", "--trace", str(trace), "--out", str(out), "--report", "-q"]) == 0
    elsewhere = tmp_path / "elsewhere"
    with folder_held_elsewhere(out, ENV) as pid:
        refused = _read_only(out, ["report", str(out), "--out", str(elsewhere)])
    assert refused.returncode == 2
    assert f"{out}: in use by another o2ksim process (pid {pid})" in one_line(refused.stderr)
    (out / JOURNAL_NAME).mkdir()  # what a writer killed while committing leaves
    refused = _read_only(out, ["report", str(out), "--out", str(elsewhere)])
    assert refused.returncode == 2
    assert f"{out}: holds a commit cut short ({JOURNAL_NAME}/)" in one_line(refused.stderr)
    assert not (elsewhere / "report.html").exists()


def test_a_read_only_results_directory_a_sweep_writes_is_not_reported(tmp_path, trace):
    """The results directory read (``RUN/results``, a sweep's): read-only here, its lock file
    cannot be opened to write, and it was read without it, though a sweep writing it through
    a path that can held it; it is now shared read-only, and the report refused."""
    out = tmp_path / "run"
    assert main(["run", "--trace", str(trace), "--out", str(out), "--report", "-q"]) == 0
    elsewhere = tmp_path / "elsewhere"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom pathlib import Path\nfrom o2ksim.experiments.sweep_lock import results_lock\n"
         "with results_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)",
         str(out / "results")],
        env=ENV, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        refused = _read_only(out, ["report", str(out), "--out", str(elsewhere)])
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode == 2
    assert f"a sweep (process {holder.pid}) is writing to this results directory" in one_line(refused.stderr)
    assert not (elsewhere / "report.html").exists()
