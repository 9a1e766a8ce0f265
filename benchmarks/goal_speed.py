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
``--kernel`` chooses the search's code (the policy's ``search_kernel``).

4. *Whole processes, numba kernel against the Python search* (issue 26):
   ``--cases CASE,...`` (``--cases list`` names them) runs each case as its own
   process under ``nice -n 10``, once per ``--kernels`` (default
   ``numba,python``), and reports the CPU time of the whole process
   (interpreter start, imports, reading the trace, loading the cached kernel,
   simulating; user + system from ``os.wait4``), its wall time, the search
   counters, and whether every job's start, end and host is the same under
   both kernels (the job tables are kept in ``OUT/cases/``).  Each process
   shows the run's progress bar (jobs finished) on the terminal.

Usage: ``python benchmarks/goal_speed.py [--out reports/goal-speed] [--skip-month] [--profile]
[--kernel auto|numba|python] [--cases kth-jan-tradeoff,... [--kernels numba,python]]``
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.policies.goal import GoalOriented
from o2ksim.policies.goal.objectives import Objective
from o2ksim.policies.goal.search import Planner

KTH = "../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz"
SDSC = "../shared/traces/SDSC-Par-1996-3.1-cln.swf.gz"
TRACES = {"KTH": (KTH, "kth-sp2", 100), "SDSC-Par": (SDSC, "sdsc-par", 400)}

CASES: dict[str, tuple[str, str, float | None, str, dict]] = {
    # name: (trace, month "YYYY-MM" | "jobs:A:B" (rows A..B-1) | "all", rho or None, preset, params)
    "kth-jan-tradeoff": ("KTH", "1997-01", 0.9, "tradeoff-tw-avgx", {}),
    "kth-jan-lexical": ("KTH", "1997-01", 0.9, "lexical-tw-avgx", {}),
    "kth-jan-l64k": ("KTH", "1997-01", 0.9, "tradeoff-tw-avgx", {"limit": 64000}),
    "kth-6001-9000-l64k": ("KTH", "jobs:6000:9000", 0.9, "tradeoff-tw-avgx", {"limit": 64000}),
    "kth-6001-9000": ("KTH", "jobs:6000:9000", 0.9, "tradeoff-tw-avgx", {}),
    "kth-whole": ("KTH", "all", None, "tradeoff-tw-avgx", {}),
    "kth-mar-lds": ("KTH", "1997-03", 0.9, "lexical-tw-avgx", {"search": "lds"}),
    "kth-mar-tradeoff": ("KTH", "1997-03", 0.9, "tradeoff-tw-avgx", {}),
    "sdsc-mar-tradeoff": ("SDSC-Par", "1996-03", 0.9, "tradeoff-tw-avgx", {}),
    # the other months of the goal experiment (benchmarks/goal_experiment.py), for goal_local.py
    **{f"kth-{m}-tradeoff": ("KTH", m, 0.9, "tradeoff-tw-avgx", {})
       for m in ("1996-10", "1996-11", "1996-12", "1997-02", "1997-04")},
    "sdsc-apr-tradeoff": ("SDSC-Par", "1996-04", 0.9, "tradeoff-tw-avgx", {}),
    # the traces' other calendar months (UTC), for the many-month comparisons of goal_local.py
    **{f"kth-{m}-tradeoff": ("KTH", m, 0.9, "tradeoff-tw-avgx", {})
       for m in ("1997-05", "1997-06", "1997-07", "1997-08")},
    **{f"sdsc-{m}-tradeoff": ("SDSC-Par", m, 0.9, "tradeoff-tw-avgx", {})
       for m in ("1996-01", "1996-02", "1996-05", "1996-06", "1996-07", "1996-08", "1996-09",
                 "1996-10", "1996-11", "1996-12")},
}
"""Whole-process cases (``--cases``); every one plans with actual runtimes (G§4)."""


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


def case_workload(name: str) -> tuple[Any, str, Any]:
    """(workload, machine, window) of a ``CASES`` entry."""
    from o2ksim.goal_metrics import month_windows, month_workload
    from o2ksim.run.workload import load_workload
    from o2ksim.workloads.reshape import scale_load

    tname, which, rho, _, _ = CASES[name]
    path, machine, procs = TRACES[tname]
    trace = load_workload(path)
    if which == "all":
        return trace, machine, None
    if which.startswith("jobs:"):
        _, a, b = which.split(":")
        part = type(trace)(jobs=trace.jobs.iloc[int(a) : int(b)].reset_index(drop=True),
                           header=trace.header)  # fmt: skip
        return (part if rho is None else scale_load(part, rho, procs=procs)), machine, None
    m = {x.label: x for x in month_windows(trace)}[which]
    sub, win, _ = month_workload(trace, m, procs, rho)
    return sub, machine, win


def run_case(name: str, kernel: str, out: Path) -> None:
    """One case in this process (the child of ``--cases``): job table and counters to ``out``."""
    from o2ksim.policies import make_policy
    from o2ksim.run.api import simulate

    workload, machine, window = case_workload(name)
    _, _, _, preset, params = CASES[name]
    pol = make_policy(preset, search_kernel=kernel, **params)
    r = simulate(workload, machine, pol, window=window, estimates="actual", progress=sys.stderr.isatty())
    jobs = r.jobs.sort_values("job_id")[["job_id", "start", "end", "host"]]
    jobs.to_csv(out / f"{name}-{kernel}.csv", index=False)
    (out / f"{name}-{kernel}.json").write_text(json.dumps(pol.stats()))


def cases(names: list[str], kernels: list[str], out: Path) -> list[dict]:
    """Each case once per kernel, each a whole process under ``nice -n 10``."""
    out = out / "cases"
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in names:
        row: dict = {"case": name}
        for k in kernels:
            cmd = ["nice", "-n", "10", sys.executable, __file__, "--one", name, "--kernel", k,
                   "--out", str(out)]  # fmt: skip
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(Path.cwd()), os.environ.get("PYTHONPATH", "")])})  # fmt: skip
            _, status, usage = os.wait4(proc.pid, 0)
            if os.waitstatus_to_exitcode(status):
                raise SystemExit(f"failed: {' '.join(cmd)}")
            row[f"{k}_cpu_s"] = usage.ru_utime + usage.ru_stime
            row[f"{k}_wall_s"] = time.perf_counter() - t0
            st = json.loads((out / f"{name}-{k}.json").read_text())
            row.update({f"{k}_{c}": st[f"goal_{c}"] for c in ("searches", "visits", "leaves", "pruned")})
            print(f"{name} [{k}]: {row[f'{k}_cpu_s']:.1f} s CPU, {row[f'{k}_wall_s']:.1f} s wall, "
                  f"{st['goal_searches']} searches, {st['goal_visits']} visits", flush=True)  # fmt: skip
        if len(kernels) > 1:
            tables = [pd.read_csv(out / f"{name}-{k}.csv") for k in kernels]
            row["jobs"] = len(tables[0])
            row["identical"] = all(t.equals(tables[0]) for t in tables[1:])
            print(f"{name}: {row['jobs']} jobs, start, end and host identical under "
                  f"{' and '.join(kernels)}: {row['identical']}", flush=True)  # fmt: skip
        rows.append(row)
    pd.DataFrame(rows).to_csv(out / "cases.csv", index=False)
    return rows


def month(out: Path, profile: bool = False, kernel: str = "auto") -> dict:
    from o2ksim.goal_metrics import month_windows, month_workload
    from o2ksim.policies import make_policy
    from o2ksim.run.api import simulate
    from o2ksim.run.workload import load_workload

    trace = load_workload(KTH)
    m = {x.label: x for x in month_windows(trace)}["1997-01"]
    sub, win, _ = month_workload(trace, m, 100, 0.9)
    pol = make_policy("tradeoff-tw-avgx", search_kernel=kernel)
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
    ap.add_argument("--kernel", default="auto", choices=("auto", "numba", "python"),
                    help="the goal search's code (search_kernel)")  # fmt: skip
    ap.add_argument("--cases", help=f"whole-process cases, comma-separated, or 'list' ({', '.join(CASES)})")
    ap.add_argument("--kernels", default="numba,python", help="kernels to run each case with")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: one case in this process
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.one:
        run_case(args.one, args.kernel, out)
        return
    if args.cases:
        if args.cases == "list":
            for name, c in CASES.items():
                print(f"{name}: {c}")
            return
        names = args.cases.split(",")
        unknown = [n for n in names if n not in CASES]
        if unknown:
            raise SystemExit(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
        cases(names, args.kernels.split(","), out)
        return
    ref = oracle_seconds()
    print(f"reference: easy_oracle.py on 10,000 KTH jobs: {ref:.2f} s wall")
    for row in tree_of_30():
        print(f"tree of 30 jobs, L={row['L']}: {row['visits']} visits, "
              f"{row['cpu_ms_median']:.1f} ms CPU (median of 5), max {row['cpu_ms_max']:.1f} ms")  # fmt: skip
    if not args.skip_month:
        m = month(out, args.profile, args.kernel)
        print(f"KTH 1997-01 rho=0.9 tradeoff-tw-avgx L=4000: {m['month_cpu_s']:.1f} s CPU "
              f"({m['month_wall_s']:.1f} s wall; {m['month_cpu_s'] / ref:.1f} x the oracle's wall), "
              f"{m['searches']} searches, mean {m['ms_mean']:.1f} ms, p95 {m['ms_p95']:.1f} ms, "
              f"max {m['ms_max']:.1f} ms per decision point (wall), {m['waiting_mean']:.1f} waiting "
              f"on average, at most {m['waiting_max']}; {m['visits_mean']:.0f} visits per search, "
              f"{100 * m['whole_tree']:.0f} % of the searches finished their tree within L")  # fmt: skip


if __name__ == "__main__":
    main()
