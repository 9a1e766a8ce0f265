"""Seaborn figures of a workload characterisation (thesis ch. 4 style).

One PNG per figure, drawn from a :class:`~o2ksim.workloads.characterize.Characterization`:

* ``jobs_per_day.png`` -- mean jobs per day of the week (T Fig. 14);
* ``jobs_per_hour.png`` -- mean jobs per hour, weekdays and weekends (T Figs. 15, 18);
* ``interarrivals.png`` -- complementary CDF of interarrival times per period
  with the hyperexponential, Weibull and exponential fits, log time axis (T Fig. 20);
* ``processors.png`` -- requested processors (T Figs. 21-23);
* ``memory.png`` -- requested memory CDF, log axis (T Fig. 25);
* ``runtimes.png`` -- requested and actual runtime CDFs, log axis (T Figs. 30, 35);
* ``ratio.png`` -- actual/requested runtime CDF (T Fig. 40);
* ``lsf_classes.png`` -- job share per LSF class next to the Table 6 mean.

Runtime axes are logarithmic.  Figures are drawn without pyplot, so the
user's matplotlib backend and style are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from o2ksim.files import atomic_path
from o2ksim.report.figures import report_style, subplots

__all__ = ["write_figures"]

_TICKS = (1.0, 10.0, 60.0, 600.0, 3600.0, 36000.0, 360000.0, 3600000.0)
_LABELS = ("1s", "10s", "1m", "10m", "1h", "10h", "100h", "1000h")


def _time_axis(ax: Any, label: str) -> None:
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(_TICKS))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda x, _p: dict(zip(_TICKS, _LABELS, strict=True)).get(x, ""))
    )
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(label)


def _ecdf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.sort(np.asarray(x, dtype=float))
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)


def write_figures(
    char: Any, out_dir: str | Path, *, path_of: Callable[[str], Path] | None = None
) -> list[Path]:
    """Draw the characterisation's figures into *out_dir*; returns the files written.

    Each is written whole or not at all (:func:`o2ksim.files.atomic_path`).  With
    ``path_of``, figure ``NAME.png`` is written to ``path_of("NAME.png")`` instead (a
    :class:`~o2ksim.outfiles.Staging`'s temporary path: ``o2ksim characterize --out``
    commits the figures with the tables); the paths returned are still ``out_dir/NAME.png``.
    """
    d = Path(out_dir)

    def save(fig: Any, name: str) -> Path:
        fig.tight_layout()
        if path_of is not None:
            fig.savefig(path_of(name), dpi=120, format="png")
        else:
            with atomic_path(d / name) as tmp:  # a full disk leaves no half-written figure
                fig.savefig(tmp, dpi=120, format="png")
        return d / name

    if path_of is None:
        d.mkdir(parents=True, exist_ok=True)
    with report_style():
        return _write_figures(char, save)


def _write_figures(char: Any, _save: Callable[[Any, str], Path]) -> list[Path]:
    out: list[Path] = []
    t = char.tables
    data = char.data

    fig, ax = subplots(figsize=(6, 3.5))
    sns.barplot(
        data=t["jobs_per_day_of_week"], x="day", y="mean_jobs", ax=ax, color=sns.color_palette()[0]
    )
    ax.set_ylabel("jobs per day (mean)")
    ax.set_xlabel("")
    out.append(_save(fig, "jobs_per_day.png"))

    fig, ax = subplots(figsize=(6, 3.5))
    hours = t["jobs_per_hour"].melt(id_vars="hour", var_name="days", value_name="jobs")
    hours["days"] = hours["days"].str.replace("_mean", "")
    sns.lineplot(data=hours, x="hour", y="jobs", hue="days", marker="o", ax=ax)
    ax.set_ylabel("jobs per hour (mean)")
    ax.set_xticks(range(0, 25, 4))
    out.append(_save(fig, "jobs_per_hour.png"))

    periods = t["periods"]
    inter = data.get("interarrivals", {})
    names = [n for n in periods["period"] if len(inter.get(n, [])) > 1]
    if names:
        fig, axes = subplots(
            1, len(names), figsize=(3.2 * len(names), 3.2), sharey=True, squeeze=False
        )
        for ax, name in zip(axes[0], names, strict=True):
            x, f = _ecdf(inter[name])
            ax.plot(x, 1 - f + 1.0 / len(x), color="black", lw=1.5, label="observed")
            row = periods[periods["period"] == name].iloc[0]
            grid = np.logspace(0, np.log10(max(x.max(), 10.0)), 200)
            if "hyperexp_p1" in row and pd.notna(row.get("hyperexp_p1")):
                p1, m1, m2 = row["hyperexp_p1"], row["hyperexp_mean1"], row["hyperexp_mean2"]
                ax.plot(
                    grid,
                    p1 * np.exp(-grid / m1) + (1 - p1) * np.exp(-grid / m2),
                    ls="--",
                    label="hyperexp",
                )
                ax.plot(
                    grid,
                    np.exp(-((grid / row["weibull_scale"]) ** row["weibull_shape"])),
                    ls=":",
                    label="Weibull",
                )
                ax.plot(grid, np.exp(-grid / row["mean_s"]), ls="-.", label="exponential")
            _time_axis(ax, "interarrival time")
            ax.set_yscale("log")
            ax.set_ylim(1e-4, 1.1)
            ax.set_title(f"{name}\nmean {row['mean_s']:.0f}s CV {row['cv']:.2f}", fontsize=9)
        axes[0][0].set_ylabel("P(X > x)")
        axes[0][-1].legend(fontsize=7)
        out.append(_save(fig, "interarrivals.png"))

    fig, ax = subplots(figsize=(6, 3.5))
    sns.barplot(data=t["processors"], x="procs", y="share", ax=ax, color=sns.color_palette()[1])
    ax.set_ylabel("share of jobs")
    ax.set_xlabel("requested processors")
    out.append(_save(fig, "processors.png"))

    mem = data.get("mem_mb")
    if mem is not None and np.isfinite(mem).any():
        fig, ax = subplots(figsize=(6, 3.5))
        x, f = _ecdf(mem[np.isfinite(mem) & (mem > 0)])
        ax.step(x, f, where="post")
        ax.set_xscale("log")
        ax.set_xlabel("requested memory (MB)")
        ax.set_ylabel("cumulative share of jobs")
        out.append(_save(fig, "memory.png"))

    fig, ax = subplots(figsize=(6, 3.5))
    req, run = data["req"], data["run"]
    if (req > 0).any():
        x, f = _ecdf(req[req > 0])
        ax.step(x, f, where="post", label="requested")
    x, f = _ecdf(np.maximum(run[run >= 0], 1))
    ax.step(x, f, where="post", label="actual")
    _time_axis(ax, "runtime")
    ax.set_ylabel("cumulative share of jobs")
    ax.legend()
    out.append(_save(fig, "runtimes.png"))

    ratio = data.get("ratio")
    if ratio is not None and len(ratio):
        fig, ax = subplots(figsize=(6, 3.5))
        x, f = _ecdf(np.maximum(ratio, 1e-5))
        ax.step(x, f, where="post")
        ax.set_xscale("log")
        ax.set_xlabel("actual / requested runtime")
        ax.set_ylabel("cumulative share of jobs")
        ax.axvline(1.0, color="grey", lw=0.8)
        out.append(_save(fig, "ratio.png"))

    cls = t["lsf_classes"]
    cls = cls[cls["class"] != "none"].melt(
        id_vars="class",
        value_vars=["share", "table6_share"],
        var_name="source",
        value_name="share_of_jobs",
    )
    cls["source"] = cls["source"].map(
        {"share": "this trace", "table6_share": "thesis Table 6 (mean)"}
    )
    fig, ax = subplots(figsize=(8, 3.5))
    sns.barplot(data=cls, x="class", y="share_of_jobs", hue="source", ax=ax)
    ax.set_ylabel("share of jobs")
    ax.set_xlabel("LSF job class")
    ax.tick_params(axis="x", rotation=45)
    out.append(_save(fig, "lsf_classes.png"))
    return out
