"""The Cirne-Berman generator (o2ksim.workloads.cirne_berman): C§4-§7 and the site parameter sets."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.workloads import cirne_berman as cb
from o2ksim.workloads import cirne_berman_sizes as cb_sizes
from o2ksim.workloads import distributions, models
from o2ksim.workloads.swf import read_swf, write_swf

SITES = ("anl", "ctc", "kth", "sdsc")
PAPER = {  # C Tables 5, 6, 9, 10 (chi_n, rho_n, pb, alpha, beta, chi_tr, rho_tr)
    "anl": (0.1381, 0.2163, 0.6987, 0.3779, 1.0599, 0.1146, -0.8579),
    "ctc": (0.0709, 0.5283, 0.8316, 0.6743, 0.7808, 0.0941, -0.7256),
    "kth": (0.0893, 0.4764, 0.7345, 0.6153, 1.0635, 0.1035, -0.7313),
    "sdsc": (0.1150, 0.2537, 0.8395, 0.5898, 0.5793, 0.1032, -0.7027),
}


@pytest.fixture(scope="module")
def big_kth():
    """120 days of the KTH model: enough jobs for distribution checks."""
    p, _ = models.load_params("cirne-berman", "kth")
    return p, cb.generate_jobs(p, span=120 * 86400, seed=5, start_time=models.DEFAULT_START_TIME)


@pytest.mark.parametrize("site", SITES)
def test_site_files_hold_the_paper_values(site):
    p, source = models.load_params("cirne-berman", site)
    assert source == f"cirne-berman-{site}.toml"
    chi, rho, pb, alpha, beta, tchi, trho = PAPER[site]
    assert p["partition"] == {"chi": chi, "rho": rho, "power_of_two": pb}
    assert p["accuracy"] == {"alpha": alpha, "beta": beta}
    assert p["requested_time"] == {"chi": tchi, "rho": trho}
    # the arrival polynomial, read bottom-up from Table 3, is a day/night cycle: positive, peaking by day
    shape = cb.arrival_shape(p["arrival"]["coefficients"])
    hourly = shape.reshape(24, 60).sum(axis=1)
    assert hourly[9:17].mean() > 1.5 * hourly[0:6].mean()


def test_cancellation_parameters_of_ctc_and_sdsc():
    ctc, _ = models.load_params("cirne-berman", "ctc")
    sdsc, _ = models.load_params("cirne-berman", "sdsc")
    assert ctc["cancellation"] == {"probability": 0.1222, "lag_chi": 0.06421, "lag_rho": -0.3180}
    assert sdsc["cancellation"] == {"probability": 0.2331, "lag_chi": 0.06442, "lag_rho": -0.1498}


def test_same_seed_same_trace_and_different_seed_differs():
    a = models.generate("cirne-berman", span="5d", seed=7, params="sdsc")
    b = models.generate("cirne-berman", span="5d", seed=7, params="sdsc")
    c = models.generate("cirne-berman", span="5d", seed=8, params="sdsc")
    assert a.jobs.equals(b.jobs)
    assert not a.jobs.equals(c.jobs)


def test_swf_round_trip_and_header_records_the_model(tmp_path):
    t = models.generate("cirne-berman", span="3d", seed=1, params="ctc")
    path = tmp_path / "cb.swf.gz"
    write_swf(t, path)
    back = read_swf(path)
    assert back.jobs.equals(t.jobs)
    extra = back.header.extra
    assert extra["O2KSimModel"] == "cirne-berman" and extra["O2KSimSeed"] == "1"
    params, _ = models.load_params("cirne-berman", "ctc")
    assert json.loads(extra["O2KSimParams"]) == json.loads(json.dumps(params))
    # the recorded parameters regenerate the same jobs
    again = models.generate(
        "cirne-berman", span="3d", seed=1, params=json.loads(extra["O2KSimParams"])
    )
    assert again.jobs.equals(t.jobs)


def test_jobs_are_valid(big_kth):
    p, j = big_kth
    assert np.all(np.diff(j["submit"]) >= 0)
    assert j["procs"].min() >= 1 and j["procs"].max() <= p["machine"]["procs"]
    assert np.all(j["run_s"] <= j["req_s"]) and np.all(j["run_s"] >= 1)
    assert set(np.unique(j["status"])) <= {0, 1}


def test_power_of_two_share_is_pb_and_serial_share_follows(big_kth):
    p, j = big_kth
    n = len(j["procs"])
    pow2 = ((j["procs"] & (j["procs"] - 1)) == 0).mean()
    pb = p["partition"]["power_of_two"]
    assert abs(pow2 - pb) < 4 * math.sqrt(pb * (1 - pb) / n)
    pmf = cb.partition_pmf(p["partition"]["chi"], p["partition"]["rho"], pb, p["machine"]["procs"])
    assert pmf.sum() == pytest.approx(1.0)
    assert (j["procs"] == 1).mean() == pytest.approx(pmf[0], abs=4 * math.sqrt(pmf[0] / n))
    # the whole distribution matches the exact pmf (chi-square on the common sizes)
    counts = np.bincount(j["procs"] - 1, minlength=len(pmf))
    common = pmf * n > 20
    _, pval = stats.chisquare(
        counts[common], pmf[common] / pmf[common].sum() * counts[common].sum()
    )
    assert pval > 1e-4


def test_requested_time_is_uniform_log(big_kth):
    p, j = big_kth
    chi, rho = distributions.uniform_log_ls(j["req_s"])
    assert chi == pytest.approx(p["requested_time"]["chi"], rel=0.03)
    assert rho == pytest.approx(p["requested_time"]["rho"], abs=0.03)


def test_accuracy_is_a_capped_gamma(big_kth):
    p, j = big_kth
    a, b = p["accuracy"]["alpha"], p["accuracy"]["beta"]
    killed = (j["status"] == 0).mean()
    expect = stats.gamma.sf(1.0, a, scale=b)
    assert killed == pytest.approx(expect, abs=4 * math.sqrt(expect / len(j["status"])))
    alpha, beta = distributions.gamma_mle(j["run_s"] / j["req_s"], censor_at=1.0)
    assert alpha == pytest.approx(a, rel=0.06)
    assert beta == pytest.approx(b, rel=0.08)


def test_arrivals_follow_the_daily_polynomial(big_kth):
    p, j = big_kth
    shape = cb.arrival_shape(p["arrival"]["coefficients"]).reshape(24, 60).sum(axis=1)
    hours = ((j["submit"] % 86400) // 3600).astype(int)
    counts = np.bincount(hours, minlength=24)
    expect = shape / shape.sum() * len(hours)
    _, pval = stats.chisquare(counts, expect)
    assert pval > 1e-4
    assert len(hours) / 120 == pytest.approx(p["arrival"]["jobs_per_day"], rel=0.05)


def test_cancellations_carry_their_lag_in_the_wait_field():
    t = models.generate("cirne-berman", span="20d", seed=2, params="sdsc")
    j = t.jobs
    canc = j["status"] == 5
    assert canc.mean() == pytest.approx(0.2331, abs=0.03)
    assert (j.loc[canc, "wait"] >= 1).all() and (j.loc[~canc, "wait"] == -1).all()
    assert (j.loc[canc, "run_time"] == 0).all()  # never ran: lag = wait + run time, as in a log
    chi, _rho = distributions.uniform_log_ls(j.loc[canc, "wait"].to_numpy())
    assert chi == pytest.approx(0.06442, rel=0.12)


def test_nearest_power_of_two():
    n = np.array([1, 2, 3, 5, 6, 7, 11, 12, 13, 100, 120])
    assert cb_sizes._nearest_pow2(n, 128).tolist() == [1, 2, 4, 4, 8, 8, 8, 16, 16, 128, 128]
    assert cb_sizes._nearest_pow2(np.array([120]), 100).tolist() == [64]


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"partition": {"chi": -1}}, "partition.chi"),
        ({"accuracy": {"alpha": 0}}, "accuracy.alpha"),
        ({"cancellation": {"probability": 1.5}}, "cancellation.probability"),
        ({"arrival": {"coefficients": [-1.0]}}, "arrival.coefficients"),
        ({"arrival": {"jobs_per_day": "many"}}, "arrival.jobs_per_day"),
    ],
)
def test_bad_parameters_name_the_field(override, field):
    with pytest.raises(ConfigError) as err:
        models.load_params("cirne-berman", override)
    assert err.value.field == field


def test_bad_parameter_file_names_file_and_line(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('model = "cirne-berman"\n[partition]\nchi = 0.1\nrho = 0.4\npower_of_two = 2\n')
    with pytest.raises(ConfigError) as err:
        models.load_params("cirne-berman", f)
    assert err.value.field == "partition.power_of_two" and err.value.line == 5
    assert str(f) in str(err.value)
    f.write_text('model = "downey"\n')
    with pytest.raises(ConfigError, match="for model 'downey'"):
        models.load_params("cirne-berman", f)
    f.write_text("model = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        models.load_params("cirne-berman", f)


def test_unknown_names_are_user_errors():
    with pytest.raises(O2KSimError, match="unknown workload model"):
        models.generate("lublin", span="1d", seed=1)
    with pytest.raises(O2KSimError, match="unknown parameter set"):
        models.load_params("cirne-berman", "llnl")
    with pytest.raises(O2KSimError, match="span"):
        models.generate("cirne-berman", span="-3d", seed=1)
