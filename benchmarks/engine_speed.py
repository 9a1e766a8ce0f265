"""Engine speed on real traces: wall time of one simulation pass per policy.

Usage: python benchmarks/engine_speed.py [--policies fcfs fcfs-backfill] [--repeat 3]
Needs ../shared/traces (the Parallel Workloads Archive copies).  Prints a
Markdown table (see docs/guides/performance.md, "How to measure").
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from o2ksim import simulate
from o2ksim.workloads.swf import read_swf

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"
CASES = [
    ("KTH-SP2 (all)", "KTH-SP2-1996-2.1-cln.swf.gz", None, None),
    ("SDSC-Par 1996 (all)", "SDSC-Par-1996-3.1-cln.swf.gz", None, None),
    ("HPC2N (first 50,000, memory)", "HPC2N-2002-2.1-cln.swf.gz", 50_000, "hpc2n"),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--policies", nargs="+", default=["fcfs", "fcfs-backfill"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"| trace | jobs | policy | load s | simulate s (best of {args.repeat}) | jobs/s |")
    print("|---|---|---|---|---|---|")
    for label, name, limit, machine in CASES:
        path = TRACES / name
        if not path.exists():
            print(f"| {label} | missing | | | | |")
            continue
        t0 = time.perf_counter()
        trace = read_swf(path, limit=limit)
        load = time.perf_counter() - t0
        for policy in args.policies:
            best = float("inf")
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                simulate(trace, machine=machine, policy=policy)
                best = min(best, time.perf_counter() - t0)
            print(f"| {label} | {len(trace)} | {policy} | {load:.2f} | {best:.2f} | {len(trace) / best:,.0f} |")


if __name__ == "__main__":
    main()
