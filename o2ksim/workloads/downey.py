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

from o2ksim.workloads.models import Checker

__all__ = ["class_bounds", "generate", "generate_jobs", "validate"]

_STREAMS = ("arrivals", "class", "lifetime", "size")


def validate(raw: Mapping[str, Any], source: str | Path = "<downey parameters>") -> dict[str, Any]:
    """Check a Downey parameter mapping; raises :class:`ConfigError` with the field path."""
    ch = Checker(source)
    p: dict[str, Any] = {"model": "downey", "site": str(raw.get("site", "custom"))}
    m = ch.get(raw, "machine", "machine")
    p["machine"] = {
        "procs": int(ch.number(m, "procs", "machine.procs", lo=1)),
        "computer": str(m.get("computer", "synthetic (Downey model)")),
    }
    a = ch.get(raw, "arrival", "arrival")
    p["arrival"] = {
        "jobs_per_day": ch.number(a, "jobs_per_day", "arrival.jobs_per_day", lo=0, lo_open=True)
    }
    lt = ch.get(raw, "lifetime", "lifetime")
    p["lifetime"] = {"max_s": ch.number(lt, "max_s", "lifetime.max_s", lo=1)}
    cs = ch.get(raw, "cluster_size", "cluster_size")
    p["cluster_size"] = {
        "beta0": ch.number(cs, "beta0", "cluster_size.beta0", hi=1.0),
        "beta1": ch.number(cs, "beta1", "cluster_size.beta1", lo=0, lo_open=True),
        "min": int(ch.number(cs, "min", "cluster_size.min", lo=1)) if "min" in cs else 2,
        "max": int(ch.number(cs, "max", "cluster_size.max", lo=1))
        if "max" in cs
        else p["machine"]["procs"],
    }
    classes = ch.get(raw, "class", "class")
    if not isinstance(classes, list) or not classes:
        raise ch.fail("class", "needs at least one [[class]]")
    out = []
    for i, c in enumerate(classes):
        f = f"class[{i}]"
        out.append(
            {
                "name": str(c.get("name", f"class{i + 1}")),
                "share": ch.number(c, "share", f + ".share", lo=0, hi=1),
                "beta0": ch.number(c, "beta0", f + ".beta0", hi=1.0),
                "beta1": ch.number(c, "beta1", f + ".beta1", lo=0, lo_open=True),
                "sequential": bool(c.get("sequential", False)),
            }
        )
    total = sum(c["share"] for c in out)
    if abs(total - 1.0) > 1e-3:
        raise ch.fail("class", f"class shares must sum to 1, they sum to {total:.6g}")
    for c in out:
        c["share"] /= total
    p["class"] = out
    return p


def class_bounds(beta0: float, beta1: float) -> tuple[float, float]:
    """``(t_min, t_max)`` of ``cdf = beta0 + beta1 ln t`` (D§3, below eq. 2)."""
    return math.exp(-beta0 / beta1), math.exp((1.0 - beta0) / beta1)


def generate_jobs(
    params: Mapping[str, Any], *, span: float, seed: int, start_time: int
) -> dict[str, np.ndarray]:
    """Job attributes as arrays: submit, cls, procs, run_s, req_s (the whole model)."""
    streams = dict(
        zip(
            _STREAMS,
            (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(len(_STREAMS))),
            strict=True,
        )
    )
    rate = params["arrival"]["jobs_per_day"] / 86400.0
    ra = streams["arrivals"]
    n = int(ra.poisson(rate * span))
    submit = np.sort(np.floor(ra.random(n) * span))
    classes = params["class"]
    cls = streams["class"].choice(len(classes), size=n, p=[c["share"] for c in classes])
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
        u = streams["lifetime"].random(m)
        t = np.exp((u - c["beta0"]) / c["beta1"])
        limit = min(class_bounds(c["beta0"], c["beta1"])[1], cap)
        run_s[mask] = np.clip(np.rint(t), 1.0, math.floor(limit))
        req_s[mask] = math.ceil(limit)
        if not c["sequential"]:
            x = np.exp((streams["size"].random(m) - cs["beta0"]) / cs["beta1"])
            procs[mask] = np.clip(np.ceil(x), lo, max(lo, hi)).astype(np.int64)
    return {"submit": submit, "cls": cls, "procs": procs, "run_s": run_s, "req_s": req_s}


def generate(params: Mapping[str, Any], *, span: float, seed: int, start_time: int) -> Any:
    """A :class:`~o2ksim.workloads.swf.Trace` of Downey's model (see the module docstring)."""
    from o2ksim.workloads.swf import SWFHeader, Trace, jobs_from_columns

    j = generate_jobs(params, span=span, seed=seed, start_time=start_time)
    n = len(j["submit"])
    jobs = jobs_from_columns(
        n,
        submit=j["submit"],
        run_time=j["run_s"],
        alloc_procs=j["procs"],
        req_procs=j["procs"],
        req_time=j["req_s"],
        status=1,
        queue=j["cls"] + 1,
    )
    procs = params["machine"]["procs"]
    header = SWFHeader(
        version="2.2",
        computer=params["machine"]["computer"],
        installation=f"synthetic, Downey model, {params['site']} parameters",
        unix_start_time=int(start_time),
        time_zone=0,
        time_zone_string="UTC",
        max_procs=procs,
        max_nodes=procs,
        max_runtime=int(params["lifetime"]["max_s"]),
        queues="queue = lifetime class: "
        + ", ".join(f"{i + 1} {c['name']}" for i, c in enumerate(params["class"])),
        notes=["req_time = the class's longest lifetime (its queue limit), wall-clock seconds"],
    )
    return Trace(jobs=jobs, header=header, source=None)
