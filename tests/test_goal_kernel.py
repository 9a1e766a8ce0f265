"""The compiled goal search (o2ksim.policies.goal.kernel) makes every decision the Python search makes.

Skipped as a whole when numba (the optional extra ``[fast]``) is not installed.
The expected values come from the Python search, :meth:`Planner.search` (itself
checked against a brute force in ``tests/test_goal_search_exact.py``), and from
that module's independent reference: the paper's Fig. 1 visit order (G§2.4)
and schedules evaluated from scratch.

* random decision points (hypothesis; the exactness harness's generator, with
  binding and non-binding node limits): order, starts, hosts, measures and the
  counts of visits, schedules and prunes equal, the planner's profiles left
  unchanged, and the whole tree's winner is the brute force's;
* larger synthetic trees (up to 30 waiting jobs) at L = 1,000-8,000;
* Fig. 1's four-job tree: at every node limit that ends on a leaf of the
  paper's visit order, the kernel has seen exactly the leaves before it and
  holds the best of them;
* runs: the policy with ``search_kernel=numba`` and ``python`` gives the same
  start, end and host for every job, on a synthetic two-host workload and on
  pieces of KTH-SP2 and SDSC-Par (``../shared/traces``, skipped when absent).
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_goal_search_exact import (
    BIG,
    MACHINE,
    Point,
    _discrepancies,
    _workload,
    check_against_brute_force,
    points,
    reference_measures,
    reference_schedule,
    visit_order,
)

from o2ksim import simulate
from o2ksim.policies.goal import GoalOriented, kernel
from o2ksim.policies.goal.objectives import Objective
from o2ksim.policies.goal.search import Planner, SearchResult

pytest.importorskip("numba")  # the optional extra [fast]

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "traces"


def _key(r: SearchResult) -> tuple:
    return (r.order, r.starts, r.hosts, r.measures, r.visits, r.leaves, r.pruned, r.complete)


def _both(planner: Planner, ob: Objective, heuristic: list[int], method: str, limit: int,
          prune: bool) -> tuple[SearchResult, SearchResult]:  # fmt: skip
    before = copy.deepcopy(planner.profiles)
    k = kernel.search(planner, ob, heuristic, method, limit, prune)
    assert planner.profiles == before, "the kernel must not change the planner's profiles"
    return planner.search(ob, heuristic, method, limit, prune), k


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points(), st.sampled_from([1, 2, 3, 5, 10, 40, BIG]))
def test_kernel_equals_python_search_on_random_decision_points(point: Point, limit: int) -> None:
    point.limit = limit
    planner = point.planner()
    ob = point.make_objective(planner)
    py, k = _both(planner, ob, point.heuristic, point.method, limit, point.prune)
    assert _key(k) == _key(py)
    if limit == BIG:
        check_against_brute_force(point, k)


def _synthetic(seed: int, n_wait: int) -> tuple[Planner, list[int]]:
    """30-ish waiting jobs, 40 running on 100 processors (as ``benchmarks/goal_speed.py``)."""
    rng = np.random.default_rng(seed)
    now, cap = 1_000_000.0, 100
    procs_run = rng.choice([1, 1, 2, 4, 8], 40)
    while procs_run.sum() > cap:
        procs_run = procs_run[:-1]
    ends = np.sort(now + np.round(rng.exponential(4 * 3600, len(procs_run)), -2))  # ties on purpose
    times, free = [now], [cap - int(procs_run.sum())]
    for e, p in zip(ends, procs_run, strict=True):
        if e == times[-1]:
            free[-1] += int(p)
        else:
            times.append(float(e))
            free.append(free[-1] + int(p))
    submit = now - np.round(rng.exponential(3 * 3600, n_wait), -1)
    runtime = np.round(np.maximum(rng.lognormal(7.5, 1.8, n_wait), 1.0), -1)
    procs = rng.choice([1, 1, 2, 4, 8, 16, 32, 64], n_wait)
    pl = Planner(now, [(times, free, [float("inf")] * len(times))], [(cap, float("inf"))],
                 submit.tolist(), runtime.tolist(), procs.tolist(), [0.0] * n_wait)  # fmt: skip
    lxf = sorted(range(n_wait), key=lambda j: -(pl.lb_wait[j] + pl.runtime[j]) / max(pl.runtime[j], 1.0))
    return pl, lxf


OBJECTIVES = [
    ("tradeoff", "tw", "avgx", "A", 0.01),
    ("lexical", "tw", "avgx", "A", 0.01),
    ("tradeoff", "maxw", "avgx", "B", 0.0),
    ("tradeoff", "avgw", "tw", "C", 0.01),
    ("lexical", "avgx", "maxw", "A", 0.0),
]


@pytest.mark.parametrize("method", ["dds", "lds"])
@pytest.mark.parametrize("objective", OBJECTIVES, ids=lambda o: "-".join(map(str, o)))
def test_kernel_equals_python_search_on_large_trees(method: str, objective: tuple) -> None:
    for seed, n_wait, limit in [(1, 30, 1000), (2, 12, 4000), (3, 25, 8000), (4, 6, 8000)]:
        pl, lxf = _synthetic(seed, n_wait)
        model, x, y, version, slack = objective
        ob = Objective(model, x, y, version, slack)
        ob.start_epoch(pl.max_wait_now, (40_000.0, 3.0) if version == "C" else None)
        for prune in (True, False):
            py, k = _both(pl, ob, lxf, method, limit, prune)
            assert _key(k) == _key(py), (seed, prune)


@pytest.mark.parametrize("method", ["lds", "dds"])
def test_kernel_follows_fig1_visit_order(method: str) -> None:
    """G Fig. 1's tree of four jobs: leaf by leaf, the kernel sees the paper's schedules in order.

    Node visits before each leaf follow from the reference visit order alone:
    within an iteration the paths are walked left to right, and a path costs one
    visit per node below the deepest node it shares with the previous path of
    the iteration (no pruning).  Stopped at exactly that many visits, the
    kernel has evaluated exactly the leaves up to this one, and holds the best
    of them (``better`` folded over them in the paper's order).
    """
    heuristic = [0, 1, 2, 3]
    # four jobs on 4 processors with different sizes, runtimes and waits, so that
    # the orders' measures differ and the best so far changes along the way
    jobs = [(-300.0, 600.0, 2, 0.0), (-100.0, 120.0, 3, 0.0), (-50.0, 3000.0, 1, 0.0),
            (-400.0, 60.0, 4, 0.0)]  # fmt: skip
    profiles = [([0.0, 200.0], [3, 4], [0.0, 0.0])]
    capacity = [(4, 0.0)]
    planner = Planner(0.0, copy.deepcopy(profiles), capacity, *[list(c) for c in zip(*jobs, strict=True)])
    ob = Objective("tradeoff", "tw", "avgx", "B", 0.0)
    ob.start_epoch(planner.max_wait_now)
    order = visit_order(heuristic, method)

    def iteration(p: tuple[int, ...]) -> int:
        c = _discrepancies(p, heuristic)
        if method == "lds":
            return sum(1 for x in c if x)
        return max((d + 1 for d, x in enumerate(c) if x), default=0)

    visits, best, winner, changes = 0, None, None, 0
    for i, perm in enumerate(order):
        c = _discrepancies(perm, heuristic)
        if i and iteration(order[i - 1]) == iteration(perm):
            prev = _discrepancies(order[i - 1], heuristic)
            shared = next(d for d in range(4) if prev[d] != c[d])
        else:
            shared = 0
        visits += 4 - shared
        starts, _ = reference_schedule(0.0, profiles, capacity, jobs, perm)
        m = reference_measures(0.0, jobs, perm, starts, None)
        cand = (m[ob.ix], m[ob.iy])
        if best is None or ob.better(best, cand):
            best, winner = cand, perm
            changes += 1
        k = kernel.search(planner, ob, heuristic, method, visits, prune=False)
        assert (k.leaves, k.visits) == (i + 1, visits), perm
        assert tuple(k.order) == winner, perm
        assert k.complete == (i == len(order) - 1)
    assert changes >= 3, "the example must make the best so far change"
    assert len(order) == len(list(itertools.permutations(heuristic)))


def _same_runs(workload: object, machine: object, params: dict, **kw: object) -> int:
    """Run the policy with each search; every job's start, end and host must agree."""
    out = []
    for which in ("numba", "python"):
        pol = GoalOriented(search_kernel=which, **params)
        r = simulate(workload, machine, pol, **kw)
        c = pol.stats()
        assert c[f"goal_searches_{which}"] == c["goal_searches"] > 0
        out.append(r.jobs.sort_values("job_id")[["job_id", "start", "end", "host"]].reset_index(drop=True))
    assert out[0].equals(out[1])
    return int(c["goal_searches"])


@pytest.mark.parametrize("params", [
    {"model": "tradeoff", "measures": "tw,avgx", "limit": 4000},
    {"model": "lexical", "measures": "tw,avgx", "branching": "fcfs", "limit": 300},
    {"model": "tradeoff", "measures": "maxw,avgx", "version": "B", "search": "lds", "limit": 4000},
    {"model": "tradeoff", "measures": "tw,avgw", "version": "C", "limit": 50},
    {"model": "tradeoff", "measures": "tw,avgx", "search": "dds+local", "limit": 5, "local_budget": 300},
    {"model": "lexical", "measures": "tw,avgx", "search": "lds+local", "limit": 20, "local_budget": 2000},
    {"model": "tradeoff", "measures": "tw,avgx", "search": "dds+local", "limit": 5, "local_budget": 800,
     "local_restart": True},
    {"model": "tradeoff", "measures": "tw,avgx", "search": "dds+local", "branching": "fcfs", "limit": 3,
     "local_budget": 300, "local_restart": True},
    {"model": "tradeoff", "measures": "tw,avgx", "search": "dds+local", "limit": 5, "local_budget": 800,
     "local_warm": True},
    {"model": "tradeoff", "measures": "tw,avgx", "search": "dds+local", "limit": 5, "local_budget": 800,
     "local_kind": "ils"},
    {"model": "lexical", "measures": "tw,avgx", "search": "dds+local", "limit": 3, "local_budget": 500,
     "local_kind": "ils", "local_kick": 3},
    {"model": "tradeoff", "measures": "tw,avgx", "search": "dds+local", "limit": 5, "local_budget": 800,
     "local_kind": "last"},
    {"model": "tradeoff", "measures": "maxw,avgx", "search": "dds+local", "limit": 3, "local_budget": 600,
     "local_kind": "ils-last"},
])  # fmt: skip
def test_runs_are_job_for_job_identical_on_two_hosts(params: dict) -> None:
    assert _same_runs(_workload(7, 120), MACHINE, params) > 0


@pytest.mark.traces
@pytest.mark.parametrize("trace, first, params", [
    ("KTH-SP2-1996-2.1-cln.swf.gz", 6000, {"model": "tradeoff", "measures": "tw,avgx", "limit": 1000}),
    ("KTH-SP2-1996-2.1-cln.swf.gz", 12000, {"model": "lexical", "measures": "tw,avgx", "search": "lds",
                                            "limit": 1000}),
    ("SDSC-Par-1996-3.1-cln.swf.gz", 20000, {"model": "tradeoff", "measures": "maxw,avgx",
                                             "branching": "fcfs", "limit": 1000}),
])  # fmt: skip
def test_trace_pieces_are_job_for_job_identical(trace: str, first: int, params: dict) -> None:
    """300 consecutive jobs of a trace at twice their arrival rate (so that queues form)."""
    path = SHARED / trace
    if not path.exists():
        pytest.skip("needs ../shared/traces")
    from o2ksim.run.workload import load_workload

    tr = load_workload(str(path))
    jobs = tr.jobs.iloc[first : first + 300].copy()
    jobs["submit"] = jobs["submit"].iloc[0] + (jobs["submit"] - jobs["submit"].iloc[0]) / 2
    piece = type(tr)(jobs=jobs.reset_index(drop=True), header=tr.header)
    assert _same_runs(piece, None, params, estimates="actual") > 50
