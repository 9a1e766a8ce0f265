"""The player of a time window of a stored run (``o2ksim play DIR --start A --end B``).

A run's ``--out`` folder holds its jobs and summary, not its decision log: the
queue in priority order, the reservations and why each job could go exist
only while the run is simulated.  So the run is simulated again
(:class:`~o2ksim.report.replay.StoredRun`: from ``run.json``'s ``replay``
configuration, checked against ``jobs.csv``), with the player's
:class:`~o2ksim.report.player_data.PlayerRecorder` keeping the log lines and
frames of the window only.

>>> from o2ksim.report.player_run import window_of
>>> window_of("14d", None, unix_start=None)
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
from o2ksim.units import format_duration, parse_time

__all__ = ["MAX_EVENTS", "is_run_folder", "run_folder_data", "window_of"]

MAX_EVENTS = 20000
"""Log lines a window may hold by default (the page stays a few MB and smooth)."""

DAY = 86400.0


def is_run_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder written by ``o2ksim run --out`` (it holds ``run.json``)."""
    return Path(path).is_dir() and (Path(path) / "run.json").is_file()


def window_of(start: Any, end: Any, *, unix_start: int | None) -> tuple[float, float]:
    """``(start, end)`` in seconds since the trace start, from durations (``14d``, ``90m``,
    seconds) or ISO dates (read against the trace's ``UnixStartTime``); ``end`` defaults
    to one day after ``start``."""
    try:
        a = parse_time(start, unix_start)
    except O2KSimError as exc:
        raise O2KSimError(f"--start {start}: {exc}") from None
    try:
        b = a + DAY if end is None else parse_time(end, unix_start)
    except O2KSimError as exc:
        raise O2KSimError(f"--end {end}: {exc}") from None
    if not b > a:
        raise O2KSimError(f"--start {start} --end {end}: the end must be after the start")
    return float(a), float(b)


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
    where = Path(folder)
    stored = StoredRun.open(where)
    trace, meta = stored.trace, stored.meta
    a, b = window_of(start, end, unix_start=getattr(trace.header, "unix_start_time", None))
    until = float((meta.get("stats") or {}).get("simulated_until") or math.inf)
    if a >= until:
        raise O2KSimError(
            f"--start {start}: the run ends at {format_duration(until)} ({clock(until)}); "
            f"choose a start before it"
        )
    rec = PlayerRecorder(stored.machine, window=(a, b))
    result = stored.replay([rec])
    rec.close()
    if len(rec.entries) > max_events:
        raise O2KSimError(
            f"{clock(a)} to {clock(b)} holds {len(rec.entries)} events (limit {max_events}): "
            "choose a shorter window (--start/--end) or raise --max-events"
        )
    if not rec.entries:
        raise O2KSimError(f"nothing happens between {clock(a)} and {clock(b)} in {where}")
    workload = (meta.get("config") or {}).get("workload") or result.config.get("workload", "")
    run = f"{result.policy.get('name', '?')}: {Path(str(workload)).name}"
    heading = title or f"{run}, {clock(a)} to {clock(b)} ({where.name})"
    return pack_player(result, rec, title=heading, run=run, window=(a, b))
