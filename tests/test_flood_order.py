"""Queue orders kept as indexes (issue 27, same-instant floods) against the full ranking.

The oracle is ``Priority.order(queue, now)`` without the engine's index: the
stable sort of the negated scores of the whole queue (T Table 13), what every
pass did before.  Checked here:

* static priorities (SJF, weights without ``w`` and ``x``): the
  :class:`~o2ksim.policies.order_scan.IndexedOrder` read from
  ``QueueIndex.ordered``, along random sequences of arrivals and departures
  after the ordered index was made (so the engine's index must keep it up to date);
* weights on the wait and the expansion factor (LXF-like), with or without
  weights on ``p``, ``m`` and ``pe``: the
  :class:`~o2ksim.policies.order_scan.MergedOrder` of a queue of a few runs
  (submission instant, and base or slope), equal requested runtimes (ties),
  negative weights and waits of zero (every score equal: the rounding check
  must refuse) included;
* whole schedules: the backfill pass over these orders (blocks of two rows,
  so that small examples cross many blocks) against the job-by-job reference
  pass of ``tests/oracles/backfill_reference.py``, which ranks by a plain sort.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from conftest import THREE_HOSTS, one_host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.backfill_reference import ReferenceBackfill

from o2ksim import simulate
from o2ksim.engine import block_minima, queue_index
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.errors import O2KSimError
from o2ksim.jobs import Job, JobSpec
from o2ksim.machine import KB_PER_GB
from o2ksim.policies import backfill_scan, order_scan, priority, queue_view
from o2ksim.policies.order_scan import IndexedOrder, MergedOrder
from o2ksim.policies.priority import make_priority, static_priority


@static_priority
def widest_small_memory_first(q):
    """A user function that reads no time, declared static."""
    return q.jp - (q.jm > 2.0)


STATIC = st.sampled_from(["sjf", {"p": 1.0}, {"m": -2.0, "pe": 0.5}, widest_small_memory_first])
LXF_LIKE = st.sampled_from([
    "lxf", {"w": 0.02, "x": 1.0}, {"w": 1.0}, {"x": 5.0, "w": 240.0},
    {"w": 1.0, "x": 5.0, "p": 0.2},  # Priority-backfill: runs of one instant and base
    {"w": 240.0, "x": 1500.0, "pe": 100.0},  # NCSA-MS*
    {"w": 1.0, "x": 2.0, "p": -0.5, "m": 0.3},  # a negative base weight
    {"w": -1.0, "x": 2.0}, {"x": -5.0, "p": 1.0},  # negative slopes
    {"x": 10.0, "m": 1.0},  # runs by slope when the memory requests vary
])  # fmt: skip


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of two rows, the indexed scan at every queue length, merged orders from
    two waiting jobs on."""
    monkeypatch.setattr(queue_index, "BLOCK_SHIFT", 1)
    monkeypatch.setattr(queue_index, "BLOCK", 2)
    monkeypatch.setattr(block_minima, "FAN_SHIFT", 1)
    monkeypatch.setattr(backfill_scan, "INDEXED_SCAN_MIN", 0)
    monkeypatch.setattr(priority, "MERGE_MIN", 2)
    monkeypatch.setattr(order_scan, "SLOPE_MERGE_MIN", 2)


@st.composite
def runs(draw, instants=(0.0, 0.0, 0.0, 7.0, 3600.0)):
    """Jobs submitted at a few instants (in submission order), few distinct requests so
    that equal scores are common, and a sequence of (job, waiting?) changes."""
    n = draw(st.integers(2, 40))
    times = sorted(draw(st.lists(st.sampled_from(instants), min_size=n, max_size=n)))
    jobs = []
    for i, t in enumerate(times):
        procs = draw(st.sampled_from([1, 2, 3, 8]))
        mem = draw(st.sampled_from([0, 1, 3])) * KB_PER_GB
        req = draw(st.sampled_from([0.0, 0.5, 60.0, 600.0, 3600.0]))
        jobs.append(Job(JobSpec(i + 1, t, procs, mem, req, req)))
    ops = draw(st.lists(st.tuples(st.integers(0, n - 1), st.booleans()), max_size=3 * n))
    return jobs, ops


def _reference(pri, index, now):
    queue = [index.jobs[r] for r in index.rows().tolist()]
    return [j.id for j in pri.order(queue, now)]


def _replay(jobs, ops, check):
    """Half the jobs wait; then each op adds or removes one, and ``check`` runs after it."""
    index = QueueIndex(jobs)
    for job in jobs[::2]:
        index.add(job)
    check(index)
    for k, wait in ops:
        if wait and not index.queued[k]:
            index.add(jobs[k])
        elif not wait and index.queued[k]:
            index.remove(jobs[k])
        check(index)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=runs(), spec=STATIC)
def test_static_order_follows_the_queue_and_equals_the_full_ranking(small_blocks, case, spec):
    jobs, ops = case
    pri = make_priority(spec)

    def check(index):
        if len(index) <= 1:
            return
        ranked = pri.order([index.jobs[r] for r in index.rows().tolist()], 10.0, index)
        assert isinstance(ranked, IndexedOrder)
        assert [j.id for j in ranked] == _reference(pri, index, 10.0)
        assert len(ranked) == len(index)

    _replay(jobs, ops, check)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=runs(), spec=LXF_LIKE, now=st.sampled_from([3600.0, 3601.0, 3607.0, 90000.0]))
def test_merged_order_equals_the_full_ranking(small_blocks, case, spec, now):
    jobs, ops = case
    _ranks_as_the_full_sort(jobs, ops, make_priority(spec), now)


def _ranks_as_the_full_sort(jobs, ops, pri, now):
    """Replay ``ops``, checking after each that ``pri`` ranks the queue as the full sort
    does; returns the priority's merged-order index (None: none was built)."""

    def check(index):
        if len(index) > 1:
            queue = [index.jobs[r] for r in index.rows().tolist()]
            assert [j.id for j in pri.order(queue, now, index)] == _reference(pri, index, now)

    _replay(jobs, ops, check)
    return pri._instants[1] if pri._instants is not None else None


@st.composite
def one_of_two_runtimes(draw, times, memory):
    """Jobs at the instants drawn by ``times`` asking one of two runtimes, and memory drawn
    by ``memory`` (a list of ``n`` amounts): few runs by slope."""
    n = draw(st.integers(2, 40))
    at = sorted(draw(st.lists(times, min_size=n, max_size=n)))
    mems = draw(memory(n))
    jobs = []
    for i, t in enumerate(at):
        procs = draw(st.sampled_from([1, 2, 8]))
        req = draw(st.sampled_from([600.0, 3600.0]))
        jobs.append(Job(JobSpec(i + 1, float(t), procs, mems[i], req, req)))
    ops = draw(st.lists(st.tuples(st.integers(0, n - 1), st.booleans()), max_size=3 * n))
    return jobs, ops


def _each_its_own(n):
    return st.lists(st.integers(0, 4 * KB_PER_GB), min_size=n, max_size=n, unique=True)


def _three_sizes(n):
    return st.lists(st.sampled_from([0, KB_PER_GB, 3 * KB_PER_GB]), min_size=n, max_size=n)


# a flood at up to three instants, each job asking its own amount of memory: a base per
# job under a weight on m, so fewer runs by slope than by instant
MEMORY_RUNS = one_of_two_runtimes(st.sampled_from([0.0, 0.0, 7.0, 3600.0]), _each_its_own)
# a burst over up to 61 instants: fewer runs by slope (one per runtime) than by instant
BURSTS = one_of_two_runtimes(st.integers(0, 60), _three_sizes)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=MEMORY_RUNS,
    spec=st.sampled_from([{"w": 240.0, "x": 1500.0, "pe": 100.0}, {"x": 10.0, "m": 1.0},
                          {"w": -1.0, "x": 3.0, "m": -2.0}]),
    now=st.sampled_from([3600.0, 3607.0, 90000.0]),
)  # fmt: skip
def test_runs_by_slope_equal_the_full_ranking(small_blocks, case, spec, now):
    jobs, ops = case
    inst = _ranks_as_the_full_sort(jobs, ops, make_priority(spec), now)
    # a weight on m: a base per job, more runs than by instant and runtime (under pe,
    # max(p, Jm) is often p: few bases, either may be fewer)
    if inst is not None and "m" in spec and len(jobs) > 2 * len({j.submit for j in jobs}):
        assert not inst.by_base


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=BURSTS,
    spec=st.sampled_from(["lxf", {"w": 0.02, "x": 1.0}, {"w": 1.0, "x": 5.0, "p": 0.2},
                          {"w": 240.0, "x": 1500.0, "pe": 100.0}, {"w": -1.0, "x": 3.0}]),
    now=st.sampled_from([60.0, 61.0, 3600.0, 90000.0]),
)  # fmt: skip
def test_runs_by_slope_over_many_instants_equal_the_full_ranking(small_blocks, case, spec, now):
    jobs, ops = case
    inst = _ranks_as_the_full_sort(jobs, ops, make_priority(spec), now)
    if inst is not None and len({j.submit for j in jobs}) > 2:  # more instants than runtimes
        assert not inst.by_base


def _flood(n, t=0.0):
    return [Job(JobSpec(i + 1, t, 1, 0, float(r), 1.0)) for i, r in enumerate(n)]


def test_a_function_declared_static_that_reads_the_wait_is_refused(small_blocks):
    # its scores at two times differ: the kept order would be silently wrong
    jobs = _flood([100, 50, 400])
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority(static_priority(lambda q: q.jx))
    with pytest.raises(O2KSimError, match="declared static but its scores change with the time"):
        pri.order(jobs, 100.0, index)
    undeclared = make_priority(lambda q: q.jx)  # not declared: ranked at every pass
    assert not isinstance(undeclared.order(jobs, 100.0, index), IndexedOrder)
    assert [j.id for j in undeclared.order(jobs, 100.0, index)] == [2, 1, 3]


def test_merged_order_by_hand(small_blocks):
    # five jobs at t=0 asking 100, 50, 100, 400, 50 s; at now = 100 LXF's Jx is
    # 2, 3, 2, 1.25, 3: jobs 2 and 5 (Jx 3, in submission order), 1 and 3, then 4
    jobs = _flood([100, 50, 100, 400, 50])
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    ranked = make_priority("lxf").order(jobs, 100.0, index)
    assert isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == [2, 5, 1, 3, 4]
    # at now = 0 every Jx is 1: the scores collide, the queue is ranked (submission order)
    ranked = make_priority("lxf").order(jobs, 0.0, index)
    assert not isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == [1, 2, 3, 4, 5]


def test_slopes_that_round_to_one_score_are_refused(small_blocks):
    # requests of 1e17 and 2e17 s: after 1 s, Jx = 1 + 1e-17 and 1 + 5e-18 both round
    # to 1.0 -- equal scores, so submission order, not the larger slope first
    jobs = _flood([2e17, 1e17])
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    ranked = make_priority("lxf").order(jobs, 1.0, index)
    assert not isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == [1, 2]


def test_bases_that_round_to_one_score_go_in_submission_order(small_blocks):
    # 3600 Jw + Jm: every slope is 1 (one run by slope), the bases Jm = 1 and 1 + 1e-12.
    # After 10^6 s both scores round to 1,000,001.0 (an ulp there is 1.2e-10): equal, so
    # submission order, not the larger base first -- a near tie, ordered by the floats
    unit = queue_view.KB_PER_MEMORY_UNIT
    jobs = [Job(JobSpec(i + 1, 0.0, 1, unit * m, 60.0, 1.0)) for i, m in enumerate([1, 1 + 1e-12])]
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority({"w": 3600.0, "m": 1.0})
    ranked = pri.order(jobs, 1e6, index)
    assert isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == [1, 2]
    assert [j.id for j in pri.order(jobs, 0.0, index)] == [2, 1]  # at wait 0 they differ


def test_negative_slopes_that_round_to_one_score_are_refused(small_blocks):
    # 0.001 Jw - 100 Jx: slopes about -100 for R one ulp apart above 1 s, and +0.001 for
    # R = 10^9.  At wait 3000 s some of the first round to one score (about -3 x 10^5, an
    # ulp 5.8e-11 against slopes 1.4e-14 apart): the rounding bound must take |slope|,
    # not the largest slope (0.001), or it would trust the slopes' order there
    reqs = [1.0]
    for _ in range(6):
        reqs.append(math.nextafter(reqs[-1], 2.0))
    jobs = _flood([*reqs, 1e9])
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority({"w": 3.6, "x": -100.0})
    ranked = pri.order(jobs, 3000.0, index)
    assert not isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == _reference(pri, index, 3000.0)


def test_more_instants_than_the_limit_are_ranked(small_blocks, monkeypatch):
    monkeypatch.setattr(order_scan, "MAX_RUNS", 2)
    jobs = [Job(JobSpec(i + 1, float(i), 1, 0, 100.0 - i, 1.0)) for i in range(3)]
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority("lxf")
    ranked = pri.order(jobs, 50.0, index)
    assert not isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == _reference(pri, index, 50.0)


def test_runs_of_one_base_merged_by_hand(small_blocks):
    # Priority-backfill (Jw + 5 Jx + 0.2 Jp), four jobs at t = 0: A (1 proc, R = 100),
    # B (2 procs, R = 100), C (1 proc, R = 400), D (2 procs, R = 50).  Runs by base: 5.2
    # (A, C) and 5.4 (B, D), each by slope.  At now = 100 (wait 100 s, Jw = 1/36):
    # A 1/36 + 5 * 2 + 0.2 = 10.228, B 10.428, C 1/36 + 5 * 1.25 + 0.2 = 6.478,
    # D 1/36 + 5 * 3 + 0.4 = 15.428: D, B, A, C.
    specs = [(1, 100.0), (2, 100.0), (1, 400.0), (2, 50.0)]
    jobs = [Job(JobSpec(i + 1, 0.0, p, 0, r, 1.0)) for i, (p, r) in enumerate(specs)]
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority({"w": 1.0, "x": 5.0, "p": 0.2})
    ranked = pri.order(jobs, 100.0, index)
    assert isinstance(ranked, MergedOrder) and len(ranked.runs) == 2
    assert [j.id for j in ranked] == [4, 2, 1, 3]


def test_runs_by_slope_merged_by_hand(small_blocks):
    # 10 Jx + Jm, five 1-processor jobs at t = 0 (Jm exact: memory in units of 358.4 MB):
    # A (R = 100, Jm 1), B (100, 3), C (50, 2), D (50, 0), E (100, 2).  Bases 10 + Jm:
    # 11, 13, 12, 10, 12 (four runs by base); slopes 10 / R: 0.1, 0.1, 0.2, 0.2, 0.1
    # (two runs by slope: A, B, E and C, D).  At now = 0 the scores are the bases:
    # B, C, E (12, C first), A, D -- distinct bases stay apart at wait 0, so merged.
    # At now = 20: A 13, B 15, C 16, D 14, E 14 (0.2 * 20 and 0.1 * 20 round to 4.0 and
    # 2.0): C, B, D, E (tied across runs: submission order), A.
    specs = [(100.0, 1), (100.0, 3), (50.0, 2), (50.0, 0), (100.0, 2)]
    jobs = [
        Job(JobSpec(i + 1, 0.0, 1, k * queue_view.KB_PER_MEMORY_UNIT, r, 1.0))
        for i, (r, k) in enumerate(specs)
    ]
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority({"x": 10.0, "m": 1.0})
    ranked = pri.order(jobs, 0.0, index)
    assert isinstance(ranked, MergedOrder) and len(ranked.runs) == 2
    assert not pri._instants[1].by_base
    assert [j.id for j in ranked] == [2, 3, 5, 1, 4]
    ranked = pri.order(jobs, 20.0, index)
    assert isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == [3, 2, 4, 5, 1]


def test_a_burst_over_many_instants_merged_by_slope_by_hand(small_blocks):
    # LXF, four jobs at four instants: 1 (t = 0, R = 100), 2 (t = 5, R = 50), 3 (t = 10,
    # R = 100), 4 (t = 20, R = 50).  Four runs by instant, two by slope (R = 100: 1, 3;
    # R = 50: 2, 4; within each, the earlier submission has the larger score for ever).
    # At now = 100, Jx = 1 + wait / R: 2.0, 2.9, 1.9, 2.6: jobs 2, 4, 1, 3.
    jobs = [Job(JobSpec(i + 1, t, 1, 0, r, 1.0)) for i, (t, r) in
            enumerate([(0.0, 100.0), (5.0, 50.0), (10.0, 100.0), (20.0, 50.0)])]  # fmt: skip
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority("lxf")
    ranked = pri.order(jobs, 100.0, index)
    assert isinstance(ranked, MergedOrder) and len(ranked.runs) == 2
    assert not pri._instants[1].by_base
    assert [j.id for j in ranked] == [2, 4, 1, 3]
    # a = 1 - t / R is 1.0, 0.9 (R = 100) and 0.9, 0.6 (R = 50): far apart, no near ties: every
    # job is a segment of its own (the fixed order is used as it is, not re-sorted)
    assert all(ranked.segment_end(p, hi) == p for _, lo, hi in ranked.runs for p in range(lo, hi))


def test_scores_of_one_slope_that_round_to_one_go_in_submission_order(small_blocks):
    # 3600 Jw + 1e-10 Jp: every slope is 1 (one run by slope), a = base - submit.  Job 1
    # (t = 0, 1 proc): a = 1e-10; job 2 (t = 3e-10, 5 procs): a = 2e-10, first in the
    # run.  At now = 10^6 both scores round to 10^6 + 2^-33 (an ulp there is 1.2e-10):
    # equal, so submission order -- the run's order would put job 2 first (a near tie,
    # ordered by the floats).  At now = 1 they are 1 + 1e-10 and 1 + 2e-10: job 2 first.
    jobs = [Job(JobSpec(1, 0.0, 1, 0, 60.0, 1.0)), Job(JobSpec(2, 3e-10, 5, 0, 60.0, 1.0))]
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority({"w": 3600.0, "p": 1e-10})
    ranked = pri.order(jobs, 1e6, index)
    assert isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == [1, 2]
    ranked = pri.order(jobs, 1.0, index)
    assert isinstance(ranked, MergedOrder) and [j.id for j in ranked] == [2, 1]


def test_an_a_rounded_far_from_the_scores_is_a_near_tie(small_blocks):
    # Jx + c Jp (c = 0.3333333392164918), R = 3 s, submitted at about 10^9 s: job 1 (t =
    # 1,000,000,994, 2 procs), job 2 (one second later, 3 procs).  Exactly, a = base - t / 3
    # is larger for job 2 by 5.9e-9, and so is its score at any time; but a rounds near
    # 3.3e8 (an ulp of 6e-8), and the rounded a of job 1 comes out larger.  The scores
    # themselves are small and exact enough: at now = t2 + 10, job 2 first.  The near-tie
    # bound must count the error of a, or it would trust the rounded a's order.
    t = 1_000_000_994.0
    jobs = [Job(JobSpec(1, t, 2, 0, 3.0, 1.0)), Job(JobSpec(2, t + 1, 3, 0, 3.0, 1.0))]
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority({"x": 1.0, "p": 0.3333333392164918})
    ranked = pri.order(jobs, t + 11, index)
    assert isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == [2, 1] == _reference(pri, index, t + 11)


def test_a_negative_weight_on_the_expansion_factor_merged_by_hand(small_blocks):
    # -Jx: the smallest expansion factor first.  Jobs at t = 0 asking 100, 50, 400 s; at
    # now = 100, Jx = 2, 3, 1.25: the 400-s job, the 100-s job, the 50-s job.
    jobs = _flood([100, 50, 400])
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    ranked = make_priority({"x": -1.0}).order(jobs, 100.0, index)
    assert isinstance(ranked, MergedOrder)
    assert [j.id for j in ranked] == [3, 1, 2]


def test_too_many_runs_are_counted_again_once_the_queue_has_halved(small_blocks, monkeypatch):
    # 3 runs (instants 0, 1, 2) against a limit of 2: ranked, and not counted again while
    # the queue keeps more than half of its 6 jobs; with 3 left (one run), merged
    monkeypatch.setattr(order_scan, "MAX_RUNS", 2)
    jobs = [Job(JobSpec(i + 1, float(i // 2), 1, 0, 100.0 + i, 1.0)) for i in range(6)]
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    pri = make_priority("lxf")
    assert not isinstance(pri.order(jobs, 50.0, index), MergedOrder)
    inst = pri._instants[1]
    assert inst.too_many == 6
    index.remove(jobs[0])  # runs left: 3 (the count is not even looked at: 5 > 6 / 2)
    assert inst.order(50.0, 5) is None and inst.too_many == 6
    for j in jobs[1:4]:
        index.remove(j)  # 2 jobs left, one run (instant 2)
    queue = jobs[4:]
    ranked = pri.order(queue, 50.0, index)
    assert isinstance(ranked, MergedOrder) and inst.too_many == 0
    assert [j.id for j in ranked] == _reference(pri, index, 50.0)


MACHINE = THREE_HOSTS


@st.composite
def floods(draw):
    """Jobs submitted at up to three instants, longer than the gaps between them."""
    n = draw(st.integers(1, 70))
    times = sorted(draw(st.lists(st.sampled_from([0, 0, 0, 40, 400]), min_size=n, max_size=n)))
    jobs = []
    for i, t in enumerate(times):
        run = draw(st.integers(0, 900))
        req = draw(st.sampled_from([run, 2 * run + 1, max(1, run // 2), 1000]))
        procs = draw(st.sampled_from([1, 1, 2, 3, 4, 8, 12, 16]))
        mem = draw(st.sampled_from([0, 512, 1024, 3072, 6000])) * 1024
        jobs.append(JobSpec(i + 1, float(t), procs, mem, float(req), float(run)))
    return jobs


NEAR = 1e9  # submission times: ulps of slope * submit of about 1e-7, so near ties


@st.composite
def near_ties(draw):
    """Jobs submitted about 10^9 s into the trace asking memory that differs by parts in
    10^9 (and some far apart), one of two runtimes: under weights on m, runs by slope
    whose neighbours' ``a`` are closer than the floats can tell apart (near ties)."""
    n = draw(st.integers(2, 40))
    times = sorted(draw(st.lists(st.sampled_from([0, 0, 0, 5, 40]), min_size=n, max_size=n)))
    unit = queue_view.KB_PER_MEMORY_UNIT
    jobs = []
    for i, t in enumerate(times):
        jm = draw(st.sampled_from([1.0, 1.0 + 1e-9, 1.0 + 3e-9, 1.0 - 1e-9, 2.0, 3.0]))
        run = draw(st.integers(1, 300))
        req = draw(st.sampled_from([300.0, 600.0]))
        procs = draw(st.sampled_from([1, 2, 4, 8]))
        jobs.append(JobSpec(i + 1, NEAR + t, procs, jm * unit, req, float(min(run, req))))
    return jobs


NEAR_WEIGHTS = st.sampled_from([{"w": 3600.0, "x": 1.0, "m": 1.0}, {"w": 240.0, "x": 1500.0, "m": 7.0},
                                {"w": 3600.0, "m": -1.0}])  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    jobs=near_ties(),
    spec=NEAR_WEIGHTS,
    reservations=st.sampled_from([1, 2, "all"]),
    kind=st.sampled_from(["dynamic", "fixed"]),
)
def test_near_ties_take_the_reference_pass_schedule(small_blocks, jobs, spec, reservations, kind):
    opts = {"priority": spec, "reservations": reservations, "reservation_kind": kind}
    fast = simulate(jobs, machine=MACHINE, policy="backfill", policy_params=opts)
    ref = simulate(jobs, machine=MACHINE, policy=ReferenceBackfill(**opts))
    cols = ["job_id", "start", "end", "host", "status"]
    pd.testing.assert_frame_equal(ref.jobs[cols], fast.jobs[cols])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(jobs=near_ties(), spec=NEAR_WEIGHTS, wait=st.sampled_from([50.0, 3600.0, 1e6]),
       ops=st.lists(st.tuples(st.integers(0, 39), st.booleans()), max_size=60))  # fmt: skip
def test_near_ties_rank_as_the_full_sort(small_blocks, jobs, spec, wait, ops):
    jobs = [Job(j) for j in jobs]
    ops = [(k % len(jobs), w) for k, w in ops]
    _ranks_as_the_full_sort(jobs, ops, make_priority(spec), NEAR + 40 + wait)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    jobs=floods(),
    spec=st.sampled_from(["sjf", "lxf", {"w": 0.02, "x": 1.0}, {"p": 1.0},
                          {"w": 1.0, "x": 5.0, "p": 0.2}, {"w": 240.0, "x": 1500.0, "pe": 100.0},
                          {"w": -1.0, "x": 2.0}, {"x": 10.0, "m": 1.0},
                          widest_small_memory_first]),
    reservations=st.sampled_from([1, 1, 2, "all"]),
    kind=st.sampled_from(["dynamic", "dynamic", "fixed"]),
)
def test_backfill_over_kept_orders_equals_the_reference_pass(
    small_blocks, jobs, spec, reservations, kind
):
    opts = {"priority": spec, "reservations": reservations, "reservation_kind": kind}
    fast = simulate(jobs, machine=MACHINE, policy="backfill", policy_params=opts)
    ref = simulate(jobs, machine=MACHINE, policy=ReferenceBackfill(**opts))
    cols = ["job_id", "start", "end", "host", "status"]
    pd.testing.assert_frame_equal(ref.jobs[cols], fast.jobs[cols])


@pytest.mark.parametrize("spec", ["lxf", {"w": 1.0, "x": 5.0, "p": 0.2}])
def test_a_flood_takes_the_merged_order(small_blocks, monkeypatch, spec):
    """The schedule test above reaches the merged order (not only the fallback), also
    with a weight on the processors (five runs: one per base)."""
    taken = []
    order = order_scan.InstantIndex.order

    def counted(self, now, n):
        result = order(self, now, n)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(order_scan.InstantIndex, "order", counted)
    jobs = [JobSpec(i + 1, 0.0, 1 + i % 5, 0, 10.0 + i % 7, 5.0 + i % 3) for i in range(60)]
    opts = {"priority": spec, "reservations": 1}
    fast = simulate(jobs, machine=MACHINE, policy="backfill", policy_params=opts)
    ref = simulate(jobs, machine=MACHINE, policy=ReferenceBackfill(**opts))
    assert sum(taken) >= 3 and not taken[0]  # at t=0 every score is its base: ranked
    cols = ["job_id", "start", "end", "host"]
    pd.testing.assert_frame_equal(ref.jobs[cols], fast.jobs[cols])


@pytest.mark.parametrize("spec", ["lxf", {"w": 240.0, "x": 1500.0, "pe": 100.0}])
def test_a_burst_over_many_instants_takes_the_merged_order_by_slope(small_blocks, monkeypatch, spec):
    """60 jobs submitted one a second asking 10 or 17 s (two runs by slope, 60 by instant):
    the merged order is taken, by slope, and the schedule is the reference pass's."""
    taken = []
    order = order_scan.InstantIndex.order

    def counted(self, now, n):
        result = order(self, now, n)
        taken.append(result is not None and not self.by_base)
        return result

    monkeypatch.setattr(order_scan.InstantIndex, "order", counted)
    jobs = [JobSpec(i + 1, float(i), 1 + i % 5, 0, (10.0, 17.0)[i % 2], 5.0 + i % 3)
            for i in range(60)]  # fmt: skip
    opts = {"priority": spec, "reservations": 1}
    fast = simulate(jobs, machine=one_host(4), policy="backfill", policy_params=opts)
    ref = simulate(jobs, machine=one_host(4), policy=ReferenceBackfill(**opts))
    assert sum(taken) >= 3
    cols = ["job_id", "start", "end", "host"]
    pd.testing.assert_frame_equal(ref.jobs[cols], fast.jobs[cols])


@pytest.mark.parametrize("spec", ["sjf", {"w": 240.0, "x": 1500.0, "pe": 100.0}])
def test_fixed_job_reservations_scan_their_kept_order(small_blocks, monkeypatch, spec):
    """Held fixed-job reservations first, then the kept order scanned as an index
    (HeldFirst): the reference pass's schedule, and the scan passes over held jobs."""
    skipped = []
    first = order_scan.SkippingScan.first

    def counted(self, test, max_procs):
        job = first(self, test, max_procs)
        skipped.append(job)
        return job

    monkeypatch.setattr(order_scan.SkippingScan, "first", counted)
    jobs = [JobSpec(i + 1, 0.0, 1 + i % 5, 0, 10.0 + i % 7, 5.0 + i % 3) for i in range(60)]
    opts = {"priority": spec, "reservations": 2, "reservation_kind": "fixed"}
    fast = simulate(jobs, machine=MACHINE, policy="backfill", policy_params=opts)
    ref = simulate(jobs, machine=MACHINE, policy=ReferenceBackfill(**opts))
    assert len(skipped) >= 3  # the held-first order was scanned as an index
    cols = ["job_id", "start", "end", "host"]
    pd.testing.assert_frame_equal(ref.jobs[cols], fast.jobs[cols])



def test_a_held_job_started_in_the_pass_is_not_backfilled_again(small_blocks):
    # One host of 8, SJF, one fixed-job reservation.  L (8 procs) runs 0-100; H (2 procs,
    # R = 50) arrives at 1 and is held at 100; B (8 procs, R = 10) arrives at 2.  At 100
    # (L has left) the pass starts H first (held), B does not fit the 6 left and is
    # reserved at 150, and the backfill scan over the kept order meets H again (still
    # waiting in the queue index during the pass; it fits the 6 and ends with the first
    # H): it must pass over it.  By hand: H 100-150, B 150-160.
    jobs = [JobSpec(1, 0.0, 8, 0, 100.0, 100.0), JobSpec(2, 1.0, 2, 0, 50.0, 50.0),
            JobSpec(3, 2.0, 8, 0, 10.0, 10.0)]  # fmt: skip
    opts = {"priority": "sjf", "reservations": 1, "reservation_kind": "fixed"}
    r = simulate(jobs, machine=one_host(8), policy="backfill", policy_params=opts)
    got = [tuple(x) for x in r.jobs[["job_id", "start", "end"]].itertuples(index=False)]
    assert got == [(1, 0.0, 100.0), (2, 100.0, 150.0), (3, 150.0, 160.0)]
