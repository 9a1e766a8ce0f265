"""The many-month statistics of ``benchmarks/goal_months.py`` (issue 26), by hand.

Expected values are computed by hand: geometric means of chosen ratios, the
Student t quantile t(0.95; 1) = 6.313752 from a printed table, CPU sums.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "goal_months.py"


@pytest.fixture(scope="module")
def gm():
    spec = importlib.util.spec_from_file_location("goal_months", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["goal_months"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_geometric_mean_and_its_90_percent_t_interval(gm):
    # ratios 2 and 1/2: logs +-ln 2, mean 0, sd (n - 1) = ln 2 * sqrt 2, half-width
    # t(0.95; 1) * sd / sqrt 2 = 6.313752 * ln 2
    g, lo, hi, n, zeros = gm.geo(pd.Series([2.0, 0.5]))
    assert g == pytest.approx(1.0)
    assert lo == pytest.approx(math.exp(-6.313752 * math.log(2)), rel=1e-5)
    assert hi == pytest.approx(math.exp(6.313752 * math.log(2)), rel=1e-5)
    assert (n, zeros) == (2, 0)


def test_zero_ratio_counted_apart_and_missing_dropped(gm):
    g, _, _, n, zeros = gm.geo(pd.Series([4.0, 0.0, float("nan"), 1.0]))
    assert g == pytest.approx(2.0)  # sqrt(4 * 1)
    assert (n, zeros) == (2, 1)


def _runs() -> pd.DataFrame:
    rows = [  # month, variant, mean bsld, E98W, CPU whole, CPU search
        ("a", "ref", 10.0, 4.0, 40.0, 38.0),
        ("a", "x", 10.4, 2.0, 4.0, 2.5),  # 1.04, 0.5: within 5 % on both, 10 % whole CPU
        ("b", "ref", 20.0, 0.0, 60.0, 57.0),  # E98W 0: that measure drops out
        ("b", "x", 25.0, 3.0, 5.0, 3.5),  # 1.25: not within 5 %
    ]
    return pd.DataFrame(rows, columns=["month", "variant", "mean_bsld", "E_98W_fcfs_bf", "cpu_s",
                                       "search_cpu_s"]).assign(search_estimated=False)  # fmt: skip


def test_summary_by_hand(gm):
    m = gm.per_month(_runs(), "ref")
    assert m["E_98W_fcfs_bf_ratio"].tolist()[0] == pytest.approx(0.5)
    assert math.isnan(m["E_98W_fcfs_bf_ratio"].tolist()[1])
    s = gm.summary(m, {"both": ["a", "b"]}).iloc[0]
    assert s["mean_bsld_gmean"] == pytest.approx(math.sqrt(1.04 * 1.25))
    assert s["E_98W_fcfs_bf_gmean"] == pytest.approx(0.5) and s["E_98W_fcfs_bf_n"] == 1
    assert s["cpu_s_share"] == pytest.approx(9.0 / 100.0)
    assert s["search_cpu_s_share"] == pytest.approx(6.0 / 95.0)
    assert (s["within_5pct_both"], s["of_them_cpu_10pct"], s["of_them_search_10pct"]) == (1, 1, 1)
    assert not s["meets"]  # mean bounded slowdown 1.14 > 1.05


def test_search_cpu_estimated_from_the_nearest_recorded_run(gm):
    d = pd.DataFrame({"month": ["a"] * 4, "variant": ["big", "small", "est-small", "est-big"],
                      "cpu_s": [30.0, 3.0, 3.3, 33.0],
                      "search_cpu_s": [28.5, 1.8, math.nan, math.nan]})  # fmt: skip
    e = gm.fill_search_cpu(d)
    assert e["search_cpu_s"].tolist()[2:] == pytest.approx([3.3 - 1.2, 33.0 - 1.5])
    assert e["search_estimated"].tolist() == [False, False, True, True]
