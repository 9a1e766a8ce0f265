"""Invariants of every backfill-family preset on random workloads (hypothesis).

For every preset and every reservation option (N, dynamic/fixed, sliding or
not, a scheduling interval, estimates shorter or longer than the runtime):

* no host ever holds more processors or memory than it has (from the
  allocation segments of the result);
* no job starts before it is submitted; every job appears exactly once and
  every job that fits some host runs, in one piece, for its actual runtime;
* the same seed gives the same schedule;
* a run ends (no endless chain of wake-ups) and explaining it does not change it;
* with exact estimates and one fixed-job reservation, a reserved job starts no
  later than the first time it was promised (backfilling never delays it).
"""

from __future__ import annotations

import pandas as pd
from conftest import BACKFILL_PRESETS, THREE_HOSTS, backfill_options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.engine.decisions import Reserve
from o2ksim.engine.monitor import Observer
from o2ksim.invariants import violations
from o2ksim.jobs import JobSpec

PRESETS = BACKFILL_PRESETS

MACHINE = THREE_HOSTS


@st.composite
def workloads(draw, max_jobs=40, exact=False):
    n = draw(st.integers(1, max_jobs))
    t = 0
    jobs = []
    for i in range(n):
        t += draw(st.integers(0, 60))
        procs = draw(st.sampled_from([1, 1, 2, 4, 8, 12, 16]))
        run = draw(st.integers(0, 500))
        req = run if exact else draw(st.sampled_from([run, run * 3, max(1, run // 2), run + 60]))
        mem = draw(st.sampled_from([0, 256, 1024, 3072, 6000])) * 1024
        jobs.append(JobSpec(i + 1, float(t), procs, mem, float(max(req, 1)), float(run)))
    return jobs


@st.composite
def options(draw):
    return backfill_options(
        reservations=draw(st.sampled_from([0, 1, 2, 3, "all"])),
        reservation_kind=draw(st.sampled_from(["dynamic", "fixed"])),
        sliding=draw(st.booleans()),
    )


INTERVALS = st.sampled_from([None, None, 45])


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(SETTINGS, max_examples=20)


def fits_somewhere(job):
    return any(job.procs <= h.procs and job.mem <= h.memory for h in MACHINE.hosts)


@SETTINGS
@given(jobs=workloads(), preset=st.sampled_from(PRESETS), opts=options(), interval=INTERVALS)
def test_every_preset_keeps_the_invariants(jobs, preset, opts, interval):
    limit = PassLimit(10_000)  # a run that loops on wake-ups fails instead of hanging
    r = simulate(
        jobs,
        machine=MACHINE,
        policy=preset,
        policy_params=opts,
        interval=interval,
        seed=3,
        observers=[limit],
    )
    assert violations(r.jobs, r.segments, MACHINE, [j.job_id for j in jobs]) == []
    t = r.jobs.set_index("job_id")
    assert t.index.is_unique and len(t) == len(jobs)
    for j in jobs:
        row = t.loc[j.job_id]
        if fits_somewhere(j):
            assert row["status"] == "completed", (j, row["status"])
            assert row["start"] >= j.submit
            assert row["end"] - row["start"] == j.run_time
        else:
            assert row["status"] == "rejected"
    # non-preemptive: one allocation segment per job that ran
    seg = r.segments.groupby("job_id").size()
    assert (seg == 1).all()
    # the same seed gives the same schedule
    again = simulate(
        jobs, machine=MACHINE, policy=preset, policy_params=opts, interval=interval, seed=3
    )
    pd.testing.assert_frame_equal(r.jobs, again.jobs)


@FEWER
@given(jobs=workloads(), preset=st.sampled_from(PRESETS), grace=st.sampled_from([0, 30]))
def test_kill_overrun_option_keeps_the_invariants(jobs, preset, grace):
    r = simulate(jobs, machine=MACHINE, policy=preset, kill_overrun=True, overrun_grace=grace)
    assert violations(r.jobs, r.segments, MACHINE, [j.job_id for j in jobs]) == []
    t = r.jobs.set_index("job_id")
    for j in jobs:
        if not fits_somewhere(j):
            continue
        row = t.loc[j.job_id]
        limit = j.req_time + grace
        if j.run_time > limit:
            assert row["status"] == "killed" and row["end"] - row["start"] == limit
        else:
            assert row["status"] == "completed" and row["end"] - row["start"] == j.run_time


class PassLimit(Observer):
    """Stops a run after ``limit`` scheduling passes."""

    def __init__(self, limit: int) -> None:
        self.limit, self.passes = limit, 0

    def on_pass(self, now, n_decisions):
        self.passes += 1
        if self.passes > self.limit:
            raise RuntimeError(f"more than {self.limit} passes, at t={now!r}")


class Promises(Observer):
    """The first reservation time each job was given (needs ``explain=True``)."""

    def __init__(self) -> None:
        self.first: dict[int, float] = {}

    def on_decision(self, now, decision):
        if isinstance(decision, Reserve):
            self.first.setdefault(decision.job.id, decision.at)


@FEWER
@given(
    jobs=workloads(exact=True),
    preset=st.sampled_from(PRESETS),
    sliding=st.booleans(),
)
def test_a_fixed_reservation_is_never_delayed_with_exact_estimates(jobs, preset, sliding):
    promises = Promises()
    params = {"reservations": 1, "reservation_kind": "fixed", "sliding": sliding}
    r = simulate(
        jobs,
        machine=MACHINE,
        policy=preset,
        policy_params=params,
        explain=True,
        observers=[promises],
    )
    start = dict(zip(r.jobs["job_id"], r.jobs["start"], strict=True))
    for job_id, at in promises.first.items():
        assert start[job_id] <= at, (job_id, start[job_id], at)


@FEWER
@given(jobs=workloads(), preset=st.sampled_from(PRESETS), opts=options())
def test_explaining_a_run_does_not_change_it(jobs, preset, opts):
    # explain=True takes the full pass even when nothing can start (no shortcut)
    plain = simulate(jobs, machine=MACHINE, policy=preset, policy_params=opts)
    explained = simulate(jobs, machine=MACHINE, policy=preset, policy_params=opts, explain=True)
    pd.testing.assert_frame_equal(plain.jobs, explained.jobs)
