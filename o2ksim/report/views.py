"""More report figures: means over seeds with 95% intervals, the highest waits, job counts, the queue.

* :func:`mean_runtime_figure` -- a runtime-group measure (T§3.5 Fig. 4) as
  the mean over seeds, with its 95% confidence interval as error bars; one panel per level of the other factors;
* :func:`top_waits_figure` -- the highest 5% of the waits against the actual
  runtime of their jobs (T§3.6 Fig. 7), one marker per job;
* :func:`counts_figure` -- how many jobs fall in each of the thesis's eleven
  runtime groups;
* :func:`queue_figure` -- the number of waiting jobs over time (one run).

They share the conventions of :mod:`o2ksim.report.figures` (one colour and
marker per policy, log runtime axes, legends above the panels) and, like it,
take tidy frames and return :class:`~matplotlib.figure.Figure` objects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from o2ksim.report.captions import runtime_group_label
from o2ksim.report.figure_style import (
    HOUR,
    _grid,
    _legend,
    _runtime_axis,
    mean_line,
    policy_styles,
    subplots,
    wait_scale,
)

__all__ = ["counts_figure", "mean_runtime_figure", "queue_figure", "top_waits_figure"]

MEAN_TITLES = {
    "mean_wait": ("Average wait versus actual runtime, mean over seeds", "average wait (h)"),
    "max_wait": ("Maximum wait versus actual runtime, mean over seeds", "maximum wait (h)"),
    "p95_wait": (
        "95th-percentile wait versus actual runtime, mean over seeds",
        "largest wait per range\nafter the top 5% (h)",
    ),
    "mean_slowdown": ("Average slowdown versus actual runtime, mean over seeds", "average slowdown"),
    "max_slowdown": ("Maximum slowdown versus actual runtime, mean over seeds", "maximum slowdown"),
}


def mean_runtime_figure(
    means: pd.DataFrame, policies: Sequence[str], panels: Sequence[str], measure: str
) -> Figure:
    """``measure`` per runtime group: the mean over seeds, a line; its 95% interval, error bars.

    ``means``: :func:`o2ksim.report.data.mean_ci` rows (``panel``,
    ``policy``, ``group``, ``runtime_gmean``, ``measure``, ``measure_lo``,
    ``measure_hi``).  ``measure``: a runtime-group measure of
    :func:`o2ksim.report.data.runtime_groups`, or ``p95_wait``: the largest
    remaining wait of each range of the 95th-percentile plot
    (:func:`o2ksim.report.gather.p95_over_seeds`), drawn at the mean of its
    seeds' runtimes.  The policies' points are set slightly apart along the
    runtime axis so that their error bars stay visible.  Each group is drawn
    at the mean of its seeds' geometric mean runtimes (for the maxima too: their runtimes differ from seed to
    seed).  Slowdowns on a log axis; waits on :func:`wait_scale`'s axis.
    """
    colours, markers = policy_styles(policies)
    title, ylabel = MEAN_TITLES[measure]
    slowdown = measure.endswith("slowdown")
    scale = 1.0 if slowdown else HOUR
    fig, axes = _grid(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        part = means.loc[means["panel"] == panel]
        for k, pol in enumerate(policies):
            g = part.loc[part["policy"] == pol].sort_values("group")
            if g.empty:
                continue
            # the policies' points side by side (a few percent of a decade apart), so that
            # their intervals do not hide each other
            dodge = 10 ** (0.04 * (k - (len(policies) - 1) / 2))
            x = (g["runtime_gmean"] * dodge).clip(lower=3.0).to_numpy(float)
            mean_line(ax, x, g, measure, scale=scale, floor=1.0 if slowdown else 0.0,
                      colour=colours[pol], marker=markers[pol], label=pol)  # fmt: skip
        _runtime_axis(ax)
        ax.set_ylabel(ylabel)
        if slowdown:
            ax.set_yscale("log")
            ax.set_ylabel(ylabel + " (log scale)")
        else:
            wait_scale(ax, np.concatenate([means[measure], means[f"{measure}_hi"]]) / HOUR)
            top = float(np.nanmax(means[f"{measure}_hi"])) / HOUR if len(means) else 0.0
            if top > 0:
                ax.set_ylim(top=top * (1.6 if ax.get_yscale() == "symlog" else 1.05))
        if len(panels) > 1 or panel:
            ax.set_title(panel or "all runs")
    return _legend(fig, axes, policies, title + " (bars: 95% confidence interval)")


def top_waits_figure(top: pd.DataFrame, policies: Sequence[str], panels: Sequence[str]) -> Figure:
    """The highest 5% of the waits against their jobs' actual runtime (T§3.6 Fig. 7).

    ``top``: :func:`o2ksim.report.data.top_waits` rows with ``panel`` and
    ``policy``; one marker per job.  Waits in hours on :func:`wait_scale`'s axis.
    """
    colours, markers = policy_styles(policies)
    fig, axes = _grid(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        part = top.loc[top["panel"] == panel]
        for pol in policies:
            g = part.loc[part["policy"] == pol]
            if g.empty:
                continue
            ax.scatter(
                g["run_time"].clip(lower=3.0), g["wait"] / HOUR, marker=markers[pol],
                color=colours[pol], label=pol, s=18, alpha=0.75, clip_on=False,
            )  # fmt: skip
        _runtime_axis(ax)
        ax.set_ylabel("wait (h)")
        wait_scale(ax, top["wait"] / HOUR, headroom=True)
        if len(panels) > 1 or panel:
            ax.set_title(panel or "all runs")
    return _legend(fig, axes, policies, "Highest 5% of the waits versus actual runtime")


def counts_figure(counts: pd.DataFrame, policies: Sequence[str], panels: Sequence[str]) -> Figure:
    """Jobs per runtime group (the thesis's eleven groups), one bar per group and policy.

    ``counts``: rows ``panel``, ``policy``, ``group``, ``jobs``.  When every
    policy has the same counts (the same jobs all ran) one grey bar per group
    is drawn, labelled "every policy".
    """
    colours, _ = policy_styles(policies)
    groups = list(range(int(counts["group"].max()) + 1)) if len(counts) else []
    fig, axes = _grid(len(panels), width=6.0, height=3.6, max_cols=2)
    names: dict[str, None] = {}
    for ax, panel in zip(axes, panels, strict=True):
        part = counts.loc[counts["panel"] == panel]
        wide = part.pivot_table(index="group", columns="policy", values="jobs", aggfunc="sum")
        wide = wide.reindex(index=groups, columns=[p for p in policies if p in wide.columns])
        wide = wide.fillna(0)
        same = wide.shape[1] <= 1 or bool((wide.nunique(axis=1) <= 1).all())
        series = [("every policy", wide.iloc[:, 0], "0.55")] if same else [
            (p, wide[p], colours[p]) for p in wide.columns
        ]  # fmt: skip
        names.update((label, None) for label, _c, _k in series)
        width = 0.8 / len(series)
        for k, (label, col, colour) in enumerate(series):
            x = np.arange(len(groups)) - 0.4 + width * (k + 0.5)
            bars = ax.bar(x, col.to_numpy(float), width=width, color=colour, label=label)
            if same:
                ax.bar_label(bars, fmt="%d", fontsize=7, padding=1)
        ax.set_xticks(
            range(len(groups)), [runtime_group_label(g) for g in groups], rotation=40, ha="right"
        )
        ax.set_xlabel("actual runtime group")
        ax.set_ylabel("jobs")
        ax.margins(y=0.12)
        if len(panels) > 1 or panel:
            ax.set_title(panel or "all runs")
    return _legend(fig, axes, list(names), "Jobs per actual-runtime group")


def queue_figure(series: pd.DataFrame, window: tuple[float, float] | None, title: str) -> Figure:
    """The number of waiting jobs over time (time-averaged per bin), one run.

    ``series``: :func:`o2ksim.report.data.queue_series`; times in seconds,
    drawn in days.  The analysis window is shaded.
    """
    fig, axes = subplots(1, 1, figsize=(10.5, 3.4), layout="constrained")
    ax = axes
    x = [*(series["start"] / 86400.0), series["end"].iloc[-1] / 86400.0]
    y = [*series["queue"], series["queue"].iloc[-1]]
    ax.step(x, y, where="post", color="#0072B2", linewidth=1.3, label="waiting jobs")
    if window is not None:
        ax.axvspan(window[0] / 86400.0, window[1] / 86400.0, color="0.93", zorder=0,
                   label="analysis window")  # fmt: skip
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (days since the trace start)")
    ax.set_ylabel("waiting jobs")
    return _legend(fig, [ax], ["waiting jobs", "analysis window"], title)
