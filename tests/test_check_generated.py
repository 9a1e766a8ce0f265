"""``o2ksim run --check`` on a generated workload (issue 27, D24).

A generated month runs with a cool-down tail (T§3.4): jobs generated after the
window until every analysed job has started.  The check counted the jobs of the
month without its tail, so every generated run failed it ("jobs in 11070, out
14321: 0 missing, 0 duplicated").  It must expect exactly the jobs the engine
was given -- and still catch a job lost or repeated, tail jobs included.
"""

from __future__ import annotations

import pandas as pd
import pytest

import o2ksim.cli.run as run_command
from o2ksim.cli import main

GENERATED = ["run", "--check", "--model", "o2k", "--span", "2d", "--warmup", "1d", "-q"]


@pytest.mark.parametrize("policy", ["fcfs-backfill", "eqspatial"])
def test_check_passes_on_a_generated_workload(policy, capsys):
    assert main([*GENERATED, "--policy", policy]) == 0
    assert "check failed" not in capsys.readouterr().err


def test_check_passes_on_a_generated_workload_read_back_from_its_files(tmp_path, capsys):
    assert main([*GENERATED, "--policy", "fcfs-backfill", "--out", str(tmp_path / "r")]) == 0
    assert "check failed" not in capsys.readouterr().err


def _tampered(monkeypatch, change):
    """``run_config`` as ``o2ksim run`` calls it, its job table then changed by ``change``."""
    real = run_command.run_config

    def tampered(config, **kwargs):
        result = real(config, **kwargs)
        jobs = result.jobs
        tail = jobs.index[jobs["submit"] > config.window.end]  # a job of the cool-down tail
        assert len(tail), "the run had a cool-down tail"
        result.jobs = change(jobs, tail[0])
        return result

    monkeypatch.setattr(run_command, "run_config", tampered)


def test_check_still_fails_when_a_tail_job_is_lost(monkeypatch, capsys):
    _tampered(monkeypatch, lambda jobs, row: jobs.drop(index=row))
    assert main([*GENERATED, "--policy", "fcfs-backfill"]) == 1
    err = capsys.readouterr().err
    assert "check failed" in err and "1 missing" in err


def test_check_still_fails_when_a_tail_job_is_repeated(monkeypatch, capsys):
    _tampered(monkeypatch, lambda jobs, row: pd.concat([jobs, jobs.loc[[row]]], ignore_index=True))
    assert main([*GENERATED, "--policy", "fcfs-backfill"]) == 1
    err = capsys.readouterr().err
    assert "check failed" in err and "1 duplicated" in err
