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
  than Table 6 says); the fit (:func:`o2ksim.workloads.cirne_berman.fit`) uses the same
  definition.
* **Requested time** (C§7.2, Table 10): uniform-log in seconds.
* **Accuracy** (C§7.1, Table 9): ``a ~ Gamma(alpha, scale=beta)``; the
  execution time is ``te = tr * a``.  Since a job cannot run past its
  request, ``a`` is capped at 1: those jobs run to their requested time and
  are killed (SWF status 0), as schedulers do.

o2ksim's extensions (used when a parameter file has them, as ``o2ksim fit``
writes by default; the paper's four sets do not):

* **Piecewise uniform-log size** (``partition.knots_procs``,
  ``partition.knots_cdf``): the CDF of the size before the power-of-two step
  is linear in log2(size) between knots instead of one line
  (:func:`fit_piecewise`).
* **Accuracy correlated with the requested time** (``accuracy.correlation``
  = ``r``): ``(tr, a)`` are drawn through a Gaussian copula with correlation
  ``r``; both margins stay the paper's.

SWF output: ``req_procs = alloc_procs = n``, ``req_time = tr``, ``run_time = te``
(at least 1 s), ``status`` 1 (completed), 0 (killed at the request) or 5
(cancelled).  A cancelled job is written as a log records a job cancelled
while it waited: field 3 (``wait``, which a model otherwise leaves -1, S§2.3)
holds the cancellation lag ``lc`` in seconds and ``run_time`` is 0, so the fit
reads generated and real traces the same way (lag = wait + run time).

The arrival cycle (:mod:`~o2ksim.workloads.cirne_berman_arrivals`) and the
partition size (:mod:`~o2ksim.workloads.cirne_berman_sizes`) are the two
components whose sampling and estimation need more than a few lines; each has
its own module, and this one draws the whole job and fits the whole model.
Their public names are importable from here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.validation import MAX_JOBS_PER_DAY, MAX_PROCS, MAX_TIME
from o2ksim.workloads.cirne_berman_arrivals import (
    MINUTES,
    arrival_shape,
    fit_arrivals,
    select_degree,
    whole_days,
)
from o2ksim.workloads.cirne_berman_sizes import (
    MAX_SIZE_SEGMENTS,
    PARTITION_METHODS,
    fit_partition,
    fit_piecewise,
    knots_pmf,
    partition_pmf,
    partition_pmf_from_cdf,
    sample_partition,
)
from o2ksim.workloads.clock import trace_tz
from o2ksim.workloads.distributions import (
    copula_correlation,
    gamma_mle,
    uniform_log_ls,
    uniform_log_sample,
)
from o2ksim.workloads.params import Checker
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.synthetic import streams, synthetic_trace

__all__ = [
    "KILLED_WITHIN",
    "MAX_CB_PROCS",
    "MAX_SIZE_SEGMENTS",
    "MINUTES",
    "PARTITION_METHODS",
    "RATE_FIELD",
    "arrival_shape",
    "expected_jobs",
    "fit",
    "fit_arrivals",
    "fit_partition",
    "fit_piecewise",
    "generate",
    "generate_jobs",
    "knots_pmf",
    "partition_pmf",
    "partition_pmf_from_cdf",
    "select_degree",
    "uniform_log_sample",
    "validate",
    "whole_days",
]

_STREAMS = ("arrivals", "partition", "requested", "accuracy", "cancel")

MAX_CB_PROCS = 2**20
"""Largest machine (``machine.procs``, ``partition.max``) of a Cirne-Berman parameter file:
the generator holds the size distribution over every size from 1 to the machine (2**20
sizes take half a second and 60 MB; the four logs of C Table 1 have 100 to 1,024
processors)."""
MIN_GAMMA, MAX_GAMMA = 1e-3, 1e3
"""Bounds of the accuracy's gamma shape ``alpha`` and scale ``beta`` (C§7.1, Table 9 has
0.4 to 0.7 and 0.9 to 1.9): beyond them the inverse gamma of the copula loses every digit."""


def validate(
    raw: Mapping[str, Any], source: str | Path = "<cirne-berman parameters>"
) -> dict[str, Any]:
    """Check a Cirne-Berman parameter mapping; raises :class:`ConfigError` with the field path."""
    ch = Checker(source)
    p: dict[str, Any] = {"model": "cirne-berman", "site": str(raw.get("site", "custom"))}
    m = ch.table(raw, "machine", "machine")
    p["machine"] = {
        "procs": ch.count(m, "procs", "machine.procs", hi=MAX_CB_PROCS),
        "computer": str(m.get("computer", "synthetic (Cirne-Berman model)")),
    }
    a = ch.table(raw, "arrival", "arrival")
    coef = ch.numbers(a, "coefficients", "arrival.coefficients")
    p["arrival"] = {
        "jobs_per_day": ch.number(
            a, "jobs_per_day", "arrival.jobs_per_day", lo=0, lo_open=True, hi=MAX_JOBS_PER_DAY
        ),
        "coefficients": coef,
    }
    with np.errstate(over="ignore", invalid="ignore"):
        shape = arrival_shape(coef)
        total = shape.sum()
    if not np.all(np.isfinite(shape)) or not np.isfinite(total):
        raise ch.fail("arrival.coefficients", "the polynomial overflows (a coefficient is too large)")
    if not np.any(shape > 0):
        raise ch.fail("arrival.coefficients", "the polynomial is not positive anywhere in the day")
    c = ch.table(raw, "cancellation", "cancellation")
    lag_chi, lag_rho = ch.uniform_log(
        c, "cancellation", "lag_chi", "lag_rho", base=2.0, top=MAX_TIME, unit="seconds"
    )
    p["cancellation"] = {
        "probability": ch.number(c, "probability", "cancellation.probability", lo=0, hi=1),
        "lag_chi": lag_chi,
        "lag_rho": lag_rho,
    }
    pa = ch.table(raw, "partition", "partition")
    chi, rho = ch.uniform_log(pa, "partition", "chi", "rho", base=2.0, top=MAX_PROCS, unit="processors")
    p["partition"] = {
        "chi": chi,
        "rho": rho,
        "power_of_two": ch.number(pa, "power_of_two", "partition.power_of_two", lo=0, hi=1),
    }
    if pa.get("max") is not None:
        p["partition"]["max"] = ch.count(pa, "max", "partition.max", hi=MAX_CB_PROCS)
    if pa.get("knots_procs") is not None or pa.get("knots_cdf") is not None:
        kx = ch.numbers(pa, "knots_procs", "partition.knots_procs", lo=1, hi=MAX_PROCS)
        kf = ch.numbers(pa, "knots_cdf", "partition.knots_cdf", n=len(kx), lo=0, hi=1)
        if len(kx) < 2:
            raise ch.fail("partition.knots_procs", "needs at least two knots")
        if any(b <= a for a, b in itertools.pairwise(kx)):
            raise ch.fail("partition.knots_procs", "must be strictly increasing")
        if any(b <= a for a, b in itertools.pairwise(kf)) or kf[-1] != 1.0:
            raise ch.fail("partition.knots_cdf", "must be strictly increasing and end at 1")
        p["partition"]["knots_procs"] = kx
        p["partition"]["knots_cdf"] = kf
    r = ch.table(raw, "requested_time", "requested_time")
    rq_chi, rq_rho = ch.uniform_log(
        r, "requested_time", "chi", "rho", base=2.0, top=MAX_TIME, unit="seconds"
    )
    p["requested_time"] = {"chi": rq_chi, "rho": rq_rho}
    ac = ch.table(raw, "accuracy", "accuracy")
    p["accuracy"] = {
        "alpha": ch.number(ac, "alpha", "accuracy.alpha", lo=MIN_GAMMA, hi=MAX_GAMMA),
        "beta": ch.number(ac, "beta", "accuracy.beta", lo=MIN_GAMMA, hi=MAX_GAMMA),
    }
    if ac.get("correlation") is not None:
        corr = ch.number(ac, "correlation", "accuracy.correlation", lo=-1, hi=1)
        if abs(corr) >= 1:
            raise ch.fail("accuracy.correlation", "must lie strictly between -1 and 1")
        p["accuracy"]["correlation"] = corr
    return p


RATE_FIELD = "arrival.jobs_per_day"
"""The field a refused job count names (:func:`o2ksim.workloads.models.generate`)."""


def expected_jobs(params: Mapping[str, Any], span: float, start_time: int) -> float:
    """Expected number of jobs in ``[0, span)`` (the daily cycle averages to ``jobs_per_day``)."""
    return float(params["arrival"]["jobs_per_day"]) * span / 86400.0


def generate_jobs(
    params: Mapping[str, Any], *, span: float, seed: int, start_time: int
) -> dict[str, np.ndarray]:
    """Job attributes as arrays: submit, procs, req_s, run_s, status, lag (the whole model)."""
    rngs = streams(seed, _STREAMS)
    # arrivals: rate per minute of the UTC day, scaled to jobs_per_day
    shape = arrival_shape(params["arrival"]["coefficients"])
    per_minute = shape / shape.sum() * params["arrival"]["jobs_per_day"]
    first_min = math.floor(start_time / 60.0)
    n_min = math.ceil((start_time + span) / 60.0) - first_min
    minutes = first_min + np.arange(n_min)
    lam = per_minute[minutes % MINUTES]
    ra = rngs["arrivals"]
    counts = ra.poisson(lam)
    t = (np.repeat(minutes, counts) * 60.0 + ra.random(int(counts.sum())) * 60.0) - start_time
    submit = np.sort(np.floor(t[(t >= 0) & (t < span)]))
    n = len(submit)

    max_procs = int(params["partition"].get("max", params["machine"]["procs"]))
    procs = sample_partition(rngs["partition"], n, params["partition"], max_procs)
    rq = params["requested_time"]
    ac = params["accuracy"]
    r = float(ac.get("correlation", 0.0))
    if r == 0.0:  # C§7: accuracy independent of the requested time
        req_s = np.maximum(
            np.rint(uniform_log_sample(rngs["requested"], n, rq["chi"], rq["rho"])), 1.0
        )
        acc = rngs["accuracy"].gamma(ac["alpha"], ac["beta"], n)
    else:  # o2ksim's extension: a Gaussian copula with correlation r between tr and a
        # scipy is a heavy import that only this extension needs: imported when it is used
        from scipy import special

        u = rngs["requested"].random(n)
        req_s = np.maximum(np.rint(np.exp2((u - rq["rho"]) / rq["chi"])), 1.0)
        z = r * special.ndtri(u) + math.sqrt(1.0 - r * r) * rngs["accuracy"].standard_normal(n)
        acc = special.gammaincinv(ac["alpha"], special.ndtr(z)) * ac["beta"]
    killed = acc >= 1.0
    acc = np.minimum(acc, 1.0)
    run_s = np.maximum(np.rint(req_s * acc), 1.0)
    run_s = np.minimum(run_s, req_s)
    status = np.where(killed, 0, 1)
    cn = params["cancellation"]
    rc = rngs["cancel"]
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


def generate(params: Mapping[str, Any], *, span: float, seed: int, start_time: int) -> Trace:
    """A :class:`~o2ksim.workloads.swf.Trace` of the Cirne-Berman model (see the module docstring)."""
    j = generate_jobs(params, span=span, seed=seed, start_time=start_time)
    n = len(j["submit"])
    return synthetic_trace(
        {
            "submit": j["submit"],
            "wait": j["lag"],
            "run_time": np.where(j["status"] == 5, 0, j["run_s"]),
            "alloc_procs": j["procs"],
            "req_procs": j["procs"],
            "req_time": j["req_s"],
            "status": j["status"],
        },
        computer=params["machine"]["computer"],
        installation=f"synthetic, Cirne-Berman model, {params['site']} parameters",
        start_time=start_time,
        procs=params["machine"]["procs"],
        max_runtime=int(j["req_s"].max()) if n else None,
        allow_overuse=False,
        notes=[
            "req_time is wall-clock seconds; status 0 = killed at its requested time, 5 = cancelled",
            "cancelled jobs (status 5) never run: field 3 (wait) is the cancellation lag in seconds "
            "after submit, run_time 0, as a log records a job cancelled while it waited",
        ],
    )


def _procs(jobs: pd.DataFrame) -> np.ndarray:
    """Processors per job as C-B count them: allocated (SWF field 5), requested (field 8) when missing.

    C Table 6's power-of-two shares match field 5 (KTH: 73.45 % for 73.46 %;
    field 8 gives 74.19 %).
    """
    alloc = jobs["alloc_procs"].to_numpy()
    return np.where(alloc > 0, alloc, jobs["req_procs"].to_numpy())


_PARTITION_KEYS = ("chi", "rho", "power_of_two", "knots_procs", "knots_cdf")


def _fixed_offset(header: Any) -> str | int | None:
    """The log's clock for C§4: SWF's fixed ``TimeZone`` offset when given, else the zone name.

    C-B read the logs' own timestamps; a fixed offset (KTH: 3600 s, CET without
    summer time) is what the SWF header records for them.  On KTH it gives
    C§4's degree 13 (the Stockholm zone with summer time gives 6).
    """
    tz = getattr(header, "time_zone", None)
    if tz is not None:
        return int(tz)
    return trace_tz(header)


KILLED_WITHIN = 0.02
"""A job that failed (SWF status 0) within this fraction of its requested time was killed at it."""


def fit(
    trace: Trace,
    *,
    partition_method: str = "piecewise",
    size_segments: int = 2,
    accuracy_method: str = "censored",
    max_degree: int = 20,
    tol: float = 0.05,
    linkage: str = "complete",
    site: str | None = None,
) -> dict[str, Any]:
    """Cirne-Berman parameters of *trace* with the paper's methods (C§4-§7).

    Processors are the allocated ones (SWF field 5; field 8 when missing).
    Arrivals: :func:`fit_arrivals` on the log's clock.  Partition size:
    :func:`fit_partition` (``partition_method``, ``size_segments``; the
    default adds o2ksim's piecewise uniform-log).  Requested time and
    cancellation lag: uniform-log least squares.  Accuracy: with
    ``accuracy_method="paper"`` C§7.1's gamma maximum likelihood of the
    completed jobs' accuracies in (0, 1], independent of the requested time
    as in C§7; with ``"censored"`` (the default) jobs killed at their request
    (accuracy 1 or more, or status 0 within :data:`KILLED_WITHIN` of it) are
    right-censored at 1, run times under a minute are treated as the interval
    they were rounded from, and the Gaussian-copula correlation between the
    requested time and the accuracy is fitted
    (:func:`~o2ksim.workloads.distributions.copula_correlation`;
    o2ksim's extension, C Table 8 measures the dependence).  Real and
    generated traces take exactly the same path.

    The result is a complete parameter mapping (``model``, ``machine``,
    ``arrival``, ``cancellation``, ``partition``, ``requested_time``,
    ``accuracy``) plus a ``fit`` table of diagnostics, including the
    estimates of the other methods.
    """
    if partition_method not in PARTITION_METHODS:
        raise O2KSimError(
            f"partition method must be one of {', '.join(PARTITION_METHODS)}, not '{partition_method}'"
        )
    if (
        isinstance(size_segments, bool)
        or not isinstance(size_segments, int)
        or not 1 <= size_segments <= MAX_SIZE_SEGMENTS
    ):
        raise O2KSimError(
            f"size segments must be from 1 to {MAX_SIZE_SEGMENTS}, not {size_segments!r:.40}"
        )
    if accuracy_method not in ("censored", "paper"):
        raise O2KSimError(f"accuracy_method must be 'censored' or 'paper', not '{accuracy_method}'")
    jobs = trace.jobs
    header = trace.header
    if len(jobs) < 10:
        raise O2KSimError(
            f"{trace.source or 'the trace'}: {len(jobs)} job(s), too few to fit (need at least 10)"
        )
    procs = _procs(jobs)
    max_procs = int(
        getattr(header, "max_procs", None) or getattr(header, "max_nodes", None) or procs.max()
    )
    if max_procs > MAX_CB_PROCS:  # the size fit holds a probability for every size
        raise O2KSimError(
            f"{trace.source or 'the trace'}: {max_procs} processors; the Cirne-Berman model "
            f"takes at most {MAX_CB_PROCS}"
        )
    start = getattr(header, "unix_start_time", None)
    if (jobs["req_time"].to_numpy() > 0).sum() < 2:
        raise O2KSimError(
            "the trace has no requested times (field 9); the Cirne-Berman model needs them"
        )
    arr = fit_arrivals(
        jobs["submit"].to_numpy() + int(start or 0),
        tz=_fixed_offset(header),
        start_unix=start,
        max_degree=max_degree,
        tol=tol,
        linkage=linkage,
    )
    status = jobs["status"].to_numpy()
    req = jobs["req_time"].to_numpy().astype(float)
    run = jobs["run_time"].to_numpy().astype(float)
    wait = jobs["wait"].to_numpy().astype(float)

    # cancellations (status 5): the lag is the time from submit to cancellation, wait + run time
    canc = status == 5
    p_cancel = float(canc.mean())
    lag = np.maximum(wait[canc], 0) + np.maximum(run[canc], 0)
    lag = lag[lag > 0]
    if len(np.unique(lag)) >= 2:
        lag_chi, lag_rho = uniform_log_ls(lag)
    else:  # no cancellation information: C§5's suggestion that lags are similar across sites (CTC/SDSC mean)
        lag_chi, lag_rho = 0.064315, -0.2339

    sized = procs[~canc] if (~canc).sum() >= 2 else procs
    part = fit_partition(sized, max_procs, method=partition_method, segments=size_segments)
    ok_req = req > 0
    rt_chi, rt_rho = uniform_log_ls(req[ok_req & ~canc])

    # accuracy of the jobs that were not cancelled
    okacc = ok_req & ~canc & (run > 0)
    acc = run[okacc] / req[okacc]
    completed = okacc & (status == 1)
    paper_acc = (run[completed] / req[completed]) if completed.sum() >= 2 else acc
    paper_acc = paper_acc[(paper_acc > 0) & (paper_acc <= 1)]
    p_alpha, p_beta = gamma_mle(paper_acc)
    # killed at the request: ran to it (a >= 1), or failed within KILLED_WITHIN of it (a log's
    # accounting stops a killed job a few seconds early: KTH has 3,900 failed jobs at 0.98-1.01)
    killed = (acc >= 1.0) | ((status[okacc] == 0) & (acc >= 1.0 - KILLED_WITHIN))
    capped = np.where(killed, 1.0, acc)
    c_alpha, c_beta = gamma_mle(capped, censor_at=1.0, scale_of=req[okacc])
    r_acc = copula_correlation(req[okacc], capped, killed) if okacc.sum() >= 3 else 0.0
    alpha, beta = (c_alpha, c_beta) if accuracy_method == "censored" else (p_alpha, p_beta)

    accuracy: dict[str, Any] = {"alpha": alpha, "beta": beta}
    if accuracy_method == "censored":
        accuracy["correlation"] = r_acc
    name = site or str(
        getattr(header, "installation", None) or getattr(header, "computer", None) or "trace"
    )
    diagnostics: dict[str, Any] = {
        "source": str(getattr(trace, "source", None) or ""),
        "jobs": len(jobs),
        "arrival_degree": arr["degree"],
        "days": arr["days"],
        "excluded_days": arr["excluded_days"],
        "partition_method": partition_method,
        "accuracy_method": accuracy_method,
        "paper_accuracy_alpha": p_alpha,
        "paper_accuracy_beta": p_beta,
        "censored_accuracy_alpha": c_alpha,
        "censored_accuracy_beta": c_beta,
        "accuracy_jobs": int(okacc.sum()),
        "accuracy_killed_jobs": int(killed.sum()),
        "accuracy_correlation": r_acc,
        "paper_partition_chi": part["paper_chi"],
        "paper_partition_rho": part["paper_rho"],
    }
    if "knots_procs" in part:
        diagnostics["size_segments"] = len(part["knots_procs"]) - 1
    return {
        "model": "cirne-berman",
        "site": name.splitlines()[0][:60],
        "machine": {
            "procs": max_procs,
            "computer": str(getattr(header, "computer", None) or "fitted"),
        },
        "arrival": {"jobs_per_day": arr["jobs_per_day"], "coefficients": arr["coefficients"]},
        "cancellation": {"probability": p_cancel, "lag_chi": lag_chi, "lag_rho": lag_rho},
        "partition": {k: part[k] for k in _PARTITION_KEYS if k in part},
        "requested_time": {"chi": rt_chi, "rho": rt_rho},
        "accuracy": accuracy,
        "fit": diagnostics,
    }
