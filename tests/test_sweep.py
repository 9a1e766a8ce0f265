"""Sweeps: one workspace per run, resume after a kill, failures recorded, and identical
results in one process, in a process pool and on a (local) Dask cluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from o2ksim.cli import main
from o2ksim.experiments.scenario import parse_scenario, simulate_run
from o2ksim.experiments.store import comparable, load_results
from o2ksim.experiments.sweep import run_sweep

REPO = Path(__file__).resolve().parents[1]

SWEEP = """
name = "sweep"
policies = ["fcfs", "fcfs-backfill"]
[workload]
trace = "traces/kth-sp2-sample.swf"
[protocol]
window = ["9d", "12d"]
warmup = "1d"
[factors]
workload.estimates = ["requested", "actual"]
"""


def _scenario(tmp_path: Path, text: str, name: str = "s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _run_files(out: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime_ns) of every stored summary.json, by run id.

    ``.tmp-*`` workspaces are runs still being written (renamed into place when
    complete), so they are not stored runs.
    """
    found = {}
    for p in (out / "runs").glob("*/summary.json"):
        if p.parent.name.startswith(".tmp-"):
            continue
        st = p.stat()
        found[p.parent.name] = (st.st_ino, st.st_mtime_ns)
    return found


def test_sweep_writes_one_workspace_per_run_with_the_simulate_results(tmp_path):
    sc = parse_scenario(SWEEP, path=str(REPO / "s.toml"))
    res = run_sweep(sc, tmp_path / "out", workers=1)
    assert res.ok and len(res.ran) == 4 and not res.skipped
    out = tmp_path / "out"
    assert (out / "scenario.toml").read_text() == SWEEP
    assert (out / "summary.parquet").exists() and (out / "summary.csv").exists()
    table = pd.read_parquet(out / "summary.parquet")
    assert list(table["policy"]) == ["fcfs", "fcfs-backfill"] * 2
    assert list(table["workload.estimates"]) == ["requested"] * 2 + ["actual"] * 2
    run = res.runs[3]
    ws = out / "runs" / run.run_id
    assert {p.name for p in ws.iterdir()} == {
        "config.json", "summary.json", "jobs.parquet", "segments.parquet"
    }  # fmt: skip
    stored = json.loads((ws / "summary.json").read_text())
    assert stored["status"] == "ok" and stored["factors"] == run.factors
    assert stored["info"]["total_procs"] == 100 and stored["wall_seconds"] > 0
    assert json.loads((ws / "config.json").read_text())["config"] == run.config
    # the stored run is exactly what simulate() returns for that configuration
    direct = simulate_run(run.config)
    pd.testing.assert_frame_equal(pd.read_parquet(ws / "jobs.parquet"), direct.jobs)
    assert table.loc[3, "mean_wait"] == pytest.approx(direct.summary["mean_wait"], rel=1e-12)
    assert table.loc[3, "jobs"] == direct.summary["jobs"]


def test_second_sweep_skips_every_finished_run(tmp_path):
    sc = parse_scenario(SWEEP, path=str(REPO / "s.toml"))
    first = run_sweep(sc, tmp_path, workers=1)
    before = _run_files(tmp_path)
    again = run_sweep(sc, tmp_path, workers=1)
    assert again.ran == [] and sorted(again.skipped) == sorted(first.ran)
    assert _run_files(tmp_path) == before
    pd.testing.assert_frame_equal(comparable(again.table), comparable(first.table))
    # a changed configuration is a new run; the old results stay but are not reported
    changed = parse_scenario(SWEEP.replace('"1d"', '"2d"'), path=str(REPO / "s.toml"))
    third = run_sweep(changed, tmp_path, workers=1)
    assert len(third.ran) == 4 and not third.skipped
    assert len(load_results(tmp_path).table) == 4


def test_a_finished_run_is_found_by_its_configuration_under_a_new_name(tmp_path):
    plain = parse_scenario(SWEEP.split("[factors]")[0], path=str(REPO / "s.toml"))
    first = run_sweep(plain, tmp_path, workers=1)
    jobs_before = {
        p.stat().st_ino: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/jobs.parquet")
    }
    # adding a factor whose first level is what already ran renames, not reruns, those runs
    full = parse_scenario(SWEEP, path=str(REPO / "s.toml"))
    res = run_sweep(full, tmp_path, workers=1)
    assert len(res.skipped) == 2 and len(res.ran) == 2
    assert {r.split("-")[-1] for r in res.skipped} == {r.split("-")[-1] for r in first.ran}
    # the simulation results were moved, not made again
    for r in res.skipped:
        st = (tmp_path / "runs" / r / "jobs.parquet").stat()
        assert jobs_before.get(st.st_ino) == st.st_mtime_ns
    assert all(json.loads((tmp_path / "runs" / r / "summary.json").read_text())["run_id"] == r
               for r in res.skipped)  # fmt: skip
    assert (res.table["status"] == "ok").all() and len(res.table) == 4


def test_a_sweep_killed_halfway_resumes_without_redoing_finished_runs(tmp_path):
    """Kill ``o2ksim scenario run -j 2`` (SIGKILL to its process group: the coordinator and
    its worker processes) after two runs are stored; the next sweep makes only the rest,
    leaves the finished runs untouched and ends with the results of an uninterrupted one."""
    text = (
        SWEEP.replace('window = ["9d", "12d"]', 'window = ["9d", "20d"]')
        .replace(
            '[factors]\nworkload.estimates = ["requested", "actual"]\n',
            "seeds = [0, 1, 2, 3, 4, 5, 6, 7]\n",
        )
        .replace('policies = ["fcfs", "fcfs-backfill"]', 'policies = ["fcfs-backfill"]')
    )
    path = _scenario(tmp_path, text)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "o2ksim", "scenario", "run", str(path), "--out", str(out),
         "-j", "2", "--no-report", "-q"],
        cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    try:
        while len(_run_files(out)) < 2 if out.exists() else True:
            assert proc.poll() is None, (
                f"the sweep ended before it could be killed: {proc.stderr.read()}"
            )
            assert time.monotonic() < deadline, "the sweep did not store two runs in 60 s"
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finished = _run_files(out)
    assert 2 <= len(finished) < 8, "the kill came too late to test resuming"
    sc = parse_scenario(text, path=str(path))
    res = run_sweep(sc, out, workers=1)
    assert sorted(res.skipped) == sorted(finished)
    assert sorted(res.ran) == sorted({r.run_id for r in sc.plan()} - set(finished))
    after = _run_files(out)
    assert {k: after[k] for k in finished} == finished  # not rewritten
    assert not list((out / "runs").glob(".tmp-*"))
    assert (res.table["status"] == "ok").all()
    # and the resumed results are those of an uninterrupted sweep
    fresh = run_sweep(sc, tmp_path / "fresh", workers=1)
    pd.testing.assert_frame_equal(comparable(res.table), comparable(fresh.table))


def test_a_failing_run_is_recorded_and_does_not_stop_the_others(tmp_path, capsys):
    bad = tmp_path / "bad.swf"
    bad.write_text(
        "1 0 0 60 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n2 10 0 sixty 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    good = REPO / "traces" / "tiny.swf"
    path = _scenario(
        tmp_path,
        f'name = "f"\npolicies = ["fcfs", "fcfs-backfill"]\n[workload]\ntrace = "{good}"\n'
        f'[factors]\nworkload.trace = ["{good}", "{bad}"]\n',
    )
    out = tmp_path / "out"
    assert main(["scenario", "run", str(path), "--out", str(out), "-j", "2", "--no-report"]) == 1
    captured = capsys.readouterr()
    table = pd.read_csv(out / "summary.csv")
    assert list(table["status"]) == ["ok", "ok", "failed", "failed"]
    assert table["error"].iloc[2].startswith("InputError:") and "sixty" in table["error"].iloc[2]
    failed_id = table["run_id"].iloc[2]
    assert "run_time" in (out / "runs" / failed_id / "error.txt").read_text()
    assert f"run {failed_id} failed" in captured.err
    # a resumed sweep retries only the failed runs (or keeps them with --no-retry-failed)
    res = run_sweep(parse_scenario(path.read_text(), path=str(path)), out, workers=1,
                    retry_failed=False)  # fmt: skip
    assert res.ran == [] and len(res.skipped) == 4
    res = run_sweep(parse_scenario(path.read_text(), path=str(path)), out, workers=1)
    assert sorted(res.ran) == sorted(table["run_id"].iloc[2:]) and len(res.failed) == 2


def test_process_pool_and_in_process_give_identical_results(tmp_path):
    sc = parse_scenario(SWEEP, path=str(REPO / "s.toml"))
    one = run_sweep(sc, tmp_path / "one", workers=1)
    two = run_sweep(sc, tmp_path / "two", workers=2)
    pd.testing.assert_frame_equal(comparable(one.table), comparable(two.table))
    for run in sc.plan():
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "one" / "runs" / run.run_id / "jobs.parquet"),
            pd.read_parquet(tmp_path / "two" / "runs" / run.run_id / "jobs.parquet"),
        )


def test_dask_cluster_gives_the_same_results_as_local_processes(tmp_path):
    distributed = pytest.importorskip("distributed")
    sc = parse_scenario(SWEEP, path=str(REPO / "s.toml"))
    local = run_sweep(sc, tmp_path / "local", workers=2)
    t0 = time.perf_counter()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        # through the CLI, as a user would: --scheduler ADDRESS
        code = main(["scenario", "run", _write(tmp_path, SWEEP), "--out", str(tmp_path / "dask"),
                     "--scheduler", cluster.scheduler_address, "--no-report", "-q"])  # fmt: skip
    took = time.perf_counter() - t0
    assert code == 0
    dask = load_results(tmp_path / "dask")
    pd.testing.assert_frame_equal(comparable(dask.table), comparable(local.table))
    for run in sc.plan():
        pd.testing.assert_frame_equal(
            dask.jobs(run.run_id), load_results(tmp_path / "local").jobs(run.run_id)
        )
    assert took < 20, f"the Dask sweep took {took:.1f} s"


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.toml"
    path.write_text(text.replace('trace = "traces/', f'trace = "{REPO}/traces/'))
    return str(path)


def test_cli_summary_of_a_large_sweep_is_one_line_per_policy(tmp_path):
    from o2ksim.cli.scenario import format_table

    sc = parse_scenario(SWEEP, path=str(REPO / "s.toml"))
    table = run_sweep(sc, tmp_path, workers=1).table
    big = pd.concat([table] * 11, ignore_index=True)
    lines = format_table(big, ["policy", "workload.estimates", "seed"]).splitlines()
    assert len(lines) == 1 + 2 + 1
    assert lines[1].split()[:3] == ["fcfs", "22", "runs"]
    assert format_table(table, ["policy", "workload.estimates", "seed"]).count("\n") == 4


def test_cli_rejects_workers_with_scheduler(tmp_path, capsys):
    path = _write(tmp_path, SWEEP)
    assert main(["scenario", "run", path, "--scheduler", "tcp://x:1", "-j", "2"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["scenario", "run", path, "-j", "0"]) == 2
