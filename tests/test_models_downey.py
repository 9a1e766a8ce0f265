"""Downey's uniform-log generator (o2ksim.workloads.downey): D§3, Tables 1-2."""

from __future__ import annotations

import math

import numpy as np
import pytest

from o2ksim.errors import ConfigError
from o2ksim.workloads import distributions, downey, models


@pytest.fixture(scope="module")
def month():
    p, _ = models.load_params("downey")
    return p, downey.generate_jobs(
        p, span=300 * 86400, seed=3, start_time=models.DEFAULT_START_TIME
    )


def test_default_file_holds_table_1():
    p, _ = models.load_params("downey")
    lines = {c["name"]: (c["beta0"], c["beta1"]) for c in p["class"]}
    assert lines == {
        "sequential": (-0.65, 0.21),
        "short": (-0.30, 0.15),
        "medium": (-0.50, 0.14),
        "long": (-0.73, 0.13),
    }
    assert sum(c["share"] for c in p["class"]) == pytest.approx(1.0)
    # D§3 below eq. 2: the cdf is 0 at t_min and 1 at t_max
    tmin, tmax = downey.class_bounds(-0.18, 0.10)
    assert -0.18 + 0.10 * math.log(tmin) == pytest.approx(0.0, abs=1e-12)
    assert -0.18 + 0.10 * math.log(tmax) == pytest.approx(1.0)


def test_reproducible():
    a = models.generate("downey", span="4d", seed=9)
    b = models.generate("downey", span="4d", seed=9)
    assert a.jobs.equals(b.jobs) and len(a.jobs) > 100


def test_lifetimes_are_uniform_log_per_class(month):
    p, j = month
    for k, c in enumerate(p["class"]):
        sel = j["cls"] == k
        assert sel.mean() == pytest.approx(c["share"], abs=0.015)
        tmax = min(downey.class_bounds(c["beta0"], c["beta1"])[1], p["lifetime"]["max_s"])
        if "stages" in c:
            tmax = min(max(st["max_s"] for st in c["stages"]), p["lifetime"]["max_s"])
        assert j["run_s"][sel].max() <= math.floor(tmax)
        assert (j["req_s"][sel] == math.ceil(tmax)).all()
        if downey.class_bounds(c["beta0"], c["beta1"])[1] < p["lifetime"]["max_s"]:
            b1, b0 = distributions.uniform_log_ls(j["run_s"][sel], base=math.e, trim=0.1)
            assert b1 == pytest.approx(c["beta1"], rel=0.05)
            assert b0 == pytest.approx(c["beta0"], abs=0.05)


def test_cluster_sizes(month):
    p, j = month
    seq = [k for k, c in enumerate(p["class"]) if c["sequential"]]
    assert (j["procs"][np.isin(j["cls"], seq)] == 1).all()
    par = ~np.isin(j["cls"], seq)
    assert j["procs"][par].min() >= 2 and j["procs"][par].max() <= 368
    g1, _g0 = distributions.uniform_log_ls(j["procs"][par], base=math.e)
    assert g1 == pytest.approx(p["cluster_size"]["beta1"], rel=0.05)
    # D Table 2: 25th percentile of cluster size 1, 75th percentile 32; its median (16) is the one
    # statistic a single uniform-log line reaching down to 2 processors cannot also hold (7-8, documented)
    q = np.percentile(j["procs"], [25, 50, 75])
    assert q[0] == 1 and 6 <= q[1] <= 16 and 24 <= q[2] <= 48
    # D Table 2: mean 25, CV 1.47
    assert j["procs"].mean() == pytest.approx(25, rel=0.1)
    assert j["procs"].std() / j["procs"].mean() == pytest.approx(1.47, rel=0.1)


def test_small_parallel_jobs_exist(month):
    """Parallel jobs of 2, 3 and 4 processors occur (the Paragon's smallest queues)."""
    p, j = month
    seq = [k for k, c in enumerate(p["class"]) if c["sequential"]]
    par = j["procs"][~np.isin(j["cls"], seq)]
    for n in (2, 3, 4):
        assert (par == n).mean() > 0.02, n


def test_no_pile_of_jobs_at_the_time_limit(month):
    """Lifetimes are truncated at the 12-hour limit, not clipped to it (D§3 fn. 1)."""
    p, j = month
    limit = p["lifetime"]["max_s"]
    at_limit = (j["run_s"] >= limit - 60).mean()
    # a uniform-log has density 1/(t ln(hi/lo)) per second: the long class's last minute holds
    # 0.6 * ln(43200/43140)/ln(43200/12600) of its jobs -- 0.07 % -- so well under 1 %
    assert at_limit < 0.01


def test_lifetimes_against_table_2(month):
    """D Table 2 lifetimes: mean 9020 s, CV 1.74, quartiles 77, 720, 14500 s."""
    _p, j = month
    t = j["run_s"]
    q = np.percentile(t, [25, 50, 75])
    assert 50 <= q[0] <= 150 and 500 <= q[1] <= 1000 and 10000 <= q[2] <= 16000
    assert t.mean() == pytest.approx(9020, rel=0.25)
    assert t.std() / t.mean() == pytest.approx(1.74, rel=0.15)


def test_parameter_file_says_the_cluster_sizes_are_not_from_the_paper():
    text = models.param_file("downey").read_text()
    block = text[text.index("[cluster_size]") : text.index("[[class]]")]
    assert "NOT FROM THE PAPER" in block


def test_arrival_rate(month):
    p, j = month
    assert len(j["submit"]) / 300 == pytest.approx(p["arrival"]["jobs_per_day"], rel=0.03)


def test_bad_shares():
    p, _ = models.load_params("downey")
    classes = [dict(c) for c in p["class"]]
    classes[0]["share"] = 0.9
    with pytest.raises(ConfigError) as err:
        models.load_params("downey", {"class": classes})
    assert err.value.field == "class"
