"""Pathological sizes: CPU seconds against n, and the fitted exponent (issue 27).

Usage: python benchmarks/scale_pathologies.py [--cases idle waiting waiting-ncsa
       waiting-immediate waiting-goal flood flood-sjf flood-lxfw flood-priority
       flood-ncsa flood-memory flood-burst flood-eqspatial flood-immediate reservations
       reservations-together]
       [--sizes 10000 100000 1000000] [--reservation-sizes N ...]

Writes its hostile SWF traces into a temporary directory and runs each one
with :func:`o2ksim.simulate` in a fresh process (so one case's memory does
not slow the next), timing the simulation's CPU seconds:

* ``idle``: two 10-second jobs ``n`` seconds apart, ``--interval 1s``: the
  machine is idle for ``n`` seconds (before the idle skip, one pass per second);
* ``waiting``: a job on 3 of 4 processors runs ``n`` seconds (requesting
  ``2n``) and a 2-processor job submitted at 5 s waits behind it, ``--interval
  1s``, FCFS-backfill: a quiet stretch of ``n`` seconds (before the quiet skip,
  :meth:`~o2ksim.policies.base.Policy.quiet_until`, one pass per second);
  ``waiting-ncsa``: the same pair under NCSA-MS* (two fixed-job reservations,
  weights on the wait, the expansion factor and max(p, m)); ``waiting-immediate``:
  under FCFS-backfill with preemptive immediate service (the waiting job's trial
  preempts the long one, which is then resumed); ``waiting-goal``: under the
  goal-oriented ``tradeoff-tw-avgx`` (nothing fits while the long job runs);
* ``flood``: ``n`` jobs submitted at the same second on a 128-processor host,
  default policy (FCFS-backfill: one reservation); ``flood-sjf``,
  ``flood-lxfw``, ``flood-priority`` and ``flood-ncsa``: the same trace under
  SJF-, LXF&W- and Priority-backfill (``Jw + 5 Jx + 0.2 Jp``: a run of the
  merged order per processor count) and NCSA-MS* (two fixed-job reservations,
  ``240 Jw + 1500 Jx + 100 Jpe``); ``flood-memory``: NCSA-MS* on a flood whose
  jobs ask for memory too (a different amount each, so ``Jpe`` takes about as
  many values as there are jobs) and for one of 39 runtimes, as the O2K
  workload model's requests (:mod:`o2ksim.policies.order_scan`: runs by
  slope); ``flood-burst``: LXF&W-backfill on ``n`` jobs submitted ten a second
  (a burst from a script: ``n / 10`` instants) asking one of the same 39
  runtimes (runs by slope, however many instants); ``flood-eqspatial`` and
  ``flood-immediate``: the ``flood`` trace under EQspatial-0m and FCFS-backfill
  with preemptive immediate service (issue 27, D29: about n^2 before
  2026-11-26, near-linear since; docs/guides/scaling.md);
* ``reservations``: a job holds the whole 100-processor host for 10^7 s
  while ``n`` jobs arrive one a second, then all of them are scheduled with
  ``--reservations all`` (conservative backfilling), one departure pass at a time
  (exact estimates: every pass after the first carries the last one's plan,
  :mod:`o2ksim.policies.carried_plan`), with ``release_ties = "smallest-first"``
  (repairs and cascades); ``reservations-together``: the same with
  ``"together"``, the default for ``--reservations all`` (no repair, no cascade).

Prints a Markdown table (n, CPU s, wall s, peak RSS of the run's process in
MB, simulation passes, the carried plan's passes by kind for ``reservations``, the
1-minute load average at the end) per case and the exponent
``b`` of the least-squares fit ``CPU = a n^b`` (1 = linear; 0 = constant).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

CASES = (
    "idle", "waiting", "waiting-ncsa", "waiting-immediate", "waiting-goal", "flood", "flood-sjf",
    "flood-lxfw", "flood-priority", "flood-ncsa", "flood-memory", "flood-burst", "flood-eqspatial",
    "flood-immediate", "reservations", "reservations-together",
)  # fmt: skip


RESERVATION_SIZES = {
    "reservations-together": [10_000, 100_000, 1_000_000],  # 10^6: about 4 min
    "reservations": [1_000, 10_000, 100_000],  # smallest-first: 3x10^5 took 22 min
}
"""The default queue depths of the two ``--reservations all`` cases."""


def _line(job_id: int, submit: int, run: int, procs: int, req: int, mem: int = -1) -> str:
    """One SWF line (``mem``: used and requested memory, KB per processor)."""
    return f"{job_id} {submit} -1 {run} {procs} -1 {mem} {procs} {req} {mem} 1 1 1 -1 1 -1 -1 -1\n"


#: The requested runtimes of ``flood-memory`` (s): round values, as users ask for.
ROUND_RUNTIMES = [60 * m for m in (1, 2, 5, 15, 30)] + [3600 * h for h in range(1, 35)]


def write_trace(case: str, n: int, folder: Path) -> Path:
    """The hostile trace of ``case`` at size ``n`` (deterministic)."""
    if case not in ("flood-memory", "flood-burst"):
        case = "flood" if case.startswith("flood") else case.split("-")[0]
    path = folder / f"{case}-{n}.swf"
    if path.exists():
        return path
    rng = np.random.default_rng(n)
    with path.open("w") as f:
        if case == "idle":
            f.write("; MaxProcs: 4\n")
            f.write(_line(1, 0, 10, 1, 10))
            f.write(_line(2, n, 10, 1, 10))
        elif case.startswith("waiting"):
            f.write("; MaxProcs: 4\n")
            f.write(_line(1, 0, n, 3, 2 * n))
            f.write(_line(2, 5, 10, 2, 20))
        elif case == "flood":
            f.write("; MaxProcs: 128\n")
            runs = rng.integers(1, 2000, n)
            for i in range(n):
                procs = int(rng.integers(1, 70)) if i % 5 else int(rng.integers(1, 4))
                f.write(
                    _line(i + 1, 0, int(runs[i]), procs, int(runs[i]) + int(rng.integers(0, 3000)))
                )
        elif case in ("flood-memory", "flood-burst"):  # round runtimes: runs by slope
            f.write("; MaxProcs: 128\n")
            req = rng.choice(ROUND_RUNTIMES, n)
            for i in range(n):
                procs = int(rng.integers(1, 70)) if i % 5 else int(rng.integers(1, 4))
                run = int(rng.integers(1, int(req[i]) + 1))
                if case == "flood-memory":  # at one instant, each its own memory (KB/proc)
                    submit, mem = 0, int(rng.integers(1, 4_000_000))
                else:  # ten a second, no memory
                    submit, mem = i // 10, -1
                f.write(_line(i + 1, submit, run, procs, int(req[i]), mem))
        else:
            f.write("; MaxProcs: 100\n")
            f.write(_line(1, 0, 10**7, 100, 10**7))
            for i in range(n):
                run = int(rng.integers(100, 1100))
                f.write(_line(i + 2, i + 1, run, int(rng.integers(1, 101)), run))
    return path


RUNNER = """
import json, os, resource, sys, time
from o2ksim import simulate
from o2ksim.policies.backfill import Backfill
case, path = sys.argv[1], sys.argv[2]
kw = {
    "idle": {"interval": 1}, "waiting": {"interval": 1},
    "waiting-ncsa": {"interval": 1, "policy": "ncsa-ms"},
    "waiting-immediate": {"interval": 1, "policy": "fcfs-backfill-immediate"},
    "waiting-goal": {"interval": 1, "policy": "tradeoff-tw-avgx"}, "flood": {}, "flood-sjf": {"policy": "sjf-backfill"},
    "flood-lxfw": {"policy": "lxfw-backfill"}, "flood-priority": {"policy": "priority-backfill"},
    "flood-ncsa": {"policy": "ncsa-ms"}, "flood-memory": {"policy": "ncsa-ms"},
    "flood-burst": {"policy": "lxfw-backfill"}, "flood-eqspatial": {"policy": "eqspatial-0m"},
    "flood-immediate": {"policy": "fcfs-backfill-immediate"},
    "reservations": {"policy": Backfill(reservations="all", release_ties="smallest-first")},
    "reservations-together": {"policy": Backfill(reservations="all", release_ties="together")},
}[case]
t, w = time.process_time(), time.perf_counter()
r = simulate(path, **kw)
cpu, wall = time.process_time() - t, time.perf_counter() - w
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
carried = getattr(kw.get("policy"), "carried", None)
kinds = carried.counts if carried is not None else {}
print(json.dumps({"cpu": cpu, "wall": wall, "rss": rss, "passes": r.stats.passes,
                  "kinds": kinds, "load": os.getloadavg()[0]}))
"""


def run(case: str, path: Path, timeout: float) -> dict[str, Any] | None:
    """CPU seconds and passes of one simulation in a fresh interpreter (None: timed out)."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", RUNNER, case, str(path)],
            capture_output=True, text=True, check=True, timeout=timeout,
            cwd=path.parent,  # not the caller's: ``-c`` puts the cwd first on sys.path
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def exponent(sizes: list[int], cpu: list[float]) -> float:
    """Least-squares slope of log CPU against log n."""
    if len(sizes) < 2:
        return math.nan
    return float(np.polyfit(np.log(sizes), np.log(np.maximum(cpu, 1e-3)), 1)[0])


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    ap.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000],
                    help="n for idle (gap in seconds), waiting (the long job's seconds) "
                         "and flood (jobs)")  # fmt: skip
    ap.add_argument("--reservation-sizes", nargs="+", type=int, default=None,
                    help="n for reservations (queued jobs; default 10^4 10^5 10^6 for "
                         "reservations-together, the default tie rule of --reservations all, "
                         "and 10^3 10^4 10^5 for reservations, whose cascades make 10^6 "
                         "take hours)")  # fmt: skip
    ap.add_argument(
        "--timeout", type=float, default=3600.0, help="wall seconds per run (larger sizes skipped)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="o2ksim-scale-") as tmp:
        for case in args.cases:
            sizes = args.sizes
            if case.startswith("reservations"):
                sizes = args.reservation_sizes or RESERVATION_SIZES[case]
            done: list[tuple[int, float, float]] = []
            print(
                f"\n{case}\n\n| n | CPU s | wall s | peak RSS MB | passes | by kind | load |"
                "\n|---|---|---|---|---|---|---|"
            )
            for n in tqdm(sorted(sizes), desc=case, leave=False):
                result = run(case, write_trace(case, n, Path(tmp)), args.timeout)
                if result is None:
                    print(f"| {n:,} | | > {args.timeout:g} (stopped) | | |")
                    break
                done.append((n, result["cpu"], result["passes"]))
                cells = f"{result['cpu']:.2f} | {result['wall']:.2f} | {result['rss']:.0f}"
                kinds = ", ".join(f"{k} {v:,}" for k, v in result["kinds"].items())
                print(
                    f"| {n:,} | {cells} | {result['passes']:,.0f} | {kinds} | "
                    f"{result['load']:.1f} |",
                    flush=True,
                )
            if done:
                b = exponent([n for n, _, _ in done], [c for _, c, _ in done])
                print(f"\nfitted exponent: CPU ~ n^{b:.2f}")


if __name__ == "__main__":
    main()
