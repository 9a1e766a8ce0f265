"""EQspatial-0m, -5m and -5m/>50hr against LXF&W-backfill with immediate service (thesis §6.1).

Usage::

    .venv/bin/python benchmarks/eqspatial_vs_lxfw.py                 # seeds 1 2 3, prints Markdown
    .venv/bin/python benchmarks/eqspatial_vs_lxfw.py --seeds 1 --days 37 --out /tmp/eq
    .venv/bin/python benchmarks/eqspatial_vs_lxfw.py --params 2000-02 --seeds 1   # a thesis month

Each seed is one synthetic O2K month (``generate("o2k", span=37 d, seed=s)``) on
``hosts/o2k.toml`` with the thesis's protocol (T§3.4): a week of warm-up, 30
days analysed, the run continuing until every month job has finished, with
arrivals going on after the month (one 30-day cool-down chunk,
:func:`o2ksim.workloads.cooldown.append_tail`, the same for every policy).
The policies:

* ``eqspatial-0m``, ``eqspatial-5m``, ``eqspatial-5m-50hr`` (T§3.2.3, §6.1);
* ``lxfw-backfill-immediate``: LXF&W-backfill with the preemptive 1-minute
  immediate service (1 GB, t = 10 min: T§3.2.2, §5.5) -- the baseline of
  Figs. 69-72;
* plain ``lxfw-backfill``, only as the speed reference (the issue's bound:
  an O2K month under eqspatial-5m in < 3x the time of lxfw-backfill).

Printed in the thesis's views: the overall measures (Figs. 68-69, 94), the
95th-percentile wait of jobs over a minute (Fig. 72), the maximum wait per
actual-runtime group (Fig. 70) and per requested-processor group (Fig. 71),
the worst wait of long (> 50 h) wide (> 32 procs) jobs, and Table 14 (time
fraction each host's requested processors are <= P, P+1..2P, 2P+1..3P, > 3P).
Wall times are measured in the same process, so their ratios are meaningful
on a loaded machine; absolute seconds are not.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from o2ksim import simulate
from o2ksim.machine import load_machine
from o2ksim.metrics import by_runtime_group
from o2ksim.partitioning import host_demand
from o2ksim.report.data import size_groups
from o2ksim.workloads.cooldown import append_tail, cooldown_chunk
from o2ksim.workloads.models import generate
from o2ksim.workloads.transforms import Window

H = 3600.0
DAY = 86400.0
POLICIES = {
    "EQspatial-0m": ("eqspatial-0m", {}),
    "EQspatial-5m": ("eqspatial-5m", {}),
    "EQspatial-5m/>50hr": ("eqspatial-5m-50hr", {}),
    "LXF&W-bf+IS": ("lxfw-backfill-immediate", {}),
    "LXF&W-bf (speed ref.)": ("lxfw-backfill", {}),
}


def analysed(jobs: pd.DataFrame) -> pd.DataFrame:
    j = jobs.loc[jobs["analysed"] & jobs["status"].isin(("completed", "killed"))]
    return j


def one(trace, window, machine, label: str) -> dict:
    name, params = POLICIES[label]
    t0 = time.perf_counter()
    r = simulate(trace, machine=machine, policy=name, policy_params=params, window=window)
    wall = time.perf_counter() - t0
    s = r.summary
    j = analysed(r.jobs)
    over_min = j.loc[j["run_time"] > 60, "wait"]
    long_wide = j.loc[(j["run_time"] > 50 * H) & (j["procs"] > 32), "wait"]
    row = {
        "policy": label,
        "mean_wait_h": s["mean_wait"] / H,
        "p95_wait_h": s["p95_wait"] / H,
        "max_wait_h": s["max_wait"] / H,
        "p95_wait_over_1min_h": float(np.percentile(over_min, 95)) / H if len(over_min) else np.nan,
        "max_wait_long_wide_h": float(long_wide.max()) / H if len(long_wide) else np.nan,
        "long_wide_jobs": len(long_wide),
        "mean_slowdown": s["mean_slowdown"],
        "mean_bsld": s["mean_bounded_slowdown"],
        "utilisation": s.get("utilisation", np.nan),
        "repartitions": s.get("repartitions", 0),
        "resizes": s.get("resizes", 0),
        "analysed_jobs": int(r.jobs["analysed"].sum()),
        "placed_on_arrival": s.get("placed_on_arrival", np.nan),
        "placed_share": s.get("placed_on_arrival", np.nan) / max(int(r.jobs["analysed"].sum()), 1),
        "is_jobs": s.get("immediate_service_jobs", 0),
        "is_completed": s.get("immediate_service_completed", 0),
        "wall_s": wall,
        "cooldown_short": bool(s.get("cooldown_short", False)),
    }
    extra = {
        "runtime": by_runtime_group(r.jobs)[["upper_min", "jobs", "mean_wait", "p95_wait", "max_wait", "runtime_at_max"]],
        "procs": size_groups(r.jobs, "procs"),
        "demand": host_demand(r.jobs, r.segments, machine) if name.startswith("eqspatial") else None,
    }
    return {"row": row, **extra}


def md_table(df: pd.DataFrame, digits: int = 2) -> str:
    cols = list(df.columns)
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, float | np.floating):
                cells.append("–" if not np.isfinite(v) else f"{v:.{digits}f}")
            else:
                cells.append(str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--days", type=float, default=37.0, help="generated days (7 of warm-up)")
    ap.add_argument("--params", help="O2K parameter set, e.g. a thesis month 1999-10 (default: average)")
    ap.add_argument("--policies", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    ap.add_argument("--out", type=Path, help="also write the tables as JSON here")
    ap.add_argument("--speed", type=int, metavar="REPEATS",
                    help="only time eqspatial-5m against lxfw-backfill, alternating, REPEATS times each")  # fmt: skip
    args = ap.parse_args()
    machine = load_machine("o2k")
    window = Window(7 * DAY, args.days * DAY, 7 * DAY)
    if args.speed:
        time_policies(args, machine, window)
        return
    rows, details = [], {}
    for seed in args.seeds:
        trace = generate("o2k", span=args.days * DAY, seed=seed, params=args.params)
        trace = append_tail(trace, "o2k", after=window.end, seed=seed, params=args.params, chunks=1,
                            chunk_length=cooldown_chunk(window))  # fmt: skip
        for label in args.policies:
            res = one(trace, window, machine, label)
            res["row"]["seed"] = seed
            rows.append(res["row"])
            details[(seed, label)] = res
            print(f"# seed {seed} {label}: {res['row']['wall_s']:.1f} s", flush=True)
    table = pd.DataFrame(rows)
    cols = ["seed", "policy", "mean_wait_h", "p95_wait_h", "max_wait_h", "p95_wait_over_1min_h",
            "max_wait_long_wide_h", "long_wide_jobs", "mean_slowdown", "mean_bsld", "utilisation"]  # fmt: skip
    print("\n## Overall (waits in hours)\n")
    print(md_table(table[cols]))
    print("\n## Repartitioning and immediate service\n")
    print(md_table(table[["seed", "policy", "repartitions", "resizes", "analysed_jobs", "placed_on_arrival",
                          "is_jobs", "is_completed"]], 0))  # fmt: skip
    print("\nShare of the analysed jobs placed on a host on arrival (EQspatial; thesis: > 99 %):\n")
    print(md_table(table.loc[table["policy"].str.startswith("EQspatial"), ["seed", "policy", "placed_share"]], 4))
    print("\n## Speed (same process; ratio to plain LXF&W-backfill on the same month)\n")
    ref = table.loc[table["policy"] == "LXF&W-bf (speed ref.)"].set_index("seed")["wall_s"]
    speed = table[["seed", "policy", "wall_s"]].copy()
    speed["ratio"] = speed["wall_s"] / speed["seed"].map(ref)
    print(md_table(speed))
    for seed in args.seeds:
        print(f"\n## Seed {seed}: maximum wait (h) per actual-runtime group (Fig. 70)\n")
        cols_rt = {}
        for label in args.policies[:4]:
            rt = details[(seed, label)]["runtime"].set_index("upper_min")
            cols_rt[label] = rt["max_wait"] / H
        df = pd.DataFrame(cols_rt).reset_index().rename(columns={"upper_min": "runtime <= (min)"})
        print(md_table(df))
        print(f"\n## Seed {seed}: 95th-percentile wait (h) per actual-runtime group (Fig. 72)\n")
        cols_rt = {}
        for label in args.policies[:4]:
            rt = details[(seed, label)]["runtime"].set_index("upper_min")
            cols_rt[label] = rt["p95_wait"] / H
        df = pd.DataFrame(cols_rt).reset_index().rename(columns={"upper_min": "runtime <= (min)"})
        print(md_table(df))
        print(f"\n## Seed {seed}: maximum wait (h) per requested-processor group (Fig. 71)\n")
        cols_p = {}
        for label in args.policies[:4]:
            pg = details[(seed, label)]["procs"].set_index("label")
            cols_p[label] = pg["max_wait"] / H
        print(md_table(pd.DataFrame(cols_p).reset_index()))
        demand = details.get((seed, "EQspatial-5m"), {}).get("demand")
        if demand is not None:
            print(f"\n## Seed {seed}: EQspatial-5m, fraction of time per host's total requested processors (Table 14)\n")
            print(md_table(demand, 3))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out / "overall.csv", index=False)
        (args.out / "args.json").write_text(json.dumps(vars(args), default=str))


def time_policies(args: argparse.Namespace, machine, window: Window) -> None:  # type: ignore[no-untyped-def]
    """Alternate the two policies on each seed's month (same process) and keep each one's best time."""
    print("| seed | lxfw-backfill best (s) | eqspatial-5m best (s) | ratio |")
    print("|---|---|---|---|")
    for seed in args.seeds:
        trace = generate("o2k", span=args.days * DAY, seed=seed)
        trace = append_tail(trace, "o2k", after=window.end, seed=seed, chunks=1,
                            chunk_length=cooldown_chunk(window))  # fmt: skip
        best = {"lxfw-backfill": np.inf, "eqspatial-5m": np.inf}
        for _ in range(args.speed):
            for name in best:
                t0 = time.perf_counter()
                simulate(trace, machine=machine, policy=name, window=window)
                best[name] = min(best[name], time.perf_counter() - t0)
        ratio = best["eqspatial-5m"] / best["lxfw-backfill"]
        print(f"| {seed} | {best['lxfw-backfill']:.1f} | {best['eqspatial-5m']:.1f} | {ratio:.2f} |", flush=True)


if __name__ == "__main__":
    main()
