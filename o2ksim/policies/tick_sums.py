"""Sums booked once per tick, reproduced in one step after a skip of quiet ticks.

With a fixed ``--interval`` a policy that books something at every pass (EQspatial's
catch-up credit, :class:`~o2ksim.policies.equipartition.CreditLedger`) adds
``rate * dt`` once per tick when ticking through.  When the engine skips the
quiet ticks in between (:mod:`o2ksim.policies.quiet`), the next pass must add
the same floats in the same order, or the credit (and the catch-up that ends
when the work reaches it) would differ by rounding.  :func:`grid_between`
finds the ticks a skip passed over; :func:`repeat_add` gives, in a few steps
per binade, the float of ``n`` additions of the same increment.
"""

from __future__ import annotations

import math
from fractions import Fraction


def repeat_add(c: float, a: float, n: int) -> float:
    """``c`` after ``n`` float additions ``c = c + a`` (``c, a >= 0``), without ``n`` steps.

    Within one binade ``[top/2, top)`` of ulp ``u`` every float is a multiple of
    ``u``, and ``c + a`` rounds to ``c + round(a / u) * u``; only a tie
    (``a / u`` an odd multiple of 1/2) depends on ``c``, rounding to the even
    multiple, after which every result is even and the increment is constant
    again.  So three explicit additions fix the increment ``d``, and the ones
    after add ``d`` exactly while the exact sum stays below ``top - u/2``
    (counted in exact rationals); the step that crosses into the next binade is
    made explicitly.  ``d = 0`` (``a`` below half an ulp): ``c`` stays.
    """
    if a < 0 or c < 0:
        raise ValueError("repeat_add needs c >= 0 and a >= 0")
    while n > 0:
        if a == 0:
            return c
        steps = []
        for _ in range(min(3, n)):
            c = c + a
            steps.append(c)
        n -= len(steps)
        if n == 0 or not math.isfinite(c) or len(steps) < 3:
            continue
        u = math.ulp(c)
        if math.ulp(steps[0]) != u or c == 0:
            continue  # a binade was crossed: fix the increment in the new one
        d = steps[2] - steps[1]  # exact: two floats of one binade
        top = Fraction(2) ** math.frexp(c)[1]  # c in [top/2, top)
        room = top - Fraction(u) / 2 - Fraction(a) - Fraction(c)  # c + j*d must stay below it
        if room <= 0:
            continue
        j = n if d == 0 else min(n, math.ceil(room / Fraction(d)))
        c = float(Fraction(c) + j * Fraction(d))  # a multiple of u below top: exact
        n -= j
    return c


def grid_between(since: float, now: float, interval: float) -> tuple[int, int] | None:
    """The ticks ``k * interval`` strictly between ``since`` and ``now``, as ``(k1, k2)``;
    ``None`` when there are none.

    Meant for ticks that are exact floats (:func:`~o2ksim.engine.ticks.exact_tick`,
    up to :func:`~o2ksim.engine.ticks.last_exact_tick`), where ``k * interval`` is
    the tick itself and the difference of two ticks is exact.
    """
    if not now > since:
        return None
    k1 = max(0, math.floor(since / interval) + 1)
    while k1 > 0 and (k1 - 1) * interval > since:  # the division may round
        k1 -= 1
    while k1 * interval <= since:
        k1 += 1
    k2 = math.ceil(now / interval) - 1
    while (k2 + 1) * interval < now:
        k2 += 1
    while k2 >= 0 and k2 * interval >= now:
        k2 -= 1
    return (k1, k2) if k1 <= k2 else None
