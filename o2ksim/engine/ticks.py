"""The grid of a fixed scheduling interval: ticks at ``k * interval``, exactly.

Ticking through adds ``interval`` once per tick; a skip over ``k`` ticks adds
``k * interval`` once (:meth:`~o2ksim.engine.scheduler.Scheduler.tick`).  The
two give the same float while every tick is exactly representable, which
:func:`exact_tick` checks; :func:`ticks_to` finds the first tick at or after
a time, and :func:`last_exact_tick` bounds how far a skip may reach.
"""

from __future__ import annotations

import math


def exact_tick(t: float, interval: float) -> bool:
    """Whether every tick ``k * interval`` up to ``t`` is an exact float (so the same
    float however it is summed).

    ``interval`` is ``m / 2**e`` for integers ``m`` and ``e``; each tick is
    then ``k * m / 2**e``, exact while ``k * m`` (with ``k = t / interval``)
    fits a float's 53-bit significand.  True for whole seconds up to
    about 9e15 s; false, for example, beyond the third tick of 0.1 s.
    """
    m, _d = interval.as_integer_ratio()
    k = round(t / interval)
    return k * m < 2**53


def ticks_to(now: float, target: float, interval: float) -> int:
    """How many intervals from the tick ``now`` to the first tick at or after ``target``
    (0 when ``target <= now``).

    ``ceil((target - now) / interval)``, corrected when the division rounds
    across a whole number, so that ``now + k * interval >= target >
    now + (k - 1) * interval`` holds for the floats themselves.
    """
    if not target > now:
        return 0
    k = math.ceil((target - now) / interval)
    while k > 1 and now + (k - 1) * interval >= target:  # the division may round up
        k -= 1
    while now + k * interval < target:  # ... or down
        k += 1
    return k


def last_exact_tick(interval: float) -> float:
    """The last tick ``k * interval`` up to which every tick is exact (:func:`exact_tick`)."""
    m, _d = interval.as_integer_ratio()
    return ((2**53 - 1) // m) * interval
