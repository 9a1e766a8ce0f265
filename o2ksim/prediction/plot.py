"""D Fig. 4: scatter of predicted against actual queue times, with the column means and medians."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["column_stats", "scatter_figure"]


def column_stats(
    predicted: Any, actual: Any, *, bins: int = 24, min_points: int = 5
) -> pd.DataFrame:
    """Mean and median of the actual times in each column (log-spaced bin) of predicted times."""
    p = np.asarray(predicted, dtype=float)
    a = np.asarray(actual, dtype=float)
    ok = np.isfinite(p) & np.isfinite(a)
    p, a = np.maximum(p[ok], 1.0), np.maximum(a[ok], 1.0)
    if len(p) == 0:
        return pd.DataFrame(columns=["lo", "hi", "center", "count", "mean_actual", "median_actual"])
    edges = np.geomspace(1.0, max(p.max(), 10.0) * 1.0001, bins + 1)
    which = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, bins - 1)
    rows = []
    for b in range(bins):
        sel = which == b
        if sel.sum() < min_points:
            continue
        rows.append(
            {
                "lo": edges[b],
                "hi": edges[b + 1],
                "center": float(np.sqrt(edges[b] * edges[b + 1])),
                "count": int(sel.sum()),
                "mean_actual": float(a[sel].mean()),
                "median_actual": float(np.median(a[sel])),
            }
        )
    return pd.DataFrame(rows)


def scatter_figure(predictions: pd.DataFrame, predictors: tuple[str, ...] | None = None) -> Any:
    """One panel per predictor: log-log scatter, identity line, column mean (solid) and median (dashed)."""
    # matplotlib is heavy: imported only when the figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = predictors or tuple(dict.fromkeys(predictions["predictor"]))
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4.2), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        g = predictions[(predictions["predictor"] == name) & predictions["predicted"].notna()]
        p = np.maximum(g["predicted"].to_numpy(dtype=float), 1.0)
        a = np.maximum(g["actual"].to_numpy(dtype=float), 1.0)
        ax.scatter(p, a, s=3, alpha=0.25, color="tab:blue", linewidths=0)
        hi = max(float(np.max(p)) if len(p) else 10.0, float(np.max(a)) if len(a) else 10.0, 10.0)
        ax.plot([1, hi], [1, hi], color="grey", lw=1.5, label="identity")
        cs = column_stats(p, a)
        if len(cs):
            ax.plot(cs["center"], cs["mean_actual"], color="black", lw=1.5, label="column mean")
            ax.plot(
                cs["center"],
                cs["median_actual"],
                color="black",
                lw=1.5,
                ls="--",
                label="column median",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(1, hi * 1.5)
        ax.set_ylim(1, hi * 1.5)
        ax.set_xlabel("predicted (s)")
        ax.set_ylabel("actual (s)")
        kind = "arrival" if name == "whole-queue" else "head of queue"
        ax.set_title(f"{name} ({kind}, {len(g)} predictions)", fontsize=10)
        ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    return fig
