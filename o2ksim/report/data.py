"""The numbers behind the report's plots, computed with pandas only (T§3.5, SPEC §5).

* :func:`runtime_groups` -- average and maximum wait and average slowdown per
  actual-runtime group (the eleven groups of T§3.5, Fig. 4(a), (c), (d));
* :func:`top_waits` -- the jobs with the highest 5% of the waits (T§3.6 Fig. 7);
* :func:`mean_ci` -- a mean over seeds with its 95% confidence interval
  (:func:`t_interval`);
* :func:`p95_points` -- the 95th-percentile plot of T§3.5, Fig. 4(b): drop the
  top 5% of the wait times, then plot the top three remaining waits in each of
  six runtime ranges at the runtimes where they occur;
* :func:`size_groups` -- average and maximum wait versus requested processors
  or requested memory (T§3.5 "auxiliary data", T§5.3.3 Fig. 59(e)-(h));
* :func:`class_groups` -- mean/max wait and mean slowdown per NCSA-LSF* job
  class (T§3.6 Figs. 5-6);
* :func:`utilisation_series` -- the fraction of processors held, per time bin;
* :func:`queue_series` -- the number of waiting jobs over time.

Every function takes the per-job table of :func:`o2ksim.run.api.simulate`
(``Result.jobs``) and uses only analysed jobs that ran, like
:func:`o2ksim.metrics.summary`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from o2ksim import metrics
from o2ksim.analysis.lsf_classes import lsf_class_table

if TYPE_CHECKING:
    from o2ksim.machine import MachineSpec
    from o2ksim.policies.lsf.classes import LSFConfig

P95_RANGE_BOUNDS_MIN = (1.0, 10.0, 100.0, 1000.0, 10**3.5, 10**4)
"""Upper bounds (minutes) of the six runtime ranges of the 95th-percentile plot (T§3.5)."""

PROC_BINS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""Upper bounds of the requested-processor groups: 1, 2, 3-4, 5-8, ..."""

MEM_BINS_GB = (0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128)
"""Upper bounds (GB) of the requested-memory groups."""


def analysed_ran(jobs: pd.DataFrame) -> pd.DataFrame:
    """The analysed jobs that started (completed or killed), as in :func:`o2ksim.metrics.summary`."""
    mask = jobs["status"].isin(("completed", "killed"))
    if "analysed" in jobs:
        mask &= jobs["analysed"].astype(bool)
    return jobs.loc[mask]


def runtime_groups(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per actual-runtime group: jobs, runtime_gmean, mean/p95/max wait, runtime_at_max,
    mean_slowdown, max_slowdown and runtime_at_max_slowdown.

    See :func:`o2ksim.metrics.by_runtime_group` (the same eleven groups); the
    maximum slowdown is drawn, like the maximum wait, at the runtime of the job
    where it occurs (T§3.5 Fig. 4(e)).
    """
    out = metrics.by_runtime_group(jobs)
    if out.empty:
        return out
    ran = analysed_ran(jobs)
    ran = ran.loc[ran["run_time"] >= 0]
    groups = metrics.runtime_group(ran["run_time"])
    worst, at = [], []
    for g in out["group"]:
        part = ran.loc[groups == g]
        sd = part["slowdown"].to_numpy(float)
        i = int(np.nanargmax(sd)) if np.isfinite(sd).any() else 0
        worst.append(float(sd[i]) if len(sd) else math.nan)
        at.append(float(part["run_time"].iloc[i]) if len(sd) else math.nan)
    return out.assign(max_slowdown=worst, runtime_at_max_slowdown=at)


def top_waits(jobs: pd.DataFrame, fraction: float = 0.05) -> pd.DataFrame:
    """The jobs with the highest ``fraction`` of the waits (T§3.6 Fig. 7: the highest 5%).

    The same jobs that :func:`p95_points` removes: the ``floor(fraction * n)``
    largest waits of the n analysed jobs that ran (at least one job).
    Columns: job_id, run_time, wait (seconds), largest wait first.
    """
    ran = analysed_ran(jobs)
    ran = ran.loc[ran["run_time"] >= 0, ["job_id", "run_time", "wait"]]
    if ran.empty:
        return pd.DataFrame(columns=["job_id", "run_time", "wait"])
    n_top = max(1, math.floor(fraction * len(ran)))
    top = ran.sort_values("wait", kind="stable").iloc[len(ran) - n_top :]
    return top.iloc[::-1].reset_index(drop=True)


def t_interval(values: np.ndarray | pd.Series, level: float = 0.95) -> tuple[float, float]:
    """The Student-t ``level`` confidence interval of the mean of ``values`` (NaN dropped).

    mean ± t(1/2 + level/2, n - 1) * s / sqrt(n); the mean itself when n < 2.
    """
    from scipy import stats  # heavy: only when intervals are computed

    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return math.nan, math.nan
    m = float(x.mean())
    if len(x) < 2:
        return m, m
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m - half, m + half


def mean_ci(frame: pd.DataFrame, keys: list[str], values: list[str], level: float = 0.95) -> pd.DataFrame:
    """Mean over the rows of each ``keys`` group (e.g. over seeds) with a Student-t confidence interval.

    For each column ``v`` of ``values``: ``v`` (the mean), ``v_lo`` and
    ``v_hi`` (the ``level`` interval mean ± t * s / sqrt(n); equal to the mean
    when a group has one row) and ``n`` (rows in the group).
    """
    rows = []
    for key, part in frame.groupby(keys, sort=False):
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        row["n"] = len(part)
        for v in values:
            x = part[v].to_numpy(float)
            finite = x[np.isfinite(x)]
            row[v] = float(finite.mean()) if len(finite) else math.nan
            row[f"{v}_lo"], row[f"{v}_hi"] = t_interval(x, level)
        rows.append(row)
    return pd.DataFrame(rows)


def p95_points(jobs: pd.DataFrame, top: int = 3) -> pd.DataFrame:
    """The points of the thesis's 95th-percentile wait plot (T§3.5, Fig. 4(b)).

    The top 5% of the wait times (over all analysed jobs that ran) are removed;
    the remaining jobs are split into six actual-runtime ranges with upper
    bounds 1, 10, 100, 1000, 10^3.5 and 10^4 minutes (the last also holding
    longer jobs); the ``top`` largest remaining waits of each range are
    returned with the runtimes where they occur.  Columns: range (0-5),
    upper_min, rank (1 = largest), run_time, wait.
    """
    ran = analysed_ran(jobs)
    ran = ran.loc[ran["run_time"] >= 0, ["run_time", "wait"]]
    if ran.empty:
        return pd.DataFrame(columns=["range", "upper_min", "rank", "run_time", "wait"])
    n_keep = len(ran) - math.floor(0.05 * len(ran))
    kept = ran.sort_values("wait", kind="stable").iloc[:n_keep]
    minutes = kept["run_time"].to_numpy(float) / 60.0
    rng = np.searchsorted(np.asarray(P95_RANGE_BOUNDS_MIN[:-1]), minutes, side="left")
    rows = []
    for r in range(len(P95_RANGE_BOUNDS_MIN)):
        part = kept.loc[rng == r].sort_values("wait", ascending=False, kind="stable").head(top)
        for rank, (rt, w) in enumerate(zip(part["run_time"], part["wait"], strict=True), 1):
            rows.append(
                {"range": r, "upper_min": P95_RANGE_BOUNDS_MIN[r], "rank": rank,
                 "run_time": float(rt), "wait": float(w)}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=["range", "upper_min", "rank", "run_time", "wait"])


def _bin_labels(bounds: tuple[float, ...], unit: str, integer: bool) -> list[str]:
    labels = []
    lower = 0.0
    for b in bounds:
        if integer:
            lo = int(lower) + 1
            labels.append(f"{int(b)}" if lo == int(b) else f"{lo}-{int(b)}")
        else:
            labels.append(f"≤{b:g}{unit}" if lower == 0 else f"{lower:g}-{b:g}{unit}")
        lower = b
    labels.append(f">{bounds[-1]:g}{unit}")
    return labels


def size_groups(jobs: pd.DataFrame, by: str = "procs") -> pd.DataFrame:
    """Average and maximum wait per requested-processor (``by="procs"``) or memory (``"mem"``) group.

    Processor groups: 1, 2, 3-4, 5-8, ... (powers of two).  Memory groups (GB):
    ≤0.25, 0.25-0.5, ... 64-128, >128; jobs without a memory request (0) are
    left out.  Columns: group (order), label, jobs, mean_wait, max_wait.
    Groups without jobs are omitted.
    """
    ran = analysed_ran(jobs)
    if by == "procs":
        values = ran["procs"].to_numpy(float)
        bounds: tuple[float, ...] = PROC_BINS
        labels = _bin_labels(bounds, "", integer=True)
        keep = values > 0
    elif by == "mem":
        values = ran["mem"].to_numpy(float) / 1024.0  # MB -> GB
        bounds = MEM_BINS_GB
        labels = _bin_labels(bounds, " GB", integer=False)
        keep = values > 0
    else:
        raise ValueError(f"size_groups: by must be 'procs' or 'mem', not {by!r}")
    ran = ran.loc[keep]
    values = values[keep]
    idx = np.searchsorted(np.asarray(bounds, dtype=float), values, side="left")
    rows = []
    for g in range(len(bounds) + 1):
        part = ran.loc[idx == g]
        if part.empty:
            continue
        rows.append(
            {"group": g, "label": labels[g], "jobs": len(part),
             "mean_wait": float(part["wait"].mean()), "max_wait": float(part["wait"].max())}
        )  # fmt: skip
    return pd.DataFrame(rows, columns=["group", "label", "jobs", "mean_wait", "max_wait"])


def utilisation_series(
    segments: pd.DataFrame,
    total_procs: int,
    start: float,
    end: float,
    bins: int = 100,
) -> pd.DataFrame:
    """Fraction of the machine's processors held by jobs in each of ``bins`` equal bins.

    Exact (not sampled): the processors held form a step function whose
    integral is piecewise linear, evaluated at the bin edges.  Columns: start,
    end, mid (seconds) and utilisation.
    """
    if end <= start or bins < 1 or total_procs <= 0:
        raise ValueError("utilisation_series: needs end > start, bins >= 1, total_procs > 0")
    edges = np.linspace(start, end, bins + 1)
    if len(segments):
        s = segments["start"].to_numpy(float)
        e = segments["end"].to_numpy(float)
        p = segments["procs"].to_numpy(float)
        times = np.concatenate([s, e])
        deltas = np.concatenate([p, -p])
        order = np.argsort(times, kind="stable")
        times, deltas = times[order], deltas[order]
        level = np.cumsum(deltas)  # processors held from times[i] on
        area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(times))])
        # integral from times[0] to x: area at the last breakpoint <= x plus level * (x - t)
        i = np.searchsorted(times, edges, side="right") - 1
        before = i < 0
        i = np.clip(i, 0, len(times) - 1)
        integral = area[i] + level[i] * (edges - times[i])
        integral[before] = 0.0
        busy = np.diff(integral)
    else:
        busy = np.zeros(bins)
    width = np.diff(edges)
    return pd.DataFrame(
        {
            "start": edges[:-1],
            "end": edges[1:],
            "mid": (edges[:-1] + edges[1:]) / 2,
            "utilisation": busy / (total_procs * width),
        }
    )


def class_groups(
    jobs: pd.DataFrame, machine: MachineSpec | LSFConfig | str | None = "o2k"
) -> pd.DataFrame:
    """Per NCSA-LSF* job class (T§3.6 Figs. 5-6): jobs, mean_wait, max_wait, mean_slowdown.

    The classes (time class by requested runtime, size class by processors and
    memory, thesis Table 3) are those of ``machine``'s LSF configuration
    (default: the O2K hosts).  Classes without jobs are left out.
    """
    waits = lsf_class_table(jobs, machine)
    slow = lsf_class_table(jobs.assign(wait=jobs["slowdown"]), machine)  # same classes, slowdown
    out = waits[["class", "jobs", "mean_wait", "max_wait"]].copy()
    out["mean_slowdown"] = slow["mean_wait"].to_numpy()
    return out.loc[out["jobs"] > 0].reset_index(drop=True)


def queue_series(jobs: pd.DataFrame, start: float, end: float, bins: int = 100) -> pd.DataFrame:
    """Time-averaged number of waiting jobs in each of ``bins`` equal bins of ``[start, end)``.

    A job waits from its submission to its first start (or the end of the
    run, if it never started).  Exact, like :func:`utilisation_series`: the
    queue length is a step function.  Columns: start, end, mid, queue.
    """
    submit = jobs["submit"].to_numpy(float)
    first = jobs["start"].to_numpy(float)
    first = np.where(np.isnan(first), np.inf, first)
    segs = pd.DataFrame({"start": submit, "end": np.minimum(first, end), "procs": 1.0})
    segs = segs.loc[segs["end"] > segs["start"]]
    util = utilisation_series(segs, 1, start, end, bins)
    return util.rename(columns={"utilisation": "queue"})
