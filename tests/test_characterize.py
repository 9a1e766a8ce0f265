"""Thesis ch. 4 characterisation (o2ksim.workloads.characterize, ``o2ksim characterize``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from o2ksim.cli import main
from o2ksim.workloads import characterize as ch
from o2ksim.workloads import models
from o2ksim.workloads.swf import SWFHeader, Trace, jobs_frame, read_swf, write_swf

SHARED = Path(__file__).resolve().parents[2] / "shared"
KTH = SHARED / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def o2k_month():
    # every job of the model (the dedicated-host vst jobs too): the arrival process as parametrised
    t = models.generate("o2k", span="28d", seed=4, overrides={"dedicated": {"include": True}})
    return t, ch.characterize(t)


def test_local_clock():
    # 2000-01-03 00:00 UTC is a Monday; Stockholm is UTC+1 in winter, UTC+2 in summer
    _day, minute, weekday = ch.local_clock_unix(np.array([946857600, 946857600 + 3600 * 25]))
    assert weekday.tolist() == [0, 1] and minute.tolist() == [0, 60]
    _, minute, _ = ch.local_clock_unix(np.array([946857600, 962409600]), "Europe/Stockholm")
    assert minute.tolist() == [60, 120]
    _, minute, _ = ch.local_clock_unix(np.array([946857600]), -3600)
    assert minute.tolist() == [23 * 60]
    _, minute, _ = ch.local_clock_unix(np.array([946857600]), "Not/AZone")
    assert minute.tolist() == [0]


def test_summary_of_a_generated_month(o2k_month):
    t, c = o2k_month
    s = c.summary
    assert s["jobs"] == len(t.jobs) and s["span_days"] == pytest.approx(28)
    assert 0.30 <= s["serial_share"] <= 0.40
    assert s["power_of_two_share"] > 0.85
    assert 300 < s["jobs_per_weekday"] < 450 and 120 < s["jobs_per_weekend_day"] < 230
    assert s["share_default_requests"] > 0.3
    assert s["requested_memory_known"] == 1.0


def test_periods_and_fits(o2k_month):
    _t, c = o2k_month
    per = c.tables["periods"].set_index("period")
    assert list(per.index) == [p["name"] for p in ch.DEFAULT_PERIODS]
    params, _ = models.load_params("o2k")
    means = {p["name"]: p["mean_s"] for p in params["arrivals"]["period"]}
    for name, row in per.iterrows():
        assert row["mean_s"] == pytest.approx(means[name], rel=0.2)
        assert 0.9 < row["cv"] < 1.8
        assert {"hyperexp_ks", "weibull_ks", "gamma_ks", "exponential_ks"} <= set(row.index)
    # peak: about 375 jobs in ten hours on a weekday
    assert per.loc["weekday-peak", "jobs_per_hour"] == pytest.approx(
        3600 / means["weekday-peak"], rel=0.15
    )


def test_class_table_compares_with_table_6(o2k_month):
    _, c = o2k_month
    cls = c.tables["lsf_classes"].set_index("class")
    assert cls.loc["none", "jobs"] == 0
    assert cls["share"].sum() == pytest.approx(1.0)
    assert cls.loc["vst_sj", "table6_share"] == pytest.approx(0.3686, abs=1e-4)
    assert set(c.tables["memory_by_procs"]["procs"]) >= {"1-2", "3-8", "9-32", "33-64"}


def test_text_and_csv(o2k_month, tmp_path):
    _, c = o2k_month
    text = c.to_text()
    assert "== periods ==" in text and "weekday-peak" in text
    staged = c.save(tmp_path)
    assert (tmp_path / "summary.csv").exists() and "periods.csv" in staged.written


def test_save_replaces_an_earlier_characterisation_as_a_whole(o2k_month, tmp_path):
    """``Characterization.save`` in Python is what ``characterize --out`` is: a second save
    into the folder removes what the first wrote and this one does not (a trace without
    memory after one with), says so, and leaves the user's own files."""
    _, with_memory = o2k_month
    with_memory.save(tmp_path)
    assert (tmp_path / "memory.csv").exists()
    (tmp_path / "notes.txt").write_text("mine")
    rows = [[i + 1, i * 600, -1, 100 + i, 1 + i % 4, -1, -1, -1, -1, -1, 1, 1, 1, -1, -1, -1, -1, -1]
            for i in range(200)]  # fmt: skip
    plain = ch.characterize(Trace(jobs=jobs_frame(rows), header=SWFHeader(max_procs=8)), fits=False)
    staged = plain.save(tmp_path)
    assert not (tmp_path / "memory.csv").exists() and (tmp_path / "notes.txt").read_text() == "mine"
    assert "memory.csv" in staged.replaced_text() and "which this characterisation does not write" in (
        staged.replaced_text()
    )


def test_trace_without_requests_or_memory():
    rows = [
        [i + 1, i * 600, -1, 100 + i, 1 + i % 4, -1, -1, -1, -1, -1, 1, 1, 1, -1, -1, -1, -1, -1]
        for i in range(200)
    ]
    t = Trace(jobs=jobs_frame(rows), header=SWFHeader(max_procs=8), source="plain")
    c = ch.characterize(t, fits=False)
    assert c.summary["requested_runtime_known"] == 0.0
    assert "memory" not in c.tables and "ratio" not in c.tables
    assert c.summary["load"] > 0


def test_cli_characterize_writes_tables_and_figures(tmp_path, capsys):
    swf = tmp_path / "m.swf"
    write_swf(models.generate("o2k", span="7d", seed=1), swf)
    out = tmp_path / "char"
    assert main(["characterize", str(swf), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "== summary ==" in printed and "lsf classes" in printed
    for name in (
        "jobs_per_day.png",
        "interarrivals.png",
        "runtimes.png",
        "lsf_classes.png",
        "periods.csv",
    ):
        assert (out / name).stat().st_size > 0
    assert main(["characterize", str(tmp_path / "missing.swf")]) == 2


@pytest.mark.traces
@pytest.mark.skipif(not KTH.exists(), reason="needs ../shared/traces")
def test_kth_characterisation():
    c = ch.characterize(read_swf(KTH), fits=False)
    assert c.summary["serial_share"] == pytest.approx(0.329, abs=0.005)
    assert c.summary["power_of_two_share"] == pytest.approx(0.742, abs=0.005)
    hours = c.tables["jobs_per_hour"]
    # Stockholm local time: the day shift is busier than the night
    assert hours.loc[9:16, "weekday_mean"].mean() > 2 * hours.loc[0:5, "weekday_mean"].mean()
