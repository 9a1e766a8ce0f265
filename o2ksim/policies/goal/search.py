"""Schedule evaluation and discrepancy search over job orders (G§2.4, G§3.4).

A *schedule* is an order of the waiting jobs.  It is evaluated by giving each
job in turn "the earliest start time ... such that the job will not take away
resources from any currently executing jobs during their execution, nor can it
delay the start time tentatively scheduled for any waiting job (considered
before this job in the same schedule)" (G§2.4): the job is placed on the
availability profile of each host that could ever hold it (processors and
memory), at the earliest step where it fits for its whole runtime, and its use
is subtracted from the profile.

The orders form a tree: the root is a dummy, a depth-``i`` node has ``n - i``
children (the jobs not yet placed, in the order of the *branching heuristic*,
FCFS or LXF), and every root-to-leaf path is one schedule.  Taking any child
but the leftmost is a *discrepancy*.  Two traversals (G§2.4, Fig. 1):

* LDS, iteration ``k = 0, 1, ...``: every path with exactly ``k`` discrepancies;
* DDS, iteration ``i = 0, 1, ...``: every path with a discrepancy at depth
  ``i``, any discrepancies above it and none below;

each iteration visiting its paths from left to right.  At most ``limit`` tree
nodes are visited per decision point, "any node visit is counted" (G§3.4) --
inner nodes are visited again by later iterations -- except that the first
path is always completed, so there is always a schedule.

Evaluation is incremental along the path: the profile and the running sums
of the measures are updated when a node is entered and restored when it is
left, so a visit costs one earliest-start scan and one profile update, with
no copying.  A subtree is *pruned* when even lower bounds of its measures
(the measures of the partial schedule plus, for each job not yet placed, its
value if it started now) would not beat the best schedule found so far; the
objective models are monotone in the candidate's measures, so no better
schedule is lost.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from o2ksim.policies.goal.columns import (
    SLOWDOWN_FLOOR,
    JobColumns,
    fixed_columns,
    host_fits,
    job_columns,
)
from o2ksim.policies.goal.objectives import Objective

SEARCHES = ("dds", "lds")


@dataclass
class Evaluated:
    """One schedule the search evaluated: job order, measures (Tw, maxW, avgW, avgX), verdict."""

    order: tuple[int, ...]
    measures: tuple[float, float, float, float]
    verdict: str


@dataclass
class SearchResult:
    """The outcome of one search: the best order, its planned starts and hosts."""

    order: list[int]
    starts: list[float]  # planned start of order[i]
    hosts: list[int]  # host index of order[i]
    measures: tuple[float, float, float, float]
    visits: int = 0
    leaves: int = 0
    pruned: int = 0
    complete: bool = False  # the whole tree was searched (or pruned)
    evaluated: list[Evaluated] = field(default_factory=list)


class _Stop(Exception):
    """The node limit is reached."""


def children(lds: bool, depth: int, n: int, it: int, kd: int) -> tuple[int, int]:
    """The children ``[lo, hi)`` (indices into the jobs not yet placed) that iteration
    ``it`` of the traversal visits below a node at ``depth`` (G§2.4, Fig. 1).

    DDS: every child above the discrepancy depth ``it`` (tree depth of the child
    ``depth + 1 < it``), the non-leftmost ones at it, the leftmost below.  LDS,
    with ``kd`` discrepancies left at the node: the leftmost child (which keeps
    ``kd``) when the choice points below it can still take them, the others
    (each spends one) when one is left to spend.  The compiled search
    (``kernel._children``) is this function compiled.
    """
    r = n - depth
    if not lds:
        t = depth + 1
        if t < it:
            return 0, r
        if t == it:
            return 1, r
        return 0, 1
    later = r - 2 if r >= 2 else 0  # choice points below the child at this depth
    c0 = kd <= later
    c1 = kd >= 1 and kd - 1 <= later
    if c0:
        return 0, (r if c1 else 1)
    return 1, (r if c1 else 1)


class Planner:
    """The waiting jobs and host profiles of one decision point, ready to be searched.

    ``profiles``: per host, the lists ``(times, procs, mem)`` of its
    availability step function from ``now`` (mutated during a search and
    restored afterwards).  ``capacity``: per host ``(procs, mem)``.  Jobs are
    given as parallel sequences indexed ``0..n-1``: ``submit``, ``runtime``
    (what the scheduler knows), ``procs`` and ``mem`` (0 = unconstrained).
    ``omega``: fixed Tw threshold (seconds), ``None`` for the dynamic one.
    The jobs are kept as numpy columns (:attr:`columns`, which the compiled
    search reads as they are); the Python search reads them as lists made on
    first use (``submit``, ``runtime``, ... ``lb_tw``, ``hosts_for``).
    """

    def __init__(
        self,
        now: float,
        profiles: Sequence[tuple[list[float], list[int], list[float]]],
        capacity: Sequence[tuple[int, float]],
        submit: Sequence[float] | np.ndarray,
        runtime: Sequence[float] | np.ndarray,
        procs: Sequence[int] | np.ndarray,
        mem: Sequence[float] | np.ndarray,
        omega: float | None = None,
    ) -> None:
        fixed = fixed_columns(submit, runtime, procs, mem)
        cap = np.asarray(capacity, np.float64).reshape(-1, 2)
        self._setup(now, profiles, fixed, host_fits(cap, fixed[4], fixed[5]), omega)

    @classmethod
    def of_columns(
        cls,
        now: float,
        profiles: Sequence[tuple[list[float], list[int], list[float]]],
        fixed: np.ndarray,
        hosts_ok: np.ndarray,
        omega: float | None = None,
    ) -> Planner:
        """The planner of jobs given as their :func:`~o2ksim.policies.goal.columns.fixed_columns`
        and :func:`~o2ksim.policies.goal.columns.host_fits` (e.g. gathered from a
        :class:`~o2ksim.policies.goal.columns.JobTable`): the same planner as from the
        jobs' sequences, without deriving those columns again."""
        planner = cls.__new__(cls)
        planner._setup(now, profiles, fixed, hosts_ok, omega)
        return planner

    def _setup(
        self,
        now: float,
        profiles: Sequence[tuple[list[float], list[int], list[float]]],
        fixed: np.ndarray,
        hosts_ok: np.ndarray,
        omega: float | None,
    ) -> None:
        self.now = now
        self.profiles = list(profiles)
        self.n = fixed.shape[1]
        cols, self.max_wait_now, self.threshold, self.rest = job_columns(now, fixed, hosts_ok, omega)
        self.columns: JobColumns = cols
        """The jobs as numpy arrays, computed once: the compiled search reads them as they are.
        ``max_wait_now``: the current wait of the oldest waiting job; ``threshold``: the Tw
        threshold (``omega``, else the dynamic one: ``max_wait_now``); ``rest``: the sums of
        the lower bounds of all jobs (wait, expansion factor, excessive wait)."""

    # The jobs as lists, for the Python search (whose scalar loops index lists faster
    # than arrays); each list is made from the column on first use.
    @cached_property
    def submit(self) -> list[float]:
        return self.columns.submit.tolist()

    @cached_property
    def runtime(self) -> list[float]:
        return self.columns.runtime.tolist()

    @cached_property
    def hold(self) -> list[float]:
        return self.columns.hold.tolist()

    @cached_property
    def procs(self) -> list[int]:
        return [int(p) for p in self.columns.procs.tolist()]

    @cached_property
    def mem(self) -> list[float]:
        return self.columns.mem.tolist()

    @cached_property
    def hosts_for(self) -> list[list[int]]:
        """Per job, the hosts that could ever hold it."""
        return [np.flatnonzero(row).tolist() for row in self.columns.hosts_ok]

    @cached_property
    def floor(self) -> list[float]:
        return self.columns.floor.tolist()

    @cached_property
    def lb_wait(self) -> list[float]:
        return self.columns.lb_wait.tolist()

    @cached_property
    def lb_x(self) -> list[float]:
        return self.columns.lb_x.tolist()

    @cached_property
    def lb_tw(self) -> list[float]:
        return self.columns.lb_tw.tolist()

    # ---------------------------------------------------------------- one schedule
    def evaluate(
        self, order: Sequence[int]
    ) -> tuple[list[float], list[int], tuple[float, float, float, float]]:
        """Planned starts, hosts and measures of one order (profiles are left unchanged)."""
        undo = []
        starts, hosts = [], []
        try:
            for j in order:
                s, h, i, k, ins = self._place(j)
                undo.append((j, h, i, k, ins))
                starts.append(s)
                hosts.append(h)
        finally:
            for j, h, i, k, ins in reversed(undo):
                self._unplace(j, h, i, k, ins)
        return starts, hosts, self.measures_of(order, starts)

    def measures_of(
        self, order: Sequence[int], starts: Sequence[float]
    ) -> tuple[float, float, float, float]:
        """(Tw, maxW, avgW, avgX) of the jobs of ``order`` at ``starts``."""
        n = max(len(order), 1)
        tw = maxw = sw = sx = 0.0
        for j, s in zip(order, starts, strict=True):
            w = s - self.submit[j]
            tw += max(0.0, w - self.threshold)
            maxw = max(maxw, w)
            sw += w
            sx += (w + self.floor[j]) / self.floor[j]
        return tw, maxw, sw / n, sx / n

    def _place(self, j: int) -> tuple[float, int, int, int, bool]:
        """Earliest start of job ``j`` over its hosts; subtract it there.  Returns undo data."""
        p = self.procs[j]
        m = self.mem[j]
        d = self.hold[j]
        profiles = self.profiles
        best_s = math.inf
        best_h = -1
        best_i = -1
        best_free = 0
        for h in self.hosts_for[j]:
            times, fp, fm = profiles[h]
            n = len(times)
            i = 0
            while i < n:
                if fp[i] < p or fm[i] < m:
                    i += 1
                    continue
                s = times[i]
                if s > best_s:
                    break
                e = s + d
                k = i + 1
                while k < n and times[k] < e:
                    if fp[k] < p or fm[k] < m:
                        break
                    k += 1
                else:
                    if s < best_s or fp[i] < best_free:
                        best_s, best_h, best_i, best_free = s, h, i, fp[i]
                    break
                i = k + 1
        if best_h < 0:
            return math.inf, -1, 0, 0, False
        times, fp, fm = profiles[best_h]
        e = best_s + d
        i = best_i
        k = bisect_left(times, e, i + 1)
        inserted = k == len(times) or times[k] != e
        if inserted:
            times.insert(k, e)
            fp.insert(k, fp[k - 1])
            fm.insert(k, fm[k - 1])
        if k - i == 1:
            fp[i] -= p
            if m:
                fm[i] -= m
        else:
            for t in range(i, k):
                fp[t] -= p
            if m:
                for t in range(i, k):
                    fm[t] -= m
        return best_s, best_h, i, k, inserted

    def _unplace(self, j: int, h: int, i: int, k: int, inserted: bool) -> None:
        if h < 0:
            return
        times, fp, fm = self.profiles[h]
        p = self.procs[j]
        m = self.mem[j]
        for t in range(i, k):
            fp[t] += p
        if m:
            for t in range(i, k):
                fm[t] += m
        if inserted:
            del times[k], fp[k], fm[k]

    # ---------------------------------------------------------------- the search
    def search(
        self,
        objective: Objective,
        heuristic: Sequence[int],
        method: str = "dds",
        limit: int = 4000,
        prune: bool = True,
        record: bool = False,
        on_leaf: object = None,
    ) -> SearchResult:
        """Search the orders with LDS or DDS under ``heuristic`` (job indices, leftmost first).

        ``limit``: maximum node visits (the first path is always completed).
        ``record``: keep every evaluated schedule (for the decision log).
        ``on_leaf``: optional callable receiving each evaluated order (tests).
        """
        if method not in SEARCHES:
            raise ValueError(f"search must be one of {', '.join(SEARCHES)}, got {method!r}")
        n = self.n
        thr = self.threshold
        submit, floor = self.submit, self.floor
        lb_wait, lb_x, lb_tw = self.lb_wait, self.lb_x, self.lb_tw
        place, unplace = self._place, self._unplace
        better = objective.better
        ix, iy = objective.ix, objective.iy
        inv_n = 1.0 / n if n else 0.0
        max_wait_now = self.max_wait_now

        rem = list(heuristic)
        path = [0] * n
        starts = [0.0] * n
        hosts = [0] * n
        sum_w = [0.0] * (n + 1)
        max_w = [0.0] * (n + 1)
        sum_x = [0.0] * (n + 1)
        tw = [0.0] * (n + 1)
        rest = list(self.rest)  # lower bounds of the jobs not placed

        result = SearchResult([], [], [], (math.inf,) * 4)
        best: list[tuple[float, float] | None] = [None]
        counts = [0, 0, 0]  # visits, leaves, pruned
        evaluated = result.evaluated

        def enter(depth: int, c: int) -> bool:
            """Place the ``c``-th remaining job at ``depth``; False when the subtree is pruned."""
            if counts[0] >= limit and best[0] is not None:
                raise _Stop
            counts[0] += 1
            j = rem.pop(c)
            s, h, i, k, ins = place(j)
            path[depth] = j
            starts[depth] = s
            hosts[depth] = h
            undo_stack[depth] = (c, j, h, i, k, ins)
            w = s - submit[j]
            f = floor[j]
            d1 = depth + 1
            sum_w[d1] = sum_w[depth] + w
            max_w[d1] = w if w > max_w[depth] else max_w[depth]
            sum_x[d1] = sum_x[depth] + (w + f) / f
            tw[d1] = tw[depth] + (w - thr if w > thr else 0.0)
            rest[0] -= lb_wait[j]
            rest[1] -= lb_x[j]
            rest[2] -= lb_tw[j]
            if d1 == n:
                leaf()
                return True
            b = best[0]
            if prune and b is not None:
                mw = max_w[d1]
                bound = (
                    tw[d1] + rest[2],
                    mw if mw > max_wait_now else max_wait_now,
                    (sum_w[d1] + rest[0]) * inv_n,
                    (sum_x[d1] + rest[1]) * inv_n,
                )
                if not better(b, (bound[ix], bound[iy])):
                    counts[2] += 1
                    return False
            return True

        def leave(depth: int) -> None:
            c, j, h, i, k, ins = undo_stack[depth]
            unplace(j, h, i, k, ins)
            rest[0] += lb_wait[j]
            rest[1] += lb_x[j]
            rest[2] += lb_tw[j]
            rem.insert(c, j)

        def leaf() -> None:
            counts[1] += 1
            m = (tw[n], max_w[n], sum_w[n] * inv_n, sum_x[n] * inv_n)
            cand = (m[ix], m[iy])
            b = best[0]
            if b is None:
                verdict = "first schedule"
                won = True
            else:
                won = better(b, cand)
                verdict = objective.why(b, cand) if record else ""
            if won:
                best[0] = cand
                result.order = path[:]
                result.starts = starts[:]
                result.hosts = hosts[:]
                result.measures = m
            if record:
                evaluated.append(Evaluated(tuple(path), m, verdict))
            if on_leaf is not None:
                on_leaf(tuple(path))  # type: ignore[operator]

        undo_stack: list[tuple[int, int, int, int, int, bool]] = [(0, 0, -1, 0, 0, False)] * (n + 1)

        # The walk: an explicit stack of the nodes on the current path, not recursion,
        # so that a path as deep as the queue is long (thousands of waiting jobs) stays
        # within Python's recursion limit.  Per depth: the next child to enter, the end
        # of the child range (children() below) and, for LDS, the discrepancies left.
        lds = method == "lds"
        nxt = [0] * (n + 1)
        end = [0] * (n + 1)
        kd = [0] * (n + 1)

        def walk(it: int) -> None:
            """Iteration ``it`` (LDS: ``it`` discrepancies; DDS: the deepest at depth ``it``)."""
            depth = 0
            kd[0] = it
            nxt[0], end[0] = children(lds, 0, n, it, it)
            while True:
                c = nxt[depth]
                if c < end[depth]:
                    if enter(depth, c):
                        d1 = depth + 1
                        if d1 < n:  # down to the child's first child
                            kd[d1] = kd[depth] if c == 0 else kd[depth] - 1
                            nxt[d1], end[d1] = children(lds, d1, n, it, kd[d1])
                            depth = d1
                            continue
                    leave(depth)
                    nxt[depth] = c + 1
                elif depth == 0:
                    return
                else:  # every child done: leave this node, on to its next sibling
                    depth -= 1
                    leave(depth)
                    nxt[depth] += 1

        if n:
            try:
                for it in range(n):
                    walk(it)
                result.complete = True
            except _Stop:
                self._restore(undo_stack, rem, n - len(rem))  # nodes still entered
        result.visits, result.leaves, result.pruned = counts
        return result

    def _restore(self, undo_stack: list, rem: list[int], entered: int) -> None:
        for depth in range(entered - 1, -1, -1):
            c, j, h, i, k, ins = undo_stack[depth]
            self._unplace(j, h, i, k, ins)
            rem.insert(c, j)


__all__ = ["SEARCHES", "SLOWDOWN_FLOOR", "Evaluated", "Planner", "SearchResult"]
