"""Runtime knowledge of the goal-oriented policies (issue 26), in tiny scenarios computed by hand.

Machine: one host of 4 processors.  Measures of a schedule (G Table 4): the
wait of each job, the total excessive wait Tw (the waits above the dynamic
threshold, the current wait of the oldest waiting job, summed) and avgX (the
mean of ``(wait + max(R, 60)) / max(R, 60)``, R the runtime the scheduler
knows).  Every schedule below is better on both measures than the other, so
Lexical(Tw -> avgX) and A-Tradeoff(Tw:avgX) must choose it alike.

The user-recent predictor (Tsafrir, Etsion & Feitelson 2007) is checked on a
hand-made history.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from o2ksim import simulate
from o2ksim.errors import O2KSimError
from o2ksim.workloads.transforms import apply_estimates, user_recent_runtimes
from tests.conftest import one_host

GOAL = ["tradeoff-tw-avgx", "lexical-tw-avgx"]


def jobs(rows):
    """(submit, procs, actual T, requested R) per job, ids 1, 2, ... in this order."""
    return pd.DataFrame(
        {
            "job_id": range(1, len(rows) + 1),
            "submit": [r[0] for r in rows],
            "req_procs": [r[1] for r in rows],
            "alloc_procs": [r[1] for r in rows],
            "run_time": [r[2] for r in rows],
            "req_time": [r[3] for r in rows],
            "used_mem": -1, "req_mem": -1, "user": 1, "queue": -1,
        }
    )  # fmt: skip


def starts(result):
    j = result.jobs
    return dict(zip(j["job_id"].tolist(), j["start"].tolist(), strict=True))


# A (4 procs, T = R = 100) runs from 0 to 100.  B (T = 10, R = 1000) and C (T =
# R = 50), both 4 processors, arrive at 1 and cannot start before A ends; at 100
# the search compares [B, C] and [C, B] (threshold: B's and C's wait, 99 s).
#   actual runtimes:    [B, C] waits 99, 109 -> Tw 10,   avgX (109/60 + 159/60)/2 = 2.23
#                       [C, B] waits 99, 149 -> Tw 50,   avgX (149/60 + 159/60)/2 = 2.57   => B first
#   requested runtimes: [B, C] waits 99, 1099 -> Tw 1000, avgX (1099/1000 + 1149/50)/2 = 12.04
#                       [C, B] waits 99, 149 -> Tw 50,   avgX (149/50 + 1149/1000)/2 = 2.06  => C first
ORDER = [(0, 4, 100, 100), (1, 4, 10, 1000), (1, 4, 50, 50)]


@pytest.mark.parametrize("policy", GOAL)
def test_planned_order_follows_the_runtimes_known(policy):
    assert starts(simulate(jobs(ORDER), one_host(4), policy, estimates="actual")) == {
        1: 0, 2: 100, 3: 110,  # B at 100 (ends 110), then C
    }  # fmt: skip
    assert starts(simulate(jobs(ORDER), one_host(4), policy)) == {
        1: 0, 3: 100, 2: 150,  # C at 100 (ends 150), then B
    }  # fmt: skip


# A (2 procs, R = 10, T = 100) overruns its estimate from 10 on.  B (4 procs, T = R
# = 10) arrives at 1 and cannot start; C (2 procs, T = R = 50) arrives at 20, when
# 2 processors are free.  Backfill's rule (SPEC §2, o2ksim.policies.profile.
# release_time): an overrunning job is predicted to end *now*.  So at 20 the
# search sees 4 processors free right after now (threshold: B's wait, 19 s):
#   [B, C]: B at 20+, C at 30+ -> waits 19, 10 -> Tw ~0
#   [C, B]: C at 20, B at 70   -> waits 0, 69  -> Tw 50            => [B, C]: nothing starts
# and at 100, when A ends (threshold 99): [B, C] waits 99, 90 -> Tw 0;
# [C, B] waits 80, 149 -> Tw 50 => B at 100, C at 110.
# Knowing A's real end (estimates actual, R = T = 100), the search at 20 sees
#   [C, B]: C at 20 (ends 70), B at 100 -> waits 0, 99 -> Tw 80
#   [B, C]: B at 100, C at 110          -> waits 99, 90 -> Tw 80 + 71 = 151 => C starts at 20.
OVERRUN = [(0, 2, 100, 10), (1, 4, 10, 10), (20, 2, 50, 50)]


@pytest.mark.parametrize("policy", GOAL)
def test_a_job_past_its_estimate_is_predicted_to_end_now(policy):
    assert starts(simulate(jobs(OVERRUN), one_host(4), policy)) == {1: 0, 2: 100, 3: 110}
    assert starts(simulate(jobs(OVERRUN), one_host(4), policy, estimates="actual")) == {
        1: 0, 3: 20, 2: 100,
    }  # fmt: skip


def test_fcfs_backfill_sees_the_same_overrun_rule():
    # FCFS-backfill at 20: B reserved right after now (A predicted to end now), C
    # (50 s) would delay it -> waits; at 100 B, then C at 110.  With A's real end
    # (100) B is reserved at 100 and C (20 + 50 = 70 <= 100) backfills at 20.
    assert starts(simulate(jobs(OVERRUN), one_host(4), "fcfs-backfill")) == {1: 0, 2: 100, 3: 110}
    assert starts(simulate(jobs(OVERRUN), one_host(4), "fcfs-backfill", estimates="actual")) == {
        1: 0, 3: 20, 2: 100,
    }  # fmt: skip


# ----------------------------------------------------------------- user-recent predictor
def test_user_recent_history_is_the_jobs_ended_before_the_submit():
    # user 1: job 0 (submit 0, wait 0, T 50: ends 50), job 1 (10 + 0 + 5: ends 15),
    # job 3 (30 + unknown wait + 9: ends 39), job 4 at 100.  User 2: job 2, no history.
    submit = np.array([0.0, 10, 20, 30, 100])
    run = np.array([50.0, 5, 7, 9, 1])
    wait = np.array([0.0, 0, 0, -1, 0])
    user = np.array([1, 1, 2, 1, 1])
    got = user_recent_runtimes(submit, run, wait, user, 2)
    # job 3 at 30: only job 1 has ended (15) -> 5; job 4 at 100: ended 15, 39, 50 -> the
    # last two by end, jobs 3 and 0: (9 + 50) / 2
    np.testing.assert_array_equal(got, [np.nan, np.nan, np.nan, 5.0, 29.5])
    np.testing.assert_array_equal(user_recent_runtimes(submit, run, wait, user, 1)[3:], [5.0, 50.0])


def test_user_recent_estimates_capped_by_the_request():
    f = pd.DataFrame({
        "job_id": [1, 2, 3, 4, 5],
        "submit": [0, 0, 100, 200, 300],
        "wait": [0, 0, 0, 0, 0],
        "run_time": [30, 40, 600, 10, 1],
        "req_time": [100, 100, 100, 1000, -1],
        "user": [7, 7, 7, 7, -1],
    })  # fmt: skip
    got = apply_estimates(f, "user-recent")["req_time"].tolist()
    # jobs 1, 2: no history -> R; job 3 at 100: jobs 1, 2 ended (at 30, 40) -> 35;
    # job 4 at 200: job 3 ends only at 700 -> still jobs 1, 2: 35;
    # job 5: unknown user and R -> keeps its unknown request
    assert got == [100, 100, 35, 35, -1]
    # (T, R) = (600, 100) later: job 3's prediction 35 is below its T, it overruns
    g = apply_estimates(f.assign(submit=[0, 0, 100, 800, 900]), "user-recent:2")["req_time"]
    # job 4 at 800: ended 30 (at 30), 40 (at 40), 600 (at 700) -> mean(40, 600) = 320 <= R
    assert g.tolist()[3] == 320


@pytest.mark.parametrize("bad", ["user-recent:0", "user-recent:x", "user-recent:1.5"])
def test_user_recent_bad_count(bad):
    with pytest.raises(O2KSimError, match="number of jobs"):
        apply_estimates(jobs(ORDER), bad)
