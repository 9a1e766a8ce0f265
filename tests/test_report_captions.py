"""Report captions say what a figure shows: sentences from small hand-made frames whose
expected wording is worked out by hand; the numbers behind the new views (maximum
slowdown per runtime group, the highest 5% of the waits, means over seeds with a
Student-t interval) against hand computations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from o2ksim.report import captions, data
from o2ksim.report.gather import level_text


def frame(values: dict[str, list[float]], groups: list[int]) -> pd.DataFrame:
    rows = [
        {"policy": p, "group": g, "mean_wait": v}
        for p, vals in values.items()
        for g, v in zip(groups, vals, strict=True)
    ]
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ wording
def test_ratios_are_worded_in_two_significant_digits():
    assert captions.ratio_text(10.0, "longer", "shorter") == "about 10x longer"
    assert captions.ratio_text(113.0, "longer", "shorter") == "about 110x longer"
    assert captions.ratio_text(1.35, "longer", "shorter") == "35% longer"
    assert captions.ratio_text(1.05, "longer", "shorter") == "about the same"
    assert captions.ratio_text(0.7, "longer", "shorter") == "30% shorter"
    assert captions.ratio_text(0.25, "higher", "lower") == "about 4.0x lower"
    assert captions.number_text(0.0963) == "0.096"
    assert captions.number_text(1234.0) == "1200"


def test_runtime_group_labels_are_the_thesis_bounds():
    # upper bounds 10^i minutes, i = -1, -0.5, ..., 4: 6 s, 19 s, 1 min, ..., 167 h
    assert captions.runtime_group_label(0) == "≤ 6.0 s"
    assert captions.runtime_group_label(2) == "19 s–1.0 min"
    assert captions.runtime_group_label(6) == "32 min–1.7 h"
    assert captions.runtime_group_label(10) == "> 53 h"  # the last group holds longer jobs too


def test_a_policy_ten_times_slower_in_every_group():
    f = frame({"FCFS-backfill": [60, 120, 300], "NCSA-LSF*": [600, 1200, 3000]}, [3, 4, 5])
    assert captions.by_runtime(f, ["NCSA-LSF*", "FCFS-backfill"], "mean_wait") == [
        "NCSA-LSF* waits about 10x longer than FCFS-backfill at every runtime."
    ]


def test_an_uneven_gap_gives_its_range():
    # ratios 2, 8, 32: geometric mean 8, spread >= 3x
    f = frame({"A": [10, 10, 10], "B": [20, 80, 320]}, [1, 2, 3])
    assert captions.by_runtime(f, ["A", "B"], "mean_wait") == [
        "B waits about 8.0x longer than A at every runtime (from 2.0x to 32x)."
    ]


def test_a_mixed_comparison_names_both_directions():
    # A is the reference (geometric mean 100 < (50*300*100)^(1/3) = 114.5);
    # B/A = 0.5 (group 1), 3 (group 2), 1 (group 3, within 10%: neither)
    f = frame({"A": [100, 100, 100], "B": [50, 300, 100]}, [1, 2, 3])
    assert captions.by_runtime(f, ["A", "B"], "mean_wait") == [
        "B waits longer than A in 1 of 3 runtime groups (most at 19 s–1.0 min: about 3.0x "
        "longer) and less in 1 (most at 6.0 s–19 s: about 2.0x less), about the same in "
        "the other."
    ]


def test_longer_in_some_groups_and_the_same_in_the_others():
    # B/A = 2, 1, 1.05, 3: longer in two groups, within 10% in two
    f = frame({"A": [10, 10, 20, 10], "B": [20, 10, 21, 30]}, [4, 5, 6, 7])
    assert captions.by_runtime(f, ["A", "B"], "mean_wait") == [
        "B waits longer than A in 2 of 4 runtime groups (most at 1.7 h–5.3 h: about 3.0x "
        "longer), about the same in the other 2."
    ]


def test_equal_policies_and_slowdown_wording():
    f = frame({"A": [2.0, 4.0], "B": [2.1, 3.9]}, [4, 5])
    assert captions.by_runtime(f, ["A", "B"], "mean_wait") == [
        "B and A: about the same at every runtime."
    ]
    f = frame({"A": [2.0, 4.0], "B": [10.0, 20.0]}, [4, 5])
    assert captions.by_runtime(
        f, ["A", "B"], "mean_wait", noun="has an average slowdown", more="higher", less="lower"
    ) == ["B has an average slowdown about 5.0x higher than A at every runtime."]
    # zeros and a single policy give nothing to compare
    assert captions.by_runtime(frame({"A": [0, 0]}, [1, 2]), ["A"], "mean_wait") == []


def test_overall_sentences_name_the_lowest_and_how_far_the_highest_is():
    rank = pd.DataFrame(
        {"policy": ["P", "F", "L"], "mean wait (h)": [0.1, 0.12, 2.3],
         "95th wait (h)": [1.0, 1.05, 1.02], "max wait (h)": [0.0, 3.0, 5.0],
         "mean slowdown": [27.0, 29.0, 133.0]}
    )  # fmt: skip
    assert captions.overall_sentences(rank) == [
        "Mean wait: P lowest (0.10 h); L about 23x longer (2.3 h).",
        "95th-percentile wait: about the same for every policy (1.0 h to 1.1 h).",
        "Maximum wait: P lowest (0 h), L highest (5.0 h).",
        "Mean slowdown: P lowest (27); L about 4.9x higher (130).",
    ]


def test_top_waits_counts_and_queue_sentences():
    top = pd.DataFrame(
        {"policy": ["L", "L", "L"], "run_time": [30.0, 600.0, 7200.0],
         "wait": [3600.0 * 50, 3600.0 * 60, 3600.0 * 80]}
    )  # fmt: skip
    assert captions.top_waits_sentences(top, ["F", "L"]) == [
        "L: the highest 5% of waits (3 jobs, from 50 h to 80 h) fall on jobs running 30 s to "
        "2.0 h; 1 of them ran under a minute."
    ]
    # groups 0-4 are <= 10 min (10^1 min); groups 9-10 are > 1000 min
    counts = pd.DataFrame({"group": [0, 4, 6, 9, 10], "jobs": [10, 40, 30, 15, 5]})
    assert captions.counts_sentence(counts) == (
        "50% of the 100 jobs ran 10 minutes or less and 20% longer than 17 hours; the largest "
        "group is 3.2 min–10 min (40 jobs)."
    )
    q = pd.DataFrame({"mid": [43200.0, 129600.0, 216000.0], "queue": [1.0, 5.0, 3.0]})
    assert captions.queue_sentence(q) == (
        "The queue held 3.0 jobs on average and at most 5.0 (averaged over a bin), around day 1.5."
    )


def test_labels_with_a_slash_are_not_taken_for_paths():
    assert level_text("EQspatial-5m/>50hr") == "EQspatial-5m/>50hr"
    assert level_text("/data/traces/kth.swf") == "kth.swf"
    assert level_text("traces/kth-sp2-sample.swf") == "kth-sp2-sample.swf"
    assert level_text(2.0) == "2"


# ------------------------------------------------------------------------------ numbers
def _jobs(waits, runtimes, slowdowns):
    n = len(waits)
    return pd.DataFrame(
        {"job_id": np.arange(1, n + 1), "wait": np.asarray(waits, float),
         "run_time": np.asarray(runtimes, float), "status": "completed",
         "slowdown": np.asarray(slowdowns, float), "procs": 1, "mem": 0.0}
    )  # fmt: skip


def test_max_slowdown_per_group_at_the_runtime_where_it_occurs():
    # group 4 (3.2-10 min): runtimes 300 and 400 s; group 5 (10-32 min): 900 s
    j = _jobs([0, 0, 0], [300, 400, 900], [5.0, 9.0, 2.0])
    g = data.runtime_groups(j).set_index("group")
    assert g.loc[4, "max_slowdown"] == 9.0 and g.loc[4, "runtime_at_max_slowdown"] == 400.0
    assert g.loc[5, "max_slowdown"] == 2.0 and g.loc[5, "runtime_at_max_slowdown"] == 900.0


def test_top_waits_are_the_jobs_p95_points_remove():
    waits = list(range(1, 41))  # 40 jobs: the top 5% are the two largest waits, 40 and 39
    j = _jobs(waits, [60.0] * 40, [1.0] * 40)
    top = data.top_waits(j)
    assert top["wait"].tolist() == [40.0, 39.0] and top["job_id"].tolist() == [40, 39]
    assert data.top_waits(j.iloc[:5])["wait"].tolist() == [5.0]  # at least one job


def test_mean_over_seeds_with_a_student_t_interval():
    f = pd.DataFrame({"policy": ["a"] * 3 + ["b"], "x": [1.0, 2.0, 3.0, 7.0]})
    m = data.mean_ci(f, ["policy"], ["x"]).set_index("policy")
    # mean 2, s = 1, t(0.975, 2 df) = 4.302653: half-width 4.302653 / sqrt(3) = 2.48414
    assert m.loc["a", "x"] == 2.0 and m.loc["a", "n"] == 3
    assert m.loc["a", "x_hi"] - 2.0 == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert m.loc["a", "x_lo"] == pytest.approx(2.0 - 4.302653 / math.sqrt(3), rel=1e-6)
    assert m.loc["b", "x_lo"] == m.loc["b", "x_hi"] == 7.0  # one seed: no interval


# ------------------------------------------------------------------------------ findings
def test_findings_average_the_seeds_and_compare_the_means():
    """A hand-made gathering of two seeds: the captions speak of the mean over the seeds."""
    from o2ksim.report.findings import findings
    from o2ksim.report.gather import Gathered

    empty = pd.DataFrame()
    procs = pd.DataFrame(
        {"panel": ["seed 1", "seed 2", "seed 1", "seed 2"], "policy": ["A", "A", "B", "B"],
         "group": [0, 0, 1, 1], "label": ["1", "1", "2", "2"], "jobs": 1,
         "mean_wait": [3600.0, 7200.0, 3600.0, 3600.0], "max_wait": 0.0}
    )  # fmt: skip
    # the mean over seeds, as data.mean_ci gives it: B waits 10x as long as A in both groups
    means = pd.DataFrame(
        {"panel": "", "policy": ["A", "A", "B", "B"], "group": [3, 4, 3, 4],
         "mean_wait": [60.0, 120.0, 600.0, 1200.0]}
    )  # fmt: skip
    g = Gathered(
        table=empty, policies=["A", "B"], panels=["seed 1", "seed 2"], panel_cols=["seed"],
        pooled_seeds=False, truncated=0, runtime=empty, p95=empty, procs=procs, mem=empty,
        util=empty, window=None, seed_panels=True, level_panels=[""], runtime_mean=means,
        level_of={"seed 1": "", "seed 2": ""},
    )  # fmt: skip
    f = findings(g)
    # A's group "1": (1 h + 2 h) / 2 = 1.5 h beats B's 1 h; its 95% half-width over the two
    # seeds: t(0.975, 1) * s / sqrt(2) = 12.706 * 0.7071 h / 1.4142 = 6.35 h
    assert f["wait_vs_procs"] == [
        "The longest average wait (mean over the seeds) is 1.5 h ± 6.4 h (95% interval, "
        "2 seeds), under A for requested processors 1."
    ]
    assert f["wait_vs_runtime"] == ["B waits about 10x longer than A at every runtime."]
    assert f["max_vs_runtime"] == []  # no max_wait column: nothing said


def test_a_zero_in_the_reference_counts_as_longer_not_as_missing():
    # A waits 0 in group 1 where B waits 60 s; elsewhere B waits 10x as long
    f = frame({"A": [0, 10, 10], "B": [60, 100, 100]}, [1, 2, 3])
    assert captions.by_runtime(f, ["A", "B"], "mean_wait") == [
        "B waits about 10x longer than A at every runtime (0 for one of them in 1 of 3 groups)."
    ]
    # mixed: B is 0 where A is not, longer elsewhere
    f = frame({"A": [30, 10, 0], "B": [0, 100, 50]}, [1, 2, 3])
    assert captions.by_runtime(f, ["A", "B"], "mean_wait") == [
        "B waits longer than A in 2 of 3 runtime groups (most at 1.0 min–3.2 min: longer, "
        "against 0 for A) and less in 1 (most at 6.0 s–19 s: less: 0 for B)."
    ]
    # both 0: no information, left out
    f = frame({"A": [0, 10], "B": [0, 100]}, [1, 2])
    assert captions.by_runtime(f, ["A", "B"], "mean_wait") == [
        "B waits about 10x longer than A for jobs of 19 s–1.0 min."
    ]


def test_the_side_with_more_runtime_groups_comes_first():
    # A has the lower geometric mean (one group where B waits 100x longer), yet B waits
    # less than A in three groups of four
    f = frame({"A": [10, 10, 10, 10], "B": [5, 5, 5, 1000]}, [2, 3, 4, 5])
    assert captions.by_runtime(f, ["A", "B"], "mean_wait") == [
        "B waits less than A in 3 of 4 runtime groups (most at 19 s–1.0 min: about 2.0x "
        "less) and longer in 1 (most at 10 min–32 min: about 100x longer)."
    ]
