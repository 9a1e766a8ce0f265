"""Durations and trace times as users write them: ``90s``, ``5m``, ``12h``, ``7d``, ``2w``, ISO dates.

The core's one reading of time units: configuration checks
(:mod:`o2ksim.validation`), workload windows, policies' parameters, the
command line and the reports all parse and print durations here.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from o2ksim.errors import O2KSimError

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str | float | int) -> float:
    """Seconds from ``3600``, ``90s``, ``5m``, ``12h``, ``7d``, ``2w`` (also ``1.5d``)."""
    if isinstance(text, int | float):
        return float(text)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*", str(text).lower())
    if not m or m.group(2) not in ("", *_UNITS):
        raise O2KSimError(f"'{text}' is not a duration (examples: 3600, 90s, 5m, 12h, 7d, 2w)")
    return float(m.group(1)) * _UNITS.get(m.group(2) or "s", 1)


def format_duration(seconds: float) -> str:
    """Seconds as a user writes them: ``0s``, ``45s``, ``1.5m``, ``12h``, ``20d`` (3 digits)."""
    if not math.isfinite(seconds):
        return str(seconds)
    sign = "-" if seconds < 0 else ""
    s = abs(float(seconds))
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("m", 60.0), ("s", 1.0)):
        if s >= size or unit == "s":
            v = s / size
            return f"{sign}{v:,.0f}{unit}" if v >= 1000 else f"{sign}{float(f'{v:.3g}'):g}{unit}"
    return f"{seconds:g}s"


def parse_time(text: str | float | int, unix_start: int | None = None) -> float:
    """A trace time (seconds since the trace start) from a duration or an ISO date.

    A date such as ``2000-01-01`` or ``2000-01-01T12:00`` needs the trace's
    ``UnixStartTime`` and is read as UTC.
    """
    if isinstance(text, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ].*)?", text.strip()):
        if unix_start is None:
            raise O2KSimError(
                f"'{text}' is a date but the trace has no UnixStartTime; give seconds or a duration"
            )
        try:
            when = datetime.fromisoformat(text.strip())
        except ValueError:
            raise O2KSimError(f"'{text}' is not a valid date") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return when.timestamp() - unix_start
    return parse_duration(text)


__all__ = ["format_duration", "parse_duration", "parse_time"]
