"""``o2ksim run`` end to end: outputs, options, and clear errors (exit 2, one line, no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from o2ksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "traces" / "tiny.swf"
SAMPLE = ROOT / "traces" / "kth-sp2-sample.swf"
REQUIRED = ["job_id", "submit", "start", "end", "wait", "run_time", "req_time", "procs", "mem", "host", "status"]


def cli(*args):
    """Run the CLI in a subprocess (as a user would)."""
    return subprocess.run(
        [sys.executable, "-m", "o2ksim", *map(str, args)], capture_output=True, text=True, cwd=ROOT
    )


def test_run_writes_jobs_csv_and_summary(tmp_path):
    assert main(["run", "--trace", str(SAMPLE), "--policy", "fcfs-backfill", "--out", str(tmp_path), "-q"]) == 0
    jobs = pd.read_csv(tmp_path / "jobs.csv")
    assert list(jobs.columns[: len(REQUIRED)]) == REQUIRED
    assert len(jobs) == 2000 and jobs["job_id"].is_unique
    assert set(jobs["status"]) <= {"completed", "killed", "rejected"}
    summary = json.loads((tmp_path / "summary.json").read_text())
    for key in ("mean_wait", "p95_wait", "max_wait", "mean_slowdown", "utilisation"):
        assert isinstance(summary[key], float)
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["config"]["policy"] == "fcfs-backfill" and run["versions"]["o2ksim"]


def test_run_with_window_machine_and_options(tmp_path, capsys):
    code = main([
        "run", "--trace", str(SAMPLE), "--machine", "kth-sp2", "--policy", "fcfs-backfill",
        "--window", "10d", "20d", "--warmup", "2", "--estimates", "scenario-a:50",
        "--reservations", "2", "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "policy fcfs-backfill" in out and "wait (h)" in out
    jobs = pd.read_csv(tmp_path / "jobs.csv")
    analysed = jobs[jobs["analysed"]]
    assert analysed["submit"].between(10 * 86400, 20 * 86400).all()
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["jobs"] == len(analysed)


def test_parquet_output(tmp_path):
    assert main(["run", "--trace", str(TINY), "--policy", "fcfs", "--out", str(tmp_path), "--parquet", "-q"]) == 0
    assert len(pd.read_parquet(tmp_path / "jobs.parquet")) > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "no-such-policy"], "unknown policy 'no-such-policy'"),
        (["--machine", "no-such-machine"], "unknown machine 'no-such-machine'"),
        (["--window", "5d", "1d"], "must be after its start"),
        (["--warmup", "3"], "--warmup needs --window"),
        (["--estimates", "scenario-c"], "unknown runtime-estimate scenario"),
        (["--set", "reservations=-1"], "reservations"),
        (["--set", "bogus=1"], "unknown parameter(s) bogus"),
    ],
)
def test_user_mistakes_exit_2_with_one_line(args, message):
    r = cli("run", "--trace", TINY, *args)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_missing_trace_file_exits_2():
    r = cli("run", "--trace", "/nonexistent/trace.swf")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "trace.swf" in r.stderr


def test_machine_file_errors_name_the_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[[host]]\nname = "h"\nprocs = -4\n')
    r = cli("run", "--trace", TINY, "--machine", bad)
    assert r.returncode == 2 and "host[0].procs" in r.stderr and "positive integer" in r.stderr


def test_policies_and_machines_commands():
    r = cli("policies")
    assert r.returncode == 0 and "fcfs-backfill" in r.stdout and "reservations" in r.stdout
    r = cli("machines", "o2k")
    assert r.returncode == 0 and "960 processors" in r.stdout and "modi2" in r.stdout


def test_default_run_is_a_generated_o2k_month_on_the_o2k_hosts(tmp_path):
    assert main(["run", "--span", "3d", "--warmup", "1", "--out", str(tmp_path), "-q"]) == 0
    jobs = pd.read_csv(tmp_path / "jobs.csv")
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["config"]["workload"].startswith("model o2k")
    assert set(jobs["host"].dropna()) <= {"eir", "nerthus", "hod1", "jord1", "saga1", "huldra", "mimir", "modi2"}
    analysed = jobs[jobs["analysed"]]
    assert analysed["submit"].min() >= 86400 and analysed["submit"].max() < 4 * 86400
    assert json.loads((tmp_path / "summary.json").read_text())["jobs"] == len(analysed) > 100


def test_trace_and_model_are_exclusive():
    r = cli("run", "--trace", TINY, "--model", "o2k")
    assert r.returncode == 2 and "either --trace or --model" in r.stderr


@pytest.mark.parametrize("policy", ["fcfs-backfill", "tradeoff-tw-avgx", "eqspatial-5m"])
def test_run_with_report_writes_the_page_for_every_kind_of_policy(tmp_path, policy):
    """What ``make demo`` does (``run --out DIR --report``), for backfill, goal and EQspatial runs."""
    out = tmp_path / "out"
    code = main(["run", "--trace", str(TINY), "--policy", policy, "--out", str(out), "--report", "-q"])
    assert code == 0
    page = (out / "report" / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and policy in page


def test_report_without_out_is_refused_before_simulating(monkeypatch, capsys):
    import o2ksim.cli.run as run_cli

    def no_simulation(*_a, **_k):
        raise AssertionError("the run was simulated before --report was refused")

    monkeypatch.setattr(run_cli, "run_config", no_simulation)
    monkeypatch.setattr(run_cli, "load_workload", no_simulation)
    assert main(["run", "--trace", str(TINY), "--report", "-q"]) == 2
    assert "--report needs --out DIR" in capsys.readouterr().err


def test_one_run_report_shows_the_queue_and_a_gantt_chart(tmp_path):
    """A one-run report adds the queue length over time and a Gantt chart of its first day."""
    out = tmp_path / "out"
    assert main(["run", "--trace", str(TINY), "--out", str(out), "--report", "-q"]) == 0
    page = (out / "report" / "report.html").read_text(encoding="utf-8")
    figures = out / "report" / "figures"
    for name in ("queue", "gantt"):
        assert (figures / f"{name}.png").exists() and (figures / f"{name}.svg").exists()
        assert f"<figure id='fig-{name}'" in page
    assert "Waiting jobs over time" in page and "The queue held" in page
    assert "Gantt chart of the run" in page
