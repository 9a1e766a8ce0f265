"""``o2ksim validate``: recorded against simulated waits on tiny traces worked out by hand.

The trace below on a 4-processor machine under strict FCFS, by hand:

* job 1, submit 0, 4 procs, 100 s: starts at 0 (wait 0);
* job 2, submit 10, 2 procs, 50 s: waits for job 1, starts at 100 (wait 90);
* job 3, submit 20, 2 procs, 30 s: fits beside job 2 at 100 (wait 80);
* job 4, submit 30, 1 proc, 30 s: the machine is full until job 3 ends at 130 (wait 100).

Runtime groups (thesis, upper bounds 10**i minutes): 100 s = 1.67 min is in
``<=3.16m``; 50 s and 30 s are in ``<=1m``.  Size groups: 4 procs ``3-4``,
2 procs ``2``, 1 proc ``1``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import o2ksim
from o2ksim.analysis.validate import validate
from o2ksim.analysis.validate_stats import daily_busy, ks_distance, pearson, size_group_label
from o2ksim.cli import main
from o2ksim.errors import O2KSimError

ROOT = Path(__file__).resolve().parents[1]
KTH = Path(__file__).resolve().parents[2] / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"

FCFS_WAITS = {1: 0, 2: 90, 3: 80, 4: 100}
JOBS = [  # job, submit, run, procs, queue
    (1, 0, 100, 4, 1),
    (2, 10, 50, 2, 1),
    (3, 20, 30, 2, 2),
    (4, 30, 30, 1, 2),
]


def swf(tmp_path: Path, waits: dict[int, int], extra: str = "", name: str = "t.swf") -> Path:
    """The trace above with the given recorded waits (field 3); ``extra`` adds job lines."""
    lines = ["; MaxProcs: 4", "; UnixStartTime: 852076800"]  # 1997-01-01 00:00 UTC
    for j, submit, run, procs, queue in JOBS:
        lines.append(f"{j} {submit} {waits[j]} {run} {procs} -1 -1 {procs} {run} -1 1 1 1 -1 {queue} -1 -1 -1")
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def test_perfect_replay_has_distance_zero_and_correlation_one(tmp_path):
    v = validate(swf(tmp_path, FCFS_WAITS), None, "fcfs")
    o = v.overall
    assert dict(zip(v.compared["job_id"], v.compared["simulated_wait"], strict=True)) == FCFS_WAITS
    assert o["jobs"] == 4 and o["ks"] == 0 and o["mean_diff"] == 0
    assert o["pearson"] == pytest.approx(1) and o["pearson_log"] == pytest.approx(1)
    assert o["rec_mean"] == o["sim_mean"] == pytest.approx(270 / 4)
    assert o["rec_zero_share"] == o["sim_zero_share"] == 0.25
    assert v.message() == "4 of 4 jobs compared"
    assert len(v.excluded) == 0


def test_shifted_recorded_waits_give_the_hand_computed_differences(tmp_path):
    shifted = {j: w + 60 for j, w in FCFS_WAITS.items()}
    o = validate(swf(tmp_path, shifted), None, "fcfs").overall
    assert o["mean_diff"] == pytest.approx(-60)
    assert o["rec_mean"] == pytest.approx(510 / 4) and o["sim_mean"] == pytest.approx(270 / 4)
    assert o["rec_median"] == 145 and o["sim_median"] == 85
    assert o["rec_max"] == 160 and o["sim_max"] == 100
    # recorded 60,140,150,160 against simulated 0,80,90,100: at 100 the simulated CDF is 1,
    # the recorded 1/4
    assert o["ks"] == pytest.approx(0.75)
    assert o["pearson"] == pytest.approx(1)  # a shift keeps the per-job order and spacing
    assert o["rec_zero_share"] == 0 and o["sim_zero_share"] == 0.25


def test_group_tables_by_hand(tmp_path):
    rec = {1: 10, 2: 90, 3: 20, 4: 100}
    t = validate(swf(tmp_path, rec), None, "fcfs").tables
    rt = t[t["grouping"] == "runtime"].set_index("group")
    assert list(rt.index) == ["<=1m", "<=3.16m"]
    assert rt.loc["<=1m", "jobs"] == 3
    assert rt.loc["<=1m", "sim_mean"] == pytest.approx(90)  # 90, 80, 100
    assert rt.loc["<=1m", "rec_mean"] == pytest.approx(70)  # 90, 20, 100
    assert rt.loc["<=3.16m", "sim_mean"] == 0 and rt.loc["<=3.16m", "rec_mean"] == 10
    size = t[t["grouping"] == "size"].set_index("group")
    assert list(size.index) == ["1", "2", "3-4"]
    assert size.loc["2", "sim_mean"] == 85 and size.loc["2", "rec_mean"] == 55
    q = t[t["grouping"] == "queue"].set_index("group")
    assert q.loc["1", "sim_mean"] == 45 and q.loc["2", "sim_mean"] == 90
    assert q.loc["2", "rec_mean"] == 60
    assert list(t.loc[t["grouping"] == "partition", "group"]) == ["unknown"]
    assert list(t.loc[t["grouping"] == "month", "group"]) == ["1997-01"]


def test_daily_utilisation_by_hand(tmp_path):
    v = validate(swf(tmp_path, FCFS_WAITS), None, "fcfs")
    busy = 4 * 100 + 2 * 50 + 2 * 30 + 1 * 30  # processor-seconds, all on day 0
    assert len(v.utilisation) == 1
    assert v.utilisation["recorded"].iloc[0] == pytest.approx(busy / (4 * 86400))
    assert v.utilisation["simulated"].iloc[0] == pytest.approx(busy / (4 * 86400))
    assert v.utilisation["day"].iloc[0] == "1997-01-01"


def test_daily_busy_splits_intervals_at_day_boundaries():
    days = np.array([0.0, 86400.0, 172800.0])
    got = daily_busy([0.0, 43200.0], [129600.0, 43300.0], [2, 3], days)
    assert list(got) == [2 * 86400 + 3 * 100, 2 * 43200, 0]


def test_ks_and_pearson_agree_with_scipy():
    rng = np.random.default_rng(1)
    a = np.round(rng.exponential(3600, 300))
    b = np.round(rng.exponential(2000, 200))
    b[:50] = 0
    assert ks_distance(a, b) == pytest.approx(stats.ks_2samp(a, b).statistic)
    c = a[:200] * 0.5 + rng.normal(0, 900, 200)
    assert pearson(a[:200], c) == pytest.approx(stats.pearsonr(a[:200], c).statistic)


def test_size_labels():
    assert [size_group_label(k) for k in range(5)] == ["1", "2", "3-4", "5-8", "9-16"]


def test_jobs_that_cannot_be_compared_are_counted_by_reason(tmp_path):
    waits = {**FCFS_WAITS, 4: -1}
    extra = "5 40 0 10 8 -1 -1 8 10 -1 1 1 1 -1 2 -1 -1 -1\n"  # 8 procs on a 4-processor machine
    v = validate(swf(tmp_path, waits, extra), None, "fcfs")
    assert v.counts == {
        "outside the window": 0,
        "no recorded wait": 1,
        "rejected by the simulation": 1,
        "did not start in the simulation": 0,
    }
    assert v.message() == "3 of 5 jobs compared (1 no recorded wait, 1 rejected by the simulation)"
    reasons = dict(zip(v.excluded["job_id"], v.excluded["reason"], strict=True))
    assert reasons == {4: "no recorded wait", 5: "rejected by the simulation"}
    assert v.excluded.set_index("job_id").loc[5, "detail"] != ""


def test_window_excludes_the_other_jobs(tmp_path):
    path = swf(tmp_path, FCFS_WAITS)
    v = validate(path, None, "fcfs", window=(15, 35, 15))
    assert sorted(v.compared["job_id"]) == [3, 4]
    assert v.counts["outside the window"] == 2
    # jobs 1 and 2 ran as the warm-up, so the waits of 3 and 4 are FCFS's
    assert list(v.compared["simulated_wait"]) == [80, 100]
    # without a warm-up, jobs 1 and 2 are not simulated at all: 3 and 4 start at once
    v = validate(path, None, "fcfs", window=(15, 35, 0))
    assert list(v.compared["simulated_wait"]) == [0, 0]
    assert v.counts["outside the window"] == 2


def test_no_recorded_wait_at_all_is_one_line_error(tmp_path):
    path = swf(tmp_path, dict.fromkeys(FCFS_WAITS, -1))
    with pytest.raises(O2KSimError, match="0 jobs can be compared"):
        validate(path, None, "fcfs")
    p = subprocess.run(
        [sys.executable, "-m", "o2ksim", "validate", str(path)], capture_output=True, text=True, cwd=ROOT
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1 and "no job has a recorded wait" in p.stderr


def test_cli_writes_tables_run_files_and_page(tmp_path, capsys):
    out = tmp_path / "out"
    waits = {**FCFS_WAITS, 4: -1}
    assert main(["validate", str(swf(tmp_path, waits)), "--policy", "fcfs", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "3 of 4 jobs compared (1 no recorded wait)" in captured.err
    assert "KS distance 0.000" in captured.out
    for name in ("validation.csv", "validation.json", "compared.csv", "excluded.csv", "utilisation.csv",
                 "jobs.csv", "summary.json", "run.json", "validation.html"):  # fmt: skip
        assert (out / name).exists(), name
    data = json.loads((out / "validation.json").read_text())
    assert data["compared"] == 3 and data["excluded"]["no recorded wait"] == 1
    assert data["overall"]["ks"] == 0
    page = (out / "validation.html").read_text()
    assert "data:image/png;base64" in page and "simulated waits are as long as the recorded ones" in page


def test_api_name():
    assert o2ksim.validate is validate


@pytest.mark.skipif(not KTH.exists(), reason="needs ../shared/traces")
def test_kth_sp2_matches_the_issues_hand_measurement():
    """Issue 24 measured KTH-SP2 under FCFS-backfill by hand: recorded vs simulated mean
    4.25 vs 1.91 h, median 0.083 vs 0 h, 95th 23.5 vs 10.4 h, max 272 vs 72.8 h, zero
    waits 23% vs 53%, per-job Pearson 0.36."""
    o = validate(KTH, "kth-sp2", "fcfs-backfill").overall
    h = 3600
    assert o["jobs"] == 28475
    assert (round(o["rec_mean"] / h, 2), round(o["sim_mean"] / h, 2)) == (4.25, 1.91)
    assert (round(o["rec_median"] / h, 3), o["sim_median"]) == (0.083, 0)
    assert (round(o["rec_p95"] / h, 1), round(o["sim_p95"] / h, 1)) == (23.5, 10.4)
    assert (round(o["rec_max"] / h), round(o["sim_max"] / h, 1)) == (272, 72.8)
    assert (round(o["rec_zero_share"], 2), round(o["sim_zero_share"], 2)) == (0.23, 0.53)
    assert round(o["pearson"], 2) == 0.36


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--window", "10", "5"], "--window 10 5: window end"),
        (["--outage-min", "-5m"], "--outage-min -5m: must not be negative"),
        (["--warmup", "2"], "--warmup needs --window"),
        (["--window", "1997-01-01", "1997-02-01", "--machine", "nosuch"], "unknown machine 'nosuch'"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, capsys, args, says):
    assert main(["validate", str(swf(tmp_path, FCFS_WAITS)), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err


def test_missing_trace_is_a_one_line_error(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.swf")]) == 2
    assert "nope.swf: no such file" in capsys.readouterr().err
