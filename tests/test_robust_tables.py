"""What a user gets in ``jobs.csv`` (issue 27): plain ``pd.read_csv`` without warnings, and with a
window only the jobs that took part in the run, the others counted."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

from o2ksim.cli import main
from o2ksim.run import results
from o2ksim.table import NO_VALUE

ROOT = Path(__file__).resolve().parents[1]
KTH = str(ROOT / "traces" / "kth-sp2-sample.swf")

N_SERIAL = 40_000  # pandas 3 reads a csv in chunks of about 32k rows: the empty cells fill one


def _long_trace(path: Path) -> Path:
    """N_SERIAL one-processor jobs, then one job asking for more processors than the machine
    has (rejected): its ``reason`` is the only one, after tens of thousands of empty ones."""
    lines = ["; MaxProcs: 4"]
    lines += [f"{i} {10 * i} 0 5 1 -1 -1 1 5 -1 1 1 1 1 1 1 -1 -1" for i in range(1, N_SERIAL + 1)]
    i = N_SERIAL + 1
    lines.append(f"{i} {10 * i} 0 5 8 -1 -1 8 5 -1 1 1 1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def _read_strictly(path: Path) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return pd.read_csv(path)


@pytest.fixture(scope="module")
def long_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("long")
    trace = _long_trace(tmp / "long.swf")
    assert main(["run", "--trace", str(trace), "--policy", "fcfs", "--out", str(tmp / "out"), "-q"]) == 0
    return tmp


def test_jobs_csv_reads_with_plain_read_csv_without_a_warning(long_run):
    jobs = _read_strictly(long_run / "out" / "jobs.csv")
    assert len(jobs) == N_SERIAL + 1
    rejected = jobs["status"] == "rejected"
    assert rejected.sum() == 1 and jobs.loc[rejected, "job_id"].item() == N_SERIAL + 1
    assert jobs.loc[rejected, "host"].item() == NO_VALUE  # it ran on no host
    assert (jobs.loc[~rejected, "reason"] == NO_VALUE).all()  # nothing to report
    assert (jobs.loc[~rejected, "host"] != NO_VALUE).all()


def test_the_same_file_with_empty_cells_would_warn(long_run, monkeypatch, tmp_path):
    """The control: without the markers the file warns, so the test above can fail."""
    monkeypatch.setattr(results, "with_text_markers", lambda table: table)
    out = tmp_path / "bare"
    assert main(["run", "--trace", str(long_run / "long.swf"), "--policy", "fcfs", "--out", str(out), "-q"]) == 0
    with pytest.raises(pd.errors.DtypeWarning):
        _read_strictly(out / "jobs.csv")


def test_the_markers_are_in_the_file_only(long_run):
    """``Result.jobs`` keeps an empty reason and no host, as before: '-' is the file's spelling."""
    from o2ksim import simulate

    res = simulate(str(long_run / "long.swf"), policy="fcfs")
    rejected = res.jobs["status"] == "rejected"
    assert res.jobs.loc[rejected, "host"].isna().all() and (res.jobs.loc[~rejected, "reason"] == "").all()
    assert not (res.jobs[["host", "reason"]] == NO_VALUE).any().any()


def test_a_window_run_writes_the_jobs_of_the_run_and_counts_those_that_never_arrived(tmp_path, capsys):
    """The sample's window: jobs submitted after the run stopped have no row, and are counted."""
    out = tmp_path / "w"
    args = ["run", "--trace", KTH, "--policy", "fcfs-backfill", "--window", "10d", "15d", "--warmup", "1d"]
    assert main([*args, "--out", str(out), "--check"]) == 0
    screen = capsys.readouterr().out
    jobs = _read_strictly(out / "jobs.csv")
    summary = json.loads((out / "summary.json").read_text())
    sim_end = json.loads((out / "run.json").read_text())["stats"]["simulated_until"]
    # the expected rows from the trace itself: submitted from start - warm-up until the run stopped
    trace = pd.read_csv(KTH, comment=";", sep=r"\s+", header=None, usecols=[0, 1], names=["id", "submit"])
    start, end = 9 * 86400, 15 * 86400
    took_part = trace.loc[(trace["submit"] >= start) & (trace["submit"] <= sim_end)]
    never = trace.loc[trace["submit"] > sim_end]
    assert sorted(jobs["job_id"]) == sorted(took_part["id"])
    assert summary["not_arrived"] == len(never) > 0
    assert summary["jobs"] == int(((trace["submit"] >= 10 * 86400) & (trace["submit"] < end)).sum())
    assert jobs.loc[jobs["status"] == "not_started", "submit"].max() <= sim_end
    assert (
        f"jobs table: {len(jobs)} rows, {summary['jobs']} analysed and {len(jobs) - summary['jobs']} "
        f"of the warm-up and cool-down; {len(never)} jobs submitted after the run stopped never arrived"
    ) in screen
