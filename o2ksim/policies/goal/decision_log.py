"""The decision log's account of one goal-oriented search (``o2ksim explain``).

What the search did at a decision point, in words: how many schedules it
evaluated, the climb that followed (if any), the first
:data:`EXPLAIN_SCHEDULES` schedules with their measures and verdicts, and
why the winner won.  Kept apart from the policy, which only calls it when a
decision log is asked for.
"""

from __future__ import annotations

import math

from o2ksim.policies.goal.objectives import MEASURE_LABELS, MEASURES, Objective
from o2ksim.policies.goal.search import SearchResult

EXPLAIN_SCHEDULES = 40  # schedules listed per decision in the decision log
PAD = " " * 27


def search_account(
    ids: list[int],
    result: SearchResult,
    objective: Objective,
    objective_name: str,
    *,
    climb_budget: int | None = None,
    from_last: bool = False,
    restart_from: str | None = None,
    kick: int | None = None,
    warm: bool = False,
) -> str:
    """The account of ``result`` over the waiting jobs ``ids`` (in the planner's order).

    ``climb_budget`` is the hill climb's visit budget when one ran; the other
    keywords say how it was run (scanning from the last position, a second climb
    from ``restart_from``'s order, kicks of ``kick`` moves, a warm start).
    """

    def name(order: tuple[int, ...] | list[int]) -> str:
        return " ".join(f"J{ids[j]}" for j in order)

    def meas(m: tuple[float, ...]) -> str:
        return "  ".join(
            f"{MEASURE_LABELS[k]}={_fmt(k, v)}" for k, v in zip(MEASURES, m, strict=True)
        )

    lines = [
        f"{PAD}search {objective_name}: {len(ids)} waiting, {result.visits} node visits, "
        f"{result.leaves} schedules evaluated, {result.pruned} subtrees pruned"
        + (" (whole tree)" if result.complete else " (node limit reached)")
    ]
    if climb_budget is not None:
        lines.append(f"{PAD}then a hill climb over the best order (swaps, forward moves; at most "
                     f"{climb_budget} visits, counted above); its result, if better, wins")  # fmt: skip
        if from_last:
            lines.append(f"{PAD}each pass of the climb scanning from the last position")
        if restart_from is not None:
            lines.append(f"{PAD}and, if it ends with visits left, a second climb from the "
                         f"{restart_from} order; the better of the two wins")  # fmt: skip
        if kick is not None:
            lines.append(f"{PAD}then, while visits are left, the best schedule kicked by "
                         f"{kick} random forward moves and climbed again; the better wins")  # fmt: skip
        if warm:
            lines.append(f"{PAD}starting from the better of the search's schedule and the previous "
                         "decision point's best order")  # fmt: skip
    win = tuple(result.order)
    for k, e in enumerate(result.evaluated[:EXPLAIN_SCHEDULES]):
        mark = "*" if e.order == win else " "
        lines.append(f"{PAD}{mark}#{k + 1:<3} [{name(e.order)}]  {meas(e.measures)}  {e.verdict}")
    if len(result.evaluated) > EXPLAIN_SCHEDULES:
        lines.append(f"{PAD} ... {len(result.evaluated) - EXPLAIN_SCHEDULES} more")
    first = next((k for k, e in enumerate(result.evaluated) if e.order == win), None)
    lines.append(
        f"{PAD}winner [{name(win)}] (#{'?' if first is None else first + 1}): no later schedule "
        f"is better under {objective.name}; among equally good ones the first evaluated wins"
    )
    return "\n".join(lines)


def _fmt(measure: str, v: float) -> str:
    """avgX with two decimals; times as ``H:MM:SS`` (the decision log's clock)."""
    if measure == "avgx":
        return f"{v:.2f}"
    if not math.isfinite(v):
        return "inf"
    h, rest = divmod(round(v), 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}"


__all__ = ["EXPLAIN_SCHEDULES", "search_account"]
