"""The player of a time window of a stored run (``o2ksim play DIR --start A --end B``).

A run's ``--out`` folder holds its jobs and summary, not its decision log: the
queue in priority order, the reservations and why each job could go exist
only while the run is simulated.  So the run is simulated again, from the
configuration ``run.json`` stores (``replay``: the trace file, machine,
policy and parameters, estimates, window, seed), with the player's
:class:`~o2ksim.report.player_data.PlayerRecorder` keeping the log lines and
frames of the window only.  The engine is deterministic; the replay is
checked against the folder's ``jobs.csv`` (every job's start and end) and
refused if it differs (the trace file or o2ksim changed since).

>>> from o2ksim.report.player_run import window_of
>>> window_of("14d", None, unix_start=None)
(1209600.0, 1296000.0)
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.clock import clock
from o2ksim.errors import O2KSimError
from o2ksim.machine import machine_from_header
from o2ksim.report.player_data import PlayerRecorder, pack_player
from o2ksim.run.api import run_config
from o2ksim.run.config import RunConfig
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


def _stored(folder: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    """The folder's ``run.json`` (with its replay configuration) and its job table."""
    if not folder.is_dir():
        raise O2KSimError(f"{folder}: no such folder")
    meta_path = folder / "run.json"
    if not meta_path.is_file():
        raise O2KSimError(
            f"{folder}: no run.json, so no finished run (write one with "
            f"`o2ksim run --trace FILE ... --out {folder}`)"
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise O2KSimError(f"{meta_path}: not readable as JSON ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("replay"), dict):
        raise O2KSimError(
            f"{meta_path}: no replay configuration (the run was written by an older o2ksim, or "
            "from a workload or policy held in memory); run it again with `o2ksim run --trace "
            f"FILE ... --out {folder}` (or simulate() on a trace path, then result.save)"
        )
    for name in ("jobs.csv", "jobs.parquet"):
        if (folder / name).is_file():
            jobs = (pd.read_csv if name.endswith("csv") else pd.read_parquet)(folder / name)
            missing = {"job_id", "start", "end"} - set(jobs.columns)
            if missing:
                raise O2KSimError(f"{folder / name}: no column(s) {', '.join(sorted(missing))}")
            return meta, jobs
    raise O2KSimError(
        f"{folder}: no jobs.csv or jobs.parquet to check the replay against (the folder is "
        "incomplete; write it again with `o2ksim run ... --out`)"
    )


def _check_same(stored: pd.DataFrame, table: Any, folder: Path) -> None:
    """Refuse a replay whose schedule is not the stored one (every job's start and end)."""
    ids = np.asarray(table["job_id"], dtype=np.int64)
    start = dict(zip(ids.tolist(), np.asarray(table["start"], dtype=float).tolist(), strict=True))
    end = dict(zip(ids.tolist(), np.asarray(table["end"], dtype=float).tolist(), strict=True))
    for j, s, e in zip(stored["job_id"].astype(int), stored["start"].astype(float),
                       stored["end"].astype(float), strict=True):  # fmt: skip
        for what, got, want in (
            ("start", start.get(j, math.nan), s),
            ("end", end.get(j, math.nan), e),
        ):
            same = (math.isnan(got) and math.isnan(want)) or abs(got - want) <= 1e-6 * max(
                1.0, abs(want)
            )
            if not same:
                raise O2KSimError(
                    f"{folder}: the replay differs from the stored run (J{j}'s {what}: "
                    f"{clock(got) if math.isfinite(got) else 'none'} now, "
                    f"{clock(want) if math.isfinite(want) else 'none'} in jobs.csv); the trace "
                    "file or o2ksim changed since the run: run it again"
                )
    if len(stored) != len(ids):
        raise O2KSimError(f"{folder}: the replay has {len(ids)} jobs, jobs.csv {len(stored)}")


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
    meta, stored = _stored(where)
    try:
        cfg = RunConfig.from_dict(
            meta["replay"], explain=True, where=f"{where / 'run.json'} (replay)"
        )
        trace = cfg.workload.build(cfg.machine.total_procs if cfg.machine is not None else None)
    except O2KSimError as exc:
        raise O2KSimError(f"{where}: cannot simulate the run again: {exc}") from None
    a, b = window_of(start, end, unix_start=getattr(trace.header, "unix_start_time", None))
    until = float((meta.get("stats") or {}).get("simulated_until") or math.inf)
    if a >= until:
        raise O2KSimError(
            f"--start {start}: the run ends at {format_duration(until)} ({clock(until)}); "
            f"choose a start before it"
        )
    machine = cfg.machine or machine_from_header(trace.header, trace.source)
    rec = PlayerRecorder(machine, window=(a, b))
    result = run_config(cfg, observers=[rec])
    _check_same(stored, result.job_table, where)
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
