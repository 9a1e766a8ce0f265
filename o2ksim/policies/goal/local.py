"""Local search after the systematic one: a hill climb over the start order (issue 26).

The paper suggests "combining systematic and local search" (G§3) as a way to
spend fewer node visits for the same schedule quality.  ``search =
"dds+local"`` (or ``"lds+local"``) runs the discrepancy search at the policy's
``limit`` -- typically small -- and then improves its best schedule by a
first-improvement hill climb over the job order, with the same evaluation
(:meth:`Planner._place` on the shared profiles), the same measures, the same
pruning bounds and the same comparison (:meth:`Objective.better`):

* *neighbours* of an order, by the first position ``p`` they change
  (``p = 0, 1, ...``), then ``q = p + 1, ...``: the order with the jobs at
  ``p`` and ``q`` swapped, then (when ``q > p + 1``) the order with the job at
  ``q`` moved forward to ``p``;
* a neighbour is evaluated by placing only positions ``p..n-1`` on the
  profiles holding positions ``0..p-1`` (placed once per ``p``), and abandoned
  as soon as the lower bounds of its measures (those of the jobs placed plus,
  for each job not yet placed, its value if it started now) cannot beat the
  current schedule -- the DDS's bound, valid because the objective models are
  monotone in the candidate's measures;
* the first neighbour that is *better* than the current schedule replaces it
  and the scan goes on at the same ``p`` (positions before ``p`` are
  unchanged); a pass over every ``p`` without an improvement ends the climb
  (a local optimum); ``budget`` node visits (placements, as the DDS counts
  them: a neighbour's positions ``p..n-1`` and each prefix position) end it
  earlier.

A schedule replaces the current one only when it is better, so the result is
never worse than the discrepancy search's (the property test of
``tests/test_goal_local.py``).  When the discrepancy search covered the whole
tree its schedule is kept as it is: no climb.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from o2ksim.policies.goal.objectives import Objective
from o2ksim.policies.goal.search import Planner, SearchResult

LOCAL_SUFFIX = "+local"
"""``search`` values ending so run the hill climb after the discrepancy search."""


def neighbour(order: Sequence[int], p: int, q: int, move: int) -> list[int]:
    """Positions ``p..n-1`` of ``order`` with ``p < q`` swapped (``move = 0``) or with the
    job at ``q`` moved forward to ``p`` (``move = 1``)."""
    tail = list(order[p:])
    a = q - p
    if move == 0:
        tail[0], tail[a] = tail[a], tail[0]
    else:
        tail.insert(0, tail.pop(a))
    return tail


def improve(
    planner: Planner,
    objective: Objective,
    start: SearchResult,
    budget: int,
    prune: bool = True,
    on_accept: Callable[[list[int], tuple[float, float, float, float]], None] | None = None,
    last: bool = False,
) -> SearchResult:
    """Hill-climb from ``start`` (the discrepancy search's result on ``planner``) for at most
    ``budget`` node visits; the best schedule found, never worse than ``start``.

    ``last`` (``local_kind = "last"``): each pass scans the first changed position ``p``
    from the last one down to 0 instead of up from 0 -- the same neighbours at each
    ``p``, in the same order.  A pass first places positions ``0..n-2`` (``n - 1``
    visits) and takes position ``p`` off the profiles before scanning it (the profiles
    are a stack), so it spends its visits first where neighbours are cheap (``n - p``
    placements) and where the planned waits, hence the excessive ones, are largest;
    most climbs end on their budget before a first-position pass reaches those
    positions.  A pass scanned this way is not charged for settling positions.

    The returned counts add the climb's visits, evaluated schedules and pruned
    neighbours to ``start``'s; ``complete`` is ``start``'s.  The planner's
    profiles are left unchanged.  ``on_accept`` (tests) receives each order that
    replaces the current one, with its measures."""
    n = planner.n
    if n < 2 or budget <= 0 or start.complete:
        return start
    place, unplace = planner._place, planner._unplace
    submit, floor, thr = planner.submit, planner.floor, planner.threshold
    lb_wait, lb_x, lb_tw = planner.lb_wait, planner.lb_x, planner.lb_tw
    max_wait_now = planner.max_wait_now
    better = objective.better
    ix, iy = objective.ix, objective.iy
    inv_n = 1.0 / n

    order = list(start.order)
    starts = list(start.starts)
    hosts = list(start.hosts)
    meas = start.measures
    best = (meas[ix], meas[iy])
    # per prefix length d: running sums over positions 0..d-1 and the bounds of the rest
    sw = [0.0] * (n + 1)
    mw = [0.0] * (n + 1)
    sx = [0.0] * (n + 1)
    tw = [0.0] * (n + 1)
    r0 = [0.0] * (n + 1)
    r1 = [0.0] * (n + 1)
    r2 = [0.0] * (n + 1)
    r0[0], r1[0], r2[0] = sum(lb_wait), sum(lb_x), sum(lb_tw)
    visits = leaves = pruned = 0
    prefix: list[tuple[int, int, int, int, bool]] = []  # undo data of positions 0..p-1
    stop = False

    def step(d: int, j: int, s: float) -> None:
        """Running sums of prefix length ``d + 1`` from those of ``d``, job ``j`` starting at ``s``."""
        w = s - submit[j]
        f = floor[j]
        sw[d + 1] = sw[d] + w
        mw[d + 1] = w if w > mw[d] else mw[d]
        sx[d + 1] = sx[d] + (w + f) / f
        tw[d + 1] = tw[d] + (w - thr if w > thr else 0.0)
        r0[d + 1] = r0[d] - lb_wait[j]
        r1[d + 1] = r1[d] - lb_x[j]
        r2[d + 1] = r2[d] - lb_tw[j]

    try:
        improved = True
        while improved and not stop:
            improved = False
            if last:  # positions 0..n-2 on the profiles, taken off from the last one
                for d in range(n - 1):
                    if visits >= budget:
                        stop = True
                        break
                    visits += 1
                    j = order[d]
                    s, h, i, k, ins = place(j)
                    prefix.append((j, h, i, k, ins))
                    step(d, j, s)
            for p in range(n - 2, -1, -1) if last else range(n - 1):
                if stop:
                    break
                if last:
                    unplace(*prefix.pop())
                q = p + 1
                move = 0
                while q < n:
                    tail = neighbour(order, p, q, move)
                    undo: list[tuple[int, int, int, int, bool]] = []
                    t_starts: list[float] = []
                    t_hosts: list[int] = []
                    won = False
                    for d in range(p, n):
                        if visits >= budget:
                            stop = True
                            break
                        visits += 1
                        j = tail[d - p]
                        s, h, i, k, ins = place(j)
                        undo.append((j, h, i, k, ins))
                        t_starts.append(s)
                        t_hosts.append(h)
                        step(d, j, s)
                        d1 = d + 1
                        if d1 == n:
                            leaves += 1
                            m = (tw[n], mw[n], sw[n] * inv_n, sx[n] * inv_n)
                            if better(best, (m[ix], m[iy])):
                                won = True
                                best = (m[ix], m[iy])
                                meas = m
                        elif prune:
                            bound = (
                                tw[d1] + r2[d1],
                                mw[d1] if mw[d1] > max_wait_now else max_wait_now,
                                (sw[d1] + r0[d1]) * inv_n,
                                (sx[d1] + r1[d1]) * inv_n,
                            )
                            if not better(best, (bound[ix], bound[iy])):
                                pruned += 1
                                break
                    for j, h, i, k, ins in reversed(undo):
                        unplace(j, h, i, k, ins)
                    if stop:
                        break
                    if won:
                        improved = True
                        order[p:] = tail
                        starts[p:] = t_starts
                        hosts[p:] = t_hosts
                        if on_accept is not None:
                            on_accept(list(order), meas)
                        q, move = p + 1, 0  # the new order's neighbours at this p
                        continue
                    if move == 0 and q > p + 1:
                        move = 1
                    else:
                        q, move = q + 1, 0
                if stop:
                    break
                if last:
                    continue
                # position p is settled for this pass: place it under the next ones
                visits += 1
                j = order[p]
                s, h, i, k, ins = place(j)
                prefix.append((j, h, i, k, ins))
                step(p, j, s)
            for j, h, i, k, ins in reversed(prefix):
                unplace(j, h, i, k, ins)
            prefix = []
    finally:
        for j, h, i, k, ins in reversed(prefix):
            unplace(j, h, i, k, ins)
    return SearchResult(
        order, starts, hosts, meas,
        visits=start.visits + visits, leaves=start.leaves + leaves, pruned=start.pruned + pruned,
        complete=start.complete, evaluated=start.evaluated,
    )  # fmt: skip


def improve_restart(
    planner: Planner,
    objective: Objective,
    start: SearchResult,
    other: Sequence[int],
    budget: int,
    prune: bool = True,
) -> SearchResult:
    """:func:`improve` from ``start``, then, when that climb ends at a local optimum with
    more than ``n`` of its ``budget`` visits left, a second climb from the schedule of
    the order ``other`` (the policy passes the other branching order: FCFS under LXF
    branching, LXF under FCFS) with the visits left; the second climb's result wins
    only when it is better (:meth:`Objective.better`) than the first's.

    A first-improvement climb stops at the first local optimum near the DDS's best
    schedule, usually well inside its budget (about half of it on the KTH-SP2
    months); the restart spends the rest in another part of the order space.
    ``other``'s schedule is evaluated as the DDS's first leaf (``limit = 1``: ``n``
    visits, one schedule), so its measures round as the search's do.  The counts
    add both climbs' and the evaluation's; never worse than the first climb's result,
    hence than ``start``."""
    first = improve(planner, objective, start, budget, prune)
    n = planner.n
    left = budget - (first.visits - start.visits)
    if start.complete or n < 2 or left <= n or list(other) in (start.order, first.order):
        return first
    seed = planner.search(objective, other, "dds", 1, prune)
    seed.complete = False  # a start for the climb, not a whole tree
    second = improve(planner, objective, seed, left - seed.visits, prune)
    ob = objective
    win = ob.better((first.measures[ob.ix], first.measures[ob.iy]),
                    (second.measures[ob.ix], second.measures[ob.iy]))  # fmt: skip
    best = second if win else first
    return SearchResult(
        best.order, best.starts, best.hosts, best.measures,
        visits=first.visits + second.visits, leaves=first.leaves + second.leaves,
        pruned=first.pruned + second.pruned, complete=False, evaluated=start.evaluated,
    )  # fmt: skip


def warm_order(
    previous: Sequence[object], queue: Sequence[object], lxf: Sequence[int]
) -> list[int]:
    """The previous decision point's best order carried to this one (``local_warm``): the
    jobs of ``previous`` (the order the last search chose, as job objects) still in
    ``queue``, in that order, then the queue's other jobs (arrived since) in the LXF
    order ``lxf``; positions in ``queue``.

    Between two decision points the queue changes by the jobs that started and
    those that arrived, and with the runtimes the search plans with the running
    jobs end as planned, so the last best order is usually still a good one: a
    climb from it goes on where the last climb stopped."""
    pos = {job: i for i, job in enumerate(queue)}
    order = [pos[job] for job in previous if job in pos]
    kept = set(order)
    return order + [i for i in lxf if i not in kept]


def improve_warm(
    planner: Planner,
    objective: Objective,
    start: SearchResult,
    warm: Sequence[int],
    budget: int,
    prune: bool = True,
) -> SearchResult:
    """:func:`improve` from the better of ``start`` (the discrepancy search's result) and the
    schedule of the order ``warm`` (:func:`warm_order`); the warm schedule is taken only
    when it is better (:meth:`Objective.better`), so the result is never worse than
    ``start``.

    ``warm``'s schedule is evaluated as the DDS's first leaf (``limit = 1``: ``n``
    visits, counted against ``budget``), as in :func:`improve_restart`.  When the
    discrepancy search covered the whole tree, or ``warm`` is its order, this is
    :func:`improve`."""
    n = planner.n
    if start.complete or n < 2 or budget <= 0 or list(warm) == list(start.order):
        return improve(planner, objective, start, budget, prune)
    seed = planner.search(objective, warm, "dds", 1, prune)
    ob = objective
    if ob.better((start.measures[ob.ix], start.measures[ob.iy]),
                 (seed.measures[ob.ix], seed.measures[ob.iy])):  # fmt: skip
        begin = SearchResult(
            seed.order, seed.starts, seed.hosts, seed.measures, visits=start.visits + seed.visits,
            leaves=start.leaves + seed.leaves, pruned=start.pruned + seed.pruned,
            complete=False, evaluated=start.evaluated,
        )  # fmt: skip
    else:
        begin = SearchResult(
            start.order, start.starts, start.hosts, start.measures,
            visits=start.visits + seed.visits, leaves=start.leaves + seed.leaves,
            pruned=start.pruned + seed.pruned, complete=False, evaluated=start.evaluated,
        )  # fmt: skip
    return improve(planner, objective, begin, budget - seed.visits, prune)


LOCAL_KINDS = ("first", "last", "ils", "ils-last")
"""``local_kind`` choices: the first-improvement climb scanning from the first position or
from the last (:func:`improve`'s ``last``), alone or iterated from kicked optima
(:func:`improve_ils`)."""

ILS_MOD = 2**31
"""Modulus of the perturbations' linear congruential generator (:func:`lcg`)."""


def lcg(x: int) -> int:
    """The next state of the perturbations' generator: ``(1103515245 x + 12345) mod 2^31``.

    A generator written out (not :mod:`random`) so that the compiled kernel draws
    the same numbers in 64-bit integers (``1103515245 x < 2^62``)."""
    return (1103515245 * x + 12345) % ILS_MOD


def ils_seed(planner: Planner) -> int:
    """The seed of a decision point's perturbations: from its time (whole seconds) and its
    number of waiting jobs, so the same decision point draws the same kicks."""
    return (int(planner.now) * 69069 + planner.n) % ILS_MOD


def kick(order: Sequence[int], seed: int, moves: int) -> tuple[list[int], int]:
    """``order`` perturbed by ``moves`` random forward moves -- each draws a position ``q``
    in ``1..n-1``, then ``p`` in ``0..q-1``, and moves the job at ``q`` to ``p`` (the
    climb's move neighbour, :func:`neighbour`) -- and the generator's state after them."""
    out = list(order)
    n = len(out)
    for _ in range(moves):
        seed = lcg(seed)
        q = 1 + (seed >> 8) % (n - 1)
        seed = lcg(seed)
        p = (seed >> 8) % q
        out.insert(p, out.pop(q))
    return out, seed


def improve_ils(
    planner: Planner,
    objective: Objective,
    start: SearchResult,
    budget: int,
    seed: int,
    moves: int = 2,
    prune: bool = True,
    on_best: Callable[[list[int], tuple[float, float, float, float]], None] | None = None,
    last: bool = False,
) -> SearchResult:
    """An iterated local search (``local_kind = "ils"``): :func:`improve` from ``start``,
    then, while more than ``n`` of the ``budget`` visits are left, the best schedule so far
    *kicked* (:func:`kick`, ``moves`` random forward moves drawn from ``seed``), its
    schedule evaluated as the DDS's first leaf (``limit = 1``: ``n`` visits) and climbed
    with the visits left; the climbed schedule replaces the best only when it is better
    (:meth:`Objective.better`), so the result is never worse than the first climb's.

    A first-improvement climb ends at the first local optimum near the DDS's schedule,
    on the KTH-SP2 months with about half its budget left; a kick moves a few jobs
    and the climb from there explores the optimum's neighbourhood beyond one move,
    where :func:`improve_restart` starts again from far away.  The kicks are drawn
    from ``seed`` (the policy passes :func:`ils_seed`): the same decision point gives
    the same result.  The counts add every climb's and kicked schedule's; ``on_best``
    (tests) receives each order that replaces the best, with its measures.  ``last``:
    every climb scans from the last position (``local_kind = "ils-last"``)."""
    best = improve(planner, objective, start, budget, prune, last=last)
    n = planner.n
    if start.complete or n < 2 or budget <= 0:
        return best
    used = best.visits - start.visits
    visits, leaves, pruned = best.visits, best.leaves, best.pruned
    ob = objective
    while budget - used > n:
        order, seed = kick(best.order, seed, moves)
        kicked = planner.search(ob, order, "dds", 1, prune)
        kicked.complete = False  # a start for the climb, not a whole tree
        used += kicked.visits
        c = improve(planner, ob, kicked, budget - used, prune, last=last)
        used += c.visits - kicked.visits
        visits, leaves, pruned = visits + c.visits, leaves + c.leaves, pruned + c.pruned
        if ob.better((best.measures[ob.ix], best.measures[ob.iy]),
                     (c.measures[ob.ix], c.measures[ob.iy])):  # fmt: skip
            best = c
            if on_best is not None:
                on_best(list(c.order), c.measures)
    return SearchResult(
        best.order, best.starts, best.hosts, best.measures, visits=visits, leaves=leaves,
        pruned=pruned, complete=False, evaluated=start.evaluated,
    )  # fmt: skip


__all__ = [
    "ILS_MOD", "LOCAL_KINDS", "LOCAL_SUFFIX", "ils_seed", "improve", "improve_ils",
    "improve_restart", "improve_warm", "kick", "lcg", "neighbour", "warm_order",
]  # fmt: skip
