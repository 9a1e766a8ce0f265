"""Outputs written safely (issue 27): one run per folder at a time, whole files or none.

Faults are injected, not waited for: a write that fails with ENOSPC half-way,
a rename that fails during the commit, SIGTERM/SIGINT to a real ``o2ksim run``
subprocess, a second process on the same folder, a commit cut by ``kill -9``
(the journal state it leaves, rebuilt by hand).  The expected state is always
"the folder as it was" or "the new run, complete": compared byte for byte.
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

from o2ksim import outfiles
from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.folder_lock import LOCK_NAME
from o2ksim.outfiles import JOURNAL_NAME, PHASE_B, Staging, claim
from o2ksim.run import results

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def earlier(tmp_path: Path) -> Path:
    """A folder holding a complete earlier run (with segments.csv, from --check)."""
    out = tmp_path / "out"
    assert main(["run", "--trace", TINY, "--out", str(out), "--check", "-q"]) == 0
    return out


def test_a_rerun_replaces_every_file_of_the_earlier_run_and_says_so(earlier, capsys):
    capsys.readouterr()
    assert main(["run", "--trace", TINY, "--out", str(earlier), "--parquet"]) == 0
    out = capsys.readouterr().out
    assert "replacing an earlier run's files (removed jobs.csv, segments.csv" in out
    assert sorted(p.name for p in earlier.iterdir()) == ["jobs.parquet", "run.json", "summary.json"]


def test_run_json_lists_the_files_of_its_run(earlier):
    import json

    assert json.loads((earlier / "run.json").read_text())["files"] == [
        "jobs.csv", "run.json", "segments.csv", "summary.json",
    ]  # fmt: skip


def test_a_full_disk_half_way_through_jobs_csv_leaves_the_folder_as_it_was(
    earlier, monkeypatch, capsys
):
    before = snapshot(earlier)

    def half_then_enospc(table, path):
        Path(path).write_text("job_id,submit\n1,0\n2,")  # cut mid-field, as a full disk does
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results, "write_csv", half_then_enospc)
    capsys.readouterr()
    assert main(["run", "--trace", TINY, "--out", str(earlier)]) == 2
    line = one_line(capsys.readouterr().err)
    assert str(earlier) in line and "No space left on device" in line and "nothing new" in line
    assert snapshot(earlier) == before  # no half file, no temporary file, the lock released


def test_a_rename_failing_mid_commit_puts_the_earlier_run_back(earlier, monkeypatch, capsys):
    before = snapshot(earlier)
    real = os.replace
    calls = {"n": 0}

    def flaky(src, dst):
        calls["n"] += 1
        if calls["n"] == 7:  # 4 earlier files out, 2 new ones in, then the disk fails
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(src, dst)

    monkeypatch.setattr(outfiles.os, "replace", flaky)
    assert main(["run", "--trace", TINY, "--out", str(earlier), "--check", "-q"]) == 2
    one_line(capsys.readouterr().err)
    assert calls["n"] >= 7
    assert snapshot(earlier) == before


def test_an_interrupt_while_writing_leaves_nothing_new(earlier, monkeypatch, capsys):
    before = snapshot(earlier)

    def interrupted(path, data):
        # what the handler raises when SIGTERM arrives here
        raise outfiles.Signalled(signal.SIGTERM)

    monkeypatch.setattr(results, "write_json", interrupted)
    assert main(["run", "--trace", TINY, "--out", str(earlier)]) == 128 + signal.SIGTERM
    line = one_line(capsys.readouterr().err)
    assert "interrupted by SIGTERM; nothing new was written" in line
    assert snapshot(earlier) == before


def test_the_api_save_is_atomic_too(tmp_path, monkeypatch):
    from o2ksim import simulate

    result = simulate(TINY, policy="fcfs")
    result.save(tmp_path)
    before = snapshot(tmp_path)
    monkeypatch.setattr(
        results, "write_json", lambda p, d: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full"))
    )
    with pytest.raises(O2KSimError, match="nothing new"):
        result.save(tmp_path)
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------------ the folder's lock
def test_a_folder_held_by_another_process_is_refused_with_its_pid(tmp_path):
    out = tmp_path / "held"
    with folder_held_elsewhere(out, ENV) as pid:
        run = subprocess.run(
            [sys.executable, "-m", "o2ksim", "run", "--trace", TINY, "--out", str(out)],
            env=ENV, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert run.returncode == 2
        line = one_line(run.stderr)
        assert str(out) in line and f"pid {pid}" in line
        assert not (out / "jobs.csv").exists()
    # the holder was killed: the operating system released its lock
    assert main(["run", "--trace", TINY, "--out", str(out), "-q"]) == 0
    assert not (out / LOCK_NAME).exists()


def test_two_runs_started_together_on_one_folder_never_mix(tmp_path):
    out = tmp_path / "race"
    cmd = [sys.executable, "-m", "o2ksim", "run", "--span", "10d", "--out", str(out), "-q"]
    procs = [subprocess.Popen([*cmd, "--seed", str(s)], env=ENV, stderr=subprocess.PIPE, text=True)
             for s in (1, 2)]  # fmt: skip
    outcomes = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    codes = sorted(code for code, _ in outcomes)
    assert codes in ([0, 0], [0, 2]), outcomes  # both (one after the other) or one refused
    for code, err in outcomes:
        if code == 2:  # the holder writes its pid just after taking the lock: a refusal in
            # between cannot name it yet
            line = one_line(err)
            assert "in use by another o2ksim process (pid" in line or "in use by another process" in line
    import json

    import pandas as pd

    jobs = pd.read_csv(out / "jobs.csv")
    run = json.loads((out / "run.json").read_text())
    assert jobs["job_id"].is_unique
    assert (jobs["end"].dropna() >= jobs["start"].dropna().loc[jobs["end"].notna()]).all()
    assert run["config"]["seed"] in (1, 2)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_mid_run_leaves_the_earlier_run_and_says_so(earlier, sig):
    before = snapshot(earlier)
    proc = subprocess.Popen(
        [sys.executable, "-m", "o2ksim", "run", "--out", str(earlier)],  # a generated month: ~2 s
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    err = signal_once_locked(proc, earlier, sig, wait=30)
    line = one_line(err)
    assert (
        f"interrupted by {signal.Signals(sig).name}; nothing new was written to {earlier}/" in line
    )
    assert snapshot(earlier) == before


# ------------------------------------------------------------------ a commit cut by kill -9
def staged_commit_cut(out: Path, phase_b: bool) -> None:
    """The state a ``kill -9`` leaves half-way through a commit (see outfiles.Staging.commit)."""
    journal = out / JOURNAL_NAME
    journal.mkdir()
    for name in ("run.json", "jobs.csv"):  # moved out first
        os.replace(out / name, journal / name)
    (out / ".jobs.csv.999.o2ksim-tmp").write_text("job_id\n1\n")
    if phase_b:
        for name in ("segments.csv", "summary.json"):
            os.replace(out / name, journal / name)
        (journal / PHASE_B).touch()
        (out / "jobs.parquet").write_text("new, half-committed")


@pytest.mark.parametrize("phase_b", [False, True])
def test_a_commit_cut_by_kill_9_is_undone_by_the_next_claim(earlier, phase_b):
    before = snapshot(earlier)
    staged_commit_cut(earlier, phase_b)
    with claim(earlier):
        assert snapshot(earlier) == {**before, LOCK_NAME: f"{os.getpid()}\n".encode()}
    assert snapshot(earlier) == before


def test_a_commit_that_had_finished_keeps_the_new_run(earlier):
    journal = earlier / JOURNAL_NAME
    journal.mkdir()
    (journal / PHASE_B).touch()
    (journal / "jobs.parquet").write_text("old")
    before = snapshot(earlier)
    with claim(earlier):
        pass
    assert {k: v for k, v in snapshot(earlier).items()} == {
        k: v for k, v in before.items() if not k.startswith(JOURNAL_NAME)
    }


def test_staging_without_commit_removes_its_temporary_files(tmp_path):
    with Staging(tmp_path) as staged:
        staged.path("jobs.csv").write_text("x")
        staged.scratch("report", "results")
    assert list(tmp_path.iterdir()) == []


def test_a_signal_whose_handler_runs_inside_the_commit_is_delivered_after_it(
    earlier, monkeypatch, capsys
):
    """A signal that arrives just before the commit blocks signals has its Python handler run at
    the next bytecode -- inside the commit's renames (found by the issue-27 audit: SIGTERM at
    the end of a run left the journal and the new files, and said "nothing new was written").
    Emulated by running the current handler from a rename, as CPython would."""
    real = os.replace
    calls = {"n": 0}

    def replace_with_a_signal(src, dst):
        calls["n"] += 1
        if calls["n"] == 3:  # among the moves of the earlier files out
            signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)
        return real(src, dst)

    monkeypatch.setattr(outfiles.os, "replace", replace_with_a_signal)
    capsys.readouterr()
    assert main(["run", "--trace", TINY, "--out", str(earlier), "--parquet", "-q"]) == 143
    line = one_line(capsys.readouterr().err)
    assert f"interrupted by SIGTERM after the results were written to {earlier}/" in line
    assert sorted(p.name for p in earlier.iterdir()) == ["jobs.parquet", "run.json", "summary.json"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_simulation_is_one_line_not_a_traceback(earlier, tmp_path, sig):
    """Found by the issue-27 audit: SimPy re-raises an exception from a process as
    ``type(exc)(*exc.args)``, and the interrupt could not be rebuilt from its name: a signal
    during a pass printed a traceback.  This run is inside its SimPy loop for good, a pass
    every second: A runs 10^9 s past its 10 s request (predicted to end *now*, a time that
    moves), H waits for the whole host, reserved at *now*, and C fits beside A but would
    delay H: something fits and a prediction moves, so no quiet guarantee
    (o2ksim.policies.quiet) and every tick is a pass."""
    before = snapshot(earlier)
    trace = tmp_path / "long.swf"
    trace.write_text(
        "; MaxProcs: 4\n1 0 -1 1000000000 3 -1 -1 3 10 -1 1 1 1 1 1 1 -1 -1\n"
        "2 10 -1 10 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n"
        "3 20 -1 10 1 -1 -1 1 1000000 -1 1 1 1 1 1 1 -1 -1\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "o2ksim", "run", "--trace", str(trace), "--interval", "1s",
         "--policy", "fcfs-backfill", "--out", str(earlier)],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not (earlier / LOCK_NAME).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(2.0)  # the trace is read at once; the passes have begun
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"interrupted by {signal.Signals(sig).name}; nothing new was written" in one_line(err)
    assert snapshot(earlier) == before


def test_the_interrupt_survives_being_built_again_from_its_args():
    exc = outfiles.Signalled(signal.SIGTERM)
    again = type(exc)(*exc.args)
    assert (again.signum, str(again)) == (signal.SIGTERM, "SIGTERM")


def test_a_run_and_a_sweep_never_share_a_folder(earlier, tmp_path, capsys):
    """Found by the issue-27 audit: `o2ksim run --out D` into a sweep's results directory (and
    `scenario run --out D` into a run's folder) mixed the two sets of files in silence: the
    sweep's lock (D/.lock) and the run's (D/.o2ksim.lock) are different files."""
    scenario = str(ROOT / "scenarios" / "explain-backfill.toml")
    sweep = tmp_path / "sweep"
    assert main(["scenario", "run", scenario, "--out", str(sweep), "-q", "--no-report"]) == 0
    before = snapshot(sweep)
    capsys.readouterr()
    assert main(["run", "--trace", TINY, "--out", str(sweep), "-q"]) == 2
    assert "holds the results of a sweep (plan.json" in one_line(capsys.readouterr().err)
    assert snapshot(sweep) == before
    before = snapshot(earlier)
    assert main(["scenario", "run", scenario, "--out", str(earlier), "-q", "--no-report"]) == 2
    assert "holds the results of `o2ksim run` (jobs.csv, " in one_line(capsys.readouterr().err)
    assert snapshot(earlier) == before


def test_a_sweep_that_began_during_a_run_is_not_mixed_into(tmp_path):
    """The run's commit checks again: a sweep may have claimed the folder meanwhile."""
    with Staging(tmp_path) as staged:
        staged.path("jobs.csv").write_text("job_id\n1\n")
        (tmp_path / "plan.json").write_text("{}")
        with pytest.raises(O2KSimError, match="holds the results of a sweep"):
            staged.commit()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_a_validation_is_committed_with_its_run_or_not_at_all(tmp_path, monkeypatch):
    """Found by the issue-27 audit: `o2ksim validate --out` wrote its tables one by one after
    the run's files, so a full disk left a run without its validation files (or half of them)."""
    from o2ksim import validate
    from o2ksim.analysis import validate as validate_module

    v = validate(str(ROOT / "traces" / "kth-sp2-sample.swf"))
    v.save(tmp_path)
    before = snapshot(tmp_path)
    assert {"validation.csv", "validation.json", "jobs.csv", "run.json"} <= set(before)

    def full(path, data):
        Path(path).write_text('{"cut": ')
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(validate_module, "write_json", full)
    with pytest.raises(O2KSimError, match=r"No space left on device.*nothing new"):
        v.save(tmp_path)
    assert snapshot(tmp_path) == before


def test_a_prediction_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """Found by the issue-27 audit: `o2ksim predict --out` wrote its ten files one by one in
    place, so a full disk left a folder of new and old files (one cut short) that `o2ksim
    report` would read as a prediction.  Now staged and committed together; a rerun with
    fewer files (no periods) removes the earlier run's another_time.csv and medians.csv."""
    from o2ksim.prediction import evaluate, predict

    kth = str(ROOT / "traces" / "kth-sp2-sample.swf")
    first = predict(kth, whole_queue=False, periods=["0", "10d", "20d", "30d"])
    first.save(tmp_path, figure=False)
    before = snapshot(tmp_path)
    assert {"another_time.csv", "medians.csv", "predictions.csv", "clm.toml"} <= set(before)
    second = predict(kth, whole_queue=False)

    def cut(self, path, **kw):
        Path(path).write_text("kind,predictor\nhead,")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as m:
        m.setattr(evaluate.pd.DataFrame, "to_csv", cut)
        with pytest.raises(O2KSimError, match="nothing new was written"):
            second.save(tmp_path, figure=False)
    assert snapshot(tmp_path) == before
    second.save(tmp_path, figure=False)
    names = {p.name for p in tmp_path.iterdir()}
    assert "another_time.csv" not in names and "medians.csv" not in names
    assert {"predictions.csv", "summary.csv", "summary.json", "prediction.html"} <= names
