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

Usage::

    python benchmarks/goal_local.py --out reports/goal-local \\
        --months kth-jan-tradeoff,kth-6001-9000 \\
        --variants "dds-64k=limit:64000" "local=search:dds+local;limit:1000;local_budget:4000"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

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
        params[k.strip()] = int(v) if v.strip().isdigit() else v.strip()
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="reports/goal-local")
    ap.add_argument("--months", default="kth-jan-tradeoff,kth-6001-9000")
    ap.add_argument("--variants", nargs="+",
                    default=["dds-64k=limit:64000", "local=search:dds+local;limit:1000;local_budget:4000"])
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # internal: MONTH VARIANT
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
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
            cmd = ["nice", "-n", "10", sys.executable, __file__, "--out", str(out), "--one", month, v]
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(Path.cwd()), os.environ.get("PYTHONPATH", "")])})  # fmt: skip
            _, status, usage = os.wait4(proc.pid, 0)
            if os.waitstatus_to_exitcode(status):
                raise SystemExit(f"failed: {' '.join(cmd)}")
            cpu[name] = (usage.ru_utime + usage.ru_stime, time.perf_counter() - t0)
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
                   "visits": info["stats"].get("goal_visits")}  # fmt: skip
            first = first or row
            for k in ("mean_bsld", "E_98W_fcfs_bf", "E_maxW_fcfs_bf", "cpu_s"):
                row[f"{k}_ratio"] = row[k] / first[k] if first[k] else float("nan")
            rows.append(row)
    d = pd.DataFrame(rows)
    d.to_csv(out / "local.csv", index=False)
    print(d.to_string(index=False, float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    main()
