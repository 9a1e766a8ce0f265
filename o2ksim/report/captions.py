"""Captions that state what a figure shows, in words computed from its numbers.

A caption such as "NCSA-LSF* waits about 12x longer than FCFS-backfill at
every runtime" tells the reader what to conclude; the method (how the points
are computed, which thesis figure it follows) comes after it.  Every function
here takes the small tidy frame a figure draws and returns plain sentences
(no HTML); nothing here draws or reads files.

Comparisons are between pairs of policies: the policy with the lowest value
(the geometric mean of its per-group values, so that one long group does not
decide) is the reference, and every other policy is compared with it group
by group.  Ratios are worded as "about 12x" (2x and above), "35%" (10% to
2x) or "about the same" (within 10%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from o2ksim.metrics import RUNTIME_GROUP_BOUNDS_MIN

__all__ = [
    "RUNTIME_WORDS",
    "SAME",
    "by_runtime",
    "counts_sentence",
    "duration_text",
    "number_text",
    "overall_sentences",
    "queue_sentence",
    "ratio_text",
    "runtime_group_label",
    "top_waits_sentences",
    "utilisation_sentence",
]

RUNTIME_WORDS = {
    "mean_wait": ("waits", "longer", "less"),
    "max_wait": ("has a maximum wait", "longer", "shorter"),
    "mean_slowdown": ("has an average slowdown", "higher", "lower"),
    "max_slowdown": ("has a maximum slowdown", "higher", "lower"),
}
"""The runtime-group measures and how :func:`by_runtime` words them: verb phrase, more, less."""

SAME = 1.1
"""Two values within this factor of each other are "about the same"."""

HOUR = 3600.0


def duration_text(seconds: float) -> str:
    """A duration for a sentence: 6 s, 19 s, 1 min, 3.2 min, 1.7 h, 17 h, 167 h."""
    if seconds < 60:
        return f"{number_text(seconds)} s"
    if seconds < HOUR:
        return f"{number_text(seconds / 60)} min"
    h = seconds / HOUR
    return f"{number_text(h)} h" if h < 100 else f"{h:.0f} h"


def runtime_group_label(group: int) -> str:
    """The runtime range of one of the thesis's eleven groups (T§3.5): ``19 s-1 min``, ``> 53 h``."""
    upper = RUNTIME_GROUP_BOUNDS_MIN[group] * 60.0
    if group == 0:
        return f"≤ {duration_text(upper)}"
    lower = RUNTIME_GROUP_BOUNDS_MIN[group - 1] * 60.0
    if group == len(RUNTIME_GROUP_BOUNDS_MIN) - 1:  # the last group also holds longer jobs
        return f"> {duration_text(lower)}"
    return f"{duration_text(lower)}–{duration_text(upper)}"


def number_text(x: float) -> str:
    """Two significant digits, never in exponent notation: 0.096, 3.2, 12, 110, 1300."""
    if not math.isfinite(x) or x == 0:
        return f"{x:g}"
    digits = 1 - math.floor(math.log10(abs(x)))
    rounded = round(x, digits)
    return f"{rounded:.0f}" if digits <= 0 else f"{rounded:.{digits}f}"


def ratio_text(r: float, more: str, less: str) -> str:
    """``r`` = a / b worded as "about 12x longer", "35% longer", "about the same", "60% shorter"."""
    if not math.isfinite(r) or r <= 0:
        return "not comparable"
    if 1 / SAME < r < SAME:
        return "about the same"
    word = more if r > 1 else less
    if r >= 2:
        return f"about {number_text(r)}x {word}"
    if r > 1:
        return f"{100 * (r - 1):.0f}% {word}"
    if r > 0.5:
        return f"{100 * (1 - r):.0f}% {word}"
    return f"about {number_text(1 / r)}x {word}"


def _gmean(values: np.ndarray) -> float:
    return float(np.exp(np.log(values).mean()))


def by_runtime(
    frame: pd.DataFrame,
    policies: Sequence[str],
    value: str,
    *,
    noun: str = "waits",
    more: str = "longer",
    less: str = "less",
) -> list[str]:
    """Sentences comparing each policy with the best one, runtime group by runtime group.

    ``frame``: one row per policy and runtime group (columns ``policy``,
    ``group`` and ``value``), e.g. the mean over seeds.  ``noun`` is the verb
    phrase after the policy's name ("waits", "has an average slowdown").
    The reference is the policy whose positive values have the lowest
    geometric mean.  Groups missing for either policy, or 0 for both, are left
    out; a group where only one of them is 0 counts as longer (or shorter)
    without a ratio, and the sentence says where the reference is 0.
    """
    wide = frame.pivot_table(index="group", columns="policy", values=value, aggfunc="mean")
    pols = [p for p in policies if p in wide.columns and (wide[p] > 0).any()]
    if len(pols) < 2:
        return []
    ref = min(pols, key=lambda p: _gmean(wide[p][wide[p] > 0].to_numpy(float)))
    out = []
    for pol in pols:
        if pol == ref:
            continue
        both = wide[[pol, ref]].dropna()
        both = both.loc[(both[pol] > 0) | (both[ref] > 0)]
        if both.empty:
            continue
        a, b = both[pol].to_numpy(float), both[ref].to_numpy(float)
        ratios = np.divide(a, b, out=np.full(len(a), np.inf), where=b > 0)  # ref 0: infinitely more
        finite = ratios[np.isfinite(ratios) & (ratios > 0)]
        groups = [int(g) for g in both.index]
        where = "at every runtime" if len(both) > 1 else f"for jobs of {runtime_group_label(groups[0])}"
        higher = ratios >= SAME
        lower = ratios <= 1 / SAME

        def how(r: float, ref: str = ref, pol: str = pol) -> str:
            if r == np.inf:
                return f"{more}, against 0 for {ref}"
            if r == 0:
                return f"{less}: 0 for {pol}"
            return ratio_text(r, more, less)

        if higher.all() or lower.all() or not (higher | lower).any():
            text = ratio_text(_gmean(finite), more, less) if len(finite) else (
                more if higher.all() else less
            )  # fmt: skip
            if text == "about the same":
                out.append(f"{pol} and {ref}: about the same {where}.")
                continue
            notes = []
            if len(finite) > 2 and finite.max() / finite.min() >= 3:
                notes.append(f"from {number_text(finite.min())}x to {number_text(finite.max())}x")
            zero = int((b == 0).sum() + (a == 0).sum())
            if zero:
                notes.append(f"0 for one of them in {zero} of {len(ratios)} groups")
            extra = f" ({'; '.join(notes)})" if notes else ""
            out.append(f"{pol} {noun} {text} than {ref} {where}{extra}.")
            continue
        worst = int(np.argmax(ratios))
        best = int(np.argmin(ratios))
        sides = [
            (more, int(higher.sum()), f"most at {runtime_group_label(groups[worst])}: {how(ratios[worst])}"),
            (less, int(lower.sum()), f"most at {runtime_group_label(groups[best])}: {how(ratios[best])}"),
        ]  # fmt: skip
        if sides[1][1] > sides[0][1]:  # the side with more groups first
            sides.reverse()
        (word1, n1, most1), (word2, n2, most2) = sides
        parts = [f"{pol} {noun} {word1} than {ref} in {n1} of {len(ratios)} runtime groups ({most1})"]
        if n2:
            parts.append(f"and {word2} in {n2} ({most2})")
        rest = len(ratios) - int(higher.sum()) - int(lower.sum())
        if rest:
            parts[-1] += f", about the same in {'the other' if rest == 1 else f'the other {rest}'}"
        out.append(" ".join(parts) + ".")
    return out


def overall_sentences(rank: pd.DataFrame) -> list[str]:
    """For each overall measure of a ranking table, the lowest policy and how far the highest is.

    ``rank``: :func:`o2ksim.report.tables.ranking` (columns ``policy`` and
    ``mean wait (h)``, ``95th wait (h)``, ``max wait (h)``, ``mean slowdown``).
    """
    out = []
    for col, name, more in (
        ("mean wait (h)", "Mean wait", "longer"),
        ("95th wait (h)", "95th-percentile wait", "longer"),
        ("max wait (h)", "Maximum wait", "longer"),
        ("mean slowdown", "Mean slowdown", "higher"),
    ):
        vals = rank.set_index("policy")[col].dropna() if col in rank else pd.Series(dtype=float)
        if len(vals) < 2:
            continue
        lo, hi = vals.idxmin(), vals.idxmax()
        unit = " h" if "(h)" in col else ""
        a, b = number_text(float(vals[lo])) + unit, number_text(float(vals[hi])) + unit
        if vals[lo] <= 0:
            out.append(f"{name}: {lo} lowest ({a}), {hi} highest ({b}).")
            continue
        how = ratio_text(float(vals[hi] / vals[lo]), more, "lower")
        if how == "about the same":
            out.append(f"{name}: about the same for every policy ({a} to {b}).")
        else:
            out.append(f"{name}: {lo} lowest ({a}); {hi} {how} ({b}).")
    return out


def top_waits_sentences(
    points: pd.DataFrame, policies: Sequence[str], where: str = ""
) -> list[str]:
    """What the highest 5% of the waits are, per policy (T§3.6 Fig. 7).

    ``points``: one row per job among a policy's highest 5% of waits (columns
    ``policy``, ``run_time``, ``wait`` in seconds).  Says from which wait they
    start, which runtimes they fall on, and how many are jobs shorter than one
    minute -- the thesis's point that a poor wait can hit any job.  ``where``
    is added after the number of jobs (e.g. ", all seeds together").
    """
    out = []
    for pol in policies:
        part = points.loc[points["policy"] == pol]
        if part.empty:
            continue
        short = int((part["run_time"] < 60).sum())
        rt = part["run_time"].clip(lower=1.0)
        out.append(
            f"{pol}: the highest 5% of waits ({len(part)} jobs{where}, from "
            f"{duration_text(float(part['wait'].min()))} to {duration_text(float(part['wait'].max()))}) "
            f"fall on jobs running {duration_text(float(rt.min()))} to {duration_text(float(rt.max()))}"
            + (f"; {short} of them ran under a minute." if short else "; none ran under a minute.")
        )
    return out


def counts_sentence(groups: pd.DataFrame) -> str:
    """How the jobs spread over the runtime groups (columns ``group`` and ``jobs``)."""
    counts = groups.groupby("group")["jobs"].sum()
    total = int(counts.sum())
    if total == 0:
        return ""
    top = int(counts.idxmax())
    under10 = int(counts[[g for g in counts.index if RUNTIME_GROUP_BOUNDS_MIN[g] <= 10.0]].sum())
    over = int(counts[[g for g in counts.index if RUNTIME_GROUP_BOUNDS_MIN[g] > 1000.0]].sum())
    return (
        f"{100 * under10 / total:.0f}% of the {total} jobs ran 10 minutes or less and "
        f"{100 * over / total:.0f}% longer than 17 hours; the largest group is "
        f"{runtime_group_label(top)} ({int(counts[top])} jobs)."
    )


def utilisation_sentence(util: pd.DataFrame) -> str:
    """The mean utilisation per policy over its runs (columns ``policy`` and ``utilisation``)."""
    if util.empty:
        return ""
    means = util.groupby("policy", sort=False)["utilisation"].mean()
    text = ", ".join(f"{p} {v:.2f}" for p, v in means.items())
    return f"Utilisation in the analysis window (fraction of processors, mean over runs): {text}."


def queue_sentence(series: pd.DataFrame, day: float = 86400.0) -> str:
    """The queue's peak and mean (columns ``mid`` in seconds and ``queue``)."""
    if series.empty:
        return ""
    i = int(series["queue"].to_numpy(float).argmax())
    return (
        f"The queue held {series['queue'].mean():.1f} jobs on average and at most "
        f"{series['queue'].iloc[i]:.1f} (averaged over a bin), around day "
        f"{series['mid'].iloc[i] / day:.1f}."
    )
