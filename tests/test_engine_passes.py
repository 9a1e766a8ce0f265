"""When passes happen: one at every instant where something happened, none elsewhere.

The engine runs a pass at every instant where a job arrived, a job ended, a
policy timer came due or the fixed interval ticked (module docstring of
:mod:`o2ksim.engine.scheduler`); it never skips one on a policy's word.  The
expected passes below are worked out by hand.  At the end: the engine's
incremental bookkeeping (the queue index and the release index) against
plain recomputation.
"""

from __future__ import annotations

import math

import numpy as np
from conftest import job, one_host
from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim.engine.core import Simulation
from o2ksim.engine.decisions import WakeAt
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.releases import INCREMENTAL_FROM, ReleaseIndex
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.policies.backfill import FCFS


class RecordingFCFS(FCFS):
    """Strict FCFS that records what each pass it gets is shown."""

    def __init__(self, wake_at: tuple[float, ...] = ()) -> None:
        super().__init__()
        self.seen: list[tuple[float, list[int], list[int]]] = []
        self.wake_at = wake_at

    def schedule(self, snap):
        self.seen.append((snap.now, [j.id for j in snap.arrived], [j.id for j in snap.departed]))
        timers = [WakeAt(t, tag="test") for t in self.wake_at] if snap.now == 0 else []
        return [*timers, *super().schedule(snap)]


# A (4 procs, 100 s) fills the 4-processor host at 0; B and C (2 procs each) arrive
# at 10 and 20 while it runs, so nothing can start until A leaves at 100, when both do.
BUSY = [job(1, 0, 4, 100), job(2, 10, 2, 50), job(3, 20, 2, 30)]


def test_a_pass_at_every_arrival_and_departure_even_when_nothing_fits():
    pol = RecordingFCFS()
    sim = Simulation(one_host(4), BUSY, pol)
    stats = sim.run()
    # arrivals at 0, 10, 20 (at 10 and 20 nothing fits: the pass runs anyway),
    # departures at 100 (A) and 130 (C); the run stops when the last job (B) ends,
    # at 150, before that instant's pass
    assert pol.seen == [
        (0.0, [1], []), (10.0, [2], []), (20.0, [3], []), (100.0, [], [1]), (130.0, [], [3]),
    ]  # fmt: skip
    assert stats.passes == 5
    assert {j.id: j.first_start for j in sim.jobs.values()} == {1: 0.0, 2: 100.0, 3: 100.0}


def test_explain_runs_get_the_same_passes():
    pol = RecordingFCFS()
    stats = Simulation(one_host(4), BUSY, pol, explain=True).run()
    assert stats.passes == 5


def test_with_an_interval_every_tick_is_a_pass_and_only_ticks_are():
    pol = RecordingFCFS()
    stats = Simulation(one_host(4), BUSY, pol, interval=40.0).run()
    # ticks at 0, 40, 80, 120, 160: A starts at 0; B and C (queued by 40) start at
    # 120, after A left at 100; C leaves at 150, B at 170, the last, before the tick at 200
    assert pol.seen == [
        (0.0, [1], []), (40.0, [2, 3], []), (80.0, [], []), (120.0, [], [1]), (160.0, [], [3]),
    ]  # fmt: skip
    assert stats.passes == 5


def test_a_timer_is_a_pass_of_its_own_and_one_pass_with_an_arrival_at_its_instant():
    # timers at 5 (nothing else happens then) and at 10 (B arrives then): one pass each
    pol = RecordingFCFS(wake_at=(5.0, 10.0))
    stats = Simulation(one_host(4), BUSY, pol).run()
    assert [t for t, _, _ in pol.seen] == [0.0, 5.0, 10.0, 20.0, 100.0, 130.0]
    assert stats.passes == 6


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
        st.tuples(
            st.integers(0, 20), st.integers(1, 20), st.integers(1, 3), st.sampled_from([0, 1])
        ),
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
