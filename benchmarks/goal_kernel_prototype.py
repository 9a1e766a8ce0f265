"""Prototype for issue 26: the DDS search of ``o2ksim.policies.goal.search`` as one numba kernel.

Not used by o2ksim: a measurement of what a compiled kernel gives, kept for the
step that builds the real one (see "Where the search spends its time" in
docs/guides/goal-oriented.md).  DDS only, one function, no recursion: an
explicit stack walks the same tree in the same order, counts visits and stops
at L as ``Planner.search`` does, places jobs with the same earliest-start scan
on array profiles, and compares schedules with ``Objective.better``'s
floating-point operations in the same order.

Needs numba (not an o2ksim dependency): ``python3 -m venv /tmp/venv-nb &&
/tmp/venv-nb/bin/pip install numba``, then from the worktree root
``PYTHONPATH=$PWD /tmp/venv-nb/bin/python benchmarks/goal_kernel_prototype.py``
with o2ksim's own dependencies importable (e.g. main's site-packages appended
to ``sys.path``).  It compares the kernel with ``Planner.search`` on seeded
synthetic decision points (order, starts, hosts, measures, visits, leaves,
prunes) and prints the CPU per node visit of both.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit  # type: ignore[import-not-found]

ROUNDING = 1e-12


@njit(cache=True)
def _ratio(delta, ref):
    if ref > 0:
        return delta / ref
    if delta > 0:
        return math.inf
    if delta < 0:
        return -math.inf
    return 0.0


@njit(cache=True)
def better(bx, by, cx, cy, model, version, slack, eps_tw, tw_x, tw_y, rx, ry):
    dx = bx - cx
    dy = by - cy
    if -ROUNDING * (bx + cx) <= dx <= ROUNDING * (bx + cx):
        dx = 0.0
    if -ROUNDING * (by + cy) <= dy <= ROUNDING * (by + cy):
        dy = 0.0
    if slack > 0 and ((dx > 0 > dy) or (dy > 0 > dx)):
        # deltas(): recomputed from scratch as objectives.py does
        dx = bx - cx
        dy = by - cy
        if abs(dx) <= ROUNDING * (bx + cx):
            dx = 0.0
        if abs(dy) <= ROUNDING * (by + cy):
            dy = 0.0
        if (dx > 0 > dy) or (dy > 0 > dx):
            ex = eps_tw if tw_x else slack * bx
            ey = eps_tw if tw_y else slack * by
            if -ex < dx < ex:
                dx = 0.0
            if -ey < dy < ey:
                dy = 0.0
    if model == 0:
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
    v = _ratio(dx, hx) + _ratio(dy, hy)
    return v > 0


@njit(cache=True)
def _unplace(h, i0, k, inserted, p, m, fp, fm, times, plen):
    """Give a job's processors and memory back to host ``h``'s profile over steps
    ``[i0, k)`` and drop the step its placement inserted (``Planner._unplace``)."""
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


@njit(cache=True)
def search_dds(
    times,
    fp,
    fm,
    plen,
    hosts_ok,
    submit,
    floor,
    hold,
    procs,
    mem,
    lb_wait,
    lb_x,
    lb_tw,
    heuristic,
    thr,
    max_wait_now,
    limit,
    prune,
    model,
    version,
    slack,
    eps_tw,
    tw_x,
    tw_y,
    rx,
    ry,
    ix,
    iy,
):
    n = submit.shape[0]
    H = plen.shape[0]
    rem = heuristic.copy()
    nrem = n
    path = np.zeros(n, np.int64)
    starts = np.zeros(n)
    hosts = np.zeros(n, np.int64)
    u_c = np.zeros(n, np.int64)
    u_j = np.zeros(n, np.int64)
    u_h = np.zeros(n, np.int64)
    u_i = np.zeros(n, np.int64)
    u_k = np.zeros(n, np.int64)
    u_ins = np.zeros(n, np.bool_)
    sum_w = np.zeros(n + 1)
    max_w = np.zeros(n + 1)
    sum_x = np.zeros(n + 1)
    tw = np.zeros(n + 1)
    r0 = 0.0
    r1 = 0.0
    r2 = 0.0
    for j in range(n):
        r0 += lb_wait[j]
    for j in range(n):
        r1 += lb_x[j]
    for j in range(n):
        r2 += lb_tw[j]
    inv_n = 1.0 / n
    visits = 0
    leaves = 0
    pruned = 0
    have_best = False
    bx = 0.0
    by = 0.0
    best_order = np.zeros(n, np.int64)
    best_starts = np.zeros(n)
    best_hosts = np.zeros(n, np.int64)
    best_m = np.zeros(4)
    cidx = np.zeros(n, np.int64)
    chi = np.zeros(n, np.int64)
    m4 = np.zeros(4)
    stopped = False
    for at in range(n):
        depth = 0
        t = 1
        r = n
        cidx[0] = 0 if t < at else (1 if t == at else 0)
        chi[0] = r if t <= at else 1
        while depth >= 0:
            if cidx[depth] >= chi[depth]:
                depth -= 1
                if depth >= 0:
                    # leave(depth)
                    h = u_h[depth]
                    j = u_j[depth]
                    if h >= 0:
                        _unplace(
                            h,
                            u_i[depth],
                            u_k[depth],
                            u_ins[depth],
                            procs[j],
                            mem[j],
                            fp,
                            fm,
                            times,
                            plen,
                        )
                    r0 += lb_wait[j]
                    r1 += lb_x[j]
                    r2 += lb_tw[j]
                    c = u_c[depth]
                    for q in range(nrem, c, -1):
                        rem[q] = rem[q - 1]
                    rem[c] = j
                    nrem += 1
                    cidx[depth] += 1
                continue
            # enter(depth, c)
            if visits >= limit and have_best:
                stopped = True
                break
            visits += 1
            c = cidx[depth]
            j = rem[c]
            for q in range(c, nrem - 1):
                rem[q] = rem[q + 1]
            nrem -= 1
            # place j
            p = procs[j]
            m = mem[j]
            d = hold[j]
            best_s = math.inf
            best_h = -1
            best_i = -1
            best_free = 0
            for h in range(H):
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
            ins = False
            kk = 0
            if best_h >= 0:
                h = best_h
                e = best_s + d
                i = best_i
                # bisect_left(times, e, i + 1)
                lo = i + 1
                hi = plen[h]
                while lo < hi:
                    mid = (lo + hi) // 2
                    if times[h, mid] < e:
                        lo = mid + 1
                    else:
                        hi = mid
                kk = lo
                ins = kk == plen[h] or times[h, kk] != e
                if ins:
                    for q in range(plen[h], kk, -1):
                        times[h, q] = times[h, q - 1]
                        fp[h, q] = fp[h, q - 1]
                        fm[h, q] = fm[h, q - 1]
                    times[h, kk] = e
                    fp[h, kk] = fp[h, kk - 1]
                    fm[h, kk] = fm[h, kk - 1]
                    plen[h] += 1
                for q in range(i, kk):
                    fp[h, q] -= p
                if m != 0:
                    for q in range(i, kk):
                        fm[h, q] -= m
            else:
                best_i = 0
            path[depth] = j
            starts[depth] = best_s
            hosts[depth] = best_h
            u_c[depth] = c
            u_j[depth] = j
            u_h[depth] = best_h
            u_i[depth] = best_i
            u_k[depth] = kk
            u_ins[depth] = ins
            w = best_s - submit[j]
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
            if d1 == n:
                leaves += 1
                m4[0] = tw[n]
                m4[1] = max_w[n]
                m4[2] = sum_w[n] * inv_n
                m4[3] = sum_x[n] * inv_n
                cx = m4[ix]
                cy = m4[iy]
                won = (not have_best) or better(
                    bx, by, cx, cy, model, version, slack, eps_tw, tw_x, tw_y, rx, ry
                )
                if won:
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
                if not better(
                    bx, by, m4[ix], m4[iy], model, version, slack, eps_tw, tw_x, tw_y, rx, ry
                ):
                    pruned += 1
                    go_down = False
            if go_down and d1 < n:
                depth = d1
                t = depth + 1
                r = n - depth
                if t < at:
                    cidx[depth] = 0
                    chi[depth] = r
                elif t == at:
                    cidx[depth] = 1
                    chi[depth] = r
                else:
                    cidx[depth] = 0
                    chi[depth] = 1
                continue
            # leave(depth) right away, then next child
            h = u_h[depth]
            if h >= 0:
                _unplace(
                    h, u_i[depth], u_k[depth], u_ins[depth], procs[j], mem[j], fp, fm, times, plen
                )
            r0 += lb_wait[j]
            r1 += lb_x[j]
            r2 += lb_tw[j]
            for q in range(nrem, c, -1):
                rem[q] = rem[q - 1]
            rem[c] = j
            nrem += 1
            cidx[depth] += 1
        if stopped:
            break
    return best_order, best_starts, best_hosts, best_m, visits, leaves, pruned, not stopped


def run(
    planner: Any, objective: Any, heuristic: list[int], limit: int, prune: bool = True
) -> tuple:
    """Run the kernel on a Planner's problem (arrays copied)."""
    H = len(planner.profiles)
    n = planner.n
    cap = max(len(t) for t, _, _ in planner.profiles) + n + 2
    times = np.zeros((H, cap))
    fp = np.zeros((H, cap))
    fm = np.zeros((H, cap))
    plen = np.zeros(H, np.int64)
    for h, (t, p, m) in enumerate(planner.profiles):
        plen[h] = len(t)
        times[h, : len(t)] = t
        fp[h, : len(t)] = p
        fm[h, : len(t)] = m
    hosts_ok = np.zeros((n, H), np.bool_)
    for j, hs in enumerate(planner.hosts_for):
        for h in hs:
            hosts_ok[j, h] = True
    ob = objective
    vmap = {"A": 0, "B": 1, "C": 2}
    thr_x = ob._tw_x
    return search_dds(
        times,
        fp,
        fm,
        plen,
        hosts_ok,
        np.array(planner.submit),
        np.array(planner.floor),
        np.array(planner.hold),
        np.array(planner.procs, np.float64),
        np.array(planner.mem),
        np.array(planner.lb_wait),
        np.array(planner.lb_x),
        np.array(planner.lb_tw),
        np.array(heuristic, np.int64),
        planner.threshold,
        planner.max_wait_now,
        limit,
        prune,
        0 if ob.model == "lexical" else 1,
        vmap[ob.version],
        ob.slack,
        ob.eps_tw,
        thr_x,
        ob._tw_y,
        ob.ref[0],
        ob.ref[1],
        ob.ix,
        ob.iy,
    )


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from goal_speed import synthetic_planner

    from o2ksim.policies.goal.objectives import Objective

    tp = tk = 0.0
    differ = visits = searches = 0
    cases = [("tradeoff", "tw", "avgx", "A", 0.01), ("lexical", "tw", "avgx", "A", 0.01),
             ("tradeoff", "maxw", "avgx", "B", 0.0)]  # fmt: skip
    for warm in (True, False):  # the first pass compiles (or loads the cache)
        for seed in range(40):
            rng = np.random.default_rng(seed)
            pl = synthetic_planner(rng, n_wait=int(rng.integers(3, 40)))
            lxf = sorted(
                range(pl.n),
                key=lambda j: -(pl.lb_wait[j] + pl.runtime[j]) / max(pl.runtime[j], 1.0),
            )
            for model, x, y, ver, slack in cases:
                for limit in (1000, 4000, 8000):
                    ob = Objective(model, x, y, ver, slack)
                    ob.start_epoch(pl.max_wait_now)
                    t0 = time.process_time()
                    r = pl.search(ob, lxf, "dds", limit)
                    t1 = time.process_time()
                    k = run(pl, ob, lxf, limit)
                    t2 = time.process_time()
                    if warm:
                        continue
                    tp += t1 - t0
                    tk += t2 - t1
                    searches += 1
                    visits += r.visits
                    same = (list(k[0]) == r.order and list(k[1]) == r.starts and list(k[2]) == r.hosts
                            and tuple(k[3]) == r.measures
                            and (k[4], k[5], k[6], k[7]) == (r.visits, r.leaves, r.pruned, r.complete))  # fmt: skip
                    differ += not same
    print(f"{searches} searches, {differ} differ; {visits} visits; CPU per visit: "
          f"Planner.search {1e6 * tp / visits:.2f} us, kernel {1e6 * tk / visits:.3f} us")  # fmt: skip


if __name__ == "__main__":
    main()
