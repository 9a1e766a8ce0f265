"""The parameters of the NCSA Origin 2000 workload model: their validation and the arrival calendar.

:func:`validate` checks a parameter mapping (``o2ksim/data/models/o2k.toml``
or a user's file) field by field and returns it normalised, so that the
generator (:mod:`~o2ksim.workloads.o2k`) can trust every value;
:func:`month_params` gives the overrides of one Table 6 month, and
:func:`arrival_intervals` the stationary-rate periods of T§4.3 that both the
generator and the expected job count (:func:`expected_jobs`) walk through.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from o2ksim.errors import ConfigError
from o2ksim.o2k_classes import CLASS_NAMES, TABLE6, TABLE6_MONTHS
from o2ksim.validation import MAX_JOB_MEMORY_KB, MAX_JOBS_PER_DAY, MAX_PROCS, MAX_TIME
from o2ksim.workloads.params import Checker

__all__ = ["RATE_FIELD", "arrival_intervals", "expected_jobs", "month_params", "validate"]

DAY = 86400.0
RATE_FIELD = "arrivals.period"
"""The field a refused job count names (:func:`o2ksim.workloads.models.generate`)."""

# the limits of an O2K parameter file (docs/reference/refusals.md lists them with the reasons)
MAX_MB = MAX_JOB_MEMORY_KB / 1024
"""Largest memory (MB) a grid value or class bound may name: :data:`~o2ksim.validation.MAX_JOB_MEMORY_KB`."""
MAX_GB = MAX_MB / 1024
"""The same in GB (machine memory, peak memory cap): 8 EB."""
MIN_INTERARRIVAL = DAY / MAX_JOBS_PER_DAY
"""Shortest mean interarrival time of a period (0.864 s): :data:`~o2ksim.validation.MAX_JOBS_PER_DAY`."""
MAX_CV = 100.0
"""Largest coefficient of variation (interarrivals, ratios, memory); T§4.3-4.5 have 0.4 to 3.
Beyond it the hyperexponential's branch probability rounds to 1 and its means to 0 or infinity."""
MIN_MEAN_RATIO = 1e-6
"""Smallest mean of a ratio's part below 1 (Tables 10-11 have 0.1 to 0.9): a smaller one
underflows the beta distribution's variance to 0."""
MIN_CV = 1e-3
"""Smallest CV of a ratio's part below 1 (a beta distribution: 0 divides by zero) and, but
for 0 (a constant), of its part above 1 (a gamma of shape 1 / CV^2)."""
MAX_OVER_RATIO = 1e5
"""Largest mean of a ratio above 1 (runtime / request, peak / requested memory); Tables 10-11
have 1.1 to 516 (a job's peak memory 516 times its request).  The overrun limit and
``peak_memory.max_gb`` cap what is drawn; this keeps the gamma draws finite."""
MAX_SHAPE = 1000.0
"""Largest ratio shape ``s`` of a class (r -> 1 - (1 - r)^s); the calibrated months have 0.3 to 4."""
MAX_RATE_SCALE = 1000.0
"""Largest ``arrivals.rate_scale`` (a month's sets have 0.6 to 1.5): the span's expected job count is
checked against :data:`~o2ksim.validation.MAX_GENERATED_JOBS` as well."""
MAX_DEDICATED_SCALE = 1000.0
"""Largest ``dedicated.scale`` (the shipped set has 2): the chance is capped at 1 anyway."""


def arrival_intervals(
    periods: Sequence[Mapping[str, Any]], span: float, start_time: int
) -> list[tuple[float, float, int]]:
    """The stationary-rate intervals ``(start, end, period index)`` covering ``[0, span)``.

    Times are seconds after *start_time* (a Unix time, read as UTC); a day is
    a weekday or a weekend day by its UTC calendar date.
    """
    out: list[tuple[float, float, int]] = []
    first_day = math.floor(start_time / DAY)
    last_day = math.floor((start_time + span) / DAY)
    for day in range(first_day, last_day + 1):
        weekday = (day + 3) % 7  # 1970-01-01 was a Thursday (weekday 3, Monday = 0)
        kind = "weekend" if weekday >= 5 else "weekday"
        base = day * DAY - start_time
        for k, per in enumerate(periods):
            if per["days"] not in (kind, "all"):
                continue
            a = max(base + per["start_hour"] * 3600.0, 0.0)
            b = min(base + per["end_hour"] * 3600.0, span)
            if b > a:
                out.append((a, b, k))
    out.sort()
    return out


def expected_jobs(params: Mapping[str, Any], span: float, start_time: int) -> float:
    """Expected number of jobs in ``[0, span)``: the sum of interval lengths / their period's mean."""
    periods = params["arrivals"]["period"]
    scale = params["arrivals"].get("rate_scale", 1.0)
    return sum(
        (b - a) / periods[k]["mean_s"] * scale
        for a, b, k in arrival_intervals(periods, span, start_time)
    )


def month_params(month: str, base: Mapping[str, Any], start_time: int) -> dict[str, Any]:
    """Overrides that give the month's own Table 6 column (``--params 2000-02``).

    The class shares become the month's (Table 6 job counts / all jobs) and
    every arrival rate is scaled so that a span of the month's length (from
    *start_time*) has the month's number of jobs.  Table 6 counts all jobs, the
    dedicated-host vst jobs among them; the ``[dedicated]`` rule leaves those
    out of the simulated month (T§3.4).  Each class's ratio shape becomes the
    month's (``[month."YYYY-MM"] class_shape`` of *base*, calibrated so that
    the classes' processor and memory demand are the month's Table 6 column;
    without it a month's classes keep the nine-month runtimes).
    """
    if month not in TABLE6:
        raise ConfigError(
            "o2k parameters",
            f"no Table 6 month '{month}' (known: {', '.join(TABLE6_MONTHS)})",
            field="classes.month",
        )
    total, counts, _pxt, _cls_pxt = TABLE6[month]
    year, mon = (int(x) for x in month.split("-"))
    days = (
        (np.datetime64(f"{year + mon // 12:04d}-{mon % 12 + 1:02d}") - np.datetime64(month))
        .astype("timedelta64[D]")
        .astype(int)
    )
    plain = {**base, "arrivals": {**base["arrivals"], "rate_scale": 1.0}}
    scale = total / expected_jobs(plain, days * DAY, start_time)
    out: dict[str, Any] = {
        "classes": {"month": month, "shares": [c / total for c in counts]},
        "arrivals": {"rate_scale": scale},
    }
    own = base.get("month", {}).get(month)
    if own is not None:
        out["ratio"] = {"class_shape": list(own["class_shape"])}
    return out


def _ratio_part(ch: Checker, rule: Mapping[str, Any], field: str) -> dict[str, float]:
    """Validate the <= 1 / > 1 description shared by ratio and peak-memory rules."""
    mu = ch.number(rule, "under_mean", f"{field}.under_mean", lo=MIN_MEAN_RATIO, hi=1.0)
    cv = ch.number(rule, "under_cv", f"{field}.under_cv", lo=MIN_CV, hi=MAX_CV)
    if mu >= 1.0 or cv * cv * mu >= 1.0 - mu:
        raise ch.fail(
            f"{field}.under_cv", f"no distribution on (0, 1) has mean {mu:g} and CV {cv:g}"
        )
    share = ch.number(rule, "over_share", f"{field}.over_share", lo=0.0, hi=1.0)
    out = {"under_mean": mu, "under_cv": cv, "over_share": share, "over_mean": 1.0, "over_cv": 0.0}
    if share > 0:
        out["over_mean"] = ch.number(
            rule, "over_mean", f"{field}.over_mean", lo=1.0, lo_open=True, hi=MAX_OVER_RATIO
        )
        out["over_cv"] = ch.number(rule, "over_cv", f"{field}.over_cv", lo=0.0, hi=MAX_CV)
        if 0 < out["over_cv"] < MIN_CV:  # the gamma's shape (1 / cv^2) would overflow
            raise ch.fail(f"{field}.over_cv", f"must be 0 (a constant ratio) or at least {MIN_CV:g}")
    return out


def validate(raw: Mapping[str, Any], source: str | Path = "<o2k parameters>") -> dict[str, Any]:
    """Check an O2K parameter mapping and return it normalised (probabilities renormalised).

    Raises :class:`ConfigError` naming *source* and the dotted field path of
    the first problem found.
    """
    ch = Checker(source)
    p: dict[str, Any] = {"model": "o2k", "name": str(raw.get("name", "o2k"))}
    m = ch.table(raw, "machine", "machine")
    p["machine"] = {
        "procs": ch.count(m, "procs", "machine.procs"),
        "memory_gb": ch.number(m, "memory_gb", "machine.memory_gb", lo=0, lo_open=True, hi=MAX_GB),
        "computer": str(m.get("computer", "SGI Origin 2000")),
        "installation": str(m.get("installation", "NCSA (synthetic)")),
    }
    lsf = ch.table(raw, "lsf", "lsf")
    tl = ch.numbers(lsf, "time_limits_h", "lsf.time_limits_h", n=4, lo=0, hi=MAX_TIME / 3600)
    sp = ch.numbers(lsf, "size_procs", "lsf.size_procs", n=3, lo=1, hi=MAX_PROCS)
    sm = ch.numbers(lsf, "size_mem_mb", "lsf.size_mem_mb", n=3, lo=0, hi=MAX_MB)
    p["lsf"] = {"time_limits_h": tl, "size_procs": sp, "size_mem_mb": sm}

    a = ch.table(raw, "arrivals", "arrivals")
    periods = ch.get(a, "period", "arrivals.period")
    if not isinstance(periods, list) or not periods:
        raise ch.fail("arrivals.period", "needs at least one [[arrivals.period]]")
    plist = []
    for i, per in enumerate(periods):
        f = f"arrivals.period[{i}]"
        days = str(ch.get(per, "days", f + ".days"))
        if days not in ("weekday", "weekend", "all"):
            raise ch.fail(f + ".days", f"must be 'weekday', 'weekend' or 'all', got '{days}'")
        sh = ch.number(per, "start_hour", f + ".start_hour", lo=0, hi=24)
        eh = ch.number(per, "end_hour", f + ".end_hour", lo=0, hi=24)
        if eh <= sh:
            raise ch.fail(f + ".end_hour", f"must be after start_hour ({sh:g})")
        plist.append(
            {
                "name": str(per.get("name", f"period{i}")),
                "days": days,
                "start_hour": sh,
                "end_hour": eh,
                "mean_s": ch.number(per, "mean_s", f + ".mean_s", lo=MIN_INTERARRIVAL, hi=MAX_TIME),
                "cv": ch.number(per, "cv", f + ".cv", lo=1.0, hi=MAX_CV),
            }
        )
    p["arrivals"] = {"period": plist}
    if "rate_scale" in a:
        p["arrivals"]["rate_scale"] = ch.number(
            a, "rate_scale", "arrivals.rate_scale", lo=0, lo_open=True, hi=MAX_RATE_SCALE
        )

    ded = ch.table(raw, "dedicated", "dedicated")
    inc = ded.get("include", False)
    if not isinstance(inc, bool):
        raise ch.fail("dedicated.include", f"must be true or false, got {inc!r}")
    p["dedicated"] = {
        "include": inc,
        "scale": ch.number(ded, "scale", "dedicated.scale", lo=0, hi=MAX_DEDICATED_SCALE),
        "full_procs": ch.number(ded, "full_procs", "dedicated.full_procs", lo=1, hi=MAX_PROCS),
    }
    if "classes" in raw:
        cl = raw["classes"]
        p["classes"] = {
            "shares": ch.probabilities(cl, "shares", "classes.shares", n=len(CLASS_NAMES))
        }
        if "month" in cl:
            p["classes"]["month"] = str(cl["month"])

    pr = ch.table(raw, "processors", "processors")
    groups = ch.get(pr, "group", "processors.group")
    if not isinstance(groups, list) or not groups:
        raise ch.fail("processors.group", "needs at least one [[processors.group]]")
    glist: list[dict[str, Any]] = []
    for i, g in enumerate(groups):
        f = f"processors.group[{i}]"
        vals = ch.numbers(g, "values", f + ".values", lo=1, hi=MAX_PROCS)
        if any(v != int(v) for v in vals):
            raise ch.fail(f + ".values", "processor counts must be integers")
        glist.append(
            {
                "values": [int(v) for v in vals],
                "probability": ch.number(g, "probability", f + ".probability", lo=0, hi=1),
            }
        )
    total = sum(g["probability"] for g in glist)
    if abs(total - 1) > 1e-3:
        raise ch.fail(
            "processors.group", f"group probabilities must sum to 1, they sum to {total:.6g}"
        )
    for g in glist:
        g["probability"] /= total
    p["processors"] = {"group": glist}

    mem = ch.table(raw, "memory", "memory")
    grid = ch.numbers(mem, "grid_mb", "memory.grid_mb", lo=0, hi=MAX_MB)
    mg: list[dict[str, Any]] = []
    for i, g in enumerate(ch.get(mem, "group", "memory.group")):
        f = f"memory.group[{i}]"
        rng_ = ch.ranges(g, "procs", f + ".procs")
        if rng_ is None:
            raise ch.fail(f + ".procs", "missing")
        mg.append(
            {
                "procs": rng_[0],
                # the table's statistics, for the reader (the grid's probabilities are the model)
                "mean_gb": ch.number(g, "mean_gb", f + ".mean_gb", lo=0, hi=MAX_GB)
                if "mean_gb" in g
                else float("nan"),
                "cv": ch.number(g, "cv", f + ".cv", lo=0, hi=MAX_CV) if "cv" in g else float("nan"),
                "probabilities": ch.probabilities(
                    g, "probabilities", f + ".probabilities", n=len(grid)
                ),
            }
        )
    p["memory"] = {"grid_mb": grid, "group": mg}
    for g in glist:
        for v in g["values"]:
            if not any(x["procs"][0] <= v <= x["procs"][1] for x in mg):
                raise ch.fail("memory.group", f"no memory group covers P = {v}")

    rt = ch.table(raw, "runtime", "runtime")
    dflt = ch.numbers(rt, "default_s", "runtime.default_s", lo=1, hi=MAX_TIME)
    ranges = []
    for i, r in enumerate(ch.get(rt, "range", "runtime.range")):
        f = f"runtime.range[{i}]"
        ranges.append(
            {
                "name": str(r.get("name", f"range{i}")),
                "seconds": ch.numbers(r, "seconds", f + ".seconds", lo=1, hi=MAX_TIME),
            }
        )
    dists = {}
    for name, d in ch.table(rt, "dist", "runtime.dist").items():
        f = f"runtime.dist.{name}"
        if not isinstance(d, Mapping):  # a new name is a new distribution (A-D in T Table 9)
            raise ch.fail(f, "must be a table with default_share, default_weights, range_weights")
        dists[name] = {
            "default_share": ch.number(d, "default_share", f + ".default_share", lo=0, hi=1),
            "default_weights": ch.probabilities(
                d, "default_weights", f + ".default_weights", n=len(dflt)
            ),
            "range_weights": ch.probabilities(
                d, "range_weights", f + ".range_weights", n=len(ranges)
            ),
        }
    default_dist = str(rt.get("default_dist", "B"))
    if default_dist not in dists:
        raise ch.fail("runtime.default_dist", f"unknown distribution '{default_dist}'")
    cells = []
    for i, c in enumerate(rt.get("cell", [])):
        f = f"runtime.cell[{i}]"
        d = str(ch.get(c, "dist", f + ".dist"))
        if d not in dists:
            raise ch.fail(f + ".dist", f"unknown distribution '{d}' (known: {', '.join(dists)})")
        cells.append(
            {
                "procs": ch.ranges(c, "procs", f + ".procs"),
                "mem_mb": ch.ranges(c, "mem_mb", f + ".mem_mb"),
                "dist": d,
            }
        )
    used = {default_dist} | {c["dist"] for c in cells}
    for name in dists:
        if name not in used:
            raise ch.fail(
                f"runtime.dist.{name}",
                "unknown key: no generator reads it (no [[runtime.cell]] and not "
                "runtime.default_dist names this distribution)",
            )
    p["runtime"] = {
        "default_s": dflt,
        "range": ranges,
        "dist": dists,
        "default_dist": default_dist,
        "cell": cells,
    }

    ra = ch.table(raw, "ratio", "ratio")
    rules = []
    for i, r in enumerate(ch.get(ra, "rule", "ratio.rule")):
        f = f"ratio.rule[{i}]"
        rule: dict[str, Any] = {
            "name": str(r.get("name", f"rule{i}")),
            "req_s": ch.ranges(r, "req_s", f + ".req_s"),
            "procs": ch.ranges(r, "procs", f + ".procs"),
            "mem_mb": ch.ranges(r, "mem_mb", f + ".mem_mb"),
        }
        rule.update(_ratio_part(ch, r, f))
        rules.append(rule)
    if any(r["req_s"] is None and r["procs"] is None and r["mem_mb"] is None for r in rules[:-1]):
        raise ch.fail("ratio.rule", "only the last rule may match every job")
    over = ra.get("overrun_limit_s", 3600)
    class_shape = [1.0] * len(CLASS_NAMES)
    if "class_shape" in ra:
        class_shape = ch.numbers(
            ra, "class_shape", "ratio.class_shape", n=len(CLASS_NAMES), lo=0, hi=MAX_SHAPE
        )
        if min(class_shape) <= 0:
            raise ch.fail("ratio.class_shape", "must hold numbers > 0 (1 leaves a class as is)")
    months: dict[str, dict[str, list[float]]] = {}
    month_tables = raw.get("month", {})
    if not isinstance(month_tables, Mapping):
        raise ch.fail("month", 'must be tables [month."YYYY-MM"]')
    for name, own in month_tables.items():
        f = f'month."{name}"'
        if not isinstance(own, Mapping):
            raise ch.fail(f, "must be a table with class_shape")
        if name not in TABLE6:
            raise ch.fail(f, f"no Table 6 month '{name}' (known: {', '.join(TABLE6_MONTHS)})")
        shapes = ch.numbers(
            own, "class_shape", f + ".class_shape", n=len(CLASS_NAMES), lo=0, hi=MAX_SHAPE
        )
        if min(shapes) <= 0:
            raise ch.fail(f + ".class_shape", "must hold numbers > 0 (1 leaves a class as is)")
        months[name] = {"class_shape": shapes}
    if months:
        p["month"] = months
    p["ratio"] = {
        "class_shape": class_shape,
        "overrun_limit_s": None
        if over is False or over is None or over == -1
        else ch.number(ra, "overrun_limit_s", "ratio.overrun_limit_s", lo=0, hi=MAX_TIME),
        "min_runtime_s": ch.number(ra, "min_runtime_s", "ratio.min_runtime_s", lo=0, hi=MAX_TIME)
        if "min_runtime_s" in ra
        else 1.0,
        "rule": rules,
    }

    pk = ch.table(raw, "peak_memory", "peak_memory")
    prules = []
    for i, r in enumerate(ch.get(pk, "rule", "peak_memory.rule")):
        f = f"peak_memory.rule[{i}]"
        prule: dict[str, Any] = {
            "name": str(r.get("name", f"rule{i}")),
            "mem_mb": ch.ranges(r, "mem_mb", f + ".mem_mb"),
            "run_s": ch.ranges(r, "run_s", f + ".run_s"),
        }
        prule.update(_ratio_part(ch, r, f))
        prules.append(prule)
    p["peak_memory"] = {
        "max_gb": ch.number(pk, "max_gb", "peak_memory.max_gb", lo=0, lo_open=True, hi=MAX_GB),
        "rule": prules,
    }
    return p
