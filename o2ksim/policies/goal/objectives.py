"""Measures and objective models of the goal-oriented policies (G§3.1-§3.3, Tables 4-5).

Measures of one candidate schedule, over the jobs waiting at the decision
point, at their *planned* starts (G Table 4):

* ``tw`` -- total excessive wait: the sum over the waiting jobs of their
  planned wait in excess of a threshold.  By default the threshold is
  *dynamic*, "the current waiting time of the oldest job in the waiting
  queue" (G§3.1); with a fixed ``omega`` it is T_w^omega.
* ``maxw`` -- maximum planned wait.
* ``avgw`` -- average planned wait.
* ``avgx`` -- average planned bounded slowdown ``(wait + T') / T'`` with
  ``T' = max(T, 1 minute)`` (G§4), ``T`` the runtime the scheduler knows.

Objective models (G Table 5), for minimising two measures ``x`` and ``y``,
with ``Gamma`` the best schedule so far and ``Phi`` the candidate, and
``D_x = Gamma_x - Phi_x`` (positive when Phi improves x):

* ``Lexical(x -> y)``: Phi is better if ``D_x > 0``, or ``D_x = 0`` and ``D_y > 0``.
* ``Tradeoff(x:y)``: Phi is better if ``D_x / x^ + D_y / y^ > 0`` with the
  reference values of version A (``x^ = Gamma_x``), B (``x^ = min(Gamma_x,
  Phi_x)``) or C (``x^`` from a priority-backfill schedule computed at the
  start of the epoch: FCFS order for maxW and Tw, LXF order for avgX and avgW).

Relaxed differences (G§3.3): when Phi improves one measure and degrades the
other, a difference smaller than ``eps_x`` counts as none; ``eps_x`` is the
slack (1 %) of the best schedule's value, except for Tw where it is the slack
of the current maximum wait of the waiting jobs.  ``slack = 0`` gives the
strict model.  Among equally good schedules the first evaluated wins: a
candidate replaces the best only when it is *better*.
"""

from __future__ import annotations

import math

MEASURES = ("tw", "maxw", "avgw", "avgx")
"""Measure names, in the order of the measure tuples the search produces."""

ROUNDING = 1e-12
"""Relative difference below which two measure values are equal (floating-point rounding)."""

MEASURE_LABELS = {"tw": "Tw", "maxw": "maxW", "avgw": "avgW", "avgx": "avgX"}
MODELS = ("lexical", "tradeoff")
VERSIONS = ("A", "B", "C")
REFERENCE_ORDER = {"tw": "fcfs", "maxw": "fcfs", "avgw": "lxf", "avgx": "lxf"}
"""Version C: which priority order's schedule gives each measure's reference value."""


def _ratio(delta: float, ref: float) -> float:
    """``delta / ref``; a change of a zero reference is an infinite one (or none)."""
    if ref > 0:
        return delta / ref
    if delta > 0:
        return math.inf
    if delta < 0:
        return -math.inf
    return 0.0


class Objective:
    """One objective model over two measures: decides whether a candidate beats the best.

    ``model``: ``lexical`` or ``tradeoff``; ``x``, ``y``: measure names
    (``x`` dominates in the Lexical model); ``version``: reference values of
    the Tradeoff model; ``slack``: relative slack of relaxed differences (0 =
    strict).  Call :meth:`start_epoch` at every decision point.
    """

    __slots__ = (
        "_tw_x",
        "_tw_y",
        "eps_tw",
        "ix",
        "iy",
        "model",
        "ref",
        "slack",
        "version",
        "x",
        "y",
    )

    def __init__(self, model: str, x: str, y: str, version: str = "A", slack: float = 0.01) -> None:
        if model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
        for m in (x, y):
            if m not in MEASURES:
                raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {m!r}")
        if x == y:
            raise ValueError(f"the two measures must differ, got {x!r} twice")
        if version not in VERSIONS:
            raise ValueError(f"version must be one of {', '.join(VERSIONS)}, got {version!r}")
        if not slack >= 0:
            raise ValueError(f"slack must be >= 0, got {slack!r}")
        self.model, self.x, self.y, self.version, self.slack = model, x, y, version, slack
        self.ix, self.iy = MEASURES.index(x), MEASURES.index(y)
        self._tw_x, self._tw_y = x == "tw", y == "tw"
        self.eps_tw = 0.0
        self.ref: tuple[float, float] = (0.0, 0.0)

    @property
    def name(self) -> str:
        """``Lexical(Tw -> avgX)``, ``A-Tradeoff(Tw:avgX)``, prefixed ``Strict`` without slack."""
        x, y = MEASURE_LABELS[self.x], MEASURE_LABELS[self.y]
        core = (
            f"Lexical({x} -> {y})"
            if self.model == "lexical"
            else f"{self.version}-Tradeoff({x}:{y})"
        )
        return core if self.slack > 0 else f"Strict {core}"

    def start_epoch(
        self, max_wait_now: float, reference: tuple[float, float] | None = None
    ) -> None:
        """Set the epoch's Tw slack (from the current maximum wait) and version-C references."""
        self.eps_tw = self.slack * max_wait_now
        if reference is not None:
            self.ref = reference

    def deltas(self, best: tuple[float, float], cand: tuple[float, float]) -> tuple[float, float]:
        """``(D_x, D_y)``, relaxed when the candidate improves one measure and degrades the other."""
        dx = best[0] - cand[0]
        dy = best[1] - cand[1]
        if abs(dx) <= ROUNDING * (best[0] + cand[0]):
            dx = 0.0
        if abs(dy) <= ROUNDING * (best[1] + cand[1]):
            dy = 0.0
        if self.slack > 0 and ((dx > 0 > dy) or (dy > 0 > dx)):
            ex = self.eps_tw if self._tw_x else self.slack * best[0]
            ey = self.eps_tw if self._tw_y else self.slack * best[1]
            # strictly within the slack (G§3.3: -e < d < e); a difference that equals
            # the slack up to rounding is outside, whatever its last bits
            if abs(dx) < ex - ROUNDING * (best[0] + cand[0]):
                dx = 0.0
            if abs(dy) < ey - ROUNDING * (best[1] + cand[1]):
                dy = 0.0
        return dx, dy

    def better(self, best: tuple[float, float], cand: tuple[float, float]) -> bool:
        """Whether ``cand`` is better than ``best`` (both ``(x, y)`` measure pairs)."""
        bx, by = best
        cx, cy = cand
        dx = bx - cx
        dy = by - cy
        # the same sum added up in another order may differ in its last bits: a
        # difference within rounding is none, so "the first evaluated wins" holds
        if -ROUNDING * (bx + cx) <= dx <= ROUNDING * (bx + cx):
            dx = 0.0
        if -ROUNDING * (by + cy) <= dy <= ROUNDING * (by + cy):
            dy = 0.0
        if self.slack > 0 and ((dx > 0 > dy) or (dy > 0 > dx)):
            dx, dy = self.deltas(best, cand)
        if self.model == "lexical":
            return dx > 0 or (dx == 0 and dy > 0)
        if self.version == "A":
            hx, hy = bx, by
        elif self.version == "B":
            hx = bx if bx < cx else cx
            hy = by if by < cy else cy
        else:
            hx, hy = self.ref
        if hx > 0 and hy > 0:
            return dx / hx + dy / hy > 0
        return _ratio(dx, hx) + _ratio(dy, hy) > 0  # nan (+inf - inf) is not better

    def why(self, best: tuple[float, float], cand: tuple[float, float]) -> str:
        """A one-line account of the comparison (for the decision log)."""
        dx, dy = self.deltas(best, cand)
        lx, ly = MEASURE_LABELS[self.x], MEASURE_LABELS[self.y]
        verdict = "better" if self.better(best, cand) else "not better"
        if self.model == "lexical":
            return f"D{lx}={_num(dx)}, D{ly}={_num(dy)}: {verdict}"
        if self.version == "A":
            hx, hy = best
        elif self.version == "B":
            hx, hy = min(best[0], cand[0]), min(best[1], cand[1])
        else:
            hx, hy = self.ref
        rx, ry = _ratio(dx, hx), _ratio(dy, hy)
        return f"D{lx}/ref={_num(rx, 3)} + D{ly}/ref={_num(ry, 3)} = {_num(rx + ry, 3)}: {verdict}"


def _num(v: float, digits: int = 1) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}f}"


__all__ = ["MEASURES", "MEASURE_LABELS", "MODELS", "REFERENCE_ORDER", "VERSIONS", "Objective"]
