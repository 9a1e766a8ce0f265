"""NCSA-LSF* against FCFS-backfill on an O2K-sized month (thesis §5.2, Figs. 49-50).

Usage::

    .venv/bin/python benchmarks/lsf_vs_backfill.py                    # O2K model if present, else HPC2N
    .venv/bin/python benchmarks/lsf_vs_backfill.py --workload hpc2n --seeds 0 1 2
    .venv/bin/python benchmarks/lsf_vs_backfill.py --workload o2k --seeds 1 2 3 --out /tmp/lsf

Both policies run the same jobs on ``hosts/o2k.toml`` with the thesis's protocol
(T§3.4): one week of warm-up, a 30-day month analysed, arrivals continuing
until every month job has started.

Workloads:

* ``o2k``: the synthetic O2K model, ``generate("o2k", span=37 d, seed=s)``;
* ``hpc2n``: the HPC2N trace (a 240-processor Linux cluster) mapped onto the
  O2K: jobs of at most 64 processors and at most 400 h requested (LSF's
  classes; 99.7 % of the jobs), memory requests dropped (they describe 1 GB
  dual-processor nodes, not the O2K), interarrival times divided by a factor
  chosen so that the month's processor demand is ``--load`` (default 0.9) of
  the 960 O2K processors -- the load scaling of G§4.  Seed ``s`` starts at
  raw trace day ``200 s``.

Prints, per seed and policy, the mean, 95th percentile and maximum wait
(hours), the mean slowdown and bounded slowdown, utilisation, and for
NCSA-LSF* the draining counters and the per-class table of Figures 5-6.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from o2ksim.analysis.lsf_classes import lsf_class_table
from o2ksim.machine import load_machine
from o2ksim.policies import make_policy
from o2ksim.run.api import simulate
from o2ksim.workloads.transforms import Window

DAY = 86400.0
WARMUP = 7 * DAY
MONTH = 30 * DAY
HPC2N = Path(__file__).resolve().parents[2] / "shared" / "traces" / "HPC2N-2002-2.1-cln.swf.gz"
POLICIES = ("fcfs-backfill", "ncsa-lsf")


def o2k_month(seed: int, params: str | None = None) -> tuple[pd.DataFrame, str]:
    """A generated O2K month with a week of warm-up (the O2K model of thesis ch. 4).

    *params*: a parameter set, e.g. a thesis month ``1999-10`` (default: the average month).
    """
    from o2ksim.workloads.models import generate

    trace = generate(
        "o2k", span=WARMUP + MONTH + 10 * DAY, seed=seed, params=params
    )  # arrivals go on
    return trace.jobs, f"O2K model {params or 'average month'}, seed {seed}"


def hpc2n_month(seed: int, load: float, procs: int) -> tuple[pd.DataFrame, str]:
    """HPC2N jobs mapped onto the O2K and load-scaled to ``load`` (see the module docstring)."""
    from o2ksim.workloads.swf import read_swf

    jobs = read_swf(HPC2N).jobs
    keep = (
        (jobs["req_procs"] > 0)
        & (jobs["req_procs"] <= 64)
        & (jobs["run_time"] >= 0)
        & (jobs["req_time"] <= 400 * 3600)
    )
    jobs = jobs.loc[keep].copy()
    jobs["req_mem"] = -1
    jobs["used_mem"] = -1
    raw0 = 200 * DAY * seed
    submit = jobs["submit"].to_numpy(float) - raw0
    work = (jobs["req_procs"] * jobs["run_time"]).to_numpy(float)
    factor = 4.0
    for _ in range(20):  # fixed point: the month's demand at this factor equals the target
        month = (submit >= WARMUP * factor) & (submit < (WARMUP + MONTH) * factor)
        demand = work[month].sum() / (procs * MONTH)
        factor *= load / demand
    span = (submit >= 0) & (submit < (WARMUP + MONTH) * factor + 10 * DAY * factor)
    out = jobs.loc[span].copy()
    out["submit"] = np.round((out["submit"] - raw0) / factor).astype(np.int64)
    first = pd.Timestamp(raw0 + 1027839845, unit="s").date()
    what = (
        f"HPC2N from {first} (raw days {raw0 / DAY:.0f}-{raw0 / DAY + 37 * factor:.0f}), "
        f"interarrivals / {factor:.2f} for demand {load:.0%} of {procs} procs"
    )
    return out, what


def md(df: pd.DataFrame, index: bool = True) -> str:
    """A Markdown table (numbers to two decimals) without extra dependencies."""
    df = df.reset_index() if index else df
    cols = [" / ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in df.columns]

    def cell(v: object) -> str:
        if isinstance(v, float | np.floating):
            return f"{v:.2f}"
        return str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def run_one(frame: pd.DataFrame, policy: str, seed: int) -> dict:
    pol = make_policy(policy)
    t0 = time.perf_counter()
    r = simulate(
        frame, machine="o2k", policy=pol, window=Window(WARMUP, WARMUP + MONTH, WARMUP), seed=seed
    )
    s = r.summary
    row = {
        "policy": policy,
        "jobs": s["jobs"],
        "rejected": s["rejected"],
        "mean_wait_h": s["mean_wait"] / 3600,
        "p95_wait_h": s["p95_wait"] / 3600,
        "max_wait_h": s["max_wait"] / 3600,
        "mean_slowdown": s["mean_slowdown"],
        "mean_bounded_slowdown": s["mean_bounded_slowdown"],
        "utilisation": s["utilisation"],
        "seconds": time.perf_counter() - t0,
    }
    counters = dict(getattr(pol, "counters", {}))
    if counters:
        idle = counters.pop("drain_idle_proc_seconds", 0.0)
        span = r.stats.sim_end - WARMUP
        row["drains"] = counters.get("drains", 0)
        row["drain_idle_pct"] = 100 * idle / (load_machine("o2k").total_procs * span)
    return {"row": row, "classes": lsf_class_table(r.jobs, "o2k"), "counters": counters}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", choices=("auto", "o2k", "hpc2n"), default="auto")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--load", type=float, default=0.9, help="HPC2N: target processor demand")
    ap.add_argument("--params", help="O2K: parameter set, e.g. a thesis month 1999-10")
    ap.add_argument("--out", type=Path, help="write results.csv and classes.csv here")
    args = ap.parse_args(argv)

    workload = args.workload
    if workload == "auto":
        try:
            o2k_month(0)
            workload = "o2k"
        except Exception as exc:  # the model is optional here: fall back to the trace
            print(f"(O2K model unavailable: {exc}; using HPC2N)", file=sys.stderr)
            workload = "hpc2n"
    procs = load_machine("o2k").total_procs
    rows, classes = [], []
    for seed in args.seeds:
        frame, what = o2k_month(seed, args.params) if workload == "o2k" else hpc2n_month(seed, args.load, procs)
        print(f"\n## seed {seed}: {what}; {len(frame)} jobs simulated\n")
        for policy in POLICIES:
            res = run_one(frame, policy, seed)
            row = {"workload": workload, "seed": seed, **res["row"]}
            rows.append(row)
            c = res["classes"].assign(workload=workload, seed=seed, policy=policy)
            classes.append(c)
            if res["counters"]:
                print(f"{policy} counters: {res['counters']}")
        table = pd.DataFrame([r for r in rows if r["seed"] == seed]).drop(columns=["workload"])
        print(md(table, index=False))
        both = pd.concat([c for c in classes if c["seed"].iloc[0] == seed])
        wide = both.pivot_table(
            index="class", columns="policy", values=["mean_wait", "max_wait"], sort=False
        )
        wide = (wide / 3600).round(2)
        wide.columns = [f"{stat} {pol}" for stat, pol in wide.columns]
        wide.insert(0, "jobs", both.drop_duplicates("class").set_index("class")["jobs"])
        print("\nper LSF class, hours:\n")
        print(md(wide))
    df = pd.DataFrame(rows)
    print("\n## mean over seeds\n")
    mean = df.groupby("policy", sort=False)[
        ["mean_wait_h", "p95_wait_h", "max_wait_h", "mean_slowdown", "utilisation"]
    ].mean()
    print(md(mean))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        df.to_csv(args.out / "results.csv", index=False)
        pd.concat(classes).to_csv(args.out / "classes.csv", index=False)
        (args.out / "args.json").write_text(json.dumps({**vars(args), "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
