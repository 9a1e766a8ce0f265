"""Local calendar and clock of trace times: the day, minute of the day and weekday of each job.

Used by the characterisation (jobs per hour and per day, T§4.3) and by the
Cirne-Berman arrival fit (C§4), which both read a trace on its own local clock
(header ``TimeZoneString`` or ``TimeZone``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["local_clock", "local_clock_unix", "trace_tz"]


def local_clock_unix(
    unix: np.ndarray, tz: str | int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(day, minute, weekday)`` of Unix times on a local clock.

    ``day`` counts local calendar days since 1970-01-01, ``minute`` is the
    minute of the day (0-1439), ``weekday`` 0 = Monday.  *tz* is an IANA zone
    name (daylight saving applied), a fixed offset in seconds added to UTC, or
    ``None`` for UTC.  An unknown zone name falls back to UTC.
    """
    unix = np.asarray(unix, dtype=np.int64)
    if isinstance(tz, str) and tz and tz.upper() not in ("UTC", "GMT", "Z"):
        try:
            idx = pd.to_datetime(unix, unit="s", utc=True).tz_convert(tz)
            offset = np.asarray(idx.tz_localize(None).as_unit("s").asi8, dtype=np.int64) - unix
        except Exception:  # unknown zone: UTC
            offset = np.zeros(len(unix), dtype=np.int64)
    elif isinstance(tz, int | np.integer) and not isinstance(tz, bool):
        offset = np.full(len(unix), int(tz), dtype=np.int64)
    else:
        offset = np.zeros(len(unix), dtype=np.int64)
    local = unix + offset
    day = np.floor_divide(local, 86400)
    minute = (local - day * 86400) // 60
    weekday = (day + 3) % 7
    return day, minute, weekday


def trace_tz(header: Any) -> str | int | None:
    """The local clock of a trace header: its ``TimeZoneString``, else its ``TimeZone`` offset."""
    tzs = getattr(header, "time_zone_string", None)
    if tzs:
        return str(tzs).strip()
    tz = getattr(header, "time_zone", None)
    return int(tz) if tz is not None else None


def local_clock(trace: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`local_clock_unix` of a trace's submit times (``UnixStartTime`` + submit; 0 when unknown)."""
    start = int(getattr(trace.header, "unix_start_time", None) or 0)
    return local_clock_unix(trace.jobs["submit"].to_numpy() + start, trace_tz(trace.header))
