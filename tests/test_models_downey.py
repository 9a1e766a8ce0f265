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
    # D Table 2: 25th percentile of cluster size 1, median near 16, 75th percentile near 32
    q = np.percentile(j["procs"], [25, 50, 75])
    assert q[0] == 1 and 8 <= q[1] <= 20 and 24 <= q[2] <= 48


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
