"""Downey's conditional lifetime model and queue-time predictors (D§3-§5).

Every expected value comes from the paper, a closed form or an independent
computation written here (the exact enumeration of D eqs. 5-7, scipy root
finding), never from o2ksim's own output.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, optimize

from o2ksim.errors import O2KSimError
from o2ksim.prediction.evaluate import accuracy, replay
from o2ksim.prediction.model import (
    ClassFit,
    conditional_cdf,
    conditional_mean,
    conditional_median,
    fit_class,
    fit_clm,
    lifetime_cdf,
    load_clm,
    parse_class_rule,
    partition_size,
    t_bounds,
)
from o2ksim.prediction.predictors import combined, predict_a, predict_b, whole_queue

MEDIUM = (-0.50, 0.14)  # D Table 1, medium queue
SHORT = (-0.30, 0.15)  # D Table 1, short queue


# ---------------------------------------------------------------- CLM algebra


def test_bounds_of_figure_1_fit() -> None:
    # D§3: for the Fig. 1 fit, t_min = 5.8 s and t_max = 24.2 h; the printed
    # (-0.18, 0.10) are rounded: the bounds give beta1 = 1/ln(t_max/t_min).
    b1 = 1.0 / math.log(24.2 * 3600 / 5.8)
    b0 = -b1 * math.log(5.8)
    assert b0 == pytest.approx(-0.18, abs=0.005) and b1 == pytest.approx(0.10, abs=0.005)
    tmin, tmax = t_bounds(b0, b1)
    assert tmin == pytest.approx(5.8) and tmax == pytest.approx(24.2 * 3600)


def test_lifetime_cdf_is_eq_2_clipped() -> None:
    b0, b1 = MEDIUM
    t = np.array([1.0, 100.0, 1000.0, 1e6])
    expect = np.clip(b0 + b1 * np.log(t), 0, 1)
    assert np.allclose(lifetime_cdf(t, b0, b1), expect)
    assert lifetime_cdf(0.0, b0, b1) == 0.0


def test_conditional_cdf_is_eq_3() -> None:
    b0, b1 = MEDIUM
    a, t = 300.0, 5000.0
    surv = (1 - b0 - b1 * math.log(t)) / (1 - b0 - b1 * math.log(a))
    assert conditional_cdf(t, a, b0, b1) == pytest.approx(1 - surv)
    assert conditional_cdf(a, a, b0, b1) == 0.0
    _, tmax = t_bounds(b0, b1)
    assert conditional_cdf(tmax * 1.01, a, b0, b1) == 1.0


def test_conditional_median_is_eq_4() -> None:
    b0, b1 = MEDIUM
    _, tmax = t_bounds(b0, b1)
    for a in (50.0, 300.0, 3000.0):
        med = conditional_median(a, b0, b1)
        assert med == pytest.approx(math.sqrt(tmax * a))
        # eq. 4: ln t = .5 (1 - beta0)/beta1 + .5 ln a
        assert math.log(med) == pytest.approx(0.5 * (1 - b0) / b1 + 0.5 * math.log(a))
        assert conditional_cdf(med, a, b0, b1) == pytest.approx(0.5)
    # below t_min the unconditional median, e^((0.5 - beta0)/beta1)
    assert conditional_median(0.5, b0, b1) == pytest.approx(math.exp((0.5 - b0) / b1))


def test_conditional_mean_against_integration() -> None:
    b0, b1 = SHORT
    _, tmax = t_bounds(b0, b1)
    a = 200.0
    # density of L given L > a: beta1 / (t (1 - cdf(a))) on (a, t_max)
    norm = 1 - (b0 + b1 * math.log(a))
    mean, _ = integrate.quad(lambda t: t * b1 / (t * norm), a, tmax)
    assert conditional_mean(a, b0, b1) == pytest.approx(mean, rel=1e-6)
    assert math.isnan(conditional_mean(tmax * 2, b0, b1))


def test_overdue_jobs() -> None:
    b0, b1 = SHORT
    _, tmax = t_bounds(b0, b1)
    old = tmax * 1.5
    assert conditional_cdf(old + 10, old, b0, b1, overdue="release") == 1.0
    assert conditional_cdf(old + 10, old, b0, b1, overdue="hold") == 0.0
    # "tail": uniform-log between the age and the class's longest fitted lifetime
    last = tmax * 6
    assert conditional_cdf(math.sqrt(old * last), old, b0, b1, t_last=last) == pytest.approx(0.5)
    assert conditional_cdf(last, old, b0, b1, t_last=last) == pytest.approx(1.0)
    assert conditional_cdf(old + 10, last * 2, b0, b1, t_last=last) == 0.0  # t <= age
    assert conditional_cdf(last * 2 + 1, last * 2, b0, b1, t_last=last) == 1.0  # past t_last
    with pytest.raises(O2KSimError):
        conditional_cdf(old + 10, old, b0, b1, overdue="maybe")


# ---------------------------------------------------------------- predictors on hand-made states


def test_a_one_benefactor_is_its_conditional_median() -> None:
    b0, b1 = MEDIUM
    _, tmax = t_bounds(b0, b1)
    a = 600.0
    # jobs of 4 and 16 processors; n' = 8: only the 16-processor job is a benefactor
    q = predict_a([900.0, a], [4, 16], b0, b1, need=8)
    assert q == pytest.approx(math.sqrt(tmax * a) - a, rel=1e-6)


def test_a_two_equal_benefactors() -> None:
    b0, b1 = MEDIUM
    a = 400.0
    # (S(t))^2 = 1/2 with S = (1 - b0 - b1 ln t) / (1 - b0 - b1 ln a)
    s = math.sqrt(0.5)
    lt = ((1 - b0) - s * (1 - b0 - b1 * math.log(a))) / b1
    assert predict_a([a, a], [32, 32], b0, b1, need=20) == pytest.approx(math.exp(lt) - a, rel=1e-6)


def test_a_without_benefactor_gives_no_prediction() -> None:
    assert math.isnan(predict_a([100.0, 200.0], [4, 4], *MEDIUM, need=6))


def test_b_equal_ages_closed_form() -> None:
    b0, b1 = MEDIUM
    a = 250.0
    # F = (10 + 30) cdf_L|a(t) = 20  ->  cdf_L|a = 1/2  ->  t = sqrt(t_max a)
    _, tmax = t_bounds(b0, b1)
    assert predict_b([a, a], [10, 30], b0, b1, need=20) == pytest.approx(
        math.sqrt(tmax * a) - a, rel=1e-6
    )
    # cdf_L|a = 3/4: 1 - b0 - b1 ln t = (1/4)(1 - b0 - b1 ln a)
    lt = ((1 - b0) - 0.25 * (1 - b0 - b1 * math.log(a))) / b1
    assert predict_b([a, a], [10, 30], b0, b1, need=30) == pytest.approx(math.exp(lt) - a, rel=1e-6)


def test_b_mixed_state_against_brentq() -> None:
    ages = np.array([30.0, 700.0, 5000.0, 12.0])
    procs = np.array([8, 16, 64, 1])
    b0 = np.array(
        [SHORT[0], MEDIUM[0], -0.73, -0.65]
    )  # short, medium, long, sequential (D Table 1)
    b1 = np.array([SHORT[1], MEDIUM[1], 0.13, 0.21])

    def freed(q: float) -> float:
        total = 0.0
        for a, n, c0, c1 in zip(ages, procs, b0, b1, strict=True):
            fa = min(max(c0 + c1 * math.log(a), 0.0), 1.0)
            ft = min(max(c0 + c1 * math.log(a + q), 0.0), 1.0)
            total += n * (ft - fa) / (1 - fa)
        return total

    for need in (5, 20, 60):
        expect = optimize.brentq(lambda q, n=need: freed(q) - n, 1e-6, 1e7, xtol=1e-9)
        assert predict_b(ages, procs, b0, b1, need=need) == pytest.approx(expect, rel=1e-6)


def _exact_median(ages: list[float], procs: list[int], b0: float, b1: float, need: int) -> float:
    """D eqs. 5-7 by enumerating every outcome (bit vector) of the running jobs."""

    def p_satisfied(q: float) -> float:
        c = [float(conditional_cdf(a + q, a, b0, b1)) for a in ages]
        total = 0.0
        for bits in itertools.product((0, 1), repeat=len(ages)):
            pr = 1.0
            for bi, ci in zip(bits, c, strict=True):
                pr *= ci if bi else 1 - ci  # b_i = 1: job i has completed by q
            if sum(bi * n for bi, n in zip(bits, procs, strict=True)) >= need:
                total += pr
        return total

    return optimize.brentq(lambda q: p_satisfied(q) - 0.5, 1e-6, 1e7, xtol=1e-9)


@pytest.mark.parametrize(
    ("ages", "procs", "need"),
    [
        ([100.0, 400.0, 1500.0, 60.0, 3000.0], [16, 8, 8, 4, 32], 8),
        ([100.0, 400.0, 1500.0, 60.0, 3000.0], [16, 8, 8, 4, 32], 12),
        ([20.0, 50.0, 90.0, 300.0], [4, 4, 4, 8], 4),
        ([200.0, 200.0, 200.0, 200.0, 200.0, 200.0], [2, 2, 2, 2, 2, 8], 6),
    ],
)
def test_a_approximates_the_exact_median_from_above(
    ages: list[float], procs: list[int], need: int
) -> None:
    b0, b1 = MEDIUM
    exact = _exact_median(ages, procs, b0, b1, need)
    approx = predict_a(ages, procs, b0, b1, need=need)
    assert approx >= exact * (1 - 1e-6)


def test_a_is_exact_when_small_jobs_cannot_help() -> None:
    # the jobs of 2 processors free 4 together, less than n' = 6: only the benefactor counts
    ages, procs = [300.0, 80.0, 2000.0], [8, 2, 2]
    b0, b1 = MEDIUM
    assert predict_a(ages, procs, b0, b1, need=6) == pytest.approx(
        _exact_median(ages, procs, b0, b1, 6), rel=1e-6
    )


def test_b_overdue_hold_gives_no_prediction() -> None:
    b0, b1 = SHORT
    _, tmax = t_bounds(b0, b1)
    # the only job big enough is past t_max; with "hold" it never frees its processors
    assert math.isnan(predict_b([tmax * 2, 10.0], [32, 2], b0, b1, need=8, overdue="hold"))
    assert predict_b([tmax * 2, 10.0], [32, 2], b0, b1, need=8, overdue="release") == 0.0
    # "tail" with t_last = 8 t_max: F = 32 c_old + 2 c_new = 8, solved here by brentq
    a, last = tmax * 2, tmax * 8

    def freed(q: float) -> float:
        c_old = math.log((a + q) / a) / math.log(last / a)
        f10 = b0 + b1 * math.log(10.0)
        c_new = (min(b0 + b1 * math.log(10.0 + q), 1.0) - f10) / (1 - f10)
        return 32 * min(c_old, 1.0) + 2 * c_new

    expect = optimize.brentq(lambda q: freed(q) - 8, 1e-6, last)
    got = predict_b([a, 10.0], [32, 2], b0, b1, need=8, t_last=[last, last])
    assert got == pytest.approx(expect, rel=1e-6)


def test_combined_uses_a_below_threshold() -> None:
    a = np.array([10.0, np.nan, 30.0, 40.0])
    b = np.array([1.0, 2.0, 3.0, 4.0])
    need = np.array([4, 8, 32, 100])
    value, which = combined(a, b, need, threshold=32)
    assert value.tolist() == [10.0, 2.0, 3.0, 4.0]
    assert which.tolist() == ["A", "B", "B", "B"]


# ---------------------------------------------------------------- whole-queue extension


def test_whole_queue_empty_queue_is_predictor_b() -> None:
    b0, b1 = MEDIUM
    ages, procs = np.array([300.0, 900.0]), np.array([16.0, 16.0])
    n_free = 4.0
    q = whole_queue(
        ages,
        procs,
        np.full(2, b0),
        np.full(2, b1),
        n_free,
        np.empty(0),
        np.empty(0),
        np.empty(0),
        20.0,
    )
    expect = predict_b(ages, procs, b0, b1, need=16)
    assert (
        expect <= q <= expect * 1.075
    )  # the first grid time at or after the exact value (6.8 % grid)


def test_whole_queue_one_job_ahead() -> None:
    b0, b1 = SHORT
    _, tmax = t_bounds(b0, b1)
    a = 100.0
    # 10 processors, all held by one job; ahead a 10-processor job, then ours (10):
    # the fluid frees all 10 only at t_max - a; the job ahead then frees all 10 after t_max.
    q = whole_queue(
        np.array([a]),
        np.array([10.0]),
        np.array([b0]),
        np.array([b1]),
        0.0,
        np.array([10.0]),
        np.array([b0]),
        np.array([b1]),
        10.0,
    )
    expect = (tmax - a) + tmax
    assert expect <= q <= expect * 1.15
    # the job ahead cannot outlive its class's longest fitted lifetime
    q = whole_queue(
        np.array([a]),
        np.array([10.0]),
        np.array([b0]),
        np.array([b1]),
        0.0,
        np.array([10.0]),
        np.array([b0]),
        np.array([b1]),
        10.0,
        ahead_t_last=np.array([300.0]),
    )
    expect = (tmax - a) + 300.0
    assert expect <= q <= expect * 1.15


# ---------------------------------------------------------------- fitting


def test_fit_recovers_beta_from_uniform_log_samples() -> None:
    rng = np.random.default_rng(12)
    for b0, b1 in (MEDIUM, SHORT, (-0.6, 0.23)):
        u = rng.random(20000)
        t = np.exp((u - b0) / b1)
        fit = fit_class(t, trim=0.1)
        assert fit.beta0 == pytest.approx(b0, abs=0.02)
        assert fit.beta1 == pytest.approx(b1, abs=0.004)
        assert fit.r2 > 0.999
        assert fit.median == pytest.approx(math.exp((0.5 - b0) / b1), rel=0.05)


def test_fit_ignores_the_tails() -> None:
    rng = np.random.default_rng(3)
    b0, b1 = MEDIUM
    t = np.exp((rng.random(10000) - b0) / b1)
    # replace the shortest and longest 10 % by absurd values: the fit must not move
    order = np.argsort(t)
    t[order[:900]] = 1.0
    t[order[-900:]] = 1e9
    fit = fit_class(t, trim=0.1)
    assert fit.beta0 == pytest.approx(b0, abs=0.03) and fit.beta1 == pytest.approx(b1, abs=0.006)


def _frame(n: int, seed: int = 5) -> tuple[pd.DataFrame, object]:
    from o2ksim.workloads.swf import SWFHeader

    rng = np.random.default_rng(seed)
    queue = rng.choice([1, 2, 3, 4], size=n)
    params = {1: SHORT, 2: MEDIUM, 3: (-0.73, 0.13), 4: (-0.65, 0.21)}
    run = (
        np.array([math.exp((rng.random() - params[q][0]) / params[q][1]) for q in queue]).round()
        + 1
    )
    procs = np.where(queue == 4, 1, rng.choice([2, 4, 8, 16], size=n))
    df = pd.DataFrame(
        {
            "job_id": np.arange(1, n + 1),
            "submit": np.sort(rng.integers(0, 10 * 86400, size=n)).astype(float),
            "run_time": run,
            "req_procs": procs,
            "alloc_procs": procs,
            "req_time": -1,
            "queue": queue,
            "partition": np.where(rng.random(n) < 0.8, 2, 1),
            "status": 1,
        }
    )
    header = SWFHeader(
        extra={
            "Queue": "1 q16s\n2 q32m\n3 q64l\n4 q1l",
            "Partition": "1 interactive\n2 batch",
            "MaxNodes": "100 (20 interactive, 80 batch)",
        }
    )
    return df, header


def test_fit_clm_per_class_on_the_batch_partition() -> None:
    df, header = _frame(8000)
    clm = fit_clm(df, header, rule="sdsc-paragon", partition="batch")
    assert set(clm.classes) == {"all", "sequential", "short", "medium", "long"}
    assert clm.meta["jobs"] == int((df["partition"] == 2).sum())
    assert clm.classes["short"].beta0 == pytest.approx(SHORT[0], abs=0.05)
    assert clm.classes["medium"].beta1 == pytest.approx(MEDIUM[1], abs=0.01)
    assert clm.classes["sequential"].beta1 == pytest.approx(0.21, abs=0.015)
    assert partition_size(header, "batch") == 80


def test_clm_toml_round_trip(tmp_path) -> None:
    df, header = _frame(3000)
    clm = fit_clm(df, header, rule="sdsc-paragon")
    back = load_clm(clm.save(tmp_path / "clm.toml"))
    assert back.classes.keys() == clm.classes.keys()
    for name, c in clm.classes.items():
        assert back.classes[name].beta0 == c.beta0 and back.classes[name].beta1 == c.beta1
    assert back.rule.text == "sdsc-paragon"
    b0, _b1, last = back.params_of(np.array(["short", "nonesuch"]))
    assert b0[0] == clm.classes["short"].beta0 and b0[1] == clm.classes["all"].beta0
    short = df[(df["queue"] == 1) & (df["alloc_procs"] > 1)]["run_time"].max()
    assert last[0] == short == back.classes["short"].t_last


def test_load_clm_errors(tmp_path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text('[[class]]\nname = "all"\nbeta0 = -0.5\nbeta1 = -0.1\n')
    with pytest.raises(O2KSimError, match=r"bad.toml: field class\[0\].beta1"):
        load_clm(p)
    p.write_text('[[class]]\nname = "short"\nbeta0 = -0.5\nbeta1 = 0.1\n')
    with pytest.raises(O2KSimError, match="'all'"):
        load_clm(p)


def test_class_rules() -> None:
    rule = parse_class_rule("sdsc-paragon")
    names = {
        q: rule._match(q)
        for q in ("q64l", "qf32l", "q1l", "q1ll", "q16s", "q4t", "q32m", "standby", "holding")
    }
    assert names == {
        "q64l": "long",
        "qf32l": "long",
        "q1l": "sequential",
        "q1ll": "sequential",
        "q16s": "short",
        "q4t": "short",
        "q32m": "medium",
        "standby": "standby",
        "holding": "other",
    }
    rt = parse_class_rule("reqtime:1h,4h")
    df = pd.DataFrame({"req_time": [600, 3600, 7200, 20000, -1], "procs": [2, 2, 2, 2, 1]})
    assert rt.assign(df).tolist() == ["short", "short", "medium", "long", "sequential"]
    for bad in ("reqtime:4h,1h", "short", "x=;y=a"):
        with pytest.raises(O2KSimError):
            parse_class_rule(bad)


# ---------------------------------------------------------------- replaying a schedule


def test_replay_head_events_by_hand() -> None:
    # 10 processors, FCFS.  J3 waits at the head from 20 to 50 (needs 4, 0 free);
    # J4 reaches the head at 50 (J3's start) and waits until 80 with J1 and J3 running.
    sched = pd.DataFrame(
        {
            "job_id": [1, 2, 3, 4, 5],
            "submit": [0.0, 10.0, 20.0, 30.0, 60.0],
            "start": [0.0, 10.0, 50.0, 80.0, 80.0],
            "end": [100.0, 50.0, 80.0, 90.0, 85.0],
            "procs": [6, 4, 4, 3, 1],
        }
    )
    rp = replay(sched, np.array(["x"] * 5, dtype=object), 10)
    head = rp.events[rp.events["kind"] == "head"].set_index("job_id")
    assert sorted(head.index) == [3, 4]
    assert head.loc[3, ["time", "actual", "need", "running"]].tolist() == [20.0, 30.0, 4, 2]
    assert head.loc[4, ["time", "actual", "need", "running"]].tolist() == [50.0, 30.0, 3, 2]
    arr = rp.events[rp.events["kind"] == "arrival"].set_index("job_id")
    assert arr.loc[5, ["time", "actual"]].tolist() == [60.0, 20.0]
    assert arr.loc[4, ["time", "actual", "running"]].tolist() == [30.0, 50.0, 2]


def test_replay_leaves_out_jobs_backfilled_in_the_same_pass() -> None:
    # J3 (8 processors) waits at the head at 10; J4 (2) arrives at 10 and is
    # backfilled at once, in the same pass: it is not part of J3's state.
    sched = pd.DataFrame(
        {
            "job_id": [1, 2, 3, 4],
            "submit": [0.0, 0.0, 10.0, 10.0],
            "start": [0.0, 0.0, 40.0, 10.0],
            "end": [40.0, 30.0, 50.0, 20.0],
            "procs": [4, 4, 8, 2],
        }
    )
    rp = replay(sched, np.array(["x"] * 4, dtype=object), 10, arrivals=False)
    ev = rp.events.set_index("job_id")
    assert ev.loc[3, ["time", "need", "running"]].tolist() == [10.0, 6, 2]


def test_accuracy() -> None:
    acc = accuracy([1.0, 2.0, np.nan, 4.0], [2.0, 4.0, 5.0, 8.0])
    assert acc["predictions"] == 3
    assert acc["cc"] == pytest.approx(1.0)
    assert acc["median_abs_error"] == pytest.approx(2.0)


def test_classfit_properties() -> None:
    c = ClassFit("x", -0.65, 0.21, 0.99, 10)  # D Table 1, sequential
    assert c.t_max == pytest.approx(math.exp(1.65 / 0.21))
    assert c.median == pytest.approx(math.exp(1.15 / 0.21))


# ---------------------------------------------------------------- fit --model downey, CLI, API


def test_fit_downey_uses_the_clm_fit_with_partition_and_rule() -> None:
    from o2ksim.workloads import downey
    from o2ksim.workloads.swf import Trace

    df, header = _frame(6000)
    df = df.assign(
        wait=-1,
        avg_cpu=-1,
        used_mem=-1,
        req_mem=-1,
        user=-1,
        group=-1,
        app=-1,
        prev_job=-1,
        think_time=-1,
    )
    p = downey.fit(
        Trace(jobs=df, header=header, source=None), classes="sdsc-paragon", partition="batch"
    )
    names = {c["name"] for c in p["class"]}
    assert names == {"sequential", "short", "medium", "long"}
    batch = df[df["partition"] == 2]
    seq_share = float((batch["alloc_procs"] == 1).mean())
    assert {c["name"]: c["share"] for c in p["class"]}["sequential"] == pytest.approx(seq_share)


SAMPLE = "traces/kth-sp2-sample.swf"


def test_cli_predict_writes_tables_and_figure(tmp_path, capsys) -> None:
    from o2ksim.cli import main

    out = tmp_path / "p"
    code = main(
        [
            "predict",
            SAMPLE,
            "--procs",
            "100",
            "--classes",
            "reqtime:1h,4h",
            "--policy",
            "fcfs-backfill",
            "--whole-queue-sample",
            "50",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    for name in (
        "predictions.csv",
        "summary.csv",
        "summary.json",
        "fig4.png",
        "clm.toml",
        "by_need.csv",
    ):
        assert (out / name).exists(), name
    pred = pd.read_csv(out / "predictions.csv")
    assert set(pred["predictor"]) == {"A", "B", "combined", "whole-queue"}
    assert {"job_id", "time", "need", "predicted", "actual"} <= set(pred.columns)
    assert (pred["actual"] > 0).all()
    # the written model can be used again
    code = main(
        [
            "predict",
            SAMPLE,
            "--procs",
            "100",
            "--fit",
            str(out / "clm.toml"),
            "--no-whole-queue",
            "--out",
            str(tmp_path / "q"),
        ]
    )
    assert code == 0
    assert "CC" in capsys.readouterr().out
    # `o2ksim report` on a predict directory rebuilds the prediction page
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "prediction.html").read_text()
    assert "D Fig. 4" in page and "data:image/png;base64" in page and "beta0" in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--partition", "batch"], "no partition named 'batch'"),
        (["--classes", "short"], "not NAME=GLOB"),
        (["--fit", "nonexistent.toml"], "nonexistent.toml: cannot read"),
        (["--fit", "clm.toml", "--classes", "none"], "brings its own class rule"),
        (["--fit-window", "2030-01-01", "2030-02-01"], "submitted in ["),
        (["--machine", "o2k"], "one-host"),
        (["--procs", "0"], "--procs 0: must be from 1"),
        (["--window", "x", "y"], "is not a duration"),
    ],
)
def test_cli_predict_errors(tmp_path, capsys, args: list[str], message: str) -> None:
    from o2ksim.cli import main

    code = main(["predict", SAMPLE, "--no-whole-queue", "--out", str(tmp_path / "o"), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("o2ksim: error: ") and message in err and err.count("\n") == 1


def test_api_predict_returns_frames() -> None:
    import o2ksim

    r = o2ksim.predict(SAMPLE, procs=100, classes="none", whole_queue=False, threshold=16)
    assert isinstance(r.predictions, pd.DataFrame) and isinstance(r.summary, pd.DataFrame)
    head = r.predictions[r.predictions["kind"] == "head"]
    a = head[head["predictor"] == "A"].reset_index(drop=True)
    b = head[head["predictor"] == "B"].reset_index(drop=True)
    c = head[head["predictor"] == "combined"].reset_index(drop=True)
    expect = np.where((a["need"] < 16) & a["predicted"].notna(), a["predicted"], b["predicted"])
    assert np.allclose(c["predicted"], expect, equal_nan=True)
    assert r.config["head_events"] == len(a)


SDSC = Path(__file__).resolve().parents[2] / "shared" / "traces" / "SDSC-Par-1996-3.1-cln.swf.gz"


@pytest.mark.slow
@pytest.mark.skipif(not SDSC.exists(), reason="needs ../shared/traces")
def test_whole_sdsc_par_1996_head_of_queue_predictions_under_30_s() -> None:
    import time

    from o2ksim.prediction import predict

    t0 = time.perf_counter()
    r = predict(SDSC, partition="batch", classes="sdsc-paragon", whole_queue=False)
    elapsed = time.perf_counter() - t0
    assert r.config["procs"] == 352  # the header's batch partition
    assert r.config["head_events"] > 5000
    assert elapsed < 30.0


def test_cli_predict_says_how_many_jobs_it_left_out_and_why(tmp_path, capsys) -> None:
    """Issue 27, D16: ``--procs 10`` leaves out every job wider than 10 processors; only
    ``summary.json`` said so.  The count comes from the trace's own lines: requested
    processors (SWF field 8), else allocated (field 5), above 10."""
    from o2ksim.cli import main

    lines = [
        line.split() for line in Path(SAMPLE).read_text().splitlines()
        if line.strip() and not line.startswith(";")
    ]  # fmt: skip
    wide = sum(1 for f in lines if (int(f[7]) if int(f[7]) > 0 else int(f[4])) > 10)
    assert wide > 0
    args = ["predict", SAMPLE, "--procs", "10", "--no-whole-queue", "--out", str(tmp_path / "p")]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    said = [line for line in out if line.startswith("rejected ")]
    assert len(said) == 1 and said[0].startswith(f"rejected {wide}: ")
    assert "processors" in said[0] and "left out of the predictions" in said[0]
    assert f": {len(lines) - wide} jobs on 10 processors" in out[0]
