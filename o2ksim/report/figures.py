"""Seaborn figures in the thesis's conventions (T§3.5 Fig. 4; T§5.2 Figs. 49-50; T§5.4 Fig. 60).

Every figure compares policies (one colour and marker per policy, the same in
every figure) and draws one panel per *panel* value -- a month, a load, an
estimate scenario: whatever the sweep varies besides the policy.  Runtime
axes are logarithmic with ticks at 1 minute, 10 minutes, 1 hour, 10 hours,
100 hours; waits are in hours.

The functions take tidy frames (see :mod:`o2ksim.report.gather` for how they
are gathered) and return :class:`matplotlib.figure.Figure` objects; nothing
here reads files.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter

from o2ksim.report.figure_style import (
    HOUR,
    _grid,
    _legend,
    _runtime_axis,
    floored_t_interval,
    mean_line,
    policy_styles,
    report_style,
    save,
    setup_style,
    slowdown_scale,
    subplots,
    wait_scale,
    wrap_label,
)


def overall_figure(
    table: pd.DataFrame, policies: Sequence[str], x: str | None, xlabel: str = "",
    title: str = "Overall performance",
) -> Figure:  # fmt: skip
    """Overall mean, 95th-percentile and maximum wait and mean slowdown (T§5.4 Fig. 60 style).

    ``table``: one row per run with ``policy``, the panel column ``x`` (or
    ``None``: one group) and the measures in seconds.  Bars are means over the
    runs of a group; with several runs (seeds) per bar, the black lines are
    95% Student-t confidence intervals (:func:`o2ksim.report.data.t_interval`,
    as in the runtime figures; cut at 0 for a wait, 1 for a slowdown).  Policy names under the bars are wrapped,
    not turned, so that long ones do not run into each other.
    """
    colours, _ = policy_styles(policies)
    data = table.copy()
    for k in ("mean_wait", "p95_wait", "max_wait"):
        data[k] = data[k] / HOUR
    xcol = x if x is not None else "policy"
    measures = [
        ("mean_wait", "mean wait (h)"),
        ("p95_wait", "95th-percentile wait (h)"),
        ("max_wait", "maximum wait (h)"),
        ("mean_slowdown", "mean slowdown"),
    ]
    n_bars = data[xcol].nunique() * (len(policies) if x is not None else 1)
    per_bar = 0.32 if x is not None else 1.45  # room for a wrapped policy name under each bar
    fig, axes = _grid(4, width=min(7.5, max(4.2, per_bar * n_bars)), max_cols=2)
    multi = data.groupby([xcol, "policy"]).size().max() > 1
    order = list(dict.fromkeys(data[xcol]))
    long_labels = sum(len(str(o)) for o in order) > 60
    for ax, (col, label) in zip(axes, measures, strict=True):
        sns.barplot(
            data=data, x=xcol, y=col, hue="policy", hue_order=list(policies),
            order=order, palette=colours, ax=ax, err_kws={"linewidth": 1.2},
            errorbar=floored_t_interval(1.0 if col == "mean_slowdown" else 0.0) if multi else None,
        )  # fmt: skip
        ax.set_ylabel(label)
        ax.set_xlabel("" if x is None else (xlabel or x))
        ax.set_xticks(range(len(order)), [wrap_label(o, 11 if x is None else 16) for o in order])
        if x is not None and long_labels:
            ax.tick_params(axis="x", labelrotation=25)
            for t in ax.get_xticklabels():
                t.set_horizontalalignment("right")
        if col != "mean_slowdown":
            wait_scale(ax, data[col])
        else:
            slowdown_scale(ax, data[col])
    return _legend(fig, axes, policies, title)


def runtime_figure(
    groups: pd.DataFrame,
    policies: Sequence[str],
    panels: Sequence[str],
    measure: str,
) -> Figure:
    """Average wait, maximum wait or average slowdown versus actual runtime (T§3.5 Fig. 4).

    ``groups``: :func:`o2ksim.report.data.runtime_groups` rows with ``panel``
    and ``policy`` columns.  ``measure``: ``mean_wait`` (Fig. 4(a), Fig. 49),
    ``max_wait`` (Fig. 4(c), Fig. 50(e)-(h); plotted at the runtime where the
    maximum occurs), ``mean_slowdown`` (Fig. 4(d), Fig. 50(c)-(d); log scale)
    or ``max_slowdown`` (Fig. 4(e); at the runtime where it occurs; log scale).
    """
    colours, markers = policy_styles(policies)
    titles = {
        "mean_wait": ("Average wait versus actual runtime", "average wait (h)"),
        "max_wait": ("Maximum wait versus actual runtime", "maximum wait (h)"),
        "mean_slowdown": ("Average slowdown versus actual runtime", "average slowdown"),
        "max_slowdown": ("Maximum slowdown versus actual runtime", "maximum slowdown"),
    }
    title, ylabel = titles[measure]
    xcol = {"max_wait": "runtime_at_max", "max_slowdown": "runtime_at_max_slowdown"}.get(
        measure, "runtime_gmean"
    )
    slowdown = measure.endswith("slowdown")
    fig, axes = _grid(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        part = groups.loc[groups["panel"] == panel]
        for pol in policies:
            g = part.loc[part["policy"] == pol].sort_values(xcol)
            if g.empty:
                continue
            y = g[measure] / (1.0 if slowdown else HOUR)
            ax.plot(
                g[xcol].clip(lower=3.0),
                y,
                marker=markers[pol],
                color=colours[pol],
                label=pol,
                linewidth=1.6,
                markersize=5,
                clip_on=False,  # a marker on the axis edge is drawn whole
            )
        _runtime_axis(ax)
        ax.set_ylabel(ylabel)
        if slowdown:
            ax.set_yscale("log")
        else:
            wait_scale(ax, groups[measure] / HOUR)  # the same scale in every panel
            top = float(np.nanmax(groups[measure])) / HOUR if len(groups) else 0.0
            if top > 0:
                ax.set_ylim(top=top * (1.6 if ax.get_yscale() == "symlog" else 1.05))
        if len(panels) > 1 or panel:
            ax.set_title(panel or "all runs")
    return _legend(fig, axes, policies, title)


def p95_figure(points: pd.DataFrame, policies: Sequence[str], panels: Sequence[str]) -> Figure:
    """The 95th-percentile wait plot of T§3.5 Fig. 4(b) (Fig. 50(a)-(b)).

    ``points``: :func:`o2ksim.report.data.p95_points` rows with ``panel`` and
    ``policy``: after the top 5% of the waits are removed, the three largest
    waits in each of six runtime ranges, at the runtimes where they occur.
    """
    colours, markers = policy_styles(policies)
    fig, axes = _grid(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        part = points.loc[points["panel"] == panel]
        for pol in policies:
            g = part.loc[part["policy"] == pol].sort_values("run_time")
            if g.empty:
                continue
            ax.plot(
                g["run_time"].clip(lower=3.0),
                g["wait"] / HOUR,
                marker=markers[pol],
                color=colours[pol],
                label=pol,
                linewidth=0.8,
                markersize=5.5,
                clip_on=False,
            )
        for b in (60.0, 600.0, 6000.0, 60000.0, 60 * 10**3.5):
            ax.axvline(b, color="0.85", linewidth=0.8, zorder=0)
        _runtime_axis(ax)
        ax.set_ylabel("95th-percentile wait (h)")
        wait_scale(ax, points["wait"] / HOUR, headroom=True)
        if len(panels) > 1 or panel:
            ax.set_title(panel or "all runs")
    return _legend(
        fig, axes, policies, "95th-percentile wait versus actual runtime (top 3 per range)"
    )


def size_figure(
    groups: pd.DataFrame, policies: Sequence[str], panels: Sequence[str], by: str
) -> Figure:
    """Average and maximum wait versus requested processors or memory (one row per panel).

    ``groups``: :func:`o2ksim.report.data.size_groups` rows with ``panel``
    and ``policy``, or their mean over seeds (:func:`o2ksim.report.data.mean_ci`
    rows with ``mean_wait_lo`` ... ``max_wait_hi``): then each point is the
    mean with its 95% interval as error bars, the policies set slightly apart
    so that the bars stay visible (as :func:`o2ksim.report.views.mean_runtime_figure`).
    """
    colours, markers = policy_styles(policies)
    what = "requested processors" if by == "procs" else "requested memory"
    means = "mean_wait_hi" in groups
    fig, axes = subplots(
        len(panels), 2, figsize=(10.5, 3.3 * len(panels) + 0.8), squeeze=False, layout="constrained"
    )
    order = groups.sort_values("group").drop_duplicates("group")
    labels = list(order["label"])
    pos = {g: i for i, g in enumerate(order["group"])}
    for row, panel in zip(axes, panels, strict=True):
        part = groups.loc[groups["panel"] == panel]
        for ax, col, ylabel in zip(
            row, ("mean_wait", "max_wait"), ("average wait (h)", "maximum wait (h)"), strict=True
        ):
            for k, pol in enumerate(policies):
                g = part.loc[part["policy"] == pol].sort_values("group")
                if g.empty:
                    continue
                x = np.asarray([pos[v] for v in g["group"]], dtype=float)
                if means:
                    x = x + 0.08 * (k - (len(policies) - 1) / 2)
                    mean_line(ax, x, g, col, scale=HOUR, floor=0.0, colour=colours[pol],
                              marker=markers[pol], label=pol)  # fmt: skip
                    continue
                ax.plot(
                    x, g[col] / HOUR, marker=markers[pol], color=colours[pol], label=pol,
                    linewidth=1.6, markersize=5, clip_on=False,
                )  # fmt: skip
            ax.set_xticks(
                range(len(labels)),
                labels,
                rotation=30 if by == "mem" else 0,
                ha="right" if by == "mem" else "center",
            )
            ax.set_xlabel(what)
            ax.set_ylabel(ylabel)
            wait_scale(ax, groups[[col, f"{col}_hi"] if means else [col]].to_numpy(float) / HOUR)
            if means:
                top = float(np.nanmax(groups[f"{col}_hi"])) / HOUR if len(groups) else 0.0
                if top > 0:
                    ax.set_ylim(top=top * (1.6 if ax.get_yscale() == "symlog" else 1.05))
            if len(panels) > 1 or panel:
                ax.set_title(panel or "all runs")
    flat = list(axes.flat)
    title = f"Wait versus {what}"
    if means:
        title += ", mean over seeds (bars: 95% confidence interval)"
    return _legend(fig, flat, policies, title)


def utilisation_figure(
    series: pd.DataFrame,
    policies: Sequence[str],
    panels: Sequence[str],
    window: tuple[float, float] | None,
) -> Figure:
    """Fraction of processors in use over time, one line per policy, one row per panel.

    ``series``: :func:`o2ksim.report.data.utilisation_series` rows with
    ``panel`` and ``policy``; times in seconds, drawn in days.  The analysis
    window is shaded.  Given a mean over seeds (:func:`o2ksim.report.data.mean_ci`
    rows with ``utilisation_lo`` and ``utilisation_hi``), the line is the mean
    per time bin and a band of the policy's colour its 95% interval (error
    bars on a hundred bins would hide the lines).
    """
    colours, _ = policy_styles(policies)
    fig, axes = subplots(
        len(panels), 1, figsize=(10.5, 2.9 * len(panels) + 0.8), squeeze=False, layout="constrained"
    )
    for ax, panel in zip(axes[:, 0], panels, strict=True):
        part = series.loc[series["panel"] == panel]
        for pol in policies:
            g = part.loc[part["policy"] == pol]
            if g.empty:
                continue
            x = [*(g["start"] / 86400.0), g["end"].iloc[-1] / 86400.0]
            y = [*g["utilisation"], g["utilisation"].iloc[-1]]
            ax.step(x, y, where="post", color=colours[pol], label=pol, linewidth=1.3)
            if "utilisation_hi" in g:
                lo = [*g["utilisation_lo"].clip(lower=0.0), g["utilisation_lo"].iloc[-1]]
                hi = [*g["utilisation_hi"].clip(upper=1.0), min(1.0, g["utilisation_hi"].iloc[-1])]
                ax.fill_between(x, lo, hi, step="post", color=colours[pol], alpha=0.15, linewidth=0)
        if window is not None:
            ax.axvspan(
                window[0] / 86400.0,
                window[1] / 86400.0,
                color="0.93",
                zorder=0,
                label="analysis window",
            )
        ax.set_ylim(0, 1.05)
        ax.yaxis.set_major_locator(FixedLocator([0, 0.25, 0.5, 0.75, 1.0]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.set_xlabel("time (days since the trace start)")
        ax.set_ylabel("utilisation\n(fraction of processors)")
        if len(panels) > 1 or panel:
            ax.set_title(panel or "all runs")
    title = "Utilisation over time"
    if "utilisation_hi" in series:
        title += ", mean over seeds (bands: 95% confidence interval)"
    return _legend(fig, list(axes[:, 0]), [*policies, "analysis window"], title)


def class_figure(classes: pd.DataFrame, policies: Sequence[str], panels: Sequence[str],
                 measure: str, intervals: bool = False) -> Figure:  # fmt: skip
    """Average or maximum wait (or average slowdown) per NCSA-LSF* job class (T§3.6 Figs. 5-6).

    ``classes``: :func:`o2ksim.report.data.class_groups` rows with ``panel``
    and ``policy``.  One group of bars per job class (time class x size class,
    thesis Table 3), one bar per policy; one panel per month / load / level.
    With ``intervals`` the rows of a panel, policy and class are runs (seeds):
    the bar is their mean and the black line its 95% Student-t interval
    (:func:`o2ksim.report.data.t_interval`, as in :func:`overall_figure`; cut
    at 0 for a wait, 1 for a slowdown).
    """
    colours, _ = policy_styles(policies)
    titles = {
        "mean_wait": ("Average wait per job class (as T§3.6 Fig. 5)", "average wait (h)"),
        "max_wait": ("Maximum wait per job class (as T§3.6 Fig. 6)", "maximum wait (h)"),
        "mean_slowdown": ("Average slowdown per job class", "average slowdown"),
    }
    title, ylabel = titles[measure]
    data = classes.copy()
    if measure != "mean_slowdown":
        data[measure] = data[measure] / HOUR
    order = list(dict.fromkeys(data["class"]))
    fig, axes = _grid(len(panels), width=max(4.6, 0.5 * len(order)), max_cols=2)
    for ax, panel in zip(axes, panels, strict=True):
        part = data.loc[data["panel"] == panel]
        sns.barplot(
            data=part, x="class", y=measure, hue="policy", hue_order=list(policies),
            order=order, palette=colours, ax=ax,
            errorbar=floored_t_interval(1.0 if measure == "mean_slowdown" else 0.0) if intervals
            else None, err_kws={"linewidth": 1.2},
        )  # fmt: skip
        ax.set_xlabel("job class (time-size)")
        ax.set_ylabel(ylabel)
        ax.tick_params(axis="x", labelrotation=45)
        if measure == "mean_slowdown":
            slowdown_scale(ax, data[measure])
        else:
            wait_scale(ax, data[measure])
        if len(panels) > 1 or panel:
            ax.set_title(panel or "all runs")
    if intervals:
        title += ", mean over seeds (black lines: 95% confidence interval)"
    return _legend(fig, axes, policies, title)


__all__ = [
    "class_figure",
    "overall_figure",
    "p95_figure",
    "policy_styles",
    "report_style",
    "runtime_figure",
    "save",
    "setup_style",
    "size_figure",
    "slowdown_scale",
    "subplots",
    "utilisation_figure",
    "wait_scale",
]
