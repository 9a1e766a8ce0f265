"""Exactness harness of the goal-oriented search (issue 26): the ground a faster search must stand on.

A faster search (incremental evaluation, stronger bounds, a compiled kernel)
must make *every* decision the current one makes.  This module pins those
decisions down against a reference that shares none of the search's code
except the objective's pairwise comparison (``Objective.better``, itself
checked by hand against G Table 5 in ``tests/test_goal.py``):

* a brute-force reference: every permutation of the waiting jobs, each
  schedule evaluated from scratch on a copy of the host profiles (earliest
  start where the job fits for its whole runtime, G§2.4), the leaves put in
  the traversal's visit order (LDS: by number of discrepancies, DDS: by the
  depth of the deepest discrepancy; each iteration left to right, G§2.4,
  Fig. 1), and the best found by folding ``better`` over them in that order
  (the first of equally good schedules wins).  With a node limit large
  enough to visit the whole tree this is what the search must return, with
  or without pruning: a pruned subtree's leaves are contiguous in the visit
  order of one iteration and none of them beats the best, so the fold never
  changes inside it (the objectives are monotone in the candidate's
  measures).
* random decision points (hypothesis: 1-6 waiting jobs, 1-2 hosts with
  processors and memory, running jobs with predicted ends, ties on purpose);
* the paper's worked example, Fig. 1's four-job tree (G§2.4): the reference
  visit order reproduces the figure's iterations, and the search's leaves
  come in exactly that order;
* recorded decision points of real runs of the policy (:class:`Recorder`):
  the snapshot's queue, the running jobs' predicted ends, the host profiles,
  the objective and heuristic, and the search's chosen schedule; every one is
  replayed, and the small ones are checked against the brute force.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job, JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies.goal import GoalOriented
from o2ksim.policies.goal.objectives import Objective
from o2ksim.policies.goal.search import Planner, SearchResult
from o2ksim.policies.priority import make_priority

BIG = 10**9  # a node limit that is never binding for these trees
Profile = tuple[list[float], list[int], list[float]]

# ----------------------------------------------------------------------------- the reference


def _discrepancies(perm: Sequence[int], heuristic: Sequence[int]) -> tuple[int, ...]:
    """The child index taken at each depth: the job's position among the jobs not yet placed."""
    rem = list(heuristic)
    out = []
    for j in perm:
        out.append(rem.index(j))
        rem.remove(j)
    return tuple(out)


def visit_order(heuristic: Sequence[int], method: str) -> list[tuple[int, ...]]:
    """Every schedule, in the order LDS or DDS evaluates them over the whole tree (G§2.4).

    LDS iteration ``k``: the paths with exactly ``k`` discrepancies; DDS iteration
    ``i``: the paths whose deepest discrepancy is at depth ``i`` (a discrepancy at
    depth ``d`` is a non-leftmost child of a depth ``d - 1`` node).  Each
    iteration left to right, i.e. by the child indices, lexicographically.
    """
    perms = [tuple(p) for p in itertools.permutations(heuristic)]

    def key(p: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
        c = _discrepancies(p, heuristic)
        if method == "lds":
            return sum(1 for x in c if x), c
        return max((d + 1 for d, x in enumerate(c) if x), default=0), c

    return sorted(perms, key=key)


def _free_at(prof: Profile, t: float) -> tuple[int, float]:
    times, procs, mem = prof
    i = max(k for k, x in enumerate(times) if x <= t)
    return procs[i], mem[i]


def _fits(prof: Profile, s: float, e: float, p: int, m: float) -> bool:
    times = prof[0]
    points = [s] + [t for t in times if s < t < e]
    return all(fp >= p and fm >= m for fp, fm in (_free_at(prof, t) for t in points))


def _subtract(prof: Profile, s: float, e: float, p: int, m: float) -> Profile:
    times = sorted(set(prof[0]) | {s, e})
    free = [_free_at(prof, t) for t in times]
    procs = [fp - (p if s <= t < e else 0) for t, (fp, _) in zip(times, free, strict=True)]
    mem = [fm - (m if s <= t < e else 0.0) for t, (_, fm) in zip(times, free, strict=True)]
    return times, procs, mem


def reference_schedule(
    now: float,
    profiles: Sequence[Profile],
    capacity: Sequence[tuple[int, float]],
    jobs: Sequence[tuple[float, float, int, float]],
    order: Sequence[int],
) -> tuple[list[float], list[int]]:
    """Planned starts and hosts of ``order``, evaluated from scratch (G§2.4).

    Each job starts at the earliest profile step where it fits for its whole
    runtime (a zero runtime holds the processors 1 ms) on a host that could ever
    hold it; on equal starts the host with the fewest free processors at the
    start wins, then the first host.
    """
    profs = [copy.deepcopy(p) for p in profiles]
    starts, hosts = [], []
    for j in order:
        _, run, p, m = jobs[j]
        hold = run if run > 0 else 1e-3
        best: tuple[float, int, int] | None = None
        for h, (cp, cm) in enumerate(capacity):
            if cp < p or cm < m:
                continue
            for s in profs[h][0]:
                if s >= now and _fits(profs[h], s, s + hold, p, m):
                    cand = (s, _free_at(profs[h], s)[0], h)
                    best = cand if best is None or cand[:2] < best[:2] else best
                    break
        assert best is not None, "the generators only make jobs some host can hold"
        s, _, h = best
        profs[h] = _subtract(profs[h], s, s + hold, p, m)
        starts.append(s)
        hosts.append(h)
    return starts, hosts


def reference_measures(
    now: float,
    jobs: Sequence[tuple[float, float, int, float]],
    order: Sequence[int],
    starts: Sequence[float],
    omega: float | None,
) -> tuple[float, float, float, float]:
    """(Tw, maxW, avgW, avgX) of a schedule (G Table 4; threshold: oldest job's wait, or omega)."""
    thr = max(now - sub for sub, _, _, _ in jobs) if omega is None else omega
    waits = [s - jobs[j][0] for j, s in zip(order, starts, strict=True)]
    floors = [max(jobs[j][1], 60.0) for j in order]
    n = len(order)
    return (
        sum(max(0.0, w - thr) for w in waits),
        max(waits),
        sum(waits) / n,
        sum((w + f) / f for w, f in zip(waits, floors, strict=True)) / n,
    )


def brute_force(
    now: float,
    profiles: Sequence[Profile],
    capacity: Sequence[tuple[int, float]],
    jobs: Sequence[tuple[float, float, int, float]],
    objective: Objective,
    heuristic: Sequence[int],
    method: str,
    omega: float | None,
) -> tuple[tuple[int, ...], tuple[float, float, float, float], list[float]]:
    """The whole tree's winner: ``better`` folded over the schedules in visit order."""
    best: tuple[float, float] | None = None
    win: tuple[tuple[int, ...], tuple[float, float, float, float], list[float]] | None = None
    for perm in visit_order(heuristic, method):
        starts, _ = reference_schedule(now, profiles, capacity, jobs, perm)
        m = reference_measures(now, jobs, perm, starts, omega)
        cand = (m[objective.ix], m[objective.iy])
        if best is None or objective.better(best, cand):
            best, win = cand, (perm, m, starts)
    assert win is not None
    return win


# ----------------------------------------------------------------------------- Fig. 1


@pytest.mark.parametrize("method", ["lds", "dds"])
def test_fig1_reference_order_is_the_papers_and_the_searchs(method: str) -> None:
    ref = ["".join(str(j + 1) for j in p) for p in visit_order([0, 1, 2, 3], method)]
    # G§2.4, Fig. 1a-c (LDS: 1, 6 and 11 paths) and 1e-f (DDS: 1, 3 and 8 paths)
    if method == "lds":
        assert ref[:7] == ["1234", "1243", "1324", "1423", "2134", "3124", "4123"]
        assert len(ref[7:18]) == 11 and all(
            sum(a != b for a, b in zip(_discrepancies(tuple(int(c) - 1 for c in p), [0, 1, 2, 3]),
                                       (0, 0, 0, 0), strict=True)) == 2 for p in ref[7:18])  # fmt: skip
    else:
        assert ref[:4] == ["1234", "2134", "3124", "4123"]
        assert ref[4:12] == ["1324", "1423", "2314", "2413", "3214", "3412", "4213", "4312"]
    seen: list[str] = []
    planner = Planner(0.0, [([0.0], [10], [0.0])], [(10, 0.0)], [0] * 4, [10] * 4, [1] * 4, [0] * 4)
    planner.search(Objective("lexical", "tw", "avgx"), [0, 1, 2, 3], method, limit=BIG, prune=False,
                   on_leaf=lambda p: seen.append("".join(str(j + 1) for j in p)))  # fmt: skip
    assert seen == ref


# ----------------------------------------------------------------------------- random decision points


@dataclass
class Point:
    """One decision point: what the search is given, and what it chose."""

    now: float
    profiles: list[Profile]
    capacity: list[tuple[int, float]]
    jobs: list[tuple[float, float, int, float]]  # (submit, runtime, procs, mem) per waiting job
    omega: float | None
    heuristic: list[int]
    objective: tuple[str, str, str, str, float]  # model, x, y, version, slack
    method: str = "dds"
    limit: int = BIG
    prune: bool = True
    queue_ids: list[int] = field(default_factory=list)
    running_ends: list[tuple[int, str, float]] = field(
        default_factory=list
    )  # (job id, host, predicted end)
    chosen: SearchResult | None = None

    def planner(self) -> Planner:
        sub, run, procs, mem = (list(x) for x in zip(*self.jobs, strict=True))
        return Planner(self.now, copy.deepcopy(self.profiles), self.capacity, sub, run, procs, mem,
                       self.omega)  # fmt: skip

    def make_objective(self, planner: Planner) -> Objective:
        model, x, y, version, slack = self.objective
        ob = Objective(model, x, y, version, slack)
        ref = None
        if model == "tradeoff" and version == "C":
            # version C: references from the FCFS- and LXF-order schedules (G§3.2),
            # evaluated by the reference, not by the search
            fcfs = list(range(len(self.jobs)))
            lxf = sorted(fcfs, key=lambda j: -(self.now - self.jobs[j][0] + self.jobs[j][1])
                         / max(self.jobs[j][1], 1.0))  # fmt: skip
            by = {}
            for name, order in (("fcfs", fcfs), ("lxf", lxf)):
                s, _ = reference_schedule(self.now, self.profiles, self.capacity, self.jobs, order)
                by[name] = reference_measures(self.now, self.jobs, order, s, self.omega)
            pick = {"tw": "fcfs", "maxw": "fcfs", "avgw": "lxf", "avgx": "lxf"}
            ref = (by[pick[x]][ob.ix], by[pick[y]][ob.iy])
        ob.start_epoch(planner.max_wait_now, ref)
        return ob

    def search(self) -> SearchResult:
        planner = self.planner()
        before = copy.deepcopy(planner.profiles)
        r = planner.search(self.make_objective(planner), self.heuristic, self.method, self.limit,
                           self.prune)  # fmt: skip
        assert planner.profiles == before, "the search must leave the profiles as it found them"
        return r


def check_against_brute_force(point: Point, result: SearchResult) -> None:
    """The search's order, starts, hosts and measures equal the brute force's."""
    assert result.complete
    planner = point.planner()
    ob = point.make_objective(planner)
    perm, m, starts = brute_force(point.now, point.profiles, point.capacity, point.jobs, ob,
                                  point.heuristic, point.method, point.omega)  # fmt: skip
    assert tuple(result.order) == perm
    assert result.starts == starts
    assert result.measures == pytest.approx(m, rel=1e-12, abs=1e-9)
    ref_starts, ref_hosts = reference_schedule(point.now, point.profiles, point.capacity, point.jobs,
                                               result.order)  # fmt: skip
    assert (result.starts, result.hosts) == (ref_starts, ref_hosts)


@st.composite
def points(draw: Any) -> Point:
    now = 1000.0
    n_hosts = draw(st.integers(1, 2))
    use_mem = draw(st.booleans())
    capacity: list[tuple[int, float]] = []
    profiles: list[Profile] = []
    for _ in range(n_hosts):
        cap = draw(st.integers(1, 8))
        cmem = float(draw(st.sampled_from([4, 8]))) if use_mem else math.inf
        # running jobs: (procs, mem, predicted end); ends on a coarse grid so that starts tie
        running = draw(st.lists(st.tuples(st.integers(1, 4), st.sampled_from([0.0, 1.0, 2.0]),
                                          st.integers(1, 6)), max_size=4))  # fmt: skip
        used_p, used_m = 0, 0.0
        ends: dict[float, tuple[int, float]] = {}
        for p, m, e in running:
            m = m if use_mem else 0.0
            if used_p + p <= cap and used_m + m <= cmem:
                used_p += p
                used_m += m
                t = now + 100.0 * e
                ends[t] = (ends.get(t, (0, 0.0))[0] + p, ends.get(t, (0, 0.0))[1] + m)
        times, fp, fm = [now], [cap - used_p], [cmem - used_m]
        for t in sorted(ends):
            times.append(t)
            fp.append(fp[-1] + ends[t][0])
            fm.append(fm[-1] + ends[t][1])
        capacity.append((cap, cmem))
        profiles.append((times, fp, fm))
    n = draw(st.integers(1, 6))
    most_p = max(c for c, _ in capacity)
    jobs = []
    for _ in range(n):
        sub = now - 50.0 * draw(st.integers(0, 20))
        run = 50.0 * draw(st.integers(0, 8))  # 0: a zero-length job; < 60 s: the slowdown floor
        h = draw(st.integers(0, n_hosts - 1))
        p = draw(st.integers(1, capacity[h][0]))
        m = float(draw(st.integers(0, int(capacity[h][1])))) if use_mem else 0.0
        assert p <= most_p
        jobs.append((sub, run, p, m))
    model = draw(st.sampled_from(["lexical", "tradeoff"]))
    x, y = draw(st.sampled_from([("tw", "avgx"), ("maxw", "avgx"), ("tw", "avgw"), ("avgx", "maxw"),
                                 ("avgw", "tw")]))  # fmt: skip
    version = draw(st.sampled_from(["A", "B", "C"]))
    slack = draw(st.sampled_from([0.0, 0.01, 0.2]))
    omega = draw(st.sampled_from([None, None, 0.0, 300.0]))
    order = list(range(n))
    heuristic = draw(st.permutations(order))
    method = draw(st.sampled_from(["dds", "lds"]))
    prune = draw(st.booleans())
    return Point(now, profiles, capacity, jobs, omega, list(heuristic), (model, x, y, version, slack),
                 method, BIG, prune)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points())
def test_search_equals_brute_force_on_random_decision_points(point: Point) -> None:
    check_against_brute_force(point, point.search())


def test_a_difference_equal_to_the_slack_is_outside_it() -> None:
    """A knife edge found by hypothesis: avgW's difference equals its slack exactly.

    One processor free at now = 1000; jobs (submit, runtime) J0 (550, 150),
    J1 (950, 50), J2 (350, 300); Lexical(Tw -> avgW), slack 0.2; heuristic
    order J2, J1, J0; DDS visits (2,1,0), (1,2,0), (0,2,1), (2,0,1), (1,0,2),
    (0,1,2).  By hand: the oldest job has waited 650 s, so Tw's slack is
    0.2 x 650 = 130 and Tw counts waits over 650 s.  (2,1,0): waits 650, 350,
    800 -> (Tw 150, avgW 600).  (1,2,0) -> (200, 516.67): Tw worse by 50 < 130
    and avgW better by 83.3 < 120, both relaxed to 0: not better.  (0,2,1)
    -> (150, 583.33): better (strictly lower avgW).  (2,0,1) -> (100, 633.33):
    both within slack, not better.  (1,0,2) -> (200, 466.67): Tw within slack,
    avgW better by 116.67 = 0.2 x 583.33 exactly: not strictly inside the
    slack (G§3.3: -e < d < e), so it counts and (1,0,2) wins; (0,1,2) ->
    (200, 500) does not beat it.  The search sums the waits in another order
    than the reference, so before the rule took rounding into account the two
    fell on different sides of the edge.
    """
    point = Point(now=1000.0, profiles=[([1000.0], [1], [4.0])], capacity=[(1, 4.0)],
                  jobs=[(550.0, 150.0, 1, 0.0), (950.0, 50.0, 1, 0.0), (350.0, 300.0, 1, 0.0)],
                  omega=None, heuristic=[2, 1, 0], objective=("lexical", "tw", "avgw", "A", 0.2),
                  method="dds", limit=BIG, prune=False)  # fmt: skip
    result = point.search()
    assert tuple(result.order) == (1, 0, 2)
    assert result.starts == [1000.0, 1050.0, 1200.0]
    check_against_brute_force(point, result)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(points())
def test_pruning_changes_nothing_but_the_work(point: Point) -> None:
    point.prune = True
    pruned = point.search()
    point.prune = False
    full = point.search()
    assert (pruned.order, pruned.starts, pruned.hosts) == (full.order, full.starts, full.hosts)
    assert pruned.measures == full.measures
    assert pruned.visits <= full.visits and pruned.leaves <= full.leaves


# ----------------------------------------------------------------------------- recorded runs


class Recorder(GoalOriented):
    """The goal-oriented policy, recording every searched decision point (:class:`Point`).

    Records the snapshot's queue (job ids), the running jobs' predicted ends, the
    search's input (host profiles, jobs as the scheduler knows them, objective,
    heuristic, method, L, pruning) and the chosen schedule.  Replaying a point
    with a faster search must give the same ``chosen``.
    """

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        self.points: list[Point] = []
        self._pending: Point | None = None

    def planner(self, snap: Snapshot, queue: list[Job]) -> Planner:
        p = super().planner(snap, queue)
        ob = self.objective
        self._pending = Point(
            snap.now, copy.deepcopy(p.profiles),
            [(h.spec.procs, h.spec.memory) for h in snap.hosts],
            list(zip(p.submit, p.runtime, p.procs, p.mem, strict=True)), self.omega,
            [], (ob.model, ob.x, ob.y, ob.version, ob.slack),
            self.search_method, self.limit, self.prune, [j.id for j in queue],
            [(j.id, h.name, j.predicted_end(snap.now)) for h in snap.hosts for j in h.running],
        )  # fmt: skip
        return p

    def schedule(self, snap: Snapshot) -> list[Any]:
        self.last = None
        out = super().schedule(snap)
        if self.last is not None and self._pending is not None:
            point = self._pending
            fcfs = list(range(len(point.jobs)))
            # LXF-backfill's own order of the queue (Priority.order), mapped to positions
            queue = list(snap.queue)
            pos = {job: i for i, job in enumerate(queue)}
            lxf = [pos[j] for j in make_priority("lxf").order(queue, snap.now)]
            point.heuristic = lxf if self._branch_lxf else fcfs
            point.chosen = self.last
            self.points.append(point)
        self._pending = None
        return out


MACHINE = MachineSpec("two", (HostSpec("a", 16, 8 * KB_PER_GB), HostSpec("b", 8, 4 * KB_PER_GB)))


def _workload(seed: int, n: int = 60) -> list[JobSpec]:
    import random

    rng = random.Random(seed)
    t = 0.0
    jobs = []
    for i in range(n):
        t += rng.choice([0, 5, 20, 60, 120])
        procs = rng.choice([1, 1, 2, 4, 8, 12, 16])
        run = float(rng.choice([0, 30, 120, 600, 1800]))
        mem = rng.choice([0, 512, 3000, 6000]) * 1024
        jobs.append(JobSpec(i + 1, t, procs, mem, max(run, 1.0), run))
    return jobs


@pytest.mark.parametrize("seed, params", [
    (1, {"model": "tradeoff", "measures": "tw,avgx", "limit": 4000}),
    (2, {"model": "lexical", "measures": "tw,avgx", "branching": "fcfs", "limit": 300}),
    (3, {"model": "tradeoff", "measures": "maxw,avgx", "version": "B", "search": "lds", "limit": 4000}),
    (4, {"model": "tradeoff", "measures": "tw,avgw", "version": "C", "limit": 50}),
])  # fmt: skip
def test_recorded_run_replays_and_small_points_equal_brute_force(seed: int, params: dict) -> None:
    pol = Recorder(**params)
    r = simulate(_workload(seed), MACHINE, pol)
    assert pol.points, "the run searched no decision point"
    start = dict(zip(r.jobs["job_id"], r.jobs["start"], strict=True))
    brute = 0
    for point in pol.points:
        chosen = point.chosen
        assert chosen is not None
        # the jobs the chosen schedule plans to start now are the ones the run started now
        now_ids = {point.queue_ids[j] for j, s in zip(chosen.order, chosen.starts, strict=True)
                   if s <= point.now}  # fmt: skip
        assert all(start[i] == point.now for i in now_ids)
        assert all(e >= point.now for _, _, e in point.running_ends)
        again = point.search()
        assert (again.order, again.starts, again.hosts, again.visits) == (
            chosen.order,
            chosen.starts,
            chosen.hosts,
            chosen.visits,
        )
        if len(point.jobs) <= 6 and chosen.complete:
            check_against_brute_force(point, chosen)
            brute += 1
    assert brute > 0
