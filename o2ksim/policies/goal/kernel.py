"""The goal-oriented search compiled with numba (issue 26): :meth:`Planner.search`, ~18 times faster.

:meth:`~o2ksim.policies.goal.search.Planner.search` is the readable reference;
this module is the same search as one compiled function over arrays.  It
walks the same tree (LDS or DDS, G§2.4) in the same order with an explicit
stack instead of recursion, counts node visits and stops at L as the
reference does, places each job with the same earliest-start scan on the
same step profiles (rows of 2-D arrays instead of lists), keeps the same
running sums, prunes with the same lower bounds, and compares schedules with
:meth:`Objective.better`'s floating-point operations in the same order -- so
every decision is the reference's, bit for bit: the best order, its planned
starts, hosts and measures, and the counts of visits, leaves and pruned
subtrees (checked in ``tests/test_goal_kernel.py``).

numba is optional (``pip install o2ksim[fast]``; a wheel, no compiler).  Its
compiled code is kept on disk (``cache=True``): in ``__pycache__`` beside
this file, or, where that is not writable, in numba's per-user cache
directory (``~/.cache/numba`` on Linux; ``NUMBA_CACHE_DIR`` chooses
another); only the first run after an
install or an update compiles (about 5 CPU seconds).  The policy imports
this module only when it runs the kernel (``search_kernel``: ``auto`` when
numba is installed, or ``numba``), so a run without numba never needs it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from o2ksim.policies.goal import objectives
from o2ksim.policies.goal.objectives import ROUNDING, VERSIONS, Objective
from o2ksim.policies.goal.search import Planner, SearchResult, children

# AVAILABLE: whether numba is importable, i.e. whether :func:`search` can run
try:
    import numba

    AVAILABLE = True
except ImportError:  # the optional extra is not installed: the Python search is used
    AVAILABLE = False


def _jit(f: Any) -> Any:
    """Compile ``f`` with numba, cached on disk; without numba, leave it a Python function."""
    return numba.njit(cache=True)(f) if AVAILABLE else f


_ratio = _jit(objectives._ratio)  # the Python rule itself, compiled


@_jit
def _better(bx, by, cx, cy, lexical, version, slack, eps_tw, tw_x, tw_y, rx, ry):
    """:meth:`Objective.better` (and ``deltas``), operation for operation."""
    dx = bx - cx
    dy = by - cy
    if -ROUNDING * (bx + cx) <= dx <= ROUNDING * (bx + cx):
        dx = 0.0
    if -ROUNDING * (by + cy) <= dy <= ROUNDING * (by + cy):
        dy = 0.0
    if slack > 0 and ((dx > 0 > dy) or (dy > 0 > dx)):
        dx = bx - cx  # Objective.deltas starts again from the raw differences
        dy = by - cy
        if abs(dx) <= ROUNDING * (bx + cx):
            dx = 0.0
        if abs(dy) <= ROUNDING * (by + cy):
            dy = 0.0
        if (dx > 0 > dy) or (dy > 0 > dx):
            ex = eps_tw if tw_x else slack * bx
            ey = eps_tw if tw_y else slack * by
            if abs(dx) < ex - ROUNDING * (bx + cx):
                dx = 0.0
            if abs(dy) < ey - ROUNDING * (by + cy):
                dy = 0.0
    if lexical:
        return dx > 0 or (dx == 0 and dy > 0)
    if version == 0:
        hx, hy = bx, by
    elif version == 1:
        hx = bx if bx < cx else cx
        hy = by if by < cy else cy
    else:
        hx, hy = rx, ry
    if hx > 0 and hy > 0:
        return dx / hx + dy / hy > 0
    return _ratio(dx, hx) + _ratio(dy, hy) > 0


@_jit
def _place(j, times, fp, fm, plen, hosts_ok, procs, mem, hold):
    """:meth:`Planner._place`: earliest start of job ``j`` over its hosts, subtracted there.

    Returns ``(start, host, first step, end step, inserted)``; host -1 and start
    inf when no host can hold the job."""
    p = procs[j]
    m = mem[j]
    d = hold[j]
    best_s = math.inf
    best_h = -1
    best_i = -1
    best_free = 0.0
    for h in range(plen.shape[0]):
        if not hosts_ok[j, h]:
            continue
        nn = plen[h]
        i = 0
        while i < nn:
            if fp[h, i] < p or fm[h, i] < m:
                i += 1
                continue
            s = times[h, i]
            if s > best_s:
                break
            e = s + d
            k = i + 1
            ok = True
            while k < nn and times[h, k] < e:
                if fp[h, k] < p or fm[h, k] < m:
                    ok = False
                    break
                k += 1
            if ok:
                if s < best_s or fp[h, i] < best_free:
                    best_s = s
                    best_h = h
                    best_i = i
                    best_free = fp[h, i]
                break
            i = k + 1
    if best_h < 0:
        return math.inf, -1, 0, 0, False
    h = best_h
    e = best_s + d
    i = best_i
    lo = i + 1  # bisect_left(times, e, i + 1)
    hi = plen[h]
    while lo < hi:
        mid = (lo + hi) // 2
        if times[h, mid] < e:
            lo = mid + 1
        else:
            hi = mid
    k = lo
    ins = k == plen[h] or times[h, k] != e
    if ins:
        for q in range(plen[h], k, -1):
            times[h, q] = times[h, q - 1]
            fp[h, q] = fp[h, q - 1]
            fm[h, q] = fm[h, q - 1]
        times[h, k] = e
        fp[h, k] = fp[h, k - 1]
        fm[h, k] = fm[h, k - 1]
        plen[h] += 1
    for q in range(i, k):
        fp[h, q] -= p
    if m != 0:
        for q in range(i, k):
            fm[h, q] -= m
    return best_s, h, i, k, ins


@_jit
def _unplace(h, i0, k, inserted, p, m, times, fp, fm, plen):
    """:meth:`Planner._unplace`: give the job's processors and memory back, drop its step."""
    if h < 0:
        return
    for q in range(i0, k):
        fp[h, q] += p
    if m != 0:
        for q in range(i0, k):
            fm[h, q] += m
    if inserted:
        for q in range(k, plen[h] - 1):
            times[h, q] = times[h, q + 1]
            fp[h, q] = fp[h, q + 1]
            fm[h, q] = fm[h, q + 1]
        plen[h] -= 1


_children = _jit(children)  # the Python walk's rule itself, compiled (DDS or LDS, G§2.4)


@_jit
def _search(times, fp, fm, plen, hosts_ok, submit, floor, hold, procs, mem,
            lb_wait, lb_x, lb_tw, rest0, rest1, rest2, heuristic, thr, max_wait_now, limit,
            prune, lds, lexical, version, slack, eps_tw, tw_x, tw_y, rx, ry, ix, iy):  # fmt: skip
    """The search; returns (order, starts, hosts, measures, visits, leaves, pruned, complete)."""
    n = submit.shape[0]
    rem = heuristic.copy()
    nrem = n
    path = np.zeros(n, np.int64)
    starts = np.zeros(n)
    hosts = np.zeros(n, np.int64)
    u_c = np.zeros(n, np.int64)  # undo data per depth: child index, job, host, steps, inserted
    u_j = np.zeros(n, np.int64)
    u_h = np.zeros(n, np.int64)
    u_i = np.zeros(n, np.int64)
    u_k = np.zeros(n, np.int64)
    u_ins = np.zeros(n, np.bool_)
    sum_w = np.zeros(n + 1)
    max_w = np.zeros(n + 1)
    sum_x = np.zeros(n + 1)
    tw = np.zeros(n + 1)
    cidx = np.zeros(n + 1, np.int64)  # next child to enter, per depth
    chi = np.zeros(n + 1, np.int64)  # end of the child range
    kd = np.zeros(n + 1, np.int64)  # LDS: discrepancies left at the node
    r0, r1, r2 = rest0, rest1, rest2  # lower bounds of the jobs not placed
    inv_n = 1.0 / n
    visits = leaves = pruned = 0
    have_best = False
    bx = by = 0.0
    best_order = np.zeros(n, np.int64)
    best_starts = np.zeros(n)
    best_hosts = np.zeros(n, np.int64)
    best_m = np.zeros(4)
    m4 = np.zeros(4)
    stopped = False
    for it in range(n):
        depth = 0
        kd[0] = it
        cidx[0], chi[0] = _children(lds, 0, n, it, it)
        while depth >= 0:
            if cidx[depth] < chi[depth]:
                if visits >= limit and have_best:  # enter(depth, c)
                    stopped = True
                    break
                visits += 1
                c = cidx[depth]
                j = rem[c]
                for q in range(c, nrem - 1):
                    rem[q] = rem[q + 1]
                nrem -= 1
                s, h, i, k, ins = _place(j, times, fp, fm, plen, hosts_ok, procs, mem, hold)
                path[depth] = j
                starts[depth] = s
                hosts[depth] = h
                u_c[depth] = c
                u_j[depth] = j
                u_h[depth] = h
                u_i[depth] = i
                u_k[depth] = k
                u_ins[depth] = ins
                w = s - submit[j]
                f = floor[j]
                d1 = depth + 1
                sum_w[d1] = sum_w[depth] + w
                max_w[d1] = w if w > max_w[depth] else max_w[depth]
                sum_x[d1] = sum_x[depth] + (w + f) / f
                tw[d1] = tw[depth] + (w - thr if w > thr else 0.0)
                r0 -= lb_wait[j]
                r1 -= lb_x[j]
                r2 -= lb_tw[j]
                go_down = True
                if d1 == n:  # a leaf: one schedule evaluated
                    leaves += 1
                    m4[0] = tw[n]
                    m4[1] = max_w[n]
                    m4[2] = sum_w[n] * inv_n
                    m4[3] = sum_x[n] * inv_n
                    cx = m4[ix]
                    cy = m4[iy]
                    if (not have_best) or _better(bx, by, cx, cy, lexical, version, slack,
                                                  eps_tw, tw_x, tw_y, rx, ry):  # fmt: skip
                        have_best = True
                        bx = cx
                        by = cy
                        best_order[:] = path
                        best_starts[:] = starts
                        best_hosts[:] = hosts
                        best_m[:] = m4
                    go_down = False
                elif prune and have_best:
                    mw = max_w[d1]
                    m4[0] = tw[d1] + r2
                    m4[1] = mw if mw > max_wait_now else max_wait_now
                    m4[2] = (sum_w[d1] + r0) * inv_n
                    m4[3] = (sum_x[d1] + r1) * inv_n
                    if not _better(bx, by, m4[ix], m4[iy], lexical, version, slack, eps_tw,
                                   tw_x, tw_y, rx, ry):  # fmt: skip
                        pruned += 1
                        go_down = False
                if go_down:
                    kd[d1] = kd[depth] if c == 0 else kd[depth] - 1
                    depth = d1
                    cidx[depth], chi[depth] = _children(lds, depth, n, it, kd[depth])
                    continue
            else:  # every child done: back to the parent, whose child this node is
                depth -= 1
                if depth < 0:
                    break
            # leave(depth), then on to the next child
            j = u_j[depth]
            _unplace(u_h[depth], u_i[depth], u_k[depth], u_ins[depth], procs[j], mem[j],
                     times, fp, fm, plen)  # fmt: skip
            r0 += lb_wait[j]
            r1 += lb_x[j]
            r2 += lb_tw[j]
            c = u_c[depth]
            for q in range(nrem, c, -1):
                rem[q] = rem[q - 1]
            rem[c] = j
            nrem += 1
            cidx[depth] += 1
        if stopped:
            # the arrays back as they came (the climb of dds+local reuses them): depths
            # 0..depth-1 hold placed jobs when the limit stops the walk
            for d in range(depth - 1, -1, -1):
                j = u_j[d]
                _unplace(u_h[d], u_i[d], u_k[d], u_ins[d], procs[j], mem[j], times, fp, fm, plen)
            break
    return best_order, best_starts, best_hosts, best_m, visits, leaves, pruned, not stopped


def search(
    planner: Planner,
    objective: Objective,
    heuristic: list[int],
    method: str = "dds",
    limit: int = 4000,
    prune: bool = True,
) -> SearchResult:
    """:meth:`Planner.search` (without ``record``/``on_leaf``) run by the compiled kernel.

    The planner's profiles are copied into arrays and left unchanged."""
    if not AVAILABLE:
        raise RuntimeError("the compiled goal search needs numba: pip install o2ksim[fast]")
    if method not in ("dds", "lds"):
        raise ValueError(f"search must be dds or lds, got {method!r}")
    n = planner.n
    if n == 0:
        return planner.search(objective, heuristic, method, limit, prune)
    ob = objective
    out = _search(
        *planner_arrays(planner),
        np.array(heuristic, np.int64), float(planner.threshold), float(planner.max_wait_now),
        int(limit), bool(prune), method == "lds", *objective_args(ob),
    )  # fmt: skip
    order, starts, hosts, measures, visits, leaves, pruned, complete = out
    m = measures.tolist()
    return SearchResult(
        order.tolist(), starts.tolist(), hosts.tolist(), (m[0], m[1], m[2], m[3]),
        visits=int(visits), leaves=int(leaves), pruned=int(pruned), complete=bool(complete),
    )  # fmt: skip


def objective_args(ob: Objective) -> tuple:
    """The kernel's arguments describing ``ob`` (``lexical`` ... ``iy`` of ``_search``)."""
    return (
        ob.model == "lexical", VERSIONS.index(ob.version), float(ob.slack), float(ob.eps_tw),
        bool(ob.x == "tw"), bool(ob.y == "tw"), float(ob.ref[0]), float(ob.ref[1]), ob.ix, ob.iy,
    )  # fmt: skip


def planner_arrays(planner: Planner) -> tuple:
    """The planner's profiles and jobs as the kernel's arrays (``times`` ... ``rest2`` of
    ``_search``); the planner is left unchanged."""
    n = planner.n
    H = len(planner.profiles)
    cap = max(len(t) for t, _, _ in planner.profiles) + n + 2  # a placement adds one step at most
    times = np.zeros((H, cap))
    fp = np.zeros((H, cap))
    fm = np.zeros((H, cap))
    plen = np.zeros(H, np.int64)
    for h, (t, p, m) in enumerate(planner.profiles):
        plen[h] = len(t)
        times[h, : len(t)] = t
        fp[h, : len(t)] = p
        fm[h, : len(t)] = m
    c = planner.columns  # float64 arrays made once by the planner, read by the kernel as they are
    return (
        times, fp, fm, plen, c.hosts_ok, c.submit, c.floor, c.hold, c.procs, c.mem,
        c.lb_wait, c.lb_x, c.lb_tw, *planner.rest,
    )  # fmt: skip


__all__ = ["AVAILABLE", "search"]
