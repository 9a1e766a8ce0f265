"""Goal-oriented policies vs backfill, month by month (G§4-§6; issue 12).

Runs FCFS-backfill, LXF-backfill, Lexical(Tw -> avgX), A-Tradeoff(Tw:avgX) and
A-Tradeoff(maxW:avgX) on calendar months of archive traces, at the original
load and at rho = 0.9 (interarrival times of the month shrunk, G§4), with a
one-week warm-up and a cool-down that lasts until every job of the month has
finished; the runtimes known to the scheduler are the actual ones (G§4,
``estimates = "actual"``).  A second part varies L for Strict Lexical(Tw ->
avgX) with DDS-LXF, DDS-FCFS and LDS-LXF (G Fig. 3).

The month part is a grid -- trace month x load x runtime estimates x policy
-- whose cells are independent simulations, run by ``--workers N`` local
processes (``concurrent.futures`` with a forkserver, as o2ksim's sweeps) or on
a Dask cluster (``--scheduler tcp://HOST:8786``); the comparison measures are
computed by the coordinator against the FCFS-backfill cell of the same month,
load and estimates.  ``--estimates`` (or ``estimates`` in a ``--grid`` TOML
file such as ``benchmarks/goal_estimates.toml``) lists the runtime-estimate
scenarios of ``o2ksim run --estimates`` that every policy plans with
(default: actual, G§4).

Writes ``OUT/months.csv`` (one row per trace, month, load, estimates and policy),
``OUT/lsweep.csv``, ``OUT/classes.csv`` (Fig. 12 matrices),
``OUT/timings.csv`` (per decision point: waiting jobs, node visits, seconds)
and the figures ``fig3_lsweep.png``, ``fig11_months.png``,
``fig12_classes_TRACE_MONTH.png`` (one per trace and month at rho = 0.9).  Usage (what docs/background/goal-experiments.md records)::

    python benchmarks/goal_experiment.py --out reports/goal \\
        --months KTH:1997-01,1997-03 --months SDSC-Par:1996-03 \\
        --loads orig,0.9 --lsweep KTH:1997-01:100,400,1000,4000,16000 --lsweep-days 14
    python benchmarks/goal_experiment.py --grid benchmarks/goal_estimates.toml --out reports/goal-est
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from o2ksim.goal_metrics import class_wait_matrix, comparison, month_windows, month_workload
from o2ksim.policies import make_policy
from o2ksim.run.api import simulate
from o2ksim.run.workload import load_workload
from o2ksim.workloads.transforms import Estimates

TRACES = {
    "KTH": ("../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz", "kth-sp2", 100),
    "SDSC-Par": ("../shared/traces/SDSC-Par-1996-3.1-cln.swf.gz", "sdsc-par", 400),
}
POLICIES: dict[str, tuple[str, dict]] = {
    "FCFS-backfill": ("fcfs-backfill", {}),
    "LXF-backfill": ("lxf-backfill", {}),
    "Lexical(Tw->avgX)": ("lexical-tw-avgx", {}),
    "A-Tradeoff(Tw:avgX)": ("tradeoff-tw-avgx", {}),
    "A-Tradeoff(maxW:avgX)": ("tradeoff-maxw-avgx", {}),
}
LSWEEP_OBJECTIVES = {
    "lexical": ("Strict Lexical(Tw->avgX)", {"model": "lexical", "measures": "tw,avgx", "slack": 0.0}),
    "tradeoff": ("A-Tradeoff(Tw:avgX)", {"model": "tradeoff", "measures": "tw,avgx", "version": "A", "slack": 0.01}),
}
LSWEEP_SEARCHES = {"DDS-LXF": ("dds", "lxf"), "DDS-FCFS": ("dds", "fcfs"), "LDS-LXF": ("lds", "lxf")}


GOAL_KINDS = {"goal"}  # policies whose L (``limit``) --limit sets


def run_one(trace, machine, window, policy, params, timings_out, tag, estimates="actual", overrun=None):
    pol = make_policy(policy, **params)
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    r = simulate(trace, machine, pol, window=window, estimates=estimates, overrun=overrun)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    for n, visits, sec in getattr(pol, "timings", []):
        timings_out.append({**tag, "waiting": n, "visits": visits, "seconds": sec})
    return r, wall, cpu


def summarize(r, fcfs_jobs):
    s = r.summary
    jobs = r.jobs.loc[r.jobs["analysed"]] if "analysed" in r.jobs else r.jobs
    out = {
        "jobs": s["jobs"],
        "mean_wait_h": s["mean_wait"] / 3600,
        "max_wait_h": s["max_wait"] / 3600,
        "mean_bsld": s["mean_bounded_slowdown"],
        "max_bsld": s["max_bounded_slowdown"],
    }
    if fcfs_jobs is not None:
        out.update(comparison(jobs, fcfs_jobs))
    return out


# ------------------------------------------------------------------ the month grid as a sweep
_TRACES: dict[str, object] = {}  # per worker process: each trace read once


def run_cell(cell: dict) -> dict:
    """One cell of the month grid (trace, month, load, estimates, policy), in a worker.

    Returns the row (without the comparison to FCFS-backfill, made by the
    coordinator once the FCFS-backfill cell of the same case has arrived), the
    analysed jobs, the N x T matrix and the per-decision timings.
    """
    tname, label, rho, est, name, limit = (cell[k] for k in ("trace", "month", "load", "estimates",
                                                             "policy", "limit"))
    overrun = cell.get("overrun")  # the overrun rule, for predicted estimates only
    path, machine, procs = TRACES[tname]
    if tname not in _TRACES:
        _TRACES[tname] = load_workload(path)
    trace = _TRACES[tname]
    month = {m.label: m for m in month_windows(trace)}[label]
    sub, win, load = month_workload(trace, month, procs, None if rho == "orig" else float(rho))
    policy, params = POLICIES[name]
    if limit is not None and make_policy(policy).kind in GOAL_KINDS:
        params = {**params, "limit": int(limit)}
    timings: list[dict] = []
    shown = f"{est} (overrun {overrun})" if overrun else est  # its own rows and comparisons
    tag = {"trace": tname, "month": label, "load": rho, "estimates": shown, "policy": name}
    r, wall, cpu = run_one(sub, machine, win, policy, params, timings, tag, est, overrun)
    jobs = r.jobs.loc[r.jobs["analysed"]]
    m = class_wait_matrix(jobs, n_bounds=(procs / 16, procs / 8, procs / 4, procs / 2, math.inf))
    classes = [{**tag, "T": tl, "N": nl, "mean_wait_h": m.iloc[ti, ni]}
               for ti, tl in enumerate(m.index) for ni, nl in enumerate(m.columns)]
    row = {**tag, "L": limit if "limit" in params else None, "offered_load": load,
           **summarize(r, None), "wall_s": wall, "cpu_s": cpu}
    keep = [c for c in ("job_id", "status", "wait", "run_time", "procs", "submit") if c in jobs]
    return {"row": row, "jobs": jobs[keep].reset_index(drop=True), "classes": classes, "timings": timings}


def grid_cells(months: list[str], loads: list[str], estimates: list[str], policies: list[str],
               limit: int | None, overrun: str = "now") -> list[dict]:
    """Every cell of the grid, the goal-oriented ones first (the longest runs start first).

    ``overrun`` (o2ksim run --overrun) applies to the predicted estimates only (with the
    others it changes nothing and is refused); their rows are labelled
    ``user-recent (overrun requested)``.
    """
    raise_to_r = {est: overrun if overrun != "now" and Estimates.parse(est).predicted else None
                  for est in estimates}
    cells = [{"trace": spec.split(":")[0], "month": label, "load": rho, "estimates": est,
              "policy": name, "limit": limit, "overrun": raise_to_r[est]}
             for spec in months for label in spec.split(":")[1].split(",")
             for rho in loads for est in estimates for name in policies]
    return sorted(cells, key=lambda c: POLICIES[c["policy"]][0] in ("fcfs-backfill", "lxf-backfill"))


def run_grid(cells: list[dict], out: Path, workers: int, scheduler: str | None) -> float:
    """Run the cells over ``workers`` local processes (or a Dask scheduler); write the CSV files
    as results arrive.  Returns the wall time of the grid."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm import tqdm

    done: list[dict] = []
    started = time.perf_counter()

    def write() -> None:
        rows = []
        fcfs = {_case(d["row"]): d["jobs"] for d in done if d["row"]["policy"] == "FCFS-backfill"}
        for d in done:
            row = dict(d["row"])
            if _case(row) in fcfs:
                row.update(comparison(d["jobs"], fcfs[_case(row)]))
            rows.append(row)
        pd.DataFrame(rows).to_csv(out / "months.csv", index=False)
        pd.DataFrame([c for d in done for c in d["classes"]]).to_csv(out / "classes.csv", index=False)
        pd.DataFrame([t for d in done for t in d["timings"]]).to_csv(out / "timings.csv", index=False)

    bar = tqdm(total=len(cells), desc="goal grid", unit="run")
    if scheduler:
        from distributed import Client
        from distributed import as_completed as dask_completed

        with Client(scheduler) as client:
            for fut in dask_completed([client.submit(run_cell, c, pure=False) for c in cells]):
                done.append(fut.result())
                _report(done[-1], bar)
                write()
    elif workers <= 1:
        for c in cells:
            done.append(run_cell(c))
            _report(done[-1], bar)
            write()
    else:
        import multiprocessing

        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
            for fut in as_completed([pool.submit(run_cell, c) for c in cells]):
                done.append(fut.result())
                _report(done[-1], bar)
                write()
    bar.close()
    write()
    return time.perf_counter() - started


def _case(row: dict) -> tuple:
    return (row["trace"], row["month"], str(row["load"]), row["estimates"])


def _report(d: dict, bar) -> None:
    row = d["row"]
    bar.write(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}))
    bar.update()


def read_grid(path: Path) -> dict:
    """The grid file (TOML): months, loads, estimates, policies, limit, workers."""
    import tomllib

    try:
        grid = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"{path}: {exc}") from None
    known = {"months", "loads", "estimates", "overrun", "policies", "limit", "workers", "description"}
    for key in grid:
        if key not in known:
            raise SystemExit(f"{path}: unknown key '{key}' (known: {', '.join(sorted(known))})")
    for name in grid.get("policies", []):
        if name not in POLICIES:
            raise SystemExit(f"{path}: policies: unknown '{name}' (known: {', '.join(POLICIES)})")
    return grid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="reports/goal")
    ap.add_argument("--grid", type=Path, default=None,
                    help="TOML file of the month grid (months, loads, estimates, policies, limit, "
                    "workers); the options below override it")
    ap.add_argument("--months", action="append", default=None, help="TRACE:YYYY-MM[,YYYY-MM...]")
    ap.add_argument("--loads", default=None, help="comma list of orig and rho values (default orig,0.9)")
    ap.add_argument("--estimates", default=None,
                    help="comma list of runtime-estimate scenarios the schedulers plan with "
                    "(default actual, as G§4; see o2ksim run --estimates)")
    ap.add_argument("--overrun", default=None, choices=("now", "requested"),
                    help="overrun rule for predicted estimates (see o2ksim run --overrun; default now)")
    ap.add_argument("--limit", type=int, default=None,
                    help="L of the goal-oriented policies (default: each preset's, 4,000)")
    ap.add_argument("--workers", "-j", type=int, default=None,
                    help="local worker processes for the month grid (default 1)")
    ap.add_argument("--scheduler", default=None, help="run the month grid on this Dask scheduler")
    ap.add_argument("--lsweep", default=None, help="TRACE:YYYY-MM:L1,L2,...")
    ap.add_argument("--lsweep-days", type=float, default=None,
                    help="analyse only the first DAYS of the L-sweep month (time budget)")
    ap.add_argument("--lsweep-searches", default=",".join(LSWEEP_SEARCHES),
                    help="searches of the L sweep, run in this order at each L (smallest L first)")
    ap.add_argument("--lsweep-objective", choices=sorted(LSWEEP_OBJECTIVES), default="lexical",
                    help="objective of the L sweep: Strict Lexical(Tw -> avgX) as in G Fig. 3, "
                    "or A-Tradeoff(Tw:avgX) with relaxed slack (the tradeoff-tw-avgx preset)")
    ap.add_argument("--policies", default=None, help="comma list (default all five)")
    ap.add_argument("--collect", nargs="+", metavar="DIR", default=None,
                    help="run nothing: merge the CSV files of these earlier --out directories into --out, "
                    "draw the figures and print the month table (markdown)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.collect:
        collect([Path(d) for d in args.collect], out)
        return
    grid = read_grid(args.grid) if args.grid else {}
    months = args.months if args.months is not None else grid.get("months", [])
    loads = (args.loads.split(",") if args.loads else [str(x) for x in grid.get("loads", ["orig", 0.9])])
    estimates = (args.estimates.split(",") if args.estimates else grid.get("estimates", ["actual"]))
    wanted = args.policies.split(",") if args.policies else grid.get("policies", list(POLICIES))
    limit = args.limit if args.limit is not None else grid.get("limit")
    overrun = args.overrun or grid.get("overrun", "now")
    workers = args.workers if args.workers is not None else grid.get("workers", 1)
    for est in estimates:
        Estimates.parse(est)  # a bad name stops here, before any run
    started = time.perf_counter()
    if months:
        cells = grid_cells(months, loads, estimates, wanted, limit, overrun)
        wall = run_grid(cells, out, workers, args.scheduler)
        print(f"month grid: {len(cells)} runs, {wall:.0f} s wall, workers={workers}", flush=True)
    lrows: list[dict] = []
    timings: list[dict] = []
    if args.lsweep:
        tname, label, ls = args.lsweep.split(":")
        path, machine, procs = TRACES[tname]
        trace = load_workload(path)
        month = {m.label: m for m in month_windows(trace)}[label]
        if args.lsweep_days:
            from o2ksim.goal_metrics import Month

            month = Month(label, month.start, month.start + args.lsweep_days * 86400)
        sub, win, _ = month_workload(trace, month, procs, 0.9)
        fr, _, _ = run_one(sub, machine, win, "fcfs-backfill", {}, [], {})
        fcfs_jobs = fr.jobs.loc[fr.jobs["analysed"]]
        for L in [int(x) for x in ls.split(",")]:
            for sname in args.lsweep_searches.split(","):
                method, branching = LSWEEP_SEARCHES[sname]
                objective, objective_params = LSWEEP_OBJECTIVES[args.lsweep_objective]
                tag = {"trace": tname, "month": label, "load": 0.9, "policy": f"{objective} {sname}", "L": L}
                params = {**objective_params, "search": method, "branching": branching, "limit": L}
                r, wall, cpu = run_one(sub, machine, win, "goal", params, timings, tag)
                row = {**tag, **summarize(r, fcfs_jobs), "wall_s": wall, "cpu_s": cpu}
                lrows.append(row)
                print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}),
                      flush=True)
                pd.DataFrame(lrows).to_csv(out / "lsweep.csv", index=False)
    if timings:
        pd.DataFrame(timings).to_csv(out / "lsweep_timings.csv", index=False)
    print(f"total wall {time.perf_counter() - started:.0f} s", flush=True)
    plots(out)


def collect(dirs: list[Path], out: Path) -> None:
    """Merge the CSV files of several runs of this script, plot them and print the month table."""
    for name in ("months.csv", "lsweep.csv", "classes.csv", "timings.csv"):
        parts = [pd.read_csv(d / name) for d in dirs if (d / name).exists() and (d / name).stat().st_size > 1]
        if parts:
            pd.concat(parts, ignore_index=True).to_csv(out / name, index=False)
    plots(out)
    if (out / "months.csv").exists():
        mo = _with_estimates(pd.read_csv(out / "months.csv"))
        if mo["estimates"].nunique() > 1:
            print(estimates_table(mo))
            return
        pols = [p for p in POLICIES if p in set(mo["policy"])]
        print("| trace month, load | " + " | ".join(pols) + " |")
        print("|---" * (len(pols) + 1) + "|")
        for (tname, month, load), sel in mo.groupby(["trace", "month", "load"], sort=False):
            by = sel.set_index("policy")
            cells = [f"{by.at[p, 'max_wait_h']:.0f} / {by.at[p, 'mean_bsld']:.1f}" if p in by.index else "not run"
                     for p in pols]
            rho = "rho = 0.9" if str(load) == "0.9" else "original"
            print(f"| {tname} {month}, {rho} | " + " | ".join(cells) + " |")
    if (out / "lsweep.csv").exists():
        ls = pd.read_csv(out / "lsweep.csv").sort_values(["policy", "L"])
        print()
        print("| search | L | mean bounded slowdown | max wait (h) | E^98%W | CPU s |")
        print("|---|---|---|---|---|---|")
        for _, r in ls.iterrows():
            print(f"| {r['policy']} | {r['L']:,} | {r['mean_bsld']:.1f} | {r['max_wait_h']:.1f} | "
                  f"{r['E_98W_fcfs_bf']:.1f} | {r['cpu_s']:.0f} |")


def plots(out: Path) -> None:
    """Figs. 3, 11 and 12 of the paper from the CSV files in ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if (out / "lsweep.csv").exists():
        ls = pd.read_csv(out / "lsweep.csv")
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
        for (pol, part) in ls.groupby("policy"):
            part = part.sort_values("L")
            for ax, col in zip(axes, ["mean_bsld", "max_wait_h", "E_98W_fcfs_bf"], strict=True):
                ax.plot(part["L"], part[col], marker="o", label=pol)
        for ax, t in zip(axes, ["(a) average bounded slowdown", "(b) maximum wait (h)",
                                "(c) total E^98%W_FCFS-bf"], strict=True):
            ax.set_xscale("log")
            ax.set_xlabel("L")
            ax.set_title(t)
        axes[0].legend(fontsize=7)
        month = ", ".join(dict.fromkeys(ls["trace"] + " " + ls["month"]))
        fig.suptitle(f"Goal-oriented search vs L on {month} (cf. G Fig. 3), rho = 0.9")
        fig.tight_layout()
        fig.savefig(out / "fig3_lsweep.png", dpi=110)
        plt.close(fig)
    if (out / "months.csv").exists():
        mo = _with_estimates(pd.read_csv(out / "months.csv"))
        mo["case"] = mo["trace"] + " " + mo["month"] + " rho=" + mo["load"].astype(str)
        if mo["estimates"].nunique() > 1:
            mo["case"] = mo["case"] + " " + mo["estimates"]
        cols = ["max_wait_h", "E_maxW_fcfs_bf", "mean_bsld", "max_bsld"]
        fig, axes = plt.subplots(1, 4, figsize=(17, 4))
        cases = list(dict.fromkeys(mo["case"]))
        pols = list(dict.fromkeys(mo["policy"]))
        width = 0.8 / len(pols)
        for ax, col in zip(axes, cols, strict=True):
            for k, pol in enumerate(pols):
                part = mo.loc[mo["policy"] == pol].set_index("case").reindex(cases)
                ax.bar(np.arange(len(cases)) + k * width, part[col], width, label=pol)
            ax.set_xticks(np.arange(len(cases)) + 0.4 - width / 2, cases, rotation=30, ha="right", fontsize=7)
            ax.set_title(col)
        axes[0].legend(fontsize=7)
        fig.suptitle("Goal-oriented vs backfill policies per month (cf. G Fig. 11), L = 4,000")
        fig.tight_layout()
        fig.savefig(out / "fig11_months.png", dpi=110)
        plt.close(fig)
    if (out / "classes.csv").exists() and (out / "classes.csv").stat().st_size > 1:
        cl = _with_estimates(pd.read_csv(out / "classes.csv"))
        at_09 = cl.loc[cl["load"].astype(str) == "0.9"]
        for (tname, month, est), sel in at_09.groupby(["trace", "month", "estimates"], sort=False):
            name = f"{tname}_{month}" if est == "actual" else f"{tname}_{month}_{est}"
            _fig12(plt, sel, out / f"fig12_classes_{name}.png", f"{tname} {month}, estimates {est}")


def _with_estimates(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of runs made before the estimates column existed planned with actual runtimes."""
    if "estimates" not in frame:
        frame = frame.assign(estimates="actual")
    return frame.assign(estimates=frame["estimates"].fillna("actual"))


def estimates_table(mo: pd.DataFrame) -> str:
    """Markdown: per trace month and load, each estimate kind x policy in the paper's views."""
    mo = _with_estimates(mo)
    est_rank = {e: k for k, e in enumerate(dict.fromkeys(
        ["actual", "requested", "scenario-a", "scenario-b", *mo["estimates"]]))}
    pol_rank = {p: k for k, p in enumerate(POLICIES)}
    mo = mo.assign(_e=mo["estimates"].map(est_rank), _p=mo["policy"].map(pol_rank)).sort_values(["_e", "_p"])
    lines = []
    for (tname, month, load), sel in mo.groupby(["trace", "month", "load"], sort=False):
        pols = list(dict.fromkeys(sel["policy"]))
        lines += ["", f"**{tname} {month}, load {load}**: mean bounded slowdown / max wait (h) / "
                  "total E^maxW_FCFS-bf", "", "| estimates | " + " | ".join(pols) + " |",
                  "|---" * (len(pols) + 1) + "|"]
        for est, part in sel.groupby("estimates", sort=False):
            by = part.set_index("policy")
            lines.append(f"| {est} | " + " | ".join(
                f"{by.at[p, 'mean_bsld']:.1f} / {by.at[p, 'max_wait_h']:.0f} / {by.at[p, 'E_maxW_fcfs_bf']:.2f}"
                if p in by.index else "not run" for p in pols) + " |")
        lines += ["", f"**{tname} {month}, load {load}** -- {int(sel['jobs'].iloc[0])} jobs", "",
                  "| estimates | policy | mean bounded slowdown | max wait (h) | mean wait (h) | "
                  "total E^maxW_FCFS-bf (jobs above) | total E^98%W_FCFS-bf (jobs above) | CPU s |",
                  "|---|---|---|---|---|---|---|---|"]
        for _, r in sel.iterrows():
            lines.append(
                f"| {r['estimates']} | {r['policy']} | {r['mean_bsld']:.2f} | {r['max_wait_h']:.1f} | "
                f"{r['mean_wait_h']:.2f} | {r['E_maxW_fcfs_bf']:.2f} ({int(r['jobs_over_maxW_fcfs_bf'])}) | "
                f"{r['E_98W_fcfs_bf']:.1f} ({int(r['jobs_over_98W_fcfs_bf'])}) | {r['cpu_s']:.1f} |")
    return "\n".join(lines)


def _fig12(plt, sel: pd.DataFrame, path: Path, title: str) -> None:
    """One G Fig. 12 panel row: average wait per N x T class for up to four policies."""
    pols = [p for p in POLICIES if p in set(sel["policy"])]
    pols = [p for p in pols if p != "Lexical(Tw->avgX)"][:4] if len(pols) > 4 else pols
    if not pols:
        return
    fig, axes = plt.subplots(1, len(pols), figsize=(4.2 * len(pols), 3.8))
    axes = np.atleast_1d(axes)
    for ax, pol in zip(axes, pols, strict=True):
        m = sel.loc[sel["policy"] == pol].pivot(index="T", columns="N", values="mean_wait_h")
        m = m.reindex(index=list(dict.fromkeys(sel["T"])), columns=list(dict.fromkeys(sel["N"])))
        im = ax.imshow(m.to_numpy(float), cmap="viridis", vmin=0)
        ax.set_xticks(range(len(m.columns)), m.columns, fontsize=7)
        ax.set_yticks(range(len(m.index)), m.index, fontsize=7)
        for (i, j), v in np.ndenumerate(m.to_numpy(float)):
            if not np.isnan(v):
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", color="w", fontsize=7)
        ax.set_title(pol, fontsize=9)
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="mean wait (h)")
    fig.suptitle(f"Average wait per N x T class, {title}, rho = 0.9 (cf. G Fig. 12)")
    fig.savefig(path, dpi=110)
    plt.close(fig)

if __name__ == "__main__":
    main()
