"""Durations and trace times as users write them: ``90s``, ``5m``, ``12h``, ``7d``, ``2w``, ISO dates.

The core's one reading of time units: configuration checks
(:mod:`o2ksim.validation`), workload windows, policies' parameters, the
command line and the reports all parse and print durations here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from o2ksim.errors import O2KSimError

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str | float | int) -> float:
    """Seconds from ``3600``, ``90s``, ``5m``, ``12h``, ``7d``, ``2w`` (also ``1.5d``)."""
    if isinstance(text, bool):  # True is an int to Python, not one second to a user
        raise O2KSimError(f"{text!r} is not a duration (examples: 3600, 90s, 5m, 12h, 7d, 2w)")
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


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ].*)?")


def is_date(text: object) -> bool:
    """Whether ``text`` is written as a date (``2000-01-01``, ``2000-01-01T12:00``)."""
    return isinstance(text, str) and _DATE.fullmatch(text.strip()) is not None


MIN_UTC_OFFSET = -12 * 3600
MAX_UTC_OFFSET = 14 * 3600
"""The offsets from UTC in use (Baker Island, UTC-12, to the Line Islands, UTC+14): the
range of an SWF header's ``TimeZone`` (seconds added to UTC; KTH-SP2 has 3600)."""


def utc_offset_problem(seconds: int) -> str | None:
    """Why ``seconds`` cannot be an offset from UTC (outside -12 h .. +14 h), or ``None``."""
    if MIN_UTC_OFFSET <= seconds <= MAX_UTC_OFFSET:
        return None
    return (
        f"{seconds} s is not an offset from UTC (seconds added to UTC, from {MIN_UTC_OFFSET} "
        f"to {MAX_UTC_OFFSET}: -12 h to +14 h)"
    )


def zone_named(name: str) -> tzinfo | None:
    """The time zone of the IANA name ``name`` (``Europe/Stockholm``), or ``None`` when
    Python's zone database does not know it (``Mars/Olympus``, a directory such as
    ``America``, a path)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def trace_zone(header: Any) -> tuple[tzinfo, str]:
    """The zone in which dates typed for a trace are read, and a label saying where it came from.

    The SWF header's ``TimeZoneString`` (an IANA name such as ``Europe/Stockholm``,
    daylight saving applied) when Python knows it, else its ``TimeZone`` (a fixed
    offset in seconds from UTC), else UTC.  The same order as the local clock of
    :mod:`o2ksim.workloads.clock`.  A ``TimeZoneString`` Python does not know is named
    in the label (the SWF reader refuses one in a file; a header built in code may hold
    one); a ``TimeZone`` outside -12 h .. +14 h is refused.
    """
    name = str(getattr(header, "time_zone_string", None) or "").strip()
    unknown = ""
    if name:
        known = zone_named(name)
        if known is not None:
            return known, f"{name} (the trace header's TimeZoneString)"
        unknown = f"; its TimeZoneString {name!r} is not a time zone Python knows"
    offset = getattr(header, "time_zone", None)
    if offset is not None:
        problem = utc_offset_problem(int(offset))
        if problem:
            raise O2KSimError(f"the trace header's TimeZone: {problem}")
        zone = timezone(timedelta(seconds=int(offset)))
        return zone, f"{zone.tzname(None)} (the trace header's TimeZone of {int(offset)} s{unknown})"
    if unknown:
        return UTC, f"UTC (the trace header's TimeZoneString {name!r} is not a time zone Python knows)"
    return UTC, "UTC (the trace header names no time zone)"


def parse_time(
    text: str | float | int, unix_start: int | None = None, zone: tzinfo | None = None
) -> float:
    """A trace time (seconds since the trace start) from a duration or an ISO date.

    A date such as ``2000-01-01`` or ``2000-01-01T12:00`` needs the trace's
    ``UnixStartTime`` and is read in ``zone`` (UTC when ``None``; callers pass
    :func:`trace_zone` of the trace's header) unless it names its own offset
    (``2000-01-01T00:00+02:00``).
    """
    if is_date(text):
        assert isinstance(text, str)
        if unix_start is None:
            raise O2KSimError(
                f"'{text}' is a date but the trace has no UnixStartTime; give seconds or a duration"
            )
        try:
            when = datetime.fromisoformat(text.strip())
        except ValueError:
            raise O2KSimError(f"'{text}' is not a valid date") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=zone or UTC)
        return when.timestamp() - unix_start
    return parse_duration(text)


@dataclass(frozen=True)
class TraceClock:
    """How to show trace times in messages: as dates in ``zone`` when the user typed dates
    (``unix_start`` given), else as durations since the trace start."""

    unix_start: int | None = None
    zone: tzinfo | None = None
    read_in: str = ""  # the zone and where it came from (:func:`trace_zone`'s label)

    def show(self, seconds: float) -> str:
        return format_trace_time(seconds, self.unix_start, self.zone)

    def as_written(self, text: object, seconds: float) -> str:
        """A bound as the user wrote it: the typed date when it reads back as itself
        (``2001-09-14``), else what was typed with the date it stands for
        (``3d (2001-09-11 21:46:40 EDT)``); durations as durations (``3d``)."""
        if self.unix_start is None:
            return format_duration(seconds)
        shown = self.show(seconds)
        typed = str(text).strip()
        if is_date(typed) and shown.startswith(typed.replace("T", " ")):
            return typed
        return f"{typed} ({shown})"

    @property
    def zone_said(self) -> str:
        """``; dates read in America/New_York (the trace header's TimeZoneString)``, or ``""``
        for durations: appended to a message about dates the user typed."""
        return f"; dates read in {self.read_in}" if self.unix_start is not None and self.read_in else ""


def format_trace_time(seconds: float, unix_start: int | None = None, zone: tzinfo | None = None) -> str:
    """A trace time as the user wrote it: a date in ``zone`` when ``unix_start`` is given
    (``1997-07-25 00:00 CEST``), else a duration (``20d``)."""
    if unix_start is None or not math.isfinite(seconds):
        return format_duration(seconds)
    when = datetime.fromtimestamp(unix_start + seconds, tz=zone or UTC)
    return when.strftime("%Y-%m-%d %H:%M:%S" if when.second else "%Y-%m-%d %H:%M") + f" {when.tzname()}"


__all__ = [
    "MAX_UTC_OFFSET", "MIN_UTC_OFFSET", "TraceClock", "format_duration", "format_trace_time", "is_date",
    "parse_duration", "parse_time", "trace_zone", "utc_offset_problem", "zone_named",
]  # fmt: skip
