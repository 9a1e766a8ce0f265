"""Overhead of a dynamic priority: LXF&W-backfill vs FCFS-backfill on the first 10,000 KTH jobs.

Usage::

    .venv/bin/python benchmarks/overhead.py [--repeat 5] [--jobs 10000] [--out overhead.json]

LXF&W-backfill re-ranks the whole queue at every scheduling pass (0.02 Jw + Jx,
T§5.1); FCFS-backfill keeps the submission order.  The target is LXF&W within
3x the time of FCFS-backfill.  Both policies are run ``--repeat`` times,
interleaved, and the minimum CPU time of each is compared (CPU time, not wall
time, so that other processes on the machine disturb the ratio less); wall
times are reported too.  Exit code 1 when the ratio exceeds the target.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

TRACE = Path(__file__).resolve().parents[2] / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
TARGET = 3.0
POLICIES = ("fcfs-backfill", "lxfw-backfill")


def measure(n_jobs: int, repeat: int) -> dict[str, object]:
    """Min CPU and wall seconds per policy over ``repeat`` interleaved runs, and the ratio."""
    from o2ksim.run.api import simulate
    from o2ksim.run.workload import load_workload

    jobs = load_workload(TRACE).jobs.head(n_jobs).reset_index(drop=True)
    cpu: dict[str, list[float]] = {p: [] for p in POLICIES}
    wall: dict[str, list[float]] = {p: [] for p in POLICIES}
    passes: dict[str, int] = {}
    for _ in range(repeat):
        for policy in POLICIES:
            c0, w0 = time.process_time(), time.perf_counter()
            r = simulate(jobs, machine="kth-sp2", policy=policy)
            cpu[policy].append(time.process_time() - c0)
            wall[policy].append(time.perf_counter() - w0)
            passes[policy] = r.stats.passes
    best = {p: min(v) for p, v in cpu.items()}
    ratio = best["lxfw-backfill"] / best["fcfs-backfill"]
    return {
        "jobs": n_jobs,
        "repeat": repeat,
        "cpu_seconds_min": {p: round(v, 3) for p, v in best.items()},
        "wall_seconds_min": {p: round(min(v), 3) for p, v in wall.items()},
        "passes": passes,
        "ratio_cpu": round(ratio, 3),
        "target": TARGET,
        "ok": ratio <= TARGET,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=10_000, help="first N jobs of KTH-SP2")
    ap.add_argument("--out", type=Path, help="also write the numbers as JSON here")
    args = ap.parse_args(argv)
    if not TRACE.exists():
        print(f"{TRACE} not found", file=sys.stderr)
        return 2
    res = measure(args.jobs, args.repeat)
    c, w = res["cpu_seconds_min"], res["wall_seconds_min"]
    print(
        f"KTH first {args.jobs} jobs, best of {args.repeat}: "
        f"FCFS-backfill {c['fcfs-backfill']:.2f} s CPU ({w['fcfs-backfill']:.2f} s wall), "
        f"LXF&W-backfill {c['lxfw-backfill']:.2f} s CPU ({w['lxfw-backfill']:.2f} s wall); "
        f"ratio {res['ratio_cpu']:.2f} (target <= {TARGET:g}): {'ok' if res['ok'] else 'TOO SLOW'}"
    )
    if args.out:
        args.out.write_text(json.dumps(res, indent=1) + "\n")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
