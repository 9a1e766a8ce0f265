"""Reports: the numbers behind the thesis's plots (hand-computed), the HTML page and the
Gantt chart."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from o2ksim import __version__
from o2ksim.cli import main
from o2ksim.experiments.scenario import parse_scenario
from o2ksim.experiments.store import load_results
from o2ksim.experiments.sweep import run_sweep
from o2ksim.report import data

REPO = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def jobs(waits, runtimes, procs=None, mem=None, status="completed"):
    n = len(waits)
    return pd.DataFrame(
        {
            "job_id": np.arange(1, n + 1),
            "wait": np.asarray(waits, float),
            "run_time": np.asarray(runtimes, float),
            "procs": np.asarray(procs if procs is not None else [1] * n),
            "mem": np.asarray(mem if mem is not None else [0.0] * n, float),
            "status": [status] * n,
            "slowdown": 1.0,
        }
    )


# ------------------------------------------------------------------------------------ data
def test_p95_points_drop_the_top_5_percent_then_take_the_top_three_per_range():
    # 40 jobs: runtimes cycle over the six ranges' representatives; wait = job number
    reps = [30.0, 300.0, 3000.0, 30000.0, 120000.0, 2e6]  # 0.5, 5, 50, 500, 2000 min, > 10^4 min
    runtimes = [reps[i % 6] for i in range(40)]
    waits = list(range(1, 41))
    pts = data.p95_points(jobs(waits, runtimes))
    # the top 5% (2 of 40: waits 40 and 39) are gone
    assert pts["wait"].max() == 38
    by_range = {r: sorted(g["wait"].tolist(), reverse=True) for r, g in pts.groupby("range")}
    # range r holds waits r+1, r+7, r+13, ... up to 38
    for r in range(6):
        own = [w for w in range(1, 39) if (w - 1) % 6 == r]
        assert by_range[r] == sorted(own, reverse=True)[:3]
    assert pts.loc[pts["range"] == 5, "run_time"].eq(2e6).all()  # longer than 10^4 min: last range
    assert list(pts.columns) == ["range", "upper_min", "rank", "run_time", "wait"]


def test_p95_points_use_only_analysed_jobs_that_ran():
    j = jobs([5, 500, 7], [30, 30, 30])
    j["analysed"] = [True, False, True]
    j.loc[2, "status"] = "rejected"
    pts = data.p95_points(j)
    assert pts["wait"].tolist() == [5.0]


def test_size_groups_processors_and_memory():
    j = jobs(
        waits=[10, 20, 30, 40, 50, 60],
        runtimes=[60] * 6,
        procs=[1, 2, 3, 4, 64, 65],
        mem=[0, 256, 512, 1024, 4096, 200 * 1024],  # MB
    )
    p = data.size_groups(j, "procs")
    assert p["label"].tolist() == ["1", "2", "3-4", "33-64", "65-128"]
    assert p["mean_wait"].tolist() == [10, 20, 35, 50, 60]
    assert p["max_wait"].tolist() == [10, 20, 40, 50, 60]
    m = data.size_groups(j, "mem")  # the job without a memory request is left out
    assert m["label"].tolist() == ["≤0.25 GB", "0.25-0.5 GB", "0.5-1 GB", "2-4 GB", ">128 GB"]
    assert m["jobs"].sum() == 5
    with pytest.raises(ValueError):
        data.size_groups(j, "colour")


def test_utilisation_series_is_exact_per_bin():
    segs = pd.DataFrame(
        {"job_id": [1, 2, 3], "host": "h", "start": [0.0, 50.0, 150.0], "end": [100.0, 150.0, 175.0],
         "procs": [4, 2, 8], "mem": 0.0}
    )  # fmt: skip
    u = data.utilisation_series(segs, total_procs=8, start=0.0, end=200.0, bins=4)
    # bin [0,50): 4 procs; [50,100): 6; [100,150): 2; [150,200): 8 procs for 25 of 50 s
    assert u["utilisation"].tolist() == pytest.approx([0.5, 0.75, 0.25, 0.5])
    assert u["mid"].tolist() == [25.0, 75.0, 125.0, 175.0]
    # a range starting before and ending inside the segments
    u2 = data.utilisation_series(segs, 8, -50.0, 50.0, bins=2)
    assert u2["utilisation"].tolist() == pytest.approx([0.0, 0.5])
    assert data.utilisation_series(segs.iloc[:0], 8, 0, 10, 2)["utilisation"].tolist() == [0, 0]


# ------------------------------------------------------------------------------------ page
@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    """Two policies x two seeds on the KTH sample, plus one run that fails."""
    tmp = tmp_path_factory.mktemp("report")
    bad = tmp / "bad.swf"
    bad.write_text("1 0 0 60 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n2 x\n")
    sample = REPO / "traces" / "kth-sp2-sample.swf"
    text = f"""
name = "report-test"
description = "a report fixture"
source = "tests"
policies = ["fcfs", "fcfs-backfill"]
[workload]
trace = "{sample}"
[protocol]
window = ["9d", "14d"]
warmup = "1d"
seeds = [0, 1]
[factors]
workload.trace = ["{sample}", "{bad}"]
"""
    sc = parse_scenario(text, path=str(tmp / "s.toml"))
    run_sweep(sc, tmp / "out", workers=2)
    # the report is written through the CLI, into RESULTS/report as the default would
    assert main(["report", str(tmp / "out"), "--out", str(tmp / "out" / "report"), "-q"]) == 0
    return tmp / "out"


def test_report_page_is_self_contained_with_figures_tables_scenario_and_versions(results_dir):
    page = (results_dir / "report" / "report.html").read_text()
    fig_dir = results_dir / "report" / "figures"
    figs = sorted(p.stem for p in fig_dir.glob("*.png"))
    # every per-seed figure has its mean over the seeds (the highest waits and counts have none)
    per_seed = ["overall", "wait_vs_runtime", "p95_vs_runtime", "max_vs_runtime",
                "slowdown_vs_runtime", "max_slowdown_vs_runtime", "wait_vs_procs",
                "utilisation"]  # fmt: skip
    assert figs == sorted(
        [*per_seed, *(f"{n}_mean" for n in per_seed), "top_waits", "runtime_counts"]
    )  # fmt: skip
    # the means' tables are written beside the figures
    tables = {p.stem for p in (results_dir / "report" / "tables").glob("*.csv")}
    assert {"p95_points_mean_ci", "wait_vs_procs_mean_ci", "utilisation_mean_ci"} <= tables
    # an SVG beside every PNG, linked from the page
    assert sorted(p.stem for p in fig_dir.glob("*.svg")) == figs
    for name in figs:
        assert f"href='figures/{name}.svg'" in page
    embedded = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(embedded) == len(figs)
    for b64 in embedded:
        assert base64.b64decode(b64).startswith(PNG_MAGIC)
    # numbered figures, each listed in the table of contents under its section
    numbered = re.findall(r"<figcaption><b>Figure (\d+)\. ([^<]+)\.</b>", page)
    assert [int(n) for n, _ in numbered] == list(range(1, len(numbered) + 1))
    assert len(numbered) == len(figs) - len(per_seed)  # per-seed versions fold under the means
    toc = page[page.index("<nav class='toc'"):page.index("</nav>")]
    for n, title in numbered:
        assert f"Figure {n}. {title}</a>" in toc
    for h2 in re.findall(r"<h2 id='([^']+)'>", page):
        assert f"href='#{h2}'" in toc
    # "In short" repeats the key figures' findings, each linked to its numbered figure
    summary = page[page.index("<h2 id='summary'>"):page.index("<h2 id='figures'>")]
    links = re.findall(r"<a href='#fig-([a-z_0-9]+)'>Figure (\d+)</a>: ([^<]+)</li>", summary)
    assert [name for name, _n, _t in links][:2] == ["overall", "wait_vs_runtime"]
    for name, n, text in links:
        caption = re.search(rf"<figure id='fig-{name}'.*?<figcaption><b>Figure (\d+)\. [^<]+</b> ([^<]+)<", page)
        assert caption is not None and caption.group(1) == n and caption.group(2).startswith(text.strip())
    # the per-seed panels are folded away; alt texts describe, they do not repeat a file name
    assert page.count("<details><summary>Show the 2 per-seed panels</summary>") == len(numbered) - 1
    alts = re.findall(r"alt='([^']*)'", page)
    assert all(len(a) > 40 and a.split(":")[0] in ("Bar chart", "Line chart", "Scatter plot",
               "Step chart") for a in alts)  # fmt: skip
    assert "src='http" not in page and "<script" not in page  # nothing fetched
    # KTH has no memory requests: that figure is listed as not drawn
    assert "Not drawn (no data): wait_vs_mem" in page
    # the ranking, the scenario text, the versions, the failed runs
    assert "Which policy?" in page and "<td class=''>fcfs-backfill</td>" in page
    assert 'name = "report-test"' in page and "a report fixture" in page
    assert f"<td class=''>{__version__}</td>" in page
    assert page.count("Failed runs") == 1 and "bad.swf" in page
    assert "8 planned runs: 4 finished" in page and "4 failed" in page
    assert "2 panels, one per seed: seed 0; seed 1. Each figure shows the mean over the seeds" in page
    # a mean figure says in its alt text and method how its interval is drawn
    fig = page[page.index("<figure id='fig-wait_vs_procs'"):]
    fig = fig[:fig.index("</figure>")]
    assert "Wait versus requested processors (mean over seeds), one line per policy" in fig
    assert "with 95% confidence intervals over the seeds" in fig
    assert "Points: the mean over the seeds; error bars: its 95% Student-t confidence interval." in fig
    assert "<details><summary>Show the 2 per-seed panels</summary>" in fig
    assert "alt='Line chart: Wait versus requested processors, one panel per seed.'" in fig


def test_report_tables_hold_the_numbers_the_figures_draw(results_dir):
    res = load_results(results_dir)
    tables = results_dir / "report" / "tables"
    rt = pd.read_csv(tables / "runtime_groups.csv")
    rid = res.ok.loc[(res.ok["policy"] == "fcfs-backfill") & (res.ok["seed"] == 1), "run_id"].iloc[
        0
    ]
    want = data.runtime_groups(res.jobs(rid))
    got = rt.loc[(rt["policy"] == "fcfs-backfill") & (rt["panel"] == "seed 1")].reset_index(
        drop=True
    )
    pd.testing.assert_frame_equal(got[want.columns], want, check_dtype=False)
    rank = pd.read_csv(tables / "ranking.csv")
    assert rank["policy"].tolist() == ["fcfs", "fcfs-backfill"]
    fcfs = res.ok.loc[res.ok["policy"] == "fcfs"]
    assert rank.loc[0, "mean wait (h)"] == pytest.approx(fcfs["mean_wait"].mean() / 3600)
    # the 95th-percentile plot over seeds, by hand from the per-seed points: for two seeds
    # a and b, mean (a + b) / 2 and half-width t(0.975, 1) * s / sqrt(2) = 12.7062 * |a - b| / 2
    pts = pd.read_csv(tables / "p95_points.csv")
    pts = pts.loc[(pts["policy"] == "fcfs") & (pts["rank"] == 1)]
    means = pd.read_csv(tables / "p95_points_mean_ci.csv")
    means = means.loc[means["policy"] == "fcfs"].set_index("group")
    checked = 0
    for rng, part in pts.groupby("range"):
        if len(part) < 2:
            continue
        checked += 1
        a, b = part["wait"].tolist()
        assert means.loc[rng, "p95_wait"] == pytest.approx((a + b) / 2)
        assert means.loc[rng, "p95_wait_hi"] - means.loc[rng, "p95_wait"] == pytest.approx(
            12.7062 * abs(a - b) / 2, rel=1e-4
        )
    assert checked >= 3  # ranges where both seeds have a point
    runs = pd.read_csv(tables / "runs.csv")
    assert len(runs) == 8 and (runs["status"] == "failed").sum() == 4


def test_gather_pools_seeds_when_there_are_too_many_panels(results_dir):
    from o2ksim.report.html import gather

    g = gather(load_results(results_dir), max_panels=1)
    assert g.pooled_seeds and g.panels == [""]
    # pooled: each policy's runtime groups count the jobs of both seeds
    n = g.runtime.loc[g.runtime["policy"] == "fcfs", "jobs"].sum()
    assert n == 2 * int(load_results(results_dir).ok["jobs"].iloc[0])
    assert any("pooled" in note for note in g.notes)


def test_verdict_names_the_best_policy_and_ties():
    from o2ksim.report.html import verdict

    rank = pd.DataFrame(
        {"policy": ["a", "b", "c"], "mean wait (h)": [2.0, 1.0, 1.0], "95th wait (h)": [4.0, 5.0, 8.0],
         "max wait (h)": [9.0, 9.0, 9.0], "mean slowdown": [3.0, 6.0, 4.0]}
    )  # fmt: skip
    lines = verdict(rank)
    assert (
        lines[0]
        == "Lowest mean wait: <b>b</b> and <b>c</b> (1.00 h, tied, 50% below the next best)."
    )
    assert lines[1] == "Lowest 95th wait: <b>a</b> (4.00 h, 20% below the next best)."
    assert lines[2].endswith("(9.00 h, all tied).")
    assert lines[3] == "Lowest mean slowdown: <b>a</b> (3.00, 25% below the next best)."


def test_cli_report_error_is_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not a results directory" in err and err.count("\n") == 1


# ------------------------------------------------------------------------------------ Gantt
def test_gantt_rows_never_overlap_and_match_each_allocation(results_dir):
    from o2ksim.report.gantt import assign_rows

    res = load_results(results_dir)
    rid = res.ok["run_id"].iloc[1]
    segs = res.segments(rid)
    bars = assign_rows(segs, {"IBM-SP2": 100})
    assert (bars["row"] >= 0).all() and (bars["row"] + bars["rows"] <= 100).all()
    # every allocation gets exactly its processors
    drawn = bars.groupby(["job_id", "start"])["rows"].sum()
    want = segs.loc[segs["procs"] > 0].set_index(["job_id", "start"])["procs"]
    pd.testing.assert_series_equal(drawn.sort_index(), want.sort_index(), check_names=False)
    # at every bar start, the rows in use are disjoint
    for t in bars["start"].unique()[:300]:
        live = bars.loc[(bars["start"] <= t) & (bars["end"] > t)]
        used = np.zeros(100, dtype=int)
        for b in live.itertuples():
            used[b.row : b.row + b.rows] += 1
        assert used.max() <= 1


def test_cli_gantt_from_results_run_and_scenario(results_dir, tmp_path, capsys):
    res = load_results(results_dir)
    rid = res.ok["run_id"].iloc[0]
    png = tmp_path / "g.png"
    assert main(["gantt", str(results_dir), "--run", rid[:-3], "--start", "10d", "--end", "11d",
                 "-o", str(png)]) == 0  # fmt: skip
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert main(["gantt", str(results_dir), "-o", str(png)]) == 2
    assert "choose one with --run" in capsys.readouterr().err
    assert main(["gantt", str(results_dir), "--run", "fcfs", "-o", str(png)]) == 2
    assert "4 finished run(s) match" in capsys.readouterr().err  # fcfs-... and fcfs-backfill-...
    assert main(["gantt", str(results_dir / "runs" / rid), "--hosts", "nope", "-o", str(png)]) == 2
    assert "unknown host" in capsys.readouterr().err
    png2 = tmp_path / "fig1.png"
    assert main(["gantt", "explain-backfill", "-o", str(png2)]) == 0
    assert png2.stat().st_size > 5000


def test_report_has_wait_per_lsf_class_for_runs_on_the_o2k(tmp_path):
    from o2ksim.report.gather import lsf_classes_table
    from o2ksim.run.api import simulate
    from o2ksim.workloads.models import generate

    trace = generate("o2k", span=2 * 86400, seed=3)
    by_policy = {
        p: [simulate(trace, machine="o2k", policy=p).jobs] for p in ("fcfs-backfill", "ncsa-lsf")
    }
    table = lsf_classes_table(by_policy)
    assert list(table["class"][:3]) == ["vst_sj", "st_sj", "mt_sj"]
    assert table["fcfs-backfill jobs"].sum() == table["ncsa-lsf jobs"].sum() > 0
    ran = by_policy["ncsa-lsf"][0]
    vst_sj = ran[(ran.req_time <= 5 * 3600) & (ran.procs <= 8) & (ran.mem <= 2048)]
    row = table.set_index("class").loc["vst_sj"]
    assert row["ncsa-lsf max wait (h)"] * 3600 == pytest.approx(vst_sj["wait"].max())
    # not on the O2K hosts: no table
    assert lsf_classes_table({"fcfs": [pd.DataFrame({"host": ["kth"], "status": ["completed"]})]}).empty


def test_every_figure_draws_every_panel_it_announces(tmp_path):
    """Six seeds, six panels in every per-panel figure (no 'seeds 1-4 of 6')."""
    import matplotlib.image

    from o2ksim.report.html import gather, make_figures

    sample = REPO / "traces" / "kth-sp2-sample.swf"
    sc = parse_scenario(
        f"""
name = "six"
policies = ["fcfs-backfill"]
[workload]
trace = "{sample}"
[protocol]
window = ["9d", "11d"]
warmup = "1d"
seeds = [1, 2, 3, 4, 5, 6]
""",
        path=str(tmp_path / "s.toml"),
    )
    run_sweep(sc, tmp_path / "out", workers=1)
    g = gather(load_results(tmp_path / "out"))
    assert g.panels == [f"seed {i}" for i in range(1, 7)]
    figs = make_figures(g, tmp_path / "figs")
    # one panel title per seed in each per-panel figure: count the titled axes by
    # re-drawing the figures with the same functions
    from o2ksim.report import figures as F

    with F.report_style():
        for fig in (
            F.runtime_figure(g.runtime, g.policies, g.panels, "mean_wait"),
            F.size_figure(g.procs, g.policies, g.panels, "procs"),
            F.utilisation_figure(g.util, g.policies, list(dict.fromkeys(g.util["panel"])),
                                 g.window),
        ):
            titles = {ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_title()}
            assert titles == set(g.panels)
    assert set(g.util["panel"]) == set(g.panels)
    assert matplotlib.image.imread(figs["utilisation"]).shape[0] > 6 * 200  # six rows drawn


def test_which_policy_is_ranked_per_factor_level_not_averaged_across_levels():
    """Hand-made table: A wins at load 0.5 (1 h vs 2 h), B at load 0.9 (3 h vs 9 h).
    Averaged over the levels A would lose (5 h vs 2.5 h) -- the page must not say that."""
    from o2ksim.report.html import Gathered, rankings

    h = 3600.0
    rows = [("A", 0.5, 1 * h), ("B", 0.5, 2 * h), ("A", 0.9, 9 * h), ("B", 0.9, 3 * h)]
    table = pd.DataFrame(
        {
            "index": range(4),
            "policy": [r[0] for r in rows],
            "workload.load": [r[1] for r in rows],
            "mean_wait": [r[2] for r in rows],
            "p95_wait": [r[2] for r in rows],
            "max_wait": [r[2] for r in rows],
            "mean_slowdown": 1.0,
            "mean_bounded_slowdown": 1.0,
            "utilisation": 0.5,
        }
    )
    empty = pd.DataFrame()
    g = Gathered(table, ["A", "B"], [], ["workload.load"], False, 0, empty, empty, empty, empty,
                 empty, None, level_cols=["workload.load"])  # fmt: skip
    ranked = rankings(g)
    assert [label for label, _ in ranked] == ["load 0.5", "load 0.9"]
    best = [r.loc[r["mean wait (h)"].idxmin(), "policy"] for _, r in ranked]
    assert best == ["A", "B"]


def test_wait_axis_turns_logarithmic_only_when_waits_span_orders_of_magnitude():
    from o2ksim.report import figures as F

    _fig, (a, b) = F.subplots(1, 2)
    F.wait_scale(a, [0.05, 0.2, 30.0])  # minutes next to 30 hours: 600x
    F.wait_scale(b, [0.5, 2.0, 30.0])  # 60x: stays linear
    assert a.get_yscale() == "symlog" and a.get_ylabel().endswith("(log scale)")
    assert b.get_yscale() == "linear" and b.get_ylim()[0] == 0


def test_long_factor_levels_are_wrapped_and_turned_under_the_bars():
    from o2ksim.report import figures as F

    levels = ["estimates scenario-a:100, load 0.9", "estimates scenario-b, load 0.9",
              "estimates requested, load 0.9"]  # fmt: skip
    table = pd.DataFrame(
        [{"policy": p, "level": lv, "mean_wait": 3600.0, "p95_wait": 7200.0, "max_wait": 9000.0,
          "mean_slowdown": 2.0} for p in ("A", "B") for lv in levels]
    )  # fmt: skip
    fig = F.overall_figure(table, ["A", "B"], "level", "estimates, load")
    ticks = fig.axes[0].get_xticklabels()
    assert all(max(len(line) for line in t.get_text().split("\n")) <= 16 for t in ticks)
    assert all(t.get_rotation() == 25 for t in ticks)
