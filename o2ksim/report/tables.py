"""The report's tables: the ranking of the policies, its verdict sentences, the list of runs.

Each function turns :class:`~o2ksim.report.gather.Gathered` tables (or the
results' run table) into a small DataFrame with the page's column names and
units (waits in hours); :func:`html_table` renders one as HTML with the best
value of each column marked.
"""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd

from o2ksim.experiments.store import Results
from o2ksim.report.gather import HOUR, Gathered, level_text

__all__ = [
    "LOWER_IS_BETTER",
    "format_value",
    "html_table",
    "ranking",
    "rankings",
    "runs_table",
    "verdict",
]


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
            f"{c.rsplit('.', 1)[-1]} {level_text(part[c].iloc[0])}" for c in g.level_cols
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


def format_value(v: Any) -> str:
    """A table cell's text: NaN as a dash, large numbers with separators, HTML-escaped."""
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.3f}" if abs(v) < 1 else f"{v:.2f}"
    return html.escape(level_text(v))


def html_table(df: pd.DataFrame, best: dict[str, Any] | None = None, cls: str = "") -> str:
    """*df* as an HTML table; a cell equal to ``best[column]`` is marked as the best."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for _, row in df.iterrows():
        cells = []
        for c in df.columns:
            v = row[c]
            text = format_value(v.item() if hasattr(v, "item") else v)
            mark = best is not None and c in best and v == best[c]
            num = isinstance(v, int | float) and not isinstance(v, bool)
            cells.append(f"<td class='{'num' if num else ''}{' best' if mark else ''}'>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def verdict(rank: pd.DataFrame) -> list[str]:
    """Sentences naming the best policy for each overall measure (from the ranking table)."""
    out: list[str] = []
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
        out.append(f"Lowest {col.replace(' (h)', '')}: {names} ({format_value(best)}{unit}{gap}).")
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
