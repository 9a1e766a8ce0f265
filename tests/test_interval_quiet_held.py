"""Quiet interval stretches with reservations carried between passes: fixed-job (NCSA-MS*,
Maui HIGHEST) and non-sliding (T§5.3.3).

A quiet pass promises something only when it left the held reservations exactly as it
found them (a fixed point), and then not past the earliest of their times
(:func:`o2ksim.policies.quiet.held_holds_until`; the argument is in the module docstring
of :mod:`o2ksim.policies.quiet`).  Expected values: passes counted by hand, and the same
run ticking through every interval (the skip switched off), an oracle that does not use
the guarantee.
"""

from __future__ import annotations

import math
import time

import pytest
from conftest import job, one_host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_interval_quiet import (
    TWIN,
    outages,
    overrunning,
    placed,
    run,
    same_as_ticking_through,
    workloads,
)

from o2ksim.engine.scheduler import Scheduler
from o2ksim.jobs import Job, JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies.backfill import Backfill
from o2ksim.policies.quiet import LastPass, held_holds_until

NCSA = {"w": 240, "x": 1500, "pe": 100}  # NCSA-MS*'s weights (T Table 12)


def ticking(machine, jobs, policy, interval):
    """The same run with a pass at every tick."""
    Scheduler.skip_ticks = False
    try:
        return run(machine, jobs, policy, interval)
    finally:
        Scheduler.skip_ticks = True


#: Immediate service that never grants a trial in the hand-worked cases below: "soon" needs
#: free processors for the trial, and they are too few; "preemptive" with a 60-s quantum
#: may preempt a job only after 600 s of run with more than 600 s still predicted, which
#: the running job never reaches (its trial bound: never).  The promises of the held
#: reservations must then be the same as without it, pass for pass.
NO_TRIAL = [{}, {"immediate_service": "soon"}, {"immediate_service": "preemptive", "quantum": 60}]


@pytest.mark.parametrize("immediate", NO_TRIAL)
def test_a_fixed_job_reservation_is_granted_then_held(immediate):
    # 4 processors, a pass every second, LXF-like weights (w = 0.02, x = 1), one fixed-job
    # reservation.  A (3 procs, 300 s) starts at 0; B (2 procs, 10 s) arrives at 5.  By
    # hand: 0 (A starts); 1 (empty queue, nothing held before or after: a fixed point,
    # quiet until B's arrival); 5 (B cannot start and is granted the reservation at 300:
    # the held set changed, no promise); 6 (B held again at 300, in the same place: a
    # fixed point, quiet until A's predicted end 300); 300 (A leaves, B starts, its
    # reservation dropped); 301 (nothing held before or after: quiet until B's end, 310,
    # which ends the run).  Ticking through: 0 .. 309.
    jobs = [job(1, 0, 3, 300), job(2, 5, 2, 10)]

    def policy():
        return Backfill(priority={"w": 0.02, "x": 1}, reservation_kind="fixed", **immediate)

    sim, at = run(one_host(4), jobs, policy(), 1.0)
    assert at == [0.0, 1.0, 5.0, 6.0, 300.0, 301.0]
    assert placed(sim) == [(1, "m", 0.0, 300.0), (2, "m", 300.0, 310.0)]
    assert sim.scheduler.skipped_ticks == 3 + 293 + 8  # 2-4, 7-299, 302-309
    every, at_every = ticking(one_host(4), jobs, policy(), 1.0)
    assert at_every == [float(t) for t in range(310)] and placed(every) == placed(sim)


@pytest.mark.parametrize(
    "params",
    [
        {"priority": NCSA, "reservations": 2, "reservation_kind": "fixed"},  # NCSA-MS*
        {"sliding": False},
        {"priority": NCSA, "reservations": 2, "reservation_kind": "fixed", "sliding": False},
        {"priority": NCSA, "reservations": 2, "reservation_kind": "fixed", **NO_TRIAL[1]},
    ],
)
def test_a_job_waiting_behind_a_billion_second_job(params):
    # the pair of benchmarks/scale_pathologies.py's ``waiting`` case: A (3 of 4 procs,
    # requests 2e9 s, runs 1e9 s) from 0, B (2 procs, 10 s) from 5, a pass every second.
    # By hand: 0 (A starts), 1 (quiet), 5 (B arrives: reserved at 2e9, a new reservation),
    # 6 (the same reservation: a fixed point, quiet until 2e9), 1e9 (A leaves: B starts),
    # 1e9 + 1 (quiet until B's end).  Skipped: 2-4, 7 .. 1e9 - 1, 1e9 + 2 .. 1e9 + 9.
    t = time.process_time()
    sim, at = run(one_host(4), [job(1, 0, 3, 2e9, 1e9), job(2, 5, 2, 20, 10)], Backfill(**params),
                  1.0)  # fmt: skip
    assert time.process_time() - t < 5
    assert at == [0.0, 1.0, 5.0, 6.0, 1e9, 1e9 + 1]
    assert placed(sim) == [(1, "m", 0.0, 1e9), (2, "m", 1e9, 1e9 + 10)]
    assert sim.scheduler.skipped_ticks == 3 + (1e9 - 7) + 8


@pytest.mark.parametrize("immediate", NO_TRIAL[:2])
def test_non_sliding_reservations_kept_and_handed_on(immediate):
    # SJF, one non-sliding (dynamic) reservation, 4 processors, a pass every second.
    # Y (2 procs, 1000 s) and X (2 procs, requests 100, runs 30) start at 0.  B (2 procs,
    # 100 s) arrives at 5, D (2 procs, 60 s) at 10.  By hand:
    #   5   B cannot start: reserved at 100 (X's predicted end)     new: no promise
    #   6   B kept at 100 (still in the future, still possible)     quiet until 10 (D)
    #   10  D (shorter) is now first: it takes the reservation at 100; B has none
    #   11  D kept at 100                                           quiet until 100
    #   30  X leaves early: D starts (30-90); B reserved at 90 (D's predicted end)
    #   31  B kept at 90                                            quiet until 90
    #   90  D leaves: B starts (90-190); 91 quiet; 190 B leaves: quiet until 1000 (Y ends)
    # Every quiet pass's bound is the earlier of the kept time and the first predicted
    # release, which coincide here (as they must in a fixed point: module docstring).
    jobs = [job(1, 0, 2, 1000), job(2, 0, 2, 100, 30), job(3, 5, 2, 100), job(4, 10, 2, 60)]
    expected = [(1, "m", 0.0, 1000.0), (2, "m", 0.0, 30.0), (3, "m", 90.0, 190.0),
                (4, "m", 30.0, 90.0)]  # fmt: skip
    sim, at = run(one_host(4), jobs, Backfill(priority="sjf", sliding=False, **immediate), 1.0)
    assert at == [0.0, 1.0, 5.0, 6.0, 10.0, 11.0, 30.0, 31.0, 90.0, 91.0, 190.0]
    assert placed(sim) == expected
    assert sim.scheduler.skipped_ticks == 1000 - 11
    every, _ = ticking(
        one_host(4), jobs, Backfill(priority="sjf", sliding=False, **immediate), 1.0
    )
    assert placed(every) == expected


def test_a_kept_time_before_the_first_release_bounds_the_skip():
    # The kept time binds only where a job is refused on the host picked by its free
    # resources (backfill_host = "fewest-free"): FCFS, two non-sliding reservations, a
    # pass every second.  x: 4 procs, 8 GB; y: 8 procs, 1 GB.  A (8 procs on y, requests
    # 100, runs 20) and X (2 procs on x, 150 s) start at 0.  B (4 procs, 4 GB: only x)
    # arrives at 1: reserved on x at 150.  J (2 procs, 146 s) arrives at 5: it fits now on
    # x alone and would delay B there; reserved on y at A's predicted end, 100.  A leaves
    # at 20: J now fits on both hosts, the fewest-free reading picks x, where it still
    # delays B, and J keeps y at 100 (y is empty: nothing ends there any more).  That pass
    # is a fixed point: quiet until 100, the kept time, before X's release at 150.  At
    # 100 the kept time is no longer in the future: J is reserved afresh at *now* on y,
    # a new time at every tick (no promise) until X leaves at 150, where B starts on x
    # and J on y.  By hand: 0, 1 (B: new), 2 (quiet until 5), 5 (J: new), 6 (quiet until
    # 100), 20 (A leaves: quiet until 100), 100 .. 150 every tick, 151 (quiet until J's
    # end), 296 (J ends: quiet until B's end, 650, the last event).
    two = MachineSpec("xy", (HostSpec("x", 4, 8 * KB_PER_GB), HostSpec("y", 8, KB_PER_GB)))
    jobs = [job(1, 0, 8, 100, 20), job(2, 0, 2, 150), job(3, 1, 4, 500, mem_gb=4),
            job(4, 5, 2, 146)]  # fmt: skip

    def policy():
        return Backfill(reservations=2, sliding=False, backfill_host="fewest-free")

    expected = [(1, "y", 0.0, 20.0), (2, "x", 0.0, 150.0), (3, "x", 150.0, 650.0),
                (4, "y", 150.0, 296.0)]  # fmt: skip
    sim, at = run(two, jobs, policy(), 1.0)
    assert at == [0.0, 1.0, 2.0, 5.0, 6.0, 20.0, *range(100, 152), 296.0]
    assert placed(sim) == expected
    every, at_every = ticking(two, jobs, policy(), 1.0)
    assert len(at_every) == 650 and placed(every) == expected


def test_the_early_exit_with_every_reservation_held_promises_until_something_happens():
    # One fixed-job reservation, 4 processors.  A (4 procs) requests 100 s and runs 1000;
    # B (2 procs, 10 s) arrives at 5 and is granted the reservation (at 100).  From 6 on
    # the machine is full and the one reservation is held: every pass returns at once,
    # whatever the time (Backfill._decides_nothing), so the promise is unbounded, even
    # past 100 where A's overrun makes its predicted release *now*.  Passes: 0, 1, 5, 6,
    # 1000 (A leaves: B starts), 1001 (quiet until B's end).
    jobs = [job(1, 0, 4, 100, 1000), job(2, 5, 2, 10)]

    def policy():
        return Backfill(priority={"w": 1}, reservation_kind="fixed")

    sim, at = run(one_host(4), jobs, policy(), 1.0)
    assert at == [0.0, 1.0, 5.0, 6.0, 1000.0, 1001.0]
    assert placed(sim) == [(1, "m", 0.0, 1000.0), (2, "m", 1000.0, 1010.0)]
    every, at_every = ticking(one_host(4), jobs, policy(), 1.0)
    assert len(at_every) == 1010 and placed(every) == placed(sim)


def test_held_holds_until():
    # by hand, on a hand-built held set: the earliest kept time, unless the pass moved
    # the set, was another pass, or a kept time is not in the future
    a, b = (Job(JobSpec(i, 0.0, 1, 0, 10.0, 10.0)) for i in (1, 2))
    held = {a: ("x", 500.0), b: ("y", 200.0)}
    assert held_holds_until(LastPass(100.0, early=False, moved=False), held, 100.0) == 200.0
    assert held_holds_until(LastPass(100.0, early=False, moved=False), {}, 100.0) == math.inf
    assert held_holds_until(LastPass(100.0, early=False, moved=True), held, 100.0) == 100.0
    assert held_holds_until(LastPass(99.0, early=False, moved=False), held, 100.0) == 100.0
    assert held_holds_until(LastPass(), {}, 100.0) == 100.0  # before any pass
    assert held_holds_until(LastPass(200.0, early=False, moved=False), held, 200.0) == 200.0
    assert held_holds_until(LastPass(250.0, early=False, moved=False), held, 250.0) == 250.0
    assert held_holds_until(LastPass(300.0, early=True, moved=False), held, 300.0) == math.inf


# -- the same schedule as ticking through ------------------------------------------------------
HELD = [
    ("ncsa-ms", {}),
    ("ncsa-ms", {"sliding": False}),
    ("ncsa-ms", {"reservations": 1, "backfill_host": "fewest-free"}),
    ("mhpcc-ms", {"sliding": False}),
    ("mhpcc-ms", {"reservation_kind": "fixed", "reservations": 3}),
    ("backfill", {"priority": "fcfs", "reservations": 2, "sliding": False}),
    ("backfill", {"priority": "fcfs", "reservations": "all", "sliding": False}),
    ("backfill", {"priority": "fcfs", "reservations": 2, "sliding": False, "backfill_host": "fewest-free"}),
    ("backfill", {"priority": NCSA, "reservations": 2, "sliding": False, "backfill_host": "fewest-free"}),
    ("backfill", {"priority": "sjf", "reservations": 1, "reservation_kind": "fixed"}),
    ("backfill", {"priority": NCSA, "reservations": 3, "reservation_kind": "fixed", "sliding": False}),
    ("backfill", {"priority": "lxf", "reservations": 2, "sliding": False, "release_ties": "together"}),
    # with immediate service: the held bound and the trials' bound together
    ("ncsa-ms", {"immediate_service": "preemptive", "quantum": 20, "eligible_after": 60}),
    ("mhpcc-ms", {"reservation_kind": "fixed", "reservations": 2, "immediate_service": "preemptive",
                  "quantum": 10, "eligible_after": 25}),
    ("backfill", {"priority": "sjf", "reservations": 2, "sliding": False, "immediate_service": "soon",
                  "quantum": 15}),
]  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=workloads(),
    choice=st.sampled_from(HELD),
    interval=st.sampled_from([1.0, 2.5, 7.0, 40.0, 3.3]),
)
def test_same_schedule_as_ticking_through(jobs, choice, interval):
    same_as_ticking_through(jobs, *choice, interval)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=overrunning(),
    choice=st.sampled_from(HELD),
    interval=st.sampled_from([1.0, 5.0]),
    down=outages(),
)
def test_same_schedule_as_ticking_through_with_overruns(jobs, choice, interval, down):
    same_as_ticking_through(jobs, *choice, interval, machine=TWIN, down=down)
