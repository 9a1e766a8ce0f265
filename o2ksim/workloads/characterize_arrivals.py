"""The arrival process of a trace as thesis T§4.3 characterises the O2K workload.

Jobs per day of the week and per hour of the day (T§4.3, Figs. 14-19), and
the arrival periods (weekday peak / intermediate / low, weekend intermediate
/ low) with jobs per hour and the interarrival-time mean and CV of each, with
the thesis's four candidate fits: two-stage hyperexponential, Weibull, gamma
and exponential (T§4.3, Fig. 20).  :func:`~o2ksim.workloads.characterize.characterize`
puts these tables next to those of the job attributes (T§4.4-§4.5); they are
apart because the arrival process is read from the local clock, the job
attributes are not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.validation import check_keys, check_number, check_str, shown, shown_number
from o2ksim.workloads import distributions as dist

__all__ = ["DEFAULT_PERIODS", "Arrivals", "arrival_tables"]

DEFAULT_PERIODS: tuple[dict[str, Any], ...] = (
    {"name": "weekday-low", "days": "weekday", "start_hour": 0, "end_hour": 8},
    {"name": "weekday-peak", "days": "weekday", "start_hour": 8, "end_hour": 18},
    {"name": "weekday-intermediate", "days": "weekday", "start_hour": 18, "end_hour": 24},
    {"name": "weekend-low", "days": "weekend", "start_hour": 0, "end_hour": 8},
    {"name": "weekend-intermediate", "days": "weekend", "start_hour": 8, "end_hour": 24},
)
"""The arrival-rate periods of T§4.3 (weekday peak 8am-6pm, intermediate 6pm-midnight, low midnight-8am)."""

_DAYNAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass
class Arrivals:
    """What :func:`arrival_tables` finds: its tables, the mean jobs per day and the interarrival times."""

    tables: dict[str, pd.DataFrame]  # jobs_per_day_of_week, jobs_per_hour, periods
    jobs_per_weekday: float
    jobs_per_weekend_day: float
    interarrivals: dict[str, np.ndarray]  # period name -> interarrival times (s) within it


PERIOD_DAYS = ("weekday", "weekend", "all")
"""The days an arrival period may cover (``days``)."""


def check_periods(periods: Any) -> None:
    """Refuse, in one line, arrival periods that are not a list of tables
    ``{name, days, start_hour, end_hour}`` with ``days`` one of :data:`PERIOD_DAYS`,
    hours from 0 to 24 and the start before the end, and distinct names: a period
    with ``days = "weekdays"`` would silently count weekdays, one with hours reversed
    no job at all."""
    where = "characterize"
    if isinstance(periods, str | bytes) or not isinstance(periods, Sequence) or not periods:
        raise O2KSimError(f"{where}: periods must be a non-empty list of tables, got {shown(periods)}")
    names: set[str] = set()
    for k, per in enumerate(periods):
        field = f"periods[{k}]"
        if not isinstance(per, Mapping):
            raise O2KSimError(f"{where}: {field} must be a table, got {shown(per)}")
        check_keys(per, {"name", "days", "start_hour", "end_hour"}, where, prefix=field + ".")
        missing = {"name", "days", "start_hour", "end_hour"} - set(per)
        if missing:
            raise O2KSimError(f"{where}: {field} lacks {', '.join(sorted(missing))}")
        name = check_str(per["name"], where, field + ".name")
        if name in names:
            raise O2KSimError(f"{where}: {field}.name: '{name}' names two periods")
        names.add(name)
        if per["days"] not in PERIOD_DAYS:
            raise O2KSimError(
                f"{where}: {field}.days must be one of {', '.join(PERIOD_DAYS)}, got {shown(per['days'])}"
            )
        lo = check_number(per["start_hour"], where, field + ".start_hour", minimum=0, maximum=24)
        hi = check_number(per["end_hour"], where, field + ".end_hour", minimum=0, maximum=24)
        if hi <= lo:
            raise O2KSimError(
                f"{where}: {field}: end_hour {shown_number(hi)} must be after start_hour {shown_number(lo)}"
            )


def _period_index(
    weekday: np.ndarray, minute: np.ndarray, periods: Sequence[Mapping[str, Any]]
) -> np.ndarray:
    """The index in *periods* of each job's arrival period (-1: in none of them)."""
    hour = minute / 60.0
    weekend = weekday >= 5
    idx = np.full(len(minute), -1)
    for k, per in enumerate(periods):
        days = per["days"]
        dmask = (
            np.ones(len(minute), bool)
            if days == "all"
            else (weekend if days == "weekend" else ~weekend)
        )
        idx = np.where(
            (idx < 0) & dmask & (hour >= per["start_hour"]) & (hour < per["end_hour"]), k, idx
        )
    return idx


def arrival_tables(
    submit: np.ndarray,
    day: np.ndarray,
    minute: np.ndarray,
    weekday: np.ndarray,
    *,
    span: float | None,
    periods: Sequence[Mapping[str, Any]] = DEFAULT_PERIODS,
    fits: bool = True,
    max_fit_samples: int = 20000,
) -> Arrivals:
    """The arrival tables of jobs submitted at *submit* (seconds) on the local clock (*day*,
    *minute*, *weekday*, see :func:`~o2ksim.workloads.clock.local_clock`).

    Only complete days count, unless *span* says the trace covers whole days
    (a generated one).  With *fits*, the interarrival times of each period get
    the four fits (maximum likelihood on at most *max_fit_samples* values,
    evenly thinned).
    """
    tables: dict[str, pd.DataFrame] = {}
    # ---- days of the week, hours (T§4.3)
    days = np.arange(day.min(), day.max() + 1)
    per_day = pd.Series(np.bincount(day - day.min(), minlength=len(days)), index=days)
    # only complete days count (the first and last may be partial)
    if len(days) > 2:
        per_day = per_day.iloc[1:-1] if span is None else per_day
    dow = (per_day.index.to_numpy() + 3) % 7
    rows: list[dict[str, Any]] = []
    for k, name in enumerate(_DAYNAMES):
        v = per_day.to_numpy()[dow == k]
        rows.append(
            {
                "day": name,
                "days": len(v),
                "mean_jobs": v.mean() if len(v) else float("nan"),
                "min_jobs": v.min() if len(v) else float("nan"),
                "max_jobs": v.max() if len(v) else float("nan"),
            }
        )
    tables["jobs_per_day_of_week"] = pd.DataFrame(rows)
    wk_days = per_day.to_numpy()[dow < 5]
    we_days = per_day.to_numpy()[dow >= 5]
    hour = minute // 60
    is_we = weekday >= 5
    n_wk, n_we = max((dow < 5).sum(), 1), max((dow >= 5).sum(), 1)
    in_days = np.isin(day, per_day.index.to_numpy())
    tables["jobs_per_hour"] = pd.DataFrame(
        {
            "hour": np.arange(24),
            "weekday_mean": np.bincount(hour[in_days & ~is_we], minlength=24) / n_wk,
            "weekend_mean": np.bincount(hour[in_days & is_we], minlength=24) / n_we,
        }
    )

    # ---- periods and interarrival times (T§4.3)
    pidx = _period_index(weekday, minute, periods)
    order = np.argsort(submit, kind="stable")
    s_sorted, p_sorted, d_sorted = submit[order], pidx[order], day[order]
    gaps = np.diff(s_sorted)
    same = (p_sorted[1:] == p_sorted[:-1]) & (d_sorted[1:] == d_sorted[:-1]) & (p_sorted[1:] >= 0)
    prow = []
    inter_by_period: dict[str, np.ndarray] = {}
    for k, per in enumerate(periods):
        hours = (per["end_hour"] - per["start_hour"]) * (n_we if per["days"] == "weekend" else n_wk)
        njobs = int((in_days & (pidx == k)).sum())
        ia = gaps[same & (p_sorted[1:] == k)]
        ia = ia[ia > 0]
        inter_by_period[per["name"]] = ia
        row: dict[str, Any] = {
            "period": per["name"],
            "jobs": njobs,
            "jobs_per_hour": njobs / hours if hours else float("nan"),
            "interarrivals": len(ia),
            "mean_s": ia.mean() if len(ia) else float("nan"),
            "cv": ia.std() / ia.mean() if len(ia) > 1 else float("nan"),
        }
        if fits and len(ia) >= 20:
            x = (
                ia
                if len(ia) <= max_fit_samples
                else np.sort(ia)[:: math.ceil(len(ia) / max_fit_samples)]
            )
            h = dist.hyperexp_fit(x)
            hg = dist.hyperexp_goodness(x, h)
            w = dist.weibull_fit(x)
            g = dist.gamma_fit(x)
            e = dist.exponential_fit(x)
            row.update(
                {
                    "hyperexp_p1": h["p1"],
                    "hyperexp_mean1": h["mean1"],
                    "hyperexp_mean2": h["mean2"],
                    "hyperexp_ks": hg["ks"],
                    "weibull_shape": w["shape"],
                    "weibull_scale": w["scale"],
                    "weibull_ks": w["ks"],
                    "gamma_shape": g["shape"],
                    "gamma_scale": g["scale"],
                    "gamma_ks": g["ks"],
                    "exponential_ks": e["ks"],
                }
            )
            row["best_fit"] = min(
                ("hyperexp", hg["ks"]),
                ("weibull", w["ks"]),
                ("gamma", g["ks"]),
                ("exponential", e["ks"]),
                key=lambda t: t[1],
            )[0]
        prow.append(row)
    tables["periods"] = pd.DataFrame(prow)
    return Arrivals(
        tables=tables,
        jobs_per_weekday=float(wk_days.mean()) if len(wk_days) else float("nan"),
        jobs_per_weekend_day=float(we_days.mean()) if len(we_days) else float("nan"),
        interarrivals=inter_by_period,
    )
