"""The priority-backfill family (T§3.2.1, T§5.1-5.4, Tables 12-13): hand-computed schedules.

Every expected start time here was worked out by hand from the rules of
T§3.2.1 and the weights of Table 12; the comments carry the arithmetic.

* one 6-job queue where the priority functions pick six different jobs, plus
  two 2-job cases that separate the pairs the 6-job queue cannot
  (LXF vs LXF&W, Priority(P&M) vs NCSA-MS*);
* one vs two reservations (the J11 case of Fig. 1c), in processors and in memory;
* dynamic-job vs fixed-job reservations when the reserved job loses its rank;
* sliding vs non-sliding reservations (Fig. 2 without the slide, Fig. 56);
* SJF-backfill starves a long job behind a stream of short ones, LXF&W does not;
* the scheduling interval, kill-at-requested-time, user priorities and presets.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import BACKFILL_PRESETS, job, one_host, starts

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.engine.core import Simulation
from o2ksim.engine.decisions import WakeAt
from o2ksim.engine.monitor import Observer
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.jobs import Job
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies import POLICIES, make_policy, presets
from o2ksim.policies.priority import PRIORITIES, make_priority, register_priority

H = 3600.0
SAMPLE = Path(__file__).resolve().parents[1] / "traces" / "kth-sp2-sample.swf"
PRESETS = BACKFILL_PRESETS


host = one_host


# --------------------------------------------------------------------------- presets and parameters
def test_every_family_preset_is_shipped_with_its_table_12_weights():
    found = presets()
    assert set(PRESETS) <= set(found)
    weights = {
        "mhpcc-ms": {"w": 60, "x": 10, "p": 8},
        "priority-backfill": {"w": 1, "x": 5, "p": 0.2},
        "priority-pm-backfill": {"w": 1, "x": 5, "pe": 0.2},
        "ncsa-ms": {"w": 240, "x": 1500, "pe": 100},
        "lxfw-backfill": {"w": 0.02, "x": 1},
    }
    for name, w in weights.items():
        assert found[name].params["priority"] == w
    assert found["sjf-backfill"].params["priority"] == "sjf"
    assert found["lxf-backfill"].params["priority"] == "lxf"
    ncsa = make_policy("ncsa-ms")
    assert (ncsa.n_reservations, ncsa.fixed, ncsa.sliding) == (2, True, True)
    for name in PRESETS:
        p = make_policy(name)
        assert p.kind == "backfill" and found[name].source
        if name != "ncsa-ms":
            assert (p.n_reservations, p.fixed, p.sliding) == (1, False, True)


def test_options_parse_and_bad_values_are_config_errors():
    p = make_policy(
        "lxfw-backfill",
        reservations="all",
        reservation_kind="fixed",
        sliding=False,
    )
    assert p.n_reservations == math.inf and p.fixed and not p.sliding
    for bad in (
        {"reservations": -1},
        {"reservations": "some"},
        {"reservations": True},
        {"reservation_kind": "sticky"},
        {"interval": "5m"},  # a run setting, not a policy parameter
        {"kill_overrun": True},
        {"overrun_grace": 60},
        {"priority": {"w": 1, "speed": 3}},
        {"priority": {"w": "high"}},
        {"priority": "no-such-priority"},
    ):
        with pytest.raises(ConfigError):
            make_policy("fcfs-backfill", **bad)


# --------------------------------------------------------------------------- priority functions
# One host of 128 processors (memory 128 GB, not the bottleneck).  J0 holds all 128
# processors for 11 h; J1..J6 arrive while it runs and each needs >= 72 processors, so at
# t0 = 11 h exactly one of them starts: the one the priority function ranks first.  Nothing
# can be backfilled next to it (at most 56 processors are left, every job needs >= 72).
#
#  job  submit  Jw(t0)  R    Jp   mem   Jm=MB/358.4  Jpe     Jx=(Jw+R)/R
#  J1   1 h     10 h    8 h  80   0     0            80      18/8  = 2.25
#  J2   3 h      8 h   50 h 128   48 GB 137.14      137.14   58/50 = 1.16
#  J3   4 h      7 h   10 h 128   16 GB  45.71      128      17/10 = 1.7
#  J4   7 h      4 h   20 h 112   64 GB 182.86      182.86   24/20 = 1.2
#  J5   8 h      3 h    2 h  72   0     0            72       5/2  = 2.5
#  J6  10 h      1 h    1 h  72   0     0            72       2/1  = 2.0
#
# FCFS: J1 (first submitted).        SJF: J6 (R = 1 h).        LXF: J5 (Jx 2.5 > 2.25).
# LXF&W 0.02 Jw + Jx: J1 2.45, J5 2.56, J6 2.02                                -> J5
# Priority Jw + 5 Jx + 0.2 Jp: J1 37.25, J2 39.4, J3 41.1, J4 32.4, J5 29.9, J6 25.4 -> J3
# P&M Jw + 5 Jx + 0.2 Jpe: J1 37.25, J2 41.23, J3 41.1, J4 46.57, J5 29.9, J6 25.4 -> J4
# MHPCC 60 Jw + 10 Jx + 8 Jp: J1 1262.5, J2 1515.6, J3 1461, J4 1148, J5 781, J6 656 -> J2
# NCSA 240 Jw + 1500 Jx + 100 Jpe: J1 13775, J2 17374.3, J3 17030, J4 21045.7,
#                                   J5 11670, J6 10440                            -> J4
T0 = 11 * H
PICK_JOBS = [
    job(0, 0, 128, T0),
    job(1, 1 * H, 80, 8 * H),
    job(2, 3 * H, 128, 50 * H, mem_gb=48),
    job(3, 4 * H, 128, 10 * H, mem_gb=16),
    job(4, 7 * H, 112, 20 * H, mem_gb=64),
    job(5, 8 * H, 72, 2 * H),
    job(6, 10 * H, 72, 1 * H),
]
PICKS = {
    "fcfs-backfill": 1,
    "sjf-backfill": 6,
    "lxf-backfill": 5,
    "lxfw-backfill": 5,
    "priority-backfill": 3,
    "priority-pm-backfill": 4,
    "mhpcc-ms": 2,
    "ncsa-ms": 4,
}
HAND_SCORES = {  # at t0, for J1..J6 (the table above)
    "lxfw-backfill": [2.45, 1.32, 1.84, 1.28, 2.56, 2.02],
    "priority-backfill": [37.25, 39.4, 41.1, 32.4, 29.9, 25.4],
    "priority-pm-backfill": [37.25, 41.2286, 41.1, 46.5714, 29.9, 25.4],
    "mhpcc-ms": [1262.5, 1515.6, 1461.0, 1148.0, 781.0, 656.0],
    "ncsa-ms": [13775.0, 17374.29, 17030.0, 21045.71, 11670.0, 10440.0],
}


def first_pick(jobs, policy, t0, machine, **params):
    r = simulate(jobs, machine=machine, policy=policy, policy_params=params)
    s = starts(r)
    picked = [j for j, t in s.items() if t == t0]
    assert len(picked) == 1, s
    return picked[0]


@pytest.mark.parametrize("policy", sorted(PICKS))
def test_each_priority_function_picks_its_hand_computed_job(policy):
    # NCSA-MS* runs here with one dynamic reservation, so that only its priority decides
    # (its fixed reservations are the subject of the next test)
    params = {"reservations": 1, "reservation_kind": "dynamic"}
    assert first_pick(PICK_JOBS, policy, T0, host(128, 128), **params) == PICKS[policy]


def test_six_jobs_six_different_picks():
    assert len(set(PICKS.values())) == 6


@pytest.mark.parametrize("policy", sorted(HAND_SCORES))
def test_weighted_scores_match_the_hand_table(policy):
    pri = make_priority(presets()[policy].params["priority"])
    specs = PICK_JOBS[1:]
    q = pri.view([Job(s) for s in specs], T0)
    np.testing.assert_allclose(pri.scores(q), HAND_SCORES[policy], rtol=1e-5)
    # the fast per-pass path ranks exactly as the literal weighted sum
    assert [j.id for j in pri.order(q.jobs, T0)] == [
        specs[i].job_id for i in np.argsort(-pri.scores(q), kind="stable")
    ]


def test_ncsa_ms_fixed_reservations_start_the_held_job_instead():
    # With its preset reservations (two, fixed-job) J1 got a reservation when it arrived
    # at 1 h, and J2 the second at 3 h; they keep them although J4 now ranks first, so
    # J1 starts at t0.
    assert first_pick(PICK_JOBS, "ncsa-ms", T0, host(128, 128)) == 1


# LXF vs LXF&W: JA waited 40 h and asked 40 h (Jx 2.0, LXF&W 0.8 + 2.0 = 2.8);
# JB waited 1 h and asked 0.8 h (Jx 2.25, LXF&W 0.02 + 2.25 = 2.27).
def test_lxf_and_lxfw_differ_by_the_wait_term():
    t0 = 41 * H
    jobs = [job(0, 0, 10, t0), job(1, 1 * H, 8, 40 * H), job(2, 40 * H, 8, 0.8 * H)]
    assert first_pick(jobs, "lxf-backfill", t0, host(10)) == 2
    assert first_pick(jobs, "lxfw-backfill", t0, host(10)) == 1


# P&M vs NCSA-MS*: one host of 4 processors; both ask 400 h and cannot run together.
#   JA (id 1) waited 25 h, 3 processors, no memory: Jx = 425/400 = 1.0625, Jp = Jpe = 3.
#   JB (id 2) arrives at t0, 2 processors, 35 GB = 100 units of 358.4 MB: Jx = 1, Jpe = 100.
#   P&M  Jw + 5 Jx + 0.2 Jpe:        JA 25 + 5.3125 + 0.6 = 30.91   JB 0 + 5 + 20 = 25
#   NCSA 240 Jw + 1500 Jx + 100 Jpe: JA 6000 + 1593.75 + 300 = 7893.75
#                                    JB 0 + 1500 + 10000 = 11500
def test_priority_pm_and_ncsa_ms_differ_in_their_wait_and_size_weights():
    t0 = 26 * H
    jobs = [job(0, 0, 4, t0), job(1, 1 * H, 3, 400 * H), job(2, t0, 2, 400 * H, mem_gb=35)]
    assert first_pick(jobs, "priority-pm-backfill", t0, host(4, 64)) == 1
    assert first_pick(jobs, "ncsa-ms", t0, host(4, 64), reservation_kind="dynamic") == 2


def test_a_user_function_registered_static_is_kept_as_an_index():
    # register_priority(..., static=True) and @static_priority both declare it; the same
    # pick as when it is ranked at every pass (the kept order is tested against the full
    # sort in test_flood_order.py)
    def widest(q):
        return q.jp

    register_priority("test-widest-static", widest, static=True)
    try:
        pri = make_priority("test-widest-static")
        assert pri.is_static() and not make_priority(widest).is_static()
        assert first_pick(PICK_JOBS, "backfill", T0, host(128, 128),
                          priority="test-widest-static") == 2  # fmt: skip
    finally:
        del PRIORITIES["test-widest-static"]


def test_user_registered_priority_function_and_weight_preset(tmp_path):
    @register_priority("test-widest-first")
    def widest(q):
        return q.jp + 0.001 * q.jw

    try:
        # J2 (128 processors) is the first of the widest; J3 too, but arrived later
        assert (
            first_pick(PICK_JOBS, "backfill", T0, host(128, 128), priority="test-widest-first") == 2
        )
        with pytest.raises(ValueError):
            register_priority("test-widest-first", widest)
    finally:
        del PRIORITIES["test-widest-first"]
    # a preset with any weights, from a file: here MHPCC-like with no wait term
    preset = tmp_path / "my-weights.toml"
    preset.write_text(
        textwrap.dedent(
            """\
            name = "my-weights"
            kind = "backfill"
            description = "size first"
            [params]
            priority = { x = 1, pe = 1 }
            reservations = 1
            """
        )
    )
    # Jx + Jpe: J1 82.25, J2 138.3, J3 129.7, J4 184.06, J5 74.5, J6 74 -> J4
    assert first_pick(PICK_JOBS, str(preset), T0, host(128, 128)) == 4
    # and a function given as "module:function"
    p = make_policy("backfill", priority="numpy:negative")
    assert p.priority.name == "numpy:negative"


def test_a_priority_returning_the_wrong_shape_is_reported():
    p = make_policy("backfill", priority=lambda q: np.zeros(1))
    with pytest.raises(O2KSimError, match="one score per job"):
        simulate(PICK_JOBS, machine=host(128, 128), policy=p)


# --------------------------------------------------------------------------- N = 1 vs N = 2
# Fig. 1(c): J11 may be backfilled while only J3 has a reservation, not once J4 has one too.
# One host of 10 processors.
#   J1 4 procs 0..100; J2 4 procs 0..300; 2 processors idle.
#   J3 (t=1) needs 10: reservation at 300 (when J2 ends), both N.
#   J4 (t=2) needs 6 for 100 s: with N=2 reserved at 100 (J1 leaves 6 free until 300).
#   J11 (t=3) needs 2 for 150 s: ends at 153.
#     N=1: delays nothing (J3 at 300) -> backfilled at 3.  J4 then waits for J11: 153..253.
#     N=2: at 100 it would hold 2 of the 6 processors J4 is promised -> not backfilled.
#          J4 starts 100..200; J11 would then end after 300 (J3's) -> reserved after J3: 350.
FIG1C = [
    job(1, 0, 4, 100),
    job(2, 0, 4, 300),
    job(3, 1, 10, 50),
    job(4, 2, 6, 100),
    job(11, 3, 2, 150),
]


def test_one_reservation_backfills_j11_two_reservations_do_not():
    one = simulate(FIG1C, machine=host(10), policy="fcfs-backfill")
    assert starts(one) == {1: 0, 2: 0, 3: 300, 4: 153, 11: 3}
    two = simulate(
        FIG1C, machine=host(10), policy="fcfs-backfill", policy_params={"reservations": 2}
    )
    assert starts(two) == {1: 0, 2: 0, 3: 300, 4: 100, 11: 350}
    every = simulate(
        FIG1C, machine=host(10), policy="fcfs-backfill", policy_params={"reservations": "all"}
    )
    assert starts(every) == starts(two)


# The same with memory as the binding resource: one host of 10 processors and 10 GB.
#   J1 2 procs 7 GB 0..100 (3 GB free).  J2 (t=1) 6 GB: reserved 100..150.
#   J3 (t=2) 8 GB: after J2 (10 - 6 < 8 GB at 100): reserved 150..200 with N=2.
#   J4 (t=3) 1 proc 3 GB for 160 s, fits now:
#     N=1: with J2 at 100..150 memory is 6 + 3 = 9 <= 10 -> backfilled at 3 (ends 163);
#          J3 then needs 8 GB but only 7 are free until 163.
#     N=2: during 150..163 J3 + J4 = 8 + 3 = 11 > 10 GB -> not backfilled; J4 waits for J3.
MEMORY_CASE = [
    job(1, 0, 2, 100, mem_gb=7),
    job(2, 1, 2, 50, mem_gb=6),
    job(3, 2, 2, 50, mem_gb=8),
    job(4, 3, 1, 160, mem_gb=3),
]


def test_several_reservations_protect_memory_too():
    machine = host(10, 10)
    one = simulate(MEMORY_CASE, machine=machine, policy="fcfs-backfill")
    assert starts(one) == {1: 0, 2: 100, 3: 163, 4: 3}
    two = simulate(
        MEMORY_CASE, machine=machine, policy="fcfs-backfill", policy_params={"reservations": 2}
    )
    assert starts(two) == {1: 0, 2: 100, 3: 150, 4: 200}


def test_a_candidate_is_checked_only_against_reservations_on_its_own_host():
    # hosts a and b of 4 processors.  J1 (2 procs) goes to a, J2 (4 procs, until 50) to b.
    # J3 (4 procs) is reserved where it can start first: b at 50 (a only at 100).
    # J4 (2 procs, 500 s) fits a now and ends long after 50: a holds no reservation, so
    # it is backfilled there.  J5 (4 procs, 10 s), second reservation: a only at 502,
    # b after J3 at 150 -> b at 150.
    machine = MachineSpec("two", (HostSpec("a", 4), HostSpec("b", 4)))
    jobs = [
        job(1, 0, 2, 100),
        job(2, 0, 4, 50),
        job(3, 1, 4, 100),
        job(4, 2, 2, 500),
        job(5, 3, 4, 10),
    ]
    r = simulate(jobs, machine=machine, policy="fcfs-backfill", policy_params={"reservations": 2})
    hosts = dict(zip(r.jobs["job_id"], r.jobs["host"], strict=True))
    assert starts(r) == {1: 0, 2: 0, 3: 50, 4: 2, 5: 150}
    assert hosts == {1: "a", 2: "b", 3: "b", 4: "a", 5: "b"}


# --------------------------------------------------------------------------- fixed vs dynamic
# SJF with one reservation; one host of 10 processors.
#   B  (id 1) 8 procs 0..100; 2 processors idle.
#   J1 (id 2, t=1) 10 procs, 1000 s: reserved at 100.
#   J2 (id 3, t=2) 8 procs, 10 s: SJF ranks it above J1.
#   J3 (id 4, t=3) 2 procs, 150 s: fits the 2 idle processors.
# dynamic: the reservation moves to J2 (8 procs at 100..110), which leaves 2 processors
#   at 100: J3 is backfilled at 3.  At 100 J2 starts; J1 waits for J3 too: 153.
# fixed: J1 keeps its reservation (10 procs at 100): J3 would delay it -> waits; J2 gets
#   none (N=1 is held by J1).  At 100 J1 starts; J2 is reserved for 1100; J3 follows.
LOSES_RANK = [job(1, 0, 8, 100), job(2, 1, 10, 1000), job(3, 2, 8, 10), job(4, 3, 2, 150)]


def test_dynamic_reservation_follows_the_top_job_fixed_keeps_it():
    dyn = simulate(LOSES_RANK, machine=host(10), policy="sjf-backfill")
    assert starts(dyn) == {1: 0, 2: 153, 3: 100, 4: 3}
    fixed = simulate(
        LOSES_RANK,
        machine=host(10),
        policy="sjf-backfill",
        policy_params={"reservation_kind": "fixed"},
    )
    assert starts(fixed) == {1: 0, 2: 100, 3: 1100, 4: 1100}


def test_fixed_reservations_are_held_until_the_job_starts():
    pol = make_policy("sjf-backfill", reservation_kind="fixed")
    seen = []

    class Spy:
        def __getattr__(self, name):
            return getattr(pol, name)

        def schedule(self, snap):
            out = pol.schedule(snap)
            seen.append((snap.now, pol.held_reservations()))
            return out

    Simulation(host(10), LOSES_RANK, Spy()).run()
    held = dict(seen)
    assert held[1.0] == {2: ("m", 100.0)}
    assert held[2.0] == held[3.0] == {2: ("m", 100.0)}  # J2 (id 3) outranks it: no change
    assert held[100.0] == {3: ("m", 1100.0)}  # J1 started; the next reservation goes to J2


def test_fixed_equals_dynamic_under_fcfs():
    # T§3.2.1: with FCFS the priority never changes, so the two kinds coincide
    # (two hosts with memory, estimates longer and shorter than the runtimes)
    rng = np.random.default_rng(7)
    machine = MachineSpec(
        "two", (HostSpec("a", 16, 8 * KB_PER_GB), HostSpec("b", 8, 6 * KB_PER_GB))
    )
    jobs = []
    t = 0.0
    for i in range(300):
        t += float(rng.integers(0, 40))
        req = float(rng.integers(1, 600))
        run = float(rng.integers(0, 2 * req))
        procs = int(rng.choice([1, 2, 4, 8, 16]))
        jobs.append(job(i, t, procs, req, run=run, mem_gb=float(rng.choice([0, 0.5, 2, 5]))))
    for n in (1, 2, 5):
        params = {"reservations": n}
        dyn = simulate(jobs, machine=machine, policy="fcfs-backfill", policy_params=params)
        fix = simulate(
            jobs,
            machine=machine,
            policy="fcfs-backfill",
            policy_params={**params, "reservation_kind": "fixed"},
        )
        assert starts(dyn) == starts(fix)
        assert dyn.jobs["host"].tolist() == fix.jobs["host"].tolist()


def test_fixed_with_all_reservations_reserves_in_fcfs_order():
    # T§3.2.1: with N = all and fixed-job reservations any priority gives scheduled start
    # times in arrival order.  Three jobs that each need the whole host queue behind B;
    # SJF would run the shortest first, fixed/all runs them in arrival order.
    jobs = [job(1, 0, 4, 100), job(2, 1, 4, 300), job(3, 2, 4, 200), job(4, 3, 4, 100)]
    sjf = simulate(
        jobs, machine=host(4), policy="sjf-backfill", policy_params={"reservations": "all"}
    )
    assert starts(sjf) == {1: 0, 2: 400, 3: 200, 4: 100}
    held = simulate(
        jobs,
        machine=host(4),
        policy="sjf-backfill",
        policy_params={"reservations": "all", "reservation_kind": "fixed"},
    )
    assert starts(held) == {1: 0, 2: 100, 3: 400, 4: 600}


# --------------------------------------------------------------------------- non-sliding
# Fig. 2 / Fig. 56 without the slide.  One host of 10 processors.
#   J1 4 procs 0..200; J2 4 procs, asks 400 s but ends at 100.
#   J3 (t=1) needs 8 for 100 s: reserved at 400 (J2's predicted end).
#   J12 (t=90) needs 4 for 250 s; 2 idle processors: waits.
# sliding: at 100 J3's reservation slides to 200 (J1's end); J12 would hold 4 of the 10
#   processors until 350 -> not backfilled.  J3 runs 200..300, J12 300..550.
# non-sliding: J3 stays at 400; J12 ends at 350 <= 400 -> backfilled at 100 into the gap
#   J2 left.  At 200 only 6 processors are free (J12 holds 4): J3 starts when J12 ends, 350.
FIG2 = [job(1, 0, 4, 200), job(2, 0, 4, 400, run=100), job(3, 1, 8, 100), job(12, 90, 4, 250)]


@pytest.mark.parametrize("kind", ["dynamic", "fixed"])
def test_non_sliding_reservation_does_not_move_earlier(kind):
    params = {"reservation_kind": kind}
    sliding = simulate(FIG2, machine=host(10), policy="fcfs-backfill", policy_params=params)
    assert starts(sliding) == {1: 0, 2: 0, 3: 200, 12: 300}
    frozen = simulate(
        FIG2, machine=host(10), policy="fcfs-backfill", policy_params={**params, "sliding": False}
    )
    assert starts(frozen) == {1: 0, 2: 0, 3: 350, 12: 100}


def test_non_sliding_asks_for_a_pass_at_the_reservation_time_once():
    pol = make_policy("fcfs-backfill", sliding=False)
    wakes = []

    class Spy:
        def __getattr__(self, name):
            return getattr(pol, name)

        def schedule(self, snap):
            out = pol.schedule(snap)
            wakes.extend((snap.now, d.time) for d in out if isinstance(d, WakeAt))
            return out

    Simulation(host(10), FIG2, Spy()).run()
    # J3 was reserved for 400 at t=1 (J2's predicted end: no wake-up needed); at 90 the
    # time is kept, and it is asked for once; at 100 (J2 leaves early) it is kept again
    assert wakes == [(90.0, 400.0)]
    # with a scheduling interval the regular passes take care of it: no extra wake-ups
    pol = make_policy("fcfs-backfill", sliding=False)
    wakes.clear()
    Simulation(host(10), FIG2, Spy(), interval=60).run()
    assert wakes == []


class PassLimit(Observer):
    """Stops a run that takes more than ``limit`` passes (instead of hanging)."""

    def __init__(self, limit):
        self.limit, self.passes = limit, 0

    def on_pass(self, now, n_decisions):
        self.passes += 1
        if self.passes > self.limit:
            raise RuntimeError(f"more than {self.limit} passes, at t={now!r}")


def test_non_sliding_wake_ups_cannot_feed_themselves():
    # A and B (4 procs each) ask 10 s and run 1000 s on a host of 10.  R1 (6 procs) is
    # reserved at 10 taking A's release; by the same-time tie rule B's release counts
    # an instant later, so R2 (4 procs) is reserved at 10 + 1 ulp.  Once A and B overrun,
    # both reservations are recomputed at every pass to "now" and "now + 1 ulp"; a
    # wake-up at every such time would advance the clock by one ulp per pass for ever.
    jobs = [
        job(1, 0, 4, 10, run=1000),
        job(2, 0, 4, 10, run=1000),
        job(3, 1, 6, 100),
        job(4, 2, 4, 100),
    ]
    limit = PassLimit(20)
    r = simulate(
        jobs,
        machine=host(10),
        policy="ncsa-ms",
        policy_params={"sliding": False},
        observers=[limit],
    )
    assert starts(r) == {1: 0, 2: 0, 3: 1000, 4: 1000}
    assert limit.passes <= 10


def test_non_sliding_reservation_is_never_left_in_the_past():
    # One host of 8.  J1 (6 procs) asks 100 s but runs 300 s.  J2 (8 procs) is reserved at
    # 100.  At 150 that time has passed and J1 still runs (predicted to end "now"), so the
    # reservation moves to 150: J3 (2 procs, 50 s, arriving at 150) would delay it and is
    # not backfilled.  A reservation left at 100 would have let J3 start at 150.
    jobs = [job(1, 0, 6, 100, run=300), job(2, 1, 8, 50), job(3, 150, 2, 50)]
    r = simulate(jobs, machine=host(8), policy="fcfs-backfill", policy_params={"sliding": False})
    assert starts(r) == {1: 0, 2: 300, 3: 350}


# --------------------------------------------------------------------------- starvation
def short_stream(n):
    """A long job behind ``n`` short jobs that keep a 10-processor host exactly busy.

    Short jobs arrive every 100 s and run 100 s on all 10 processors; the long job (id
    999, 10 processors, 1000 s) arrives at t=1.  Under SJF the newest short job always
    outranks it, so it waits for the whole stream.  Under LXF&W its Jx = 1 + wait/1000
    exceeds the new short job's Jx = 1 at the first departure (t=100).
    """
    shorts = [job(i, 100 * i, 10, 100) for i in range(n)]
    return [*shorts, job(999, 1, 10, 1000)]


def long_wait(policy, n):
    r = simulate(short_stream(n), machine=host(10), policy=policy)
    row = r.jobs.set_index("job_id").loc[999]
    return row["start"] - row["submit"]


def test_sjf_backfill_starves_a_long_job_lxfw_does_not():
    sjf = [long_wait("sjf-backfill", n) for n in (20, 40, 80)]
    assert sjf == [100 * 20 - 1, 100 * 40 - 1, 100 * 80 - 1]  # grows with the stream, no bound
    lxfw = [long_wait("lxfw-backfill", n) for n in (20, 40, 80)]
    assert lxfw == [99, 99, 99]  # starts at the first departure whatever the stream
    # fixed-job reservations (T§5.4.2) also rescue it under SJF: it was reserved at t=1
    r = simulate(
        short_stream(40),
        machine=host(10),
        policy="sjf-backfill",
        policy_params={"reservation_kind": "fixed"},
    )
    assert starts(r)[999] == 100


# --------------------------------------------------------------------------- interval, kill, API, CLI
def test_scheduling_interval_is_a_run_setting():
    # passes only at 0, 300, 600, ... (T§3.7): J1 and J2 both start at 300 and end at 400
    # and 350; J3 (the whole host) arrives at 350, fits from 400, and starts at the pass
    # at 600
    jobs = [job(1, 10, 2, 100), job(2, 20, 2, 50), job(3, 350, 4, 10)]
    r = simulate(jobs, machine=host(4), policy="ncsa-ms", interval=300)
    assert r.config["interval"] == 300.0
    assert starts(r) == {1: 300, 2: 300, 3: 600}
    event_driven = simulate(jobs, machine=host(4), policy="ncsa-ms")
    assert starts(event_driven) == {1: 10, 2: 20, 3: 350}


def test_kill_at_requested_time_plus_grace_is_a_run_setting():
    jobs = [job(1, 0, 2, 100, run=500), job(2, 0, 2, 100, run=50)]
    r = simulate(
        jobs,
        machine=host(4),
        policy="lxfw-backfill",
        kill_overrun=True,
        overrun_grace=60,
    )
    t = r.jobs.set_index("job_id")
    assert t.loc[1, "status"] == "killed" and t.loc[1, "end"] == 160
    assert t.loc[2, "status"] == "completed" and t.loc[2, "end"] == 50
    off = simulate(jobs, machine=host(4), policy="lxfw-backfill").jobs.set_index("job_id")
    assert off.loc[1, "status"] == "completed" and off.loc[1, "end"] == 500


def test_python_api_and_cli_take_the_same_options(tmp_path):
    trace = SAMPLE
    api = simulate(
        trace,
        policy="lxfw-backfill",
        policy_params={"reservations": 2, "reservation_kind": "fixed"},
        estimates="scenario-a:20",
    )
    out = tmp_path / "run"
    code = main(
        [
            "run", "--trace", str(trace), "--policy", "lxfw-backfill", "--reservations", "2",
            "--reservation-kind", "fixed", "--estimates", "scenario-a:20", "--out", str(out), "-q",
        ]
    )  # fmt: skip
    assert code == 0
    cli_jobs = pd.read_csv(out / "jobs.csv")
    np.testing.assert_array_equal(cli_jobs["start"].to_numpy(), api.jobs["start"].to_numpy())
    assert api.policy["reservations"] == 2 and api.policy["reservation_kind"] == "fixed"
    assert api.config["estimates"] == "scenario-a:20"


def test_policies_command_lists_the_family(capsys):
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    for name in PRESETS:
        assert name in out
    for param in ("reservations", "reservation_kind", "sliding"):
        assert param in out
    assert "backfill" in POLICIES.entries()


DOCS = Path(__file__).resolve().parents[1] / "docs" / "background" / "policies"
FAMILY_PAGES = ["README.md", "backfill.md", *(f"{p}.md" for p in PRESETS)]


@pytest.mark.parametrize("page", FAMILY_PAGES)
def test_policy_page_examples_run(page):
    import doctest

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    res = doctest.testfile(
        str(DOCS / page), module_relative=False, optionflags=flags, verbose=False
    )
    assert res.failed == 0


def test_index_lists_every_family_page():
    index = (DOCS / "README.md").read_text()
    for page in FAMILY_PAGES[1:]:
        assert f"({page})" in index
    assert "(ncsa-lsf.md)" in index
