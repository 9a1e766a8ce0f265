"""One kind of result per folder (issue-27 audit, D2, D3, D4).

Each writing command (``run``, ``validate``, ``predict``, ``characterize``)
knows its own family of files (``o2ksim.outkinds``); a folder holding another
command's result, a sweep's run folder or a sweep's ``runs/`` is refused before
any work, in one line naming what it holds, and left as it was -- what git does
with a folder that is not empty.  ``validate --out`` claims its folder before
the replay and commits its figures and page with its tables.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import folder_held_elsewhere, one_line, signal_once_locked, snapshot
from matplotlib.figure import Figure

from o2ksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
KTH = str(ROOT / "traces" / "kth-sp2-sample.swf")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

WRITE = {
    "run": ["run", "--trace", KTH, "-q", "--out"],
    "validate": ["validate", KTH, "-q", "--out"],
    "predict": ["predict", KTH, "--out"],
    "characterize": ["characterize", KTH, "--no-fits", "--no-figures", "--out"],
}
"""Each writing command, its folder given last."""

SHOWN_BY = {  # a file only that command writes: what the refusal names
    "run": "run.json",
    "validate": "compared.csv",
    "predict": "clm.toml",
    "characterize": "jobs_per_hour.csv",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Path]:
    """One folder per writing command, holding that command's result."""
    base = tmp_path_factory.mktemp("kinds")
    out = {}
    for command, argv in WRITE.items():
        out[command] = base / command
        assert main([*argv, str(out[command])]) == 0
    return out


def no_work(monkeypatch) -> None:
    """Every command's work fails the test: a refusal must come before it."""
    from o2ksim.cli import characterize, predict, run, validate

    def work(args):
        raise AssertionError("the command started its work")

    for module in (run, validate, predict, characterize):
        monkeypatch.setattr(module, "_run", work)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("run", "predict"),  # D2 (a): predict replaced the run's summary.json
        ("predict", "run"),  # D2 (b): `report` then failed with KeyError: 'config'
        ("predict", "characterize"),  # D2 (c): summary.csv replaced, "characterisation's"
        ("validate", "run"),  # D2 (d): compared.csv left beside another run's jobs.csv
        ("run", "validate"),
        ("characterize", "predict"),
    ],
)
def test_a_folder_holding_another_commands_result_is_refused_before_any_work(
    results, first, second, monkeypatch, capsys
):
    folder = results[first]
    before = snapshot(folder)
    no_work(monkeypatch)
    capsys.readouterr()
    assert main([*WRITE[second], str(folder)]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"--out {folder}: holds the results of `o2ksim {first}`" in line, line
    assert SHOWN_BY[first] in line and "choose another folder" in line, line
    assert snapshot(folder) == before  # no lock file, no temporary file, nothing replaced


def test_the_same_command_still_replaces_its_own_earlier_result(results, capsys):
    folder = results["validate"]
    capsys.readouterr()
    assert main(["validate", KTH, "--out", str(folder)]) == 0
    said = capsys.readouterr().out.strip().splitlines()[-1]
    assert said.startswith(f"results written to {folder}/, replacing an earlier validation's files")


@pytest.mark.parametrize("first", ["validate", "predict", "characterize"])
def test_a_sweep_into_another_commands_result_is_refused(results, first, capsys):
    """Only a run's folder (run.json) was refused: a sweep replaced a prediction's or a
    characterisation's summary.csv with its own."""
    folder = results[first]
    before = snapshot(folder)
    scenario = str(ROOT / "scenarios" / "explain-backfill.toml")
    capsys.readouterr()
    assert main(["scenario", "run", scenario, "--out", str(folder), "-q", "--no-report"]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"{folder}: holds the results of `o2ksim {first}` (" in line, line
    assert "a sweep's files would be mixed with them" in line
    assert snapshot(folder) == before


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "sd"
    scenario = str(ROOT / "scenarios" / "explain-backfill.toml")
    assert main(["scenario", "run", scenario, "--out", str(out), "-j", "1", "--no-report", "-q"]) == 0
    return out


@pytest.mark.parametrize("command", sorted(WRITE))
@pytest.mark.parametrize("where", ["run", "runs"])
def test_a_sweeps_run_folder_is_refused_to_every_writing_command(
    sweep, command, where, monkeypatch, capsys
):
    """D4: `run --out SWEEP/runs/R` replaced R's summary.json; `report`, `scenario claims` and
    `gantt --run R` then failed with KeyError: 'status'."""
    runs = sweep / "runs"
    folder = next(runs.iterdir()) if where == "run" else runs
    before = snapshot(sweep)
    no_work(monkeypatch)
    capsys.readouterr()
    assert main([*WRITE[command], str(folder)]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"of the sweep in {sweep.resolve()}" in line and "would corrupt the sweep" in line, line
    assert snapshot(sweep) == before
    assert main(["scenario", "claims", str(sweep)]) == 0


# ------------------------------------------------------------------ D3: validate --out
@pytest.mark.parametrize("command", ["validate", "predict"])
def test_a_command_claims_its_folder_before_the_work(tmp_path, capsys, monkeypatch, command):
    """D3: `run --out cc` started during the first seconds of `validate --out cc` succeeded,
    and `run --out pp` while `predict --out pp` was fitting and simulating."""
    out = tmp_path / "out"
    out.mkdir()
    with folder_held_elsewhere(out, ENV) as pid:
        no_work(monkeypatch)
        assert main([command, KTH, "--out", str(out)]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"in use by another o2ksim process (pid {pid})" in line, line


def test_validate_commits_its_figures_and_page_with_its_tables(tmp_path, monkeypatch, capsys):
    """D3, full disk: the third figure cannot be written; the folder keeps the earlier
    validation whole (no table of the new one, no figure) and the message says so."""
    out = tmp_path / "v"
    assert main(["validate", TINY, "--out", str(out), "-q"]) == 0
    before = snapshot(out)
    assert {"validation.html", "validation-cdf.png", "run.json"} <= set(before)
    real, calls = Figure.savefig, {"n": 0}

    def savefig(self, fname, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            Path(fname).write_bytes(b"\x89PNG half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    capsys.readouterr()
    assert main(["validate", KTH, "--out", str(out), "-q"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.endswith("(No space left on device); nothing new was written there"), line
    assert snapshot(out) == before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_validate_interrupted_while_drawing_leaves_nothing_new(tmp_path, sig):
    """D3: a signal as soon as the first figure exists left run.json (the "complete" marker),
    the tables and one figure, without the page.  Now the figures are staged: the signal
    comes before the commit, and the folder holds nothing but what it held."""
    out = tmp_path / "vk"
    out.mkdir()
    code = (
        "import os, signal, sys\n"
        "from matplotlib.figure import Figure\n"
        "real = Figure.savefig\n"
        "def savefig(self, *a, **k):\n"
        "    real(self, *a, **k); os.kill(os.getpid(), int(sys.argv[1]))\n"
        "Figure.savefig = savefig\n"
        "from o2ksim.cli import main\n"
        "sys.exit(main(['validate', sys.argv[2], '--out', sys.argv[3], '-q']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(int(sig)), KTH, str(out)],
        env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 128 + sig, proc.stderr
    line = one_line(proc.stderr)
    assert f"nothing new was written to {out}/" in line, line
    assert snapshot(out) == {}


def test_a_signal_once_validate_holds_its_folder_ends_it_in_one_line(tmp_path):
    out = tmp_path / "vs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "o2ksim", "validate", KTH, "--out", str(out), "-q"],
        env=ENV, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    err = signal_once_locked(proc, out, signal.SIGTERM)
    assert "interrupted by SIGTERM; nothing new was written" in one_line(err)
    assert not out.exists() or snapshot(out) == {}


# ------------------------------------------------------------------ D23: report of failed runs
def test_the_report_of_a_sweep_whose_every_run_failed_says_so(tmp_path, capsys):
    """D23: `o2ksim report D` said `D/report: cannot write the report (No such file or
    directory)` -- the rename of a figures/ folder never made -- when every run had failed."""
    boom = tmp_path / "boom.py"  # a policy that fails at its first pass: every run fails
    boom.write_text(
        "from o2ksim.policies import Policy\n\n\nclass Boom(Policy):\n"
        "    def schedule(self, snap):\n        raise RuntimeError('boom')\n"
    )
    scenario = tmp_path / "fail.toml"
    scenario.write_text(
        f'name = "allfail"\npolicies = ["{boom}:Boom"]\n[workload]\ntrace = "{TINY}"\n'
    )
    out = tmp_path / "D"
    assert main(["scenario", "run", str(scenario), "--out", str(out), "-j", "1", "-q"]) == 1
    (failed,) = (out / "runs").iterdir()
    before = snapshot(out)
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    line = one_line(capsys.readouterr().err)
    assert line == (
        f"o2ksim: error: {out}: nothing to report: no run of the sweep finished (1 failed); "
        f"why: {failed / 'error.txt'}"
    ), line
    assert snapshot(out) == before and not (out / "report").exists()


# ------------------------------------------------------------------ folders mixed by earlier versions
def test_a_sweep_run_whose_summary_a_run_replaced_is_corrupt_not_a_keyerror(tmp_path, capsys):
    """D4, the folder an earlier o2ksim left: `report`, `scenario claims` failed with
    KeyError: 'status'.  The run is `corrupt` (simulated again by the next `scenario run`)."""
    scenario = str(ROOT / "scenarios" / "explain-backfill.toml")
    sd = tmp_path / "sd"
    assert main(["scenario", "run", scenario, "--out", str(sd), "-j", "1", "--no-report", "-q"]) == 0
    assert main(["run", "--trace", TINY, "--out", str(tmp_path / "r"), "-q"]) == 0
    (run,) = (sd / "runs").iterdir()
    (run / "summary.json").write_bytes((tmp_path / "r" / "summary.json").read_bytes())
    capsys.readouterr()
    assert main(["report", str(sd)]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"o2ksim: error: {sd}: nothing to report: no run of the sweep finished (1 corrupt)"
    )
    assert main(["scenario", "claims", str(sd)]) == 0
    assert main(["scenario", "run", scenario, "--out", str(sd), "-j", "1", "--no-report", "-q"]) == 0
    assert main(["report", str(sd), "-q"]) == 0  # simulated again: whole


def test_a_prediction_folder_with_a_runs_summary_is_one_line(tmp_path, capsys):
    """D2 (b), the folder an earlier o2ksim left: `report` failed with KeyError: 'config'."""
    pred = tmp_path / "mx2"
    assert main([*WRITE["predict"], str(pred)]) == 0
    assert main(["run", "--trace", TINY, "--out", str(tmp_path / "r"), "-q"]) == 0
    (pred / "summary.json").write_bytes((tmp_path / "r" / "summary.json").read_bytes())
    capsys.readouterr()
    assert main(["report", str(pred)]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"o2ksim: error: {pred / 'summary.json'}: not a prediction's summary")


def test_a_report_and_a_run_never_share_a_folder(sweep, results, tmp_path, monkeypatch, capsys):
    """`report SWEEP --out RUN` put report.html, figures/ and tables/ beside a run's files (which
    a later run does not replace); `run --out SWEEP/report` the reverse."""
    run = results["run"]
    before = snapshot(run)
    capsys.readouterr()
    assert main(["report", str(sweep), "--out", str(run)]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"{run}: holds the results of `o2ksim run` (" in line and "a report's files" in line
    assert snapshot(run) == before
    report = tmp_path / "rep"
    assert main(["report", str(sweep), "--out", str(report), "-q"]) == 0
    before = snapshot(report)
    no_work(monkeypatch)
    assert main([*WRITE["run"], str(report)]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"--out {report}: holds the results of `o2ksim report` (report.html)" in line, line
    assert snapshot(report) == before


HEAVY = ("pandas", "scipy", "matplotlib", "seaborn")
"""What a command loads for its work (a second and a half for validate's figures), not to refuse."""


@pytest.mark.parametrize("command", sorted(WRITE))
def test_a_command_refuses_a_held_folder_before_loading_its_work(tmp_path, command):
    """L6: `validate --out` claimed its folder only after importing pandas, matplotlib and
    seaborn, so a second writer was refused 1.7 s late (predict and characterize half a
    second).  Each command is refused, in one line, with none of them loaded, as `run` is."""
    out = tmp_path / "out"
    out.mkdir()
    probe = ("import sys\nfrom o2ksim.cli import main\nrc = main(sys.argv[1:])\n"
             f"print(rc, [m for m in {HEAVY!r} if m in sys.modules])")  # fmt: skip
    with folder_held_elsewhere(out, ENV) as pid:
        done = subprocess.run([sys.executable, "-c", probe, *WRITE[command], str(out)],
                              env=ENV, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.stdout.split("\n")[-2] == "2 []", done.stdout
    assert f"in use by another o2ksim process (pid {pid})" in one_line(done.stderr)


def _refused_light(argv: list[str]) -> tuple[str, str]:
    """``o2ksim ARGV`` in a fresh process: its exit code with the heavy modules it loaded, and
    its stderr."""
    probe = ("import sys\nfrom o2ksim.cli import main\nrc = main(sys.argv[1:])\n"
             f"print(rc, [m for m in {HEAVY!r} if m in sys.modules])")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", probe, *argv], env=ENV, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    return done.stdout.split("\n")[-2], done.stderr


def test_a_sweep_refuses_its_folder_before_loading_its_work(results, tmp_path):
    """L6: `scenario run` refused a folder holding another command's result, or one another
    sweep held, only inside `run_sweep`, after pandas and the report's modules had loaded
    (0.2 s beyond reading the scenario, a second on a busy machine); now before them."""
    scenario = str(ROOT / "scenarios" / "explain-backfill.toml")
    folder = results["run"]
    before = snapshot(folder)
    code, err = _refused_light(["scenario", "run", scenario, "--out", str(folder)])
    assert code == "2 []"
    assert f"{folder}: holds the results of `o2ksim run` (" in one_line(err)
    assert snapshot(folder) == before
    out = tmp_path / "sd"
    with folder_held_elsewhere(out, ENV, "from o2ksim.experiments.sweep_lock import results_lock as hold") as pid:
        code, err = _refused_light(["scenario", "run", scenario, "--out", str(out)])
    assert code == "2 []"
    assert f"{out}: another sweep is writing to this results directory (process {pid}" in one_line(err)


def test_a_report_refuses_its_folder_before_loading_its_work(sweep, results, tmp_path):
    """L6: `report RESULTS --out DIR` claimed DIR inside the report's module, after pandas and
    matplotlib had loaded; now before them: a held DIR, or one holding a run's result."""
    out = tmp_path / "page"
    out.mkdir()
    with folder_held_elsewhere(out, ENV) as pid:
        code, err = _refused_light(["report", str(sweep), "--out", str(out)])
    assert code == "2 []"
    assert f"in use by another o2ksim process (pid {pid})" in one_line(err)
    code, err = _refused_light(["report", str(sweep), "--out", str(results["run"])])
    assert code == "2 []"
    assert f"{results['run']}: holds the results of `o2ksim run` (" in one_line(err)
