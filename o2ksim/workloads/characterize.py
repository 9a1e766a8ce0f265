"""Characterise a trace the way thesis ch. 4 characterises the O2K workload.

:func:`characterize` returns a :class:`Characterization`: tables (pandas
DataFrames) and a summary of what T§4.1-§4.5 report --

* jobs per day of the week and per hour of the day (T§4.3, Figs. 14-19);
* the arrival periods (weekday peak / intermediate / low, weekend
  intermediate / low) with jobs per hour and the interarrival-time mean and CV
  of each, and the thesis's four candidate fits: two-stage hyperexponential,
  Weibull, gamma and exponential (T§4.3, Fig. 20);
* requested processors: share of serial jobs and of powers of two (T§4.4.1);
* requested memory, overall and conditioned on processors (T§4.4.2, Fig. 29 table);
* requested runtime, with the share of the O2K default requests (T§4.4.3);
* actual runtime and the actual/requested ratio (T§4.5.1, Table 10);
* processor demand (load) and the LSF job-class mix next to Table 6 (T§4.1).

Times of day are local: the header's ``TimeZoneString`` when Python knows the
zone, else its ``TimeZone`` offset, else UTC.  The arrival tables (T§4.3)
are built by :mod:`~o2ksim.workloads.characterize_arrivals`.  Figures are drawn by
:mod:`o2ksim.report.workload_figures` (the only module of this feature that
imports matplotlib/seaborn).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.o2k_classes import (
    CLASS_NAMES,
    KB_PER_MB,
    SIZE_CLASSES,
    TABLE6_JOB_SHARE,
    TABLE6_JOB_SHARE_RANGE,
    TABLE6_PXT,
    TIME_CLASSES,
    class_index,
)
from o2ksim.outfiles import Staging, claim
from o2ksim.outkinds import FIGURE_FILES, TABLE_FILES  # re-exported: what save replaces
from o2ksim.validation import check_count, check_flags, check_number, check_str, shown, writable_dir
from o2ksim.workloads.characterize_arrivals import DEFAULT_PERIODS, arrival_tables, check_periods
from o2ksim.workloads.clock import local_clock, local_clock_unix, trace_tz
from o2ksim.workloads.reshape import offered_load
from o2ksim.workloads.swf import Trace, read_swf

__all__ = [
    "DEFAULT_PERIODS",
    "FIGURE_FILES",
    "TABLE6_JOB_SHARE",
    "TABLE6_JOB_SHARE_RANGE",
    "TABLE6_PXT",
    "TABLE_FILES",
    "Characterization",
    "characterize",
    "class_shares",
    "local_clock",
    "local_clock_unix",
]

_CLASSES = CLASS_NAMES

# TABLE_FILES and FIGURE_FILES (o2ksim.outkinds): the files of a characterisation, which
# Characterization.save (and so ``o2ksim characterize --out DIR``) replaces as a set in DIR

_P_BINS = [
    (1, 1),
    (2, 2),
    (3, 4),
    (5, 8),
    (9, 16),
    (17, 32),
    (33, 64),
    (65, 128),
    (129, 256),
    (257, 10**12),
]
_M_BINS_MB = [
    (0, 32),
    (33, 128),
    (129, 256),
    (257, 512),
    (513, 1024),
    (1025, 2048),
    (2049, 4096),
    (4097, 8192),
    (8193, 16384),
    (16385, 10**15),
]
_T_BINS_S = [
    (0, 59),
    (60, 599),
    (600, 3599),
    (3600, 5 * 3600),
    (5 * 3600 + 1, 20 * 3600),
    (20 * 3600 + 1, 50 * 3600),
    (50 * 3600 + 1, 200 * 3600),
    (200 * 3600 + 1, 10**12),
]
_T_LABELS = ["<1m", "1-10m", "10m-1h", "1-5h", "5-20h", "20-50h", "50-200h", ">200h"]
_O2K_DEFAULTS_S = (18000, 180000, 720000, 1440000)


# ============================================================================
# derived job quantities
# ============================================================================


def _procs(jobs: pd.DataFrame) -> np.ndarray:
    req = jobs["req_procs"].to_numpy()
    return np.where(req > 0, req, jobs["alloc_procs"].to_numpy())


def _memory_mb(jobs: pd.DataFrame, procs: np.ndarray) -> np.ndarray:
    """Requested memory per job in MB (field 10 x processors); NaN when unknown."""
    per = jobs["req_mem"].to_numpy().astype(float)
    return np.where(per >= 0, per * procs / 1024.0, np.nan)


def class_shares(
    jobs: pd.DataFrame,
    *,
    capacity: float | None = None,
    time_classes: Sequence[tuple[str, float]] = TIME_CLASSES,
    size_classes: Sequence[tuple[str, int, float]] = SIZE_CLASSES,
) -> pd.DataFrame:
    """Jobs and processor demand per LSF class (T Table 3) next to Table 6 (nine-month mean and range).

    Memory unknown (-1) counts as 0 MB.  *capacity* (processor-seconds) turns
    demand into a fraction of the machine.  Jobs that fit no class are counted
    in ``none``.
    """
    p = _procs(jobs)
    mem = np.nan_to_num(_memory_mb(jobs, p), nan=0.0)
    req = jobs["req_time"].to_numpy().astype(float)
    req = np.where(req > 0, req, np.inf)
    cls = class_index(p, mem * KB_PER_MB, req, time_classes, size_classes)
    pxt = np.maximum(p, 0) * np.maximum(jobs["run_time"].to_numpy(), 0).astype(float)
    rows = []
    n = max(len(jobs), 1)
    for k, name in enumerate((*_CLASSES, "none")):
        sel = cls == (k if k < 12 else -1)
        share = sel.sum() / n
        t6 = TABLE6_JOB_SHARE.get(name, float("nan"))
        lo, hi = TABLE6_JOB_SHARE_RANGE.get(name, (float("nan"), float("nan")))
        rows.append(
            {
                "class": name,
                "jobs": int(sel.sum()),
                "share": share,
                "table6_share": t6,
                "table6_min": lo,
                "table6_max": hi,
                "distance": share - t6 if name in TABLE6_JOB_SHARE else float("nan"),
                "pxt_share_of_capacity": pxt[sel].sum() / capacity if capacity else float("nan"),
                "table6_pxt": TABLE6_PXT.get(name, float("nan")),
            }
        )
    return pd.DataFrame(rows)


# ============================================================================
# characterisation
# ============================================================================


@dataclass
class Characterization:
    """The result of :func:`characterize`: tables, a summary, and raw arrays for figures."""

    summary: dict[str, float]
    tables: dict[str, pd.DataFrame]
    data: dict[str, Any] = field(default_factory=dict, repr=False)
    source: str | None = None

    def to_text(
        self,
        tables: Sequence[str] = (
            "summary",
            "jobs_per_day_of_week",
            "periods",
            "processors",
            "memory_by_procs",
            "runtime",
            "ratio",
            "lsf_classes",
        ),
    ) -> str:
        """The main tables as plain text (what ``o2ksim characterize`` prints)."""
        out = []
        for name in tables:
            if name == "summary":
                out.append("== summary ==")
                out.extend(f"  {k:28s} {_fmt(v)}" for k, v in self.summary.items())
                continue
            t = self.tables.get(name)
            if t is None or t.empty:
                continue
            out.append(f"\n== {name.replace('_', ' ')} ==")
            out.append(t.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        return "\n".join(out)

    def save(
        self,
        out_dir: str | Path,
        *,
        figures: Callable[[Callable[[str], Path]], object] | None = None,
        option: str = "out_dir",
    ) -> Staging:
        """Write every table as CSV (the summary as ``summary.csv``) into *out_dir*, and the
        figures ``figures(path_of)`` draws (``o2ksim characterize --out``: figure ``NAME``
        goes to ``path_of(NAME)``), all committed together.

        The folder is claimed (a second writer is refused with its pid) and every file is
        staged, then renamed in with the others, ``summary.csv`` last, replacing every file
        of an earlier characterisation there (:data:`TABLE_FILES`, :data:`FIGURE_FILES`;
        the returned :class:`~o2ksim.outfiles.Staging` says which in ``replaced_text()``).
        A full disk or an interrupt leaves the folder as it was; a place that cannot be
        written is a one-line error naming it (``option``, :func:`o2ksim.validation.writable_dir`).
        """
        check_str(option, "Characterization.save", "option")
        if figures is not None and not callable(figures):
            raise O2KSimError(
                f"Characterization.save: figures must be a function of path_of, got {shown(figures)}"
            )
        d = writable_dir(out_dir, option)
        with claim(d, option, kind="characterisation"), Staging.of(
            d, "characterisation"
        ) as staged:
            try:
                for name, table in self.table_files().items():
                    table.to_csv(staged.path(name), index=False)
                if figures is not None:
                    figures(staged.path)
                staged.commit()
            except OSError as exc:
                raise O2KSimError(
                    f"{d}: cannot write the characterisation ({exc.strerror or exc}); "
                    "nothing new was written there"
                ) from None
        return staged

    def table_files(self) -> dict[str, pd.DataFrame]:
        """File name (``summary.csv`` first, then one ``NAME.csv`` per table) -> its table:
        what :meth:`save` writes, and what ``o2ksim characterize --out`` stages and commits
        with the figures (each name one of :data:`TABLE_FILES`)."""
        s = pd.DataFrame({"measure": list(self.summary), "value": list(self.summary.values())})
        return {f"{name}.csv": t for name, t in {"summary": s, **self.tables}.items()}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)

def characterize(
    trace: Any,
    *,
    procs: int | None = None,
    periods: Sequence[Mapping[str, Any]] = DEFAULT_PERIODS,
    fits: bool = True,
    max_fit_samples: int = 20000,
) -> Characterization:
    """Characterise *trace* (a :class:`~o2ksim.workloads.swf.Trace`, or an SWF path) as thesis ch. 4 does.

    *procs* is the machine size for the load (default: the header's
    ``MaxProcs``, else the largest request).  *periods* are the arrival
    periods (default: T§4.3's).  With *fits*, the interarrival times of each
    period get the hyperexponential, Weibull, gamma and exponential fits
    (maximum likelihood on at most *max_fit_samples* values, evenly thinned).
    """
    if isinstance(trace, str | os.PathLike):
        trace = read_swf(trace)
    if not isinstance(trace, Trace):
        raise O2KSimError(f"characterize: expected a Trace or an SWF path, got {shown(trace)}")
    if procs is not None:
        check_count(procs, "characterize", "procs")
    check_flags("characterize", fits=fits)
    check_number(max_fit_samples, "characterize", "max_fit_samples", minimum=1,
                 maximum=2**63 - 1, integer=True)  # fmt: skip
    check_periods(periods)
    jobs = trace.jobs
    if len(jobs) == 0:
        where = getattr(trace, "source", None) or "the trace"  # the file, as fit and run name it
        raise O2KSimError(f"{where}: no jobs to characterise")
    header = trace.header
    p = _procs(jobs)
    procs = int(
        procs
        or getattr(header, "max_procs", None)
        or getattr(header, "max_nodes", None)
        or max(int(p.max()), 1)
    )
    day, minute, weekday = local_clock(trace)
    submit = jobs["submit"].to_numpy().astype(float)
    run = jobs["run_time"].to_numpy().astype(float)
    req = jobs["req_time"].to_numpy().astype(float)
    mem = _memory_mb(jobs, p)
    extra = getattr(header, "extra", {}) or {}
    span = float(extra["O2KSimSpan"]) if "O2KSimSpan" in extra else None
    n = len(jobs)
    tables: dict[str, pd.DataFrame] = {}

    arrivals = arrival_tables(
        submit,
        day,
        minute,
        weekday,
        span=span,
        periods=periods,
        fits=fits,
        max_fit_samples=max_fit_samples,
    )
    tables.update(arrivals.tables)

    # ---- processors (T§4.4.1)
    pos = p[p > 0]
    rows: list[dict[str, Any]] = [
        {
            "procs": f"{lo}" if lo == hi else f"{lo}-{hi}",
            "jobs": int(((pos >= lo) & (pos <= hi)).sum()),
            "share": ((pos >= lo) & (pos <= hi)).mean() if len(pos) else float("nan"),
        }
        for lo, hi in _P_BINS
    ]
    tables["processors"] = pd.DataFrame(
        [r for r in rows if r["jobs"] > 0 or r["procs"] in ("1", "2")]
    )
    pow2 = (pos & (pos - 1)) == 0

    # ---- memory (T§4.4.2, Fig. 29)
    known = np.isfinite(mem)
    if known.any():
        m = mem[known]
        tables["memory"] = pd.DataFrame(
            [
                {
                    "mem_mb": f"{lo}-{hi}" if hi < 10**14 else f">{lo - 1}",
                    "share": ((m >= lo) & (m <= hi)).mean(),
                }
                for lo, hi in _M_BINS_MB
            ]
        )
        rows = []
        for lo, hi in [(1, 2), (3, 8), (9, 32), (33, 64), (65, 10**12)]:
            sel = known & (p >= lo) & (p <= hi)
            if sel.sum():
                v = mem[sel] / 1024.0
                rows.append(
                    {
                        "procs": f"{lo}-{hi}" if hi < 10**11 else f">{lo - 1}",
                        "jobs": int(sel.sum()),
                        "mean_gb": v.mean(),
                        "cv": v.std() / v.mean() if v.mean() > 0 else float("nan"),
                    }
                )
        tables["memory_by_procs"] = pd.DataFrame(rows)

    # ---- runtimes (T§4.4.3, T§4.5.1)
    has_req = req > 0
    rows = []
    for label, (lo, hi) in zip(_T_LABELS, _T_BINS_S, strict=True):
        rows.append(
            {
                "range": label,
                "requested_share": ((req >= lo) & (req <= hi))[has_req].mean()
                if has_req.any()
                else float("nan"),
                "actual_share": ((run >= lo) & (run <= hi))[run >= 0].mean(),
            }
        )
    tables["runtime"] = pd.DataFrame(rows)
    both = has_req & (run >= 0)
    ratio = run[both] / req[both]
    if len(ratio):
        under, over = ratio[ratio <= 1], ratio[ratio > 1]
        q = np.percentile(ratio, [10, 20, 50, 80, 90])
        tables["ratio"] = pd.DataFrame(
            [
                {
                    "jobs": len(ratio),
                    "p10": q[0],
                    "p20": q[1],
                    "median": q[2],
                    "p80": q[3],
                    "p90": q[4],
                    "share_le_0.1": (ratio <= 0.1).mean(),
                    "share_over_1": (ratio > 1).mean(),
                    "mean_le_1": under.mean() if len(under) else float("nan"),
                    "cv_le_1": under.std() / under.mean()
                    if len(under) > 1 and under.mean() > 0
                    else float("nan"),
                    "mean_gt_1": over.mean() if len(over) else float("nan"),
                    "cv_gt_1": over.std() / over.mean() if len(over) > 1 else float("nan"),
                }
            ]
        )

    # ---- load and LSF classes (T§4.1, Table 6)
    if span is None:
        span = float(submit.max() - submit.min()) * n / (n - 1) if n > 1 else 0.0
    load = offered_load(trace, procs, span) if span > 0 else float("nan")
    tables["lsf_classes"] = class_shares(jobs, capacity=procs * span if span > 0 else None)

    tz = trace_tz(header)
    clock = (
        "no UnixStartTime: days of the week are arbitrary"
        if getattr(header, "unix_start_time", None) is None
        else (f"UTC{tz / 3600:+g}h" if isinstance(tz, int) and tz else str(tz or "UTC"))
    )
    summary: dict[str, Any] = {
        "jobs": n,
        "local_clock": clock,
        "span_days": span / 86400.0,
        "machine_procs": procs,
        "load": load,
        "jobs_per_weekday": arrivals.jobs_per_weekday,
        "jobs_per_weekend_day": arrivals.jobs_per_weekend_day,
        "serial_share": float((pos == 1).mean()) if len(pos) else float("nan"),
        "power_of_two_share": float(pow2.mean()) if len(pos) else float("nan"),
        "mean_procs": float(pos.mean()) if len(pos) else float("nan"),
        "share_runtime_lt_1min": float((run[run >= 0] < 60).mean()),
        "share_runtime_lt_10min": float((run[run >= 0] < 600).mean()),
        "share_runtime_gt_20h": float((run > 72000).mean()),
        "runtime_cv": float(run[run >= 0].std() / run[run >= 0].mean())
        if (run > 0).any()
        else float("nan"),
        "requested_runtime_known": float(has_req.mean()),
        "share_default_requests": float(np.isin(req[has_req], _O2K_DEFAULTS_S).mean())
        if has_req.any()
        else float("nan"),
        "requested_memory_known": float(known.mean()),
        "ratio_median": float(np.median(ratio)) if len(ratio) else float("nan"),
    }
    data = {
        "submit": submit,
        "procs": p,
        "mem_mb": mem,
        "req": req,
        "run": run,
        "ratio": ratio,
        "interarrivals": arrivals.interarrivals,
        "periods": tables["periods"],
    }
    return Characterization(
        summary=summary, tables=tables, data=data, source=getattr(trace, "source", None)
    )
