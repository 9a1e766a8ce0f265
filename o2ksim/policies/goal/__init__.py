"""Goal-oriented search scheduling (Chiang & Vasupongayya, G§2.4, G§3; SPEC §3.5).

At every scheduling decision point the policy searches orders of the waiting
jobs (:mod:`~o2ksim.policies.goal.search`) for the schedule that best meets
two goals stated as an objective over two measures
(:mod:`~o2ksim.policies.goal.objectives`), e.g. A-Tradeoff(Tw:avgX): prevent
starvation and favour short jobs, in equal measure.  The jobs of the best
schedule whose planned start is *now* start; the others wait for the next
decision point, where the search is done again (G§2.4).

Parameters (``o2ksim policies`` lists them): ``model`` (lexical | tradeoff),
``measures`` ("x,y", e.g. "tw,avgx"; x dominates in the Lexical model),
``version`` (A | B | C reference values), ``slack`` (0.01 = relaxed
differences with 1 % slack; 0 = strict), ``omega`` (fixed Tw threshold;
unset = the dynamic threshold), ``search`` (dds | lds, or dds+local |
lds+local: the discrepancy search then a hill climb of at most
``local_budget`` node visits over its best order,
:mod:`~o2ksim.policies.goal.local`; ``local_restart``: a second climb from the
other branching order when the first ends early; ``local_warm``: the climb
starts from the previous decision point's best order when it is better than
the discrepancy search's; ``local_kind``: the climb's passes scan from the
first position or from the ``last``, alone or iterated (``ils``, ``ils-last``:
kicked by ``local_kick`` random forward moves seeded from the decision point)), ``branching``
(fcfs | lxf), ``limit`` (L, tree-node visits per decision point), ``prune``,
``search_kernel`` (auto | numba | python: the same search compiled with numba,
:mod:`~o2ksim.policies.goal.kernel`, or the Python reference,
:meth:`Planner.search`; identical decisions; auto = numba when installed,
``pip install o2ksim[fast]``).  The decision log (explain) always uses the
Python search, which records every schedule it evaluates.

Runtime knowledge: the policy plans with the runtime the scheduler is told
(``JobSpec.req_time``), as the backfill policies do, so every ``--estimates``
scenario of :func:`~o2ksim.workloads.transforms.apply_estimates` applies to
it: requested (the default), actual (the paper's assumption, G§4), the
thesis's Scenario A and B (T§6.2.1) or ``user-recent`` (a predictor fitted on
each user's earlier jobs).  A running job past its estimate is predicted to
end *now* until it ends (SPEC §2, :func:`o2ksim.policies.running_releases.release_time`,
the rule of the backfill pass), or at start + its requested runtime first
under the overrun rule ``requested`` (``RunSettings.overrun``), or by its
kill time when the kill rule applies.
"""

from __future__ import annotations

import importlib.util
import math
import time
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from o2ksim.engine.decisions import Decision, Reserve, Start
from o2ksim.engine.snapshot import Snapshot
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.jobs import Job
from o2ksim.policies.base import POLICIES, Param, Policy
from o2ksim.policies.goal.columns import JobTable
from o2ksim.policies.goal.decision_log import search_account
from o2ksim.policies.goal.local import (
    LOCAL_KINDS,
    LOCAL_SUFFIX,
    ils_seed,
    improve,
    improve_ils,
    improve_restart,
    improve_warm,
    warm_order,
)
from o2ksim.policies.goal.objectives import (
    MEASURES,
    MODELS,
    REFERENCE_ORDER,
    VERSIONS,
    Objective,
)
from o2ksim.policies.goal.search import SEARCHES, Planner, SearchResult
from o2ksim.policies.priority import LXFPriority, rank
from o2ksim.policies.profile import host_profiles
from o2ksim.policies.quiet import proved_for
from o2ksim.units import parse_duration

BRANCHINGS = ("fcfs", "lxf")
SEARCH_CHOICES = (*SEARCHES, *(s + LOCAL_SUFFIX for s in SEARCHES))
"""``search`` choices: a discrepancy search, alone or followed by the hill climb."""
KERNELS = ("auto", "numba", "python")
"""``search_kernel`` choices: numba when installed (auto), numba (required), the Python reference."""


def _measure_pair(v: Any) -> tuple[str, str]:
    items = v.split(",") if isinstance(v, str) else list(v)
    items = [str(x).strip().lower() for x in items]
    if len(items) != 2 or items[0] == items[1] or any(x not in MEASURES for x in items):
        raise ValueError(v)
    return items[0], items[1]


def _check_measures(v: Any) -> bool:
    try:
        _measure_pair(v)
    except (ValueError, TypeError):
        return False
    return True


def numba_installed() -> bool:
    """Whether numba can be imported (without importing it: that takes a while)."""
    return importlib.util.find_spec("numba") is not None


def _check_omega(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    try:
        return parse_duration(v) >= 0
    except O2KSimError:
        return False


class GoalOriented(Policy):
    """Search job orders with LDS/DDS for the schedule best under a two-measure objective."""

    kind = "goal"
    description = "Goal-oriented search: LDS/DDS over job orders, Lexical or Eq-Tradeoff objective"
    source = "G§2.4, G§3, Tables 4-6"
    PARAMS: ClassVar[dict[str, Param]] = {
        "model": Param(str, "tradeoff", "objective model: lexical (x -> y) or tradeoff (x:y)",
                       choices=MODELS),
        "measures": Param((str, list), "tw,avgx",
                          f"the two measures 'x,y' among {', '.join(MEASURES)} (G Table 4)",
                          check=_check_measures,
                          check_help=f"must be two different measures 'x,y' among {', '.join(MEASURES)}"),
        "version": Param(str, "A", "Eq-Tradeoff reference values: A (best so far), B (smaller), "
                         "C (FCFS/LXF backfill order at the epoch start)", choices=VERSIONS),
        "slack": Param(float, 0.01, "relaxed differences: relative slack (0.01 = 1 %, G§3.3); 0 = strict",
                       check=lambda v: 0 <= v < 1, check_help="must be in [0, 1)"),
        "omega": Param((int, float, str), None, "fixed Tw threshold (seconds or e.g. '50h'); "
                       "unset = the dynamic threshold (current wait of the oldest waiting job)",
                       check=_check_omega, check_help="must be a duration >= 0"),
        "search": Param(str, "dds", "tree traversal: dds or lds (G§2.4); dds+local, lds+local: "
                        "then a hill climb over the best order (swaps and moves, local_budget visits)",
                        choices=SEARCH_CHOICES),
        "local_budget": Param(int, 4000, "node visits of the hill climb of search = dds+local or "
                              "lds+local (after the L visits of the discrepancy search)",
                              check=lambda v: v >= 0, check_help="must be >= 0"),
        "local_kind": Param(str, "first", "dds+local, lds+local: the climb: first (first-improvement "
                            "hill climb, each pass scanning from the first position), last (the "
                            "same, scanning from the last position, where the excessive waits "
                            "arise), ils, ils-last (iterated: the best schedule kicked by "
                            "local_kick random forward moves, seeded from the decision point, and "
                            "climbed again while visits are left; the better wins)",
                            choices=LOCAL_KINDS),
        "local_kick": Param(int, 2, "local_kind = ils: random forward moves per kick",
                            check=lambda v: v >= 1, check_help="must be >= 1"),
        "local_restart": Param(bool, False, "dds+local, lds+local: when the climb ends at a local "
                               "optimum with visits left, climb again from the other branching "
                               "order (FCFS under LXF branching, LXF under FCFS); the better wins"),
        "local_warm": Param(bool, False, "dds+local, lds+local: the climb starts from the better of the "
                            "discrepancy search's schedule and the previous decision point's best "
                            "order (jobs still waiting, then new ones in LXF order)"),
        "branching": Param(str, "lxf", "branching heuristic: fcfs or lxf (G§2.4)", choices=BRANCHINGS),
        "limit": Param(int, 4000, "L: tree-node visits per decision point (every visit counts, G§3.4)",
                       check=lambda v: v >= 1, check_help="must be >= 1"),
        "prune": Param(bool, True, "abandon subtrees that cannot beat the best schedule (G§2.4)"),
        "search_kernel": Param(str, "auto", "the search's code, same decisions: numba (compiled, "
                               "pip install o2ksim[fast]), python (the reference), auto = numba "
                               "when installed", choices=KERNELS, option=True,
                               metavar="{auto,numba,python}"),
    }  # fmt: skip

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        p = self.params
        x, y = _measure_pair(p["measures"])
        self.objective = Objective(p["model"], x, y, p["version"], p["slack"])
        self.omega: float | None = None if p["omega"] is None else parse_duration(p["omega"])
        self.local: bool = p["search"].endswith(LOCAL_SUFFIX)
        """Whether the hill climb follows the discrepancy search."""
        self.search_method: str = p["search"].removesuffix(LOCAL_SUFFIX)
        self.local_budget: int = p["local_budget"]
        self.local_restart: bool = p["local_restart"]
        self.local_warm: bool = p["local_warm"]
        self.local_kind: str = p["local_kind"]
        self.local_kick: int = p["local_kick"]
        self._ils = self.local_kind.startswith("ils")
        self._last = self.local_kind.endswith("last")
        if self.local_kind != "first" and (self.local_warm or self.local_restart):
            raise ConfigError(self.name, f"local_kind = {self.local_kind} does not combine with "
                              "local_warm or local_restart; set one", field="local_kind")  # fmt: skip
        if self.local_warm and self.local_restart:
            raise ConfigError(self.name, "local_warm and local_restart do not combine; set one",
                              field="local_warm")  # fmt: skip
        self.limit: int = p["limit"]
        self.prune: bool = p["prune"]
        self._lxf = LXFPriority()
        self._branch_lxf = p["branching"] == "lxf"
        if p["search_kernel"] == "numba" and not numba_installed():
            raise ConfigError(self.name, "numba is not installed (pip install o2ksim[fast]); "
                              "search_kernel=auto or python runs the Python search",
                              field="search_kernel")  # fmt: skip
        self.kernel: str = (
            "numba" if p["search_kernel"] == "numba" or
            (p["search_kernel"] == "auto" and numba_installed()) else "python"
        )  # fmt: skip
        """The search that runs: ``numba`` or ``python`` (from ``search_kernel``)."""
        self._kernel_search: Any = None
        self._kernel_improve: Any = None
        self._reset()

    def _reset(self) -> None:
        """The state of one run: caches keyed by host versions, counters, timings."""
        self._profile_cache: dict[str, Any] = {}
        # every job's planner columns: by queue index (None: built job by job when seen)
        self._tables: dict[Any, JobTable] = {}
        self.counters: dict[str, Any] = {
            "goal_searches": 0, "goal_visits": 0, "goal_leaves": 0, "goal_pruned": 0,
            "goal_search_seconds": 0.0, "goal_max_search_seconds": 0.0, "goal_search_cpu_seconds": 0.0,
            "goal_searches_numba": 0, "goal_searches_python": 0,
        }  # fmt: skip
        self.timings: list[tuple[int, int, float]] = []
        """Per searched decision point: (waiting jobs, node visits, seconds)."""
        self.last: SearchResult | None = None
        self._previous: list[Job] = []  # local_warm: the last search's best order
        self._planned: dict[int, tuple[str, float]] = {}  # explain: last planned starts

    def bind(self, machine: Any, rng: Any = None) -> None:
        """Called before each run: a policy object run twice gives two fresh runs (the
        profile cache is keyed by host versions, which every run restarts)."""
        super().bind(machine, rng)
        self._reset()

    @property
    def objective_name(self) -> str:
        p = self.params
        name = (
            f"{self.objective.name}, {p['search'].upper()}-{p['branching'].upper()}, L={self.limit}"
        )
        restart = " with restart" if self.local_restart else " warm" if self.local_warm else ""
        if self.local_kind != "first":
            kick = f" (kick {self.local_kick})" if self._ils else ""
            restart = f" {self.local_kind}{kick}"
        return f"{name}, climb {self.local_budget}{restart}" if self.local else name

    def stats(self) -> dict[str, float]:
        """Search counters of the run (decision points searched, visits, seconds)."""
        return dict(self.counters)

    def admit(self, job: Job) -> str | None:
        if self.machine is None:
            return None
        spec = job.spec
        if not any(h.procs >= spec.procs and h.memory >= spec.mem for h in self.machine.hosts):
            return "no host can ever hold the job"
        return None

    def quiet_until(self, snap: Snapshot) -> float:
        """Until an event when no waiting job fits any host now: the pass then skips the
        search and keeps nothing (:mod:`o2ksim.policies.quiet`); no promise otherwise
        (a search that starts nothing may still move its planned starts, and its warm
        start and random kicks carry from one decision point to the next)."""
        if snap.explain or not proved_for(self, GoalOriented, "schedule"):
            return snap.now
        return snap.now if _any_fits_now(list(snap.queue), snap.hosts) else math.inf

    def schedule(self, snap: Snapshot) -> list[Decision]:
        queue = list(snap.queue)
        if not queue:
            return []
        explain = snap.explain
        hosts = snap.hosts
        # Only a job that fits now can start now, whatever the order: when none
        # does, every schedule starts nothing, and the search is skipped.
        if not explain and not _any_fits_now(queue, hosts):
            return []
        now = snap.now
        t0, c0 = time.perf_counter(), time.process_time()
        planner = self.planner(snap, queue)
        fcfs = list(range(len(queue)))
        lxf = self._lxf_order(planner)
        heuristic, other = (lxf, fcfs) if self._branch_lxf else (fcfs, lxf)
        reference = None
        if self.objective.model == "tradeoff" and self.objective.version == "C":
            reference = self._references(planner, fcfs, lxf)
        self.objective.start_epoch(planner.max_wait_now, reference)
        c = self.counters
        search = None if explain else self._compiled()
        warm = warm_order(self._previous, queue, lxf) if self.local_warm else None
        if search is None:
            result = planner.search(
                self.objective,
                heuristic,
                self.search_method,
                self.limit,
                self.prune,
                record=explain,
            )
            c["goal_searches_python"] += 1
            if self.local and self.local_restart:
                result = improve_restart(planner, self.objective, result, other,
                                         self.local_budget, self.prune)  # fmt: skip
            elif warm is not None:
                result = improve_warm(planner, self.objective, result, warm, self.local_budget,
                                      self.prune)  # fmt: skip
            elif self.local and self._ils:
                result = improve_ils(planner, self.objective, result, self.local_budget,
                                     ils_seed(planner), self.local_kick, self.prune,
                                     last=self._last)  # fmt: skip
            elif self.local:
                result = improve(planner, self.objective, result, self.local_budget, self.prune,
                                 last=self._last)  # fmt: skip
        elif self.local:  # compiled search and climb on one copy of the profiles
            ils = (ils_seed(planner), self.local_kick) if self._ils else None
            result = self._compiled_improve()(planner, self.objective, heuristic,
                                              self.search_method, self.limit, self.local_budget,
                                              self.prune, other if self.local_restart else None,
                                              warm, ils, self._last)  # fmt: skip
            c["goal_searches_numba"] += 1
        else:
            result = search(planner, self.objective, heuristic, self.search_method, self.limit,
                            self.prune)  # fmt: skip
            c["goal_searches_numba"] += 1
        dt = time.perf_counter() - t0
        c["goal_searches"] += 1
        c["goal_visits"] += result.visits
        c["goal_leaves"] += result.leaves
        c["goal_pruned"] += result.pruned
        c["goal_search_seconds"] += dt
        c["goal_search_cpu_seconds"] += time.process_time() - c0  # CPU of this process alone
        c["goal_max_search_seconds"] = max(c["goal_max_search_seconds"], dt)
        self.timings.append((len(queue), result.visits, dt))
        self.last = result
        if self.local_warm:
            self._previous = [queue[j] for j in result.order]
        return self._decisions(queue, hosts, now, result, explain)

    # ------------------------------------------------------------------ helpers
    def _compiled(self) -> Any:
        """The compiled search function, or ``None`` when the Python search runs."""
        if self.kernel != "numba":
            return None
        if self._kernel_search is None:
            # numba loads only when the compiled search runs (the optional extra [fast])
            from o2ksim.policies.goal import kernel

            self._kernel_search = kernel.search
        return self._kernel_search

    def _compiled_improve(self) -> Any:
        """The compiled search and hill climb (numba is installed when the compiled search runs)."""
        if self._kernel_improve is None:
            from o2ksim.policies.goal import kernel_local

            self._kernel_improve = kernel_local.search_improve
        return self._kernel_improve

    def summary_counts(self, ids: Any = None) -> dict[str, int]:
        """Decision points searched by each implementation (printed by ``o2ksim run``)."""
        c = self.counters
        return {f"goal_searches_{k}": int(c[f"goal_searches_{k}"]) for k in ("numba", "python")
                if c[f"goal_searches_{k}"]}  # fmt: skip

    def planner(self, snap: Snapshot, queue: list[Job]) -> Planner:
        """The search problem of this decision point: host profiles and the waiting jobs."""
        profiles = host_profiles(snap, (), self._profile_cache, use_index=False)
        hosts = snap.hosts
        steps = []
        for h in hosts:
            prof = profiles[h.name]
            times, procs, mem = prof.times, prof.procs, prof.mem
            if procs[0] > h.free_procs or mem[0] > h.free_mem:
                # running jobs predicted to end now (at an end not yet processed, or
                # overrunning their request) free their processors only after now
                times.insert(1, math.nextafter(snap.now, math.inf))
                procs.insert(1, procs[0])
                mem.insert(1, mem[0])
                procs[0], mem[0] = h.free_procs, h.free_mem
            steps.append((times, procs, mem))
        # the jobs' columns gathered from the run's table of every job seen waiting (one
        # index per array), not converted from the jobs' attributes at every decision point
        # (built at once from the engine's queue index, when the snapshot has it)
        index = snap.queue_index
        if index is None or len(index) != len(queue):
            index = None
        table = self._tables.get(index)
        if table is None:
            capacity = np.array([(h.spec.procs, h.spec.memory) for h in hosts], np.float64)
            table = JobTable(capacity.reshape(-1, 2), index)
            self._tables = {k: v for k, v in self._tables.items() if k is None}  # one index a run
            self._tables[index] = table
        fixed, hosts_ok = table.gather(queue, index)
        return Planner.of_columns(snap.now, steps, fixed, hosts_ok, self.omega)

    def _lxf_order(self, planner: Planner) -> list[int]:
        """The LXF branching order (positions in the queue): LXF-backfill's scores
        (:meth:`~o2ksim.policies.priority.WeightedPriority.scores_of`) and ranking (ties in
        queue order, :func:`~o2ksim.policies.priority.rank`) over the planner's columns."""
        c = planner.columns
        # the planner's runtime is the requested one floored at 0 s, which LXF's own
        # floor at 1 s (MIN_REQUESTED_SECONDS) makes the same score; lb_wait is the wait
        return rank(self._lxf.scores_of(c.procs, c.mem, c.runtime, c.lb_wait)).tolist()

    def _references(self, planner: Planner, fcfs: list[int], lxf: list[int]) -> tuple[float, float]:
        """Version C: x^ and y^ from the FCFS- or LXF-order schedule of this epoch (G§3.2)."""
        by_order = {"fcfs": planner.evaluate(fcfs)[2], "lxf": planner.evaluate(lxf)[2]}
        ob = self.objective
        return (
            by_order[REFERENCE_ORDER[ob.x]][ob.ix],
            by_order[REFERENCE_ORDER[ob.y]][ob.iy],
        )

    def _decisions(
        self, queue: list[Job], hosts: Any, now: float, result: SearchResult, explain: bool
    ) -> list[Decision]:
        out: list[Start | Reserve] = []
        planned: dict[int, tuple[str, float]] = {}
        for pos, (j, s, h) in enumerate(
            zip(result.order, result.starts, result.hosts, strict=True)
        ):
            if h < 0:
                continue
            job = queue[j]
            if s <= now:
                out.append(Start(job, hosts[h].name,
                                 note=f"planned start now (position {pos + 1} of the best schedule)"))  # fmt: skip
            elif explain:
                planned[job.id] = (hosts[h].name, s)
                out.append(Reserve(job, hosts[h].name, s,
                                   note=f"planned start (position {pos + 1} of the best schedule)"))  # fmt: skip
        if explain and out:
            # the search account goes with the first start, else with the first planned
            # start that moved (the decision log prints only those)
            k = next((i for i, d in enumerate(out) if isinstance(d, Start)), None)
            if k is None:
                k = next((i for i, d in enumerate(out) if isinstance(d, Reserve)
                          and self._planned.get(d.job.id) != (d.host, d.at)), 0)  # fmt: skip
            d = out[k]
            out[k] = replace(d, note=f"{d.note}\n{self._summary(queue, result)}")
            self._planned = planned
        return list(out)

    def _summary(self, queue: list[Job], result: SearchResult) -> str:
        """The decision-log account of a search (:func:`~o2ksim.policies.goal.decision_log.search_account`)."""
        return search_account(
            [job.id for job in queue], result, self.objective, self.objective_name,
            climb_budget=self.local_budget if self.local else None, from_last=self._last,
            restart_from=("FCFS" if self._branch_lxf else "LXF") if self.local_restart else None,
            kick=self.local_kick if self._ils else None, warm=self.local_warm,
        )  # fmt: skip


def _any_fits_now(queue: list[Job], hosts: Any) -> bool:
    free = [(h.free_procs, h.free_mem) for h in hosts if h.free_procs > 0]
    if not free:
        return False
    most = max(p for p, _ in free)
    for job in queue:
        spec = job.spec
        if spec.procs <= most:
            for p, m in free:
                if p >= spec.procs and m >= spec.mem:
                    return True
    return False


POLICIES.register(GoalOriented)

__all__ = ["BRANCHINGS", "KERNELS", "GoalOriented", "Objective", "Planner", "numba_installed"]
