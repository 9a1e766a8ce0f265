"""The player of a time window of a stored run (``o2ksim play DIR --start A --end B``).

A run's ``--out`` folder holds its jobs and summary, not its decision log: the
queue in priority order, the reservations and why each job could go exist
only while the run is simulated.  So the run is simulated again
(:class:`~o2ksim.report.replay.StoredRun`: from ``run.json``'s ``replay``
configuration, checked against ``jobs.csv``), with the player's
:class:`~o2ksim.report.player_data.PlayerRecorder` keeping the log lines and
frames of the window only.

>>> from o2ksim.report.player_run import window_of
>>> window_of("14d", None)[:2]
(1209600.0, 1296000.0)
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from o2ksim.clock import clock
from o2ksim.errors import O2KSimError
from o2ksim.report.player_data import PlayerRecorder, pack_player
from o2ksim.report.replay import StoredRun
from o2ksim.units import TraceClock, format_duration, is_date, parse_time, trace_zone
from o2ksim.validation import check_path

__all__ = ["MAX_EVENTS", "is_run_folder", "run_folder_data", "window_of"]

MAX_EVENTS = 20000
"""Log lines a window may hold by default (the page stays a few MB and smooth)."""

DAY = 86400.0


def is_run_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder written by ``o2ksim run --out`` (it holds ``run.json``)."""
    return Path(path).is_dir() and (Path(path) / "run.json").is_file()


def window_of(start: Any, end: Any, header: Any = None) -> tuple[float, float, TraceClock]:
    """``(start, end)`` in seconds since the trace start, and the clock to speak of them in,
    from durations (``14d``, ``90m``, seconds) or ISO dates, read against the ``header``'s
    ``UnixStartTime`` in its time zone (as ``o2ksim run --window`` reads them; messages then
    say dates and the zone, not day offsets); ``end`` defaults to one day after ``start``."""
    unix = getattr(header, "unix_start_time", None)
    zone, label = trace_zone(header)
    said = TraceClock(unix, zone, label) if is_date(start) or is_date(end) else TraceClock()
    try:
        a = parse_time(start, unix, zone)
    except O2KSimError as exc:
        raise O2KSimError(f"--start {start}: {exc}") from None
    try:
        b = a + DAY if end is None else parse_time(end, unix, zone)
    except O2KSimError as exc:
        raise O2KSimError(f"--end {end}: {exc}") from None
    if not b > a:
        raise O2KSimError(
            f"--start {start} --end {end}: the end {said.as_written(end, b)} must be after the "
            f"start {said.as_written(start, a)}{said.zone_said}"
        )
    return float(a), float(b), said


def run_folder_data(
    folder: str | os.PathLike[str], start: Any, end: Any = None, *,
    max_events: int = MAX_EVENTS, title: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The player's data of the window ``start``..``end`` of the run stored in ``folder``.

    ``start``/``end``: seconds since the trace start, durations (``14d``,
    ``14.5d``) or ISO dates (``1996-10-07``, needs the trace's
    ``UnixStartTime``); ``end`` defaults to a day after ``start``.  The run is
    simulated again from ``run.json`` (see the module docstring), checked
    against ``jobs.csv``, and only the window's log lines are kept; more than
    ``max_events`` lines are refused.
    """
    check_path(folder, "run_folder_data", "folder")
    where = Path(folder)
    stored = StoredRun.open(where)
    trace, meta = stored.trace, stored.meta
    a, b, said = window_of(start, end, trace.header)
    until = float((meta.get("stats") or {}).get("simulated_until") or math.inf)
    if a >= until:  # in dates when dates were typed
        ends = said.show(until) if said.unix_start is not None else f"{format_duration(until)} ({clock(until)})"
        raise O2KSimError(f"--start {start}: the run ends at {ends}; choose a start before it{said.zone_said}")
    rec = PlayerRecorder(stored.machine, window=(a, b))
    result = stored.replay([rec])
    rec.close()
    if len(rec.entries) > max_events:
        raise O2KSimError(
            f"{clock(a)} to {clock(b)} holds {len(rec.entries)} events (limit {max_events}): "
            "choose a shorter window (--start/--end) or raise --max-events"
        )
    if not rec.entries:
        between = f"{clock(a)} and {clock(b)}"
        if said.unix_start is not None:  # the dates typed (the end a day after the start if none)
            between = f"{said.as_written(start, a)} and {said.show(b) if end is None else said.as_written(end, b)}"
        raise O2KSimError(f"nothing happens between {between} in {where}{said.zone_said}")
    workload = (meta.get("config") or {}).get("workload") or result.config.get("workload", "")
    run = f"{result.policy.get('name', '?')}: {Path(str(workload)).name}"
    heading = title or f"{run}, {clock(a)} to {clock(b)} ({where.name})"
    return pack_player(result, rec, title=heading, run=run, window=(a, b))
