"""LXF&W-backfill vs +1-minute preemptive immediate service vs +soon (thesis §5.5, Figs. 66-67).

Usage::

    .venv/bin/python benchmarks/immediate_service.py                      # seeds 1 2 3
    .venv/bin/python benchmarks/immediate_service.py --seeds 1 --out /tmp/imm.json
    .venv/bin/python benchmarks/immediate_service.py --params 1999-10 --seeds 1 2   # a thesis month

Each seed generates one synthetic O2K month (the O2K model of thesis ch. 4)
with a week of warm-up and the protocol's cool-down tail (T§3.4: arrivals go
on until every month job has started, or finished under preemption), and
runs the three policies on ``hosts/o2k.toml`` over the same jobs.

Prints, per seed and policy: mean / 95th-percentile / max wait (h), mean
slowdown, the same for jobs under one minute and over one minute, the
immediate-service counters (trials and their share of the arrivals, finished
in the trial and their share of the trials, preempting trials, preemptions;
the JSON also has the trials on free processors), and the run time of the
simulation.  Speed is reported as the ratio of each policy's wall time to
LXF&W-backfill's in the same run (the machine is shared; absolute seconds are
inflated by the load).

``--out`` writes every number as JSON (the docs tables are made from it).
``--timing N`` instead measures the CPU time of one simulation per policy
(N interleaved repeats, fastest kept): the speed figure of the docs.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from o2ksim.metrics import by_runtime_group
from o2ksim.run.api import simulate
from o2ksim.workloads.cooldown import append_tail, cooldown_chunk, run_with_cooldown
from o2ksim.workloads.models import generate
from o2ksim.workloads.transforms import Window

DAY = 86400.0
WARMUP = 7 * DAY
MONTH = 30 * DAY
POLICIES = ("lxfw-backfill", "lxfw-backfill-immediate", "lxfw-backfill-soon")
GROUP_COLUMNS = ["upper_min", "jobs", "mean_wait", "p95_wait", "max_wait", "mean_slowdown"]


def _part(jobs, mask) -> dict[str, float]:
    ran = jobs.loc[mask & jobs["analysed"] & (jobs["status"] == "completed")]
    w = ran["wait"].to_numpy(float)
    return {
        "jobs": len(ran),
        "mean_wait_h": float(w.mean() / 3600) if len(w) else float("nan"),
        "p95_wait_h": float(np.percentile(w, 95) / 3600) if len(w) else float("nan"),
        "max_wait_h": float(w.max() / 3600) if len(w) else float("nan"),
        "mean_slowdown": float(ran["slowdown"].mean()),
    }


def run_seed(seed: int, params: str | None = None) -> dict[str, dict]:
    month = generate("o2k", span=WARMUP + MONTH, seed=seed, params=params)
    window = Window(WARMUP, WARMUP + MONTH, WARMUP)
    out = {}
    for policy in POLICIES:
        t0 = time.perf_counter()
        r = run_with_cooldown(
            lambda tr, policy=policy: simulate(tr, machine="o2k", policy=policy, window=window),
            month,
            lambda tr, k: append_tail(
                tr, "o2k", after=window.end, seed=seed, params=params, chunks=k,
                chunk_length=cooldown_chunk(window),
            ),
        )
        wall = time.perf_counter() - t0
        s = r.summary
        jobs = r.jobs
        short = jobs["run_time"] <= 60
        groups = by_runtime_group(jobs)
        trials = s.get("immediate_service_jobs", 0)
        completed = s.get("immediate_service_completed", 0)
        preempting = s.get("immediate_service_preempting", 0)
        out[policy] = {
            "arrivals": s["jobs"],
            "mean_wait_h": s["mean_wait"] / 3600,
            "p95_wait_h": s["p95_wait"] / 3600,
            "max_wait_h": s["max_wait"] / 3600,
            "mean_slowdown": s["mean_slowdown"],
            "utilisation": s.get("utilisation"),
            "under_1min": _part(jobs, short),
            "over_1min": _part(jobs, ~short),
            "trials": trials,
            "trials_completed": completed,
            "trials_preempting": preempting,
            "preemptions": s.get("preemptions", 0),
            "trials_share": trials / s["jobs"],
            "trials_completed_share": completed / max(trials, 1),
            "trials_on_free": trials - preempting,
            "cooldown_days": s["cooldown_seconds"] / DAY,
            "cooldown_short": s["cooldown_short"],
            "sim_seconds": s["sim_seconds"],
            "wall_seconds": wall,
            "groups": groups[GROUP_COLUMNS].to_dict("list"),
        }
        o = out[policy]
        print(
            f"seed {seed} {policy:<24} wait h mean {o['mean_wait_h']:6.2f} 95th {o['p95_wait_h']:6.2f} "
            f"max {o['max_wait_h']:6.1f}  slowdown {o['mean_slowdown']:7.2f}  "
            f"<1min sd {o['under_1min']['mean_slowdown']:7.2f}  >1min sd {o['over_1min']['mean_slowdown']:6.2f} "
            f"trials {o['trials']} ({100 * o['trials_share']:.1f} %) done {o['trials_completed']} "
            f"({100 * o['trials_completed_share']:.1f} %) preempting {o['trials_preempting']} "
            f"preemptions {o['preemptions']}  sim {o['sim_seconds']:.1f} s",
            flush=True,
        )
    base = out[POLICIES[0]]["sim_seconds"]
    for policy in POLICIES[1:]:
        out[policy]["time_ratio"] = out[policy]["sim_seconds"] / base
        print(f"seed {seed} {policy}: simulation time {out[policy]['time_ratio']:.2f} x LXF&W-backfill")
    return out


def timing(seed: int, repeats: int) -> dict[str, float]:
    """CPU seconds of one simulation of the same month (+ one 30-day tail) per policy.

    Runs are interleaved (plain, immediate, soon, plain, ...) and each policy
    keeps its fastest repeat, so the shared machine's load affects all alike;
    process CPU time, not wall time.
    """
    window = Window(WARMUP, WARMUP + MONTH, WARMUP)
    month = append_tail(generate("o2k", span=WARMUP + MONTH, seed=seed), "o2k",
                        after=window.end, seed=seed, chunk_length=cooldown_chunk(window))  # fmt: skip
    best = {p: float("inf") for p in POLICIES}
    for _ in range(repeats):
        for policy in POLICIES:
            t0 = time.process_time()
            simulate(month, machine="o2k", policy=policy, window=window)
            best[policy] = min(best[policy], time.process_time() - t0)
    for policy in POLICIES:
        print(f"timing seed {seed} {policy:<24} {best[policy]:7.1f} CPU s  "
              f"{best[policy] / best[POLICIES[0]]:.2f} x LXF&W-backfill", flush=True)  # fmt: skip
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--params", help="O2K parameter set, e.g. a thesis month 1999-10 (default: average)")
    ap.add_argument("--out", help="write all results as JSON here")
    ap.add_argument("--timing", type=int, metavar="REPEATS", default=0,
                    help="only measure CPU time per policy (REPEATS interleaved repeats)")  # fmt: skip
    args = ap.parse_args()
    if args.timing:
        results = {str(seed): timing(seed, args.timing) for seed in args.seeds}
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=1)
        return
    results = {str(seed): run_seed(seed, args.params) for seed in args.seeds}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1, default=float)


if __name__ == "__main__":
    main()
