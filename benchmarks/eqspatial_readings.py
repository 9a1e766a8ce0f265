"""EQspatial's open readings, one at a time, on the thesis's six months (thesis §3.2.3, §6.1).

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/eqspatial_readings.py --out /tmp/eqr
    PYTHONPATH=. .venv/bin/python benchmarks/eqspatial_readings.py --months 2000-02 --seeds 1 \
        --variants "EQ-5m" "EQ-5m new=immediate"

Each (month, seed) is one generated thesis month (``generate("o2k", span=37 d,
seed, params=MONTH)``) with the protocol of ``benchmarks/eqspatial_vs_lxfw.py``
(a week of warm-up, 30 days analysed, one 30-day cool-down chunk).  Every
variant names the readings it changes; a name without ``new=immediate`` runs
``new_job_service = wait`` (o2ksim's reading before issue 23; ``immediate`` is
the default now)
(``docs/background/fidelity/eqspatial.md`` says which sentence each reading
comes from).  Per run: mean wait, 95th-percentile wait of jobs over a minute,
maximum wait, mean slowdown (and of jobs under a minute), the share of jobs
placed on a host on arrival, and the trials given.  Rows go to ``runs.csv``
(appended as they finish, so a long run can be read while it goes on); the
claims of §6.1 are then printed per month and seed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from o2ksim import simulate
from o2ksim.machine import load_machine
from o2ksim.workloads.cooldown import append_tail, cooldown_chunk
from o2ksim.workloads.models import generate
from o2ksim.workloads.transforms import Window

H = 3600.0
DAY = 86400.0
MONTHS = ["1999-10", "1999-11", "1999-12", "2000-01", "2000-02", "2000-03"]
IMM = {"new_job_service": "immediate"}
WAIT = {"new_job_service": "wait"}  # the default before issue 23
DEDUCT = {"long_job_placement": "deduct"}
WHOLE = {"long_job_grant": "whole"}
WORK = {"long_job_clock": "work"}
VARIANTS: dict[str, tuple[str, dict]] = {
    "LXF&W-bf+IS": ("lxfw-backfill-immediate", {}),
    "EQ-0m": ("eqspatial-0m", {}),
    "EQ-5m": ("eqspatial-5m", WAIT),
    "EQ-5m new=immediate": ("eqspatial-5m", IMM),
    "EQ-5m/>50hr": ("eqspatial-5m-50hr", WAIT),
    "EQ-5m/>50hr new=immediate": ("eqspatial-5m-50hr", IMM),
    "EQ-5m/>50hr long=deduct": ("eqspatial-5m-50hr", {**WAIT, **DEDUCT}),
    "EQ-5m/>50hr new=immediate long=deduct": ("eqspatial-5m-50hr", {**IMM, **DEDUCT}),
    "EQ-5m/>50hr new=immediate grant=whole": ("eqspatial-5m-50hr", {**IMM, **WHOLE}),
    "EQ-5m/>50hr new=immediate grant=whole long=deduct": ("eqspatial-5m-50hr", {**IMM, **WHOLE, **DEDUCT}),
    "EQ-5m/>50hr new=immediate clock=work": ("eqspatial-5m-50hr", {**IMM, **WORK}),
    "EQ-5m/>50hr new=immediate clock=work long=deduct": ("eqspatial-5m-50hr", {**IMM, **WORK, **DEDUCT}),
}


def measure(jobs: pd.DataFrame, summary: dict) -> dict:
    j = jobs.loc[jobs["analysed"] & jobs["status"].isin(("completed", "killed"))]
    over = j.loc[j["run_time"] > 60, "wait"]
    n = int(jobs["analysed"].sum())
    return {
        "mean_wait_h": float(j["wait"].mean()) / H,
        "p95_wait_over_1min_h": float(np.percentile(over, 95)) / H if len(over) else np.nan,
        "max_wait_h": float(j["wait"].max()) / H,
        "mean_slowdown": float(j["slowdown"].mean()),
        "slowdown_under_1min": float(j.loc[j["run_time"] <= 60, "slowdown"].mean()),
        "placed_share": summary.get("placed_on_arrival", np.nan) / max(n, 1),
        "trials": summary.get("immediate_service_jobs", 0),
        "new_job_trials": summary.get("new_job_trials", 0),
        "long_jobs": summary.get("long_jobs", 0),
    }


def _get(v: pd.DataFrame, name: str, col: str) -> float:
    return float(v.loc[name, col]) if name in v.index else np.nan


def claims(df: pd.DataFrame) -> pd.DataFrame:
    """The §6.1 claims per month and seed, from one row per (month, seed, variant)."""
    rows = []
    for (month, seed), g in df.groupby(["month", "seed"], sort=True):
        v = g.set_index("variant")

        def get(name: str, col: str, v: pd.DataFrame = v) -> float:
            return _get(v, name, col)

        row = {"month": month, "seed": seed}
        lx_sd, lx_w = get("LXF&W-bf+IS", "mean_slowdown"), get("LXF&W-bf+IS", "mean_wait_h")
        for name in v.index:
            if name == "LXF&W-bf+IS":
                continue
            row[f"{name}: slowdown vs LXF&W+IS %"] = 100 * (get(name, "mean_slowdown") / lx_sd - 1)
            row[f"{name}: mean wait vs LXF&W+IS %"] = 100 * (get(name, "mean_wait_h") / lx_w - 1)
        rows.append(row)
    return pd.DataFrame(rows)


def _pct(a: float, b: float) -> str:
    return f"{100 * (a / b - 1):+.0f} %"


def markdown(df: pd.DataFrame) -> str:
    """The two tables of ``docs/background/fidelity/eqspatial.md`` from ``runs.csv`` rows."""
    out = ["| month | seed | slowdown LXF&W+IS / EQ-0m / EQ-5m / EQ-5m imm. | EQ-5m vs LXF&W+IS (wait -> imm.) "
           "| EQ-5m / EQ-0m slowdown (wait -> imm.) | mean wait vs LXF&W+IS (wait -> imm.) "
           "| 95th wait >1 min, h: LXF&W+IS / EQ-5m imm. | placed on arrival % (wait / imm.) |",
           "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for (month, seed), g in df.groupby(["month", "seed"], sort=True):
        v = g.set_index("variant")
        need = ("LXF&W-bf+IS", "EQ-0m", "EQ-5m", "EQ-5m new=immediate")
        if not set(need) <= set(v.index):
            continue  # not run (yet)
        lx, z, w, i = (v.loc[k] for k in need)
        out.append(
            f"| {month} | {seed} | {lx.mean_slowdown:.2f} / {z.mean_slowdown:.2f} / {w.mean_slowdown:.2f} / "
            f"{i.mean_slowdown:.2f} | {_pct(w.mean_slowdown, lx.mean_slowdown)} -> "
            f"{_pct(i.mean_slowdown, lx.mean_slowdown)} | {w.mean_slowdown / z.mean_slowdown:.2f}x -> "
            f"{i.mean_slowdown / z.mean_slowdown:.2f}x | {_pct(w.mean_wait_h, lx.mean_wait_h)} -> "
            f"{_pct(i.mean_wait_h, lx.mean_wait_h)} | {lx.p95_wait_over_1min_h:.2f} / "
            f"{i.p95_wait_over_1min_h:.2f} | {100 * w.placed_share:.1f} / {100 * i.placed_share:.1f} |"
        )
    long = [k for k in VARIANTS if k.startswith("EQ-5m/>50hr") and k in set(df["variant"])]
    out += ["", "| month | seed | " + " | ".join(long) + " |", "|---|---|" + "---|" * len(long)]
    for (month, seed), g in df.groupby(["month", "seed"], sort=True):
        v = g.set_index("variant")
        cells = []
        for k in long:
            if k not in v.index:
                cells.append("–")
                continue
            base_name = "EQ-5m new=immediate" if "immediate" in k else "EQ-5m"
            if base_name not in v.index:
                cells.append("–")
                continue
            base = v.loc[base_name]
            x = v.loc[k]
            cells.append(f"{_pct(x.mean_wait_h, base.mean_wait_h)}, {x.mean_slowdown / base.mean_slowdown:.2f}x, "
                         f"{x.max_wait_h:.0f} / {base.max_wait_h:.0f} h")  # fmt: skip
        out.append(f"| {month} | {seed} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--months", nargs="+", default=MONTHS)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--out", type=Path, default=Path("eqspatial-readings"))
    ap.add_argument("--tables", action="store_true", help="only print the Markdown tables of OUT/runs.csv")
    args = ap.parse_args()
    if args.tables:
        print(markdown(pd.read_csv(args.out / "runs.csv")))
        return
    machine = load_machine("o2k")
    window = Window(7 * DAY, 37 * DAY, 7 * DAY)
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / "runs.csv"
    rows = []
    todo = [(m, s, v) for m in args.months for s in args.seeds for v in args.variants]
    trace_key, trace = None, None
    for month, seed, variant in tqdm(todo, desc="runs"):
        if trace_key != (month, seed):
            trace = generate("o2k", span=37 * DAY, seed=seed, params=month)
            trace = append_tail(trace, "o2k", after=window.end, seed=seed, params=month, chunks=1,
                                chunk_length=cooldown_chunk(window))  # fmt: skip
            trace_key = (month, seed)
        policy, params = VARIANTS[variant]
        t0 = time.perf_counter()
        r = simulate(trace, machine=machine, policy=policy, policy_params=params, window=window)
        row = {"month": month, "seed": seed, "variant": variant, **measure(r.jobs, r.summary),
               "wall_s": time.perf_counter() - t0}  # fmt: skip
        rows.append(row)
        pd.DataFrame([row]).to_csv(csv, mode="a", header=not csv.exists(), index=False)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.max_columns", 40, "display.precision", 2):
        print(df.drop(columns=["wall_s"]).to_string(index=False))
        print(claims(df).to_string(index=False))


if __name__ == "__main__":
    main()
