"""The O2K model's per-month sets against thesis Table 6 (T§4.1), month by month.

Expected values are Table 6's printed numbers (``o2ksim.o2k_classes.TABLE6``
and ``TABLE6_MXT``, typed from the thesis) and its text: the dedicated-host
vst jobs, which Table 6 counts, "account for a total of 4-9% of the processor
demand each month" (T§4.1) and are not simulated (T§3.4); October 1999 is the
"light load month" (T§5.5).  The tolerance per class is issue 23's: job share
within 3 points, P x T and M x T within 25 % of the month's value or inside
Table 6's nine-month range (half a point of slack: Table 6 prints whole
percents).  Ten generated months are pooled per month so that the few
hundred-hour 64-processor jobs of a class do not decide a test.
"""

from __future__ import annotations

import numpy as np
import pytest

from o2ksim.errors import ConfigError
from o2ksim.o2k_classes import (
    CLASS_NAMES,
    TABLE6,
    TABLE6_MXT,
    TABLE6_MXT_RANGE,
    TABLE6_PXT_RANGE,
)
from o2ksim.workloads import models

THESIS_MONTHS = {
    "1999-10": 31,
    "1999-11": 30,
    "1999-12": 31,
    "2000-01": 31,
    "2000-02": 29,
    "2000-03": 31,
}
SEEDS = range(1, 11)
ALL_JOBS = {"dedicated": {"include": True}}


def _demand(month: str) -> dict[str, np.ndarray]:
    """Per seed: all jobs' and the simulated jobs' P x T and M x T; pooled class shares and demand."""
    days = THESIS_MONTHS[month]
    cap_p, cap_m = 960 * days * 86400.0, 336 * 1024 * 1024 * days * 86400.0  # procs s, KB s
    tot, cls_p, cls_m, cls_n = [], np.zeros(12), np.zeros(12), np.zeros(12)
    for seed in SEEDS:
        j = models.generate(
            "o2k", span=f"{days}d", seed=seed, params=month, overrides=ALL_JOBS
        ).jobs
        p = (j["req_procs"] * j["run_time"]).to_numpy() / cap_p
        m = (j["req_mem"] * j["req_procs"] * j["run_time"]).to_numpy() / cap_m
        sim = (j["partition"] == 1).to_numpy()
        tot.append((p.sum(), m.sum(), p[sim].sum(), m[sim].sum()))
        k = j["queue"].to_numpy() - 1
        cls_p += np.bincount(k, weights=p, minlength=12)
        cls_m += np.bincount(k, weights=m, minlength=12)
        cls_n += np.bincount(k, minlength=12)
    n = len(SEEDS)
    return {
        "totals": np.array(tot),
        "share": cls_n / cls_n.sum(),
        "pxt": cls_p / n,
        "mxt": cls_m / n,
    }


@pytest.fixture(scope="module")
def months() -> dict[str, dict[str, np.ndarray]]:
    return {m: _demand(m) for m in THESIS_MONTHS}


def _within(got: float, want: float, rng: tuple[float, float], tol: float = 0.25) -> bool:
    return abs(got - want) <= tol * want or rng[0] - 0.005 <= got <= rng[1] + 0.005


MXT_RESIDUAL = {"mt_sj": 0.03, "vst_lj": 0.01}
"""The documented residuals (o2k.toml [month], docs/background/thesis-fidelity.md): memory
demand the shapes cannot remove without breaking P x T.  mt_sj's jobs that overrun their 200-h
request hold 0.09-0.10 where Table 6 has 0.07-0.08; vst_lj asks for more memory per processor
in the model (0.027 against Table 6's 0.02 in October and November 1999)."""

NOISY = {"lt_lj": 0.5}
"""lt_lj has 20-25 jobs a month, and the two or so that overrun their 400-h request carry
most of its demand: ten pooled months still vary by about +-40 % (40 months of March 2000
give P x T 0.033, M x T 0.023; ten of them 0.019)."""


@pytest.mark.parametrize("month", THESIS_MONTHS)
def test_month_total_demand_is_table_6s(months, month):
    """All jobs: Table 6's P x T (within 25 %); simulated: Table 6 minus the 4-9 % dedicated share."""
    _total, _counts, pxt, _cls = TABLE6[month]
    mxt = TABLE6_MXT[month][0]
    all_p, all_m, sim_p, _sim_m = months[month]["totals"].mean(axis=0)
    assert all_p == pytest.approx(pxt, rel=0.10), all_p
    assert pxt - 0.09 - 0.05 <= sim_p <= pxt - 0.04 + 0.05, sim_p
    assert 0.03 <= all_p - sim_p <= 0.09  # T§4.1: "4-9% of the processor demand each month"
    # M x T: within 25 % or inside the nine months' 57-84 % (the model's memory requests are the
    # nine-month distribution; Dec 1999 - Mar 2000 asked for more, 74-83 %)
    assert abs(all_m - mxt) <= 0.25 * mxt or 0.57 - 0.005 <= all_m <= 0.84 + 0.005, all_m


@pytest.mark.parametrize("month", THESIS_MONTHS)
def test_month_classes_are_table_6s(months, month):
    """Per class: job share within 3 points, P x T and M x T within 25 % or inside the range."""
    total, counts, _pxt, cls_pxt = TABLE6[month]
    cls_mxt = TABLE6_MXT[month][1]
    got = months[month]
    for k, name in enumerate(CLASS_NAMES):
        assert got["share"][k] == pytest.approx(counts[k] / total, abs=0.03), name
        tol = NOISY.get(name, 0.25)
        assert _within(got["pxt"][k], cls_pxt[k], TABLE6_PXT_RANGE[name], tol), (
            name,
            got["pxt"][k],
        )
        if name in MXT_RESIDUAL:
            top = TABLE6_MXT_RANGE[name][1] + MXT_RESIDUAL[name]
            assert got["mxt"][k] <= top, (name, got["mxt"][k])
            continue
        assert _within(got["mxt"][k], cls_mxt[k], TABLE6_MXT_RANGE[name], tol), (
            name,
            got["mxt"][k],
        )


def test_october_1999_is_light_not_the_heaviest(months):
    """T§5.5: October 1999 is "the light load month"; Table 6 gives it the least demand (86 %).

    Before the per-month shapes it came out the heaviest of the six (simulated
    P x T 103-108 %); now its simulated demand is below every month's but
    November 1999's (Table 6: 91 % with the dedicated-host vst jobs; the model's 12-seed mean 87 %).
    """
    sim = {m: months[m]["totals"][:, 2].mean() for m in THESIS_MONTHS}
    assert sim["1999-10"] <= 0.86 - 0.04
    assert sim["1999-10"] < min(v for m, v in sim.items() if m not in ("1999-10", "1999-11"))


def test_month_table_is_validated():
    """A [month] table names a Table 6 month and twelve positive shapes, else a one-line error."""
    with pytest.raises(ConfigError, match=r'month\."1999-13"'):
        models.load_params("o2k", {"month": {"1999-13": {"class_shape": [1.0] * 12}}})
    with pytest.raises(ConfigError, match="class_shape"):
        models.load_params("o2k", {"month": {"1999-10": {"class_shape": [1.0] * 11}}})
    with pytest.raises(ConfigError, match="class_shape"):
        models.load_params("o2k", {"month": {"1999-10": {"class_shape": [0.0] + [1.0] * 11}}})


def test_month_shapes_apply_only_to_their_month():
    """The average set keeps [ratio] class_shape; a month set takes its [month] shapes."""
    avg = models.load_params("o2k")[0]
    oct99 = models.load_params("o2k", "1999-10")[0]
    assert oct99["ratio"]["class_shape"] == avg["month"]["1999-10"]["class_shape"]
    assert avg["ratio"]["class_shape"] != oct99["ratio"]["class_shape"]
