"""A run stored by ``o2ksim run --out DIR``, simulated again (``o2ksim play/gantt DIR``).

A results folder holds each job's start and end, not what only exists while a
run is simulated (the decision log, the reservations and where they slid).
:class:`StoredRun` reads the configuration ``run.json`` stores under
``replay`` (the trace file, machine, policy and parameters, estimates,
window, seed), simulates the run again with the observers a view needs, and
checks the replay against the folder's ``jobs.csv``: the engine is
deterministic, so a difference means the trace file or o2ksim changed since,
and the replay is refused.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.clock import clock
from o2ksim.engine.monitor import Observer
from o2ksim.errors import O2KSimError
from o2ksim.machine import MachineSpec, machine_from_header
from o2ksim.run.api import run_config
from o2ksim.run.config import RunConfig
from o2ksim.run.results import Result
from o2ksim.validation import check_path

__all__ = ["StoredRun", "has_replay"]


def has_replay(folder: str | Path) -> bool:
    """Whether ``folder`` holds a ``run.json`` with a replay configuration."""
    try:
        meta = json.loads((Path(folder) / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and isinstance(meta.get("replay"), dict)


@dataclass
class StoredRun:
    """A stored run ready to be simulated again (:meth:`open`, then :meth:`replay`)."""

    folder: Path
    meta: dict[str, Any]
    jobs: pd.DataFrame
    config: RunConfig
    trace: Any
    machine: MachineSpec

    @classmethod
    def open(cls, folder: str | Path) -> StoredRun:
        """Read ``folder``'s ``run.json`` and job table and build its workload; refused in
        one line naming what is missing."""
        check_path(folder, "StoredRun.open", "folder")
        where = Path(folder)
        meta, jobs = _stored(where)
        try:
            cfg = RunConfig.from_dict(meta["replay"], explain=True,
                                      where=f"{where / 'run.json'} (replay)")  # fmt: skip
            trace = cfg.workload.build(cfg.machine.total_procs if cfg.machine is not None else None)
        except O2KSimError as exc:
            raise O2KSimError(f"{where}: cannot simulate the run again: {exc}") from None
        machine = cfg.machine or machine_from_header(trace.header, trace.source)
        return cls(where, meta, jobs, cfg, trace, machine)

    def replay(self, observers: Sequence[Observer] = ()) -> Result:
        """Simulate the run again (``explain=True``: reservations are reported) with
        ``observers`` attached; refused if any job's start or end differs from ``jobs.csv``."""
        result = run_config(self.config, observers=observers)
        _check_same(self.jobs, result.job_table, self.folder)
        return result


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
