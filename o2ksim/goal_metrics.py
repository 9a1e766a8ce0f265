"""Comparison measures of the goal-oriented paper (G§4, §6.3) and its monthly protocol.

* :func:`normalized_excessive_wait` -- E^maxW_FCFS-bf and E^98%W_FCFS-bf (G§4):
  "two thresholds are used to compute these normalized measures: the maximum
  wait and the ninety-eighth percentile wait time under FCFS-backfill for that
  month and load level. ... The total normalized excessive wait is the sum of
  the normalized excessive wait of all jobs."  The paper does not print the
  normalisation; o2ksim divides each job's excess over the threshold by the
  threshold (so a job that waits twice the FCFS-backfill maximum adds 1), and
  also reports the number of jobs above the threshold (G Fig. 9c).
* :func:`class_wait_matrix` -- average wait of each N x T job class (G Fig. 12):
  five ranges of requested nodes N and five of actual runtime T.
* :func:`month_windows` / :func:`month_workload` -- month-by-month runs with a
  one-week warm-up, at the original load or with the month's interarrival
  times shrunk to a target load (G§4), reusing
  :func:`o2ksim.workloads.reshape.scale_load`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.workloads.reshape import offered_load, scale_load
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.transforms import Window

WEEK = 7 * 86400.0
N_BOUNDS = (8, 16, 32, 64, math.inf)
"""Upper bounds of the requested-node classes (G Fig. 12; the IA-64 has 128 nodes)."""
T_BOUNDS_H = (1.0, 4.0, 8.0, 16.0, math.inf)
"""Upper bounds (hours) of the actual-runtime classes (G Fig. 12)."""


def _ran(jobs: pd.DataFrame) -> pd.DataFrame:
    mask = jobs["status"].isin(("completed", "killed"))
    if "analysed" in jobs:
        mask &= jobs["analysed"]
    return jobs.loc[mask]


def fcfs_thresholds(fcfs_jobs: pd.DataFrame) -> tuple[float, float]:
    """(maximum wait, 98th-percentile wait) of the FCFS-backfill run (seconds)."""
    wait = _ran(fcfs_jobs)["wait"].to_numpy(float)
    return float(wait.max()), float(np.percentile(wait, 98))


def normalized_excessive_wait(jobs: pd.DataFrame, threshold: float) -> tuple[float, int]:
    """Total normalised excessive wait over ``threshold`` and the number of jobs above it."""
    wait = _ran(jobs)["wait"].to_numpy(float)
    excess = np.maximum(wait - threshold, 0.0)
    total = float((excess / threshold).sum()) if threshold > 0 else float(excess.sum())
    return total, int((excess > 0).sum())


def comparison(jobs: pd.DataFrame, fcfs_jobs: pd.DataFrame) -> dict[str, float]:
    """E^maxW_FCFS-bf and E^98%W_FCFS-bf of a run against the FCFS-backfill run of the same month."""
    t_max, t_98 = fcfs_thresholds(fcfs_jobs)
    e_max, n_max = normalized_excessive_wait(jobs, t_max)
    e_98, n_98 = normalized_excessive_wait(jobs, t_98)
    return {
        "E_maxW_fcfs_bf": e_max,
        "jobs_over_maxW_fcfs_bf": n_max,
        "E_98W_fcfs_bf": e_98,
        "jobs_over_98W_fcfs_bf": n_98,
    }


def class_wait_matrix(
    jobs: pd.DataFrame,
    n_bounds: tuple[float, ...] = N_BOUNDS,
    t_bounds_h: tuple[float, ...] = T_BOUNDS_H,
) -> pd.DataFrame:
    """Average wait (hours) per class: rows = runtime ranges ``T <= t``, columns = ``N <= n``."""
    ran = _ran(jobs)
    n_idx = np.searchsorted(np.asarray(n_bounds[:-1]), ran["procs"].to_numpy(float), side="left")
    t_idx = np.searchsorted(
        np.asarray(t_bounds_h[:-1]) * 3600.0, ran["run_time"].to_numpy(float), side="left"
    )
    out = np.full((len(t_bounds_h), len(n_bounds)), np.nan)
    wait_h = ran["wait"].to_numpy(float) / 3600.0
    for ti in range(len(t_bounds_h)):
        for ni in range(len(n_bounds)):
            sel = (t_idx == ti) & (n_idx == ni)
            if sel.any():
                out[ti, ni] = wait_h[sel].mean()
    return pd.DataFrame(out, index=_labels("T", t_bounds_h, "h"), columns=_labels("N", n_bounds, ""))


def _labels(name: str, bounds: tuple[float, ...], unit: str) -> list[str]:
    """``T<=1h``, ..., and ``T>16h`` for the open last range."""
    out = [f"{name}<={b:g}{unit}" for b in bounds[:-1]]
    last = bounds[-1]
    out.append(f"{name}>{bounds[-2]:g}{unit}" if math.isinf(last) else f"{name}<={last:g}{unit}")
    return out


@dataclass(frozen=True)
class Month:
    """One calendar month of a trace: ``[start, end)`` in trace seconds, and its label."""

    label: str
    start: float
    end: float


def month_windows(trace: Any) -> list[Month]:
    """The calendar months (UTC) a trace covers, from its ``UnixStartTime`` (else 30-day blocks)."""
    submit = trace.jobs["submit"].to_numpy(float)
    first, last = float(submit.min()), float(submit.max())
    unix = getattr(trace.header, "unix_start_time", None)
    if unix is None:
        edges = list(np.arange(first, last + 30 * 86400.0, 30 * 86400.0))
        return [Month(f"block{i + 1}", a, b) for i, (a, b) in enumerate(itertools.pairwise(edges))]
    t0 = pd.Timestamp(unix + first, unit="s")
    t1 = pd.Timestamp(unix + last, unit="s")
    edges = pd.date_range(t0.to_period("M").start_time, t1 + pd.offsets.MonthBegin(1), freq="MS")
    out = []
    for a, b in itertools.pairwise(edges):
        s, e = a.timestamp() - unix, b.timestamp() - unix
        if ((submit >= s) & (submit < e)).any():
            out.append(Month(a.strftime("%Y-%m"), s, e))
    return out


def month_workload(
    trace: Any, month: Month, procs: int, rho: float | None = None, warmup: float = WEEK
) -> tuple[Any, Window, float]:
    """The jobs to simulate for ``month`` (from one ``warmup`` before it), its window and load.

    With ``rho`` the interarrival times of these jobs are shrunk (or
    stretched) so that the month's own offered load becomes ``rho`` (G§4):
    the whole sub-trace is scaled about its first submit by the factor that
    takes the month's load to ``rho``.  Returns the (possibly scaled) trace,
    the analysis window in its time and the month's offered load.
    """
    jobs = trace.jobs
    sub = jobs.loc[jobs["submit"] >= month.start - warmup].reset_index(drop=True)
    in_month = sub.loc[sub["submit"] < month.end]
    span = month.end - month.start
    month_only = Trace(jobs=in_month.loc[in_month["submit"] >= month.start], header=trace.header)
    load = offered_load(month_only, procs, span)
    part = Trace(jobs=sub, header=trace.header, source=trace.source)
    first = float(sub["submit"].min())
    if rho is None:
        return part, Window(month.start, month.end, max(0.0, month.start - first)), load
    whole = offered_load(part, procs, span)
    scaled = scale_load(part, whole * rho / load, procs=procs, span=span)
    f = load / rho

    def at(t: float) -> float:
        return first + (t - first) * f

    return scaled, Window(at(month.start), at(month.end), max(0.0, at(month.start) - first)), rho


__all__ = [
    "N_BOUNDS",
    "T_BOUNDS_H",
    "Month",
    "class_wait_matrix",
    "comparison",
    "fcfs_thresholds",
    "month_windows",
    "month_workload",
    "normalized_excessive_wait",
]
