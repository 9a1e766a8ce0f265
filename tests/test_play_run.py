"""``o2ksim play DIR --start A --end B``: a window of a stored run, played.

The expected values come from the stored run itself (``jobs.csv``: each job's
start and end as ``o2ksim run`` wrote them, before any replay) and from hand
computations (a date against the trace's ``UnixStartTime``); refusals are one
line, exit 2.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from o2ksim.cli import main
from o2ksim.report.player_run import run_folder_data

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "traces" / "kth-sp2-sample.swf"
DAY = 86400.0
# the sample's header: "; UnixStartTime: 843480031" (23 Sep 1996 12:00:31 UTC)
UNIX_START = 843480031


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kth") / "run"
    assert (
        main(["run", "--trace", str(SAMPLE), "--policy", "fcfs-backfill", "--out", str(out), "-q"])
        == 0
    )
    return out


@pytest.fixture(scope="module")
def day9(stored) -> dict:
    return run_folder_data(stored, "9d", "10d")


def test_the_window_holds_exactly_the_stored_runs_starts_and_ends(stored, day9):
    jobs = pd.read_csv(stored / "jobs.csv")
    lines = day9["log"]
    assert all(9 * DAY <= t <= 10 * DAY for t, *_ in lines)
    assert len(day9["frames"]) == len(lines) > 300
    started = sorted(j for _t, ev, j, *_ in lines if ev in ("starts", "backfilled"))
    want = jobs.loc[(jobs["start"] >= 9 * DAY) & (jobs["start"] <= 10 * DAY), "job_id"]
    assert started == sorted(want.astype(int))
    ended = sorted(j for _t, ev, j, *_ in lines if ev == "ends")
    want = jobs.loc[(jobs["end"] >= 9 * DAY) & (jobs["end"] <= 10 * DAY), "job_id"]
    assert ended == sorted(want.astype(int))
    # each start line at the time jobs.csv records
    start_of = dict(zip(jobs["job_id"].astype(int), jobs["start"], strict=True))
    for t, ev, j, *_ in lines:
        if ev in ("starts", "backfilled"):
            assert t == pytest.approx(start_of[j])


def test_each_frame_holds_the_jobs_jobs_csv_says_are_running(stored, day9):
    jobs = pd.read_csv(stored / "jobs.csv")
    assert (jobs["preemptions"] == 0).all()  # FCFS-backfill: one interval per job
    for k in range(0, len(day9["frames"]), 37):
        f = day9["frames"][k]
        t = f[0]
        # a job starting at t appears on its own start line; one ending at t leaves on its end line
        running = {r[0] for r in f[1]}
        sure = jobs.loc[(jobs["start"] < t) & (jobs["end"] > t), "job_id"].astype(int)
        maybe = jobs.loc[(jobs["start"] <= t) & (jobs["end"] >= t), "job_id"].astype(int)
        assert set(sure) <= running <= set(maybe)
        busy = sum(r[2] for r in f[1])
        assert f[6][0] == 100 - busy  # free processors of the 100-processor SP2


def test_the_page_starts_at_the_window_and_names_only_its_jobs(day9):
    assert day9["begin"] == 9 * DAY and day9["end"] == 10 * DAY
    assert all(s[3] > 9 * DAY and s[2] < 10 * DAY for s in day9["lanes"])
    assert len(day9["jobs"]) < 600  # the day's jobs, not the 2,000 of the trace


def test_dates_are_read_against_the_traces_unix_start_time(stored):
    """In the header's zone (Europe/Stockholm), as ``run --window`` reads them: on 1996-10-02
    Stockholm is on summer time, UTC+2, so midnight there is 22:00 UTC the day before."""
    start = datetime(1996, 10, 1, 22, tzinfo=UTC).timestamp() - UNIX_START  # by hand
    data = run_folder_data(stored, "1996-10-02", "1996-10-02T06:00")
    assert data["begin"] == pytest.approx(start) and data["end"] == pytest.approx(start + 6 * 3600)
    assert all(start <= line[0] <= start + 6 * 3600 for line in data["log"])


def test_cli_writes_the_page(stored, tmp_path, capsys):
    page = tmp_path / "day.html"
    assert main(["play", str(stored), "--start", "9d", "--end", "9.5d", "-o", str(page)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"player: {page} (") and "events" in out
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "http" not in text.split("<script")[0]


def test_api_folder_of_result_save(tmp_path):
    from o2ksim import simulate

    result = simulate(str(SAMPLE), None, "fcfs-backfill")
    result.save(tmp_path / "r")
    data = run_folder_data(tmp_path / "r", 9 * DAY, 9 * DAY + 3600)
    assert data["log"] and all(9 * DAY <= line[0] <= 9 * DAY + 3600 for line in data["log"])


def refused(args: list[str], capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_refusals_name_what_is_missing(stored, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    err = refused(["play", str(empty), "--start", "1d"], capsys)
    assert "no run.json" in err and f"--out {empty}" in err
    copy = tmp_path / "copy"
    shutil.copytree(stored, copy)
    err = refused(["play", str(copy)], capsys)
    assert "give the window to play with --start" in err
    err = refused(["play", str(copy), "--start", "9d", "--set", "reservations=2"], capsys)
    assert "--set" in err and "played as it was run" in err
    err = refused(["play", "explain-backfill", "--start", "1h"], capsys)
    assert "--start/--end choose the window of a run folder" in err
    err = refused(["play", str(copy), "--start", "60d"], capsys)
    assert "the run ends at" in err
    err = refused(["play", str(copy), "--start", "9d", "--max-events", "10"], capsys)
    assert "(limit 10)" in err and "shorter window" in err
    # each limit where it acts (found by the session-13 audit: ignored in silence elsewhere)
    err = refused(["play", str(copy), "--start", "9d", "--max-jobs", "10"], capsys)
    assert err.startswith("o2ksim: error: --max-jobs: bounds a scenario's workload")
    err = refused(["play", "explain-backfill", "--max-events", "10"], capsys)
    assert err.startswith("o2ksim: error: --max-events: bounds a run folder's window")
    err = refused(["play", str(copy), "--start", "1996-10-02x"], capsys)
    assert err.startswith("o2ksim: error: --start 1996-10-02x:")
    # the stored schedule changed: the replay is refused, naming the job
    jobs = pd.read_csv(copy / "jobs.csv")
    jobs.loc[jobs["job_id"] == jobs["job_id"].iloc[5], "start"] += 1.0
    jobs.to_csv(copy / "jobs.csv", index=False)
    err = refused(["play", str(copy), "--start", "9d"], capsys)
    assert (
        "the replay differs from the stored run" in err
        and f"J{jobs['job_id'].iloc[5]}'s start" in err
    )
    # a run.json without its replay configuration: says how to write one
    meta = json.loads((copy / "run.json").read_text())
    del meta["replay"]
    (copy / "run.json").write_text(json.dumps(meta))
    err = refused(["play", str(copy), "--start", "9d"], capsys)
    assert "no replay configuration" in err and f"--out {copy}" in err
    # the trace moved away
    moved = tmp_path / "moved"
    shutil.copytree(stored, moved)
    meta = json.loads((moved / "run.json").read_text())
    meta["replay"]["workload"]["trace"] = str(tmp_path / "gone.swf")
    (moved / "run.json").write_text(json.dumps(meta))
    err = refused(["play", str(moved), "--start", "9d"], capsys)
    assert "cannot simulate the run again" in err and "gone.swf" in err
    (moved / "jobs.csv").unlink()
    err = refused(["play", str(moved), "--start", "9d"], capsys)
    assert "no jobs.csv" in err
