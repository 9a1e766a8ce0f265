"""DDS at L = 64,000 against the DDS + hill-climb search (issue 26): quality and whole-process CPU.

For each month (``--months``, names of ``goal_speed.CASES`` with a month or a
job range; the case's trace, load and preset are used) and each variant
(``--variants``: ``name=key:value;key:value``, the policy parameters on top
of the case's preset), one whole process under ``nice -n 10`` runs the
simulation (actual runtimes, G§4) with the compiled search and keeps the job
table; its CPU (user + system of the whole process, from ``os.wait4``:
interpreter start, imports, reading the trace, loading the cached kernel,
simulating) is recorded.  FCFS-backfill runs on the same jobs to give the
thresholds of the total excessive wait (E^98%W_FCFS-bf, E^maxW_FCFS-bf,
G§4; :func:`o2ksim.goal_metrics.comparison`).  The table printed (and
written to ``OUT/local.csv``) gives each variant's mean bounded slowdown, the
two totals, CPU, and their ratios to the first variant.

With ``--decisions N``, the schedules instead of the runs: every N-th searched
decision point of a DDS run at L = 1,000 on each month is kept (its planner,
branching order and epoch), and at each of them the search of each variant
(``dds:L`` or ``local:L:BUDGET``) is compared with DDS at L = 64,000 under the
policy's own objective (:meth:`Objective.better`, both ways): how often the
variant's schedule is better, equally good or worse, with the search's CPU
alone, and how often the variant starts the same jobs now as L = 64,000 (``same_start``:
the decision the policy takes; the rest of the schedule is a plan, searched again at
the next decision point) (``restart:L:BUDGET``: ``local_restart``, from the FCFS order;
``last:L:BUDGET``: ``local_kind = "last"``; ``ils:L:BUDGET[:KICK]``, ``ils-last:...``:
``local_kind = "ils"``, ``"ils-last"`` with ``local_kick = KICK``, 2 by default).  This measures the schedule quality the search is asked for, free of
the chaos of a whole run (a different start changes every later queue).

Usage::

    python benchmarks/goal_local.py --out reports/goal-local \\
        --months kth-jan-tradeoff,kth-6001-9000 \\
        --variants "dds-64k=limit:64000" "local=search:dds+local;limit:1000;local_budget:4000"
    python benchmarks/goal_local.py --out reports/goal-local-decisions \
        --months kth-6001-9000,kth-jan-tradeoff --decisions 20 \
        --variants dds:1000 local:30:3000 local:1000:4000

``--reuse`` keeps the runs already in ``--out`` (the job table and the CPU
recorded beside it in ``MONTH-NAME.cpu``), so new variants can be added
without running L = 64,000 again.

The statistics over many months (intervals, held-out months, the declared
criterion) are ``benchmarks/goal_months.py``'s, from the same run folder.  The
figures and their reading are in docs/background/goal-local-search.md and
goal-local-search-23-months.md (the verdict in docs/guides/goal-oriented.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from goal_speed import CASES, case_workload

from o2ksim.goal_metrics import comparison


def parse_variant(text: str) -> tuple[str, dict]:
    """``name=key:value;...`` -> (name, parameters); ``fcfs`` is the FCFS-backfill run."""
    name, _, rest = text.partition("=")
    params: dict = {}
    for item in filter(None, rest.split(";")):
        k, _, v = item.partition(":")
        v = v.strip()
        params[k.strip()] = int(v) if v.isdigit() else {"true": True, "false": False}.get(v.lower(), v)
    return name.strip(), params


def run_one(month: str, variant: str, out: Path) -> None:
    """The child: one simulation; its job table and summary go to ``out``."""
    from o2ksim.policies import make_policy
    from o2ksim.run.api import simulate

    workload, machine, window = case_workload(month)
    name, params = parse_variant(variant)
    preset = "fcfs-backfill" if name == "fcfs" else CASES[month][3]
    pol = make_policy(preset, **({} if name == "fcfs" else {"search_kernel": "numba", **params}))
    r = simulate(workload, machine, pol, window=window, estimates="actual",
                 progress=sys.stderr.isatty())  # fmt: skip
    r.jobs.to_pickle(out / f"{month}-{name}.pkl")
    stats = pol.stats() if hasattr(pol, "stats") else {}
    (out / f"{month}-{name}.json").write_text(json.dumps({"summary": r.summary, "stats": stats}, default=float))


def decision_points(month: str, every: int) -> list[tuple]:
    """Every ``every``-th searched decision point of a DDS run (L = 1,000) on ``month``:
    (planner, branching order, max wait now) copies."""
    import copy

    from o2ksim.policies import make_policy
    from o2ksim.policies.goal import kernel
    from o2ksim.run.api import simulate

    workload, machine, window = case_workload(month)
    pol = make_policy(CASES[month][3], search_kernel="numba", limit=1000)
    kept: list[tuple] = []
    seen = [0]

    def search(planner, objective, heuristic, method, limit, prune):  # type: ignore[no-untyped-def]
        seen[0] += 1
        if seen[0] % every == 0:
            kept.append((copy.deepcopy(planner), list(heuristic)))
        return kernel.search(planner, objective, heuristic, method, limit, prune)

    pol._kernel_search = search  # the policy calls it for every searched decision point
    simulate(workload, machine, pol, window=window, estimates="actual")
    return kept


def starting_now(planner, result) -> frozenset[int]:  # type: ignore[no-untyped-def]
    """The jobs a search's schedule starts now: the decision the policy takes (the rest of
    the plan is searched again at the next decision point)."""
    return frozenset(j for j, s, h in zip(result.order, result.starts, result.hosts, strict=True)
                     if h >= 0 and s <= planner.now)  # fmt: skip


def compare_decisions(months: list[str], every: int, variants: list[str]) -> pd.DataFrame:
    """Each variant against DDS at L = 64,000 at the kept decision points (see the module doc)."""
    from o2ksim.policies import make_policy
    from o2ksim.policies.goal import kernel, kernel_local
    from o2ksim.policies.goal.local import ils_seed

    rows = []
    for month in months:
        points = decision_points(month, every)
        pol = make_policy(CASES[month][3])
        ob = pol.objective
        stats = {v: {"better": 0, "equal": 0, "worse": 0, "same_start": 0, "cpu": 0.0}
                 for v in variants}  # fmt: skip
        cpu64 = 0.0
        for planner, heuristic in points:
            ob.start_epoch(planner.max_wait_now)
            t0 = time.process_time()
            ref = kernel.search(planner, ob, heuristic, "dds", 64000)
            cpu64 += time.process_time() - t0
            rp = (ref.measures[ob.ix], ref.measures[ob.iy])
            ref_now = starting_now(planner, ref)
            for v in variants:
                kind, *nums = v.split(":")
                t0 = time.process_time()
                if kind == "dds":
                    r = kernel.search(planner, ob, heuristic, "dds", int(nums[0]))
                elif kind in ("last", "ils", "ils-last"):  # local_kind; ils: kick nums[2] (2)
                    kick = int(nums[2]) if len(nums) > 2 else 2
                    ils = (ils_seed(planner), kick) if kind.startswith("ils") else None
                    r = kernel_local.search_improve(planner, ob, heuristic, "dds", int(nums[0]),
                                                    int(nums[1]), True, ils=ils,
                                                    last=kind.endswith("last"))  # fmt: skip
                else:  # local or restart (from the FCFS order, the other branching order)
                    other = list(range(planner.n)) if kind == "restart" else None
                    r = kernel_local.search_improve(planner, ob, heuristic, "dds", int(nums[0]),
                                                    int(nums[1]), True, other)  # fmt: skip
                stats[v]["cpu"] += time.process_time() - t0
                cp = (r.measures[ob.ix], r.measures[ob.iy])
                verdict = "better" if ob.better(rp, cp) else "worse" if ob.better(cp, rp) else "equal"
                stats[v][verdict] += 1
                stats[v]["same_start"] += starting_now(planner, r) == ref_now
        for v in variants:
            st_ = stats[v]
            rows.append({"month": month, "variant": v, "points": len(points), **st_,
                         "cpu_share": st_["cpu"] / cpu64 if cpu64 else float("nan"),
                         "cpu_64k": cpu64})  # fmt: skip
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="reports/goal-local")
    ap.add_argument("--months", default="kth-jan-tradeoff,kth-6001-9000")
    ap.add_argument("--variants", nargs="+",
                    default=["dds-64k=limit:64000", "local=search:dds+local;limit:1000;local_budget:4000"])
    ap.add_argument("--decisions", type=int, metavar="N",
                    help="compare schedules at every N-th decision point instead of runs")
    ap.add_argument("--reuse", action="store_true",
                    help="keep a run already in --out (job table and its recorded CPU, MONTH-NAME.cpu)")
    ap.add_argument("--tables", metavar="DIR",
                    help="write local.csv, over-months.csv and decisions.csv here instead of --out "
                         "(so a shared --out keeps the tables already there)")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # internal: MONTH VARIANT
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = Path(a.tables) if a.tables else out
    tables.mkdir(parents=True, exist_ok=True)
    if a.decisions:
        variants = a.variants if a.variants != ap.get_default("variants") else [
            "dds:1000", "local:30:3000", "local:1000:4000"]  # fmt: skip
        d = compare_decisions(a.months.split(","), a.decisions, variants)
        d.to_csv(tables / "decisions.csv", index=False)
        print(d.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        return
    if a.one:
        run_one(a.one[0], a.one[1], out)
        return
    rows = []
    for month in a.months.split(","):
        if month not in CASES:
            raise SystemExit(f"unknown month case {month!r}; known: {', '.join(CASES)}")
        cpu = {}
        for v in ["fcfs=", *a.variants]:
            name = parse_variant(v)[0]
            done = out / f"{month}-{name}.cpu"
            if a.reuse and done.exists() and (out / f"{month}-{name}.pkl").exists():
                cpu[name] = tuple(json.loads(done.read_text()))
                print(f"{month} {name}: reused, {cpu[name][0]:.1f} s CPU", flush=True)
                continue
            cmd = ["nice", "-n", "10", sys.executable, __file__, "--out", str(out), "--one", month, v]
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(Path.cwd()), os.environ.get("PYTHONPATH", "")])})  # fmt: skip
            _, status, usage = os.wait4(proc.pid, 0)
            if os.waitstatus_to_exitcode(status):
                raise SystemExit(f"failed: {' '.join(cmd)}")
            cpu[name] = (usage.ru_utime + usage.ru_stime, time.perf_counter() - t0)
            done.write_text(json.dumps(cpu[name]))
            print(f"{month} {name}: {cpu[name][0]:.1f} s CPU, {cpu[name][1]:.0f} s wall", flush=True)
        fcfs = pd.read_pickle(out / f"{month}-fcfs.pkl")
        fcfs = fcfs.loc[fcfs["analysed"]] if "analysed" in fcfs else fcfs
        first = None
        for v in a.variants:
            name = parse_variant(v)[0]
            jobs = pd.read_pickle(out / f"{month}-{name}.pkl")
            jobs = jobs.loc[jobs["analysed"]] if "analysed" in jobs else jobs
            info = json.loads((out / f"{month}-{name}.json").read_text())
            row = {"month": month, "variant": v, "mean_bsld": info["summary"]["mean_bounded_slowdown"],
                   **comparison(jobs, fcfs), "cpu_s": cpu[name][0], "wall_s": cpu[name][1],
                   "search_cpu_s": info["stats"].get("goal_search_cpu_seconds", float("nan")),
                   "visits": info["stats"].get("goal_visits")}  # fmt: skip
            first = first or row
            for k in ("mean_bsld", "E_98W_fcfs_bf", "E_maxW_fcfs_bf", "cpu_s", "search_cpu_s"):
                row[f"{k}_ratio"] = row[k] / first[k] if first[k] else float("nan")
            rows.append(row)
    d = pd.DataFrame(rows)
    d.to_csv(tables / "local.csv", index=False)
    print(d.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if len(set(d["month"])) > 1:
        s = over_months(d)
        s.to_csv(tables / "over-months.csv", index=False)
        print(s.to_string(index=False, float_format=lambda x: f"{x:.3f}"))


def over_months(d: pd.DataFrame) -> pd.DataFrame:
    """Per variant, over the months: the geometric mean of each quality ratio to the first
    variant (a month where the first variant's value is 0 is left out of that measure),
    its range, and the CPU summed over the months as a share of the first variant's
    (whole process and search alone; over the months where both recorded it).  Run chaos makes one month's ratio a noisy
    sample; the geometric mean over several months is the criterion declared in
    docs/background/goal-local-search.md ("Third attempt"; benchmarks/goal_months.py
    gives the intervals and the fourth attempt's statistics)."""
    first = d.groupby("month").head(1).set_index("month")
    out = []
    for v, g in d.groupby("variant", sort=False):
        g = g.set_index("month")
        row: dict = {"variant": v, "months": len(g)}
        for k in ("mean_bsld", "E_98W_fcfs_bf"):
            r = (g[k] / first.loc[g.index, k]).replace([np.inf], np.nan).dropna()
            r = r[r > 0]
            row[f"{k}_gmean"] = float(np.exp(np.log(r).mean())) if len(r) else float("nan")
            row[f"{k}_min"], row[f"{k}_max"] = (float(r.min()), float(r.max())) if len(r) else (
                float("nan"), float("nan"))  # fmt: skip
        for k in ("cpu_s", "search_cpu_s"):  # over the months where both were recorded
            both = g[k].notna() & first.loc[g.index, k].notna()
            row[f"{k}_share"] = float(g.loc[both, k].sum() / first.loc[g.index[both], k].sum())
            row[f"{k}_months"] = int(both.sum())
        out.append(row)
    return pd.DataFrame(out)


if __name__ == "__main__":
    main()
