"""The measures that compare simulated waits with recorded ones (``o2ksim validate``).

Everything here works on plain numpy arrays of waits in seconds, one pair per
job (the recorded wait, SWF field 3, and the simulated wait of the same job),
so each measure can be checked by hand:

* location and spread: mean, median, 95th percentile, maximum, share of
  zero waits (numpy's default linear percentile, as ``summary.json``);
* per-job agreement: Pearson's correlation of the raw waits and of
  ``log(1 + wait)`` (seconds), which weights a 1-minute against a 1-hour wait
  like a 1-hour against a 60-hour one;
* the two distributions: the two-sample Kolmogorov-Smirnov distance, the
  largest vertical gap between the two empirical CDFs (what
  ``scipy.stats.ks_2samp`` reports as its statistic);
* groups: the thesis's eleven actual-runtime groups (T§3.5 Fig. 4,
  :func:`o2ksim.metrics.runtime_group`), powers-of-two size groups,
  queues, partitions and calendar months;
* running processors over time (:func:`daily_busy`): the utilisation per
  day of a set of intervals, integrated exactly.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.metrics import RUNTIME_GROUP_BOUNDS_MIN, runtime_group

__all__ = [
    "GROUPINGS",
    "compare_waits",
    "daily_busy",
    "group_table",
    "ks_distance",
    "month_labels",
    "pearson",
    "runtime_group_label",
    "size_group_label",
    "wait_stats",
]

DAY = 86400.0


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov distance: ``max |F_a(x) - F_b(x)|`` over all ``x``.

    Both empirical CDFs are right-continuous step functions, so the largest
    gap is reached at one of the observed values. NaN for an empty sample.
    """
    a = np.sort(np.asarray(a, dtype=float))
    b = np.sort(np.asarray(b, dtype=float))
    if len(a) == 0 or len(b) == 0:
        return math.nan
    x = np.concatenate([a, b])
    fa = np.searchsorted(a, x, side="right") / len(a)
    fb = np.searchsorted(b, x, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson's correlation of two equal-length samples; NaN when either is constant or shorter than 2."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if len(a) < 2:
        return math.nan
    da, db = a - a.mean(), b - b.mean()
    denom = math.sqrt(float(np.dot(da, da)) * float(np.dot(db, db)))
    return float(np.dot(da, db) / denom) if denom > 0 else math.nan


def wait_stats(w: np.ndarray) -> dict[str, float]:
    """Mean, median, 95th percentile, maximum (seconds) and share of zero waits of one sample."""
    w = np.asarray(w, dtype=float)
    if len(w) == 0:
        return {k: math.nan for k in ("mean", "median", "p95", "max", "zero_share")}
    return {
        "mean": float(w.mean()),
        "median": float(np.median(w)),
        "p95": float(np.percentile(w, 95)),
        "max": float(w.max()),
        "zero_share": float(np.mean(w == 0)),
    }


def compare_waits(recorded: np.ndarray, simulated: np.ndarray) -> dict[str, float]:
    """Every measure of one group: ``jobs``, ``rec_*`` and ``sim_*`` (see :func:`wait_stats`),
    ``mean_diff`` (simulated - recorded, seconds), ``mean_ratio`` (simulated / recorded),
    ``ks``, ``pearson`` and ``pearson_log`` (of ``log(1 + wait)``)."""
    rec = np.asarray(recorded, dtype=float)
    sim = np.asarray(simulated, dtype=float)
    out: dict[str, float] = {"jobs": len(rec)}
    out.update({f"rec_{k}": v for k, v in wait_stats(rec).items()})
    out.update({f"sim_{k}": v for k, v in wait_stats(sim).items()})
    out["mean_diff"] = out["sim_mean"] - out["rec_mean"]
    out["mean_ratio"] = out["sim_mean"] / out["rec_mean"] if out["rec_mean"] > 0 else math.nan
    out["ks"] = ks_distance(rec, sim)
    out["pearson"] = pearson(rec, sim)
    out["pearson_log"] = pearson(np.log1p(rec), np.log1p(sim))
    return out


def runtime_group_label(g: int) -> str:
    """The label of thesis runtime group ``g`` (0..10) by its upper bound: ``<=6s`` ... ``>52.7h``."""
    bounds = RUNTIME_GROUP_BOUNDS_MIN
    if g >= len(bounds) - 1:
        return f">{_short(bounds[-2] * 60)}"
    return f"<={_short(bounds[g] * 60)}"


def _short(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.3g}s"
    if seconds < 3600:
        return f"{seconds / 60:.3g}m"
    return f"{seconds / 3600:.3g}h"


def size_group(procs: np.ndarray) -> np.ndarray:
    """Index ``k`` of the powers-of-two size group ``(2**(k-1), 2**k]`` (1 processor: 0)."""
    p = np.maximum(np.asarray(procs, dtype=float), 1.0)
    return np.ceil(np.log2(p) - 1e-12).astype(int)


def size_group_label(k: int) -> str:
    """``1``, ``2``, ``3-4``, ``5-8``, ... for size group ``k``."""
    if k <= 1:
        return str(2**k)
    return f"{2 ** (k - 1) + 1}-{2**k}"


def month_labels(submit: np.ndarray, unix_start: int | None, zone: str | None) -> np.ndarray:
    """Calendar month (``YYYY-MM``) of each submit time, in the trace's time zone when the
    header names one (``TimeZoneString``), else UTC; without ``UnixStartTime`` the
    30-day periods from the trace start (``day 0-29``, ``day 30-59``, ...)."""
    submit = np.asarray(submit, dtype=float)
    if unix_start is None:
        k = np.floor(submit / (30 * DAY)).astype(int)
        return np.array([f"day {30 * i}-{30 * i + 29}" for i in k], dtype=object)
    stamps = pd.to_datetime(unix_start + submit, unit="s", utc=True)
    if zone:
        # an unknown zone name: UTC, as without one
        with contextlib.suppress(KeyError, ValueError, TypeError):
            stamps = stamps.tz_convert(zone)
    return np.asarray(stamps.strftime("%Y-%m"), dtype=object)


def _runtime_key(f: pd.DataFrame) -> tuple[np.ndarray, Callable[[Any], str]]:
    return runtime_group(np.maximum(f["run_time"].to_numpy(float), 0.0)), runtime_group_label


def _size_key(f: pd.DataFrame) -> tuple[np.ndarray, Callable[[Any], str]]:
    return size_group(f["procs"].to_numpy()), size_group_label


def _column_key(name: str) -> Callable[[pd.DataFrame], tuple[np.ndarray, Callable[[Any], str]]]:
    def key(f: pd.DataFrame) -> tuple[np.ndarray, Callable[[Any], str]]:
        return f[name].to_numpy(), lambda v: "unknown" if v == -1 else str(v)

    return key


GROUPINGS: dict[str, Callable[[pd.DataFrame], tuple[np.ndarray, Callable[[Any], str]]]] = {
    "runtime": _runtime_key,
    "size": _size_key,
    "queue": _column_key("queue"),
    "partition": _column_key("partition"),
    "month": _column_key("month"),
}
"""Grouping name -> function giving each compared job's group key and the key's label."""


def group_table(compared: pd.DataFrame, grouping: str) -> pd.DataFrame:
    """:func:`compare_waits` per group of ``grouping`` (a key of :data:`GROUPINGS`), in key order.

    ``compared`` has one row per compared job with ``recorded_wait``,
    ``simulated_wait``, ``run_time``, ``procs``, ``queue``, ``partition`` and
    ``month``.  Columns: ``grouping``, ``key``, ``group`` (label), then the measures.
    """
    keys, label = GROUPINGS[grouping](compared)
    rec = compared["recorded_wait"].to_numpy(float)
    sim = compared["simulated_wait"].to_numpy(float)
    rows = []
    for k in sorted(set(keys.tolist())):
        m = keys == k
        rows.append({"grouping": grouping, "key": k, "group": label(k), **compare_waits(rec[m], sim[m])})
    return pd.DataFrame(rows)


def daily_busy(
    start: np.ndarray, end: np.ndarray, procs: np.ndarray, days: np.ndarray
) -> np.ndarray:
    """Processor-seconds busy in each day ``[d, d + 1 day)`` for the day starts ``days``.

    The running processors form a step function (each interval adds ``procs``
    from ``start`` to ``end``); its integral is piecewise linear between the
    events, so the integral up to each day boundary is exact by interpolation.
    """
    start = np.asarray(start, dtype=float)
    end = np.asarray(end, dtype=float)
    procs = np.asarray(procs, dtype=float)
    keep = end > start
    t = np.concatenate([start[keep], end[keep]])
    d = np.concatenate([procs[keep], -procs[keep]])
    bounds = np.append(np.asarray(days, dtype=float), float(days[-1]) + DAY) if len(days) else np.array([])
    if len(t) == 0 or len(bounds) == 0:
        return np.zeros(len(days))
    order = np.argsort(t, kind="stable")
    t, d = t[order], d[order]
    level = np.cumsum(d)  # running processors right after each event
    area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(t))])  # integral up to each event
    integral = np.interp(bounds, t, area, left=0.0, right=float(area[-1]))
    return np.diff(integral)


def day_starts(lo: float, hi: float) -> np.ndarray:
    """Starts of the days (multiples of 86,400 s from the trace start) covering ``[lo, hi)``."""
    first = math.floor(lo / DAY) * DAY
    return np.arange(first, max(hi, first + 1.0), DAY)


def day_label(day_start: float, unix_start: int | None) -> str:
    """A day's date (``YYYY-MM-DD``, UTC) when the trace has ``UnixStartTime``, else ``day N``."""
    if unix_start is None:
        return f"day {int(day_start // DAY)}"
    return datetime.fromtimestamp(unix_start + day_start, UTC).strftime("%Y-%m-%d")
