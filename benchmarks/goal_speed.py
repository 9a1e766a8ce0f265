"""Speed of the goal-oriented search (issue 12): per decision point and per month.

1. *One decision point, a tree of 30 jobs* (G§5.2: "it typically takes under a
   few tens of milliseconds for L=1,000-8,000 in a tree of 30 jobs"): 30
   waiting jobs and 40 running jobs on a 100-processor host, drawn from a
   seeded generator with KTH-like sizes; A-Tradeoff(Tw:avgX) DDS-LXF at
   L = 1,000, 4,000 and 8,000; CPU milliseconds per search (median of 5).
2. *A month*: KTH-SP2 1997-01 at rho = 0.9 (one-week warm-up, actual
   runtimes) under tradeoff-tw-avgx, L = 4,000: CPU seconds of the whole run
   and per-decision-point timings (written to ``OUT/decisions.csv``).
3. *Reference*: ``../shared/checks/easy_oracle.py`` (a plain Python EASY loop)
   on the first 10,000 KTH jobs, timed in the same process run, so the
   figures can be compared across machines as ratios.

With ``--profile``, the month runs under cProfile: the statistics go to
``OUT/month.prof`` and the functions taking the most time are printed (the
profiler's own overhead roughly doubles the run; compare shares, not seconds).

Usage: ``python benchmarks/goal_speed.py [--out reports/goal-speed] [--skip-month] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from o2ksim.policies.goal import GoalOriented
from o2ksim.policies.goal.objectives import Objective
from o2ksim.policies.goal.search import Planner

KTH = "../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz"


def synthetic_planner(rng: np.random.Generator, n_wait: int = 30, n_run: int = 40) -> Planner:
    now = 1_000_000.0
    cap = 100
    procs_run = rng.choice([1, 1, 2, 4, 8], n_run)
    while procs_run.sum() > cap:
        procs_run = procs_run[:-1]
    ends = np.sort(now + rng.exponential(4 * 3600, len(procs_run)))
    times, free = [now], [cap - int(procs_run.sum())]
    for e, p in zip(ends, procs_run, strict=True):
        times.append(float(e))
        free.append(free[-1] + int(p))
    submit = now - rng.exponential(3 * 3600, n_wait)
    runtime = np.maximum(rng.lognormal(7.5, 1.8, n_wait), 1.0)
    procs = rng.choice([1, 1, 2, 4, 8, 16, 32, 64], n_wait)
    return Planner(now, [(times, free, [float("inf")] * len(times))], [(cap, float("inf"))],
                   submit.tolist(), runtime.tolist(), procs.tolist(), [0.0] * n_wait)  # fmt: skip


def tree_of_30() -> list[dict]:
    rows = []
    for limit in (1000, 4000, 8000):
        per = []
        for seed in range(5):
            planner = synthetic_planner(np.random.default_rng(seed))
            ob = Objective("tradeoff", "tw", "avgx", "A", 0.01)
            ob.start_epoch(planner.max_wait_now)
            lxf = sorted(range(planner.n), key=lambda j: -(planner.lb_wait[j] + planner.runtime[j])
                         / max(planner.runtime[j], 1.0))  # fmt: skip
            t0 = time.process_time()
            r = planner.search(ob, lxf, "dds", limit)
            per.append((time.process_time() - t0) * 1000)
        rows.append({"L": limit, "visits": r.visits, "cpu_ms_median": statistics.median(per),
                     "cpu_ms_max": max(per)})  # fmt: skip
    return rows


def oracle_seconds() -> float:
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    subprocess.run([sys.executable, "../shared/checks/easy_oracle.py", KTH, "10000"],
                   check=True, capture_output=True)  # fmt: skip
    del cpu0
    return time.perf_counter() - t0


def month(out: Path, profile: bool = False) -> dict:
    from o2ksim.goal_metrics import month_windows, month_workload
    from o2ksim.policies import make_policy
    from o2ksim.run.api import simulate
    from o2ksim.run.workload import load_workload

    trace = load_workload(KTH)
    m = {x.label: x for x in month_windows(trace)}["1997-01"]
    sub, win, _ = month_workload(trace, m, 100, 0.9)
    pol = make_policy("tradeoff-tw-avgx")
    assert isinstance(pol, GoalOriented)
    prof = cProfile.Profile() if profile else None
    t0, cpu0 = time.perf_counter(), time.process_time()
    if prof is not None:
        prof.enable()
    simulate(sub, "kth-sp2", pol, window=win, estimates="actual")
    if prof is not None:
        prof.disable()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if prof is not None:
        prof.dump_stats(out / "month.prof")
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    d = pd.DataFrame(pol.timings, columns=["waiting", "visits", "seconds"])
    d.to_csv(out / "decisions.csv", index=False)
    return {"month_cpu_s": cpu, "month_wall_s": wall, "searches": len(d),
            "ms_mean": 1000 * d["seconds"].mean(), "ms_p95": 1000 * d["seconds"].quantile(0.95),
            "ms_max": 1000 * d["seconds"].max(), "waiting_mean": d["waiting"].mean(),
            "visits_mean": d["visits"].mean(), "whole_tree": (d["visits"] < 4000).mean(),
            "waiting_max": int(d["waiting"].max())}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="reports/goal-speed")
    ap.add_argument("--skip-month", action="store_true")
    ap.add_argument("--profile", action="store_true", help="run the month under cProfile")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ref = oracle_seconds()
    print(f"reference: easy_oracle.py on 10,000 KTH jobs: {ref:.2f} s wall")
    for row in tree_of_30():
        print(f"tree of 30 jobs, L={row['L']}: {row['visits']} visits, "
              f"{row['cpu_ms_median']:.1f} ms CPU (median of 5), max {row['cpu_ms_max']:.1f} ms")  # fmt: skip
    if not args.skip_month:
        m = month(out, args.profile)
        print(f"KTH 1997-01 rho=0.9 tradeoff-tw-avgx L=4000: {m['month_cpu_s']:.1f} s CPU "
              f"({m['month_wall_s']:.1f} s wall; {m['month_cpu_s'] / ref:.1f} x the oracle's wall), "
              f"{m['searches']} searches, mean {m['ms_mean']:.1f} ms, p95 {m['ms_p95']:.1f} ms, "
              f"max {m['ms_max']:.1f} ms per decision point (wall), {m['waiting_mean']:.1f} waiting "
              f"on average, at most {m['waiting_max']}; {m['visits_mean']:.0f} visits per search, "
              f"{100 * m['whole_tree']:.0f} % of the searches finished their tree within L")  # fmt: skip


if __name__ == "__main__":
    main()
