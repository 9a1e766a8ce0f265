"""Single output files: never the input, never a stored result's file, in the format named,
written whole (issue-27 audit, D5, D6, D25).

What the careful tools do: ``cp a a`` and ``sort -o`` refuse or guard the same file
(``os.path.samefile``: device and inode, through symbolic and hard links); a figure
is written in the format its extension names, or refused in one line before the work.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path

import pytest
from conftest import one_line, snapshot
from matplotlib.figure import Figure

from o2ksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
KTH = ROOT / "traces" / "kth-sp2-sample.swf"
SCENARIO = "explain-backfill"


def refused(argv: list[str], capsys) -> str:
    """Run ``argv``: exit 2 and one line on stderr (returned), nothing on stdout (the work
    did not begin: explain prints its decisions, fit its parameters, convert a count)."""
    capsys.readouterr()
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "", out
    return one_line(err)


# ------------------------------------------------------------------ D6: output = input
@pytest.mark.parametrize("how", ["same name", "symbolic link", "hard link"])
def test_trace_convert_never_writes_over_its_input(tmp_path, how, capsys):
    """D6: `trace convert same.swf same.swf --limit 10` left 10 of the 2,000 jobs."""
    src = tmp_path / "same.swf"
    shutil.copy(KTH, src)
    out = {"same name": src, "symbolic link": tmp_path / "link.swf", "hard link": tmp_path / "hard.swf"}[how]
    if how == "symbolic link":
        out.symlink_to(src.name)
    elif how == "hard link":
        os.link(src, out)
    before = snapshot(tmp_path)
    line = refused(["trace", "convert", str(src), str(out), "--limit", "10"], capsys)
    assert line == (
        f"o2ksim: error: OUT {out}: is the input {src}; writing there would destroy it: "
        "give another file name"
    )
    assert snapshot(tmp_path) == before


def test_fit_never_writes_its_parameters_over_the_trace(tmp_path, capsys):
    """D6: `fit same.swf --out same.swf` replaced the trace with a TOML parameter file."""
    src = tmp_path / "same.swf"
    shutil.copy(KTH, src)
    line = refused(["fit", str(src), "--out", str(src)], capsys)
    assert f"--out {src}: is the input {src}; writing there would destroy it" in line
    assert src.read_bytes() == KTH.read_bytes()


def test_generate_never_writes_over_its_parameter_file(tmp_path, capsys):
    params = tmp_path / "p.toml"
    assert main(["fit", str(KTH), "--out", str(params)]) == 0
    before = params.read_bytes()
    line = refused(["generate", "--params", str(params), "--out", str(params)], capsys)
    assert f"--out {params}: is the input {params}; writing there would destroy it" in line
    assert params.read_bytes() == before


def test_play_never_writes_over_its_scenario(tmp_path, capsys):
    scenario = tmp_path / "s.toml"
    shutil.copy(ROOT / "scenarios" / f"{SCENARIO}.toml", scenario)
    line = refused(["play", str(scenario), "-o", str(scenario)], capsys)
    assert f"-o {scenario}: is the input {scenario}" in line
    assert scenario.read_bytes() == (ROOT / "scenarios" / f"{SCENARIO}.toml").read_bytes()


# ------------------------------------------------------------------ D25: gantt -o
@pytest.mark.parametrize(
    ("name", "magic"), [("g.png", b"\x89PNG"), ("g.svg", b"<svg"), ("g.pdf", b"%PDF")]
)
def test_gantt_writes_the_format_its_extension_names(tmp_path, name, magic, capsys):
    """D25: -o g.svg and -o g.jpg wrote PNG bytes."""
    out = tmp_path / name
    assert main(["gantt", SCENARIO, "-o", str(out)]) == 0
    data = out.read_bytes()
    assert (data.startswith(magic) if magic != b"<svg" else magic in data[:1000]), data[:40]


@pytest.mark.parametrize("name", ["g.toml", "g.jpg", "noext"])
def test_gantt_refuses_an_extension_that_names_no_figure_format(tmp_path, name, capsys):
    out = tmp_path / name
    line = refused(["gantt", SCENARIO, "-o", str(out)], capsys)
    assert line.startswith(f"o2ksim: error: -o {out}: cannot draw a figure as ")
    assert line.endswith("give a name ending in .png, .svg or .pdf")
    assert list(tmp_path.iterdir()) == []


def test_gantt_never_writes_over_a_stored_results_file(tmp_path, capsys):
    """D25: `gantt rr -o rr/run.json` replaced the run's run.json with a PNG."""
    run = tmp_path / "rr"
    assert main(["run", "--trace", TINY, "--out", str(run), "--report", "-q"]) == 0
    before = snapshot(run)
    for name in ("run.json", "jobs.csv", "summary.json"):
        line = refused(["gantt", str(run), "-o", str(run / name)], capsys)
        assert line == (
            f"o2ksim: error: -o {run / name}: is a file of the results of `o2ksim run` in "
            f"{run}; writing there would destroy it: give another file name"
        )
    assert snapshot(run) == before


# ------------------------------------------------------------------ D5: explain --gantt
@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("x.toml", "cannot draw a figure as a .toml file"),
        ("noext", "cannot draw a figure as a name without an extension"),
        ("nodir/x.png", "the folder {d}/nodir does not exist"),
        ("adir", "is a folder; give a file name"),
        ("scenario.toml", "is the input {d}/scenario.toml"),
    ],
)
def test_explain_checks_its_gantt_path_before_the_run(tmp_path, name, said, capsys):
    """D5: tracebacks (FileNotFoundError, ValueError) after the whole run, or a chart written
    to noext.png / adir.png while the line named noext / adir."""
    (tmp_path / "adir").mkdir()
    scenario = tmp_path / "scenario.toml"
    shutil.copy(ROOT / "scenarios" / f"{SCENARIO}.toml", scenario)
    before = snapshot(tmp_path)
    line = refused(["explain", str(scenario), "--gantt", str(tmp_path / name)], capsys)
    assert line.startswith(f"o2ksim: error: --gantt {tmp_path / name}: ")
    assert said.format(d=tmp_path) in line, line
    assert snapshot(tmp_path) == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "adir",
        "scenario.toml",
    ]


@pytest.mark.parametrize("name", ["x.png", "x.svg"])
def test_explain_writes_the_chart_it_names(tmp_path, name, capsys):
    out = tmp_path / name
    assert main(["explain", SCENARIO, "--gantt", str(out)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"# Gantt chart: {out}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_explain_gantt_on_a_full_disk_leaves_the_earlier_chart(tmp_path, monkeypatch, capsys):
    """D5: a full disk was a traceback (OSError: [Errno 28]), exit 1, and a truncated x.png."""
    out = tmp_path / "x.png"
    out.write_bytes(b"earlier chart")

    def full(self, fname, *args, **kwargs):
        Path(fname).write_bytes(b"\x89PNG half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Figure, "savefig", full)
    capsys.readouterr()
    assert main(["explain", SCENARIO, "--gantt", str(out)]) == 2
    line = one_line(capsys.readouterr().err)
    assert line == (
        f"o2ksim: error: {out}: cannot write there (No space left on device); nothing was written"
    )
    assert snapshot(tmp_path) == {"x.png": b"earlier chart"}


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_explain_gantt_into_a_device_writes_into_it(capsys):
    """D5: `--gantt /dev/full` created a regular file /dev/full.png and exited 0."""
    assert main(["explain", SCENARIO, "--gantt", "/dev/full"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line == "o2ksim: error: /dev/full: cannot write there (No space left on device)"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode) and not Path("/dev/full.png").exists()
