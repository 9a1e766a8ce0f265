"""What each report figure shows, in sentences computed from the gathered tables.

:func:`findings` maps a figure's name (as in :data:`o2ksim.report.page.FIGURES`)
to the sentences its caption starts with; the wording comes from
:mod:`o2ksim.report.captions`.  With several panels (loads, months) the
sentences are given per panel, prefixed by the panel's name.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from o2ksim.report import captions, data
from o2ksim.report.captions import RUNTIME_WORDS
from o2ksim.report.gather import Gathered
from o2ksim.report.tables import rankings

__all__ = ["findings"]


def _per_panel(
    frame: pd.DataFrame, panels: list[str], say: Callable[[pd.DataFrame], list[str]]
) -> list[str]:
    out = []
    for panel in panels:
        part = frame.loc[frame["panel"] == panel] if "panel" in frame else frame
        sentences = say(part)
        if len(panels) > 1 and panel:
            sentences = [f"{panel}: {s}" for s in sentences]
        out.extend(sentences)
    return out


def _runtime(g: Gathered, measure: str) -> list[str]:
    noun, more, less = RUNTIME_WORDS[measure]
    frame = g.runtime_mean if len(g.runtime_mean) else g.runtime
    panels = g.level_panels if len(g.runtime_mean) else g.panels
    if frame.empty or measure not in frame:
        return []
    return _per_panel(
        frame, panels,
        lambda part: captions.by_runtime(part, g.policies, measure, noun=noun, more=more, less=less),
    )  # fmt: skip


def _levels(frame: pd.DataFrame, g: Gathered) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with its per-seed panels renamed to their level (seeds then averaged by ``say``)."""
    if not g.seed_panels or frame.empty:
        return frame, g.panels
    return frame.assign(panel=[g.level_of.get(p, p) for p in frame["panel"]]), g.level_panels


def _over(g: Gathered) -> str:
    return " (mean over the seeds)" if g.seed_panels else ""


def _p95(g: Gathered) -> list[str]:
    """The largest remaining wait per range, compared between policies (geometric mean over ranges)."""
    if g.p95.empty:
        return []
    top = g.p95.loc[g.p95["rank"] == 1].rename(columns={"range": "group"})

    def say(part: pd.DataFrame) -> list[str]:
        wide = part.pivot_table(index="group", columns="policy", values="wait", aggfunc="mean")
        pols = [p for p in g.policies if p in wide.columns]
        vals = {p: wide[p][wide[p] > 0] for p in pols}
        vals = {p: v for p, v in vals.items() if len(v)}
        if len(vals) < 2:
            return []
        gm = {p: float(np.exp(np.log(v.to_numpy(float)).mean())) for p, v in vals.items()}
        ref = min(gm, key=gm.__getitem__)
        return [
            f"{p}'s largest remaining waits are {captions.ratio_text(gm[p] / gm[ref], 'longer', 'shorter')} "
            f"than {ref}'s (geometric mean over the runtime ranges{', seeds averaged' if g.seed_panels else ''})."
            for p in gm if p != ref
        ]  # fmt: skip

    return _per_panel(*_levels(top, g), say)


def _spread(values: pd.Series, text: Callable[[float], str]) -> str:
    """" ± half-width (95% interval, n seeds)" of a mean over seeds, or "" for one seed.

    The half-width of :func:`o2ksim.report.data.t_interval`, as the mean
    figures draw it.
    """
    x = values.to_numpy(float)
    x = x[np.isfinite(x)]
    if len(x) < 2:
        return ""
    lo, hi = data.t_interval(x)
    return f" ± {text((hi - lo) / 2)} (95% interval, {len(x)} seeds)"


def _size(frame: pd.DataFrame, g: Gathered, what: str) -> list[str]:
    if frame.empty:
        return []

    def say(part: pd.DataFrame) -> list[str]:
        if part.empty:
            return []
        groups = part.groupby(["policy", "label"], sort=False)["mean_wait"]
        waits = groups.mean()
        (pol, label), wait = waits.idxmax(), float(waits.max())
        spread = _spread(groups.get_group((pol, label)), captions.duration_text) if g.seed_panels else ""
        return [
            f"The longest average wait{_over(g)} is {captions.duration_text(wait)}{spread}, "
            f"under {pol} for requested {what} {label}."
        ]

    return _per_panel(*_levels(frame, g), say)


def _classes(g: Gathered, measure: str) -> list[str]:
    if g.classes.empty:
        return []

    def say(part: pd.DataFrame) -> list[str]:
        if part.empty or not part[measure].notna().any():
            return []
        groups = part.groupby(["policy", "class"], sort=False)[measure]
        values = groups.mean()
        (pol, cls), top = values.idxmax(), float(values.max())
        text = captions.number_text if measure.endswith("slowdown") else captions.duration_text
        spread = _spread(groups.get_group((pol, cls)), text) if g.seed_panels else ""
        return [f"The highest{_over(g)} is class {cls} under {pol} ({text(top)}{spread})."]

    return _per_panel(*_levels(g.classes, g), say)


def _overall(g: Gathered) -> list[str]:
    out: list[str] = []
    for label, rank in rankings(g):
        sentences = captions.overall_sentences(rank)
        out.extend(f"{label}: {s}" if label else s for s in sentences)
    return out


def findings(g: Gathered) -> dict[str, list[str]]:
    """Figure name -> sentences saying what it shows (empty when there is nothing to compare)."""
    out: dict[str, list[str]] = {}
    if len(g.table):
        out["overall"] = _overall(g)
        out["utilisation"] = [captions.utilisation_sentence(g.table[["policy", "utilisation"]])]
    for name, measure in (
        ("wait_vs_runtime", "mean_wait"),
        ("max_vs_runtime", "max_wait"),
        ("slowdown_vs_runtime", "mean_slowdown"),
        ("max_slowdown_vs_runtime", "max_slowdown"),
    ):
        out[name] = _runtime(g, measure)
    out["p95_vs_runtime"] = _p95(g)
    if len(g.top):
        where = ", all panels together" if len(g.panels) > 1 else ""
        out["top_waits"] = captions.top_waits_sentences(g.top, g.policies, where)
    if len(g.counts):
        first = g.counts.loc[g.counts["policy"] == g.counts["policy"].iloc[0]]
        out["runtime_counts"] = _per_panel(first, g.level_panels, lambda p: [captions.counts_sentence(p)])
    if len(g.queue):
        out["queue"] = [captions.queue_sentence(g.queue)]
    out["wait_vs_procs"] = _size(g.procs, g, "processors")
    out["wait_vs_mem"] = _size(g.mem, g, "memory")
    out["class_mean_wait"] = _classes(g, "mean_wait")
    out["class_max_wait"] = _classes(g, "max_wait")
    out["class_slowdown"] = _classes(g, "mean_slowdown")
    return {k: [s for s in v if s] for k, v in out.items()}

