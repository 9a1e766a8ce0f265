"""The goal-oriented search with thousands of waiting jobs (issue 27, D18).

A path of the search tree is as deep as the queue is long (G§2.4: a depth-``i``
node has placed ``i`` jobs), and the first path is always completed, whatever
the node limit.  The search walked the tree by recursion, one Python frame per
depth, so about 1,000 waiting jobs crashed every goal-oriented policy with
``RecursionError``.  These decision points have 1,500 waiting jobs.

Expected values are hand computations: ``N`` one-processor jobs of 10 s, all
submitted at 0, on one free one-processor host.  Every order is the same
schedule up to the names: the ``i``-th job placed starts at ``10 i``.  The
jobs are alike, so LXF branching ranks them in queue order (ties in queue
order) and the first path is FCFS: job ``k`` (queue position ``k``) at
``10 k``, and only the first job starts now.
"""

from __future__ import annotations

import sys

import pytest

from o2ksim.engine.decisions import Start
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobSpec
from o2ksim.machine import HostSpec, MachineSpec
from o2ksim.policies import make_policy
from o2ksim.policies.goal.objectives import Objective
from o2ksim.policies.goal.search import Planner

N = 1500
RUN = 10.0


def test_the_queue_is_deeper_than_the_recursion_limit() -> None:
    # the point of this module: a recursive walk would need more frames than Python allows
    assert sys.getrecursionlimit() < N


def _planner() -> Planner:
    return Planner(0.0, [([0.0], [1], [0.0])], [(1, 0.0)], [0.0] * N, [RUN] * N, [1] * N, [0.0] * N)


@pytest.mark.parametrize("method", ["dds", "lds"])
@pytest.mark.parametrize("model", ["tradeoff", "lexical"])
def test_search_of_a_deep_queue(method: str, model: str) -> None:
    planner = _planner()
    before = [(list(t), list(p), list(m)) for t, p, m in planner.profiles]
    # the first path (N visits) and a few nodes of the next iteration, then the limit
    r = planner.search(Objective(model, "tw", "avgx"), list(range(N)), method, limit=N + 5)
    assert r.order == list(range(N))  # the heuristic's path: no later one is better
    assert r.starts == [RUN * i for i in range(N)]
    assert r.hosts == [0] * N
    assert r.visits == N + 5 and r.leaves == 1 and not r.complete
    # every node still on the path when the limit stopped the walk was taken off again
    assert [(list(t), list(p), list(m)) for t, p, m in planner.profiles] == before


@pytest.mark.parametrize("method", ["dds", "lds"])
def test_compiled_search_of_a_deep_queue(method: str) -> None:
    # the compiled search (an explicit stack from the start) decides the same
    pytest.importorskip("numba")
    from o2ksim.policies.goal import kernel

    r = kernel.search(
        _planner(), Objective("tradeoff", "tw", "avgx"), list(range(N)), method, N + 5
    )
    assert r.order == list(range(N))
    assert r.starts == [RUN * i for i in range(N)]
    assert r.visits == N + 5 and r.leaves == 1 and not r.complete


# one preset of each family: Eq-Tradeoff and Lexical over DDS, the climb (dds+local; its
# restart, warm start and kicks each search again with limit 1: a whole path), LDS
FAMILIES = [
    ("tradeoff-tw-avgx", {}),
    ("lexical-maxw-avgx", {}),
    ("tradeoff-tw-avgx-climb", {"local_budget": 20}),  # the preset climbs warm
    ("tradeoff-tw-avgx-climb", {"local_budget": 20, "local_warm": False}),
    ("tradeoff-tw-avgx-climb", {"local_budget": 20, "local_warm": False, "local_restart": True}),
    ("tradeoff-tw-avgx-climb", {"local_budget": 20, "local_warm": False, "local_kind": "ils"}),
    ("tradeoff-tw-avgx", {"search": "lds"}),
]


@pytest.mark.parametrize(("preset", "params"), FAMILIES)
def test_policy_decides_with_a_deep_queue(preset: str, params: dict) -> None:
    machine = MachineSpec("one", (HostSpec("h", 1),))
    policy = make_policy(preset, limit=N + 5, search_kernel="python", **params)
    policy.bind(machine)
    queue = [Job(JobSpec(k + 1, 0.0, 1, 0, RUN, RUN)) for k in range(N)]
    host = HostView(machine.hosts[0], 1, machine.hosts[0].memory, (), ())
    snap = Snapshot(0.0, queue, (host,), {"h": host}, machine)
    decisions = policy.schedule(snap)
    assert [(type(d), d.job.id, d.host) for d in decisions] == [(Start, 1, "h")]
    assert policy.stats()["goal_searches"] == 1
    assert policy.stats()["goal_visits"] >= N
