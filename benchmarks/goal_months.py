"""Many-month statistics of the local search runs of ``goal_local.py`` (issue 26, fourth attempt).

Reads the runs ``goal_local.py`` left in ``--out`` (``MONTH-NAME.pkl``, ``.json``
and ``.cpu`` for each month and variant name, and ``MONTH-fcfs.pkl``); runs
nothing.  For each month: the reference's (``--reference``, L = 64,000) mean
bounded slowdown, E^98%W_FCFS-bf and CPU (whole process, from ``os.wait4``,
and search, ``goal_search_cpu_seconds``), and each variant's ratios to it.
Over a group of months (``--groups``; the default is the declared criterion's:
the 23 calendar months of KTH-SP2 and SDSC-Par at rho = 0.9, the nine of the
goal experiment and the 14 held out): the geometric mean of each ratio with a
90 % t-interval from the months' spread of log-ratios, the CPU summed over
the months as a share of the reference's (whole process and search), the
months where both ratios are at most 1.05, and the criterion's verdict
(both geometric means <= 1.05, both CPU shares <= 10 %).

A month where the reference's measure is 0 drops out of that measure (no
ratio); a ratio of 0 (the variant's measure 0, the reference's not) cannot
enter a geometric mean and is counted in ``zero_ratios`` instead.  Runs made
before the search CPU was recorded (the second attempt's) get it estimated as
their whole-process CPU less the non-search CPU (whole - search) of the run
of the same month, among those that recorded it, nearest in whole-process CPU
(the non-search part grows with the search's effort, 1.2-1.6 s for the climbs,
1.4-2.6 s for DDS at L = 48,000-96,000); ``search_estimated`` counts them.

Usage::

    python benchmarks/goal_months.py --out /tmp/r8-local-bench \\
        --variants w-300-2k loc-1k-2k dds-48k dds-96k

writes ``OUT/months-per-month.csv`` and ``OUT/months-summary.csv`` (``--tag``
changes the ``months`` prefix) and prints both (``--markdown``: in the records
page's form).  The figures and their reading
are in docs/background/goal-local-search-23-months.md ("Fourth attempt: 23 months").
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).parent))
from goal_speed import CASES

from o2ksim.goal_metrics import comparison

OLD9 = [f"kth-{m}-tradeoff" for m in ("1996-10", "1996-11", "1996-12")] + [
    "kth-jan-tradeoff", "kth-1997-02-tradeoff", "kth-mar-tradeoff", "kth-1997-04-tradeoff",
    "sdsc-mar-tradeoff", "sdsc-apr-tradeoff"]  # fmt: skip
"""The nine calendar months of the goal experiment (the third attempt's criterion)."""
NEW14 = [f"kth-1997-0{m}-tradeoff" for m in (5, 6, 7, 8)] + [
    f"sdsc-1996-{m:02d}-tradeoff" for m in (1, 2, 5, 6, 7, 8, 9, 10, 11, 12)]  # fmt: skip
"""The traces' other calendar months, held out for the settings carried from the third attempt."""
GROUPS = {"23 months": OLD9 + NEW14, "nine old": OLD9, "14 held out": NEW14}
MEASURES = ("mean_bsld", "E_98W_fcfs_bf")


def read_run(out: Path, month: str, name: str, fcfs: pd.DataFrame) -> dict:
    """One run's measures and CPU (search CPU NaN if that run did not record it)."""
    jobs = pd.read_pickle(out / f"{month}-{name}.pkl")
    jobs = jobs.loc[jobs["analysed"]] if "analysed" in jobs else jobs
    info = json.loads((out / f"{month}-{name}.json").read_text())
    cpu = json.loads((out / f"{month}-{name}.cpu").read_text())
    return {"month": month, "variant": name, "mean_bsld": info["summary"]["mean_bounded_slowdown"],
            "E_98W_fcfs_bf": comparison(jobs, fcfs)["E_98W_fcfs_bf"], "cpu_s": float(cpu[0]),
            "search_cpu_s": float(info["stats"].get("goal_search_cpu_seconds", math.nan)),
            "numba": info["stats"].get("goal_searches_numba"),
            "python": info["stats"].get("goal_searches_python")}  # fmt: skip


def read_runs(out: Path, months: list[str], names: list[str]) -> pd.DataFrame:
    """Every (month, name) run, with the search CPU estimated where it was not recorded."""
    rows = []
    for month in months:
        fcfs = pd.read_pickle(out / f"{month}-fcfs.pkl")
        fcfs = fcfs.loc[fcfs["analysed"]] if "analysed" in fcfs else fcfs
        for name in names:
            if (out / f"{month}-{name}.cpu").exists():
                rows.append(read_run(out, month, name, fcfs))
    return fill_search_cpu(pd.DataFrame(rows))


def fill_search_cpu(d: pd.DataFrame) -> pd.DataFrame:
    """Estimate the search CPU a run did not record: its whole-process CPU less the
    non-search CPU of the same month's recorded run nearest in whole-process CPU
    (the non-search part grows with the search's effort); ``search_estimated`` marks them."""
    d = d.copy()
    d["search_estimated"] = d["search_cpu_s"].isna()
    for i in d.index[d["search_estimated"]]:
        known = d[(d["month"] == d.at[i, "month"]) & ~d["search_estimated"]]
        if len(known):
            near = (known["cpu_s"] - d.at[i, "cpu_s"]).abs().idxmin()
            rest = known.at[near, "cpu_s"] - known.at[near, "search_cpu_s"]
            d.at[i, "search_cpu_s"] = d.at[i, "cpu_s"] - rest
    return d


def per_month(d: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Each variant's ratios to the reference on each month (NaN where the reference's is 0)."""
    ref = d[d["variant"] == reference].drop(columns="variant")
    m = d[d["variant"] != reference].merge(ref, on="month", how="left", suffixes=("", "_ref"))
    for k in (*MEASURES, "cpu_s", "search_cpu_s"):
        m[f"{k}_ratio"] = m[k] / m[f"{k}_ref"].where(m[f"{k}_ref"] > 0)
    return m


def geo(r: pd.Series) -> tuple[float, float, float, int, int]:
    """Geometric mean of positive ratios, its 90 % t-interval, months used, zero ratios left out."""
    r = r.dropna()
    zeros = int((r <= 0).sum())
    lg = np.log(r[r > 0].to_numpy(float))
    n = len(lg)
    if n == 0:
        return math.nan, math.nan, math.nan, 0, zeros
    g = float(np.exp(lg.mean()))
    if n < 2:
        return g, math.nan, math.nan, n, zeros
    h = float(sps.t.ppf(0.95, n - 1) * lg.std(ddof=1) / math.sqrt(n))
    return g, float(np.exp(lg.mean() - h)), float(np.exp(lg.mean() + h)), n, zeros


def summary(m: pd.DataFrame, groups: dict[str, list[str]]) -> pd.DataFrame:
    """Per group and variant: the criterion's statistics (see the module doc)."""
    rows = []
    for gname, months in groups.items():
        for v, g in m[m["month"].isin(months)].groupby("variant", sort=False):
            row: dict = {"group": gname, "variant": v, "months": len(g)}
            for k in MEASURES:
                (row[f"{k}_gmean"], row[f"{k}_lo90"], row[f"{k}_hi90"], row[f"{k}_n"],
                 row[f"{k}_zero_ratios"]) = geo(g[f"{k}_ratio"])  # fmt: skip
            for k in ("cpu_s", "search_cpu_s"):
                row[f"{k}_share"] = float(g[k].sum() / g[f"{k}_ref"].sum())
            row["search_estimated"] = int(
                g["search_estimated"].sum() + g["search_estimated_ref"].sum()
            )
            ok = (g["mean_bsld_ratio"].fillna(0) <= 1.05) & (
                g["E_98W_fcfs_bf_ratio"].fillna(0) <= 1.05
            )
            row["within_5pct_both"] = int(ok.sum())
            row["of_them_cpu_10pct"] = int((ok & (g["cpu_s_ratio"] <= 0.10)).sum())
            row["of_them_search_10pct"] = int((ok & (g["search_cpu_s_ratio"] <= 0.10)).sum())
            row["meets"] = bool(
                row["mean_bsld_gmean"] <= 1.05
                and row["E_98W_fcfs_bf_gmean"] <= 1.05
                and row["cpu_s_share"] <= 0.10
                and row["search_cpu_s_share"] <= 0.10
            )
            rows.append(row)
    return pd.DataFrame(rows)


def _label(month: str) -> str:
    """``kth-1997-05-tradeoff`` -> ``KTH 1997-05`` (the case's trace and calendar month)."""
    trace, which, *_ = CASES[month]
    return f"{'KTH' if trace == 'KTH' else trace} {which}"


def markdown(m: pd.DataFrame, s: pd.DataFrame, held_out: list[str]) -> str:
    """The per-month and summary tables in the records page's form (ratios to the reference;
    CPU shares whole process / search; ``*``: a search CPU estimated, ``(h)``: held out)."""
    names = list(dict.fromkeys(m["variant"]))
    lines = ["| month | reference: mean bounded slowdown, E^98%W; CPU s whole / search | "
             + " | ".join(f"{v}: ratios; CPU share whole / search" for v in names) + " |",
             "|---" * (len(names) + 2) + "|"]  # fmt: skip
    for month, g in m.groupby("month", sort=False):
        r = g.iloc[0]
        star = "*" if r["search_estimated_ref"] else ""
        cells = [f"{_label(month)}{' (h)' if month in held_out else ''}",
                 f"{r['mean_bsld_ref']:.2f}, {r['E_98W_fcfs_bf_ref']:.2f}; "
                 f"{r['cpu_s_ref']:.1f} / {r['search_cpu_s_ref']:.1f}{star}"]  # fmt: skip
        for v in names:
            x = g[g["variant"] == v]
            if not len(x):
                cells.append("--")
                continue
            x = x.iloc[0]
            cells.append(f"{x['mean_bsld_ratio']:.2f}, {x['E_98W_fcfs_bf_ratio']:.2f}; "
                         f"{100 * x['cpu_s_ratio']:.1f} / {100 * x['search_cpu_s_ratio']:.1f} %"
                         + ("*" if x["search_estimated"] else ""))  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| months | search | mean bounded slowdown | E^98%W_FCFS-bf | CPU share, whole "
              "process / search | months within 5 % on both (of them at <= 10 % CPU, whole / "
              "search) | criterion |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for _, r in s.iterrows():
        q = [f"{r[f'{k}_gmean']:.3f} ({r[f'{k}_lo90']:.2f}-{r[f'{k}_hi90']:.2f})" for k in MEASURES]
        lines.append(f"| {r['group']} | {r['variant']} | {q[0]} | {q[1]} | "
                     f"{100 * r['cpu_s_share']:.1f} % / {100 * r['search_cpu_s_share']:.1f} % | "
                     f"{r['within_5pct_both']} of {r['months']} ({r['of_them_cpu_10pct']} / "
                     f"{r['of_them_search_10pct']}) | {'met' if r['meets'] else 'not met'} |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="reports/goal-local", help="the run folder of goal_local.py")
    ap.add_argument("--reference", default="dds-64k", help="the variant name the ratios are to")
    ap.add_argument(
        "--variants",
        nargs="+",
        default=["w-300-2k", "loc-1k-2k", "dds-48k", "dds-96k"],
        help="variant names (the part before '=' in goal_local.py's --variants)",
    )
    ap.add_argument(
        "--groups",
        nargs="+",
        metavar="NAME=MONTH,MONTH",
        help="month groups (default: 23 months, the nine old, the 14 held out)",
    )
    ap.add_argument("--tag", default="months", help="prefix of the CSV files written to --out")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    a = ap.parse_args()
    out = Path(a.out)
    groups = dict(g.split("=", 1) for g in a.groups) if a.groups else None
    groups = {k: v.split(",") for k, v in groups.items()} if groups else GROUPS
    months = list(dict.fromkeys(mo for ms in groups.values() for mo in ms))
    d = read_runs(out, months, [a.reference, *a.variants])
    missing = [mo for mo in months if mo not in set(d.loc[d["variant"] == a.reference, "month"])]
    if missing:
        raise SystemExit(f"{out}: no {a.reference} run for {', '.join(missing)}")
    if (d["python"].fillna(0) > 0).any():
        print(
            "warning: some searches ran in Python:",
            d.loc[d["python"] > 0, ["month", "variant"]].values,
        )
    m = per_month(d, a.reference)
    m.to_csv(out / f"{a.tag}-per-month.csv", index=False)
    s = summary(m, groups)
    s.to_csv(out / f"{a.tag}-summary.csv", index=False)
    if a.markdown:
        print(markdown(m, s, NEW14))
        return
    cols = ["month", "variant", "mean_bsld_ref", "E_98W_fcfs_bf_ref", "cpu_s_ref", "search_cpu_s_ref",
            "mean_bsld_ratio", "E_98W_fcfs_bf_ratio", "cpu_s_ratio", "search_cpu_s_ratio"]  # fmt: skip
    with pd.option_context(
        "display.width", 250, "display.max_columns", 40, "display.max_rows", 500
    ):
        print(m[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        print(s.to_string(index=False, float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    main()
