"""Quiet ``--interval`` stretches in which no waiting job fits any host.

Whatever the order, a pass that finds no waiting job fitting the free
processors and memory of any host starts nothing and, with dynamic
reservations (backfill) or a search that it then skips (goal-oriented),
keeps nothing either: every pass on the same state returns the same nothing
until an event.  So priority functions and the goal-oriented policies, whose
passes otherwise read time, skip such stretches.  Expected values: hand
computations here; the same run ticking through every interval
(``Scheduler.skip_ticks`` off), which does not use the guarantee, in
``test_interval_quiet.py`` (``NOTHING_FITS``).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import job, one_host
from test_interval_quiet import by_wait_mod_7, placed, run

from o2ksim.policies.backfill import Backfill


def widest_first(q):
    """A priority function: the widest job first, ties reordered by the wait every second."""
    return 10.0 * q.procs + (q.wait % 7.0)


def test_a_priority_function_skips_while_nothing_fits():
    # 4 processors, a pass every second.  A (3 procs, runs 10^9 s) starts at 0; B (2
    # procs, 10 s) arrives at 5 and does not fit the one free processor.  By hand: passes
    # at 0 (A starts), 1 (nothing fits: skip to B's arrival), 5 (B waits: nothing fits,
    # skip to the next event), 10^9 (A has left: B starts), 10^9 + 1 (nothing waits);
    # B ends at 10^9 + 10, which ends the run.
    policy = Backfill(priority=by_wait_mod_7)
    sim, at = run(one_host(4), [job(1, 0, 3, 2e9, 1e9), job(2, 5, 2, 20, 10)], policy, 1.0)
    assert at == [0.0, 1.0, 5.0, 1e9, 1e9 + 1]
    assert placed(sim) == [(1, "m", 0.0, 1e9), (2, "m", 1e9, 1e9 + 10)]


@pytest.mark.parametrize("params", [{}, {"search": "dds+local", "local_warm": True}])
def test_a_goal_oriented_policy_skips_while_nothing_fits(params):
    # the same two jobs under the goal-oriented search: by hand, the same passes (the
    # search runs only when some job fits now)
    sim, at = run(one_host(4), [job(1, 0, 3, 2e9, 1e9), job(2, 5, 2, 20, 10)],
                  _goal(params), 1.0)  # fmt: skip
    assert at == [0.0, 1.0, 5.0, 1e9, 1e9 + 1]
    assert placed(sim) == [(1, "m", 0.0, 1e9), (2, "m", 1e9, 1e9 + 10)]


def _goal(params):
    from o2ksim.policies.base import make_policy

    return make_policy("goal", **params)


def test_a_job_that_fits_but_is_held_back_gets_no_promise_from_a_function():
    # 4 processors, widest first.  A (3 procs, requests and runs 300) starts at 0; H (4
    # procs) arrives at 1 and is reserved at 300; C (1 proc, requests 1000) arrives at 2:
    # it fits the free processor but would delay H, so it waits.  Something fits, and the
    # order is a function (of time, for all the policy knows): no promise, a pass at every
    # tick until A leaves at 300, where H starts (300-400), then C (400-1400).
    jobs = [job(1, 0, 3, 300), job(2, 1, 4, 100), job(3, 2, 1, 1000)]
    sim, at = run(one_host(4), jobs, Backfill(priority=widest_first), 1.0)
    assert at[: 301] == [float(t) for t in range(0, 301)]
    assert placed(sim) == [(1, "m", 0.0, 300.0), (2, "m", 300.0, 400.0), (3, "m", 400.0, 1400.0)]




def test_the_function_is_a_real_reordering():
    # the priority above does reorder: two jobs of one size swap places within 7 s
    from o2ksim.policies.queue_view import QueueView

    cols = [np.array([0.0, 3.0]), np.array([10.0, 10.0]), np.array([1, 1]), np.array([0, 0])]
    first = by_wait_mod_7(QueueView([None, None], 5.0, cols))  # type: ignore[list-item]
    later = by_wait_mod_7(QueueView([None, None], 8.0, cols))  # type: ignore[list-item]
    assert (first[0] > first[1]) != (later[0] > later[1])
