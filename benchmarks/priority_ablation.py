"""Ablations of the open choices in NCSA-LSF* and the backfill priorities (docs/background/fidelity/priorities.md).

Usage::

    python benchmarks/priority_ablation.py --group backfill --seeds 1 2          # six months
    python benchmarks/priority_ablation.py --group lsf --seeds 1 2
    python benchmarks/priority_ablation.py --group backfill --trace KTH-SP2-1996-2.1-cln.swf.gz \\
        --machine kth-sp2                                                          # a real trace

Each variant switches one choice the thesis leaves open (a policy parameter;
the presets are unchanged) and runs on the same jobs as the others: on each
generated month of Oct 1999 - Mar 2000 (``--params`` sets; a week of warm-up,
the 30-day month analysed, the protocol's cool-down tail, T§3.4), or on a
whole trace from ``/work/shared/traces`` (``--trace``, no window) to tell a
property of the O2K workload from one of the policy.

Groups:

* ``backfill``: FCFS-, Priority-, LXF&W- and SJF-backfill as preset; Priority-backfill
  without the processor weight (``p = 0``) and with the wait counted in minutes
  (``w = 60``); LXF&W-backfill with the wait in minutes (``w = 1.2``); FCFS- and
  Priority-backfill told the actual runtimes (T§6.2.4's test of why the two are
  alike on the O2K);
* ``lsf``: FCFS-backfill, Priority-backfill, NCSA-LSF* as preset and with
  ``arrival_blocking = "ignore"``, without the size-class blocking (``size_blocking =
  "never"``, a diagnostic), with Table 4's system-wide limits doubled, without
  the per-host limits and without any limit (machine-data ablations); per run also the LSF classes (T Table 3) in
  which NCSA-LSF*'s mean wait exceeds FCFS-backfill's, its worst class, and the
  mean wait of the jobs that ran at most / over 10 hours (T§5.2's split).

Prints one Markdown table per group (a row per case and variant) and, with
``--out``, writes it and a CSV.  About 5-15 CPU s per run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from o2ksim import paths
from o2ksim.analysis.lsf_classes import job_classes, lsf_class_table
from o2ksim.machine import MachineSpec, parse_machine
from o2ksim.policies import make_policy
from o2ksim.run.api import simulate
from o2ksim.workloads.cooldown import append_tail, cooldown_chunk, run_with_cooldown
from o2ksim.workloads.models import generate
from o2ksim.workloads.transforms import Window

DAY = 86400.0
HOUR = 3600.0
MONTHS = ("1999-10", "1999-11", "1999-12", "2000-01", "2000-02", "2000-03")
TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"

# label -> (preset, parameter overrides, runtime-estimate scenario[, [lsf] table overrides])
VARIANTS: dict[str, dict[str, tuple[Any, ...]]] = {
    "backfill": {
        "FCFS": ("fcfs-backfill", {}, None),
        "Priority": ("priority-backfill", {}, None),
        "Priority p=0": ("priority-backfill", {"priority": {"w": 1, "x": 5}}, None),
        "Priority w=60 (Jw in min)": ("priority-backfill", {"priority": {"w": 60, "x": 5, "p": 0.2}}, None),
        "LXF&W": ("lxfw-backfill", {}, None),
        "LXF&W w=1.2 (Jw in min)": ("lxfw-backfill", {"priority": {"w": 1.2, "x": 1}}, None),
        "SJF": ("sjf-backfill", {}, None),
        "FCFS actual R": ("fcfs-backfill", {}, "actual"),
        "Priority actual R": ("priority-backfill", {}, "actual"),
    },
    "lsf": {
        "FCFS": ("fcfs-backfill", {}, None),
        "Priority": ("priority-backfill", {}, None),
        "LSF*": ("ncsa-lsf", {}, None),
        "LSF* arrivals unblocked": ("ncsa-lsf", {"arrival_blocking": "ignore"}, None),
        "LSF* no size blocking": ("ncsa-lsf", {"size_blocking": "never"}, None),
        "LSF* mt<=96 lt<=40": ("ncsa-lsf", {}, None, {"system_limits": {"mt": 96, "lt": 40}}),
        "LSF* no host limits": ("ncsa-lsf", {}, None, {"host_limits": {}}),
        "LSF* no limits": ("ncsa-lsf", {}, None, {"host_limits": {}, "system_limits": {}}),
        "LSF* no size blocking, mt<=96 lt<=40": (
            "ncsa-lsf", {"size_blocking": "never"}, None, {"system_limits": {"mt": 96, "lt": 40}}),
    },
}


def measures(r: Any) -> dict[str, float]:
    """Mean / 95th / max wait (h), mean slowdown, utilisation and the 10-hour split of a run."""
    s = r.summary
    jobs = r.jobs
    mask = jobs["status"].isin(("completed", "killed"))
    if "analysed" in jobs:
        mask &= jobs["analysed"].astype(bool)
    ran = jobs.loc[mask]
    long = ran["run_time"] > 10 * HOUR
    return {
        "mean_wait": s["mean_wait"] / HOUR,
        "p95_wait": s["p95_wait"] / HOUR,
        "max_wait": s["max_wait"] / HOUR,
        "mean_slowdown": float(s["mean_slowdown"]),
        "utilisation": float(s["utilisation"]),
        "wait_le_10h": float(ran.loc[~long, "wait"].mean()) / HOUR,
        "wait_gt_10h": float(ran.loc[long, "wait"].mean()) / HOUR,
    }


def o2k_machine(lsf: dict[str, Any] | None = None) -> MachineSpec:
    """hosts/o2k.toml, with some keys of its ``[lsf]`` table replaced (a limits ablation);
    the key ``host_limits`` replaces every host's ``[host.lsf].limits``."""
    data = tomllib.loads(paths.resolve("hosts", "o2k").read_text())
    lsf = dict(lsf or {})
    if "host_limits" in lsf:
        limits = lsf.pop("host_limits")
        for h in data["host"]:
            h["lsf"]["limits"] = dict(limits)
    data["lsf"].update(lsf)
    return parse_machine(data, "hosts/o2k.toml (ablation)")


def run_month(
    trace: Any, month: str, seed: int, preset: str, params: dict, est: str | None,
    machine: MachineSpec,
) -> Any:  # fmt: skip
    """One variant on one generated month, with the cool-down tail (as the claims benchmark)."""
    window = Window(7 * DAY, 37 * DAY, 7 * DAY)

    def run(tr: Any) -> Any:
        return simulate(tr, machine=machine, policy=make_policy(preset, **params), window=window,
                        estimates=est)  # fmt: skip

    def extend(tr: Any, k: int) -> Any:
        return append_tail(tr, "o2k", after=window.end, seed=seed, params=month, chunks=k,
                           chunk_length=cooldown_chunk(window))  # fmt: skip

    return run_with_cooldown(run, trace, extend)


def mt_running(jobs: pd.DataFrame, start: float = 7 * DAY, end: float = 37 * DAY) -> tuple[float, float]:
    """Time-average number of running ``mt`` jobs (T Table 3) over the month, and the share of
    the month with at least 48 running (Table 4's system-wide limit), sampled every 10 min."""
    ran = jobs[jobs["status"].isin(("completed", "killed"))]
    mt = job_classes(ran, o2k_machine()).str.startswith("mt_").to_numpy()
    s, e = ran["start"].to_numpy(float)[mt], ran["end"].to_numpy(float)[mt]
    grid = np.arange(start, end, 600.0)
    n = (s[None, :] <= grid[:, None]).sum(1) - (e[None, :] <= grid[:, None]).sum(1)
    return float(n.mean()), float((n >= 48).mean())


def lsf_columns(runs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per LSF* variant: classes worse than FCFS-backfill (of the classes with jobs), worst class;
    for FCFS-backfill: how many mt jobs it runs at once (would Table 4's mt <= 48 bind?)."""
    base = lsf_class_table(runs["FCFS"].jobs, "o2k").set_index("class")
    mean_mt, at_limit = mt_running(runs["FCFS"].jobs)
    out: dict[str, dict[str, Any]] = {
        "FCFS": {"classes_worse": f"mt running: {mean_mt:.1f}", "worst_class": f">= 48: {100 * at_limit:.0f} %"}
    }
    for name, r in runs.items():
        if not name.startswith("LSF"):
            continue
        t = lsf_class_table(r.jobs, "o2k").set_index("class")
        t = t[t["jobs"] > 0]
        worse = int((t["mean_wait"] > base.loc[t.index, "mean_wait"]).sum())
        worst = t["mean_wait"].idxmax()
        out[name] = {
            "classes_worse": f"{worse} of {len(t)}",
            "worst_class": f"{worst} ({t.loc[worst, 'mean_wait'] / HOUR:.1f} h)",
        }
    return out


def md(df: pd.DataFrame) -> str:
    """A Markdown table, numbers to two decimals (no extra dependency)."""

    def cell(v: object) -> str:
        return f"{v:.2f}" if isinstance(v, float | np.floating) else str(v)

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--group", choices=tuple(VARIANTS), default="backfill")
    ap.add_argument("--months", nargs="+", default=list(MONTHS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--trace", help="a trace file name in /work/shared/traces (or a path)")
    ap.add_argument("--machine", help="machine of --trace (hosts/*.toml name)")
    ap.add_argument("--only", nargs="+", help="only these variant labels")
    ap.add_argument("--out", type=Path, help="write the table (.md) and the rows (.csv) here")
    args = ap.parse_args(argv)
    variants = {k: v for k, v in VARIANTS[args.group].items() if not args.only or k in args.only}
    if args.trace:
        path = Path(args.trace) if Path(args.trace).exists() else TRACES / args.trace
        todo: list[tuple[str, Any]] = [(path.name, None)]
    else:
        todo = [(f"{m} s{s}", (m, s)) for m in args.months for s in args.seeds]
    rows = []
    t0 = time.process_time()
    bar = tqdm(total=len(todo) * len(variants), desc=args.group, file=sys.stderr)
    for label, case in todo:
        trace = None if case is None else generate("o2k", span=37 * DAY, seed=case[1], params=case[0])
        runs = {}
        for name, (preset, params, est, *lsf) in variants.items():
            if case is None:
                r = simulate(str(path), machine=args.machine, policy=make_policy(preset, **params),
                             estimates=est)  # fmt: skip
            else:
                machine = o2k_machine(lsf[0] if lsf else None)
                r = run_month(trace, case[0], case[1], preset, params, est, machine)
            runs[name] = r
            rows.append({"case": label, "variant": name, **measures(r)})
            bar.update(1)
        if args.group == "lsf" and "FCFS" in runs:
            extra = lsf_columns(runs)
            for row in rows:
                if row["case"] == label and row["variant"] in extra:
                    row.update(extra[row["variant"]])
    bar.close()
    df = pd.DataFrame(rows)
    base = df[df["variant"] == "FCFS"].set_index("case")
    for m in ("mean_wait", "p95_wait", "max_wait", "mean_slowdown"):
        ref = df["case"].map(base[m]) if len(base) else np.nan
        df[f"{m} vs FCFS"] = [
            f"{100 * (v / b - 1):+.0f} %" if b and not math.isnan(b) else "n/a"
            for v, b in zip(df[m], ref, strict=True)
        ]
    table = md(df)
    print(table)
    print(f"{len(df)} runs: {time.process_time() - t0:.0f} CPU s", file=sys.stderr)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{args.group}.md").write_text(table + "\n")
        df.to_csv(args.out / f"{args.group}.csv", index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
