"""EQspatial-MinInterval with ``--interval``: quiet stretches skipped, schedules unchanged.

After a pass that decided nothing, and while nothing happens, EQspatial
promises quiet passes until its first deadline (a catch-up end, the
``/>50hr`` mark) or the time MinInterval lets a dirty host repartition; the
catch-up credit of jobs waiting for memory, booked once per tick, is booked
for the skipped ticks as ticking through would: :mod:`o2ksim.policies.eqspatial_quiet`.  Expected values: passes and shares
worked out by hand, and the same run ticking through every interval
(``Scheduler.skip_ticks = False``: every tick a pass), an oracle that does not
use the promise.
"""

from __future__ import annotations

import math

import pandas as pd
from conftest import THREE_HOSTS, bursty_jobs, job, one_host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim.engine.core import Simulation
from o2ksim.engine.monitor import Observer
from o2ksim.engine.scheduler import Scheduler
from o2ksim.machine import HostSpec, MachineSpec
from o2ksim.policies.base import make_policy
from o2ksim.policies.eqspatial import EQSpatial
from o2ksim.policies.eqspatial_quiet import before
from o2ksim.run.api import simulate


class Passes(Observer):
    """Records every pass: (instant, decisions)."""

    def __init__(self) -> None:
        self.at: list[tuple[float, int]] = []

    def on_pass(self, now: float, n_decisions: int) -> None:
        self.at.append((now, n_decisions))


def run(machine, jobs, policy, interval, *, skip=True, **params):
    passes = Passes()
    pol = make_policy(policy, **params) if isinstance(policy, str) else policy
    Scheduler.skip_ticks = skip
    try:
        sim = Simulation(machine, jobs, pol, interval=interval, observers=[passes])
        sim.run()
    finally:
        Scheduler.skip_ticks = True
    return sim, passes.at


def spans(sim) -> list[tuple[int, float, float]]:
    return [(j.id, j.first_start, j.end) for j in sim.jobs.values()]


def test_eqspatial_5m_skips_to_minintervals_end_and_then_to_the_end():
    # 4 processors, a pass every second.  A (3 procs, 1000 s) starts at 0; B (2 procs,
    # 10 s) arrives at 5: equal shares 2 + 2, A shrinks (a repartitioning, at 5).  B ends
    # at 15; A may grow only at 5 + 300 = 305 (a timer).  By hand, the passes:
    #   0 (A starts; 1 decision), 1 (quiet: nothing due, skip to B's submit),
    #   5 (resize A, start B: 2), 6 (quiet: skip until something happens),
    #   15 (B has left; the host may not repartition: a timer at 305, 1), 16 (quiet:
    #   the host is dirty, its timer at 305: skip to the first tick at or after
    #   305 - TIME_EPS), 305 (A grows to 3: 1), 306 (quiet: skip to the end).
    # A's work: 3 * 5 + 2 * 300 = 615 of 3000 processor-seconds by 305, the rest on 3
    # processors: 795 s, to 1100, which ends the run (1100 ticks through, 0 .. 1099).
    jobs = [job(1, 0, 3, 2000, 1000), job(2, 5, 2, 20, 10)]
    sim, at = run(one_host(4), jobs, "eqspatial-5m", 1.0)
    assert at == [
        (0.0, 1), (1.0, 0), (5.0, 2), (6.0, 0), (15.0, 1), (16.0, 0), (305.0, 1), (306.0, 0),
    ]  # fmt: skip
    assert spans(sim) == [(1, 0.0, 1100.0), (2, 5.0, 15.0)]
    assert sim.scheduler.skipped_ticks == 1100 - 8
    ticking, every = run(one_host(4), jobs, "eqspatial-5m", 1.0, skip=False)
    assert spans(ticking) == spans(sim) and [t for t, _ in every] == [float(t) for t in range(1100)]


def test_eqspatial_0m_regrows_at_the_departure():
    # The same two jobs with MinInterval 0: A grows back at B's departure (15), with
    # 3 * 5 + 2 * 10 = 35 done, the other 2965 on 3 processors: A ends at 15 + 2965/3.
    jobs = [job(1, 0, 3, 2000, 1000), job(2, 5, 2, 20, 10)]
    sim, at = run(one_host(4), jobs, "eqspatial-0m", 1.0)
    assert at == [(0.0, 1), (1.0, 0), (5.0, 2), (6.0, 0), (15.0, 1), (16.0, 0)]
    assert spans(sim) == [(1, 0.0, 15.0 + 2965 / 3), (2, 5.0, 15.0)]


def test_a_repartitioning_allowed_a_hair_before_its_timer_happens_at_the_tick():
    # MinInterval 30.0000000005 s, a pass every second, 4 processors, new jobs wait for
    # a repartitioning (no trial).  A (4 procs, 1000 s) starts at 0; B (4 procs, 1000 s)
    # arrives at 60: 2 + 2, A shrinks (repartitioned at 60).  C (1 proc, 100 s) arrives
    # at 70: the host may repartition again from 90.0000000005 (its timer), but
    # MinInterval is checked within TIME_EPS = 1e-9 s, so ticking through repartitions at
    # the tick of 90.  The skip after the quiet pass at 71 must end there, not at the
    # timer.  By hand, the passes:
    #   0 (A starts), 1 (quiet: skip to 60), 60 (resize A, start B), 61 (quiet: skip to
    #   70), 70 (C placed, no processor free: a timer), 71 (quiet, the host dirty: skip
    #   to 90), 90 (shares 2, 1, 1 -- A and B tie on 2 held, A is older: resize B, start
    #   C), 90.0000000005 (the timer: quiet), 190 (C has left, MinInterval allows: B
    #   grows to 2), 191 (quiet), 1940 (A has left: B grows to 4), 1941 (quiet).
    # Work: A 4*60 + 2*130 = 500 by 190, 3500 more on 2 to 1940; B 2*30 + 1*100 +
    # 2*1750 = 3660 by 1940, 340 more on 4 to 2025.
    params = {"min_interval": 30.0000000005, "new_job_service": "wait"}
    jobs = [job(1, 0, 4, 1000), job(2, 60, 4, 1000), job(3, 70, 1, 100)]
    sim, at = run(one_host(4), jobs, "eqspatial", 1.0, **params)
    assert at == [
        (0.0, 1), (1.0, 0), (60.0, 2), (61.0, 0), (70.0, 1), (71.0, 0), (90.0, 2),
        (90.0000000005, 0), (190.0, 1), (191.0, 0), (1940.0, 1), (1941.0, 0),
    ]  # fmt: skip
    assert spans(sim) == [(1, 0.0, 1940.0), (2, 60.0, 2025.0), (3, 90.0, 190.0)]
    ticking, every = run(one_host(4), jobs, "eqspatial", 1.0, skip=False, **params)
    assert spans(ticking) == spans(sim) and len(every) == 2025 + 1  # every tick and the timer


def test_a_job_waiting_for_memory_is_skipped_over_with_its_credit_booked():
    # One host of 4 processors and 10 GB, no immediate service.  A (2 procs, 8 GB) runs
    # 0-100; B (1 proc, 8 GB, 50 s) arrives at 5: no host has the memory, it waits,
    # earning catch-up credit (1 processor-second a second: both fit the machine's 4
    # processors).  Passes: 0 (A starts), 1 (quiet: skip to B's submit), 5 (B waits:
    # quiet), then nothing can change until A leaves: 100 (B placed with 95
    # processor-seconds of credit; its catch-up timer, at 195, is after its end at 150),
    # 101 (quiet).  5 passes against 150 ticking through.
    jobs = [job(1, 0, 2, 100, mem_gb=8), job(2, 5, 1, 50, mem_gb=8)]
    sim, at = run(one_host(4, mem_gb=10), jobs, "eqspatial-5m", 1.0, immediate_service="off")
    assert at == [(0.0, 1), (1.0, 0), (5.0, 0), (100.0, 2), (101.0, 0)]
    assert spans(sim) == [(1, 0.0, 100.0), (2, 100.0, 150.0)] and sim.policy.credits == {2: 95.0}
    ticking, every = run(one_host(4, mem_gb=10), jobs, "eqspatial-5m", 1.0, skip=False,
                         immediate_service="off")  # fmt: skip
    assert spans(ticking) == spans(sim) and len(every) == 150


def test_a_deadline_a_hair_after_a_tick_is_met_at_the_tick():
    # MinInterval 0, the long-job threshold 100.0000000005 s (wall clock), a pass every
    # second, 4 processors.  A (4 procs, 1000 s) starts at 0; B (4 procs, 1000 s) arrives
    # at 60: 2 + 2.  A's 100.0000000005 s mark is due within TIME_EPS = 1e-9 s, so the
    # tick of 100 meets it: A keeps 3, B 1.  The skip after the quiet pass at 61 must end
    # there, not at A's timer.  By hand, the passes:
    #   0 (A starts, its long-job timer), 1 (quiet: skip to 60), 60 (resize A, start B,
    #   B's timer), 61 (quiet: skip to 100), 100 (resize A and B), 100.0000000005 (A's
    #   timer: quiet, skip to B's mark), 160 (B's mark: both long, A first keeps 3, B 1:
    #   no change), 160.0000000005 (B's timer), 1327 (the tick after A's end: B grows
    #   to 4), 1328 (quiet).
    # Work: A 240 + 80 by 100, 3680 more on 3: to 1326 2/3.  B 80 + 1227 by 1327, 2693
    # more on 4 to 2000.25.
    params = {"min_interval": 0, "long_job_threshold": 100.0000000005}
    jobs = [job(1, 0, 4, 1000), job(2, 60, 4, 1000)]
    sim, at = run(one_host(4), jobs, "eqspatial", 1.0, **params)
    assert at == [
        (0.0, 2), (1.0, 0), (60.0, 3), (61.0, 0), (100.0, 2), (100.0000000005, 0),
        (160.0, 0), (160.0000000005, 0), (1327.0, 1), (1328.0, 0),
    ]  # fmt: skip
    assert spans(sim) == [(1, 0.0, 100.0 + 3680 / 3), (2, 60.0, 2000.25)]
    ticking, _ = run(one_host(4), jobs, "eqspatial", 1.0, skip=False, **params)
    assert spans(ticking) == spans(sim)


def test_credit_earned_tick_by_tick_is_the_same_float():
    # One host of 4 processors and 10 GB, no immediate service.  A (4 procs, 8 GB) runs
    # 0-100; B and C (4 procs, 8 GB, 50 s) arrive at 5 and wait for memory: three jobs
    # of 4 in the system, each waiting job earns 4/3 processor-second a second, booked
    # pass by pass.  Ticking through, B's credit at 100 is 95 float additions of 4/3
    # (not 95 * 4/3), which the pass after the skip must book the same way.  B catches
    # up at 100 + credit / 4 (a timer: its host needs no change) and ends at 150; C (then
    # alone with B: 2 a second) starts at 150.  Passes: 0 (A starts), 1 (quiet), 5 (B
    # and C wait: quiet), 100 (B placed: start, catch-up timer), 101 (quiet), B's
    # catch-up (quiet), 150 (C placed), 151 (quiet); 201 ticking through.
    jobs = [job(1, 0, 4, 100, mem_gb=8), job(2, 5, 4, 50, mem_gb=8), job(3, 5, 4, 50, mem_gb=8)]
    sim, at = run(one_host(4, mem_gb=10), jobs, "eqspatial-5m", 1.0, immediate_service="off")
    credit = 0.0
    for _ in range(95):
        credit += 4 / 3
    assert credit != 95 * (4 / 3)
    assert sim.policy.credits[2] == credit
    assert [t for t, _ in at] == [0.0, 1.0, 5.0, 100.0, 101.0, 100.0 + credit / 4, 150.0, 151.0]
    assert spans(sim) == [(1, 0.0, 100.0), (2, 100.0, 150.0), (3, 150.0, 200.0)]
    ticking, every = run(one_host(4, mem_gb=10), jobs, "eqspatial-5m", 1.0, skip=False,
                         immediate_service="off")  # fmt: skip
    assert ticking.policy.credits == sim.policy.credits and len(every) == 201


def test_a_host_held_for_the_pass_whose_trial_ended_is_not_skipped_over():
    # One host of 4 processors and 8 GB, a pass every second.  A (2 procs, 6 GB) runs
    # 0-100.  W (1 proc, 6 GB, 10 s) arrives at 5: no host has the memory, it gets the
    # immediate-service trial on a free processor and completes in it at 15.  N (1 proc,
    # 20 s) arrives at 15 and is placed on the host, which the pass holds (its trial has
    # just ended): N starts at the next tick, 16, as ticking through.  By hand, the
    # passes: 0 (A starts), 1 (quiet: skip to 5), 5 (W's trial), 6 (quiet: skip to W's
    # end), 15 (quiet, but no promise: a trial ended), 16 (N starts), 17 (quiet: skip to
    # N's end), 36 (N has left: A keeps its request, quiet); 100 ticking through.
    jobs = [job(1, 0, 2, 100, mem_gb=6), job(2, 5, 1, 10, mem_gb=6), job(3, 15, 1, 20)]
    sim, at = run(one_host(4, mem_gb=8), jobs, "eqspatial-5m", 1.0)
    assert at == [(0.0, 1), (1.0, 0), (5.0, 1), (6.0, 0), (15.0, 0), (16.0, 1), (17.0, 0), (36.0, 0)]
    assert spans(sim) == [(1, 0.0, 100.0), (2, 5.0, 15.0), (3, 16.0, 36.0)]
    ticking, every = run(one_host(4, mem_gb=8), jobs, "eqspatial-5m", 1.0, skip=False)
    assert spans(ticking) == spans(sim) and len(every) == 100


def test_before_is_strictly_before_within_the_slack():
    for when in (1.0, 130.0000000005, 1e6 + 0.25, 3.5e9, 2.0**40):
        h = before(when)
        t = math.nextafter(h, -math.inf)
        assert t + 1e-9 < when
        assert when - h < 1e-9 + 8 * math.ulp(when)


def test_a_subclass_that_decides_otherwise_inherits_no_promise():
    class Eager(EQSpatial):
        def _resolve(self, h, view, snap, out):
            return super()._resolve(h, view, snap, out)

    jobs = [job(1, 0, 3, 2000, 1000), job(2, 5, 2, 20, 10)]
    sim, at = run(one_host(4), jobs, Eager(min_interval="5m"), 1.0)
    assert len(at) == 1100 and sim.scheduler.skipped_ticks == 0


# -- the same schedule as ticking through ------------------------------------------------------
VARIANTS = [
    {"min_interval": 0},
    {"min_interval": "5m"},
    {"min_interval": 60},
    {"min_interval": 37.5, "new_job_service": "wait"},
    {"min_interval": "5m", "long_job_threshold": 400},
    {"min_interval": 60, "long_job_threshold": 250, "long_job_clock": "work"},
    {"min_interval": 60, "long_job_threshold": 200, "long_job_grant": "whole",
     "long_job_placement": "deduct"},
    {"min_interval": 0, "long_job_threshold": 300, "new_job_service": "wait"},
    {"min_interval": "5m", "immediate_service": "soon"},
    {"min_interval": 60, "immediate_service": "off"},
    {"min_interval": 30, "immediate_service": "preemptive", "quantum": 20, "eligible_after": 30},
]  # fmt: skip


def both(jobs, params, interval, machine=THREE_HOSTS):
    """Jobs (with credit and trials) and allocation segments, the skip on and off."""
    out = []
    for skip in (True, False):
        Scheduler.skip_ticks = skip
        try:
            r = simulate(jobs, machine=machine, policy="eqspatial", policy_params=params,
                         interval=interval)  # fmt: skip
        finally:
            Scheduler.skip_ticks = True
        cols = ["job_id", "host", "start", "end", "status", "catchup_credit", "immediate_service"]
        segments = r.segments.reset_index(drop=True)
        out.append((r.jobs[cols].reset_index(drop=True), segments, r.stats))
    return out


@st.composite
def workloads(draw):
    """Bursty jobs (estimates exact, too long or too short), with memory, on three hosts."""
    return bursty_jobs(draw, st, 30, [0, 512, 2048, 3072, 6000, 7000])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=workloads(),
    params=st.sampled_from(VARIANTS),
    interval=st.sampled_from([1.0, 5.0, 7.0, 30.0, 2.5]),
)
def test_same_schedule_as_ticking_through(jobs, params, interval):
    (j1, s1, st1), (j2, s2, st2) = both(jobs, params, interval)
    pd.testing.assert_frame_equal(j1, j2)
    pd.testing.assert_frame_equal(s1, s2)
    assert st1.passes <= st2.passes


TWIN = MachineSpec("twin", (HostSpec("x", 8, 8 * 1024**2), HostSpec("y", 8, 4 * 1024**2)))


@st.composite
def memory_bound(draw):
    """A few wide, long jobs with large memory on two small hosts: jobs wait for memory,
    catch up, pass a low long-job threshold, and have trials that preempt."""
    jobs, t = [], 0
    for i in range(draw(st.integers(2, 10))):
        t += draw(st.sampled_from([0, 0, 2, 20, 100]))
        procs = draw(st.sampled_from([1, 2, 4, 6, 8]))
        req = draw(st.integers(10, 600))
        run_ = draw(st.sampled_from([req, 2 * req, max(1, req // 3)]))
        mem = draw(st.sampled_from([0.5, 2, 3, 5, 7]))
        jobs.append(job(i + 1, t, procs, req, run_, mem_gb=mem))
    return jobs


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=memory_bound(), params=st.sampled_from(VARIANTS), interval=st.sampled_from([1.0, 3.0]))
def test_same_schedule_as_ticking_through_under_memory_pressure(jobs, params, interval):
    (j1, s1, _), (j2, s2, _) = both(jobs, params, interval, machine=TWIN)
    pd.testing.assert_frame_equal(j1, j2)
    pd.testing.assert_frame_equal(s1, s2)


# -- the closed-form sums ----------------------------------------------------------------------
def _loop(c, a, n):
    for _ in range(n):
        c = c + a
    return c


@settings(max_examples=300, deadline=None)
@given(
    c=st.one_of(st.just(0.0), st.floats(0, 1e7), st.integers(-8, 40).map(lambda e: 2.0**e)),
    frac=st.sampled_from([None, 0.25, 0.5, 1.5, 2.5, 3.5, 0.49, 0.51]),
    a=st.sampled_from([4 / 3, 1 / 3, 0.1, 2.0, 80.0, 1e-12, 7.7]),
    n=st.integers(0, 3000),
)
def test_repeat_add_is_the_float_of_n_additions(c, frac, a, n):
    # ties (a an odd multiple of half an ulp of c), additions below half an ulp, binades
    # crossed: the same float as adding one at a time
    from o2ksim.policies.tick_sums import repeat_add

    if frac is not None and c > 0:
        a = frac * math.ulp(c)
    assert repeat_add(c, a, n) == _loop(c, a, n)


def test_repeat_add_a_billion_times_in_a_few_steps():
    from o2ksim.policies.tick_sums import repeat_add

    assert repeat_add(0.0, 1.0, 10**9) == 1e9  # exact all the way
    assert repeat_add(2.0**53, 1.0, 10**9) == 2.0**53  # a tie to even each time: it stays
    assert repeat_add(0.0, 4 / 3, 10**6) == _loop(0.0, 4 / 3, 10**6)


def test_grid_between_by_hand():
    from o2ksim.policies.tick_sums import grid_between

    assert grid_between(0.0, 5.0, 1.0) == (1, 4)  # ticks 1, 2, 3, 4
    assert grid_between(0.5, 5.0, 1.0) == (1, 4)
    assert grid_between(4.0, 5.0, 1.0) is None  # consecutive ticks: nothing between
    assert grid_between(3.2, 3.7, 1.0) is None
    assert grid_between(90.0000000005, 130.0, 1.0) == (91, 129)
    assert grid_between(0.0, 10.0, 2.5) == (1, 3)  # 2.5, 5, 7.5


def test_the_ledger_books_a_skip_as_every_tick():
    from o2ksim.policies.equipartition import CreditLedger

    skipping, ticking = CreditLedger(), CreditLedger()
    for ledger in (skipping, ticking):
        ledger.wait(1, 4)
        ledger.wait(2, 1)
        ledger.set_level(5.3, 4, {4: 3, 1: 1})  # level (4 - 1) / 2 = 1.5 from 5.3 on
    for t in range(6, 1001):  # a pass every tick 6 .. 1000
        ticking.accrue(float(t), 1.0)
        ticking.set_level(float(t), 4, {4: 3, 1: 1})
    skipping.accrue(1000.0, 1.0)  # one pass after the skip
    assert skipping.credit == ticking.credit
    assert skipping.credit[2] == _loop(6.0 - 5.3, 1.0, 994)  # min(1, 1.5) = 1 a second
