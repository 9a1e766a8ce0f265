"""Ranking the queue over the engine's queue index gives exactly the per-job order.

``Priority.rank(queue, now, index)`` is what the backfill fast path calls: for
weighted priorities (LXF, LXF&W, P&M, ...) it scores the waiting jobs from
per-row columns of the :class:`~o2ksim.engine.queue_index.QueueIndex` (a plain
Python sort on short queues, numpy on long ones) instead of looking every job
up.  It must give the same jobs in the same order as ``Priority.order`` --
ties (equal scores) in queue order included -- and ``order`` itself is checked
against the hand-computed scores in ``test_backfill_family.py``.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim.engine.queue_index import QueueIndex
from o2ksim.jobs import Job, JobSpec
from o2ksim.policies import priority
from o2ksim.policies.priority import RankedQueue, make_priority

KB_PER_GB = 1024 * 1024


@st.composite
def queues(draw):
    """Jobs of a run (few distinct values, so equal scores are common), a waiting subset
    in queue (= arrival) order, and a time after every submission."""
    n = draw(st.integers(2, 3 * priority.SMALL_QUEUE))
    jobs, t = [], 0.0
    for i in range(n):
        t += draw(st.sampled_from([0.0, 0.0, 60.0, 3600.0]))
        procs = draw(st.sampled_from([1, 2, 8, 64]))
        mem = draw(st.sampled_from([0, 1, 40])) * KB_PER_GB
        req = draw(st.sampled_from([0.0, 0.5, 600.0, 3600.0, 36000.0]))
        jobs.append(Job(JobSpec(i + 1, t, procs, mem, req, req)))
    waiting = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    now = t + draw(st.sampled_from([0.0, 1.0, 7200.0]))
    return jobs, [j for j, w in zip(jobs, waiting, strict=True) if w], now


WEIGHTS = st.sampled_from(
    [
        "lxf",
        {"w": 0.02, "x": 1},
        {"w": 1, "x": 5, "pe": 0.2},
        {"w": 240, "x": 1500, "pe": 100},
        {"p": 1.0},
        {"m": -2.0, "w": 1.0},
    ]
)


@settings(max_examples=150, deadline=None)
@given(case=queues(), spec=WEIGHTS)
def test_rank_over_the_index_equals_order(case, spec):
    jobs, queue, now = case
    index = QueueIndex(jobs)
    for job in queue:
        index.add(job)
    pri = make_priority(spec)
    expected = [j.id for j in pri.order(queue, now)]
    ranked = pri.rank(queue, now, index)
    assert [j.id for j in ranked] == expected
    if isinstance(ranked, RankedQueue):  # the rows handed to the indexed scan agree too
        assert [index.jobs[r].id for r in ranked.rows.tolist()] == expected
        assert [j.id for j in ranked[1:3]] == expected[1:3]
        assert ranked[len(ranked) - 1].id == expected[-1]


def test_rank_without_an_index_is_order():
    jobs = [Job(JobSpec(i, 0.0, 1, 0, 10.0 * i, 10.0)) for i in range(1, 5)]
    pri = make_priority("lxf")
    assert [j.id for j in pri.rank(jobs, 100.0, None)] == [j.id for j in pri.order(jobs, 100.0)]
    # an index that does not describe this queue (other length) is not used
    index = QueueIndex(jobs)
    index.add(jobs[0])
    assert [j.id for j in pri.rank(jobs, 100.0, index)] == [1, 2, 3, 4]


def test_long_queue_is_ranked_in_numpy_and_short_in_python():
    n = priority.SMALL_QUEUE + 1
    jobs = [Job(JobSpec(i, float(i), 1, 0, 100.0 * (n - i), 1.0)) for i in range(1, n + 1)]
    index = QueueIndex(jobs)
    for job in jobs:
        index.add(job)
    pri = make_priority("lxf")
    # at now = n + 1 every job has waited n + 1 - i s for a request of 100 (n - i) s:
    # Jx = 1 + (n + 1 - i) / (100 (n - i)) grows with i, so the last arrival ranks first
    ranked = pri.rank(jobs, float(n + 1), index)
    assert isinstance(ranked, RankedQueue)
    assert [j.id for j in ranked] == list(range(n, 0, -1))
    index = QueueIndex(jobs)
    for job in jobs[:-1]:
        index.add(job)
    short = pri.rank(jobs[:-1], float(n + 1), index)
    assert isinstance(short, list)
    assert [j.id for j in short] == list(range(n - 1, 0, -1))
