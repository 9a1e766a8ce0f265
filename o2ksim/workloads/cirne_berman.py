"""Cirne & Berman's model of the supercomputer workload (C§4-§7), as a generator.

Each job is drawn independently of the others, exactly as the paper's
sections build it:

* **Arrival instant** (C§4, Table 3): a non-homogeneous Poisson process whose
  rate over the day follows a polynomial in the scaled minute
  ``m_s = (m - 719.5) / 1439`` (``m`` = minute of the day, so ``m_s`` spans
  [-0.5, 0.5]).  The polynomial gives the *shape* of the daily cycle; the rate
  is scaled so that a day has ``arrival.jobs_per_day`` jobs on average, and
  negative values of the polynomial count as zero.
* **Cancellation** (C§5, Table 4): with probability ``pc`` a job is cancelled
  by its user after a uniform-log lag ``lc``.
* **Partition size** (C§6, Tables 5-6): uniform-log ``cdf(n) = chi*log2(n) + rho``
  over whole processors (``n = ceil(x)``), with a share ``pb`` of power-of-two
  sizes: with probability ``pb`` the drawn size is moved to its closest power
  of two, otherwise the size is a non-power-of-two drawn from the same
  uniform-log.  This makes ``pb`` exactly "the probability of a job being a
  power-of-2 partition size" as C§6 defines it and Table 6 reports it (the
  literal "move with probability pb" procedure would give more powers of two
  than Table 6 says); the fit (:mod:`o2ksim.workloads.fitting`) uses the same
  definition.
* **Requested time** (C§7.2, Table 10): uniform-log in seconds.
* **Accuracy** (C§7.1, Table 9): ``a ~ Gamma(alpha, scale=beta)``; the
  execution time is ``te = tr * a``.  Since a job cannot run past its
  request, ``a`` is capped at 1: those jobs run to their requested time and
  are killed (SWF status 0), as schedulers do.

SWF output: ``req_procs = alloc_procs = n``, ``req_time = tr``, ``run_time = te``
(at least 1 s), ``status`` 1 (completed), 0 (killed at the request) or 5
(cancelled).  For a cancelled job, field 3 (``wait``, which a model otherwise
leaves -1, S§2.3) holds the cancellation lag ``lc`` in seconds and ``run_time``
the time the job would have run: a simulator that ignores cancellations runs
it normally, one that honours them withdraws it ``lc`` seconds after submit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from o2ksim.errors import ConfigError
from o2ksim.workloads.models import Checker

__all__ = [
    "arrival_shape",
    "generate",
    "generate_jobs",
    "partition_pmf",
    "uniform_log_sample",
    "validate",
]

_STREAMS = ("arrivals", "partition", "requested", "accuracy", "cancel")
MINUTES = 1440


def validate(
    raw: Mapping[str, Any], source: str | Path = "<cirne-berman parameters>"
) -> dict[str, Any]:
    """Check a Cirne-Berman parameter mapping; raises :class:`ConfigError` with the field path."""
    ch = Checker(source)
    p: dict[str, Any] = {"model": "cirne-berman", "site": str(raw.get("site", "custom"))}
    m = ch.get(raw, "machine", "machine")
    p["machine"] = {
        "procs": int(ch.number(m, "procs", "machine.procs", lo=1)),
        "computer": str(m.get("computer", "synthetic (Cirne-Berman model)")),
    }
    a = ch.get(raw, "arrival", "arrival")
    coef = ch.numbers(a, "coefficients", "arrival.coefficients")
    p["arrival"] = {
        "jobs_per_day": ch.number(a, "jobs_per_day", "arrival.jobs_per_day", lo=0, lo_open=True),
        "coefficients": coef,
    }
    shape = arrival_shape(coef)
    if not np.any(shape > 0):
        raise ch.fail("arrival.coefficients", "the polynomial is not positive anywhere in the day")
    c = ch.get(raw, "cancellation", "cancellation")
    p["cancellation"] = {
        "probability": ch.number(c, "probability", "cancellation.probability", lo=0, hi=1),
        "lag_chi": ch.number(c, "lag_chi", "cancellation.lag_chi", lo=0, lo_open=True),
        "lag_rho": ch.number(c, "lag_rho", "cancellation.lag_rho"),
    }
    pa = ch.get(raw, "partition", "partition")
    p["partition"] = {
        "chi": ch.number(pa, "chi", "partition.chi", lo=0, lo_open=True),
        "rho": ch.number(pa, "rho", "partition.rho", hi=1.0),
        "power_of_two": ch.number(pa, "power_of_two", "partition.power_of_two", lo=0, hi=1),
    }
    if pa.get("max") is not None:
        p["partition"]["max"] = int(ch.number(pa, "max", "partition.max", lo=1))
    r = ch.get(raw, "requested_time", "requested_time")
    p["requested_time"] = {
        "chi": ch.number(r, "chi", "requested_time.chi", lo=0, lo_open=True),
        "rho": ch.number(r, "rho", "requested_time.rho", hi=1.0),
    }
    ac = ch.get(raw, "accuracy", "accuracy")
    p["accuracy"] = {
        "alpha": ch.number(ac, "alpha", "accuracy.alpha", lo=0, lo_open=True),
        "beta": ch.number(ac, "beta", "accuracy.beta", lo=0, lo_open=True),
    }
    return p


def arrival_shape(coefficients: list[float] | np.ndarray) -> np.ndarray:
    """The polynomial evaluated at each minute of the day, negatives set to 0 (1440 values).

    ``coefficients[k]`` multiplies ``m_s**k`` (constant term first).
    """
    ms = (np.arange(MINUTES) - 719.5) / 1439.0
    return np.maximum(
        np.polynomial.polynomial.polyval(ms, np.asarray(coefficients, dtype=float)), 0.0
    )


def uniform_log_sample(rng: np.random.Generator, n: int, chi: float, rho: float) -> np.ndarray:
    """Draws of the uniform-log ``cdf(x) = chi*log2(x) + rho`` (inverse transform, continuous)."""
    return np.exp2((rng.random(n) - rho) / chi)


def _is_pow2(n: np.ndarray) -> np.ndarray:
    n = np.asarray(n, dtype=np.int64)
    return (n > 0) & ((n & (n - 1)) == 0)


def _nearest_pow2(n: np.ndarray, cap: int) -> np.ndarray:
    """The closest power of two (ties go up), not above the largest power of two <= *cap*."""
    n = np.asarray(n, dtype=np.int64)
    lo = np.exp2(np.floor(np.log2(np.maximum(n, 1)))).astype(np.int64)
    hi = lo * 2
    out = np.where(n - lo < hi - n, lo, hi)
    top = 1 << math.floor(math.log2(cap))
    return np.minimum(out, top)


def partition_pmf(chi: float, rho: float, pb: float, max_procs: int) -> np.ndarray:
    """P(n = k) for k = 1..max_procs under the generator's partition-size model.

    Used by the fit (least squares against the empirical CDF) and by tests.
    """
    k = np.arange(1, max_procs + 1)
    cdf = np.clip(chi * np.log2(k) + rho, 0.0, 1.0)
    cdf[-1] = 1.0  # sizes above the machine are clipped to it
    q = np.diff(np.concatenate([[0.0], cdf]))
    is2 = _is_pow2(k)
    rounded = np.zeros(max_procs)
    np.add.at(rounded, _nearest_pow2(k, max_procs) - 1, q)
    nonpow = np.where(is2, 0.0, q)
    tot = nonpow.sum()
    if tot <= 0:  # no non-power-of-two size possible: everything is a power of two
        return rounded
    return pb * rounded + (1.0 - pb) * nonpow / tot


def _partition(
    rng: np.random.Generator, n: int, part: Mapping[str, Any], max_procs: int
) -> np.ndarray:
    chi, rho, pb = part["chi"], part["rho"], part["power_of_two"]
    size = np.clip(np.ceil(uniform_log_sample(rng, n, chi, rho)), 1, max_procs).astype(np.int64)
    to_pow2 = rng.random(n) < pb
    size[to_pow2] = _nearest_pow2(size[to_pow2], max_procs)
    need = ~to_pow2 & _is_pow2(size)
    # non-power-of-two branch: redraw the powers of two (rejection), when any other size exists
    pmf_nonpow = partition_pmf(chi, rho, 0.0, max_procs)
    if pmf_nonpow.sum() > 0 and not _is_pow2(np.arange(1, max_procs + 1))[pmf_nonpow > 0].all():
        for _ in range(200):
            k = int(need.sum())
            if not k:
                break
            draw = np.clip(np.ceil(uniform_log_sample(rng, k, chi, rho)), 1, max_procs).astype(
                np.int64
            )
            idx = np.flatnonzero(need)
            size[idx] = draw
            need[idx] = _is_pow2(draw)
        if need.any():  # very unlikely: sample the rest from the exact non-power-of-two pmf
            size[need] = rng.choice(np.arange(1, max_procs + 1), size=int(need.sum()), p=pmf_nonpow)
    return size


def generate_jobs(
    params: Mapping[str, Any], *, span: float, seed: int, start_time: int
) -> dict[str, np.ndarray]:
    """Job attributes as arrays: submit, procs, req_s, run_s, status, lag (the whole model)."""
    streams = dict(
        zip(
            _STREAMS,
            (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(len(_STREAMS))),
            strict=True,
        )
    )
    # arrivals: rate per minute of the UTC day, scaled to jobs_per_day
    shape = arrival_shape(params["arrival"]["coefficients"])
    per_minute = shape / shape.sum() * params["arrival"]["jobs_per_day"]
    first_min = math.floor(start_time / 60.0)
    n_min = math.ceil((start_time + span) / 60.0) - first_min
    minutes = first_min + np.arange(n_min)
    lam = per_minute[minutes % MINUTES]
    ra = streams["arrivals"]
    counts = ra.poisson(lam)
    t = (np.repeat(minutes, counts) * 60.0 + ra.random(int(counts.sum())) * 60.0) - start_time
    submit = np.sort(np.floor(t[(t >= 0) & (t < span)]))
    n = len(submit)

    max_procs = int(params["partition"].get("max", params["machine"]["procs"]))
    procs = _partition(streams["partition"], n, params["partition"], max_procs)
    rq = params["requested_time"]
    req_s = np.maximum(
        np.rint(uniform_log_sample(streams["requested"], n, rq["chi"], rq["rho"])), 1.0
    )
    ac = params["accuracy"]
    acc = streams["accuracy"].gamma(ac["alpha"], ac["beta"], n)
    killed = acc >= 1.0
    acc = np.minimum(acc, 1.0)
    run_s = np.maximum(np.rint(req_s * acc), 1.0)
    run_s = np.minimum(run_s, req_s)
    status = np.where(killed, 0, 1)
    cn = params["cancellation"]
    rc = streams["cancel"]
    cancelled = rc.random(n) < cn["probability"]
    lag = np.full(n, -1.0)
    k = int(cancelled.sum())
    if k:
        lag[cancelled] = np.maximum(
            np.rint(uniform_log_sample(rc, k, cn["lag_chi"], cn["lag_rho"])), 1.0
        )
    status = np.where(cancelled, 5, status)
    return {
        "submit": submit,
        "procs": procs,
        "req_s": req_s,
        "run_s": run_s,
        "status": status,
        "lag": lag,
        "accuracy": acc,
    }


def generate(params: Mapping[str, Any], *, span: float, seed: int, start_time: int) -> Any:
    """A :class:`~o2ksim.workloads.swf.Trace` of the Cirne-Berman model (see the module docstring)."""
    from o2ksim.workloads.swf import SWFHeader, Trace, jobs_from_columns

    if params["machine"]["procs"] < 1:
        raise ConfigError(
            "cirne-berman parameters", "machine.procs must be positive", field="machine.procs"
        )
    j = generate_jobs(params, span=span, seed=seed, start_time=start_time)
    n = len(j["submit"])
    jobs = jobs_from_columns(
        n,
        submit=j["submit"],
        wait=j["lag"],
        run_time=j["run_s"],
        alloc_procs=j["procs"],
        req_procs=j["procs"],
        req_time=j["req_s"],
        status=j["status"],
    )
    procs = params["machine"]["procs"]
    header = SWFHeader(
        version="2.2",
        computer=params["machine"]["computer"],
        installation=f"synthetic, Cirne-Berman model, {params['site']} parameters",
        unix_start_time=int(start_time),
        time_zone=0,
        time_zone_string="UTC",
        max_procs=procs,
        max_nodes=procs,
        max_runtime=int(j["req_s"].max()) if n else None,
        allow_overuse=False,
        notes=[
            "req_time is wall-clock seconds; status 0 = killed at its requested time, 5 = cancelled",
            "cancelled jobs (status 5): field 3 (wait) holds the cancellation lag in seconds after submit, "
            "run_time the time the job would have run",
        ],
    )
    return Trace(jobs=jobs, header=header, source=None)
