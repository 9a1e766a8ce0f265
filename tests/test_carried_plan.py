"""Conservative backfilling carried from pass to pass gives the fresh pass's schedule.

``--reservations all`` under FCFS keeps the last pass's plan and profiles
(:mod:`o2ksim.policies.carried_plan`) and decides a pass from them while its
conditions hold, else runs the fresh full pass.  On random workloads (one and
three hosts, memory, exact and inexact estimates so that jobs end early and
overrun, ``--interval``) the schedule must be the one of the fresh pass (the
carried plan switched off) and of the job-by-job reference pass
(``tests/oracles/backfill_reference.py``); a deep queue on one host must take
the carried path in almost every pass; and a hand-worked case shows an early end
forcing the fresh pass.
"""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest
from conftest import bursty_jobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.backfill_reference import ReferenceBackfill

from o2ksim import simulate
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies import carried_plan, plan_repair
from o2ksim.policies.backfill import Backfill, free_resources
from o2ksim.policies.backfill_pass import BackfillPass
from o2ksim.policies.backfill_scan import run_pass
from o2ksim.policies.profile import Profile

THREE = MachineSpec(
    "three",
    (
        HostSpec("a", 16, 8 * KB_PER_GB),
        HostSpec("b", 16, 4 * KB_PER_GB),
        HostSpec("c", 8, 8 * KB_PER_GB),
    ),
)
ONE = MachineSpec("one", (HostSpec("h", 16, 8 * KB_PER_GB),))
COLUMNS = ["job_id", "start", "end", "host", "status"]
UNPATCHED_CARRY = carried_plan.CarriedPlan.carry


def run(jobs, machine, carried, monkeypatch, ties="smallest-first", **kw):
    """The schedule of ``--reservations all`` (FCFS), with the carried plan on or off;
    returns it and the policy's pass counts.  ``ties``: the release tie rule, by default
    the one whose deferrals the plan must repair (``together`` repairs nothing)."""
    monkeypatch.setattr(carried_plan, "ENABLED", carried)
    monkeypatch.setattr(carried_plan, "MIN_QUEUE", 0)  # small examples take the carried path
    policy = Backfill(reservations="all", release_ties=ties)
    r = simulate(jobs, machine=machine, policy=policy, **kw)
    counts = policy.carried.counts if policy.carried is not None else None
    return r.jobs[COLUMNS], counts


@st.composite
def workloads(draw):
    jobs = bursty_jobs(draw, st, 70, [0, 512, 1024, 3072, 6000])
    if draw(st.booleans()):  # exact estimates: no job ends before its requested runtime
        jobs = [
            JobSpec(j.job_id, j.submit, j.procs, j.mem, max(j.run_time, 1.0), j.run_time)
            for j in jobs
        ]
    return jobs


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    jobs=workloads(),
    machine=st.sampled_from([ONE, THREE]),
    interval=st.sampled_from([None, None, 40.0]),
    ties=st.sampled_from(["smallest-first", "together"]),
)
def test_carried_plan_gives_the_fresh_schedule(jobs, machine, interval, ties, monkeypatch):
    carried, counts = run(jobs, machine, True, monkeypatch, ties, interval=interval)
    fresh, off = run(jobs, machine, False, monkeypatch, ties, interval=interval)
    assert off is None  # switched off: no plan carried
    assert counts is not None
    pd.testing.assert_frame_equal(carried, fresh)
    reference = simulate(
        jobs,
        machine=machine,
        policy=ReferenceBackfill(reservations="all", release_ties=ties),
        interval=interval,
    ).jobs[COLUMNS]
    pd.testing.assert_frame_equal(carried, reference)


def fresh_pass_of(p):
    """The fresh pass on ``p``'s snapshot: its starts and every reservation (placed even
    where the lazy pass did not need them), as (job, host) and (job, host, time)."""
    fresh = BackfillPass(p.policy, p.snap, free_resources(p.snap))
    fresh.plan = []
    run_pass(fresh, p.policy.order(p.snap))
    if fresh.profiles is None:
        fresh.build_profiles()
        fresh.place(fresh.pending)
    starts = [(d.job.id, d.host) for d in fresh.decisions]
    return starts, [(r.job.id, r.host, r.at) for r in fresh.plan]


def check_every_carried_pass(monkeypatch):
    """Make every carried pass assert that it starts the fresh pass's jobs and keeps the
    fresh pass's plan (host and time to the last bit).  Wraps the original ``carry``, not
    the attribute, since hypothesis shares the fixture across examples."""
    carry = UNPATCHED_CARRY

    def checked_carry(self, p):
        if not carry(self, p):
            return False
        starts, plan = fresh_pass_of(p)
        assert [(d.job.id, d.host) for d in p.decisions] == starts
        kept = [e.placed for e in self.order[self.head :] if e.alive]
        assert [(r.job.id, r.host, r.at) for r in kept] == plan
        return True

    monkeypatch.setattr(carried_plan.CarriedPlan, "carry", checked_carry)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    jobs=workloads(),
    machine=st.sampled_from([ONE, THREE]),
    ties=st.sampled_from(["smallest-first", "together"]),
)
def test_every_carried_pass_holds_the_fresh_pass_plan(jobs, machine, ties, monkeypatch):
    """Pass by pass, not only in the end: each carried pass starts the jobs the fresh pass
    starts and leaves every waiting job with the fresh pass's reservation (host and
    time to the last bit: the tie rule's deferrals included)."""
    check_every_carried_pass(monkeypatch)
    run(jobs, machine, True, monkeypatch, ties)


def deep_queue(n):
    """The benchmark's shape: one job holds the host while ``n`` jobs queue behind it
    (exact estimates), then the queue drains one departure at a time."""
    jobs = [JobSpec(1, 0.0, 16, 0, 10_000.0, 10_000.0)]
    for i in range(n):
        run_time = float(100 + (37 * i) % 900)
        jobs.append(JobSpec(i + 2, float(i + 1), 1 + (7 * i) % 16, 0, run_time, run_time))
    return jobs


def test_a_deep_queue_takes_the_carried_path(monkeypatch):
    jobs = deep_queue(300)
    carried, counts = run(jobs, ONE, True, monkeypatch)
    fresh, _ = run(jobs, ONE, False, monkeypatch)
    pd.testing.assert_frame_equal(carried, fresh)
    assert counts is not None
    # every departure pass but the first is carried (nothing ends early); the first
    # pass with a queue of two or more is fresh
    assert counts["carried"] >= 250
    assert counts["fresh"] <= 3


def test_only_fcfs_conservative_backfilling_carries(monkeypatch):
    monkeypatch.setattr(carried_plan, "ENABLED", True)
    assert Backfill(reservations="all").carried is not None
    assert Backfill(reservations=2).carried is None
    assert Backfill(reservations="all", priority="lxf").carried is None
    assert Backfill(reservations="all", sliding=False).carried is None
    assert Backfill(reservations="all", reservation_kind="fixed").carried is None


def test_an_early_end_forces_the_fresh_pass(monkeypatch):
    """By hand, one 10-processor host (job: submit, processors, requested, actual runtime):

    J1 0 6p 100/50 (ends early) and J2 0 3p 100/100 start at 0 in a fresh pass (1
    processor free).  J3 1 7p 10 waits (nothing fits: no pass).  At 2, J4 1p 5 arrives:
    the carried pass reserves J3 at 100 (J1 and J2 predicted to end then) and backfills
    J4 (2-7).  At 7, J4 ends as predicted: the carried pass backfills J5 (arrived at 3,
    1p 20) over 7-27.  At 27 the same for J6 (8, 1p 10) over 27-37.  J7 (30, 4p 10)
    waits.  At 50, J1 ends 50 s before its predicted end: the hosts are not as
    predicted, the pass is fresh, and J3 (7 processors free) starts at 50, not at its
    carried reservation 100.  J7 starts when J3 ends, at 60.  Passes that run: fresh at
    0 and 50, carried at 2, 7 and 27.
    """
    machine = MachineSpec("ten", (HostSpec("h", 10, 8 * KB_PER_GB),))
    spec = [  # id, submit, procs, requested, actual
        (1, 0, 6, 100, 50), (2, 0, 3, 100, 100), (3, 1, 7, 10, 10), (4, 2, 1, 5, 5),
        (5, 3, 1, 20, 20), (6, 8, 1, 10, 10), (7, 30, 4, 10, 10),
    ]  # fmt: skip
    jobs = [JobSpec(i, float(s), p, 0, float(q), float(a)) for i, s, p, q, a in spec]
    schedule, counts = run(jobs, machine, True, monkeypatch)
    got = {int(r.job_id): (r.start, r.end) for r in schedule.itertuples()}
    assert got == {
        1: (0, 50), 2: (0, 100), 3: (50, 60), 4: (2, 7), 5: (7, 27), 6: (27, 37), 7: (60, 70),
    }  # fmt: skip
    assert counts == {"carried": 3, "fresh": 2, "repaired": 0}


@pytest.mark.parametrize("interval", [None, 40.0])
def test_interval_runs_are_fresh_where_reservations_fall_between_passes(monkeypatch, interval):
    jobs = deep_queue(60)
    carried, _ = run(jobs, ONE, True, monkeypatch, interval=interval)
    fresh, _ = run(jobs, ONE, False, monkeypatch, interval=interval)
    pd.testing.assert_frame_equal(carried, fresh)


def tie_workload(seed):
    """Sixty jobs on integer times with requested runtimes of 5 to 40 s (one in five ends
    early): same-time releases, so the tie rule's deferrals change between passes."""
    rnd = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(60):
        t += rnd.choice([0, 0, 1, 5, 20])
        req = float(rnd.choice([5, 10, 20, 40]))
        act = req if rnd.random() < 0.8 else float(rnd.randint(1, int(req)))
        jobs.append(JobSpec(i + 1, t, rnd.randint(1, 8), rnd.choice([0, 512, 1024]), req, act))
    return jobs


def watch_repairs(monkeypatch):
    """Count what the repairs did: reservations moved, deferrals changed, and reservations
    re-decided and kept (their windows met a changed instant, or they could have fitted
    one the change freed)."""
    seen = {"moved": 0, "spare": 0, "kept": 0}
    apply, decide = plan_repair.PlanRepair._apply, plan_repair.PlanRepair._decide

    def counted_apply(self, e, new):
        seen["moved" if new.at != e.placed.at else "spare"] += 1
        apply(self, e, new)

    def counted_decide(self, e):
        old = e.placed
        decide(self, e)
        if (e.placed.at, e.placed.spare) == (old.at, old.spare):
            seen["kept"] += 1

    monkeypatch.setattr(plan_repair.PlanRepair, "_apply", counted_apply)
    monkeypatch.setattr(plan_repair.PlanRepair, "_decide", counted_decide)
    return seen


@pytest.mark.parametrize("seed", [2, 9, 13, 31])
def test_a_changed_deferral_is_repaired_locally(monkeypatch, seed):
    """Condition 5 fails in some passes (a job started since ends where a reservation
    deferred releases, or a reservation due now had deferred some): the pass re-decides
    only the reservations the changed instants reach (``repaired``).  On these workloads
    some of those reservations must move (a later one whose window covers the changed
    instant no longer fits there, or fits earlier) and others must stay: each repaired
    pass must hold the fresh pass's starts and plan to the last bit, and the schedule
    the fresh one's and the reference's."""
    carry = UNPATCHED_CARRY
    checked: list[int] = []

    def checked_carry(self, p):
        repaired = self.counts["repaired"]
        if not carry(self, p):
            return False
        if self.counts["repaired"] > repaired:
            starts, plan = fresh_pass_of(p)
            assert [(d.job.id, d.host) for d in p.decisions] == starts
            kept = [e.placed for e in self.order[self.head :] if e.alive]
            assert [(r.job.id, r.host, r.at) for r in kept] == plan
            checked.append(p.now)
        return True

    monkeypatch.setattr(carried_plan.CarriedPlan, "carry", checked_carry)
    seen = watch_repairs(monkeypatch)
    jobs = tie_workload(seed)
    carried, counts = run(jobs, ONE, True, monkeypatch)
    assert counts is not None and counts["repaired"] == len(checked) >= 1
    assert seen["moved"] >= 1 and seen["kept"] >= 1
    fresh, _ = run(jobs, ONE, False, monkeypatch)
    pd.testing.assert_frame_equal(carried, fresh)
    reference = ReferenceBackfill(reservations="all", release_ties="smallest-first")
    pd.testing.assert_frame_equal(
        carried, simulate(jobs, machine=ONE, policy=reference).jobs[COLUMNS]
    )


@st.composite
def tie_workloads(draw):
    """Jobs on integer times with few requested runtimes (some ending early): same-time
    releases, so the tie rule's deferrals change between passes and repairs run."""
    n = draw(st.integers(20, 70))
    jobs, t = [], 0.0
    for i in range(n):
        t += draw(st.sampled_from([0, 0, 1, 5, 20]))
        req = float(draw(st.sampled_from([5, 10, 20, 40])))
        act = req if draw(st.integers(0, 4)) else float(draw(st.integers(1, int(req))))
        procs = draw(st.integers(1, 8))
        jobs.append(JobSpec(i + 1, t, procs, draw(st.sampled_from([0, 512, 1024])), req, act))
    return jobs


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(jobs=tie_workloads(), machine=st.sampled_from([ONE, THREE]))
def test_every_repaired_pass_holds_the_fresh_pass_plan(jobs, machine, monkeypatch):
    """Every carried pass, repaired ones included, starts the fresh pass's jobs and keeps
    its plan to the last bit (that repairs do run on such workloads, moving and keeping
    reservations, is asserted on fixed ones above)."""
    check_every_carried_pass(monkeypatch)
    carried, _ = run(jobs, machine, True, monkeypatch)
    fresh, _ = run(jobs, machine, False, monkeypatch)
    pd.testing.assert_frame_equal(carried, fresh)


def test_a_job_requesting_no_time_is_placed_again(monkeypatch):
    """J7 (8 of 16 processors, requested 0 s) is reserved at 1 at time 0; J17 (1p, 3 s)
    is backfilled over 0-3, which the empty reservation does not stop.  The next pass
    (still at 0, after the zero-length jobs ended) has 7 processors free at 1, so the
    fresh pass reserves J7 at 3: a reservation of no length is not carried (found by
    hypothesis; every carried pass must hold the fresh pass's plan)."""
    check_every_carried_pass(monkeypatch)
    spec = [(3, 8, 3, 1), (4, 1, 1, 1), (5, 1, 1, 1), (6, 2, 1, 1), (7, 8, 0, 0), (17, 1, 3, 1)]
    spec += [(i, 1, 0, 0) for i in (1, 2, *range(8, 17), 18)]
    jobs = [JobSpec(i, 0.0, p, 0, float(q), float(a)) for i, p, q, a in sorted(spec)]
    run(jobs, ONE, True, monkeypatch)


def test_resources_given_back_reopen_the_searches_the_memos_closed():
    """By hand, one host: 4 processors free now (t = 0) and 6 more at 10.  A job holds 4
    over [0, 20): 0 free on [0, 10), 6 on [10, 20), 10 from 20.  Searches for 6 and for 8
    processors over 5 s answer 10 and 20 (and remember it).  The job's 4 processors
    come back (a repair moved it): 4 free on [0, 10), 10 from 10, so 8 processors over
    5 s now start at 10, not at the remembered 20, and 4 over 30 s at 0."""
    prof = Profile(0.0, 4, 100.0, [(10.0, 6, 0.0)])
    prof.take(0.0, 4, 0.0, 20.0)
    assert prof.earliest(6, 0.0, 5.0) == 10.0
    assert prof.earliest(8, 0.0, 5.0) == 20.0
    assert prof.earliest(4, 0.0, 30.0) == 10.0
    prof.give_back(0.0, 4, 0.0, 20.0)
    assert prof.earliest(8, 0.0, 5.0) == 10.0
    assert prof.earliest(4, 0.0, 30.0) == 0.0
    assert prof.earliest(6, 0.0, 5.0) == 10.0
    assert prof.earliest(11, 0.0, 1.0) == math.inf


def cascade_workload(seed=2, n=300):
    """A 16-processor job holding the host for 1,000 s while ``n`` jobs (1-16 processors,
    exact runtimes of 5-60 s) arrive one a second: a deep plan on integer times, where
    one changed deferral moves a reservation later and the next ones no longer fit
    where it took (seed 2: a cascade of 100 changes, 99 of them moves later)."""
    rnd = random.Random(seed)
    jobs = [JobSpec(1, 0.0, 16, 0, 1000.0, 1000.0)]
    for i in range(n):
        req = float(rnd.randint(5, 60))
        jobs.append(JobSpec(i + 2, float(i + 1), rnd.randint(1, 16), 0, req, req))
    return jobs


def test_a_cascade_longer_than_the_cap_is_repaired_exactly(monkeypatch):
    """With the cap on changes lifted, a cascade of more than the default
    ``CHANGES_MAX`` (64) changes is repaired, not declined, and the repaired pass holds
    the fresh pass's starts and plan to the last bit; with the default cap the same pass
    is fresh instead."""
    jobs = cascade_workload()
    default_cap = plan_repair.CHANGES_MAX
    _, capped = run(jobs, ONE, True, monkeypatch)
    changes: list[int] = []
    repair_run = plan_repair.PlanRepair.run

    def counted_run(self, touched, gains):
        out = repair_run(self, touched, gains)
        changes.append(self.changed)
        return out

    monkeypatch.setattr(plan_repair.PlanRepair, "run", counted_run)
    monkeypatch.setattr(plan_repair, "CHANGES_MAX", 10**6)
    check_every_carried_pass(monkeypatch)
    carried, counts = run(jobs, ONE, True, monkeypatch)
    assert counts is not None and capped is not None
    assert max(changes) > default_cap
    assert counts["repaired"] == capped["repaired"] + 1
    assert counts["fresh"] == capped["fresh"] - 1
    fresh, _ = run(jobs, ONE, False, monkeypatch)
    pd.testing.assert_frame_equal(carried, fresh)
