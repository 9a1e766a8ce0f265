"""The hill climb of ``search = "dds+local"`` compiled with numba (issue 26).

:func:`o2ksim.policies.goal.local.improve` is the readable reference; this is
the same climb as one compiled function over the arrays of
:mod:`~o2ksim.policies.goal.kernel` (its ``_place``, ``_unplace`` and
``_better``): the same neighbours in the same order, the same running sums
and bounds in the same floating-point order, the same budget count -- so the
same result, order, starts, hosts, measures and counts (checked in
``tests/test_goal_local.py``).  numba is optional, as for the kernel.
"""

from __future__ import annotations

import numpy as np

from o2ksim.policies.goal.kernel import (
    AVAILABLE,
    _better,
    _jit,
    _place,
    _search,
    _unplace,
    objective_args,
    planner_arrays,
)
from o2ksim.policies.goal.objectives import Objective
from o2ksim.policies.goal.search import Planner, SearchResult


@_jit
def _advance(d, j, s, submit, floor, thr, lb_wait, lb_x, lb_tw, sw, mw, sx, tw, r0, r1, r2):  # fmt: skip
    """The running sums of prefix length ``d + 1`` from those of ``d``, job ``j`` starting
    at ``s`` (``local.improve``'s ``step``): total and maximum wait, total expansion factor,
    total excessive wait, and what the lower bounds still count for the jobs not placed."""
    w = s - submit[j]
    f = floor[j]
    sw[d + 1] = sw[d] + w
    mw[d + 1] = w if w > mw[d] else mw[d]
    sx[d + 1] = sx[d] + (w + f) / f
    tw[d + 1] = tw[d] + (w - thr if w > thr else 0.0)
    r0[d + 1] = r0[d] - lb_wait[j]
    r1[d + 1] = r1[d] - lb_x[j]
    r2[d + 1] = r2[d] - lb_tw[j]


@_jit
def _improve(times, fp, fm, plen, hosts_ok, submit, floor, hold, procs, mem,
             lb_wait, lb_x, lb_tw, rest0, rest1, rest2, order, starts, hosts, meas, thr,
             max_wait_now, budget, prune, lexical, version, slack, eps_tw, tw_x, tw_y, rx, ry,
             ix, iy, from_last):  # fmt: skip
    """``local.improve`` (``from_last``: its ``last``, the scan from the last position); returns (order, starts,
    hosts, measures, visits, leaves, pruned)."""
    n = submit.shape[0]
    order = order.copy()
    starts = starts.copy()
    hosts = hosts.copy()
    meas = meas.copy()
    cand = np.zeros(n, np.int64)
    c_starts = np.zeros(n)
    c_hosts = np.zeros(n, np.int64)
    u_h = np.zeros(n, np.int64)  # undo data per position (prefix 0..p-1, then the tail)
    u_i = np.zeros(n, np.int64)
    u_k = np.zeros(n, np.int64)
    u_ins = np.zeros(n, np.bool_)
    sw = np.zeros(n + 1)
    mw = np.zeros(n + 1)
    sx = np.zeros(n + 1)
    tw = np.zeros(n + 1)
    r0 = np.zeros(n + 1)
    r1 = np.zeros(n + 1)
    r2 = np.zeros(n + 1)
    r0[0] = rest0
    r1[0] = rest1
    r2[0] = rest2
    m4 = np.zeros(4)
    bx = meas[ix]
    by = meas[iy]
    inv_n = 1.0 / n
    visits = leaves = pruned = 0
    stop = False
    improved = True
    while improved and not stop:
        improved = False
        placed = 0  # prefix positions on the profiles
        if from_last:  # positions 0..n-2 on the profiles, taken off from the last one
            for d in range(n - 1):
                if visits >= budget:
                    stop = True
                    break
                visits += 1
                j = order[d]
                s, h, i, k, ins = _place(j, times, fp, fm, plen, hosts_ok, procs, mem, hold)
                u_h[d] = h
                u_i[d] = i
                u_k[d] = k
                u_ins[d] = ins
                placed = d + 1
                _advance(d, j, s, submit, floor, thr, lb_wait, lb_x, lb_tw,
                         sw, mw, sx, tw, r0, r1, r2)  # fmt: skip
        for pi in range(n - 1):
            if stop:
                break
            p = n - 2 - pi if from_last else pi
            if from_last:
                j = order[p]
                _unplace(u_h[p], u_i[p], u_k[p], u_ins[p], procs[j], mem[j], times, fp, fm, plen)
                placed = p
            q = p + 1
            move = 0
            while q < n:
                for r in range(p, n):  # the neighbour (positions before p are never read)
                    cand[r] = order[r]
                if move == 0:
                    cand[p] = order[q]
                    cand[q] = order[p]
                else:
                    for r in range(q, p, -1):
                        cand[r] = order[r - 1]
                    cand[p] = order[q]
                won = False
                last = p  # positions p..last-1 placed
                for d in range(p, n):
                    if visits >= budget:
                        stop = True
                        break
                    visits += 1
                    j = cand[d]
                    s, h, i, k, ins = _place(j, times, fp, fm, plen, hosts_ok, procs, mem, hold)
                    u_h[d] = h
                    u_i[d] = i
                    u_k[d] = k
                    u_ins[d] = ins
                    last = d + 1
                    c_starts[d] = s
                    c_hosts[d] = h
                    d1 = d + 1
                    _advance(d, j, s, submit, floor, thr, lb_wait, lb_x, lb_tw,
                             sw, mw, sx, tw, r0, r1, r2)  # fmt: skip
                    if d1 == n:
                        leaves += 1
                        m4[0] = tw[n]
                        m4[1] = mw[n]
                        m4[2] = sw[n] * inv_n
                        m4[3] = sx[n] * inv_n
                        if _better(bx, by, m4[ix], m4[iy], lexical, version, slack, eps_tw,
                                   tw_x, tw_y, rx, ry):  # fmt: skip
                            won = True
                            bx = m4[ix]
                            by = m4[iy]
                            meas[:] = m4
                    elif prune:
                        mx = mw[d1]
                        m4[0] = tw[d1] + r2[d1]
                        m4[1] = mx if mx > max_wait_now else max_wait_now
                        m4[2] = (sw[d1] + r0[d1]) * inv_n
                        m4[3] = (sx[d1] + r1[d1]) * inv_n
                        if not _better(bx, by, m4[ix], m4[iy], lexical, version, slack, eps_tw,
                                       tw_x, tw_y, rx, ry):  # fmt: skip
                            pruned += 1
                            break
                for d in range(last - 1, p - 1, -1):
                    j = cand[d]
                    _unplace(
                        u_h[d], u_i[d], u_k[d], u_ins[d], procs[j], mem[j], times, fp, fm, plen
                    )
                if stop:
                    break
                if won:
                    improved = True
                    for r in range(p, n):
                        order[r] = cand[r]
                        starts[r] = c_starts[r]
                        hosts[r] = c_hosts[r]
                    q = p + 1
                    move = 0
                    continue
                if move == 0 and q > p + 1:
                    move = 1
                else:
                    q += 1
                    move = 0
            if stop:
                break
            if from_last:
                continue
            visits += 1  # position p settled for this pass: under the next ones
            j = order[p]
            s, h, i, k, ins = _place(j, times, fp, fm, plen, hosts_ok, procs, mem, hold)
            u_h[p] = h
            u_i[p] = i
            u_k[p] = k
            u_ins[p] = ins
            placed = p + 1
            _advance(p, j, s, submit, floor, thr, lb_wait, lb_x, lb_tw,
                     sw, mw, sx, tw, r0, r1, r2)  # fmt: skip
        for d in range(placed - 1, -1, -1):
            j = order[d]
            _unplace(u_h[d], u_i[d], u_k[d], u_ins[d], procs[j], mem[j], times, fp, fm, plen)
    return order, starts, hosts, meas, visits, leaves, pruned


@_jit
def _lcg(x):
    """``local.lcg``: the perturbations' generator, in 64-bit integers."""
    return (1103515245 * x + 12345) % 2147483648


@_jit
def _ils(times, fp, fm, plen, hosts_ok, submit, floor, hold, procs, mem,
         lb_wait, lb_x, lb_tw, rest0, rest1, rest2, order, starts, hosts, meas, thr,
         max_wait_now, budget, prune, seed, moves, lexical, version, slack, eps_tw, tw_x, tw_y,
         rx, ry, ix, iy, from_last):  # fmt: skip
    """``local.improve_ils``; returns (order, starts, hosts, measures, visits, leaves, pruned)."""
    n = submit.shape[0]
    o, s, h, m, used, leaves, pruned = _improve(
        times, fp, fm, plen, hosts_ok, submit, floor, hold, procs, mem, lb_wait, lb_x, lb_tw,
        rest0, rest1, rest2, order, starts, hosts, meas, thr, max_wait_now, budget, prune,
        lexical, version, slack, eps_tw, tw_x, tw_y, rx, ry, ix, iy, from_last)  # fmt: skip
    cand = np.zeros(n, np.int64)
    while budget - used > n:
        for r in range(n):  # local.kick
            cand[r] = o[r]
        for _ in range(moves):
            seed = _lcg(seed)
            q = 1 + (seed >> 8) % (n - 1)
            seed = _lcg(seed)
            p = (seed >> 8) % q
            job = cand[q]
            for r in range(q, p, -1):
                cand[r] = cand[r - 1]
            cand[p] = job
        o3, s3, h3, m3, v3, l3, p3, _ = _search(
            times, fp, fm, plen, hosts_ok, submit, floor, hold, procs, mem, lb_wait, lb_x, lb_tw,
            rest0, rest1, rest2, cand, thr, max_wait_now, 1, prune, False, lexical, version,
            slack, eps_tw, tw_x, tw_y, rx, ry, ix, iy)  # fmt: skip
        used += v3
        o4, s4, h4, m4, v4, l4, p4 = _improve(
            times, fp, fm, plen, hosts_ok, submit, floor, hold, procs, mem, lb_wait, lb_x, lb_tw,
            rest0, rest1, rest2, o3, s3, h3, m3, thr, max_wait_now, budget - used, prune,
            lexical, version, slack, eps_tw, tw_x, tw_y, rx, ry, ix, iy, from_last)  # fmt: skip
        used += v4
        leaves += l3 + l4
        pruned += p3 + p4
        if _better(m[ix], m[iy], m4[ix], m4[iy], lexical, version, slack, eps_tw, tw_x, tw_y,
                   rx, ry):  # fmt: skip
            o, s, h, m = o4, s4, h4, m4
    return o, s, h, m, used, leaves, pruned


def improve(
    planner: Planner,
    objective: Objective,
    start: SearchResult,
    budget: int,
    prune: bool = True,
    last: bool = False,
) -> SearchResult:
    """:func:`o2ksim.policies.goal.local.improve` run compiled; the planner is left unchanged."""
    if not AVAILABLE:
        raise RuntimeError("the compiled goal search needs numba: pip install o2ksim[fast]")
    n = planner.n
    if n < 2 or budget <= 0 or start.complete:
        return start
    out = _improve(
        *planner_arrays(planner),
        np.array(start.order, np.int64), np.array(start.starts, np.float64),
        np.array(start.hosts, np.int64), np.array(start.measures, np.float64),
        float(planner.threshold), float(planner.max_wait_now), int(budget), bool(prune),
        *objective_args(objective), bool(last),
    )  # fmt: skip
    order, starts, hosts, measures, visits, leaves, pruned = out
    m = measures.tolist()
    return SearchResult(
        order.tolist(), starts.tolist(), hosts.tolist(), (m[0], m[1], m[2], m[3]),
        visits=start.visits + int(visits), leaves=start.leaves + int(leaves),
        pruned=start.pruned + int(pruned), complete=start.complete, evaluated=start.evaluated,
    )  # fmt: skip


def search_improve(
    planner: Planner,
    objective: Objective,
    heuristic: list[int],
    method: str,
    limit: int,
    budget: int,
    prune: bool = True,
    other: list[int] | None = None,
    warm: list[int] | None = None,
    ils: tuple[int, int] | None = None,
    last: bool = False,
) -> SearchResult:
    """``kernel.search`` then :func:`improve` on one copy of the planner's arrays; with
    ``other``, :func:`o2ksim.policies.goal.local.improve_restart`'s second climb too;
    with ``warm``, the climb from the better of the two schedules, as
    :func:`o2ksim.policies.goal.local.improve_warm` (not both); with ``ils = (seed,
    moves)``, the iterated climb of :func:`o2ksim.policies.goal.local.improve_ils`
    instead of the single one (alone); ``last``: every climb scans from the last position.

    The same result and counts as the two calls one after the other (checked in
    ``tests/test_goal_local.py``): the discrepancy search leaves the arrays as it
    found them, so the climb starts from them without converting the planner's
    profiles a second time (about a tenth of a small search's cost, once per
    decision point)."""
    if not AVAILABLE:
        raise RuntimeError("the compiled goal search needs numba: pip install o2ksim[fast]")
    if method not in ("dds", "lds"):
        raise ValueError(f"search must be dds or lds, got {method!r}")
    if sum(x is not None for x in (other, warm, ils)) > 1:
        raise ValueError("a restart (other), a warm start (warm) and ils do not combine")
    n = planner.n
    if n == 0:
        return planner.search(objective, heuristic, method, limit, prune)
    arrays = planner_arrays(planner)
    ob_args = objective_args(objective)
    thr, mwn = float(planner.threshold), float(planner.max_wait_now)
    out = _search(*arrays, np.array(heuristic, np.int64), thr, mwn, int(limit), bool(prune),
                  method == "lds", *ob_args)  # fmt: skip
    order, starts, hosts, measures, visits, leaves, pruned, complete = out
    if n < 2 or budget <= 0 or complete:
        m = measures.tolist()
        return SearchResult(
            order.tolist(), starts.tolist(), hosts.tolist(), (m[0], m[1], m[2], m[3]),
            visits=int(visits), leaves=int(leaves), pruned=int(pruned), complete=bool(complete),
        )  # fmt: skip
    climb = int(budget)
    visits, leaves, pruned = int(visits), int(leaves), int(pruned)
    if warm is not None and list(warm) != order.tolist():
        # improve_warm: the warm order's schedule (the DDS's first leaf), if better
        o3, s3, h3, m3, v3, l3, p3, _ = _search(*arrays, np.array(warm, np.int64), thr, mwn, 1,
                                                bool(prune), False, *ob_args)  # fmt: skip
        climb -= int(v3)
        visits, leaves, pruned = visits + int(v3), leaves + int(l3), pruned + int(p3)
        ob = objective
        if ob.better((float(measures[ob.ix]), float(measures[ob.iy])),
                     (float(m3[ob.ix]), float(m3[ob.iy]))):  # fmt: skip
            order, starts, hosts, measures = o3, s3, h3, m3
    if ils is not None:
        o2, s2, h2, m2, v2, l2, p2 = _ils(*arrays, order, starts, hosts, measures, thr, mwn, climb,
                                          bool(prune), int(ils[0]), int(ils[1]), *ob_args,
                                          bool(last))  # fmt: skip
    elif climb > 0:
        o2, s2, h2, m2, v2, l2, p2 = _improve(*arrays, order, starts, hosts, measures, thr, mwn,
                                              climb, bool(prune), *ob_args, bool(last))  # fmt: skip
    else:
        o2, s2, h2, m2, v2, l2, p2 = order, starts, hosts, measures, 0, 0, 0
    visits, leaves, pruned = visits + int(v2), leaves + int(l2), pruned + int(p2)
    left = budget - int(v2)
    if other is not None and left > n and list(other) not in (order.tolist(), o2.tolist()):
        # improve_restart: the other order's schedule (the DDS's first leaf), climbed
        o3, s3, h3, m3, v3, l3, p3, _ = _search(*arrays, np.array(other, np.int64), thr, mwn, 1,
                                                bool(prune), False, *ob_args)  # fmt: skip
        o3, s3, h3, m3, v4, l4, p4 = _improve(*arrays, o3, s3, h3, m3, thr, mwn,
                                              left - int(v3), bool(prune), *ob_args,
                                              bool(last))  # fmt: skip
        visits += int(v3) + int(v4)
        leaves += int(l3) + int(l4)
        pruned += int(p3) + int(p4)
        ob = objective
        if ob.better((float(m2[ob.ix]), float(m2[ob.iy])), (float(m3[ob.ix]), float(m3[ob.iy]))):
            o2, s2, h2, m2 = o3, s3, h3, m3
    m = m2.tolist()
    return SearchResult(
        o2.tolist(), s2.tolist(), h2.tolist(), (m[0], m[1], m[2], m[3]),
        visits=visits, leaves=leaves, pruned=pruned, complete=False,
    )  # fmt: skip


__all__ = ["improve", "search_improve"]
