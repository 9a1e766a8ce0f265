"""Performance measures (T§3.5, G§4, SPEC §5).

Per job (built by the monitor): wait, response, slowdown = response / actual
runtime, and the bounded slowdown of :func:`bounded_slowdown`:
``(wait + max(T, 1 min)) / max(T, 1 min)`` -- "we compute the slowdown of a
job of under 1 minute as if it was a 1-minute job" (G§4), so it is never
below 1.  (Dividing the response by ``max(T, 1 min)`` instead would give a
30-second job that waited 10 seconds a bounded slowdown of 0.67.)

Overall, over the analysed jobs that ran: mean, 95th percentile and maximum
wait; mean slowdown; mean and maximum bounded slowdown; total excessive wait
over a fixed threshold; utilisation of the machine over the window.

Versus actual runtime (T§3.5, Fig. 4): eleven groups with upper bounds
``10**i`` minutes, ``i = -1, -0.5, ..., 4``; the last group also holds every
job above ``10**4`` minutes; each group is plotted at the geometric mean of its
runtimes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from o2ksim.table import column

if TYPE_CHECKING:  # a run's summary needs no pandas; by_runtime_group builds a DataFrame
    import pandas as pd

EXCESSIVE_WAIT_THRESHOLD = 50 * 3600.0  # seconds; the fixed threshold ω of G§3.1 (50 hours)

RUNTIME_GROUP_BOUNDS_MIN = tuple(10.0**e for e in np.arange(-1.0, 4.01, 0.5))
"""Upper bounds (minutes) of the thesis's eleven actual-runtime groups."""


BOUNDED_SLOWDOWN_FLOOR = 60.0
"""Seconds: a job shorter than this counts as this long in the bounded slowdown (G§4)."""


def bounded_slowdown(wait: Any, run_time: Any) -> Any:
    """``(wait + T') / T'`` with ``T' = max(T, 1 minute)``: at least 1 for any wait >= 0 (G§4).

    Works on scalars, numpy arrays and pandas Series alike.
    """
    floor = np.maximum(run_time, BOUNDED_SLOWDOWN_FLOOR)
    return (wait + floor) / floor


def _ran(jobs: pd.DataFrame) -> pd.DataFrame:
    """Analysed jobs that started (completed or killed)."""
    mask = jobs["status"].isin(("completed", "killed"))
    if "analysed" in jobs:
        mask &= jobs["analysed"]
    return jobs.loc[mask]


def summary(
    jobs: pd.DataFrame,
    segments: pd.DataFrame | None = None,
    total_procs: int | None = None,
    span: tuple[float, float] | None = None,
    down: Sequence[tuple[float, float, int]] | None = None,
) -> dict[str, Any]:
    """The overall measures of SPEC §5 as a flat dict (seconds; slowdowns unitless).

    ``jobs`` is the per-job table (with an optional boolean ``analysed`` column
    selecting the window's jobs), a DataFrame or a :class:`~o2ksim.table.ColumnTable`.  Utilisation needs the allocation
    ``segments``, the machine's ``total_procs`` and the ``span`` to measure
    over (default: first analysed submit to last analysed end).  ``down``
    (with capacity over time): the ``(start, end, procs)`` periods processors
    were out of service; ``utilisation_up`` then divides by the capacity that
    was up (:func:`utilisation_up`).

    Each column is taken out of the table once and the measures are computed
    on numpy arrays; means skip NaN as pandas' ``Series.mean`` does (NaN
    counted as 0 in the sum, left out of the count), so the values are those
    of the pandas formulation, bit for bit.
    """
    status = column(jobs, "status", object)
    analysed = column(jobs, "analysed", bool) if "analysed" in jobs else np.ones(len(jobs), bool)
    completed = status == "completed"
    killed = status == "killed"
    ran = (completed | killed) & analysed
    done = completed & ran
    wait = column(jobs, "wait", float)[ran]
    slowdown = column(jobs, "slowdown", float)[done]
    bounded = column(jobs, "bounded_slowdown", float)[done]
    unfinished = (status == "unfinished") | (status == "not_started")
    out: dict[str, Any] = {
        "jobs": int(analysed.sum()),
        "completed": int((completed & analysed).sum()),
        "killed": int((killed & analysed).sum()),
        "rejected": int(((status == "rejected") & analysed).sum()),
        "unfinished": int((unfinished & analysed).sum()),
        "mean_wait": _f(wait.mean()) if len(wait) else math.nan,
        "p95_wait": float(np.percentile(wait, 95.0)) if len(wait) else math.nan,
        "max_wait": _f(wait.max()) if len(wait) else math.nan,
        "mean_slowdown": _nanmean(slowdown),
        "mean_bounded_slowdown": _nanmean(bounded),
        "max_bounded_slowdown": _nanmax(bounded),
        "total_excessive_wait_50h": _f(np.maximum(wait - EXCESSIVE_WAIT_THRESHOLD, 0).sum()),
    }
    if "preemptions" in jobs:
        out["preemptions"] = int(column(jobs, "preemptions")[analysed].sum())
    if segments is not None and total_procs:
        if span is None and ran.any():
            span = (
                -_nanmax(-column(jobs, "submit", float)[ran]),
                _nanmax(column(jobs, "end", float)[ran]),
            )
        out["utilisation"] = utilisation(segments, total_procs, span) if span else math.nan
        # the time it is measured over: the window, else first submit to last end (not the
        # arrivals' span, over which a generated workload's offered load is stated)
        out["utilisation_span"] = float(span[1] - span[0]) if span else math.nan
        if down is not None:
            out["utilisation_up"] = (
                utilisation_up(segments, total_procs, span, down) if span else math.nan
            )
    return out


def _nanmean(values: np.ndarray) -> float:
    """Mean of the non-NaN values (NaN when there are none), summed as pandas sums them."""
    missing = np.isnan(values)
    count = len(values) - int(missing.sum())
    if count == 0:
        return math.nan
    return _f(np.where(missing, 0.0, values).sum() / float(count))


def _nanmax(values: np.ndarray) -> float:
    kept = values[~np.isnan(values)]
    return _f(kept.max()) if len(kept) else math.nan


def _f(x: Any) -> float:
    return float(x) if x is not None and not math.isnan(x) else math.nan


def utilisation(segments: pd.DataFrame, total_procs: int, span: tuple[float, float]) -> float:
    """Fraction of processor-time in ``span`` held by jobs."""
    t0, t1 = span
    if t1 <= t0 or len(segments) == 0:
        return math.nan
    return _busy(segments, t0, t1) / (total_procs * (t1 - t0))


def utilisation_up(
    segments: pd.DataFrame,
    total_procs: int,
    span: tuple[float, float],
    down: Iterable[tuple[float, float, int]],
) -> float:
    """Fraction of the processor-time that was *up* in ``span`` held by jobs.

    ``down``: ``(start, end, procs)`` periods when processors were out of
    service (with capacity over time: when an outage held them, from the end
    of its drain to its end).  The denominator is the machine's
    processor-time over ``span`` less these periods' inside it, so a machine
    whose every processor that was up was busy scores 1 while
    :func:`utilisation` scores less.
    """
    t0, t1 = span
    if t1 <= t0 or len(segments) == 0:
        return math.nan
    lost = sum(p * max(0.0, min(e, t1) - max(s, t0)) for s, e, p in down)
    up = total_procs * (t1 - t0) - lost
    return _busy(segments, t0, t1) / up if up > 0 else math.nan


def _busy(segments: pd.DataFrame, t0: float, t1: float) -> float:
    """Processor-seconds held by jobs between ``t0`` and ``t1``."""
    start = np.clip(column(segments, "start", float), t0, t1)
    end = np.clip(column(segments, "end", float), t0, t1)
    return float((column(segments, "procs", float) * (end - start)).sum())


def runtime_group(run_time_seconds: pd.Series | np.ndarray) -> np.ndarray:
    """Index 0..10 of each job's thesis runtime group (last group is open-ended)."""
    minutes = np.asarray(run_time_seconds, dtype=float) / 60.0
    bounds = np.asarray(RUNTIME_GROUP_BOUNDS_MIN[:-1])
    return np.searchsorted(bounds, minutes, side="left")


def by_runtime_group(jobs: pd.DataFrame) -> pd.DataFrame:
    """Average, 95th percentile and maximum wait per actual-runtime group (T§3.5, Fig. 4).

    Columns: group, upper_min (bound in minutes), jobs, runtime_gmean (seconds,
    where the group is plotted), mean_wait, p95_wait, max_wait,
    runtime_at_max (the runtime where the maximum wait occurs), mean_slowdown.
    """
    ran = _ran(jobs)
    ran = ran.loc[ran["run_time"] >= 0]
    groups = runtime_group(ran["run_time"])
    rows = []
    for g in range(len(RUNTIME_GROUP_BOUNDS_MIN)):
        part = ran.loc[groups == g]
        if part.empty:
            continue
        rt = np.maximum(part["run_time"].to_numpy(float), 1.0)
        i_max = int(np.argmax(part["wait"].to_numpy(float)))
        rows.append(
            {
                "group": g,
                "upper_min": RUNTIME_GROUP_BOUNDS_MIN[g],
                "jobs": len(part),
                "runtime_gmean": float(np.exp(np.log(rt).mean())),
                "mean_wait": float(part["wait"].mean()),
                "p95_wait": float(np.percentile(part["wait"], 95)),
                "max_wait": float(part["wait"].iloc[i_max]),
                "runtime_at_max": float(part["run_time"].iloc[i_max]),
                "mean_slowdown": float(part["slowdown"].mean()),
            }
        )
    import pandas as pd

    return pd.DataFrame(rows)
