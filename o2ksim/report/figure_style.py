"""The report figures' look: style, axis scales, panel grid, legend, error-bar lines, saving.

Shared by every figure module (:mod:`~o2ksim.report.figures`,
:mod:`~o2ksim.report.views`), so a policy has the same colour and marker,
a runtime axis the same ticks and a mean over seeds the same error bars
wherever they are drawn.  Nothing here reads files; :func:`save` writes one.
"""

from __future__ import annotations

import contextlib
import math
import textwrap
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
import pandas as pd
import seaborn as sns
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

from o2ksim.files import atomic_path
from o2ksim.report.data import t_interval

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

HOUR = 3600.0
RUNTIME_TICKS = (10.0, 60.0, 600.0, 3600.0, 36000.0, 360000.0, 3600000.0)
RUNTIME_TICK_LABELS = ("10s", "1m", "10m", "1h", "10h", "100h", "1000h")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def style_rc() -> dict[RcKeyType, Any]:
    """The report's look as matplotlib settings: white grid, paper context, colour-blind palette."""
    return {
        **sns.axes_style("whitegrid"),
        **sns.plotting_context("paper", font_scale=1.1),
        "axes.prop_cycle": cycler(color=sns.color_palette("colorblind")),
    }


@contextlib.contextmanager
def report_style() -> Iterator[None]:
    """Use the report's look inside the ``with`` block only.

    The user's own matplotlib settings and backend are never changed: o2ksim
    draws on :class:`~matplotlib.figure.Figure` objects it creates itself
    (not pyplot), so importing o2ksim in a notebook leaves ``plt.plot`` working.
    """
    with matplotlib.rc_context(style_rc()):
        yield


def setup_style() -> None:
    """Kept for compatibility: the style is now applied per figure (:func:`report_style`)."""


def subplots(nrows: int = 1, ncols: int = 1, **kw: Any) -> tuple[Figure, Any]:
    """Like ``plt.subplots`` but without pyplot: the figure belongs to no window or backend.

    In Jupyter such a figure still displays (as the value of a cell); written
    to a file with :func:`save`.
    """
    fig_kw = {k: kw.pop(k) for k in ("figsize", "layout", "dpi") if k in kw}
    fig = Figure(**fig_kw)
    axes = fig.subplots(nrows, ncols, **kw)
    return fig, axes


def wait_scale(ax: Axes, hours: Sequence[float] | np.ndarray, headroom: bool = False) -> None:
    """Linear waits from 0, or a symmetric-log axis when they span more than 100x.

    With FCFS-backfill waits of minutes next to NCSA-LSF* waits of tens of
    hours, a linear axis flattens the small ones onto zero.  ``headroom``:
    the top is set a little above the largest wait, so that scattered
    markers at the top are drawn whole.
    """
    vals = np.asarray([v for v in np.asarray(hours, dtype=float).ravel() if np.isfinite(v)])
    pos = vals[vals > 0]
    log = bool(len(pos) and pos.max() / pos.min() > 100)
    if log:
        ax.set_yscale("symlog", linthresh=max(float(pos.min()), 0.01), linscale=0.5)
        ax.set_ylim(bottom=0)
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: "" if v == 0 else f"{v:g}"))
        ax.set_ylabel(ax.get_ylabel() + " (log scale)")
    else:
        ax.set_ylim(bottom=0)
    if headroom and len(pos):
        ax.set_ylim(top=float(pos.max()) * (1.6 if log else 1.05))


def slowdown_scale(ax: Axes, values: Sequence[float] | np.ndarray) -> None:
    """A log axis for slowdowns (which are at least 1) when they span more than 10x, else linear from 0.

    Slowdowns of 1.5 next to 40 on a linear axis hide the small ones, as
    linear waits do (:func:`wait_scale`).
    """
    vals = np.asarray(values, dtype=float).ravel()
    pos = vals[np.isfinite(vals) & (vals > 0)]
    if len(pos) and pos.max() / pos.min() > 10:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel(ax.get_ylabel() + " (log scale)")
    else:
        ax.set_ylim(bottom=0)


def wrap_label(text: str, width: int = 16) -> str:
    """A tick label broken at spaces into lines of about ``width`` characters (never inside a word)."""
    return "\n".join(textwrap.wrap(str(text), width, break_on_hyphens=False, break_long_words=False)) or str(text)


def policy_styles(policies: Sequence[str]) -> tuple[dict[str, tuple], dict[str, str]]:
    """A fixed colour and marker per policy, in the scenario's order.

    The colour-blind palette, reordered so that its two oranges are not
    neighbours.
    """
    base = sns.color_palette("colorblind", 10)
    colours = [base[i] for i in (0, 1, 2, 4, 3, 9, 5, 6, 7, 8)]
    return (
        {p: colours[i % len(colours)] for i, p in enumerate(policies)},
        {p: MARKERS[i % len(MARKERS)] for i, p in enumerate(policies)},
    )


def _runtime_axis(ax: Axes, label: bool = True) -> None:
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(RUNTIME_TICKS))
    ax.xaxis.set_major_formatter(
        FuncFormatter(
            lambda x, _pos: dict(zip(RUNTIME_TICKS, RUNTIME_TICK_LABELS, strict=True)).get(x, "")
        )
    )
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(3.0, 2e6)
    if label:
        ax.set_xlabel("actual runtime")


def _grid(
    n: int, width: float = 4.6, height: float = 3.4, max_cols: int = 3
) -> tuple[Figure, list]:
    cols = min(n, max_cols)
    rows = math.ceil(n / cols)
    if n == 1:
        width, height = max(width, 7.5), max(height, 4.4)
    fig, axes = subplots(
        rows, cols, figsize=(width * cols, height * rows + 0.8), squeeze=False, layout="constrained"
    )
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _legend(fig: Figure, axes: list, policies: Sequence[str], title: str) -> Figure:
    """The figure's title, then one legend for all panels under it (policies in order)."""
    height = fig.get_figheight()
    fig.text(0.5, 1 - 0.08 / height, title, ha="center", va="top", fontsize=13, fontweight="bold")
    handles, labels = [], []
    for ax in axes:
        h, lab = ax.get_legend_handles_labels()
        for hh, ll in zip(h, lab, strict=True):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    order = [labels.index(p) for p in policies if p in labels]
    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):  # as _grid makes them: room for title, legend
        engine.set(rect=(0, 0, 1, 1 - (0.75 if order else 0.4) / height))
    if not order:
        return fig
    fig.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.33 / height),
        ncol=min(len(order), 6),
        frameon=False,
    )
    return fig


def save(fig: Figure, path: str, dpi: int = 110, svg: bool = False) -> None:
    """Write ``fig`` as PNG (and, with ``svg``, as SVG beside it: same name, ``.svg``).

    Each file is written whole or not at all (a full disk leaves no half a
    figure).  The bounding box is fitted to everything drawn, so a legend or
    title outside the axes is never cut.
    """
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format="png", bbox_inches="tight", pad_inches=0.08)
    if svg:
        with atomic_path(str(path).rsplit(".", 1)[0] + ".svg") as tmp:
            fig.savefig(tmp, format="svg", bbox_inches="tight", pad_inches=0.08)


def mean_line(
    ax: Axes, x: np.ndarray, rows: pd.DataFrame, measure: str, *, scale: float, floor: float,
    colour: Any, marker: str, label: str,
) -> None:  # fmt: skip
    """A mean over seeds as a line with its 95% interval as error bars (the runtime figures' look).

    ``rows``: :func:`o2ksim.report.data.mean_ci` rows (``measure``,
    ``measure_lo``, ``measure_hi``) in drawing order, at positions ``x``;
    values divided by ``scale``; the lower bound cut at ``floor`` (a slowdown
    is at least 1, a wait at least 0), so a wide interval does not run below
    what the measure can be.
    """
    y = rows[measure].to_numpy(float) / scale
    lo = np.maximum(rows[f"{measure}_lo"].to_numpy(float) / scale, floor)
    hi = rows[f"{measure}_hi"].to_numpy(float) / scale
    ax.errorbar(
        x, y, yerr=[np.maximum(y - lo, 0.0), np.maximum(hi - y, 0.0)], color=colour, marker=marker,
        label=label, linewidth=1.6, markersize=5, capsize=2.5, clip_on=False,
    )  # fmt: skip


def floored_t_interval(floor: float) -> Callable[[np.ndarray], tuple[float, float]]:
    """:func:`o2ksim.report.data.t_interval` with its lower bound cut at ``floor``, for seaborn bars.

    The bar charts' black lines then stop where :func:`mean_line`'s error
    bars do: at 0 for a wait, at 1 for a slowdown.
    """

    def interval(values: np.ndarray) -> tuple[float, float]:
        lo, hi = t_interval(values)
        return max(lo, floor), hi

    return interval
