"""Downey's uniform-log workload model (D§3, Tables 1, 2, 4), as a generator.

Downey observed that on the SDSC Paragon and the CTC SP2 the *logarithms* of
job lifetimes are uniformly distributed within each queue class:
``cdf(t) = beta0 + beta1 * ln t`` between ``t_min = exp(-beta0/beta1)`` and
``t_max = exp((1 - beta0)/beta1)`` (D eq. 2), with sequential jobs a class of
their own (Table 1).  Cluster sizes follow the same uniform-log form in the
number of processors (his companion workload model, cited by C§6 as [10, 11]).

The generator:

* arrivals: a Poisson process of ``arrival.jobs_per_day`` (D gives no arrival
  model; the rate is the one of his trace, D§3);
* class: one of ``[[class]]`` with its ``share``;
* lifetime: uniform-log with the class's ``beta0``/``beta1``, capped at
  ``lifetime.max_s`` (the site's run-time limit; D§3 footnote 1: 12 h);
* cluster size: 1 for a ``sequential`` class, otherwise uniform-log
  ``cdf(n) = beta0 + beta1 * ln n`` over whole processors (``n = ceil(x)``),
  between ``cluster_size.min`` and ``cluster_size.max``;
* requested time: the class's longest lifetime (its queue's limit) -- the
  only request information Downey's users give is the queue they choose.

SWF output: ``queue`` = class number (1-based, listed in the header),
``req_time`` as above, ``status`` 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.prediction.model import ALL, fit_clm, select_jobs
from o2ksim.validation import MAX_JOBS_PER_DAY, MAX_PROCS, MAX_TIME
from o2ksim.workloads.distributions import uniform_log_ls
from o2ksim.workloads.params import Checker
from o2ksim.workloads.reshape import trace_span
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.synthetic import streams, synthetic_trace

__all__ = ["RATE_FIELD", "class_bounds", "expected_jobs", "fit", "generate", "generate_jobs", "truncated_uniform_log", "validate"]

_STREAMS = ("arrivals", "class", "lifetime", "size")


def validate(raw: Mapping[str, Any], source: str | Path = "<downey parameters>") -> dict[str, Any]:
    """Check a Downey parameter mapping; raises :class:`ConfigError` with the field path."""
    ch = Checker(source)
    p: dict[str, Any] = {"model": "downey", "site": str(raw.get("site", "custom"))}
    m = ch.table(raw, "machine", "machine")
    procs = ch.count(m, "procs", "machine.procs")
    p["machine"] = {"procs": procs, "computer": str(m.get("computer", "synthetic (Downey model)"))}
    a = ch.table(raw, "arrival", "arrival")
    p["arrival"] = {
        "jobs_per_day": ch.number(
            a, "jobs_per_day", "arrival.jobs_per_day", lo=0, lo_open=True, hi=MAX_JOBS_PER_DAY
        )
    }
    lt = ch.table(raw, "lifetime", "lifetime")
    p["lifetime"] = {"max_s": ch.number(lt, "max_s", "lifetime.max_s", lo=1, hi=MAX_TIME)}
    cs = ch.table(raw, "cluster_size", "cluster_size")
    beta1, beta0 = ch.uniform_log(
        cs, "cluster_size", "beta1", "beta0", base=math.e, top=MAX_PROCS, unit="processors"
    )
    p["cluster_size"] = {
        "beta0": beta0,
        "beta1": beta1,
        "min": ch.count(cs, "min", "cluster_size.min", hi=procs) if "min" in cs else min(2, procs),
        "max": ch.count(cs, "max", "cluster_size.max") if "max" in cs else procs,
    }
    classes = ch.get(raw, "class", "class")
    if not isinstance(classes, list) or not classes:
        raise ch.fail("class", "needs at least one [[class]]")
    out: list[dict[str, Any]] = []
    for i, c in enumerate(classes):
        f = f"class[{i}]"
        if not isinstance(c, Mapping):
            raise ch.fail(f, f"must be a [[class]] table, got {c!r:.40}")
        beta1, beta0 = ch.uniform_log(c, f, "beta1", "beta0", base=math.e, top=MAX_TIME, unit="seconds")
        out.append(
            {
                "name": str(c.get("name", f"class{i + 1}")),
                "share": ch.number(c, "share", f + ".share", lo=0, hi=1),
                "beta0": beta0,
                "beta1": beta1,
                "sequential": bool(c.get("sequential", False)),
            }
        )
        if "stages" in c:
            out[-1]["stages"] = _stages(ch, c["stages"], f + ".stages")
    total = sum(c["share"] for c in out)
    if abs(total - 1.0) > 1e-3:
        raise ch.fail("class", f"class shares must sum to 1, they sum to {total:.6g}")
    for c in out:
        c["share"] /= total
    p["class"] = out
    return p


def _stages(ch: Checker, raw: Any, field: str) -> list[dict[str, float]]:
    """A multistage uniform-log lifetime (D§5.4): ``[{min_s, max_s, share}, ...]``."""
    if not isinstance(raw, list) or not raw:
        raise ch.fail(field, "must be a list of {min_s, max_s, share} tables")
    stages = []
    for i, st in enumerate(raw):
        f = f"{field}[{i}]"
        lo = ch.number(st, "min_s", f + ".min_s", lo=0, lo_open=True, hi=MAX_TIME)
        hi = ch.number(st, "max_s", f + ".max_s", lo=lo, lo_open=True, hi=MAX_TIME)
        stages.append(
            {"min_s": lo, "max_s": hi, "share": ch.number(st, "share", f + ".share", lo=0, hi=1)}
        )
    total = sum(st["share"] for st in stages)
    if abs(total - 1.0) > 1e-3:
        raise ch.fail(field, f"stage shares must sum to 1, they sum to {total:.6g}")
    for st in stages:
        st["share"] /= total
    return stages


RATE_FIELD = "arrival.jobs_per_day"
"""The field a refused job count names (:func:`o2ksim.workloads.models.generate`)."""


def expected_jobs(params: Mapping[str, Any], span: float, start_time: int) -> float:
    """Expected number of jobs in ``[0, span)``: Poisson arrivals at ``jobs_per_day``."""
    return float(params["arrival"]["jobs_per_day"]) * span / 86400.0


def multistage_uniform_log(
    rng: np.random.Generator, n: int, stages: list[dict[str, float]], cap: float
) -> np.ndarray:
    """Draws of a piecewise uniform-log distribution (D§5.4): a stage by its share, then ln t uniform in it."""
    k = rng.choice(len(stages), size=n, p=[st["share"] for st in stages])
    lo = np.log([min(st["min_s"], cap) for st in stages])[k]
    hi = np.log([min(st["max_s"], cap) for st in stages])[k]
    return np.exp(lo + (hi - lo) * rng.random(n))


def class_bounds(beta0: float, beta1: float) -> tuple[float, float]:
    """``(t_min, t_max)`` of ``cdf = beta0 + beta1 ln t`` (D§3, below eq. 2)."""
    return math.exp(-beta0 / beta1), math.exp((1.0 - beta0) / beta1)


def truncated_uniform_log(
    rng: np.random.Generator, n: int, beta0: float, beta1: float, lo: float, hi: float
) -> np.ndarray:
    """Draws of ``cdf(x) = beta0 + beta1 ln x`` conditioned on ``lo < x <= hi`` (inverse transform).

    Where the line lies below 0 or above 1 inside the interval the
    distribution has no mass, so the draws stay within the line's own range
    as well.  Truncating, not clipping, keeps the shape: no pile of jobs at
    either bound.
    """
    lo_u = min(max(beta0 + beta1 * math.log(max(lo, 1e-300)), 0.0), 1.0)
    hi_u = min(max(beta0 + beta1 * math.log(hi), 0.0), 1.0)
    if hi_u <= lo_u:
        return np.full(n, float(hi))
    u = lo_u + (hi_u - lo_u) * rng.random(n)
    return np.exp((u - beta0) / beta1)


def generate_jobs(
    params: Mapping[str, Any], *, span: float, seed: int, start_time: int
) -> dict[str, np.ndarray]:
    """Job attributes as arrays: submit, cls, procs, run_s, req_s (the whole model)."""
    rngs = streams(seed, _STREAMS)
    rate = params["arrival"]["jobs_per_day"] / 86400.0
    ra = rngs["arrivals"]
    n = int(ra.poisson(rate * span))
    submit = np.sort(np.floor(ra.random(n) * span))
    classes = params["class"]
    cls = rngs["class"].choice(len(classes), size=n, p=[c["share"] for c in classes])
    run_s = np.empty(n)
    req_s = np.empty(n)
    procs = np.ones(n, dtype=np.int64)
    cap = params["lifetime"]["max_s"]
    cs = params["cluster_size"]
    lo, hi = cs["min"], min(cs["max"], params["machine"]["procs"])
    for k, c in enumerate(classes):
        mask = cls == k
        m = int(mask.sum())
        if not m:
            continue
        # lifetimes beyond the site's limit do not exist (D§3 fn. 1): the uniform-log truncated at it
        limit = min(class_bounds(c["beta0"], c["beta1"])[1], cap)
        if "stages" in c:  # D§5.4's multistage model of a class the single line fits poorly
            limit = min(max(st["max_s"] for st in c["stages"]), cap)
            t = multistage_uniform_log(rngs["lifetime"], m, c["stages"], limit)
        else:
            t = truncated_uniform_log(rngs["lifetime"], m, c["beta0"], c["beta1"], 1.0, limit)
        run_s[mask] = np.clip(np.rint(t), 1.0, math.floor(limit))
        req_s[mask] = math.ceil(limit)
        if not c["sequential"]:
            # n = ceil(x) with x uniform-log on (lo - 1, hi]: every size from lo (2) to hi can occur
            x = truncated_uniform_log(rngs["size"], m, cs["beta0"], cs["beta1"], lo - 1.0, hi)
            procs[mask] = np.clip(np.ceil(x), lo, max(lo, hi)).astype(np.int64)
    return {"submit": submit, "cls": cls, "procs": procs, "run_s": run_s, "req_s": req_s}


def generate(params: Mapping[str, Any], *, span: float, seed: int, start_time: int) -> Trace:
    """A :class:`~o2ksim.workloads.swf.Trace` of Downey's model (see the module docstring)."""
    j = generate_jobs(params, span=span, seed=seed, start_time=start_time)
    return synthetic_trace(
        {
            "submit": j["submit"],
            "run_time": j["run_s"],
            "alloc_procs": j["procs"],
            "req_procs": j["procs"],
            "req_time": j["req_s"],
            "status": 1,
            "queue": j["cls"] + 1,
        },
        computer=params["machine"]["computer"],
        installation=f"synthetic, Downey model, {params['site']} parameters",
        start_time=start_time,
        procs=params["machine"]["procs"],
        max_runtime=int(params["lifetime"]["max_s"]),
        queues="queue = lifetime class: "
        + ", ".join(f"{i + 1} {c['name']}" for i, c in enumerate(params["class"])),
        notes=["req_time = the class's longest lifetime (its queue limit), wall-clock seconds"],
    )


# ============================================================================
# fit (D§3)
# ============================================================================


def fit(
    trace: Any,
    *,
    by_queue: bool = True,
    sequential_class: bool = True,
    trim: float = 0.1,
    min_class_jobs: int = 20,
    classes: str | None = None,
    partition: int | str | None = None,
    window: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Downey parameters of *trace*: per-class uniform-log lifetimes and uniform-log cluster sizes.

    The lifetime classes are fitted by :func:`o2ksim.prediction.model.fit_clm`
    (D§3, §3.1): classes by the grouping rule *classes* on the queue names
    (SWF field 15; default one class per queue, ``none`` without *by_queue*),
    with *sequential_class* the one-processor jobs a class of their own (D
    Table 1); queues with fewer than *min_class_jobs* jobs are merged into
    ``other``; least squares on the middle ``1 - 2*trim`` of each class.
    *partition* (field 16) and *window* (submit times) select the jobs first.
    """
    if partition is not None or window is not None:
        selected = select_jobs(trace.jobs, trace.header, partition=partition, window=window)
        trace = type(trace)(jobs=selected, header=trace.header, source=trace.source)
    jobs = trace.jobs
    header = trace.header
    if len(jobs) < 10:
        raise O2KSimError(
            f"{trace.source or 'the trace'}: {len(jobs)} job(s), too few to fit (need at least 10)"
        )
    procs = _procs(jobs)
    run = jobs["run_time"].to_numpy().astype(float)
    ok = (run > 0) & (procs >= 1) & (jobs["status"].to_numpy() != 5)
    if ok.sum() < 10:
        raise O2KSimError("the trace has too few jobs with a positive run time and processor count")
    rule = classes or ("queue" if by_queue else "none")
    clm = fit_clm(
        jobs.loc[ok],
        header,
        rule=rule,
        sequential=sequential_class,
        trim=trim,
        min_class_jobs=min_class_jobs,
    )
    labels = clm.labels(jobs.loc[ok], header)
    fitted = [c for name, c in clm.classes.items() if name != ALL] or [clm.classes[ALL]]
    total = int(ok.sum())
    fitted_classes: list[dict[str, Any]] = []
    for cf in fitted:
        n = total if cf.name == ALL else int((labels == cf.name).sum())
        fitted_classes.append(
            {
                "name": cf.name,
                "share": float(n / total),
                "beta0": cf.beta0,
                "beta1": cf.beta1,
                "sequential": bool(cf.name == "sequential"),
            }
        )
    s = sum(entry["share"] for entry in fitted_classes)
    for entry in fitted_classes:
        entry["share"] /= s
    par = ok & (procs >= 2)
    max_procs = int(
        getattr(header, "max_procs", None) or getattr(header, "max_nodes", None) or procs.max()
    )
    if par.sum() >= 2 and len(np.unique(procs[par])) >= 2:
        g1, g0 = uniform_log_ls(procs[par], base=math.e)
    else:
        g1, g0 = 1.0, 0.0
    span_days = max(trace_span(trace) / 86400.0, 1.0 / 24)
    return {
        "model": "downey",
        "site": str(
            getattr(header, "installation", None) or getattr(header, "computer", None) or "trace"
        ).splitlines()[0][:60],
        "machine": {
            "procs": max_procs,
            "computer": str(getattr(header, "computer", None) or "fitted"),
        },
        "arrival": {"jobs_per_day": float(len(jobs) / span_days)},
        "lifetime": {"max_s": float(run[ok].max())},
        "cluster_size": {"beta0": g0, "beta1": g1, "min": 2, "max": max_procs},
        "class": fitted_classes,
        "fit": {
            "source": str(getattr(trace, "source", None) or ""),
            "jobs": len(jobs),
            "trim": trim,
            "by_queue": bool(by_queue),
            "classes": clm.rule.text,
        },
    }


def _procs(jobs: pd.DataFrame) -> np.ndarray:
    req = jobs["req_procs"].to_numpy()
    return np.where(req > 0, req, jobs["alloc_procs"].to_numpy())
