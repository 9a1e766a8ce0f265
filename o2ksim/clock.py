"""Simulated time as text: one formatter shared by the decision log and policies' notes."""

from __future__ import annotations

import math


def clock(t: float) -> str:
    """Simulated time as ``H:MM:SS`` (``Dd HH:MM:SS`` from two days on).

    >>> clock(420.0), clock(2 * 86400 + 61)
    ('0:07:00', '2d 00:01:01')
    """
    if not math.isfinite(t):
        return "never"
    t = round(t)
    d, rest = divmod(int(t), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    if d >= 2:
        return f"{d}d {h:02d}:{m:02d}:{s:02d}"
    return f"{h + 24 * d}:{m:02d}:{s:02d}"
