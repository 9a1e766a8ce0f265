"""Comparing results in a script or notebook: ``compare([r1, r2, ...])`` and one-result views.

>>> from o2ksim import simulate, compare  # doctest: +SKIP
>>> a = simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")  # doctest: +SKIP
>>> b = simulate("traces/kth-sp2-sample.swf", policy="lxf-backfill")  # doctest: +SKIP
>>> c = compare([a, b])  # doctest: +SKIP
>>> c  # a DataFrame: one row per result, the overall measures  # doctest: +SKIP
>>> c.plot_runtime("mean_wait")  # the thesis's wait-versus-runtime view  # doctest: +SKIP

:class:`Comparison` is a :class:`pandas.DataFrame` (one row per result,
waits in hours) with plotting methods for the views of T§3.5 -- average,
95th-percentile and maximum wait and average slowdown versus actual runtime
and average and maximum slowdown versus actual runtime (Fig. 4), the highest
5% of the waits (Fig. 7), per NCSA-LSF* job class (Figs. 5-6) and the overall
bars; :meth:`Comparison.conclusions` says in words what a runtime view shows.
:func:`timeline` draws utilisation and queue length over time for one result.

The figures are :class:`matplotlib.figure.Figure` objects drawn without
pyplot, so they display as cell output in Jupyter and never change the
user's matplotlib backend or style.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any, ClassVar

import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.report import captions, data
from o2ksim.report.captions import RUNTIME_WORDS
from o2ksim.run.results import result_html, result_label, result_text
from o2ksim.validation import shown

HOUR = 3600.0
MEASURES = {
    "mean_wait": "mean wait (h)",
    "p95_wait": "95th wait (h)",
    "max_wait": "max wait (h)",
    "mean_slowdown": "mean slowdown",
    "mean_bounded_slowdown": "mean bounded slowdown",
    "utilisation": "utilisation",
}


def _figures() -> ModuleType:
    """:mod:`o2ksim.report.figures`, imported when a figure is first drawn.

    It imports matplotlib and seaborn, which are heavy; printing a result
    (``Result.__repr__`` uses this module) or comparing numbers never needs them.
    """
    from o2ksim.report import figures  # heavy: matplotlib and seaborn

    return figures


def _labels(results: Sequence[Any], labels: Sequence[str] | None) -> list[str]:
    if labels is not None:
        if isinstance(labels, str | bytes) or not isinstance(labels, Sequence):
            raise O2KSimError(f"compare: labels must be a list of names, got {shown(labels)}")
        if len(labels) != len(results):
            raise O2KSimError(f"compare: {len(labels)} labels for {len(results)} results")
        names = [str(x) for x in labels]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # one row per label: two runs under one name would be mixed up
            raise O2KSimError(f"compare: labels must differ; {twice[0]!r} names two results")
        return names
    out = [result_label(r) for r in results]
    seen: dict[str, int] = {}
    for i, lab in enumerate(out):
        if out.count(lab) > 1:
            seen[lab] = seen.get(lab, 0) + 1
            out[i] = f"{lab} #{seen[lab]}"
    return out


class Comparison(pd.DataFrame):
    """One row per result (index: label) with the overall measures, plus the thesis's views."""

    _metadata: ClassVar[list[str]] = ["results"]

    @property
    def _constructor(self) -> type[pd.DataFrame]:
        return pd.DataFrame  # slices and arithmetic give plain frames

    # -- figures ------------------------------------------------------------------------
    def _jobs(self) -> dict[str, pd.DataFrame]:
        return {label: r.jobs for label, r in self.results.items()}

    def _groups(self) -> pd.DataFrame:
        return pd.concat(
            [data.runtime_groups(j).assign(policy=p, panel="") for p, j in self._jobs().items()],
            ignore_index=True,
        )

    def plot_runtime(self, measure: str = "mean_wait") -> Any:
        """Average (``mean_wait``) or maximum (``max_wait``) wait, or the average
        (``mean_slowdown``) or maximum (``max_slowdown``) slowdown, versus runtime.

        T§3.5 Fig. 4 (a), (c), (d), (e): eleven runtime groups, log runtime axis.
        """
        if measure not in RUNTIME_WORDS:
            raise O2KSimError(f"plot_runtime: measure must be one of {', '.join(RUNTIME_WORDS)}")
        F = _figures()
        with F.report_style():
            return F.runtime_figure(self._groups(), list(self.results), [""], measure)

    def conclusions(self, measure: str = "mean_wait") -> list[str]:
        """What :meth:`plot_runtime` shows, in words: each result against the best, group by group.

        E.g. ``["lxf-backfill waits 35% longer than fcfs-backfill at every runtime."]``
        (see :func:`o2ksim.report.captions.by_runtime`).
        """
        if measure not in RUNTIME_WORDS:
            raise O2KSimError(f"conclusions: measure must be one of {', '.join(RUNTIME_WORDS)}")
        noun, more, less = RUNTIME_WORDS[measure]
        return captions.by_runtime(
            self._groups(), list(self.results), measure, noun=noun, more=more, less=less
        )

    def plot_top_waits(self) -> Any:
        """The highest 5% of each result's waits against their jobs' runtimes (T§3.6 Fig. 7)."""
        from o2ksim.report import views  # heavy: matplotlib and seaborn

        F = _figures()
        top = pd.concat(
            [data.top_waits(j).assign(policy=p, panel="") for p, j in self._jobs().items()],
            ignore_index=True,
        )
        with F.report_style():
            return views.top_waits_figure(top, list(self.results), [""])

    def plot_p95(self) -> Any:
        """The 95th-percentile wait versus runtime plot (T§3.5 Fig. 4(b))."""
        F = _figures()
        points = pd.concat(
            [data.p95_points(j).assign(policy=p, panel="") for p, j in self._jobs().items()],
            ignore_index=True,
        )
        with F.report_style():
            return F.p95_figure(points, list(self.results), [""])

    def plot_overall(self) -> Any:
        """Overall mean, 95th-percentile and maximum wait and mean slowdown, one bar per result."""
        F = _figures()
        table = pd.DataFrame(
            [
                {"policy": p, **{k: r.summary.get(k) for k in MEASURES}}
                for p, r in self.results.items()
            ]
        )
        with F.report_style():
            return F.overall_figure(table, list(self.results), None)

    def plot_classes(self, measure: str = "mean_wait", machine: Any = "o2k") -> Any:
        """Mean or max wait, or mean slowdown, per NCSA-LSF* job class (T§3.6 Figs. 5-6).

        ``machine``: whose LSF classes to use (default the O2K hosts).
        """
        F = _figures()
        classes = pd.concat(
            [
                data.class_groups(j, machine).assign(policy=p, panel="")
                for p, j in self._jobs().items()
            ],
            ignore_index=True,
        )
        with F.report_style():
            return F.class_figure(classes, list(self.results), [""], measure)


def _check_result(where: str, result: Any) -> None:
    """Refuse, in one line, what is not a result of :func:`~o2ksim.run.api.simulate`."""
    needed = ("jobs", "segments", "summary", "policy", "config", "machine")
    if not all(hasattr(result, name) for name in needed):
        raise O2KSimError(
            f"{where}: {result!r} is not a result of simulate() (it has no "
            f"{', '.join(n for n in needed if not hasattr(result, n))})"
        )


def compare(results: Sequence[Any], labels: Sequence[str] | None = None) -> Comparison:
    """A :class:`Comparison` of several :class:`~o2ksim.run.results.Result` objects.

    Columns: policy, jobs (analysed), and the overall measures of
    :func:`o2ksim.metrics.summary` -- waits in hours.  ``labels`` names the
    rows (default: each result's label or policy name).
    """
    if isinstance(results, str | bytes) or not isinstance(results, Iterable):
        raise O2KSimError(f"compare: expected a list of results (from simulate), got {results!r}")
    results = list(results)
    if not results:
        raise O2KSimError("compare: give at least one result")
    for r in results:
        _check_result("compare", r)
    names = _labels(results, labels)
    rows = []
    for r in results:
        s = r.summary
        row: dict[str, Any] = {"policy": r.policy.get("name"), "jobs": s.get("jobs")}
        for key, col in MEASURES.items():
            v = s.get(key)
            row[col] = v / HOUR if (v is not None and key.endswith("_wait")) else v
        rows.append(row)
    out = Comparison(pd.DataFrame(rows, index=pd.Index(names, name="result")))
    out.results = dict(zip(names, results, strict=True))
    return out


MAX_BINS = 1_000_000
"""The most bins :func:`timeline` draws (a time series finer than its figure has pixels)."""


def timeline(result: Any, bins: int = 200) -> Any:
    """Utilisation (fraction of processors) and queue length over time for one result.

    Both are exact time averages per bin (:func:`o2ksim.report.data.utilisation_series`,
    :func:`~o2ksim.report.data.queue_series`); the analysis window is shaded.
    """
    _check_result("timeline", result)
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MAX_BINS:
        raise O2KSimError(
            f"timeline: bins must be a whole number from 1 to {MAX_BINS:,}, got {shown(bins)}"
        )
    F = _figures()
    jobs, segs = result.jobs, result.segments
    t0 = float(jobs["submit"].min())
    t1 = float(max(jobs["end"].max(), segs["end"].max() if len(segs) else t0 + 1))
    util = data.utilisation_series(segs, result.machine.total_procs, t0, t1, bins)
    queue = data.queue_series(jobs, t0, t1, bins)
    day = 86400.0 if t1 - t0 > 3 * 86400 else 3600.0
    unit = "days" if day == 86400.0 else "hours"
    with F.report_style():
        fig, (a1, a2) = F.subplots(2, 1, figsize=(10, 5.2), sharex=True, layout="constrained")
        a1.step(util["start"] / day, util["utilisation"], where="post", linewidth=1.2)
        a1.set_ylim(0, 1.05)
        a1.set_ylabel("utilisation\n(fraction of processors)")
        a2.step(queue["start"] / day, queue["queue"], where="post", color="C1", linewidth=1.2)
        a2.set_ylim(bottom=0)
        a2.set_ylabel("waiting jobs")
        a2.set_xlabel(f"time ({unit} since the trace start)")
        win = result.config.get("window")
        if win:
            for ax in (a1, a2):
                ax.axvspan(win[0] / day, win[1] / day, color="0.93", zorder=0)
        fig.suptitle(f"{result_label(result)}: utilisation and queue length", fontweight="bold")
    return fig


__all__ = ["Comparison", "compare", "result_html", "result_label", "result_text", "timeline"]
