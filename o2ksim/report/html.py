"""``o2ksim report``: one self-contained HTML page from a results directory.

The page answers "which policy should we run?" the way the thesis does
(T§3.5, T§5.2): a ranking table of the overall measures, then the detailed
views -- overall mean / 95th-percentile / maximum wait and mean slowdown per
policy; average, 95th-percentile and maximum wait and average slowdown versus
actual runtime in the thesis's runtime groups (Fig. 4, Figs. 49-50); wait
versus requested processors and memory; utilisation over time -- followed by
every run, the failed runs with their errors, the scenario text and the
versions.  Figures are PNG files embedded as base64, so the page can be
mailed or archived alone; the PNGs and the tables (CSV) are also written next
to it.

Panels: whatever the sweep varies besides the policy (months = seeds, loads,
estimate scenarios) gets one panel per level, in every figure.  With more than
``MAX_PANELS`` combinations the seeds are pooled (the jobs of all seeds
together); beyond that only the first ``MAX_PANELS`` are drawn, and the page
says so next to every figure concerned.

The page is a list of *sections* (:data:`SECTIONS`): each is a function
``section(ctx) -> str`` returning an HTML fragment (or ``""``) from a
:class:`PageContext`.  Another module adds its own page section with
``SECTIONS.insert(i, my_section)`` or :func:`add_section` -- the report itself
needs no other change.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from o2ksim.experiments.store import Results, load_results
from o2ksim.report import data, partitioning_view

MAX_PANELS = 6
MAX_UTIL_PANELS = MAX_PANELS  # every figure draws every panel it has
HOUR = 3600.0


@dataclass
class Gathered:
    """Tidy frames behind every figure, with the panel each row belongs to."""

    table: pd.DataFrame
    policies: list[str]
    panels: list[str]
    panel_cols: list[str]
    pooled_seeds: bool
    truncated: int
    runtime: pd.DataFrame
    p95: pd.DataFrame
    procs: pd.DataFrame
    mem: pd.DataFrame
    util: pd.DataFrame
    window: tuple[float, float] | None
    notes: list[str] = field(default_factory=list)
    lsf_classes: pd.DataFrame = field(default_factory=pd.DataFrame)
    classes: pd.DataFrame = field(default_factory=pd.DataFrame)
    level_cols: list[str] = field(default_factory=list)
    short_panels: dict[str, str] = field(default_factory=dict)
    partitioning: pd.DataFrame = field(default_factory=pd.DataFrame)


def _level(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, str) and os.sep in v:
        return Path(v).name
    return str(v)


def _panel_label(row: pd.Series, cols: list[str]) -> str:
    return ", ".join(f"{c.rsplit('.', 1)[-1]} {_level(row[c])}" for c in cols)


def gather(results: Results, max_panels: int = MAX_PANELS) -> Gathered:
    """Load the finished runs' jobs and compute every table the figures draw."""
    ok = results.ok.copy()
    policies = list(dict.fromkeys(r["factors"]["policy"] for r in results.runs))
    policies = [p for p in policies if p in set(ok["policy"])]
    factor_cols = [f for f in results.factors if f != "policy" and f in ok]
    vary = [f for f in factor_cols if ok[f].astype(str).nunique() > 1]
    notes: list[str] = []
    pooled = False
    combos = ok[vary].astype(str).drop_duplicates() if vary else pd.DataFrame(index=[0])
    if len(combos) > max_panels and "seed" in vary:
        vary = [f for f in vary if f != "seed"]
        pooled = True
        notes.append("Seeds are pooled: each panel shows the jobs of every seed together.")
    ok["panel"] = [_panel_label(r, vary) for _, r in ok.iterrows()] if vary else ""
    short = {
        _panel_label(r, vary): ", ".join(_level(r[c]) for c in vary) for _, r in ok.iterrows()
    } if vary else {}  # fmt: skip
    panels = list(dict.fromkeys(ok.sort_values("index")["panel"]))
    truncated = max(0, len(panels) - max_panels)
    if truncated:
        notes.append(f"Only the first {max_panels} of {len(panels)} panels are drawn.")
        panels = panels[:max_panels]

    rt, p95, procs, mem, classes = [], [], [], [], []
    on_o2k = True
    by_policy: dict[str, list[pd.DataFrame]] = {}
    for (panel, pol), grp in ok.loc[ok["panel"].isin(panels)].groupby(
        ["panel", "policy"], sort=False
    ):
        jobs = pd.concat([results.jobs(rid) for rid in grp["run_id"]], ignore_index=True)
        by_policy.setdefault(pol, []).append(jobs)
        for out, frame in (
            (rt, data.runtime_groups(jobs)),
            (p95, data.p95_points(jobs)),
            (procs, data.size_groups(jobs, "procs")),
            (mem, data.size_groups(jobs, "mem")),
        ):
            if len(frame):
                out.append(frame.assign(panel=panel, policy=pol))
        on_o2k = on_o2k and _on_o2k_hosts(jobs)
        if on_o2k:
            classes.append(data.class_groups(jobs).assign(panel=panel, policy=pol))

    lsf_classes = _lsf_classes(by_policy)
    util, window = _utilisation(results, ok, panels[:MAX_UTIL_PANELS], pooled)
    if pooled and len(util):
        notes.append("Utilisation over time shows the lowest seed of each panel.")
    return Gathered(
        table=ok,
        policies=policies,
        panels=panels,
        panel_cols=vary,
        pooled_seeds=pooled,
        truncated=truncated,
        runtime=_concat(rt),
        p95=_concat(p95),
        procs=_concat(procs),
        mem=_concat(mem),
        util=util,
        window=window,
        notes=notes,
        lsf_classes=lsf_classes,
        classes=_concat(classes) if on_o2k else pd.DataFrame(),
        level_cols=[f for f in vary if f != "seed"],
        short_panels=short,
        partitioning=partitioning_view.partitioning_table(by_policy),
    )


def _on_o2k_hosts(jobs: pd.DataFrame) -> bool:
    """Whether every job ran on a host of ``hosts/o2k.toml`` (where the LSF classes are defined)."""
    from o2ksim.machine import load_machine

    names = {h.name for h in load_machine("o2k").hosts}
    hosts = set(jobs["host"].dropna())
    return bool(hosts) and hosts <= names


def _lsf_classes(by_policy: dict[str, list[pd.DataFrame]]) -> pd.DataFrame:
    """Mean and maximum wait (hours) per NCSA-LSF* job class and policy (thesis Figs. 5-6).

    Drawn only for runs on the O2K hosts, where the LSF classes are defined
    (``hosts/o2k.toml``); empty otherwise.
    """
    from o2ksim.analysis.lsf_classes import lsf_class_table
    from o2ksim.machine import load_machine

    o2k = load_machine("o2k")
    names = {h.name for h in o2k.hosts}
    columns = {}
    for pol, frames in by_policy.items():
        jobs = pd.concat(frames, ignore_index=True)
        hosts = set(jobs["host"].dropna())
        if not hosts or not hosts <= names:
            return pd.DataFrame()
        t = lsf_class_table(jobs, o2k).set_index("class")
        columns[f"{pol} jobs"] = t["jobs"]
        columns[f"{pol} mean wait (h)"] = t["mean_wait"] / HOUR
        columns[f"{pol} max wait (h)"] = t["max_wait"] / HOUR
    if not columns:
        return pd.DataFrame()
    return pd.DataFrame(columns).reset_index()


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _utilisation(
    results: Results, ok: pd.DataFrame, panels: list[str], pooled: bool
) -> tuple[pd.DataFrame, tuple[float, float] | None]:
    frames = []
    window = None
    for (panel, pol), grp in ok.loc[ok["panel"].isin(panels)].groupby(
        ["panel", "policy"], sort=False
    ):
        first = grp.sort_values(["seed", "index"] if "seed" in grp else ["index"]).iloc[0]
        segs = results.segments(first["run_id"])
        if segs is None or segs.empty:
            continue
        info = results.run_summary(first["run_id"]).get("info", {})
        total = info.get("total_procs") or first.get("total_procs")
        win = info.get("window")
        if win:
            start, end, warmup = (float(x) for x in win)
            t0 = max(0.0, start - warmup)
            t1 = min(float(info.get("sim_end") or end), end + 0.25 * (end - start))
            t1 = max(t1, end)
            window = (start, end)
        else:
            t0 = float(segs["start"].min())
            t1 = float(segs["end"].max())
        if not total or t1 <= t0:
            continue
        span = t1 - t0
        width = 86400.0 if span >= 7 * 86400 else (3600.0 if span >= 12 * 3600 else span / 100)
        bins = max(1, math.floor(span / width))
        series = data.utilisation_series(segs, int(total), t0, t0 + bins * width, bins)
        frames.append(series.assign(panel=panel, policy=pol))
    return _concat(frames), window


# ------------------------------------------------------------------------------------ figures
FIGURES = (
    (
        "overall",
        "Overall mean, 95th-percentile and maximum wait and mean slowdown per policy "
        "(as T Fig. 60). With several runs per bar the bar is their mean and the line a 95% "
        "confidence interval.",
    ),
    (
        "wait_vs_runtime",
        "Average wait versus actual runtime (T§3.5 Fig. 4(a); T Fig. 49): the "
        "jobs are split into eleven runtime groups bounded by 10^i minutes, i = -1, -0.5, ..., 4; "
        "each group is drawn at the geometric mean of its runtimes.",
    ),
    (
        "p95_vs_runtime",
        "95th-percentile wait versus actual runtime (T§3.5 Fig. 4(b); "
        "T Fig. 50(a)-(b)): the top 5% of the waits are removed, then the three largest remaining "
        "waits in each of six runtime ranges (bounds 1, 10, 100, 1000, 10^3.5, 10^4 minutes) are "
        "drawn at the runtimes where they occur.",
    ),
    (
        "max_vs_runtime",
        "Maximum wait versus actual runtime (T§3.5 Fig. 4(c); T Fig. 50(e)-(h)), "
        "drawn at the runtime of the job that waited longest in each group.",
    ),
    (
        "slowdown_vs_runtime",
        "Average slowdown versus actual runtime (T§3.5 Fig. 4(d); T Fig. 50(c)-(d)); log scale.",
    ),
    (
        "wait_vs_procs",
        "Average and maximum wait versus requested processors (T§5.3.3 Fig. 59(e)-(f)).",
    ),
    (
        "wait_vs_mem",
        "Average and maximum wait versus requested memory (T§5.3.3 Fig. 59(g)-(h)); "
        "jobs without a memory request are left out.",
    ),
    (
        "class_mean_wait",
        "Average wait per NCSA-LSF* job class, every policy (as T§3.6 Fig. 5): time class "
        "(s, m, l: requested runtime) and size class (sj, mj, lj: processors and memory), "
        "thesis Table 3.",
    ),
    (
        "class_max_wait",
        "Maximum wait per NCSA-LSF* job class, every policy (as T§3.6 Fig. 6).",
    ),
    (
        "class_slowdown",
        "Average slowdown per NCSA-LSF* job class, every policy; log scale.",
    ),
    (
        "utilisation",
        "Fraction of the machine's processors in use over time (0 to 1); the analysis "
        "window is shaded (the warm-up is before it).",
    ),
)
"""Every figure of the page in order: file name and caption."""


def make_figures(g: Gathered, fig_dir: Path) -> dict[str, Path]:
    """Draw every figure that has data; returns name -> PNG path.

    Every figure draws every panel in ``g.panels``: none is dropped silently.
    """
    from o2ksim.report import figures as F

    fig_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}

    def keep(name: str, fig: Any) -> None:
        path = fig_dir / f"{name}.png"
        F.save(fig, str(path))
        out[name] = path

    with F.report_style():
        x = "level" if g.panel_cols else None
        tab = g.table.loc[g.table["panel"].isin(g.panels)] if g.panels else g.table
        if len(tab):
            tab = tab.assign(level=[g.short_panels.get(p, p) for p in tab["panel"]])
            xlabel = ", ".join(c.rsplit(".", 1)[-1] for c in g.panel_cols)
            keep("overall", F.overall_figure(tab, g.policies, x, xlabel))
        if len(g.runtime):
            keep("wait_vs_runtime", F.runtime_figure(g.runtime, g.policies, g.panels, "mean_wait"))
        if len(g.p95):
            keep("p95_vs_runtime", F.p95_figure(g.p95, g.policies, g.panels))
        if len(g.runtime):
            keep("max_vs_runtime", F.runtime_figure(g.runtime, g.policies, g.panels, "max_wait"))
            if g.runtime["mean_slowdown"].notna().any():
                keep(
                    "slowdown_vs_runtime",
                    F.runtime_figure(g.runtime, g.policies, g.panels, "mean_slowdown"),
                )
        if len(g.procs):
            keep("wait_vs_procs", F.size_figure(g.procs, g.policies, g.panels, "procs"))
        if len(g.mem):
            keep("wait_vs_mem", F.size_figure(g.mem, g.policies, g.panels, "mem"))
        if len(g.classes):
            keep("class_mean_wait", F.class_figure(g.classes, g.policies, g.panels, "mean_wait"))
            keep("class_max_wait", F.class_figure(g.classes, g.policies, g.panels, "max_wait"))
            if g.classes["mean_slowdown"].notna().any():
                keep(
                    "class_slowdown",
                    F.class_figure(g.classes, g.policies, g.panels, "mean_slowdown"),
                )
        if len(g.util):
            util_panels = list(dict.fromkeys(g.util["panel"]))
            keep("utilisation", F.utilisation_figure(g.util, g.policies, util_panels, g.window))
    return out


# ------------------------------------------------------------------------------------ tables
def ranking(g: Gathered, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per policy: runs and the mean over its runs of each overall measure (waits in hours).

    ``table``: the runs to rank (default: all finished runs).  See
    :func:`rankings` for one ranking per factor level.
    """
    t = g.table if table is None else table
    rows = []
    for pol in g.policies:
        part = t.loc[t["policy"] == pol]
        if part.empty:
            continue
        rows.append(
            {
                "policy": pol,
                "runs": len(part),
                "mean wait (h)": part["mean_wait"].mean() / HOUR,
                "95th wait (h)": part["p95_wait"].mean() / HOUR,
                "max wait (h)": part["max_wait"].mean() / HOUR,
                "mean slowdown": part["mean_slowdown"].mean(),
                "mean bounded slowdown": part["mean_bounded_slowdown"].mean(),
                "utilisation (fraction)": part["utilisation"].mean(),
            }
        )
    return pd.DataFrame(rows)


def rankings(g: Gathered) -> list[tuple[str, pd.DataFrame]]:
    """One ranking per level of the factors the sweep varies (seeds are averaged).

    A policy that wins at light load may lose at heavy load: averaging over
    the levels would hide that, so each level gets its own table.  Returns
    ``(level label, ranking)`` pairs; one pair with label ``""`` without factors.
    """
    if not g.level_cols or len(g.table) == 0:
        return [("", ranking(g))]
    t = g.table
    keys = t[g.level_cols].astype(str).agg(" | ".join, axis=1)
    out = []
    for key in dict.fromkeys(keys.loc[t.sort_values("index").index]):
        part = t.loc[keys == key]
        label = ", ".join(
            f"{c.rsplit('.', 1)[-1]} {_level(part[c].iloc[0])}" for c in g.level_cols
        )
        out.append((label, ranking(g, part)))
    return out


LOWER_IS_BETTER = (
    "mean wait (h)",
    "95th wait (h)",
    "max wait (h)",
    "mean slowdown",
    "mean bounded slowdown",
)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.3f}" if abs(v) < 1 else f"{v:.2f}"
    return html.escape(_level(v))


def _html_table(df: pd.DataFrame, best: dict[str, Any] | None = None, cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for _, row in df.iterrows():
        cells = []
        for c in df.columns:
            v = row[c]
            text = _fmt(v.item() if hasattr(v, "item") else v)
            mark = best is not None and c in best and v == best[c]
            num = isinstance(v, int | float) and not isinstance(v, bool)
            cells.append(f"<td class='{'num' if num else ''}{' best' if mark else ''}'>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def verdict(rank: pd.DataFrame) -> list[str]:
    """Sentences naming the best policy for each overall measure (from the ranking table)."""
    out = []
    if len(rank) < 2:
        return out
    for col in LOWER_IS_BETTER[:4]:
        vals = rank[col]
        if not vals.notna().any():
            continue
        best = float(vals.min())
        tied = [
            i for i in vals.index if math.isclose(float(vals[i]), best, rel_tol=1e-9, abs_tol=1e-12)
        ]
        names = " and ".join(f"<b>{html.escape(str(rank['policy'][i]))}</b>" for i in tied)
        unit = " h" if "(h)" in col else ""
        others = vals.drop(tied).dropna()
        if others.empty:
            gap = ", all tied" if len(tied) > 1 else ""
        elif others.min() > 0:
            gap = f", {100 * (1 - best / others.min()):.0f}% below the next best"
        else:
            gap = ""
        if len(tied) > 1 and not others.empty:
            gap = ", tied" + gap
        out.append(f"Lowest {col.replace(' (h)', '')}: {names} ({_fmt(best)}{unit}{gap}).")
    return out


def runs_table(results: Results) -> pd.DataFrame:
    """Every planned run with its factor levels, status and measures (waits in hours)."""
    t = results.table
    cols = [c for c in results.factors if c in t]
    out = t[["run_id", *cols, "status"]].copy()
    out["jobs"] = t["jobs"]
    for k, name in (
        ("mean_wait", "mean wait (h)"),
        ("p95_wait", "95th wait (h)"),
        ("max_wait", "max wait (h)"),
    ):
        out[name] = t[k] / HOUR
    out["mean slowdown"] = t["mean_slowdown"]
    out["utilisation (fraction)"] = t["utilisation"]
    out["wall (s)"] = t["wall_seconds"]
    return out


# ------------------------------------------------------------------------------------ page
CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 0;
       color: #1d2733; background: #f6f7f9; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 1.7em; margin: 0.2em 0; } h2 { margin-top: 2em; border-bottom: 2px solid #e3e7ec;
     padding-bottom: 4px; font-size: 1.3em; } h3 { font-size: 1.05em; margin-bottom: 0.3em; }
.meta { color: #5b6775; font-size: 0.92em; } .note { color: #8a5a00; }
table { border-collapse: collapse; font-size: 0.88em; margin: 8px 0 16px; }
th, td { border: 1px solid #dde2e8; padding: 4px 8px; } th { background: #eef1f5; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { background: #dff3e4; font-weight: 600; }
figure { margin: 18px 0 28px; } figure img { max-width: 100%; border: 1px solid #eceff3; }
figcaption { color: #4b5663; font-size: 0.9em; margin-top: 6px; max-width: 60em; }
pre { background: #f3f5f8; padding: 10px 14px; overflow-x: auto; font-size: 0.85em; }
.runs { font-size: 0.8em; } .failed { color: #b00020; }
nav a { margin-right: 14px; font-size: 0.92em; }
"""


@dataclass
class PageContext:
    """What a page section may use: the results, the gathered tables and the drawn figures."""

    results: Results
    g: Gathered
    figs: dict[str, Path]
    out_dir: Path | None = None


def _figure_html(name: str, path: Path, caption: str) -> str:
    esc = html.escape
    b64 = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f"<figure id='fig-{esc(name)}'><img alt='{esc(name)}' src='data:image/png;base64,{b64}'>"
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def section_header(ctx: PageContext) -> str:
    """Title, description, run counts and the navigation bar."""
    results, esc = ctx.results, html.escape
    title = f"o2ksim report: {results.scenario_name}" + (" (reduced)" if results.reduced else "")
    parts = [f"<h1>{esc(title)}</h1>"]
    if results.description:
        parts.append(f"<p>{esc(results.description)}</p>")
    n_ok = int((results.table["status"] == "ok").sum())
    n_failed = int((results.table["status"] == "failed").sum())
    n_pending = len(results.table) - n_ok - n_failed
    meta = [f"{len(results.table)} planned runs: {n_ok} finished"]
    if n_failed:
        meta.append(f"<span class='failed'>{n_failed} failed</span>")
    if n_pending:
        meta.append(f"{n_pending} not run yet")
    parts.append(
        f"<p class='meta'>{', '.join(meta)} · source: {esc(results.source or '–')} · "
        f"results: {esc(str(results.out_dir))} · generated {esc(time.strftime('%Y-%m-%d %H:%M'))}</p>"
    )
    parts.append(
        "<nav><a href='#answer'>Which policy?</a><a href='#figures'>Figures</a>"
        "<a href='#runs'>Runs</a><a href='#scenario'>Scenario</a>"
        "<a href='#versions'>Versions</a></nav>"
    )
    return "\n".join(parts)


def section_answer(ctx: PageContext) -> str:
    """"Which policy?": a ranking per factor level, with the best value of each measure marked."""
    g = ctx.g
    parts = ["<h2 id='answer'>Which policy?</h2>"]
    if len(g.table) == 0:
        parts.append("<p class='note'>No run has finished.</p>")
        return "\n".join(parts)
    parts.append(
        "<p>Mean over each policy's finished runs (seeds averaged); the best value of each "
        "measure is highlighted. Waits in hours; slowdown = response time / actual runtime; "
        "utilisation is the fraction of processors in use."
        + (" One ranking per factor level: a policy that wins at one level may lose at another."
           if g.level_cols else "")
        + "</p>"
    )  # fmt: skip
    for label, rank in rankings(g):
        if label:
            parts.append(f"<h3>{html.escape(label)}</h3>")
        best = {c: rank[c].min() for c in LOWER_IS_BETTER if rank[c].notna().any()}
        parts.append(_html_table(rank, best))
        sentences = verdict(rank)
        if sentences:
            parts.append("<ul>" + "".join(f"<li>{s}</li>" for s in sentences) + "</ul>")
        if rank["runs"].nunique() > 1:
            parts.append(
                "<p class='note'>The policies have different numbers of finished runs, "
                "so their means are over different runs.</p>"
            )
    for n in g.notes:
        parts.append(f"<p class='note'>{html.escape(n)}</p>")
    return "\n".join(parts)


def section_figures(ctx: PageContext) -> str:
    """Every drawn figure with its caption; says which panels there are and what is missing."""
    g, figs, esc = ctx.g, ctx.figs, html.escape
    parts = ["<h2 id='figures'>Figures</h2>"]
    if g.panel_cols:
        what = ", ".join(c.rsplit(".", 1)[-1] for c in g.panel_cols)
        parts.append(
            f"<p>One panel per {esc(what)} in every figure ({len(g.panels)} panels: "
            f"{esc('; '.join(g.panels))}).</p>"
        )
    if g.truncated:
        parts.append(
            f"<p class='note'>{g.truncated} more panel(s) are not drawn (at most {MAX_PANELS} "
            "per figure); their runs are in the tables below.</p>"
        )
    for name, caption in FIGURES:
        if name in figs:
            parts.append(_figure_html(name, figs[name], caption))
    missing = [n for n, _ in FIGURES if n not in figs]
    if missing and len(g.table):
        parts.append(f"<p class='meta'>Not drawn (no data): {esc(', '.join(missing))}.</p>")
    return "\n".join(parts)


def section_classes(ctx: PageContext) -> str:
    """The per-class table behind thesis Figs. 5-6 (runs on the O2K hosts only)."""
    g = ctx.g
    if not len(g.lsf_classes):
        return ""
    return "\n".join(
        [
            "<h2 id='lsf-classes'>Wait per LSF class</h2>",
            "<p>Mean and maximum wait of each NCSA-LSF* job class (time class by requested "
            "runtime, size class by processors and memory; thesis Table 3, Figures 5-6), "
            "for every policy, seeds pooled.</p>",
            _html_table(g.lsf_classes, cls="lsf"),
        ]
    )



def section_immediate(ctx: PageContext) -> str:
    """Immediate service's counters and the ≤ 1 min / > 1 min comparison (thesis §5.5)."""
    from o2ksim.report import immediate

    return immediate.section(ctx.results)  # "" without immediate service


def section_partitioning(ctx: PageContext) -> str:
    """Dynamic partitioning: repartitionings, resizes and processor shares (thesis §6.1)."""
    return partitioning_view.section(ctx.g.partitioning, _html_table)


def section_goal(ctx: PageContext) -> str:
    """Goal-oriented policies: total normalized excessive waits and the class wait matrix (G§4)."""
    from o2ksim.report.goal import goal_section

    return "\n".join(goal_section(ctx.results, ctx.g))


def section_runs(ctx: PageContext) -> str:
    """Every planned run, and the failed runs with their errors."""
    results, esc = ctx.results, html.escape
    parts = ["<h2 id='runs'>Runs</h2>", _html_table(runs_table(results), cls="runs")]
    failed = results.table.loc[results.table["status"] == "failed", "run_id"]
    if len(failed):
        parts.append("<h3 class='failed'>Failed runs</h3>")
        for rid in failed:
            parts.append(f"<p><b>{esc(rid)}</b></p><pre>{esc(results.error(rid))}</pre>")
    return "\n".join(parts)


def section_scenario(ctx: PageContext) -> str:
    """The scenario text the sweep ran."""
    text = ctx.results.scenario_text or "(not recorded)"
    return f"<h2 id='scenario'>Scenario</h2>\n<pre>{html.escape(text, quote=False)}</pre>"


def section_versions(ctx: PageContext) -> str:
    """Versions that made the report, and those recorded by the runs."""
    import matplotlib
    import seaborn

    from o2ksim.run.results import versions

    vers = versions()
    vers.update({"seaborn": seaborn.__version__, "matplotlib": matplotlib.__version__})
    parts = ["<h2 id='versions'>Versions</h2>", "<p>This report was made with:</p>"]
    parts.append(_html_table(pd.DataFrame([vers])))
    recorded = {}
    for rid in ctx.results.ok["run_id"]:
        v = ctx.results.run_summary(rid).get("versions")
        if v:
            recorded[json.dumps(v, sort_keys=True)] = v
    if recorded:
        parts.append("<p>The runs were simulated with:</p>")
        parts.append(_html_table(pd.DataFrame(list(recorded.values()))))
    return "\n".join(parts)


SECTIONS: list[Callable[[PageContext], str]] = [
    section_header,
    section_answer,
    section_figures,
    section_classes,
    section_immediate,
    section_partitioning,
    section_goal,
    section_runs,
    section_scenario,
    section_versions,
]
"""The page, top to bottom.  Other modules add sections here (see :func:`add_section`)."""


def add_section(section: Callable[[PageContext], str], *, before: str = "section_runs") -> None:
    """Insert ``section`` into :data:`SECTIONS` before the section named ``before``.

    E.g. a queue-time prediction page: ``add_section(prediction_section)``
    puts it after the figures and the class tables, before the list of runs.
    """
    names = [f.__name__ for f in SECTIONS]
    if section in SECTIONS:
        return
    SECTIONS.insert(names.index(before) if before in names else len(SECTIONS), section)


def build_page(results: Results, g: Gathered, figs: dict[str, Path]) -> str:
    """The HTML text (figures embedded from ``figs``): every section of :data:`SECTIONS`."""
    title = f"o2ksim report: {results.scenario_name}" + (" (reduced)" if results.reduced else "")
    ctx = PageContext(results, g, figs)
    body = [part for section in SECTIONS if (part := section(ctx))]
    return "\n".join(
        [
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title>",
            f"<style>{CSS}</style></head><body><main>",
            *body,
            "</main></body></html>",
        ]
    )


def write_result_report(
    result: Any, out_dir: str | os.PathLike[str], *, name: str = "run", description: str = ""
) -> Path:
    """The HTML report of one :class:`~o2ksim.run.results.Result` (``o2ksim run --report``).

    The result is stored as a one-run results directory in ``OUT_DIR/results``
    (the layout of :mod:`o2ksim.experiments.sweep`, so ``o2ksim gantt OUT_DIR/results`` works
    on it too) and the page is written to ``OUT_DIR/report/report.html``.
    """
    import re

    from o2ksim.experiments.scenario import RunSpec
    from o2ksim.experiments.store import store_outcome, summary_table, write_table
    from o2ksim.experiments.workers import outcome_of
    from o2ksim.run.results import write_json

    out = Path(out_dir)
    results_dir = out / "results"
    label = str(result.config.get("label") or result.policy.get("name", "policy"))
    run = RunSpec(re.sub(r"[^A-Za-z0-9.+=-]+", "_", label), 0, {"policy": label}, result.config)
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "scenario.toml").write_text(
        "# made by o2ksim run; the run's configuration:\n"
        + "".join(f"# {k} = {v}\n" for k, v in result.config.items())
    )
    write_json(
        results_dir / "plan.json",
        {
            "scenario": name,
            "description": description,
            "source": str(result.config.get("workload", "")),
            "factors": ["policy"],
            "runs": [run.to_dict()],
        },
    )
    store_outcome(results_dir, run, outcome_of(run.run_id, result, result.stats.wall_seconds))
    write_table(results_dir, summary_table(results_dir, [run]))
    return write_report(results_dir, out / "report")


def write_report(
    results_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None
) -> Path:
    """Write ``report.html`` (+ ``figures/*.png`` and ``tables/*.csv``); returns the page's path.

    ``out_dir`` defaults to ``RESULTS_DIR/report``.
    """
    from o2ksim.report.prediction import is_prediction_dir, write_prediction_report

    if is_prediction_dir(results_dir):  # an `o2ksim predict` directory: the prediction page
        return write_prediction_report(results_dir, out_dir)
    results = load_results(results_dir)
    out = Path(out_dir) if out_dir is not None else Path(results_dir) / "report"
    out.mkdir(parents=True, exist_ok=True)
    g = gather(results)
    figs = make_figures(g, out / "figures") if len(g.table) else {}
    tables = out / "tables"
    tables.mkdir(exist_ok=True)
    if len(g.table):
        pd.concat(
            [r.assign(level=label) for label, r in rankings(g)], ignore_index=True
        ).to_csv(tables / "ranking.csv", index=False)
    for name, frame in (
        ("runtime_groups", g.runtime),
        ("p95_points", g.p95),
        ("wait_vs_procs", g.procs),
        ("wait_vs_mem", g.mem),
        ("class_groups", g.classes),
    ):
        if len(frame):
            frame.to_csv(tables / f"{name}.csv", index=False)
    runs_table(results).to_csv(tables / "runs.csv", index=False)
    page = out / "report.html"
    page.write_text(build_page(results, g, figs))
    return page


__all__ = [
    "SECTIONS",
    "Gathered",
    "PageContext",
    "add_section",
    "build_page",
    "gather",
    "make_figures",
    "ranking",
    "rankings",
    "write_report",
    "write_result_report",
]
