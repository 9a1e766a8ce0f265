"""``o2ksim report``: one self-contained HTML page from a results directory.

The page answers "which policy should we run?" the way the thesis does
(T§3.5, T§5.2): a table of contents, a ranking table of the overall
measures, then numbered figures -- overall mean / 95th-percentile / maximum
wait and mean slowdown per policy; jobs per runtime group; average,
95th-percentile and maximum wait and average and maximum slowdown versus
actual runtime in the thesis's runtime groups (Fig. 4, Figs. 49-50); the
highest 5% of the waits (Fig. 7); wait versus requested processors and
memory; utilisation over time; for one run, the queue and a Gantt chart --
followed by every run, the failed runs with their errors, the scenario text
and the versions.  Each caption first states what the figure shows, in
sentences computed from its numbers (:mod:`~o2ksim.report.findings`).
Figures are PNG files embedded as base64, so the page can be mailed or
archived alone; the PNGs, an SVG of each, and the tables (CSV) are also
written next to it.

Panels: whatever the sweep varies besides the policy (months = seeds, loads,
estimate scenarios) gets one panel per level, in every figure.  When the
seeds are panels, every per-panel figure is also drawn as the mean over the
seeds with 95% confidence intervals, and the page folds the per-seed panels
under it.  With more than ``MAX_PANELS`` combinations the
seeds are pooled (the jobs of all seeds together); beyond that only the
first ``MAX_PANELS`` are drawn, and the page says so next to every figure
concerned.

The page is a list of *sections* (:data:`SECTIONS`): each is a function
``section(ctx) -> str`` returning an HTML fragment (or ``""``) from a
:class:`PageContext`.  Another module adds its own page section with
``SECTIONS.insert(i, my_section)`` or :func:`add_section` -- the report itself
needs no other change.

The work is split by step: :mod:`~o2ksim.report.gather` computes the tables
behind the figures, :mod:`~o2ksim.report.tables` the ranking and the list of
runs, :mod:`~o2ksim.report.findings` the captions' sentences,
:mod:`~o2ksim.report.page` the HTML sections; this module draws the figures
(:mod:`~o2ksim.report.figures`, :mod:`~o2ksim.report.views`) and writes the
page and its files.  Their public names are importable from here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from o2ksim.errors import InputError, O2KSimError
from o2ksim.experiments.scenario import RunSpec
from o2ksim.experiments.store import (
    Results,
    load_results,
    reading_results,
    run_dir,
    store_outcome,
    summary_table,
    write_table,
)
from o2ksim.experiments.workers import outcome_of
from o2ksim.outfiles import Staging, claim
from o2ksim.outkinds import REPORT_FILES, report_place
from o2ksim.report.gather import MAX_PANELS, Gathered, gather
from o2ksim.report.page import SECTIONS, PageContext, add_section, build_page
from o2ksim.report.prediction import write_prediction_report
from o2ksim.report.tables import ranking, rankings, runs_table, verdict
from o2ksim.run.results import Result, write_json
from o2ksim.validation import check_path, check_str, output_folder, shown

__all__ = [
    "MAX_PANELS",
    "REPORT_FILES",
    "SECTIONS",
    "Gathered",
    "PageContext",
    "add_section",
    "build_page",
    "build_report",
    "build_result_report",
    "gather",
    "make_figures",
    "ranking",
    "rankings",
    "runs_table",
    "verdict",
    "write_report",
    "write_result_report",
]


def make_figures(g: Gathered, fig_dir: Path, results: Results | None = None) -> dict[str, Path]:
    """Draw every figure that has data, as PNG with an SVG beside it; returns name -> PNG path.

    Every figure draws every panel in ``g.panels``: none is dropped silently.
    When the seeds are panels, every per-panel figure (overall, runtime,
    95th-percentile, size, class, utilisation) is also drawn as a mean over
    the seeds with 95% intervals (``NAME_mean``).  A one-run report
    (given ``results``) also gets the queue over time and a Gantt chart.
    """
    # matplotlib and seaborn are heavy: the figures modules are imported only when figures are drawn
    from o2ksim.report import figures as F
    from o2ksim.report import views as V

    fig_dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}

    def keep(name: str, fig: Any) -> None:
        path = fig_dir / f"{name}.png"
        F.save(fig, str(path), svg=True)
        out[name] = path

    with F.report_style():
        x = "level" if g.panel_cols else None
        tab = g.table.loc[g.table["panel"].isin(g.panels)] if g.panels else g.table
        if len(tab):
            tab = tab.assign(level=[g.short_panels.get(p, p) for p in tab["panel"]])
            xlabel = ", ".join(c.rsplit(".", 1)[-1] for c in g.panel_cols)
            keep("overall", F.overall_figure(tab, g.policies, x, xlabel))
            if g.seed_panels:  # the mean over seeds, with 95% intervals; the seeds folded away
                levels = [g.level_of.get(p, p) for p in tab["panel"]]
                cols = [c for c in g.panel_cols if c != "seed"]
                short = [lv.split(" ", 1)[-1] if len(cols) == 1 else lv for lv in levels]
                keep(
                    "overall_mean",
                    F.overall_figure(tab.assign(level=short), g.policies, "level" if cols else None,
                                     ", ".join(c.rsplit(".", 1)[-1] for c in cols),
                                     "Overall performance, mean over seeds "
                                     "(black lines: 95% confidence interval)"),
                )  # fmt: skip
        if len(g.counts):
            keep("runtime_counts", V.counts_figure(g.counts, g.policies, g.level_panels))
        for name, measure in (
            ("wait_vs_runtime", "mean_wait"),
            ("max_vs_runtime", "max_wait"),
            ("slowdown_vs_runtime", "mean_slowdown"),
            ("max_slowdown_vs_runtime", "max_slowdown"),
        ):
            if not len(g.runtime) or not g.runtime[measure].notna().any():
                continue
            keep(name, F.runtime_figure(g.runtime, g.policies, g.panels, measure))
            if g.seed_panels:
                means = V.mean_runtime_figure(g.runtime_mean, g.policies, g.level_panels, measure)
                keep(f"{name}_mean", means)
            if name == "wait_vs_runtime" and len(g.p95):
                keep("p95_vs_runtime", F.p95_figure(g.p95, g.policies, g.panels))
                if len(g.p95_mean):
                    keep("p95_vs_runtime_mean",
                         V.mean_runtime_figure(g.p95_mean, g.policies, g.level_panels, "p95_wait"))  # fmt: skip
        if len(g.top):
            keep("top_waits", V.top_waits_figure(g.top, g.policies, g.panels))
        for by, frame, means in (("procs", g.procs, g.procs_mean), ("mem", g.mem, g.mem_mean)):
            if len(frame):
                keep(f"wait_vs_{by}", F.size_figure(frame, g.policies, g.panels, by))
            if len(means):
                keep(f"wait_vs_{by}_mean", F.size_figure(means, g.policies, g.level_panels, by))
        if len(g.classes):
            levels = g.classes.assign(panel=[g.level_of.get(p, p) for p in g.classes["panel"]])
            for name, measure in (("class_mean_wait", "mean_wait"), ("class_max_wait", "max_wait"),
                                  ("class_slowdown", "mean_slowdown")):  # fmt: skip
                if not g.classes[measure].notna().any():
                    continue
                keep(name, F.class_figure(g.classes, g.policies, g.panels, measure))
                if g.seed_panels:  # the seeds as the runs of each bar
                    keep(f"{name}_mean",
                         F.class_figure(levels, g.policies, g.level_panels, measure, intervals=True))  # fmt: skip
        if len(g.util):
            util_panels = list(dict.fromkeys(g.util["panel"]))
            keep("utilisation", F.utilisation_figure(g.util, g.policies, util_panels, g.window))
            if len(g.util_mean):
                levels_drawn = list(dict.fromkeys(g.util_mean["panel"]))
                keep("utilisation_mean",
                     F.utilisation_figure(g.util_mean, g.policies, levels_drawn, g.window))  # fmt: skip
        if len(g.queue):
            keep("queue", V.queue_figure(g.queue, g.window, "Waiting jobs over time"))
        if results is not None and len(g.table) == 1:
            gantt = run_gantt(results, g)
            if gantt is not None:
                keep("gantt", gantt)
    return out


GANTT_SPAN = 86400.0
"""The one-run report's Gantt chart shows at most this much time (seconds): the first day of
the analysis window (of the run, without one); ``o2ksim gantt`` draws any range."""


def run_gantt(results: Results, g: Gathered) -> Any:
    """The Gantt chart of a one-run report's first day (or less), or ``None`` without segments."""
    from o2ksim.report.gantt import EmptyWindow, gantt_figure  # heavy: matplotlib

    rid = g.table["run_id"].iloc[0]
    segs = results.segments(rid)
    info = results.run_summary(rid).get("info", {})
    hosts = info.get("hosts")
    if segs is None or segs.empty or not hosts:
        return None
    start = float(g.window[0]) if g.window else float(segs["start"].min())
    end = min(start + GANTT_SPAN, float(g.window[1]) if g.window else float(segs["end"].max()))
    title = f"{g.policies[0] if g.policies else rid}: {end - start:.0f} s from t = {start:.0f} s"
    if end - start >= 3600:
        title = f"{g.policies[0] if g.policies else rid}: day {start / 86400:.1f} to {end / 86400:.1f}"
    # only the allocations that overlap the drawn day: a month's segments cost the chart
    # seconds per thousand, and those outside the day are not drawn anyway
    segs = segs.loc[(segs["end"] > start) & (segs["start"] < end)]
    try:
        return gantt_figure(segs, hosts, start=start, end=end, title=title, label_jobs=True)
    except EmptyWindow:
        return None


RESULT_REPORT_FILES = ("results", "report")
"""What :func:`write_result_report` puts in its folder: a new one replaces both."""


def write_result_report(
    result: Any, out_dir: str | os.PathLike[str], *, name: str = "run", description: str = ""
) -> Path:
    """The HTML report of one :class:`~o2ksim.run.results.Result`; returns the page's path.

    The result is stored as a one-run results directory in ``OUT_DIR/results``
    (the layout of :mod:`o2ksim.experiments.sweep`, so ``o2ksim gantt OUT_DIR/results`` works
    on it too) and the page is written to ``OUT_DIR/report/report.html``.  Both are built
    aside and committed together, replacing an earlier pair (:mod:`o2ksim.outfiles`, as
    :func:`write_report`): a failure or an interrupt leaves the folder as it was.
    (``o2ksim run --report`` stages the same two with the run's files:
    :func:`build_result_report`.)
    """
    if not isinstance(result, Result):
        raise O2KSimError(
            f"write_result_report: expected a result of simulate(), got {shown(result)}"
        )
    check_path(out_dir, "write_result_report", "out_dir")
    check_str(name, "write_result_report", "name")
    check_str(description, "write_result_report", "description", empty=True)
    out = Path(out_dir)
    with (
        output_folder(out, ""),
        claim(out, option="", kind="run"),  # a run's results/ and report/: a run's folder or none
        Staging(out, family=RESULT_REPORT_FILES, last="report", kind="report") as staged,
    ):
        tmp = staged.scratch(*RESULT_REPORT_FILES)
        with report_failures_said(out, tmp):
            page = build_result_report(result, tmp, name=name, description=description)
            page.write_text(page.read_text().replace(str(tmp), str(out)))  # where it will be
            staged.commit()
    return out / "report" / "report.html"


def build_result_report(
    result: Result, out: Path, *, name: str = "run", description: str = ""
) -> Path:
    """:func:`write_result_report` written straight into ``out`` (``results/`` and
    ``report/``), for a caller that stages ``out`` itself (``o2ksim run --report``)."""
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
    # written straight into out/report: the caller (o2ksim run --report) stages ``out``
    return build_report(load_results(results_dir), out / "report")


# REPORT_FILES (o2ksim.outkinds): what a report folder holds; a new report replaces all three


def write_report(
    results_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None
) -> Path:
    """Write ``report.html`` (+ ``figures/*.png``, ``*.svg`` and ``tables/*.csv``); returns its path.

    ``out_dir`` defaults to ``RESULTS_DIR/report``.  The report is built aside and committed
    as a whole (:mod:`o2ksim.outfiles`): the folder is claimed (a second report into it
    is refused), ``report.html``, ``figures/`` and ``tables/`` are written into a temporary
    folder in it and then renamed in together (``report.html`` last), replacing the earlier
    report's three entirely.  A failure (a full disk) or an interrupt leaves the folder as it
    was -- and no folder when it was made for this report.
    """
    check_path(results_dir, "write_report", "results_dir")
    if out_dir is not None:
        check_path(out_dir, "write_report", "out_dir")
    out, kind = report_place(results_dir, out_dir)
    if kind == "prediction":  # an `o2ksim predict` directory: the prediction page
        return write_prediction_report(results_dir, out_dir)
    with reading_results(results_dir):  # no sweep writes into it meanwhile (it is refused)
        results = load_results(results_dir)
        nothing_to_report(results)
        with (
            output_folder(out, ""),  # a folder made here is removed again if the report fails
            claim(out, option="", sweep_folder_ok=True, kind="report"),
            Staging(out, family=REPORT_FILES, last="report.html", kind="report", sweep_folder_ok=True)
            as staged,
        ):
            tmp = staged.scratch(*REPORT_FILES)
            with report_failures_said(out, tmp):
                build_report(results, tmp)  # its links are relative: the same once renamed
                staged.commit()
    return out / "report.html"


def nothing_to_report(results: Results) -> None:
    """Refuse, in one line and before any folder is made, the report of a sweep none of whose
    runs finished: there is nothing to draw (it was a false "cannot write the report (No such
    file or directory)", the rename of a ``figures/`` never made; issue-27 audit, D23)."""
    status = results.table["status"] if "status" in results.table else pd.Series(dtype=str)
    if (status == "ok").any():
        return
    counts = status.value_counts()
    said = ", ".join(f"{n} {state}" for state, n in counts.items()) or "no run planned"
    failed = [r for r, s in zip(results.table.get("run_id", []), status, strict=False) if s == "failed"]
    where = f"; why: {run_dir(results.out_dir, failed[0]) / 'error.txt'}" if failed else ""
    raise O2KSimError(
        f"{results.out_dir}: nothing to report: no run of the sweep finished ({said}){where}"
    )


@contextmanager
def report_failures_said(out: Path, tmp: Path) -> Iterator[None]:
    """A report staged in ``tmp`` that cannot be written (a full disk) is one line naming its
    folder ``out`` and saying that nothing new was written there (the staging is undone)."""
    try:
        yield
    except (OSError, InputError) as exc:
        cause = _write_failure(exc, tmp)
        if cause is None:
            raise
        raise O2KSimError(
            f"{out}: cannot write the report ({cause.strerror or cause}); nothing new was "
            "written there"
        ) from None


def _write_failure(exc: Exception, tmp: Path) -> OSError | None:
    """The ``OSError`` of a write into the staged folder ``tmp``: raised as such, or as the
    one-line error of :func:`o2ksim.files.atomic_path` (a figure) naming a file in it."""
    if isinstance(exc, OSError):
        return exc
    if isinstance(exc, InputError) and (exc.path or "").startswith(str(tmp)):
        return exc.__context__ if isinstance(exc.__context__, OSError) else OSError(exc.reason)
    return None


def build_report(results: Results, out: Path) -> Path:
    """The report of ``results`` written straight into ``out`` (report.html, figures/,
    tables/); :func:`write_report` makes it whole, ``o2ksim run --report`` stages it with
    the run.  Returns the page's path."""
    out.mkdir(parents=True, exist_ok=True)
    g = gather(results)
    figs = make_figures(g, out / "figures", results) if len(g.table) else {}
    tables = out / "tables"
    tables.mkdir(exist_ok=True)
    if len(g.table):
        pd.concat(
            [r.assign(level=label) for label, r in rankings(g)], ignore_index=True
        ).to_csv(tables / "ranking.csv", index=False)
    for name, frame in (
        ("runtime_groups", g.runtime),
        ("runtime_groups_mean_ci", g.runtime_mean),
        ("p95_points_mean_ci", g.p95_mean),
        ("wait_vs_procs_mean_ci", g.procs_mean),
        ("wait_vs_mem_mean_ci", g.mem_mean),
        ("utilisation_mean_ci", g.util_mean),
        ("top_waits", g.top),
        ("queue", g.queue),
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
