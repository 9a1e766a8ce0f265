"""With ``--interval``, a quiet stretch costs one timeout, not one pass per tick.

After a pass that decided nothing, while nothing happens, the scheduler skips
the ticks up to the first one at or after the policy's guarantee
(``Policy.quiet_until``) or the next arrival; anything that happens before
(a departure, a timer, processors going down or coming back) cuts the skip
short (``Scheduler.tick``, ``Scheduler.stir``).  Expected values: hand
computations, and the same run ticking through every interval (the skip
switched off: every tick a pass), an oracle that does not use the guarantee.
"""

from __future__ import annotations

import math
import time

import pandas as pd
import pytest
from conftest import THREE_HOSTS, bursty_jobs, job, one_host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim.availability import Outage
from o2ksim.engine.core import Simulation
from o2ksim.engine.monitor import Observer
from o2ksim.engine.scheduler import Scheduler
from o2ksim.jobs import JobSpec
from o2ksim.machine import HostSpec, MachineSpec
from o2ksim.policies import quiet
from o2ksim.policies.backfill import Backfill
from o2ksim.policies.base import make_policy
from o2ksim.policies.priority import static_priority
from o2ksim.run.api import simulate


class Passes(Observer):
    """Records the instant of every pass."""

    def __init__(self) -> None:
        self.at: list[float] = []

    def on_pass(self, now: float, n_decisions: int) -> None:
        self.at.append(now)


def run(machine, jobs, policy, interval, **kw):
    passes = Passes()
    sim = Simulation(machine, jobs, make_policy(policy) if isinstance(policy, str) else policy,
                     interval=interval, observers=[passes], **kw)  # fmt: skip
    sim.run()
    return sim, passes.at


def placed(sim) -> list[tuple[int, str | None, float, float]]:
    return [(j.id, j.host, j.first_start, j.end) for j in sim.jobs.values()]


@pytest.mark.parametrize("policy", ["fcfs", "fcfs-backfill", "sjf-backfill"])
def test_a_job_waiting_behind_a_billion_second_job(policy):
    # 4 processors, a pass every second.  A (3 procs, requests 2e9 s, runs 1e9 s) starts
    # at 0; B (2 procs, 10 s) arrives at 5 and does not fit beside it.  By hand: passes at
    # 0 (A starts), 1 (nothing: quiet), 5 (B arrives, does not fit: quiet), 1e9 (A has
    # left: B starts), 1e9 + 1 (nothing); B ends at 1e9 + 10, which ends the run.  The
    # ticks skipped: 2-4, 6 .. 1e9 - 1 and 1e9 + 2 .. 1e9 + 9.
    t = time.process_time()
    sim, at = run(one_host(4), [job(1, 0, 3, 2e9, 1e9), job(2, 5, 2, 20, 10)], policy, 1.0)
    assert time.process_time() - t < 5
    assert at == [0.0, 1.0, 5.0, 1e9, 1e9 + 1]
    assert placed(sim) == [(1, "m", 0.0, 1e9), (2, "m", 1e9, 1e9 + 10)]
    assert sim.scheduler.skipped_ticks == 3 + (1e9 - 6) + 8


def test_the_skip_ends_at_the_first_predicted_release():
    # Two hosts of 4.  A (3 procs on x, requests 100 s, runs 1000) and D (4 procs on y,
    # requests 400, runs 2000) start at 0; B (4 procs, 100 s) arrives at 5 and is reserved
    # on x at 100, A's predicted end; C (1 proc, 1000 s) arrives at 10: x's free processor
    # is B's from 100 on, so C waits.  A overruns: from 100 its release is predicted *now*
    # (it moves), so every tick is a pass again; at 400 D's is too, B's two possible
    # starts tie at 400 and go to the host with the fewest free processors (y), and C
    # starts on x at 400.  A skip past 100 (to A's departure at 1000) would start C there.
    two = MachineSpec("xy", (HostSpec("x", 4, math.inf), HostSpec("y", 4, math.inf)))
    jobs = [job(1, 0, 3, 100, 1000), job(2, 0, 4, 400, 2000), job(3, 5, 4, 100), job(4, 10, 1, 1000)]
    sim, at = run(two, jobs, "fcfs-backfill", 1.0)
    assert at[:5] == [0.0, 1.0, 5.0, 10.0, 100.0]  # 11 .. 99 skipped; from 100, every tick
    assert at[4:305] == [float(t) for t in range(100, 401)]
    assert placed(sim) == [
        (1, "x", 0.0, 1000.0), (2, "y", 0.0, 2000.0), (3, "x", 1400.0, 1500.0),
        (4, "x", 400.0, 1400.0),
    ]  # fmt: skip


def test_an_early_departure_cuts_the_skip_short_on_the_grid():
    # interval 7 s.  A (4 procs, requests 1000, runs 30) starts at 0; B (2 procs, 5 s)
    # arrives at 3 and waits.  Passes at 0 and 7 (B does not fit: quiet, guaranteed until
    # 1000); A leaves at 30, between ticks: the next tick, 35, starts B (ends at 40).
    sim, at = run(one_host(4), [job(1, 0, 4, 1000, 30), job(2, 3, 2, 5)], "fcfs-backfill", 7.0)
    assert at == [0.0, 7.0, 35.0]
    assert placed(sim) == [(1, "m", 0.0, 30.0), (2, "m", 35.0, 40.0)]
    assert sim.scheduler.skipped_ticks == 3  # 14, 21, 28


def test_processors_coming_back_cut_the_skip_short():
    # 4 processors, 2 of them down from 5 to 50.  A (2 procs, 1000 s) starts at 0; B (2
    # procs) arrives at 10 and finds nothing free.  Nothing ends before 1000, but the
    # processors come back at 50: the tick at 50 starts B.
    down = [Outage("m", 5.0, 50.0, 2)]
    jobs = [job(1, 0, 2, 1000), job(2, 10, 2, 20)]
    for policy in ("fcfs", "fcfs-backfill"):
        sim, at = run(one_host(4), jobs, policy, 1.0, availability=down)
        assert 50.0 in at and len(at) < 12
        assert placed(sim)[1] == (2, "m", 50.0, 70.0)


def test_a_policy_without_a_guarantee_ticks_through():
    # a priority function (it may reorder the queue at any time): a pass at every tick
    # while B waits (0 .. 300) and while it runs (301 .. 309; its end at 310 ends the run
    # before that tick's pass).  (Fixed-job reservations, this test's case until they got
    # their guarantee: test_interval_quiet_held.py.)
    def widest_first(q):
        return q.jp + 0.01 * q.jw

    jobs = [job(1, 0, 3, 300), job(2, 5, 2, 10)]
    policy = Backfill(priority=widest_first, reservation_kind="fixed")
    sim, at = run(one_host(4), jobs, policy, 1.0)
    assert at == [float(t) for t in range(0, 310)]
    assert placed(sim)[1] == (2, "m", 300.0, 310.0)


def test_a_priority_function_declared_static_skips_quiet_ticks():
    # the case above with a function declared static (it reads only the processors): an
    # order that cannot change with time, so the guarantee of a static order.  By hand,
    # as for a fixed-job reservation under any static order: 0 (A starts), 1 (quiet), 5
    # (B is granted the reservation at 300: no promise), 6 (held again: quiet until A's
    # release at 300), 300 (B starts), 301 (quiet until B's end at 310, the run's end).
    jobs = [job(1, 0, 3, 300), job(2, 5, 2, 10)]
    policy = Backfill(priority=static_priority(lambda q: q.jp), reservation_kind="fixed")
    sim, at = run(one_host(4), jobs, policy, 1.0)
    assert at == [0.0, 1.0, 5.0, 6.0, 300.0, 301.0]
    assert placed(sim)[1] == (2, "m", 300.0, 310.0)


def test_lxf_skips_until_two_waiting_jobs_swap_places():
    # LXF (score 1 + wait / R) on 4 processors, a pass every second.  A (3 procs, 1000 s)
    # starts at 0; C (4 procs, R = 400) and D (1 proc, R = 5000) wait from 0, B (4 procs,
    # R = 100) from 10.  D fits the free processor but would delay the head's reservation
    # at 1000, so something fits and the order matters.  By hand: at 1 the order C, D
    # holds for ever (C gains); at 10 it is C (1.025), D (1.002), B (1): B meets D at
    # 10.2 and C at 13 1/3 (t/400 = (t - 10)/100), so passes at 11 and 14, after which
    # B leads and the order holds for ever: the next pass is A's release at 1000, where
    # B starts (1000-1100), then C (1100-1500), then D (1500-6500).  Passes at 0 (A
    # starts), 1 (quiet), 10 (B arrives), 11, 14, 1000, 1001, 1100, 1101, 1500, 1501;
    # ticking through gives the same schedule.
    jobs = [job(1, 0, 3, 1000), job(2, 0, 4, 400), job(4, 0, 1, 5000), job(3, 10, 4, 100)]
    sim, at = run(one_host(4), jobs, "lxf-backfill", 1.0)
    assert at == [0.0, 1.0, 10.0, 11.0, 14.0, 1000.0, 1001.0, 1100.0, 1101.0, 1500.0, 1501.0]
    expected = [(1, "m", 0.0, 1000.0), (2, "m", 1100.0, 1500.0), (4, "m", 1500.0, 6500.0),
                (3, "m", 1000.0, 1100.0)]  # fmt: skip
    assert placed(sim) == expected
    Scheduler.skip_ticks = False
    try:
        ticking, every = run(one_host(4), jobs, "lxf-backfill", 1.0)
    finally:
        Scheduler.skip_ticks = True
    assert placed(ticking) == expected and every[:15] == [float(t) for t in range(15)]


def test_a_swap_of_the_head_lets_a_job_backfill_at_the_next_tick():
    # LXF on 4 processors, a pass every second.  A (3 procs, 1000 s) runs from 0.
    # Waiting: H4 (4 procs, R = 400) from 0, H3 (3 procs, R = 100) from 10, X (1 proc,
    # R = 2000) from 12.  At 12 the order is H4 (1.03), H3 (1.02), X (1): the head H4 is
    # reserved at 1000 with no processor to spare, so X (past 1000) waits.  H3 overtakes
    # H4 at 13 1/3: at the tick of 14 the head is H3, which leaves 1 processor at 1000,
    # and X starts (EASY's extra processor).  A skip past 13 1/3 would start X later.
    # The tick of 11 passes too: X's arrival at 12 leaves no two ticks to skip, so the
    # policy is not asked (ASK_TICKS).
    # By hand: X 14-2014; H3 at A's end, 1000-1100; H4 once X ends, 2014-2414.
    jobs = [job(1, 0, 3, 1000), job(2, 0, 4, 400), job(3, 10, 3, 100), job(4, 12, 1, 2000)]
    expected = [
        (1, "m", 0.0, 1000.0), (2, "m", 2014.0, 2414.0), (3, "m", 1000.0, 1100.0),
        (4, "m", 14.0, 2014.0),
    ]  # fmt: skip
    sim, at = run(one_host(4), jobs, "lxf-backfill", 1.0)
    assert at[:7] == [0.0, 1.0, 10.0, 11.0, 12.0, 14.0, 15.0]
    assert placed(sim) == expected
    assert sim.scheduler.skipped_ticks > 2000


def test_order_holds_until_gives_no_promise_for_neighbours_too_close_to_tell():
    # Two jobs whose LXF scores differ by less than the rounding margin: no guarantee
    # (now); the same two apart by more: the meeting time, by hand.
    from o2ksim.engine.queue_index import QueueIndex
    from o2ksim.jobs import Job
    from o2ksim.policies.priority import LXFPriority
    from o2ksim.policies.quiet import order_holds_until

    def index_of(*specs):
        jobs = [Job(spec) for spec in specs]
        index = QueueIndex(jobs)
        for j in jobs:
            index.add(j)
        return index

    lxf = LXFPriority()
    # C: R = 400 from 0; B: R = 100 from 10.  At 10: 1.025 against 1; they meet at 40/3.
    far = index_of(JobSpec(2, 0.0, 2, 0, 400.0, 400.0), JobSpec(3, 10.0, 2, 0, 100.0, 100.0))
    assert order_holds_until(lxf, far, 10.0, 1000.0) == pytest.approx(40 / 3, rel=1e-8)
    assert order_holds_until(lxf, far, 10.0, 1000.0) < 40 / 3
    assert order_holds_until(lxf, far, 10.0, 12.0) == 12.0  # the cap comes first
    # R = 400 from 0 and R = 400 from 1e-13 s later: scores 1e-13 / 400 apart at 10
    near = index_of(JobSpec(2, 0.0, 2, 0, 400.0, 400.0), JobSpec(3, 1e-13, 2, 0, 400.0, 400.0))
    assert order_holds_until(lxf, near, 10.0, 1000.0) == 10.0
    # the same base, slope and submission time: tied for ever, in queue order
    same = index_of(JobSpec(2, 5.0, 2, 0, 400.0, 400.0), JobSpec(3, 5.0, 1, 0, 400.0, 400.0))
    assert order_holds_until(lxf, same, 10.0, 1000.0) == 1000.0


def test_a_subclass_that_decides_otherwise_inherits_no_guarantee():
    class Eager(Backfill):
        def schedule(self, snap):
            return super().schedule(snap)

    jobs = [job(1, 0, 3, 300), job(2, 5, 2, 10)]
    sim, at = run(one_host(4), jobs, Eager(), 1.0)
    assert len(at) == 310 and sim.scheduler.skipped_ticks == 0


def test_first_release_refuses_moving_predictions():
    # a hand-built snapshot has no release index: no guarantee
    from o2ksim.engine.snapshot import HostView, Snapshot

    spec = HostSpec("m", 4, math.inf)
    view = HostView(spec, 4, math.inf, (), ())
    snap = Snapshot(3.0, (), (view,), {"m": view}, MachineSpec("m", (spec,)))
    assert quiet.first_release(snap) == 3.0


# -- the same schedule as ticking through ------------------------------------------------------
GUARANTEED = [
    ("fcfs", {}),
    ("backfill", {"priority": "fcfs", "reservations": 1}),
    ("backfill", {"priority": "fcfs", "reservations": 0}),
    ("backfill", {"priority": "sjf", "reservations": 2}),
    ("backfill", {"priority": "fcfs", "reservations": "all"}),
    ("backfill", {"priority": "fcfs", "reservations": "all", "release_ties": "smallest-first"}),
    ("backfill", {"priority": "sjf", "reservations": 2, "release_ties": "together"}),
    ("lxfw-backfill", {"reservations": 1}),
    ("backfill", {"priority": "lxf", "reservations": 2}),
    ("lxfw-backfill", {"reservations": "all"}),
    ("ncsa-ms", {"reservation_kind": "dynamic"}),
    ("backfill", {"priority": {"w": 1, "x": 3, "p": 0.5}, "reservations": 1}),
    ("backfill", {"priority": {"w": -1, "x": 2}, "reservations": 1}),
    ("backfill", {"priority": {"p": 1, "m": 0.5}, "reservations": 3}),
    ("backfill", {"priority": {"pe": 1}, "reservations": 1, "backfill_host": "fewest-free"}),
    ("backfill", {"priority": static_priority(lambda q: q.jp - q.jm), "reservations": 2}),
]


def schedules(jobs, policy, params, interval, *, skip, machine=THREE_HOSTS, down=()):
    """(job, host, start, end, status) of every job, the skip on or off."""
    Scheduler.skip_ticks = skip
    try:
        r = simulate(jobs, machine=machine, policy=policy, policy_params=params,
                     interval=interval, availability=list(down))  # fmt: skip
    finally:
        Scheduler.skip_ticks = True
    cols = ["job_id", "host", "start", "end", "status"]
    return r.jobs[cols].reset_index(drop=True), r.stats


@st.composite
def workloads(draw):
    """Bursty jobs (under- and overrunning their requests, with memory) on three hosts."""
    return bursty_jobs(draw, st, 40, [0, 512, 1024, 3072, 6000])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=workloads(),
    choice=st.sampled_from(GUARANTEED),
    interval=st.sampled_from([1.0, 2.5, 7.0, 40.0, 3.3]),
)
def test_same_schedule_as_ticking_through(jobs, choice, interval):
    same_as_ticking_through(jobs, *choice, interval)


def same_as_ticking_through(jobs, policy, params, interval, machine=THREE_HOSTS, down=()):
    """Assert that skipping quiet ticks gives the schedule of a pass at every tick, in no
    more passes (the property every quiet guarantee is tested with)."""
    skipping, s1 = schedules(jobs, policy, params, interval, skip=True, machine=machine, down=down)
    ticking, s2 = schedules(jobs, policy, params, interval, skip=False, machine=machine, down=down)
    pd.testing.assert_frame_equal(skipping, ticking)
    assert s1.passes <= s2.passes


# Other guarantees: immediate service (refused trials stay refused) and any backfill
# order or goal-oriented search while no waiting job fits (test_interval_quiet_immediate.py,
# test_interval_quiet_nothing_fits.py have the hand-computed cases).
def by_wait_mod_7(q):
    """A priority that reads time and reorders the queue every second."""
    return (q.wait % 7.0) - q.procs


IMMEDIATE = [
    ("fcfs-backfill-immediate", {"quantum": 20, "eligible_after": 60}),
    ("fcfs-backfill-immediate", {"quantum": 5}),
    ("lxfw-backfill-immediate", {"quantum": 30, "eligible_after": 45}),
    ("lxfw-backfill-soon", {"quantum": 20}),
    ("backfill", {"priority": "sjf", "reservations": 2, "immediate_service": "soon",
                  "quantum": 15}),
    ("backfill", {"reservations": "all", "immediate_service": "preemptive", "quantum": 10,
                  "eligible_after": 25}),
]  # fmt: skip

# fmt: off
NOTHING_FITS = [
    ("backfill", {"priority": by_wait_mod_7, "reservations": 1}),
    ("backfill", {"priority": by_wait_mod_7, "reservations": 3, "immediate_service": "soon",
                  "quantum": 20}),
    ("goal", {"limit": 60}),
    ("goal", {"limit": 60, "search": "dds+local", "local_budget": 30, "local_warm": True}),
    ("goal", {"limit": 60, "search": "lds+local", "local_budget": 30, "local_kind": "ils"}),
]
# fmt: on


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=workloads(),
    choice=st.sampled_from([*IMMEDIATE, *NOTHING_FITS]),
    interval=st.sampled_from([1.0, 2.5, 7.0, 40.0]),
)
def test_same_schedule_as_ticking_through_trials_and_nothing_fits(jobs, choice, interval):
    same_as_ticking_through(jobs, *choice, interval)


TWIN = MachineSpec("twin", (HostSpec("x", 8, math.inf), HostSpec("y", 8, math.inf)))


@st.composite
def overrunning(draw):
    """A few jobs on two equal hosts, many running past their requests: reservations tie
    between the hosts and move once a prediction is overrun (*now*), which a skip past the
    first predicted release gets wrong (without this strategy, rarely seen)."""
    jobs, t = [], 0
    for i in range(draw(st.integers(2, 12))):
        t += draw(st.sampled_from([0, 0, 3, 20, 100]))
        procs = draw(st.sampled_from([1, 2, 4, 6, 8]))
        req = draw(st.integers(1, 300))
        run = draw(st.sampled_from([req, 2 * req, 4 * req, max(1, req // 2)]))
        jobs.append(job(i + 1, t, procs, req, run))
    return jobs


OVERRUN_PARAMS = [
    {"reservations": 1}, {"reservations": 2}, {"reservations": "all"},
    {"reservations": "all", "release_ties": "smallest-first"},
    {"priority": "sjf", "reservations": 1},
    {"priority": {"w": 0.02, "x": 1}, "reservations": 1},
]  # fmt: skip


@st.composite
def outages(draw):
    """Up to two periods of processors down on the two hosts (each may start or end while
    a quiet stretch is being skipped)."""
    out = []
    for _ in range(draw(st.integers(0, 2))):
        start = draw(st.integers(0, 600))
        end = start + draw(st.integers(1, 600))
        out.append(Outage(draw(st.sampled_from(["x", "y"])), float(start), float(end),
                          draw(st.integers(1, 4))))  # fmt: skip (two overlap within 8)
    return sorted(out, key=lambda o: o.start)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=overrunning(),
    params=st.sampled_from([*OVERRUN_PARAMS, {"policy": "fcfs"}]),
    interval=st.sampled_from([1.0, 5.0]),
    down=outages(),
)
def test_same_schedule_as_ticking_through_with_overruns(jobs, params, interval, down):
    policy = params.get("policy", "backfill")
    params = {k: v for k, v in params.items() if k != "policy"}
    same_as_ticking_through(jobs, policy, params, interval, machine=TWIN, down=down)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=overrunning(), choice=st.sampled_from([*IMMEDIATE, *NOTHING_FITS]),
       interval=st.sampled_from([1.0, 5.0]))  # fmt: skip
def test_same_schedule_as_ticking_through_with_overruns_trials_and_nothing_fits(
    jobs, choice, interval
):
    same_as_ticking_through(jobs, *choice, interval, machine=TWIN)


@pytest.mark.parametrize("interval", [1.0, 30.0])
def test_conservative_backfill_with_its_carried_plan(interval):
    # a queue deep enough for the carried plan (--reservations all, 64 waiting jobs and
    # more): the same schedule as ticking through, and most ticks skipped
    # 200 jobs in 20 s, each ending at or before its request (some early)
    jobs = [job(i, i // 10, 1 + (i * 7) % 12, 600 + (i * 37) % 900, 600 + (i * 37) % 900 - i % 3)
            for i in range(1, 201)]  # fmt: skip
    params = {"priority": "fcfs", "reservations": "all"}
    skipping, s1 = schedules(jobs, "backfill", params, interval, skip=True)
    ticking, s2 = schedules(jobs, "backfill", params, interval, skip=False)
    pd.testing.assert_frame_equal(skipping, ticking)
    assert s1.passes < s2.passes / 2
    assert s1.extra == s2.extra


def test_a_policy_object_without_quiet_until_is_refused_by_name():
    from o2ksim.errors import ConfigError

    class FiveMethods:  # the contract before quiet_until
        name = "five"

        def schedule(self, snap):
            return []

        def bind(self, machine, rng):
            pass

        def admit(self, job):
            return None

        def stats(self):
            return {}

        def summary_counts(self, ids=None):
            return {}

    with pytest.raises(ConfigError, match=r"which lacks quiet_until$"):
        simulate([job(1, 0, 1, 10)], machine=one_host(4), policy=FiveMethods())


def test_the_last_departures_end_a_skip_after_the_ticker_has_stopped():
    """Found by CI: two 3 s jobs started at 0 on two hosts, one reservation, 1 s ticks.  The
    pass at 0 starts both; the quiet skip runs to their release at 3, where the run ends and
    the ticker stops; the departures' own stir then found a ticker that could no longer be
    interrupted (a SimPy RuntimeError).  Both jobs run 0-3."""
    jobs = [JobSpec(1, 0.0, 1, 0, 3.0, 3.0), JobSpec(2, 0.0, 1, 0, 3.0, 3.0)]
    for skip in (True, False):
        schedule, _ = schedules(jobs, "backfill", {"reservations": 1}, 1.0, skip=skip, machine=TWIN)
        assert schedule["start"].tolist() == [0.0, 0.0]
        assert schedule["end"].tolist() == [3.0, 3.0]
