"""Quiet interval stretches under NCSA-MS*'s fixed-job reservations (and ``--no-sliding``):
passes and CPU with and without the skip, and the schedule compared job for job.

Usage: python benchmarks/quiet_held.py [--trace PATH] [--intervals 5m 1m]
       [--policies ncsa-ms ncsa-ms:nosliding] [--repeats 2] [--waiting 1e9]

The trace is parsed once; each run is :func:`o2ksim.simulate` in this process,
its CPU time the process's (``time.process_time``) around the call.  Runs with
the skip (the default) and without it (``Scheduler.skip_ticks = False``: a pass
at every tick, the tests' oracle) alternate, ``--repeats`` times each, and the
best CPU of each is printed with the passes, the 1-minute load average, and
whether the start, end and host of every job are the same.  ``--waiting n``
also runs the pair of ``benchmarks/scale_pathologies.py``'s ``waiting`` case
(a job on 3 of 4 processors for ``n`` seconds, requesting ``2n``; a 2-processor
job waiting behind it) at ``--interval 1s``, with the skip only (without it, one
pass a second).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import pandas as pd
from tqdm import tqdm

from o2ksim import simulate
from o2ksim.engine.scheduler import Scheduler
from o2ksim.jobs import JobSpec
from o2ksim.machine import HostSpec, MachineSpec
from o2ksim.workloads.swf import read_swf

KTH = "/work/shared/traces/KTH-SP2-1996-2.1-cln.swf.gz"
VARIANTS: dict[str, dict[str, Any]] = {
    "ncsa-ms": {},
    "ncsa-ms:nosliding": {"sliding": False},
    "mhpcc-ms:nosliding": {"sliding": False},
}


def one(trace: Any, policy: str, interval: str, skip: bool) -> tuple[float, Any]:
    """CPU seconds and result of one run, the skip on or off."""
    name = policy.split(":")[0]
    Scheduler.skip_ticks = skip
    try:
        t = time.process_time()
        r = simulate(trace, policy=name, policy_params=VARIANTS[policy], interval=interval)
        return time.process_time() - t, r
    finally:
        Scheduler.skip_ticks = True


def schedule(r: Any) -> pd.DataFrame:
    return r.jobs[["job_id", "host", "start", "end"]].reset_index(drop=True)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--trace", default=KTH)
    ap.add_argument("--intervals", nargs="+", default=["5m", "1m"])
    ap.add_argument("--policies", nargs="+", default=["ncsa-ms"], choices=list(VARIANTS))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--waiting", type=float, default=0.0, help="n of the waiting pair (0: none)")
    args = ap.parse_args()
    trace = read_swf(args.trace)
    print("| policy | interval | passes skip / every tick | CPU s skip / every tick | "
          "same schedule | load |\n|---|---|---|---|---|---|")  # fmt: skip
    cases = [(p, i) for p in args.policies for i in args.intervals]
    for policy, interval in tqdm(cases, leave=False):
        best = {True: (float("inf"), None), False: (float("inf"), None)}
        for _ in range(args.repeats):
            for skip in (True, False):
                cpu, r = one(trace, policy, interval, skip)
                if cpu < best[skip][0]:
                    best[skip] = (cpu, r)
        (c1, r1), (c2, r2) = best[True], best[False]
        same = schedule(r1).equals(schedule(r2))
        print(f"| {policy} | {interval} | {r1.stats.passes:,} / {r2.stats.passes:,} | "
              f"{c1:.2f} / {c2:.2f} | {same} | {os.getloadavg()[0]:.1f} |", flush=True)  # fmt: skip
    if args.waiting:
        n = args.waiting
        jobs = [JobSpec(1, 0.0, 3, 0, 2 * n, n), JobSpec(2, 5.0, 2, 0, 20.0, 10.0)]
        machine = MachineSpec("m", (HostSpec("m", 4, float("inf")),))
        for policy in args.policies:
            name = policy.split(":")[0]
            t = time.process_time()
            r = simulate(jobs, machine=machine, policy=name, policy_params=VARIANTS[policy],
                         interval="1s")  # fmt: skip
            print(f"waiting pair n = {n:g} under {policy}, --interval 1s: {r.stats.passes} "
                  f"passes, {time.process_time() - t:.3f} s CPU, job 2 starts at "
                  f"{r.jobs['start'].iloc[1]:g}")  # fmt: skip


if __name__ == "__main__":
    main()
