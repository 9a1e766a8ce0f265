"""The one queue order, ``Priority.order(queue, now, index)``, with and without the index.

With the engine's :class:`~o2ksim.engine.queue_index.QueueIndex` the requests
are read from its columns and the result is a ``RankedQueue`` of rows (what the
backfill scan takes); without it they are gathered from the jobs.  Both must
give the same jobs in the same order -- ties (equal scores) in queue order
included -- and the order itself must be the weighted sum of T Table 13
computed here by hand (``order`` is also checked against hand-computed scores
in ``test_backfill_family.py``).
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim.engine.queue_index import QueueIndex
from o2ksim.jobs import Job, JobSpec
from o2ksim.policies.priority import RankedQueue, make_priority

KB_PER_GB = 1024 * 1024


@st.composite
def queues(draw):
    """Jobs of a run (few distinct values, so equal scores are common), a waiting subset
    in queue (= arrival) order, and a time after every submission."""
    n = draw(st.integers(2, 72))
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
def test_order_over_the_index_equals_order_of_the_jobs_and_the_hand_sum(case, spec):
    jobs, queue, now = case
    index = QueueIndex(jobs)
    for job in queue:
        index.add(job)
    pri = make_priority(spec)
    expected = [j.id for j in pri.order(queue, now)]
    # highest hand-computed priority first (scores equal up to rounding may go either way)
    hand = [_by_hand(spec, j, now) for j in pri.order(queue, now)]
    assert all(a >= b - 1e-9 * max(1.0, abs(a)) for a, b in itertools.pairwise(hand))
    ranked = pri.order(queue, now, index)
    assert [j.id for j in ranked] == expected
    if isinstance(ranked, RankedQueue):  # the rows handed to the indexed scan agree too
        assert [index.jobs[r].id for r in ranked.rows.tolist()] == expected
        assert [j.id for j in ranked[1:3]] == expected[1:3]
        assert ranked[len(ranked) - 1].id == expected[-1]


def test_an_index_of_another_queue_is_not_used():
    jobs = [Job(JobSpec(i, 0.0, 1, 0, 10.0 * i, 10.0)) for i in range(1, 5)]
    pri = make_priority("lxf")
    # an index that does not describe this queue (other length) is not used
    index = QueueIndex(jobs)
    index.add(jobs[0])
    assert [j.id for j in pri.order(jobs, 100.0, index)] == [1, 2, 3, 4]


def test_a_long_queue_over_the_index_is_a_ranked_queue_of_rows():
    n = 25
    jobs = [Job(JobSpec(i, float(i), 1, 0, 100.0 * (n - i), 1.0)) for i in range(1, n + 1)]
    index = QueueIndex(jobs)
    for job in jobs:
        index.add(job)
    pri = make_priority("lxf")
    # at now = n + 1 every job has waited n + 1 - i s for a request of 100 (n - i) s:
    # Jx = 1 + (n + 1 - i) / (100 (n - i)) grows with i, so the last arrival ranks first
    ranked = pri.order(jobs, float(n + 1), index)
    assert isinstance(ranked, RankedQueue)
    assert [j.id for j in ranked] == list(range(n, 0, -1))


def _by_hand(spec, job, now):
    """The T Table 13 weighted sum of ``job`` at ``now``, term by term."""
    w = {"x": 1.0} if spec == "lxf" else spec
    s = job.spec
    jw = (now - s.submit) / 3600.0
    req = max(s.req_time, 1.0)
    jx = (now - s.submit + req) / req
    jm = s.mem / (358.4 * 1024)
    terms = {"w": jw, "x": jx, "p": s.procs, "m": jm, "pe": max(s.procs, jm)}
    return sum(w.get(k, 0.0) * v for k, v in terms.items())
