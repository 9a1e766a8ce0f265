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
from o2ksim.workloads.clock import local_clock_unix, trace_tz
from o2ksim.workloads.distributions import (
    copula_correlation,
    ecdf_points,
    gamma_mle,
    piecewise_log_cdf,
    piecewise_log_sample,
    uniform_log_ls,
    uniform_log_sample,
)
from o2ksim.workloads.params import Checker
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.synthetic import streams, synthetic_trace

__all__ = [
    "arrival_shape",
    "generate",
    "generate_jobs",
    "knots_pmf",
    "partition_pmf",
    "partition_pmf_from_cdf",
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
    if pa.get("knots_procs") is not None or pa.get("knots_cdf") is not None:
        kx = ch.numbers(pa, "knots_procs", "partition.knots_procs", lo=1)
        kf = ch.numbers(pa, "knots_cdf", "partition.knots_cdf", n=len(kx), lo=0)
        if len(kx) < 2:
            raise ch.fail("partition.knots_procs", "needs at least two knots")
        if any(b <= a for a, b in itertools.pairwise(kx)):
            raise ch.fail("partition.knots_procs", "must be strictly increasing")
        if any(b <= a for a, b in itertools.pairwise(kf)) or kf[-1] != 1.0:
            raise ch.fail("partition.knots_cdf", "must be strictly increasing and end at 1")
        p["partition"]["knots_procs"] = kx
        p["partition"]["knots_cdf"] = kf
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
    if ac.get("correlation") is not None:
        r = ch.number(ac, "correlation", "accuracy.correlation", lo=-1, hi=1)
        if abs(r) >= 1:
            raise ch.fail("accuracy.correlation", "must lie strictly between -1 and 1")
        p["accuracy"]["correlation"] = r
    return p


def arrival_shape(coefficients: list[float] | np.ndarray) -> np.ndarray:
    """The polynomial evaluated at each minute of the day, negatives set to 0 (1440 values).

    ``coefficients[k]`` multiplies ``m_s**k`` (constant term first).
    """
    ms = (np.arange(MINUTES) - 719.5) / 1439.0
    return np.maximum(
        np.polynomial.polynomial.polyval(ms, np.asarray(coefficients, dtype=float)), 0.0
    )


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
    """P(n = k) for k = 1..max_procs under the generator's partition-size model (C§6's line).

    Used by the fit (least squares against the empirical CDF) and by tests.
    """
    k = np.arange(1, max_procs + 1)
    return partition_pmf_from_cdf(np.clip(chi * np.log2(k) + rho, 0.0, 1.0), pb)


def knots_pmf(
    knots_procs: list[float] | np.ndarray,
    knots_cdf: list[float] | np.ndarray,
    pb: float,
    max_procs: int,
) -> np.ndarray:
    """P(n = k) for k = 1..max_procs with the piecewise uniform-log size (o2ksim's extension)."""
    cdf = piecewise_log_cdf(np.arange(1, max_procs + 1), knots_procs, knots_cdf)
    return partition_pmf_from_cdf(cdf, pb)


def partition_pmf_from_cdf(cdf: np.ndarray, pb: float) -> np.ndarray:
    """P(n = k), k = 1..len(cdf), of sizes ``n = ceil(x)`` with ``P(x <= k) = cdf[k-1]``, then C§6's step.

    The step: with probability *pb* the size is moved to its closest power of
    two, otherwise it is a non-power-of-two size of the same distribution.
    Sizes above the machine (the last entry) are clipped to it.
    """
    max_procs = len(cdf)
    k = np.arange(1, max_procs + 1)
    cdf = np.asarray(cdf, dtype=float).copy()
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
    # o2ksim's piecewise uniform-log, when given, replaces the line (chi, rho are then unused)
    if "knots_procs" in part:
        kx, kf = part["knots_procs"], part["knots_cdf"]
        pmf_nonpow = knots_pmf(kx, kf, 0.0, max_procs)

        def base(k: int) -> np.ndarray:
            return piecewise_log_sample(rng, k, kx, kf)
    else:
        pmf_nonpow = partition_pmf(chi, rho, 0.0, max_procs)

        def base(k: int) -> np.ndarray:
            return uniform_log_sample(rng, k, chi, rho)

    size = np.clip(np.ceil(base(n)), 1, max_procs).astype(np.int64)
    to_pow2 = rng.random(n) < pb
    size[to_pow2] = _nearest_pow2(size[to_pow2], max_procs)
    need = ~to_pow2 & _is_pow2(size)
    # non-power-of-two branch: redraw the powers of two (rejection), when any other size exists
    if pmf_nonpow.sum() > 0 and not _is_pow2(np.arange(1, max_procs + 1))[pmf_nonpow > 0].all():
        for _ in range(200):
            k = int(need.sum())
            if not k:
                break
            draw = np.clip(np.ceil(base(k)), 1, max_procs).astype(np.int64)
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
    procs = _partition(rngs["partition"], n, params["partition"], max_procs)
    rq = params["requested_time"]
    ac = params["accuracy"]
    r = float(ac.get("correlation", 0.0))
    if r == 0.0:  # C§7: accuracy independent of the requested time
        req_s = np.maximum(
            np.rint(uniform_log_sample(rngs["requested"], n, rq["chi"], rq["rho"])), 1.0
        )
        acc = rngs["accuracy"].gamma(ac["alpha"], ac["beta"], n)
    else:  # o2ksim's extension: a Gaussian copula with correlation r between tr and a
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


# ============================================================================
# fit (C§4-§7)
# ============================================================================

_MIN = 1440
_MS = (np.arange(_MIN) - 719.5) / 1439.0


_QR: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _qr(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """QR of the Chebyshev design matrix in ``2*m_s`` (well conditioned); nested for lower degrees."""
    if degree not in _QR:
        _QR[degree] = np.linalg.qr(np.polynomial.chebyshev.chebvander(2.0 * _MS, degree))
    return _QR[degree]


def _to_power(cheb: np.ndarray) -> np.ndarray:
    """Chebyshev coefficients in ``u = 2*m_s`` -> power-basis coefficients in ``m_s``."""
    p = np.polynomial.chebyshev.cheb2poly(cheb)
    return p * (2.0 ** np.arange(len(p)))


def _polyfit(y: np.ndarray, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares power-basis coefficients in ``m_s`` (constant first) and the squared error.

    *y* is one curve (1440 values) or several as columns; the result has one
    column of coefficients per curve.
    """
    q, r = _qr(degree)
    qy = q.T @ y
    cheb = np.linalg.solve(r, qy)
    sse = ((y - q @ qy) ** 2).sum(axis=0)
    if cheb.ndim == 1:
        return _to_power(cheb), sse
    return np.stack([_to_power(cheb[:, j]) for j in range(cheb.shape[1])], axis=1), sse


def select_degree(
    y: np.ndarray, *, max_degree: int = 20, tol: float = 0.05
) -> tuple[int, list[float]]:
    """The polynomial degree by C§4's rule, and the squared error for each degree 0..max.

    Starting from degree 1, the degree is increased while one of the next two
    increments lowers the squared error by more than the fraction *tol*; the
    first degree after which two successive increments do not is chosen.
    """
    q, _ = _qr(max_degree)
    qy = q.T @ y
    total = float(y @ y)
    sse = [max(total - float((qy[: d + 1] ** 2).sum()), 0.0) for d in range(max_degree + 1)]
    d = 1
    while d + 2 <= max_degree:
        base = sse[d]
        if sse[d + 1] < (1 - tol) * base or sse[d + 2] < (1 - tol) * base:
            d += 1
            continue
        break
    return d, sse


def _window_rates(
    minute: np.ndarray, day: np.ndarray, days: np.ndarray, window: int = 10
) -> np.ndarray:
    """Per-day arrival rates per minute (days x 1440) from a centred moving window."""
    idx = {d: i for i, d in enumerate(days)}
    rows = np.array([idx.get(d, -1) for d in day]) if len(day) else np.empty(0, dtype=int)
    ok = rows >= 0
    counts = np.zeros((len(days), _MIN))
    np.add.at(counts, (rows[ok], minute[ok]), 1.0)
    kernel = np.zeros(_MIN)
    half = window // 2
    kernel[np.arange(-half, window - half) % _MIN] = 1.0
    # circular convolution per day: arrivals in [m - 5, m + 5) divided by the window length
    spec = np.fft.rfft(counts, axis=1) * np.conj(np.fft.rfft(kernel))
    return np.fft.irfft(spec, n=_MIN, axis=1) / window


def _outlier_days(rates: np.ndarray, degree: int, linkage: str, max_fraction: float) -> list[int]:
    """Indices of the uncommon days (C§4): repeated two-group clustering of per-day polynomials.

    Each day's polynomial is described by its coefficients in the Chebyshev
    basis (orthogonal, so the coefficients of a degree-13 fit are well
    determined; power-basis coefficients of that degree are dominated by
    rounding), z-scored over the days, and clustered hierarchically
    (euclidean distance, *linkage*) into two groups; a group of one day is an
    outlier.  Repeated until no day is alone.
    """
    from scipy.cluster import hierarchy

    q, r = _qr(degree)
    coef = np.linalg.solve(r, q.T @ rates.T).T  # days x (degree + 1)
    keep = list(range(len(rates)))
    removed: list[int] = []
    while len(keep) > 3 and len(removed) < max_fraction * len(rates):
        c = coef[keep]
        sd = c.std(axis=0)
        z = (c - c.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        labels = hierarchy.fcluster(hierarchy.linkage(z, method=linkage), 2, criterion="maxclust")
        sizes = np.bincount(labels)
        singles = [k for k in range(1, len(sizes)) if sizes[k] == 1]
        if not singles:
            break
        out = keep[int(np.flatnonzero(labels == singles[0])[0])]
        removed.append(out)
        keep.remove(out)
    return removed


def whole_days(
    day: np.ndarray, minute: np.ndarray, start_unix: int | None, tz: str | int | None
) -> np.ndarray:
    """The local calendar days the trace covers from midnight to midnight.

    The last day with a job is never whole (the log ends inside it); the
    first one is whole only when the log starts at local midnight (its
    ``UnixStartTime``, else its first submit).  Counting jobs per day over the
    partial days at either end would bias the rate low.
    """
    first, last = int(day.min()), int(day.max())
    begin = int(start_unix) if start_unix is not None else None
    if begin is not None:
        d0, m0, _ = local_clock_unix(np.array([begin]), tz)
        starts_at_midnight = int(m0[0]) == 0 and begin % 60 == 0 and int(d0[0]) == first
    else:
        starts_at_midnight = int(minute[day == first].min()) == 0
    lo = first if starts_at_midnight else first + 1
    return np.arange(lo, last)


def fit_arrivals(
    submit_unix: np.ndarray,
    *,
    tz: str | int | None = None,
    start_unix: int | None = None,
    max_degree: int = 20,
    tol: float = 0.05,
    linkage: str = "complete",
    max_outlier_fraction: float = 0.5,
) -> dict[str, Any]:
    """Cirne-Berman arrival parameters from absolute submit times (Unix seconds), C§4.

    Only whole local days count (:func:`whole_days`).  Per-minute arrival
    rates come from a centred 10-minute window; the degree is C§4's rule
    (:func:`select_degree`).  A polynomial of that degree is fitted to every
    day; days that single-linkage clustering of their z-scored coefficients
    puts in a group of their own are removed, and the clustering is repeated
    until no day is alone (C§4: "The procedure is repeated until no day is
    clustered alone"; *max_outlier_fraction* only guards against a
    degenerate log).  The degree is then chosen again on the kept days.

    Returns ``jobs_per_day`` (over the whole days kept), ``coefficients``
    (constant first, in ``m_s``), ``degree``, the excluded days (ISO dates),
    the number of whole days and the per-degree squared errors.  *tz* is a
    zone name or a fixed offset in seconds for the local clock (``None`` =
    UTC); *start_unix* is the log's start (``UnixStartTime``).
    """
    day, minute, _ = local_clock_unix(np.asarray(submit_unix, dtype=np.int64), tz)
    if len(day) == 0:
        raise O2KSimError("the trace has no jobs to fit arrivals to")
    days = whole_days(day, minute, start_unix, tz)
    if len(days) < 1:
        raise O2KSimError("the trace covers no whole day; the arrival fit needs at least one")
    rates = _window_rates(minute, day, days)
    degree, _ = select_degree(rates.mean(axis=0), max_degree=max_degree, tol=tol)
    removed = _outlier_days(rates, degree, linkage, max_outlier_fraction) if len(days) > 3 else []
    kept = np.setdiff1d(np.arange(len(days)), removed)
    y = rates[kept].mean(axis=0)
    degree, sse = select_degree(y, max_degree=max_degree, tol=tol)
    coef, _ = _polyfit(y, degree)
    n_kept = int(np.isin(day, days[kept]).sum())
    excluded = [str(np.datetime64(int(days[i]), "D")) for i in sorted(removed)]
    return {
        "jobs_per_day": n_kept / max(len(kept), 1),
        "coefficients": [float(c) for c in coef],
        "degree": int(degree),
        "excluded_days": excluded,
        "days": len(days),
        "sse": sse,
    }


def _procs(jobs: pd.DataFrame) -> np.ndarray:
    """Processors per job as C-B count them: allocated (SWF field 5), requested (field 8) when missing.

    C Table 6's power-of-two shares match field 5 (KTH: 73.45 % for 73.46 %;
    field 8 gives 74.19 %).
    """
    alloc = jobs["alloc_procs"].to_numpy()
    return np.where(alloc > 0, alloc, jobs["req_procs"].to_numpy())


PARTITION_METHODS = ("piecewise", "paper", "exact")


def fit_partition(
    sizes: np.ndarray, max_procs: int, *, method: str = "piecewise", segments: int = 2
) -> dict[str, Any]:
    """Partition-size parameters: ``chi``, ``rho`` of the uniform-log and ``pb`` (C§6, Tables 5-6).

    ``pb`` is the observed power-of-two share (C Table 6).  ``chi, rho`` are
    C§6's least-squares straight line of the empirical CDF against log2 of the
    size, one point per distinct size (C Table 5), except with
    ``method="exact"``, where they are the least squares of the empirical CDF
    (every job one point) against the generator's own CDF, power-of-two step
    included: the estimator that returns the line a generated trace came from.
    The paper's line is always returned as ``paper_chi``, ``paper_rho``.

    ``method="piecewise"`` (the default) adds o2ksim's extension
    (:func:`fit_piecewise`): ``knots_procs``, ``knots_cdf`` of a piecewise
    uniform-log with *segments* pieces, which the generator then uses
    instead of the line.
    """
    if method not in PARTITION_METHODS:
        raise O2KSimError(
            f"partition method must be one of {', '.join(PARTITION_METHODS)}, not '{method}'"
        )
    n = np.asarray(sizes, dtype=np.int64)
    n = n[(n >= 1) & (n <= max_procs)]
    if len(n) < 2:
        raise O2KSimError("too few jobs with a known processor count to fit partition sizes")
    pb = float(((n & (n - 1)) == 0).mean())
    chi0, rho0 = uniform_log_ls(n)
    out: dict[str, Any] = {
        "chi": chi0,
        "rho": rho0,
        "power_of_two": pb,
        "paper_chi": chi0,
        "paper_rho": rho0,
    }
    if method == "piecewise":
        knots = fit_piecewise(n, max_procs, pb, segments=segments)
        if knots is not None:
            out["knots_procs"], out["knots_cdf"] = knots
        return out
    if method == "paper":
        return out
    from scipy import optimize

    values, ecdf = ecdf_points(n)
    vi = values.astype(np.int64) - 1
    # every job is one point of the empirical CDF (sizes repeat, so each distinct size counts as often as it occurs)
    weight = np.sqrt(np.bincount(n - 1, minlength=max_procs)[vi].astype(float))

    def resid(z: np.ndarray) -> np.ndarray:
        chi, rho = z
        if chi <= 1e-6:
            return np.full(len(values), 10.0)
        return (np.cumsum(partition_pmf(chi, rho, pb, max_procs))[vi] - ecdf) * weight

    res = optimize.least_squares(resid, [max(chi0, 1e-3), rho0], method="lm")
    out.update(chi=float(res.x[0]), rho=float(res.x[1]))
    return out


def fit_piecewise(
    sizes: np.ndarray, max_procs: int, pb: float, *, segments: int = 2
) -> tuple[list[float], list[float]] | None:
    """Knots of a piecewise uniform-log partition size (o2ksim's extension of C§6), or ``None``.

    C§6 fits one uniform-log line "by the method of least squared error" to
    the observed sizes.  Here the CDF is linear in log2(size) on each of
    *segments* pieces: knots at 1 processor, at *segments* - 1 free
    breakpoints and at the largest size observed that is not a power of two
    (where the CDF reaches 1: the sample maximum estimates the distribution's
    upper end, and a power of two may be a smaller size rounded up).  The CDF
    values at the knots and the breakpoints are least squares of the same
    points C§6 fits (the empirical CDF at each distinct size), against the
    generator's CDF with C§6's power-of-two step (share *pb*), so fitting a
    trace generated from knots returns them.  ``None`` when the sizes are
    too few or too narrow for a piece (the line is then used).
    """
    from scipy import optimize

    n = np.asarray(sizes, dtype=np.int64)
    values, ecdf = ecdf_points(n)
    # the largest size the power-of-two step cannot have made (it rounds sizes up, 48 -> 64)
    not_pow2 = values[~_is_pow2(values.astype(np.int64))]
    top = float(not_pow2[-1] if len(not_pow2) else values[-1])
    k = max(1, min(int(segments), len(values) - 1))
    if top < 2 or len(values) < 3:
        return None
    vi = values.astype(np.int64) - 1
    ltop = math.log2(top)

    def knots(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = np.concatenate([[z[0]], z[0] + np.cumsum(z[1:k]), [1.0]])
        x = np.exp2(np.concatenate([[0.0], np.sort(z[k:]), [ltop]]))
        return x, f

    def resid(z: np.ndarray) -> np.ndarray:
        x, f = knots(z)
        if f[0] < 0 or np.any(np.diff(f) < 0) or np.any(np.diff(x) <= 0):
            return np.full(len(values), 10.0)
        return np.cumsum(knots_pmf(x, f, pb, max_procs))[vi] - ecdf

    grid = np.linspace(0.5, ltop - 0.5, 10) if ltop > 1 else np.array([ltop / 2])
    best = None
    for breaks in itertools.combinations(grid, k - 1):
        f_at = np.interp(np.exp2(np.array(breaks)), values, ecdf)
        steps = np.maximum(np.diff(np.concatenate([[ecdf[0]], f_at])), 1e-3)
        z0 = np.concatenate([[ecdf[0]], steps, breaks])
        res = optimize.least_squares(resid, z0, method="lm")
        if best is None or res.cost < best.cost:
            best = res
    assert best is not None
    x, f = knots(best.x)
    x[-1] = top  # exactly the largest size (exp2(log2(top)) may round)
    f[0] = max(f[0], 0.0)
    for i in range(len(f) - 2, -1, -1):  # a flat piece is written as a tiny rise (files need one)
        f[i] = min(f[i], f[i + 1] - 1e-9)
        x[i] = min(x[i], x[i + 1] * (1 - 1e-9))
    return [float(v) for v in x], [float(v) for v in f]


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
    if size_segments < 1:
        raise O2KSimError(f"size segments must be at least 1, not {size_segments}")
    if accuracy_method not in ("censored", "paper"):
        raise O2KSimError(f"accuracy_method must be 'censored' or 'paper', not '{accuracy_method}'")
    jobs = trace.jobs
    header = trace.header
    if len(jobs) < 10:
        raise O2KSimError("the trace has too few jobs to fit (need at least 10)")
    procs = _procs(jobs)
    max_procs = int(
        getattr(header, "max_procs", None) or getattr(header, "max_nodes", None) or procs.max()
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
