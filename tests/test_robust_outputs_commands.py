"""Outputs of the other commands written safely (issue 27, second audit).

``o2ksim characterize --out``, ``o2ksim report``, ``o2ksim scenario run`` and
``o2ksim generate`` get what ``o2ksim run --out`` has (tests/test_robust_outputs.py):
the folder claimed, every file staged and committed together, a rerun that
replaces the whole earlier result, a full disk or SIGINT/SIGTERM that leaves
nothing new and says so in one line (exit 2 / 128 + signal number).  Faults
are injected (ENOSPC half-way through a file, the handler's exception where the
signal would land) or real signals sent to a subprocess.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import folder_held_elsewhere, one_line, signal_once_locked, snapshot
from matplotlib.figure import Figure

from o2ksim import outfiles
from o2ksim.cli import main
from o2ksim.folder_lock import LOCK_NAME
from o2ksim.outfiles import Staging, claim

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
KTH = str(ROOT / "traces" / "kth-sp2-sample.swf")
SCENARIO = str(ROOT / "scenarios" / "explain-backfill.toml")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
FULL = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def cpu_seconds(pid: int) -> float:
    """The processor time a (Linux) process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("inf")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def temporary_files(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if "tmp" in p.name]


def fail_figure(monkeypatch, nth: int, error: BaseException) -> None:
    """The ``nth`` figure written (PNG or SVG, any command) is cut half-way by ``error``."""
    real = Figure.savefig
    calls = {"n": 0}

    def savefig(self, fname, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == nth:
            Path(fname).write_bytes(b"\x89PNG half")
            raise error
        return real(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)


# ------------------------------------------------------------------ o2ksim characterize --out
def test_a_characterisation_rerun_replaces_every_earlier_file_and_says_which(tmp_path, capsys):
    """Found by the audit: tiny.swf's memory.csv, memory.png and memory_by_procs.csv stayed
    beside the KTH characterisation, which has no memory requests, without a word."""
    out = tmp_path / "chr"
    assert main(["characterize", TINY, "--out", str(out), "--no-fits"]) == 0
    first = {p.name for p in out.iterdir()}
    assert {"memory.csv", "memory.png", "memory_by_procs.csv", "summary.csv"} <= first
    capsys.readouterr()
    assert main(["characterize", KTH, "--out", str(out), "--no-fits"]) == 0
    said = capsys.readouterr().out.strip().splitlines()[-1]
    assert said.endswith(
        "replacing an earlier characterisation's files (removed memory.csv, memory.png, "
        "memory_by_procs.csv, which this characterisation does not write)"
    ), said
    second = {p.name for p in out.iterdir()}
    assert not second & {"memory.csv", "memory.png", "memory_by_procs.csv"}
    from o2ksim.workloads.characterize import FIGURE_FILES, TABLE_FILES  # what a rerun replaces

    assert first <= {*TABLE_FILES, *FIGURE_FILES} and second <= {*TABLE_FILES, *FIGURE_FILES}
    assert f"{len(second)} files written to {out}/" in said


def test_a_full_disk_during_a_characterisation_leaves_nothing_new(tmp_path, monkeypatch, capsys):
    """Found by the audit: on a full disk it said "nothing was written" and left ten
    complete-looking files, summary.csv among them."""
    out = tmp_path / "chr"
    assert main(["characterize", TINY, "--out", str(out), "--no-fits", "--no-figures"]) == 0
    before = snapshot(out)
    fail_figure(monkeypatch, 3, FULL)
    capsys.readouterr()
    assert main(["characterize", KTH, "--out", str(out), "--no-fits"]) == 2
    line = one_line(capsys.readouterr().err)
    assert str(out) in line and "No space left on device" in line and "nothing new" in line
    assert snapshot(out) == before  # the earlier tables, untouched; no temporary file
    new = tmp_path / "new"
    fail_figure(monkeypatch, 3, FULL)
    assert main(["characterize", KTH, "--out", str(new), "--no-fits"]) == 2
    assert not new.exists()  # the folder made for it is removed again


def test_an_interrupted_characterisation_leaves_nothing_new(tmp_path, monkeypatch, capsys):
    out = tmp_path / "chr"
    assert main(["characterize", TINY, "--out", str(out), "--no-fits"]) == 0
    before = snapshot(out)
    fail_figure(monkeypatch, 2, outfiles.Signalled(signal.SIGTERM))  # where the handler raises
    capsys.readouterr()
    assert main(["characterize", KTH, "--out", str(out), "--no-fits"]) == 143
    line = one_line(capsys.readouterr().err)
    assert f"interrupted by SIGTERM; nothing new was written to {out}/" in line
    assert snapshot(out) == before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_a_characterisation_is_one_line_and_leaves_the_earlier_files(tmp_path, sig):
    out = tmp_path / "chr"
    assert main(["characterize", TINY, "--out", str(out), "--no-fits", "--no-figures"]) == 0
    before = snapshot(out)
    proc = subprocess.Popen(
        [sys.executable, "-m", "o2ksim", "characterize", KTH, "--out", str(out)],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    err = signal_once_locked(proc, out, sig, wait=20)
    name = signal.Signals(sig).name
    assert f"interrupted by {name}; nothing new was written to {out}/" in one_line(err)
    assert snapshot(out) == before


def test_a_characterisation_folder_held_by_another_process_is_refused(tmp_path):
    out = tmp_path / "held"
    with folder_held_elsewhere(out, ENV) as pid:
        run = subprocess.run(
            [sys.executable, "-m", "o2ksim", "characterize", TINY, "--out", str(out), "--no-fits"],
            env=ENV, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert run.returncode == 2, run.stderr
        line = one_line(run.stderr)
        assert str(out) in line and f"in use by another o2ksim process (pid {pid})" in line
        assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]


def test_a_characterisation_commit_cut_by_kill_9_is_undone_by_the_next_claim(tmp_path, monkeypatch):
    """The journal names the new files: a cut commit of any kind (not only a run's) is undone,
    never left as a mixture of two characterisations."""
    family = ("summary.csv", "memory.csv", "periods.csv", "runtime.png")
    (tmp_path / "summary.csv").write_text("old summary")
    (tmp_path / "memory.csv").write_text("old memory")
    before = snapshot(tmp_path)

    class Killed(BaseException):
        pass

    real = os.replace
    calls = {"n": 0}

    def replace(src, dst):
        calls["n"] += 1
        if calls["n"] == 4:  # two earlier files out, one new one in: the process dies
            raise Killed
        return real(src, dst)

    staged = Staging(tmp_path, family=family)
    for name in ("periods.csv", "runtime.png", "summary.csv"):
        staged.path(name).write_text("new")
    monkeypatch.setattr(outfiles.os, "replace", replace)
    with pytest.raises(Killed):
        staged.commit()
    monkeypatch.setattr(outfiles.os, "replace", real)
    assert (tmp_path / ".o2ksim-previous").is_dir()  # what kill -9 leaves
    with claim(tmp_path):
        pass
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------------ o2ksim report
@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    out = tmp_path / "sweep"
    assert main(["scenario", "run", SCENARIO, "--out", str(out), "-q", "--no-report"]) == 0
    return out


def planted_report(sweep: Path) -> Path:
    """An earlier report, recognisable byte for byte."""
    report = sweep / "report"
    (report / "figures").mkdir(parents=True)
    (report / "tables").mkdir()
    (report / "report.html").write_text("<p>the earlier report</p>")
    (report / "figures" / "overall.png").write_bytes(b"earlier figure")
    (report / "figures" / "stale.png").write_bytes(b"a figure the new report does not draw")
    (report / "tables" / "runs.csv").write_text("earlier table\n")
    return report


def test_a_report_rerun_replaces_the_earlier_report_entirely(sweep, capsys):
    report = planted_report(sweep)
    assert main(["report", str(sweep), "-q"]) == 0
    assert not (report / "figures" / "stale.png").exists()
    assert (report / "figures" / "overall.png").read_bytes() != b"earlier figure"
    assert "the earlier report" not in (report / "report.html").read_text()
    assert sorted(p.name for p in report.iterdir()) == ["figures", "report.html", "tables"]


def test_a_full_disk_during_a_report_leaves_the_earlier_report(sweep, monkeypatch, capsys):
    """Found by the audit: the report was rewritten in place, file by file, so a failure left
    the earlier report.html beside some new figures and tables."""
    report = planted_report(sweep)
    before = snapshot(report)
    fail_figure(monkeypatch, 5, FULL)
    capsys.readouterr()
    assert main(["report", str(sweep)]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"{report}: cannot write the report (No space left on device); nothing new" in line
    assert snapshot(report) == before


def test_an_interrupted_report_leaves_the_earlier_report(sweep, monkeypatch, capsys):
    report = planted_report(sweep)
    before = snapshot(report)
    fail_figure(monkeypatch, 5, outfiles.Signalled(signal.SIGINT))
    capsys.readouterr()
    assert main(["report", str(sweep), "--out", str(report)]) == 130
    line = one_line(capsys.readouterr().err)
    assert f"interrupted by SIGINT; nothing new was written to {report}/" in line
    assert snapshot(report) == before


# ------------------------------------------------------------------ o2ksim scenario run
def test_a_full_disk_during_a_sweeps_report_leaves_no_half_report(tmp_path, monkeypatch, capsys):
    """Found by the audit: report/figures/ with two figures and no report.html remained."""
    out = tmp_path / "sweep"
    fail_figure(monkeypatch, 3, FULL)
    assert main(["scenario", "run", SCENARIO, "--out", str(out), "-q"]) == 2
    line = one_line(capsys.readouterr().err)
    assert "No space left on device" in line and f"the runs are stored in {out}/" in line
    assert f"`o2ksim report {out}`" in line
    assert not (out / "report").exists()
    assert not temporary_files(out)
    monkeypatch.undo()
    assert main(["report", str(out), "-q"]) == 0  # the runs were stored: the report can follow
    assert (out / "report" / "report.html").exists()


def test_an_interrupt_during_a_sweeps_report_is_one_line(tmp_path, monkeypatch, capsys):
    """Found by the audit: SIGINT printed only "o2ksim: interrupted"; a `report/` holding only
    `figures/` and stray `.X.png.PID.HASH.tmp` files could remain."""
    out = tmp_path / "sweep"
    fail_figure(monkeypatch, 3, outfiles.Signalled(signal.SIGTERM))
    assert main(["scenario", "run", SCENARIO, "--out", str(out), "-q"]) == 143
    line = one_line(capsys.readouterr().err)
    assert line.startswith("o2ksim: error: interrupted by SIGTERM while writing the report; ")
    assert f"the runs are stored in {out}/" in line
    assert not (out / "report").exists()
    assert not temporary_files(out)


def long_scenario(tmp_path: Path) -> Path:
    """Eight generated 60-day runs: a second or two each."""
    path = tmp_path / "long.toml"
    path.write_text(
        'name = "long"\ndescription = "interrupted"\nmachine = "o2k"\n'
        'policies = ["fcfs", "fcfs-backfill", "sjf-backfill", "lxf-backfill"]\n'
        '[workload]\nmodel = "o2k"\nspan = "60d"\n[protocol]\nseeds = [1, 2]\n'
    )
    return path


@pytest.mark.parametrize(("sig", "workers"), [(signal.SIGTERM, 1), (signal.SIGTERM, 2), (signal.SIGINT, 1)])
def test_a_signal_mid_sweep_says_what_is_stored_and_the_sweep_resumes(tmp_path, sig, workers):
    """Found by the audit: SIGTERM killed a sweep in silence, SIGINT printed "o2ksim:
    interrupted"; stray runs/.tmp-* folders could remain.  Now one line, exit 128 + signal,
    finished runs kept (the next sweep skips them) and a pool's workers not waited for."""
    out = tmp_path / "sweep"
    proc = subprocess.Popen(
        [sys.executable, "-m", "o2ksim", "scenario", "run", str(long_scenario(tmp_path)),
         "--out", str(out), "-q", "-j", str(workers)],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    runs = out / "runs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        runs.is_dir() and any(not p.name.startswith(".") for p in runs.iterdir())
    ):
        time.sleep(0.02)
    proc.send_signal(sig)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 10  # the runs under way are not waited for
    assert proc.returncode == 128 + sig, err
    line = one_line(err)
    assert (
        f"interrupted by {signal.Signals(sig).name}; the runs finished before it are stored in "
        f"{out}/" in line
    ), line
    assert "run the same command again to resume" in line
    stored = [p for p in runs.iterdir() if not p.name.startswith(".")]
    assert stored and not [p for p in runs.iterdir() if p.name.startswith(".tmp-")]
    assert not (out / "report").exists()
    again = subprocess.run(
        [sys.executable, "-m", "o2ksim", "scenario", "run", str(tmp_path / "long.toml"),
         "--out", str(out), "--no-report", "-j", "1"],
        env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert f"8 run(s); {len(stored)} already finished" in again.stdout


# ------------------------------------------------------------------ o2ksim generate
def test_an_interrupted_generate_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from o2ksim.cli import generate as generate_cli

    def interrupted(*_a, **_k):
        raise outfiles.Signalled(signal.SIGTERM)

    monkeypatch.setattr(generate_cli.models, "generate", interrupted)
    out = tmp_path / "month.swf"
    assert main(["generate", "--span", "1d", "--out", str(out)]) == 143
    line = one_line(capsys.readouterr().err)
    assert f"interrupted by SIGTERM; nothing was written to {out}" in line
    assert list(tmp_path.iterdir()) == []


def test_sigterm_to_generate_is_one_line_not_silence(tmp_path):
    """Found by the audit: SIGTERM killed `o2ksim generate` without a word (exit -15)."""
    out = tmp_path / "years.swf"
    proc = subprocess.Popen(
        [sys.executable, "-m", "o2ksim", "generate", "--span", "3600d", "--out", str(out)],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    # imported (half a second of CPU) and generating (ten years take about five seconds)
    while cpu_seconds(proc.pid) < 1.5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert f"interrupted by SIGTERM; nothing was written to {out}" in one_line(err)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ every command
def sigterm_caught(pid: int) -> bool:
    """Whether the (Linux) process has a handler for SIGTERM (bit 15 of its SigCgt mask)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) >> (signal.SIGTERM - 1) & 1)


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{fifo}", "--machine", "kth-sp2", "--out", "{out}"],
        ["predict", "{fifo}", "--out", "{out}"],
        ["fit", "{fifo}", "--out", "{out}.toml"],
        ["characterize", "{fifo}"],
        ["trace", "convert", "{fifo}", "{out}.swf"],
        ["trace", "check", "{fifo}"],
    ],
    ids=lambda c: " ".join(c[:2]) if c[0] == "trace" else c[0],
)
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_sigterm_to_any_command_is_one_line_and_leaves_no_files(tmp_path, command):
    """Found by the second audit: ``predict``, ``validate`` and the others died of SIGTERM
    without a word.  The trace is a named pipe nobody writes to, so the command is sure to
    be reading it when the signal comes; it is sent once the command has a handler."""
    fifo = tmp_path / "trace.swf"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    args = [a.format(fifo=fifo, out=out) for a in command]
    proc = subprocess.Popen([sys.executable, "-m", "o2ksim", *args], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 30
    while not sigterm_caught(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    said = one_line(err)  # validate, which holds its folder from the start, says it is untouched
    assert said == "o2ksim: error: interrupted by SIGTERM" or said.startswith(
        f"o2ksim: error: interrupted by SIGTERM; nothing new was written to {out}/"
    ), said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.swf"]  # nothing written
