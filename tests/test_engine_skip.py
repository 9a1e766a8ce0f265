"""Passes that cannot start anything, and the engine's incremental bookkeeping behind them.

A policy may promise (``idle_when_nothing_fits``, :mod:`o2ksim.engine.contract`)
that a pass where no waiting job fits any host decides nothing; the engine
then skips such passes.  The expected pass counts below are worked out by
hand; the equivalence checks compare a run with skipping against the same
policy with the promise withdrawn (every pass run), as the fast-path tests
compare the fast and the reference pass.
"""

from __future__ import annotations

import math

import numpy as np
from conftest import job, one_host
from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim.engine.core import Simulation
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.releases import INCREMENTAL_FROM, ReleaseIndex
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies import make_policy
from o2ksim.policies.backfill import FCFS


class RecordingFCFS(FCFS):
    """Strict FCFS that records what each pass it gets is shown; ``opt_in`` sets its promise."""

    def __init__(self, opt_in: bool) -> None:
        super().__init__()
        self.opt_in = opt_in
        self.seen: list[tuple[float, list[int], list[int]]] = []

    def idle_when_nothing_fits(self) -> bool:
        return self.opt_in

    def schedule(self, snap):
        self.seen.append(
            (snap.now, [j.id for j in snap.arrived], [j.id for j in snap.departed])
        )
        return super().schedule(snap)


# A (4 procs, 100 s) fills the 4-processor host at 0; B and C (2 procs each) arrive
# at 10 and 20 while it runs, so nothing can start until A leaves at 100, when both do.
BUSY = [job(1, 0, 4, 100), job(2, 10, 2, 50), job(3, 20, 2, 30)]


def test_a_policy_that_does_not_opt_in_gets_every_pass():
    pol = RecordingFCFS(opt_in=False)
    sim = Simulation(one_host(4), BUSY, pol)
    stats = sim.run()
    # a pass at every arrival (0, 10, 20) and departure (100, 130); the run stops
    # when the last job ends, at 150, before that instant's pass
    assert [t for t, _, _ in pol.seen] == [0.0, 10.0, 20.0, 100.0, 130.0]
    assert stats.passes == 5 and stats.skipped_passes == 0


def test_passes_where_nothing_fits_are_skipped_and_their_news_carried_to_the_next_pass():
    pol = RecordingFCFS(opt_in=True)
    sim = Simulation(one_host(4), BUSY, pol)
    stats = sim.run()
    # at 10 and 20 no processor is free; at 130 and 150 the queue is empty (the request
    # at 150 is dropped at once, before the run stops)
    assert pol.seen == [(0.0, [1], []), (100.0, [2, 3], [1])]
    assert stats.passes == 2 and stats.skipped_passes == 4
    assert {j.id: j.first_start for j in sim.jobs.values()} == {1: 0.0, 2: 100.0, 3: 100.0}


def test_memory_alone_can_make_a_pass_idle():
    # two hosts; A takes all of x's memory (x keeps 2 free procs), B (1 proc, 2 GB)
    # waits: x has processors but no memory, y has memory but too few processors
    machine = MachineSpec(
        "two", (HostSpec("x", 4, 4 * KB_PER_GB), HostSpec("y", 1, 8 * KB_PER_GB))
    )
    jobs = [job(1, 0, 2, 100, mem_gb=4), job(2, 0, 1, 100, mem_gb=9), job(3, 5, 2, 10, mem_gb=2)]
    # job 2 asks 9 GB: no host has it, rejected on arrival; job 3 fits x by processors
    # but not by memory, and y by memory but not by processors, until A leaves at 100
    pol = RecordingFCFS(opt_in=True)
    sim = Simulation(machine, jobs, pol)
    stats = sim.run()
    assert [t for t, _, _ in pol.seen] == [0.0, 100.0]  # then job 3 runs 100-110 on x
    assert stats.skipped_passes == 2  # at 5 (no host has both) and at 110 (empty queue)
    assert sim.jobs[2].state is JobState.REJECTED and sim.jobs[3].host == "x"


def test_explain_runs_get_every_pass():
    pol = RecordingFCFS(opt_in=True)
    stats = Simulation(one_host(4), BUSY, pol, explain=True).run()
    assert stats.passes == 5 and stats.skipped_passes == 0


def test_with_an_interval_idle_ticks_are_skipped_too():
    pol = RecordingFCFS(opt_in=True)
    stats = Simulation(one_host(4), BUSY, pol, interval=40.0).run()
    # ticks at 0, 40, 80, 120, 160: at 40 and 80 nothing fits (A holds the host until
    # 100), at 120 B and C start, at 160 the queue is empty; B ends at 170, the last
    assert pol.seen == [(0.0, [1], []), (120.0, [2, 3], [1])]
    assert stats.passes == 2 and stats.skipped_passes == 3


def test_backfill_promises_only_when_it_keeps_nothing_between_passes():
    assert make_policy("fcfs-backfill").idle_when_nothing_fits()
    assert make_policy("lxfw-backfill").idle_when_nothing_fits()
    assert make_policy("fcfs").idle_when_nothing_fits()
    assert not make_policy("fcfs-backfill", reservation_kind="fixed").idle_when_nothing_fits()
    assert not make_policy("fcfs-backfill", sliding=False).idle_when_nothing_fits()
    assert make_policy("fcfs-backfill", immediate_service="preemptive").idle_when_nothing_fits()


# --------------------------------------------------------------------- same schedules
def _workload(draw_jobs):
    return [
        JobSpec(i + 1, float(submit), procs, round(mem * KB_PER_GB), float(req), float(run))
        for i, (submit, procs, mem, req, run) in enumerate(draw_jobs)
    ]


JOBS = st.lists(
    st.tuples(
        st.integers(0, 200),  # submit
        st.integers(1, 8),  # procs
        st.sampled_from([0, 0.5, 1, 3]),  # GB
        st.integers(1, 60),  # requested runtime
        st.integers(0, 60),  # actual runtime (may exceed the request)
    ),
    min_size=1,
    max_size=40,
)
TWO_HOSTS = MachineSpec("two", (HostSpec("a", 8, 4 * KB_PER_GB), HostSpec("b", 4, 2 * KB_PER_GB)))


class NoPromise:
    """The same policy with its promise withdrawn: the engine runs every pass."""

    def __init__(self, policy) -> None:
        self._policy = policy
        self.name = policy.name

    def __getattr__(self, name):
        return getattr(self._policy, name)

    def idle_when_nothing_fits(self) -> bool:
        return False


@settings(max_examples=60, deadline=None)
@given(JOBS, st.sampled_from(["fcfs", "fcfs-backfill", "lxfw-backfill", "sjf-backfill"]))
def test_skipping_idle_passes_changes_no_schedule(draw_jobs, name):
    jobs = _workload(draw_jobs)
    ends = []
    for pol in (make_policy(name), NoPromise(make_policy(name))):
        sim = Simulation(TWO_HOSTS, jobs, pol)
        sim.run()
        ends.append(
            {j.id: (j.state, j.host, j.first_start, j.end) for j in sim.jobs.values()}
        )
    assert ends[0] == ends[1]


# --------------------------------------------------------------------- bookkeeping
def _job(job_id: int, procs: int, mem: int) -> Job:
    return Job(JobSpec(job_id, 0.0, procs, mem, 1.0, 1.0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 4), st.booleans()), max_size=60))
def test_queue_index_keeps_the_smallest_request(ops):
    jobs = [_job(i, p, m) for i, (p, m, _) in enumerate(ops)]
    index = QueueIndex(jobs)
    waiting: dict[int, Job] = {}
    for k, (_p, _m, leave) in enumerate(ops):
        index.add(jobs[k])
        waiting[k] = jobs[k]
        if leave and waiting:  # the oldest waiting job leaves
            first = min(waiting)
            index.remove(waiting.pop(first))
        want = (
            (min(j.spec.procs for j in waiting.values()), min(j.spec.mem for j in waiting.values()))
            if waiting
            else (math.inf, math.inf)
        )
        assert index.smallest_request() == want


def _running(job_id: int, start: float, req: float, procs: int, mem: int) -> Job:
    j = Job(JobSpec(job_id, 0.0, procs, mem, req, req))
    j.state, j.host, j.alloc_procs, j.alloc_mem = JobState.RUNNING, "h", procs, mem
    j.first_start = j.last_start = j.segment_start = start
    return j


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(1, 20), st.integers(1, 3), st.sampled_from([0, 1])),
        min_size=1,
        max_size=3 * INCREMENTAL_FROM,
    ),
    st.randoms(use_true_random=False),
)
def test_release_index_is_sorted_through_lazy_and_in_place_updates(rows, rnd):
    # grow past the in-place threshold and shrink below it again, reading at random points
    index = ReleaseIndex()
    live: dict[int, tuple[float, float, float]] = {}
    jobs = {}
    ops = [("add", i) for i in range(len(rows))] + [("remove", i) for i in range(len(rows))]
    adds = [o for o in ops if o[0] == "add"]
    removes = [o for o in ops if o[0] == "remove"]
    rnd.shuffle(removes)
    for kind, i in adds + removes:
        start, req, procs, mem = rows[i]
        if kind == "add":
            jobs[i] = _running(i, float(start), float(req), procs, mem)
            index.add(jobs[i])
            live[i] = (float(start + req), float(procs), float(mem))
        else:
            index.remove(jobs[i])
            del live[i]
        if rnd.random() < 0.3:
            t, p, m = index.arrays()
            want = sorted(live.values())
            assert list(zip(t.tolist(), p.tolist(), m.tolist(), strict=True)) == want
        assert len(index) == len(live)
    assert all(len(a) == 0 for a in index.arrays())
    np.testing.assert_array_equal(index.arrays()[0], np.empty(0))
