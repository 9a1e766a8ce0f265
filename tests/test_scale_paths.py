"""The two search shortcuts behind the scale fixes of issue 27, against plain searches.

* ``QueueIndex.first`` (the same-instant flood): the first waiting row that passes
  a monotone test, found by the tree of block minima, against a scan of every
  row (also along random sequences of arrivals and departures, so that stale
  minima would show); the minima of every node of the tree against those of
  its rows; and the FCFS backfill pass that uses it against the job-by-job
  reference pass (``tests/oracles/backfill_reference.py``), with blocks of two
  rows and two children a node, so that small examples cross many blocks and
  levels.
* ``Profile.earliest``'s memos (``--reservations all``): every answer against
  the same search on a copy of the profile with the memos cleared (the plain
  walk over every step), along random sequences of searches and reservations;
  and a hand-computed case.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import THREE_HOSTS, bursty_jobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.backfill_reference import ReferenceBackfill

from o2ksim import simulate
from o2ksim.engine import block_minima, queue_index
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.jobs import Job, JobSpec
from o2ksim.policies import backfill_scan
from o2ksim.policies.profile import Profile


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of two rows, and the indexed scan at every queue length."""
    monkeypatch.setattr(queue_index, "BLOCK_SHIFT", 1)
    monkeypatch.setattr(queue_index, "BLOCK", 2)
    monkeypatch.setattr(block_minima, "FAN_SHIFT", 1)
    monkeypatch.setattr(backfill_scan, "INDEXED_SCAN_MIN", 0)


# ------------------------------------------------------------------ QueueIndex.first
def test_first_by_hand(small_blocks):
    # rows 0..5 ask 4, 1, 3, 1, 2, 8 processors; rows 1 and 3 are not waiting.
    # First waiting row from row 0 asking at most 2: row 4 (block 2); at most 3: row 2.
    jobs = [Job(JobSpec(i, 0.0, p, 0, 10.0, 10.0)) for i, p in enumerate([4, 1, 3, 1, 2, 8])]
    index = QueueIndex(jobs)
    for row in (0, 2, 4, 5):
        index.add(jobs[row])
    assert index.first(0, lambda p, m, r: p <= 2) == 4
    assert index.first(0, lambda p, m, r: p <= 3) == 2
    assert index.first(3, lambda p, m, r: p <= 3) == 4
    assert index.first(5, lambda p, m, r: p <= 3) == -1
    index.remove(jobs[4])
    assert index.first(0, lambda p, m, r: p <= 2) == -1


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.integers(1, 16), st.integers(0, 8), st.integers(0, 900), st.booleans()),
             min_size=1, max_size=40),
    st.integers(0, 40), st.integers(1, 16), st.integers(0, 8), st.integers(0, 900),
)  # fmt: skip
def test_first_is_the_first_passing_waiting_row(small_blocks, reqs, start, p, m, r):
    jobs = [Job(JobSpec(i, 0.0, a, b, float(c), 1.0)) for i, (a, b, c, _) in enumerate(reqs)]
    index = QueueIndex(jobs)
    for job, (*_, waiting) in zip(jobs, reqs, strict=True):
        if waiting:
            index.add(job)

    def test(procs, mem, req):  # monotone, with a disjunction like a shadow's
        return (procs <= p) & ((mem <= m) | (req <= r))

    expected = next(
        (
            i
            for i, (a, b, c, w) in enumerate(reqs)
            if i >= start and w and a <= p and (b <= m or c <= r)
        ),
        -1,
    )
    assert index.first(start, test) == expected


def test_first_sees_an_arrival_by_hand(small_blocks):
    # blocks of two rows: rows 0..3 ask 8 processors, rows 4..7 ask 8 but row 6 asks 1.
    # Blocks 0 and 1 (minima 8) fail "at most 2": skipped; row 6 found in block 3.
    # Then row 1 asks 1 and joins: block 0's minima must now pass.
    procs = [8, 1, 8, 8, 8, 8, 1, 8]
    jobs = [Job(JobSpec(i, 0.0, p, 0, 10.0, 10.0)) for i, p in enumerate(procs)]
    index = QueueIndex(jobs)
    for row in (0, 2, 3, 4, 5, 6, 7):
        index.add(jobs[row])
    assert index.first(0, lambda p, m, r: p <= 2) == 6
    index.add(jobs[1])
    assert index.first(0, lambda p, m, r: p <= 2) == 1
    assert index.first(2, lambda p, m, r: p <= 2) == 6
    index.remove(jobs[6])
    assert index.first(2, lambda p, m, r: p <= 2) == -1
    assert index.first(0, lambda p, m, r: p <= 2, max_procs=2, stop=1) == -1


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.integers(1, 16), st.integers(0, 8), st.integers(0, 900)),
             min_size=1, max_size=40),
    st.lists(st.tuples(st.integers(0, 39), st.integers(0, 40), st.integers(0, 41),
                       st.integers(1, 16), st.integers(0, 8), st.integers(0, 900)),
             min_size=1, max_size=30),
    st.booleans(),
)  # fmt: skip
def test_first_along_arrivals_and_departures(small_blocks, monkeypatch, reqs, ops, few):
    # each op toggles one job (joins or leaves the queue), then asks for the first
    # passing row in [start, stop) against a scan of every row: minima left stale by
    # an arrival would skip the block of the job that just arrived.  ``few``: fewer
    # processor bounds than distinct requests (the tree's minima are then a superset)
    monkeypatch.setattr(block_minima, "MAX_BOUNDS", 3 if few else 128)
    jobs = [Job(JobSpec(i, 0.0, a, b, float(c), 1.0)) for i, (a, b, c) in enumerate(reqs)]
    index = QueueIndex(jobs)
    waiting = [False] * len(jobs)
    for row, start, stop, p, m, r in ops:
        row %= len(jobs)
        (index.remove if waiting[row] else index.add)(jobs[row])
        waiting[row] = not waiting[row]

        def test(procs, mem, req, p=p, m=m, r=r):
            return (procs <= p) & ((mem <= m) | (req <= r))

        expected = next(
            (
                i
                for i, (a, b, c) in enumerate(reqs)
                if start <= i < stop and waiting[i] and a <= p and (b <= m or c <= r)
            ),
            -1,
        )
        assert index.first(start, test, max_procs=p, stop=stop) == expected


MACHINE = THREE_HOSTS


@st.composite
def floods(draw):
    """Bursts at the same instant, so the FCFS queue is deep when jobs depart."""
    return bursty_jobs(draw, st, 90, [0, 512, 1024, 3072, 6000])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(jobs=floods(), reservations=st.sampled_from([1, 1, 2, "all"]))
def test_fcfs_backfill_by_blocks_equals_the_reference_pass(small_blocks, jobs, reservations):
    opts = {"priority": "fcfs", "reservations": reservations}
    fast = simulate(jobs, machine=MACHINE, policy="backfill", policy_params=opts)
    ref = simulate(jobs, machine=MACHINE, policy=ReferenceBackfill(**opts))
    cols = ["job_id", "start", "end", "host", "status"]
    pd.testing.assert_frame_equal(ref.jobs[cols], fast.jobs[cols])


# ------------------------------------------------------------------ Profile.earliest memos
def _plain(profile: Profile, procs: int, mem: float, duration: float) -> float:
    """The same search on a copy without memos: the walk from the first step."""
    copy = Profile._of(
        list(profile.times), list(profile.procs), list(profile.mem), profile.releases
    )
    copy.rising = False
    return copy.earliest(procs, mem, duration)


def test_memos_by_hand():
    # 8 processors; running jobs release 4 at t=10 and 4 at t=20 (free now: 0).
    prof = Profile(0.0, 0, 100.0, [(10.0, 4, 0.0), (20.0, 4, 0.0)])
    prof.reserve(10.0, 4, 0.0, 30.0)  # a 4-processor job reserved on [10, 40)
    # steps: [0,10) 0; [10,20) 0; [20,40) 4; [40,...) 8
    assert prof.earliest(4, 0.0, 5.0) == 20.0
    assert prof.short[4] == 20.0 and prof.found[(4, 0.0)] == ([5.0], [20.0])
    # a longer request starts its walk at the shorter one's answer; 20 fits it too, and
    # bounds nothing further, so the memo keeps the shorter request alone
    assert prof.earliest(4, 0.0, 10.0) == 20.0
    assert prof.found[(4, 0.0)] == ([5.0], [20.0])
    assert prof.earliest(8, 0.0, 5.0) == 40.0
    prof.reserve(20.0, 4, 0.0, 5.0)  # now [20,25) has 0 free
    # the memo sends the search to t=20, the step at 20 no longer fits: the next window is [25, 30)
    assert prof.earliest(4, 0.0, 5.0) == 25.0
    assert prof.earliest(4, 0.0, 5.0) == _plain(prof, 4, 0.0, 5.0)


@settings(max_examples=150, deadline=None)
@given(
    releases=st.lists(st.tuples(st.integers(1, 50), st.integers(1, 8), st.integers(0, 4)), max_size=8),
    ops=st.lists(st.tuples(st.integers(1, 16), st.integers(0, 6), st.integers(1, 40), st.booleans()),
                 min_size=1, max_size=30),
)  # fmt: skip
def test_memo_answers_equal_the_plain_walk(releases, ops):
    free_p = 16 - sum(p for _, p, _ in releases)
    free_m = 12.0 - sum(m for _, _, m in releases)
    prof = Profile(
        0.0, max(free_p, 0), max(free_m, 0.0), [(float(t), p, float(m)) for t, p, m in releases]
    )
    prof.take(0.0, 0, 0.0, 1.0)  # no longer "rising": the searches walk the steps
    for procs, mem, duration, place in ops:
        at = prof.earliest(procs, float(mem), float(duration))
        assert at == _plain(prof, procs, float(mem), float(duration))
        if place and math.isfinite(at):
            prof.reserve(at, procs, float(mem), float(duration))


def test_block_minima_ignore_a_nan_request():
    # a NaN runtime fails every test, but must not hide a passing job in its block
    jobs = [Job(JobSpec(0, 0.0, 1, 0, math.nan, 1.0)), Job(JobSpec(1, 0.0, 1, 0, 5.0, 5.0))]
    index = QueueIndex(jobs)
    for j in jobs:
        index.add(j)
    assert index.first(0, lambda p, m, r: r <= 10) == 1
    assert np.isnan(index.req_time[0])


# ------------------------------------------------------------------ BlockMinima (the tree)
def test_block_minima_by_hand(small_blocks):
    # blocks of two rows, two children a node.  Rows 0..7 (procs, runtime):
    # (4, 50) (1, 90) | (3, 10) (2, 70) | (8, 5) (1, 60) | (2, 20) (6, 1); row 3 not waiting.
    reqs = [(4, 50), (1, 90), (3, 10), (2, 70), (8, 5), (1, 60), (2, 20), (6, 1)]
    jobs = [Job(JobSpec(i, 0.0, p, 0, float(r), 1.0)) for i, (p, r) in enumerate(reqs)]
    index = QueueIndex(jobs)
    for row in (0, 1, 2, 4, 5, 6, 7):
        index.add(jobs[row])
    inf = math.inf
    # asking at most 2 processors: block 0 holds row 1 (1, 90), block 1 none (row 3 left),
    # block 2 row 5 (1, 60), block 3 row 6 (2, 20)
    mins = index.block_minima(0, 0, 4, max_procs=2)
    assert mins[0].tolist() == [1, inf, 1, 2] and mins[2].tolist() == [90, inf, 60, 20]
    # at most 3: block 1 gains row 2 (3, 10); at most 2.5: as at most 2
    assert index.block_minima(0, 0, 4, max_procs=3)[2].tolist() == [90, 10, 60, 20]
    assert index.block_minima(0, 0, 4, max_procs=2.5)[2].tolist() == [90, inf, 60, 20]
    # level 1 (pairs of blocks, the top: at most two nodes), everything waiting
    assert index.block_minima(1, 0, 2)[2].tolist() == [10, 1]
    assert index.block_minima(1, 0, 2)[0].tolist() == [1, 1]
    # at most 0.5 processors: nobody
    assert index.block_minima(0, 0, 4, max_procs=0.5)[0].tolist() == [inf] * 4
    # at most 2 processors and 30 s: row 6, found through level 1's right node
    assert index.first(0, lambda p, m, r: (p <= 2) & (r <= 30), max_procs=2) == 6
    index.remove(jobs[6])
    assert index.block_minima(1, 0, 2, max_procs=2)[2].tolist() == [90, 60]
    assert index.first(0, lambda p, m, r: (p <= 2) & (r <= 30), max_procs=2) == -1


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.integers(1, 12), st.integers(0, 8), st.integers(0, 900)),
             min_size=1, max_size=40),
    st.lists(st.integers(0, 39), max_size=60),
    st.integers(0, 13), st.booleans(),
)  # fmt: skip
def test_block_minima_equal_a_scan_of_the_rows(
    small_blocks, monkeypatch, reqs, toggles, bound, few
):
    # every node of every level against the minima of its waiting rows by brute force;
    # with fewer bounds than distinct requests (few), a bound reads as the next kept one
    # up: the minima may only be smaller than over the rows asking at most max_procs
    monkeypatch.setattr(block_minima, "MAX_BOUNDS", 3 if few else 128)  # set at every example
    jobs = [Job(JobSpec(i, 0.0, a, b, float(c), 1.0)) for i, (a, b, c) in enumerate(reqs)]
    index = QueueIndex(jobs)
    waiting = [False] * len(jobs)
    for row in toggles:
        row %= len(jobs)
        (index.remove if waiting[row] else index.add)(jobs[row])
        waiting[row] = not waiting[row]
    level, size = 0, 2  # rows per node: blocks of two, two children a node
    while True:
        n_nodes = -(-len(jobs) // size)
        mins = index.block_minima(level, 0, n_nodes, max_procs=bound)
        for node in range(n_nodes):
            rows = [
                i for i in range(node * size, min((node + 1) * size, len(jobs)))
                if waiting[i] and reqs[i][0] <= bound
            ]  # fmt: skip
            for col in range(3):
                exact = min((reqs[i][col] for i in rows), default=math.inf)
                if few:
                    assert mins[col][node] <= exact
                else:
                    assert mins[col][node] == exact
        if n_nodes <= 2:
            break
        level, size = level + 1, size * 2
