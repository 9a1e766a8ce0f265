"""Means over seeds with Student-t 95% intervals for the 95th-percentile, size, class and
utilisation figures: hand-made frames, means and half-widths computed by hand.

Student-t quantiles from a table: t(0.975, 1) = 12.7062, t(0.975, 2) = 4.3027.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from o2ksim.report.gather import p95_over_seeds, seed_means

T1 = 12.7062  # t(0.975, 1): two seeds
T2 = 4.3027  # t(0.975, 2): three seeds
LEVEL_OF = {"seed 1": "", "seed 2": "", "seed 3": ""}
HOUR = 3600.0


def size_rows() -> pd.DataFrame:
    """Policy A over three seeds: mean waits 1, 2, 3 h in group 0; group 1 only in seeds 1-2."""
    return pd.DataFrame(
        {"panel": ["seed 1", "seed 2", "seed 3", "seed 1", "seed 2"], "policy": "A",
         "group": [0, 0, 0, 1, 1], "label": ["1", "1", "1", "2", "2"], "jobs": 1,
         "mean_wait": [1 * HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR],
         "max_wait": [2 * HOUR, 2 * HOUR, 2 * HOUR, 5 * HOUR, 9 * HOUR]}
    )  # fmt: skip


def test_size_means_over_three_seeds_and_over_the_two_that_have_a_group():
    m = seed_means(size_rows(), LEVEL_OF, ["group", "label"], ["mean_wait", "max_wait"])
    m = m.set_index("group")
    # group 0: 1, 2, 3 h -> mean 2 h, s = 1 h, half = 4.3027 / sqrt(3) h = 2.4842 h
    assert m.loc[0, "n"] == 3
    assert m.loc[0, "mean_wait"] == pytest.approx(2 * HOUR)
    assert m.loc[0, "mean_wait_hi"] - m.loc[0, "mean_wait"] == pytest.approx(2.4842 * HOUR, rel=1e-4)
    assert m.loc[0, "mean_wait"] - m.loc[0, "mean_wait_lo"] == pytest.approx(2.4842 * HOUR, rel=1e-4)
    # a measure equal in every seed has no spread
    assert m.loc[0, "max_wait_lo"] == m.loc[0, "max_wait_hi"] == pytest.approx(2 * HOUR)
    # group 1: 4, 6 h in two seeds -> mean 5 h, s = sqrt(2) h, half = 12.7062 * sqrt(2) / sqrt(2)
    assert m.loc[1, "n"] == 2
    assert m.loc[1, "mean_wait"] == pytest.approx(5 * HOUR)
    assert m.loc[1, "mean_wait_hi"] == pytest.approx((5 + T1) * HOUR, rel=1e-4)
    # max 5, 9 h: mean 7 h, s = 2.8284 h, half = 12.7062 * 2.8284 / 1.4142 = 25.412 h
    assert m.loc[1, "max_wait_hi"] - m.loc[1, "max_wait"] == pytest.approx(2 * T1 * HOUR, rel=1e-4)
    assert (m["panel"] == "").all() and m.loc[1, "label"] == "2"


def test_no_means_when_the_seeds_are_not_panels():
    assert seed_means(size_rows(), {}, ["group", "label"], ["mean_wait"]).empty


def test_p95_over_seeds_averages_each_ranges_largest_remaining_wait_only():
    rows = []
    for seed, (w1, w2, rt) in enumerate([(10.0, 5.0, 100.0), (20.0, 1.0, 300.0), (60.0, 2.0, 200.0)], 1):
        rows.append({"range": 2, "upper_min": 100.0, "rank": 1, "run_time": rt, "wait": w1,
                     "panel": f"seed {seed}", "policy": "A"})  # fmt: skip
        rows.append({"range": 2, "upper_min": 100.0, "rank": 2, "run_time": 50.0, "wait": w2,
                     "panel": f"seed {seed}", "policy": "A"})  # fmt: skip
    m = p95_over_seeds(pd.DataFrame(rows), LEVEL_OF)
    assert len(m) == 1 and m["group"].iloc[0] == 2
    row = m.iloc[0]
    # largest waits 10, 20, 60 s: mean 30, s = sqrt(((-20)^2 + (-10)^2 + 30^2) / 2) = sqrt(700)
    assert row["p95_wait"] == pytest.approx(30.0)
    assert row["p95_wait_hi"] - row["p95_wait"] == pytest.approx(T2 * math.sqrt(700) / math.sqrt(3), rel=1e-4)
    assert row["runtime_gmean"] == pytest.approx(200.0)  # where they occur: 100, 300, 200 s


def test_size_figure_draws_the_mean_and_its_interval_as_error_bars():
    from matplotlib.container import ErrorbarContainer

    from o2ksim.report import figures as F

    m = seed_means(size_rows(), LEVEL_OF, ["group", "label"], ["mean_wait", "max_wait"])
    fig = F.size_figure(m, ["A"], [""], "procs")
    ax = fig.axes[0]  # average wait
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 1
    line, _caps, (segments,) = bars[0].lines
    assert list(line.get_ydata()) == pytest.approx([2.0, 5.0])  # hours
    spans = [tuple(seg[:, 1]) for seg in segments.get_segments()]
    # group 0: 2 h ± 2.4842 h (from 0 up: a wait is not negative); group 1: 5 h ± 12.7062 h
    assert spans[0] == pytest.approx((0.0, 2 + 2.4842), rel=1e-4)
    assert spans[1] == pytest.approx((0.0, 5 + T1), rel=1e-4)
    assert "mean over seeds" in fig.texts[0].get_text()


def test_class_figure_with_intervals_draws_bar_means_and_t_intervals():
    from o2ksim.report import figures as F

    classes = pd.DataFrame(
        {"panel": "", "policy": "A", "class": "st_sj", "jobs": 1,
         "mean_wait": [1 * HOUR, 2 * HOUR, 3 * HOUR], "max_wait": 0.0, "mean_slowdown": 1.0}
    )  # fmt: skip
    fig = F.class_figure(classes, ["A"], [""], "mean_wait", intervals=True)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches if p.get_height() > 0]
    assert heights == pytest.approx([2.0])
    ys = [tuple(ln.get_ydata()) for ln in ax.lines if len(ln.get_ydata()) == 2]
    # 2 h ± 2.4842 h, cut at 0 below (a wait is not negative), as the error bars are
    assert ys == [pytest.approx((0.0, 2 + 2.4842), abs=1e-4)]
    # without intervals: the same bar, no line
    plain = F.class_figure(classes, ["A"], [""], "mean_wait")
    assert not [ln for ln in plain.axes[0].lines if len(ln.get_ydata()) == 2]


def test_utilisation_means_per_bin_and_the_band_drawn_under_one():
    from o2ksim.report import figures as F

    util = pd.DataFrame(
        {"panel": ["seed 1", "seed 2", "seed 3", "seed 1", "seed 2", "seed 3"], "policy": "A",
         "start": [0.0, 0.0, 0.0, 86400.0, 86400.0, 86400.0],
         "end": [86400.0, 86400.0, 86400.0, 172800.0, 172800.0, 172800.0],
         "mid": [43200.0] * 3 + [129600.0] * 3,
         "utilisation": [0.5, 0.6, 0.7, 0.9, 0.9, 0.9]}
    )  # fmt: skip
    m = seed_means(util, LEVEL_OF, ["start", "end"], ["utilisation", "mid"])
    m = m.sort_values("start", ignore_index=True)
    # day 0: 0.5, 0.6, 0.7 -> 0.6 ± 4.3027 * 0.1 / sqrt(3) = 0.24842; day 1: 0.9, no spread
    assert m["utilisation"].tolist() == pytest.approx([0.6, 0.9])
    assert m.loc[0, "utilisation_hi"] == pytest.approx(0.6 + 0.24842, rel=1e-4)
    assert m.loc[1, "utilisation_lo"] == m.loc[1, "utilisation_hi"] == pytest.approx(0.9)
    fig = F.utilisation_figure(m, ["A"], [""], None)
    (band,) = fig.axes[0].collections
    ys = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
    assert ys.min() == pytest.approx(0.6 - 0.24842, rel=1e-4)
    assert ys.max() == pytest.approx(0.9)  # day 0's upper bound 0.848 is below day 1's 0.9
    assert "bands: 95% confidence interval" in fig.texts[0].get_text()
