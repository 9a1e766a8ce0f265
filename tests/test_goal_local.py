"""The hill climb after the discrepancy search (``search = "dds+local"``, issue 26).

Expected values come from a hand computation (a two-job decision point where
one swap improves the objective), from the exactness harness's independent
evaluation of a schedule from scratch (``reference_schedule``,
``reference_measures``) and, for the compiled climb, from the Python one.

* random decision points (hypothesis): every schedule the climb accepts is
  better (:meth:`Objective.better`) than the one it replaces, so the result is
  the DDS start or better than the schedule it replaced; its starts, hosts and
  measures are those of its order evaluated from scratch; the profiles are
  left unchanged; under a transitive objective (strict Lexical) the result is
  better than the start or is the start;
* the compiled climb returns the Python one's result and counts, and so does
  the compiled search and climb run on one copy of the profiles' arrays;
* the warm start (``local_warm``): the order carried from the previous
  decision point by hand; from random decision points and random warm orders,
  never worse than the DDS start, a correct schedule, compiled == Python;
* the scan from the last position (``local_kind = "last"``): a three-job case
  by hand, and the property tests above with either scan;
* the iterated climb (``local_kind = "ils"``): its generator against the C
  standard's example ``rand`` (ISO C 7.22.2.2: from seed 1 it returns 16838,
  5758, 10113, 17515), a kick and the two-job case by hand; from random
  decision points, each schedule that replaces the best is better than it,
  the result a correct schedule of its order within the budget, the same on a
  second call, compiled == Python;
* the policy parameter: bad values refused, a run with ``dds+local``.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_goal_search_exact import BIG, Point, points, reference_measures, reference_schedule

from o2ksim.errors import O2KSimError
from o2ksim.policies.goal import GoalOriented, kernel
from o2ksim.policies.goal.local import (
    improve,
    improve_ils,
    improve_restart,
    improve_warm,
    kick,
    lcg,
    neighbour,
    warm_order,
)
from o2ksim.policies.goal.objectives import Objective
from o2ksim.policies.goal.search import Planner


def assert_schedule_of_its_order(point: Point, r) -> None:  # type: ignore[no-untyped-def]
    """The result's starts, hosts and measures are its order's, evaluated from scratch by
    the exactness harness (an independent implementation)."""
    starts, hosts = reference_schedule(point.now, point.profiles, point.capacity, point.jobs, r.order)
    assert (r.starts, r.hosts) == (starts, hosts)
    ref = reference_measures(point.now, point.jobs, r.order, starts, point.omega)
    assert r.measures == pytest.approx(ref, rel=1e-12, abs=1e-9)


def assert_same_result(planner: Planner, before, k, r) -> None:  # type: ignore[no-untyped-def]
    """The compiled result ``k`` equals the Python one ``r`` (order, schedule, measures and
    counts) and left the planner's profiles as they were (``before``)."""
    assert planner.profiles == before
    assert (k.order, k.starts, k.hosts, k.measures, k.visits, k.leaves, k.pruned) == (
        r.order, r.starts, r.hosts, r.measures, r.visits, r.leaves, r.pruned)  # fmt: skip


def test_neighbours_swap_and_move_forward() -> None:
    assert neighbour([5, 6, 7, 8], 1, 3, 0) == [8, 7, 6]
    assert neighbour([5, 6, 7, 8], 1, 3, 1) == [8, 6, 7]
    assert neighbour([5, 6, 7, 8], 0, 1, 0) == [6, 5, 7, 8]


def test_one_swap_improves_by_hand() -> None:
    """One processor, free now (t = 0); A and B both waited 100 s, A runs 1,000 s, B 60 s.

    Order [A, B]: A starts 0 (wait 100), B 1,000 (wait 1,100).  Threshold = the
    oldest wait, 100 s: Tw = 0 + 1,000 = 1,000; avgX = ((100 + 1000)/1000 +
    (1100 + 60)/60) / 2 = (1.1 + 19.3333) / 2 = 10.21667.
    Swapped, [B, A]: B starts 0 (wait 100), A 60 (wait 160): Tw = 0 + 60 = 60,
    avgX = ((100 + 60)/60 + (160 + 1000)/1000) / 2 = (2.66667 + 1.16) / 2 = 1.91333.
    Both measures improve, so the swap wins under A-Tradeoff(Tw:avgX); swapping
    back is worse, so the climb ends there.  Visits: pass 1 evaluates the swap
    (2 placements), then from [B, A] the swap back (2), then places position 0
    (1); pass 2 the swap back again (2) and position 0 (1): 8; 3 schedules.
    """
    planner = Planner(0.0, [([0.0], [1], [0.0])], [(1, 0.0)], [-100.0, -100.0], [1000.0, 60.0],
                      [1, 1], [0.0, 0.0])  # fmt: skip
    ob = Objective("tradeoff", "tw", "avgx")
    ob.start_epoch(planner.max_wait_now)
    start = planner.search(ob, [0, 1], "dds", limit=1)  # the first path only: [A, B]
    assert start.order == [0, 1]
    assert start.measures[0] == pytest.approx(1000.0)
    assert start.measures[3] == pytest.approx((1.1 + 1160 / 60) / 2)
    before = copy.deepcopy(planner.profiles)
    r = improve(planner, ob, start, budget=100)
    assert planner.profiles == before
    assert r.order == [1, 0]
    assert r.starts == [0.0, 60.0]
    assert r.measures[0] == pytest.approx(60.0)
    assert r.measures[3] == pytest.approx((160 / 60 + 1.16) / 2)
    assert (r.visits - start.visits, r.leaves - start.leaves) == (8, 3)
    # a budget of one placement cannot finish the swap: the start is kept
    assert improve(planner, ob, start, budget=1).order == [0, 1]
    if kernel.AVAILABLE:
        from o2ksim.policies.goal import kernel_local

        k = kernel_local.improve(planner, ob, start, budget=100)
        assert (k.order, k.starts, k.measures, k.visits, k.leaves) == (
            r.order, r.starts, r.measures, r.visits, r.leaves)  # fmt: skip


def test_scan_from_the_last_position_by_hand() -> None:
    """One processor free now; A, B, C waited 100 s (the threshold), run 1,000, 600 and
    60 s; strict Lexical(Tw -> avgX); the start is [A, B, C]: excess waits 0, 1,000,
    1,600, Tw = 2,600.

    Scanning from the last position (``last``), pass 1 places A, B (2 visits), takes B
    off and swaps positions 1, 2: [A, C, B], Tw = 1,000 + 1,060 = 2,060, better (2
    visits); the swap back (2) is not.  At p = 0: [C, A, B], Tw = 60 + 1,060 = 1,120,
    better (3); then [A, C, B] 2,060, [B, A, C] 600 + 1,600 and [B, C, A] 600 + 660 are
    not (3 each): 18 visits, 6 schedules.  Pass 2 from [C, A, B]: prefix 2; p = 1:
    [C, B, A], Tw = 60 + 660 = 720, better (2), the swap back not (2); p = 0: [B, C, A]
    1,260 not (3), [A, B, C] and [A, C, B] pruned after two jobs (Tw bound 1,000 >= 720;
    2 each): 13 visits, 3 schedules, 2 pruned.  Pass 3 finds nothing (2 + 2 + 3 + 2 +
    2 = 11 visits, 2 schedules, 2 pruned): [C, B, A] after 42 visits, 11 schedules.

    With a budget of 6 visits the two scans part: from the last position [A, C, B]
    (Tw 2,060: 2 + 2 visits, then the swap back); from the first, [B, A, C] (B at 0, A
    at 600, C at 1,600: Tw 2,200; 3 visits), then the swap back (3)."""
    planner = Planner(0.0, [([0.0], [1], [0.0])], [(1, 0.0)], [-100.0] * 3, [1000.0, 600.0, 60.0],
                      [1] * 3, [0.0] * 3)  # fmt: skip
    ob = Objective("lexical", "tw", "avgx", "A", 0.0)
    ob.start_epoch(planner.max_wait_now)
    start = planner.search(ob, [0, 1, 2], "dds", limit=1)
    assert (start.order, start.measures[0]) == ([0, 1, 2], 2600.0)
    cases = [(True, 100, [2, 1, 0], [0.0, 60.0, 660.0], 720.0, (42, 11, 4)),
             (True, 6, [0, 2, 1], [0.0, 1000.0, 1060.0], 2060.0, (6, 2, 0)),
             (False, 6, [1, 0, 2], [0.0, 600.0, 1600.0], 2200.0, (6, 2, 0))]  # fmt: skip
    for last, budget, order, starts, tw, counts in cases:
        r = improve(planner, ob, start, budget, last=last)
        assert (r.order, r.starts, r.measures[0]) == (order, starts, tw)
        assert (r.visits - start.visits, r.leaves - start.leaves, r.pruned - start.pruned) == counts
        if kernel.AVAILABLE:
            from o2ksim.policies.goal import kernel_local

            k = kernel_local.improve(planner, ob, start, budget, last=last)
            assert (k.order, k.starts, k.measures, k.visits, k.leaves, k.pruned) == (
                r.order, r.starts, r.measures, r.visits, r.leaves, r.pruned)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points(), st.sampled_from([1, 2, 5]), st.sampled_from([1, 3, 10, 60, BIG]), st.booleans())
def test_climb_never_returns_worse_than_its_start(point: Point, limit: int, budget: int,
                                                  last: bool) -> None:  # fmt: skip
    """Either scan (``last``: from the last position)."""
    point.limit = limit
    planner = point.planner()
    ob = point.make_objective(planner)
    start = planner.search(ob, point.heuristic, point.method, limit, point.prune)
    before = copy.deepcopy(planner.profiles)
    trail = [(list(start.order), start.measures)]

    def accepted(order: list[int], m: tuple[float, float, float, float]) -> None:
        prev = trail[-1][1]
        assert ob.better((prev[ob.ix], prev[ob.iy]), (m[ob.ix], m[ob.iy])), "accepted a non-better"
        trail.append((order, m))

    r = improve(planner, ob, start, budget, point.prune, on_accept=accepted, last=last)
    assert planner.profiles == before, "the climb must leave the profiles as it found them"
    if last and not start.complete:  # no settled position charged past the budget
        assert r.visits <= start.visits + budget
    assert sorted(r.order) == list(range(len(point.jobs)))
    assert (r.order, r.measures) == (trail[-1][0], trail[-1][1])
    if start.complete:
        assert r is start  # the whole tree was searched: nothing to climb
    assert_schedule_of_its_order(point, r)
    model, _, _, _, slack = point.objective
    if model == "lexical" and slack == 0 and r.order != start.order:
        # strict Lexical is a transitive order: the climb's end beats its start
        assert ob.better((start.measures[ob.ix], start.measures[ob.iy]),
                         (r.measures[ob.ix], r.measures[ob.iy]))  # fmt: skip
    if kernel.AVAILABLE:
        from o2ksim.policies.goal import kernel_local

        k = kernel_local.improve(planner, ob, start, budget, point.prune, last)
        assert_same_result(planner, before, k, r)
        # search and climb on one copy of the arrays: the DDS leaves them as it found them
        b = kernel_local.search_improve(planner, ob, point.heuristic, point.method, limit, budget,
                                        point.prune, last=last)  # fmt: skip
        assert_same_result(planner, before, b, r)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points(), st.sampled_from([1, 2, 5]), st.sampled_from([1, 3, 10, 60, BIG]), st.randoms())
def test_restart_never_worse_than_the_first_climb(point: Point, limit: int, budget: int, rnd) -> None:  # type: ignore[no-untyped-def]
    """``local_restart``: the result is the plain climb's or one better than it, a
    correct schedule of its order, within the budget; compiled == Python."""
    point.limit = limit
    planner = point.planner()
    ob = point.make_objective(planner)
    other = list(range(len(point.jobs)))
    rnd.shuffle(other)
    start = planner.search(ob, point.heuristic, point.method, limit, point.prune)
    before = copy.deepcopy(planner.profiles)
    first = improve(planner, ob, start, budget, point.prune)
    r = improve_restart(planner, ob, start, other, budget, point.prune)
    assert planner.profiles == before
    assert sorted(r.order) == list(range(len(point.jobs)))
    # each climb may place one settled prefix position past its budget (the budget is
    # checked before a neighbour's placements): two climbs, at most two over
    assert r.visits <= start.visits + budget + 2
    if r.order != first.order:
        assert ob.better((first.measures[ob.ix], first.measures[ob.iy]),
                         (r.measures[ob.ix], r.measures[ob.iy]))  # fmt: skip
    else:
        assert r.measures == first.measures
    assert_schedule_of_its_order(point, r)
    if kernel.AVAILABLE:
        from o2ksim.policies.goal import kernel_local

        k = kernel_local.search_improve(planner, ob, point.heuristic, point.method, limit, budget,
                                        point.prune, other)  # fmt: skip
        assert_same_result(planner, before, k, r)


def test_restart_skipped_by_hand() -> None:
    """The two-job point of ``test_one_swap_improves_by_hand``: the first climb turns
    [A, B] into [B, A] in 8 visits.  A restart from [B, A] (the first climb's end) or
    from [A, B] (the start) would repeat a climb, so none runs: the same result and
    counts as the plain climb."""
    planner = Planner(0.0, [([0.0], [1], [0.0])], [(1, 0.0)], [-100.0, -100.0], [1000.0, 60.0],
                      [1, 1], [0.0, 0.0])  # fmt: skip
    ob = Objective("tradeoff", "tw", "avgx")
    ob.start_epoch(planner.max_wait_now)
    start = planner.search(ob, [0, 1], "dds", limit=1)
    for other in ([1, 0], [0, 1]):
        r = improve_restart(planner, ob, start, other, budget=100)
        assert (r.order, r.visits - start.visits, r.leaves - start.leaves) == ([1, 0], 8, 3)


def test_warm_order_by_hand() -> None:
    """Previous best order [c, a, x]; x has started, b and d arrived; the queue is
    [a, b, c, d] and its LXF order [d, b, a, c]: c and a keep their order (positions
    2, 0), then d and b in LXF order (3, 1)."""
    a, b, c, d, x = (object() for _ in range(5))
    assert warm_order([c, a, x], [a, b, c, d], [3, 1, 0, 2]) == [2, 0, 3, 1]
    assert warm_order([], [a, b], [1, 0]) == [1, 0]  # the first decision point: LXF


def test_warm_start_by_hand() -> None:
    """The two-job point of ``test_one_swap_improves_by_hand``.  DDS with L = 1 gives
    [A, B] (Tw 1,000); the warm order [B, A] (Tw 60, avgX 1.913) is better, so the
    climb starts there: its schedule costs 2 visits (1 schedule), the climb from it
    the swap back (2 visits, 1 schedule, worse) and settling position 0 (1 visit),
    then a pass without improvement ends it: [B, A], 5 visits, 2 schedules.  A warm
    order equal to the DDS's is the plain climb (8 visits, 3 schedules)."""
    planner = Planner(0.0, [([0.0], [1], [0.0])], [(1, 0.0)], [-100.0, -100.0], [1000.0, 60.0],
                      [1, 1], [0.0, 0.0])  # fmt: skip
    ob = Objective("tradeoff", "tw", "avgx")
    ob.start_epoch(planner.max_wait_now)
    start = planner.search(ob, [0, 1], "dds", limit=1)
    for warm, visits, leaves in (([1, 0], 5, 2), ([0, 1], 8, 3)):
        r = improve_warm(planner, ob, start, warm, budget=100)
        assert (r.order, r.visits - start.visits, r.leaves - start.leaves) == ([1, 0], visits, leaves)
        assert r.measures[0] == pytest.approx(60.0)
        if kernel.AVAILABLE:
            from o2ksim.policies.goal import kernel_local

            k = kernel_local.search_improve(planner, ob, [0, 1], "dds", 1, 100, warm=warm)
            assert (k.order, k.starts, k.measures, k.visits, k.leaves) == (
                r.order, r.starts, r.measures, r.visits, r.leaves)  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points(), st.sampled_from([1, 2, 5]), st.sampled_from([1, 3, 10, 60, BIG]), st.randoms())
def test_warm_start_never_worse_than_the_search(point: Point, limit: int, budget: int, rnd) -> None:  # type: ignore[no-untyped-def]
    """``local_warm``: the result is the DDS's schedule or one better than it, a correct
    schedule of its order; compiled == Python, order, starts, hosts, measures and counts."""
    point.limit = limit
    planner = point.planner()
    ob = point.make_objective(planner)
    warm = list(range(len(point.jobs)))
    rnd.shuffle(warm)
    start = planner.search(ob, point.heuristic, point.method, limit, point.prune)
    before = copy.deepcopy(planner.profiles)
    r = improve_warm(planner, ob, start, warm, budget, point.prune)
    assert planner.profiles == before
    assert sorted(r.order) == list(range(len(point.jobs)))
    if r.order != start.order:
        # better than the start, or climbed (only better steps) from the warm schedule,
        # itself better than the start
        seed = planner.search(ob, warm, "dds", 1, point.prune).measures
        s0 = (start.measures[ob.ix], start.measures[ob.iy])
        assert ob.better(s0, (r.measures[ob.ix], r.measures[ob.iy])) or ob.better(
            s0, (seed[ob.ix], seed[ob.iy]))
    else:
        assert r.measures == start.measures
    if start.complete:
        assert r is start
    assert_schedule_of_its_order(point, r)
    if kernel.AVAILABLE:
        from o2ksim.policies.goal import kernel_local

        k = kernel_local.search_improve(planner, ob, point.heuristic, point.method, limit, budget,
                                        point.prune, warm=warm)  # fmt: skip
        assert_same_result(planner, before, k, r)


def test_ils_generator_is_the_c_standards_example() -> None:
    """``lcg`` is the recurrence of the C standard's portable ``rand`` example
    (``next = next * 1103515245 + 12345``, returning ``next / 65536 % 32768``), whose
    first outputs from ``srand(1)`` are published: 16838, 5758, 10113, 17515."""
    x = 1
    for expected in (16838, 5758, 10113, 17515):
        x = lcg(x)
        assert (x >> 16) % 32768 == expected


def test_kick_by_hand() -> None:
    """From seed 1: state 1,103,527,590, >> 8 = 4,310,654, which is 2 mod 3, so q = 3 in
    a four-job order; next state 377,401,575 (bc), >> 8 = 1,474,224 = 491,408 * 3, so
    p = 0: the job at position 3 moves to the front.  With two jobs every move swaps."""
    order, seed = kick([5, 6, 7, 8], 1, 1)
    assert (order, seed) == ([8, 5, 6, 7], 377401575)
    assert kick([5, 6], 1, 1)[0] == [6, 5]
    assert kick([5, 6], 1, 2)[0] == [5, 6]


def test_ils_by_hand() -> None:
    """The two-job point of ``test_one_swap_improves_by_hand``, budget 100.  The first climb
    turns [A, B] into [B, A]: 8 visits, 3 schedules.  With two kick moves (two swaps) the
    kick is [B, A] again: its schedule (2 visits, 1 schedule) and a climb from it (the swap
    back, 2 visits and 1 schedule, then position 0 settled, 1 visit) cost 5 visits and 2
    schedules; rounds run while more than n = 2 visits are left: 8 + 5k < 98, 18 rounds,
    98 visits, 3 + 36 schedules.  With one move the kick is [A, B], whose schedule (2
    visits) and climb (the first climb again, 8) cost 10 visits and 4 schedules and end
    at [B, A], not better: 9 rounds, 98 visits, 39 schedules.  The result is [B, A]."""
    planner = Planner(0.0, [([0.0], [1], [0.0])], [(1, 0.0)], [-100.0, -100.0], [1000.0, 60.0],
                      [1, 1], [0.0, 0.0])  # fmt: skip
    ob = Objective("tradeoff", "tw", "avgx")
    ob.start_epoch(planner.max_wait_now)
    start = planner.search(ob, [0, 1], "dds", limit=1)
    for moves in (2, 1):
        r = improve_ils(planner, ob, start, 100, seed=1, moves=moves)
        assert (r.order, r.starts) == ([1, 0], [0.0, 60.0])
        assert (r.visits - start.visits, r.leaves - start.leaves) == (98, 39)
        if kernel.AVAILABLE:
            from o2ksim.policies.goal import kernel_local

            k = kernel_local.search_improve(planner, ob, [0, 1], "dds", 1, 100, ils=(1, moves))
            assert (k.order, k.starts, k.measures, k.visits, k.leaves, k.pruned) == (
                r.order, r.starts, r.measures, r.visits, r.leaves, r.pruned)  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points(), st.sampled_from([1, 2, 5]), st.sampled_from([1, 3, 10, 60, 400]),
       st.integers(0, 2**31 - 1), st.sampled_from([1, 2, 3]), st.booleans())  # fmt: skip
# two points found by hypothesis where a kicked climb replaces the first climb's optimum
@example(Point(1000.0, [([1000.0], [8], [8.0]), ([1000.0], [6], [8.0])], [(8, 8.0), (6, 8.0)],
               [(950.0, 0.0, 1, 8.0), (600.0, 400.0, 3, 2.0), (450.0, 50.0, 6, 6.0),
                (1000.0, 150.0, 4, 4.0), (0.0, 50.0, 1, 4.0), (850.0, 250.0, 3, 1.0)], None,
               [1, 2, 4, 5, 3, 0], ("lexical", "avgw", "tw", "A", 0.0), "lds", BIG, True),
         2, 400, 69300790, 2, False)
@example(Point(1000.0, [([1000.0, 1200.0, 1500.0, 1600.0], [1, 4, 5, 7], [0.0, 2.0, 4.0, 4.0])],
               [(7, 4.0)], [(850.0, 0.0, 2, 3.0), (300.0, 150.0, 4, 1.0), (100.0, 350.0, 4, 2.0),
                            (850.0, 400.0, 6, 4.0)], 300.0,
               [1, 3, 0, 2], ("lexical", "avgx", "maxw", "A", 0.01), "dds", BIG, True),
         2, 400, 22, 2, True)  # fmt: skip
def test_ils_never_worse_than_its_start(point: Point, limit: int, budget: int, seed: int,
                                        moves: int, last: bool) -> None:  # fmt: skip
    """``local_kind = "ils"``: the best is replaced only by a better schedule, starting
    from the first climb's result (itself never worse than the DDS start); a correct
    schedule of its order; within the budget (the last climb may settle one position
    past it); the same result again from the same seed; compiled == Python, order,
    starts, hosts, measures and counts."""
    point.limit = limit
    planner = point.planner()
    ob = point.make_objective(planner)
    start = planner.search(ob, point.heuristic, point.method, limit, point.prune)
    before = copy.deepcopy(planner.profiles)
    first = improve(planner, ob, start, budget, point.prune, last=last)
    trail = [first.measures]

    def replaced(order: list[int], m: tuple[float, float, float, float]) -> None:
        prev = trail[-1]
        assert ob.better((prev[ob.ix], prev[ob.iy]), (m[ob.ix], m[ob.iy])), "kept a non-better"
        trail.append(m)

    r = improve_ils(planner, ob, start, budget, seed, moves, point.prune, on_best=replaced, last=last)
    assert planner.profiles == before
    assert sorted(r.order) == list(range(len(point.jobs)))
    assert r.measures == trail[-1]
    if len(trail) == 1:
        assert (r.order, r.starts, r.hosts) == (first.order, first.starts, first.hosts)
    if start.complete:
        assert r is start
    else:
        assert r.visits <= start.visits + budget + 1
    assert_schedule_of_its_order(point, r)
    again = improve_ils(planner, ob, start, budget, seed, moves, point.prune, last=last)
    assert (again.order, again.measures, again.visits) == (r.order, r.measures, r.visits)
    if kernel.AVAILABLE:
        from o2ksim.policies.goal import kernel_local

        k = kernel_local.search_improve(planner, ob, point.heuristic, point.method, limit, budget,
                                        point.prune, ils=(seed, moves), last=last)  # fmt: skip
        assert_same_result(planner, before, k, r)


def test_policy_parameters() -> None:
    pol = GoalOriented(search="dds+local", limit=100, local_budget=500)
    assert (pol.local, pol.search_method, pol.local_budget) == (True, "dds", 500)
    assert "climb 500" in pol.objective_name
    assert not pol.local_restart
    assert "climb 500 with restart" in GoalOriented(search="dds+local", local_budget=500,
                                                    local_restart=True).objective_name
    assert not GoalOriented(search="lds").local
    with pytest.raises(O2KSimError, match="search"):
        GoalOriented(search="local")
    with pytest.raises(O2KSimError, match="local_budget"):
        GoalOriented(local_budget=-1)
    assert "climb 500 warm" in GoalOriented(search="dds+local", local_budget=500,
                                            local_warm=True).objective_name
    with pytest.raises(O2KSimError, match="local_warm and local_restart"):
        GoalOriented(search="dds+local", local_warm=True, local_restart=True)
    pol = GoalOriented(search="dds+local", local_budget=500, local_kind="ils")
    assert (pol.local_kind, pol.local_kick) == ("ils", 2)
    assert "climb 500 ils (kick 2)" in pol.objective_name
    assert GoalOriented(search="dds+local").local_kind == "first"  # the default climb
    assert "climb 500 last" in GoalOriented(search="dds+local", local_budget=500,
                                            local_kind="last").objective_name
    assert "ils-last (kick 3)" in GoalOriented(search="dds+local", local_kind="ils-last",
                                               local_kick=3).objective_name
    with pytest.raises(O2KSimError, match="does not combine"):
        GoalOriented(search="dds+local", local_kind="last", local_restart=True)
    with pytest.raises(O2KSimError, match="local_kind"):
        GoalOriented(search="dds+local", local_kind="best")
    with pytest.raises(O2KSimError, match="local_kick"):
        GoalOriented(search="dds+local", local_kind="ils", local_kick=0)
    with pytest.raises(O2KSimError, match="does not combine"):
        GoalOriented(search="dds+local", local_kind="ils", local_warm=True)


def test_explain_tells_of_the_climb() -> None:
    from o2ksim.explain import explain

    _, log = explain("explain-backfill", policy="tradeoff-tw-avgx",
                     params={"search": "dds+local", "limit": 2, "local_budget": 50})  # fmt: skip
    text = log.text()
    assert "DDS+LOCAL-LXF, L=2, climb 50" in text
    assert "then a hill climb over the best order" in text
    assert "second climb" not in text
    _, log = explain("explain-backfill", policy="tradeoff-tw-avgx",
                     params={"search": "dds+local", "limit": 2, "local_budget": 50,
                             "local_restart": True})  # fmt: skip
    assert "a second climb from the FCFS order" in log.text()
