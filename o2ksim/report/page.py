"""The report page: a list of sections, each a function of a :class:`PageContext`.

The page is :data:`SECTIONS`, top to bottom; each section is a function
``section(ctx) -> str`` returning an HTML fragment (or ``""`` when it has
nothing to show).  Another module adds its own section with
:func:`add_section` -- the page needs no other change.  Figures are embedded
as base64 PNGs, so the page can be mailed or archived alone; each is
numbered ("Figure 3.") with a caption that starts with what it shows
(:func:`o2ksim.report.findings.findings`) and links to its PNG and SVG files.
:func:`build_page` puts a table of contents of every section and figure
(:func:`toc_html`) after the header.
"""

from __future__ import annotations

import base64
import html
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from o2ksim.experiments.store import Results
from o2ksim.report import partitioning_view
from o2ksim.report.findings import findings
from o2ksim.report.gather import MAX_PANELS, Gathered
from o2ksim.report.goal import goal_section
from o2ksim.report.immediate import section as immediate_section
from o2ksim.report.tables import LOWER_IS_BETTER, html_table, rankings, runs_table, verdict
from o2ksim.run.results import versions

__all__ = [
    "CSS",
    "FIGURES",
    "SECTIONS",
    "PageContext",
    "add_section",
    "build_page",
    "figure_html",
    "toc_html",
]

FIGURES = (
    ("overall", "Overall performance per policy", "Bar chart",
     "Overall mean, 95th-percentile and maximum wait and mean slowdown per policy (as T Fig. 60). "
     "With several runs (seeds) per bar the bar is their mean and the black line its 95% "
     "confidence interval."),
    ("runtime_counts", "Jobs per actual-runtime group", "Bar chart",
     "How many jobs fall in each of the thesis's eleven runtime groups (bounded by 10^i minutes, "
     "i = -1, -0.5, ..., 4; T§3.5), the seeds of a panel together: how much weight each point "
     "of the runtime figures carries."),
    ("wait_vs_runtime", "Average wait versus actual runtime", "Line chart",
     "T§3.5 Fig. 4(a), T Fig. 49: the jobs are split into the eleven runtime groups; each group "
     "is drawn at the geometric mean of its runtimes."),
    ("p95_vs_runtime", "95th-percentile wait versus actual runtime", "Line chart",
     "T§3.5 Fig. 4(b), T Fig. 50(a)-(b): the top 5% of the waits are removed, then the three "
     "largest remaining waits in each of six runtime ranges (bounds 1, 10, 100, 1000, 10^3.5, "
     "10^4 minutes) are drawn at the runtimes where they occur."),
    ("max_vs_runtime", "Maximum wait versus actual runtime", "Line chart",
     "T§3.5 Fig. 4(c), T Fig. 50(e)-(h): drawn at the runtime of the job that waited longest in "
     "each group."),
    ("slowdown_vs_runtime", "Average slowdown versus actual runtime", "Line chart",
     "T§3.5 Fig. 4(d), T Fig. 50(c)-(d); slowdown = response time / actual runtime; log scale."),
    ("max_slowdown_vs_runtime", "Maximum slowdown versus actual runtime", "Line chart",
     "T§3.5 Fig. 4(e): the largest slowdown of each runtime group, drawn at the runtime of the "
     "job where it occurs; log scale."),
    ("top_waits", "Highest 5% of the waits versus actual runtime", "Scatter plot",
     "As T§3.6 Fig. 7: every job among the highest 5% of a policy's waits, at its actual "
     "runtime; a poor wait can hit short jobs too."),
    ("wait_vs_procs", "Wait versus requested processors", "Line chart",
     "Average and maximum wait versus requested processors (T§5.3.3 Fig. 59(e)-(f))."),
    ("wait_vs_mem", "Wait versus requested memory", "Line chart",
     "Average and maximum wait versus requested memory (T§5.3.3 Fig. 59(g)-(h)); jobs without "
     "a memory request are left out."),
    ("class_mean_wait", "Average wait per NCSA-LSF* job class", "Bar chart",
     "As T§3.6 Fig. 5, every policy: time class (s, m, l: requested runtime) and size class "
     "(sj, mj, lj: processors and memory), thesis Table 3."),
    ("class_max_wait", "Maximum wait per NCSA-LSF* job class", "Bar chart",
     "As T§3.6 Fig. 6, every policy."),
    ("class_slowdown", "Average slowdown per NCSA-LSF* job class", "Bar chart",
     "Every policy; log scale when the values span more than 10x."),
    ("utilisation", "Utilisation over time", "Step chart",
     "Fraction of the machine's processors in use over time (0 to 1); the analysis window is "
     "shaded (the warm-up is before it)."),
    ("queue", "Waiting jobs over time", "Step chart",
     "The number of jobs submitted and not yet started, time-averaged per bin; the analysis "
     "window is shaded."),
    ("gantt", "Gantt chart of the run", "Gantt chart",
     "Processors per host over time: one bar per job (its colour the same wherever it is "
     "drawn), drawn by o2ksim.report.gantt; the whole run with `o2ksim gantt DIR`."),
)  # fmt: skip
"""Every figure of the page in order: file name, title, kind of chart (for the alt text), method."""

FOLDED_MEANS = (
    "overall", "wait_vs_runtime", "p95_vs_runtime", "max_vs_runtime", "slowdown_vs_runtime",
    "max_slowdown_vs_runtime", "wait_vs_procs", "wait_vs_mem", "class_mean_wait",
    "class_max_wait", "class_slowdown", "utilisation",
)  # fmt: skip
"""Figures drawn as a mean over seeds (``NAME_mean``) when the seeds are panels; the
per-seed version is then folded away under the mean."""

MEAN_SUFFIX = " (mean over seeds)"
"""Added to the title of a figure drawn as a mean over seeds."""

MEAN_METHODS = {
    "p95_vs_runtime": "Over seeds, each range's largest remaining wait is averaged and drawn at "
    "the mean of the runtimes where it occurs.",
}
"""How a mean figure differs from its per-seed panels, where the method alone would mislead."""

MEAN_MARKS = {"Bar chart": ("Bars", "black lines"), "Step chart": ("Lines", "bands")}
"""How a mean over seeds and its interval are drawn, per kind of chart (default: points, error bars)."""

PER_RUN = ("queue", "gantt")
"""Figures of a one-run report only."""


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
nav.toc { background: #f3f5f8; padding: 8px 16px; margin: 12px 0; font-size: 0.9em; }
nav.toc ol { margin: 4px 0; padding-left: 1.4em; } nav.toc ol ol { list-style: none; padding-left: 0.6em; }
nav.toc li { margin: 2px 0; } nav.toc a { margin-right: 0; }
figcaption .method { color: #6b7683; } figcaption .files { white-space: nowrap; }
details > summary { cursor: pointer; color: #23527c; margin: 6px 0; }
td { overflow-wrap: anywhere; }
"""


@dataclass
class PageContext:
    """What a page section may use: the results, the gathered tables and the drawn figures."""

    results: Results
    g: Gathered
    figs: dict[str, Path]
    out_dir: Path | None = None

    def numbers(self) -> dict[str, int]:
        """Figure name -> its number on the page (the drawn figures of :data:`FIGURES`, in order)."""
        drawn = [n for n, *_ in FIGURES if n in self.figs or f"{n}_mean" in self.figs]
        return {n: i for i, n in enumerate(drawn, 1)}


def _img(path: Path, alt: str) -> str:
    b64 = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"<img alt='{html.escape(alt)}' src='data:image/png;base64,{b64}'>"


def _links(path: Path) -> str:
    """Links to the PNG and, when written, the SVG beside it (relative to the page)."""
    rel = f"{path.parent.name}/{path.name}"
    links = [f"<a href='{html.escape(rel)}'>PNG</a>"]
    if path.with_suffix(".svg").exists():
        links.append(f"<a href='{html.escape(rel[:-4])}.svg'>SVG</a>")
    return "<span class='files'>[" + " · ".join(links) + "]</span>"


def figure_html(
    number: int,
    name: str,
    path: Path,
    *,
    title: str,
    kind: str,
    method: str,
    found: list[str],
    what: str = "",
    folded: Path | None = None,
    fold_label: str = "",
) -> str:
    """One numbered figure: the image, then "Figure n. Title." with the findings, the method and links.

    ``found``: sentences saying what the figure shows (they also end the alt
    text, so a screen reader hears the result, not a file name).  ``what``
    describes the panels.  ``folded``: a second image (the per-seed panels)
    inside a closed ``<details>`` before the caption; with ``fold_label`` and no
    ``folded``, the figure's own image is folded away.
    """
    esc = html.escape
    alt = f"{kind}: {title}{what}. " + " ".join(found[:3])
    image = _img(path, alt.strip())
    if fold_label and folded is None:
        image = f"<details><summary>{esc(fold_label)}</summary>{image}</details>"
    extra = ""
    if folded is not None:
        extra = (
            f"<details><summary>{esc(fold_label)}</summary>"
            f"{_img(folded, f'{kind}: {title.removesuffix(MEAN_SUFFIX)}, one panel per seed.')} "
            f"{_links(folded)}</details>"
        )
    said = " ".join(esc(s) for s in found)
    return (
        f"<figure id='fig-{esc(name)}' data-title='{esc(title)}'>{image}{extra}"
        f"<figcaption><b>Figure {number}. {esc(title)}.</b> {said} "
        f"<span class='method'>{esc(method)}</span> {_links(path)}</figcaption></figure>"
    )


def toc_html(body: str) -> str:
    """A table of contents: every ``<h2 id>`` section and, under it, every numbered figure."""
    items: list[str] = []
    for m in re.finditer(r"<h2 id='([^']+)'>(.*?)</h2>|<figure id='([^']+)' data-title='([^']*)'", body):
        if m.group(1):
            if items:
                items.append("</ol></li>")
            items.append(f"<li><a href='#{m.group(1)}'>{m.group(2)}</a><ol>")
            continue
        elif items:
            n = len(re.findall(r"class='fig'", "".join(items))) + 1
            items.append(f"<li class='fig'><a href='#{m.group(3)}'>Figure {n}. {m.group(4)}</a></li>")
    if not items:
        return ""
    items.append("</ol></li>")
    text = "".join(items).replace("<ol></ol>", "")
    return "<nav class='toc' id='contents'><b>Contents</b><ol>" + text + "</ol></nav>"


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
    return "\n".join(parts)


def section_answer(ctx: PageContext) -> str:
    """ "Which policy?": a ranking per factor level, with the best value of each measure marked."""
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
        parts.append(html_table(rank, best))
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
    """Every drawn figure, numbered, with what it shows; says which panels there are and what is missing.

    When the seeds are panels, each figure of :data:`FOLDED_MEANS` shows the
    mean over seeds with its 95% interval and folds the per-seed panels away;
    the highest waits (one marker per job, nothing to average) fold their per-seed image.
    """
    g, figs, esc = ctx.g, ctx.figs, html.escape
    found = findings(g)
    parts = ["<h2 id='figures'>Figures</h2>"]
    if g.panel_cols:
        what = ", ".join(c.rsplit(".", 1)[-1] for c in g.panel_cols)
        parts.append(
            f"<p>{len(g.panels)} panels, one per {esc(what)}: {esc('; '.join(g.panels))}."
            + (" Each figure shows the mean over the seeds with its 95% confidence interval "
               "(Student t); its per-seed panels are folded under it." if g.seed_panels else "")
            + "</p>"
        )  # fmt: skip
    if g.truncated:
        parts.append(
            f"<p class='note'>{g.truncated} more panel(s) are not drawn (at most {MAX_PANELS} "
            "per figure); their runs are in the tables below.</p>"
        )
    per_seed = f"Show the {len(g.panels)} per-seed panels"
    numbers = ctx.numbers()
    for name, title, kind, method in FIGURES:
        mean = figs.get(f"{name}_mean")
        path = mean or figs.get(name)
        if path is None:
            continue
        mark = {"Bar chart": "bar", "Scatter plot": "colour and marker"}.get(kind, "line")
        what = "" if name in PER_RUN else f", one {mark} per policy ({', '.join(g.policies)})"
        if mean:
            what += ", with 95% confidence intervals over the seeds"
            shown, spread = MEAN_MARKS.get(kind, ("Points", "error bars"))
            method += (" " + MEAN_METHODS[name]) if name in MEAN_METHODS else ""
            method += f" {shown}: the mean over the seeds; {spread}: its 95% Student-t confidence interval."
        parts.append(
            figure_html(
                numbers[name], name, path, title=title + (MEAN_SUFFIX if mean else ""),
                kind=kind, method=method, found=found.get(name, []), what=what,
                folded=figs.get(name) if mean else None,
                fold_label=per_seed if g.seed_panels and name != "runtime_counts"
                and name not in PER_RUN else "",
            )
        )  # fmt: skip
    missing = [n for n, *_ in FIGURES if n not in figs and n not in PER_RUN]
    if missing and len(g.table):
        parts.append(f"<p class='meta'>Not drawn (no data): {esc(', '.join(missing))}.</p>")
    return "\n".join(parts)


SUMMARY = ("overall", "wait_vs_runtime", "max_vs_runtime", "slowdown_vs_runtime", "top_waits")
"""The figures whose findings the "In short" list repeats, in this order."""


def section_summary(ctx: PageContext) -> str:
    """ "In short": the findings of the key figures, each linked to its figure."""
    found, numbers, esc = findings(ctx.g), ctx.numbers(), html.escape
    items = []
    for name in SUMMARY:
        if name in numbers and found.get(name):
            text = " ".join(esc(s) for s in found[name])
            items.append(f"<li><a href='#fig-{name}'>Figure {numbers[name]}</a>: {text}</li>")
    if not items:
        return ""
    return (
        "<h2 id='summary'>In short</h2><p>What the key figures show, computed from their "
        "numbers (each figure's caption says more).</p><ul>" + "".join(items) + "</ul>"
    )


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
            html_table(g.lsf_classes, cls="lsf"),
        ]
    )


def section_immediate(ctx: PageContext) -> str:
    """Immediate service's counters and the ≤ 1 min / > 1 min comparison (thesis §5.5)."""
    return immediate_section(ctx.results)  # "" without immediate service


def section_partitioning(ctx: PageContext) -> str:
    """Dynamic partitioning: repartitionings, resizes and processor shares (thesis §6.1)."""
    return partitioning_view.section(ctx.g.partitioning, html_table)


def section_goal(ctx: PageContext) -> str:
    """Goal-oriented policies: total normalized excessive waits and the class wait matrix (G§4)."""
    return "\n".join(goal_section(ctx.results, ctx.g))


def section_runs(ctx: PageContext) -> str:
    """Every planned run, and the failed runs with their errors."""
    results, esc = ctx.results, html.escape
    parts = ["<h2 id='runs'>Runs</h2>", html_table(runs_table(results), cls="runs")]
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
    # matplotlib and seaborn are heavy and only needed to name their versions here
    import matplotlib
    import seaborn

    vers = versions()
    vers.update({"seaborn": seaborn.__version__, "matplotlib": matplotlib.__version__})
    parts = ["<h2 id='versions'>Versions</h2>", "<p>This report was made with:</p>"]
    parts.append(html_table(pd.DataFrame([vers])))
    recorded = {}
    for rid in ctx.results.ok["run_id"]:
        v = ctx.results.run_summary(rid).get("versions")
        if v:
            recorded[json.dumps(v, sort_keys=True)] = v
    if recorded:
        parts.append("<p>The runs were simulated with:</p>")
        parts.append(html_table(pd.DataFrame(list(recorded.values()))))
    return "\n".join(parts)


SECTIONS: list[Callable[[PageContext], str]] = [
    section_header,
    section_answer,
    section_summary,
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
    if body:
        body.insert(1, toc_html("\n".join(body[1:])))
    return "\n".join(
        [
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title>",
            f"<style>{CSS}</style></head><body><main>",
            *body,
            "</main></body></html>",
        ]
    )
