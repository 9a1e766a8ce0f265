"""Estimate workload-model parameters from a trace, with the papers' own methods.

* Uniform-log distributions (C§5-§7, D§3): least squares of the empirical CDF
  against the logarithm of the value, at the distinct observed values
  (:func:`uniform_log_ls`).  Downey omits the shortest and longest 10 % of jobs
  (``trim``).
* Gamma accuracy (C§7.1): maximum likelihood (:func:`gamma_mle`).  C-B fitted
  the accuracies of completed jobs, all of which lie in (0, 1]; o2ksim's
  generator caps accuracy at 1 (a job is killed at its request), so the
  default fit treats accuracies of 1 or more as right-censored at 1, which
  makes "fit -> generate -> fit" return the same parameters.  The paper's
  plain MLE is available as ``accuracy_method="paper"`` and is always reported
  in the fitted file's ``[fit]`` table.
* Arrival rate (C§4, after Calzarossa & Serazzi): per-minute arrival rate from
  a 10-minute moving window, a polynomial in the scaled minute, the degree
  chosen by increasing it until the squared error stops decreasing
  significantly over two successive increments; unusual days are removed by
  clustering per-day polynomials (:func:`fit_arrivals`).
* Partition sizes (C§6): the power-of-two share is the observed one (Table 6),
  and chi/rho are fitted by least squares of the empirical CDF against the
  generator's exact CDF (which reduces to the paper's straight line when no
  size is moved to a power of two).

Also here: two-stage hyperexponential, Weibull, gamma and exponential fits of
interarrival times (thesis T§4.3, used by :mod:`o2ksim.workloads.characterize`).

scipy is imported inside the functions that need it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError

__all__ = [
    "ecdf_points",
    "exponential_fit",
    "fit_arrivals",
    "fit_cirne_berman",
    "fit_downey",
    "gamma_fit",
    "gamma_mle",
    "hyperexp_fit",
    "select_degree",
    "uniform_log_ls",
    "weibull_fit",
]


# ============================================================================
# distributions
# ============================================================================


def ecdf_points(x: np.ndarray, *, strict: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of *x* and the empirical CDF ``P(X <= v)`` at each (``P(X < v)`` if *strict*)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return np.empty(0), np.empty(0)
    values, counts = np.unique(x, return_counts=True)
    cdf = np.cumsum(counts) / len(x)
    if strict:
        cdf = cdf - counts / len(x)
    return values, cdf


def uniform_log_ls(x: np.ndarray, *, base: float = 2.0, trim: float = 0.0) -> tuple[float, float]:
    """``(chi, rho)`` of ``cdf(x) = chi*log_base(x) + rho`` by least squares on the empirical CDF.

    The regression uses one point per distinct positive value (value, ECDF at
    it).  With ``trim`` > 0 only the points whose ECDF lies in
    ``(trim, 1 - trim]`` are used (Downey omits the shortest and longest 10 %).
    Downey's ``beta0, beta1`` are ``rho, chi`` with ``base = e``.
    """
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    v, f = ecdf_points(x)
    if trim > 0:
        keep = (f > trim + 1e-12) & (f <= 1.0 - trim + 1e-12)
        v, f = v[keep], f[keep]
    if len(v) < 2:
        raise O2KSimError(f"cannot fit a uniform-log distribution to {len(v)} distinct value(s)")
    lx = np.log(v) / math.log(base)
    chi, rho = np.polyfit(lx, f, 1)
    return float(chi), float(rho)


def gamma_mle(
    a: np.ndarray,
    *,
    censor_at: float | None = None,
    scale_of: np.ndarray | None = None,
    interval_below: float = 60.0,
) -> tuple[float, float]:
    """Maximum-likelihood ``(alpha, scale)`` of a gamma distribution.

    With ``censor_at``, values ``>= censor_at`` are right-censored observations
    (only "at least censor_at" is known), the other values exact.  With
    ``scale_of`` (the requested times, when *a* = run / requested and run is a
    whole number of seconds), run times under ``interval_below`` seconds are
    treated as the interval their rounding came from, so short jobs do not
    bias the fit.
    """
    from scipy import optimize, special, stats

    a = np.asarray(a, dtype=float)
    keep = np.isfinite(a) & (a > 0)
    tr = None if scale_of is None else np.asarray(scale_of, dtype=float)[keep]
    a = a[keep]
    if len(a) < 2:
        raise O2KSimError("need at least two positive values to fit a gamma distribution")
    if censor_at is None and tr is None:
        alpha, _, scale = stats.gamma.fit(a, floc=0)
        return float(alpha), float(scale)
    cens = a >= censor_at if censor_at is not None else np.zeros(len(a), dtype=bool)
    if tr is not None:
        run = np.rint(a * tr)
        interval = ~cens & (run < interval_below)
        lo = np.maximum(run[interval] - 0.5, 0.0) / tr[interval]
        lo = np.where(run[interval] <= 1, 0.0, lo)  # the generator writes at least one second
        hi = (run[interval] + 0.5) / tr[interval]
    else:
        interval = np.zeros(len(a), dtype=bool)
        lo = hi = np.empty(0)
    exact = a[~cens & ~interval]
    n_c = int(cens.sum())
    s_log, s_x, n_e = float(np.log(exact).sum()), float(exact.sum()), len(exact)

    def nll(z: np.ndarray) -> float:
        al, sc = math.exp(z[0]), math.exp(z[1])
        ll = (al - 1) * s_log - s_x / sc - n_e * (special.gammaln(al) + al * math.log(sc))
        if n_c:
            ll += n_c * math.log(max(float(special.gammaincc(al, censor_at / sc)), 1e-300))
        if len(lo):
            p = special.gammainc(al, hi / sc) - special.gammainc(al, lo / sc)
            ll += float(np.log(np.maximum(p, 1e-300)).sum())
        return -ll

    m, v = a.mean(), a.var()
    z0 = np.log([max(m * m / v, 1e-3), max(v / m, 1e-6)])
    res = optimize.minimize(
        nll, z0, method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-9, "maxiter": 4000}
    )
    return float(math.exp(res.x[0])), float(math.exp(res.x[1]))


def hyperexp_fit(x: np.ndarray) -> dict[str, float]:
    """Two-stage hyperexponential with the sample's mean and CV (balanced means; T§4.3 fn 2).

    A CV below 1 cannot be matched by a hyperexponential; the result is then
    the exponential (``p1 = 1``) and ``matched_cv`` is 1.
    """
    from o2ksim.workloads.o2k import hyperexp_params

    x = np.asarray(x, dtype=float)
    mean = float(x.mean())
    cv = float(x.std() / mean) if mean > 0 else float("nan")
    p1, m1, m2 = hyperexp_params(mean, max(cv, 1.0))
    return {"mean": mean, "cv": cv, "p1": p1, "mean1": m1, "mean2": m2, "matched_cv": max(cv, 1.0)}


def _hyperexp_logpdf(x: np.ndarray, p1: float, m1: float, m2: float) -> np.ndarray:
    return np.log(p1 / m1 * np.exp(-x / m1) + (1 - p1) / m2 * np.exp(-x / m2) + 1e-300)


def weibull_fit(x: np.ndarray) -> dict[str, float]:
    """Weibull maximum-likelihood fit: shape, scale, log-likelihood, KS distance."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    x = x[x > 0]
    c, _, scale = stats.weibull_min.fit(x, floc=0)
    return {
        "shape": float(c),
        "scale": float(scale),
        "loglik": float(stats.weibull_min.logpdf(x, c, scale=scale).sum()),
        "ks": float(stats.kstest(x, "weibull_min", args=(c, 0, scale)).statistic),
    }


def gamma_fit(x: np.ndarray) -> dict[str, float]:
    """Gamma maximum-likelihood fit: shape, scale, log-likelihood, KS distance."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    x = x[x > 0]
    a, _, scale = stats.gamma.fit(x, floc=0)
    return {
        "shape": float(a),
        "scale": float(scale),
        "loglik": float(stats.gamma.logpdf(x, a, scale=scale).sum()),
        "ks": float(stats.kstest(x, "gamma", args=(a, 0, scale)).statistic),
    }


def exponential_fit(x: np.ndarray) -> dict[str, float]:
    """Exponential with the sample mean: mean, log-likelihood, KS distance."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    x = x[x > 0]
    m = float(x.mean())
    return {
        "mean": m,
        "loglik": float(stats.expon.logpdf(x, scale=m).sum()),
        "ks": float(stats.kstest(x, "expon", args=(0, m)).statistic),
    }


def hyperexp_goodness(x: np.ndarray, fit: Mapping[str, float]) -> dict[str, float]:
    """Log-likelihood and KS distance of a :func:`hyperexp_fit` result on *x*."""
    x = np.asarray(x, dtype=float)
    x = x[x > 0]
    p1, m1, m2 = fit["p1"], fit["mean1"], fit["mean2"]
    xs = np.sort(x)
    model = 1 - p1 * np.exp(-xs / m1) - (1 - p1) * np.exp(-xs / m2)
    n = len(xs)
    ks = (
        float(max(np.max(np.arange(1, n + 1) / n - model), np.max(model - np.arange(n) / n)))
        if n
        else float("nan")
    )
    return {"loglik": float(_hyperexp_logpdf(x, p1, m1, m2).sum()), "ks": ks}


# ============================================================================
# arrivals (C§4)
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
    """Indices of days removed by repeated two-group hierarchical clustering of per-day polynomials (C§4)."""
    from scipy.cluster import hierarchy

    coef, _ = _polyfit(rates.T, degree)
    coef = coef.T  # days x (degree + 1)
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


def fit_arrivals(
    submit_unix: np.ndarray,
    *,
    tz: str | int | None = None,
    max_degree: int = 20,
    tol: float = 0.05,
    linkage: str = "single",
    max_outlier_fraction: float = 0.05,
) -> dict[str, Any]:
    """Cirne-Berman arrival parameters from absolute submit times (Unix seconds).

    Returns ``jobs_per_day`` (over the days kept), ``coefficients`` (constant
    first, in ``m_s``), ``degree``, the excluded days (ISO dates) and the
    per-degree squared errors.  *tz* is a zone name or a fixed offset in
    seconds for the local clock (``None`` = UTC).
    """
    from o2ksim.workloads.characterize import local_clock_unix

    day, minute, _ = local_clock_unix(np.asarray(submit_unix, dtype=np.int64), tz)
    if len(day) == 0:
        raise O2KSimError("the trace has no jobs to fit arrivals to")
    days = np.arange(day.min(), day.max() + 1)
    rates = _window_rates(minute, day, days)
    degree, _ = select_degree(rates.mean(axis=0), max_degree=max_degree, tol=tol)
    removed = _outlier_days(rates, degree, linkage, max_outlier_fraction) if len(days) > 3 else []
    kept = np.setdiff1d(np.arange(len(days)), removed)
    y = rates[kept].mean(axis=0)
    degree, sse = select_degree(y, max_degree=max_degree, tol=tol)
    coef, _ = _polyfit(y, degree)
    kept_days = set(days[kept].tolist())
    n_kept = int(np.isin(day, list(kept_days)).sum())
    excluded = [str(np.datetime64(int(days[i]), "D")) for i in sorted(removed)]
    return {
        "jobs_per_day": n_kept / max(len(kept), 1),
        "coefficients": [float(c) for c in coef],
        "degree": int(degree),
        "excluded_days": excluded,
        "days": len(days),
        "sse": sse,
    }


# ============================================================================
# model fits
# ============================================================================


def _procs(jobs: pd.DataFrame) -> np.ndarray:
    req = jobs["req_procs"].to_numpy()
    return np.where(req > 0, req, jobs["alloc_procs"].to_numpy())


def _trace_tz(header: Any) -> str | int | None:
    tzs = getattr(header, "time_zone_string", None)
    if tzs:
        return str(tzs).strip()
    tz = getattr(header, "time_zone", None)
    return int(tz) if tz is not None else None


def fit_partition(sizes: np.ndarray, max_procs: int) -> dict[str, float]:
    """Partition-size parameters: chi, rho by least squares on the ECDF, pb = observed power-of-two share.

    The model CDF is the generator's exact one (uniform-log, whole processors,
    the power-of-two step); every job contributes its point of the empirical
    CDF.  ``paper_chi``/``paper_rho`` are C§6's plain straight-line fit at the
    distinct sizes, for comparison with C Table 5.
    """
    from scipy import optimize

    from o2ksim.workloads.cirne_berman import partition_pmf

    n = np.asarray(sizes, dtype=np.int64)
    n = n[(n >= 1) & (n <= max_procs)]
    if len(n) < 2:
        raise O2KSimError("too few jobs with a known processor count to fit partition sizes")
    pb = float(((n & (n - 1)) == 0).mean())
    values, ecdf = ecdf_points(n)
    chi0, rho0 = uniform_log_ls(n)
    vi = values.astype(np.int64) - 1
    # every job is one point of the empirical CDF (sizes repeat, so each distinct size counts as often as it occurs)
    weight = np.sqrt(np.bincount(n - 1, minlength=max_procs)[vi].astype(float))

    def resid(z: np.ndarray) -> np.ndarray:
        chi, rho = z
        if chi <= 1e-6:
            return np.full(len(values), 10.0)
        return (np.cumsum(partition_pmf(chi, rho, pb, max_procs))[vi] - ecdf) * weight

    res = optimize.least_squares(resid, [max(chi0, 1e-3), rho0], method="lm")
    return {
        "chi": float(res.x[0]),
        "rho": float(res.x[1]),
        "power_of_two": pb,
        "paper_chi": chi0,
        "paper_rho": rho0,
    }


def fit_cirne_berman(
    trace: Any,
    *,
    accuracy_method: str = "censored",
    max_degree: int = 20,
    tol: float = 0.05,
    linkage: str = "single",
    site: str | None = None,
) -> dict[str, Any]:
    """Cirne-Berman parameters of *trace* (a :class:`~o2ksim.workloads.swf.Trace`).

    The result is a complete parameter mapping (``model``, ``machine``,
    ``arrival``, ``cancellation``, ``partition``, ``requested_time``,
    ``accuracy``) plus a ``fit`` table of diagnostics, including the paper's
    plain estimates where o2ksim's default method differs.
    """
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
    start = int(getattr(header, "unix_start_time", None) or 0)
    extra = getattr(header, "extra", {}) or {}
    generated = "O2KSimModel" in extra
    if (jobs["req_time"].to_numpy() > 0).sum() < 2:
        raise O2KSimError(
            "the trace has no requested times (field 9); the Cirne-Berman model needs them"
        )
    arr = fit_arrivals(
        jobs["submit"].to_numpy() + start,
        tz=_trace_tz(header),
        max_degree=max_degree,
        tol=tol,
        linkage=linkage,
        max_outlier_fraction=0.0 if generated else 0.05,
    )
    status = jobs["status"].to_numpy()
    req = jobs["req_time"].to_numpy().astype(float)
    run = jobs["run_time"].to_numpy().astype(float)
    wait = jobs["wait"].to_numpy().astype(float)

    # cancellations (status 5): lag = wait + run for real logs; generated traces store the lag in wait
    canc = status == 5
    p_cancel = float(canc.mean())
    lag = wait[canc] if generated else np.maximum(wait[canc], 0) + np.maximum(run[canc], 0)
    lag = lag[lag > 0]
    if len(np.unique(lag)) >= 2:
        lag_chi, lag_rho = uniform_log_ls(lag)
    else:  # no cancellation information: C§5's suggestion that lags are similar across sites (CTC/SDSC mean)
        lag_chi, lag_rho = 0.064315, -0.2339

    part = fit_partition(procs[~canc] if (~canc).sum() >= 2 else procs, max_procs)
    ok_req = req > 0
    if ok_req.sum() < 2:
        raise O2KSimError(
            "the trace has no requested times (field 9); the Cirne-Berman model needs them"
        )
    rt_chi, rt_rho = uniform_log_ls(req[ok_req & ~canc])

    # accuracy of the jobs that were not cancelled
    okacc = ok_req & ~canc & (run > 0)
    acc = run[okacc] / req[okacc]
    completed = okacc & (status == 1)
    paper_acc = (run[completed] / req[completed]) if completed.sum() >= 2 else acc
    paper_acc = paper_acc[(paper_acc > 0) & (paper_acc <= 1)]
    p_alpha, p_beta = gamma_mle(paper_acc)
    c_alpha, c_beta = gamma_mle(acc, censor_at=1.0, scale_of=req[okacc])
    alpha, beta = (c_alpha, c_beta) if accuracy_method == "censored" else (p_alpha, p_beta)

    name = site or str(
        getattr(header, "installation", None) or getattr(header, "computer", None) or "trace"
    )
    return {
        "model": "cirne-berman",
        "site": name.splitlines()[0][:60],
        "machine": {
            "procs": max_procs,
            "computer": str(getattr(header, "computer", None) or "fitted"),
        },
        "arrival": {"jobs_per_day": arr["jobs_per_day"], "coefficients": arr["coefficients"]},
        "cancellation": {"probability": p_cancel, "lag_chi": lag_chi, "lag_rho": lag_rho},
        "partition": {"chi": part["chi"], "rho": part["rho"], "power_of_two": part["power_of_two"]},
        "requested_time": {"chi": rt_chi, "rho": rt_rho},
        "accuracy": {"alpha": alpha, "beta": beta},
        "fit": {
            "source": str(getattr(trace, "source", None) or ""),
            "jobs": len(jobs),
            "arrival_degree": arr["degree"],
            "days": arr["days"],
            "excluded_days": arr["excluded_days"],
            "accuracy_method": accuracy_method,
            "paper_accuracy_alpha": p_alpha,
            "paper_accuracy_beta": p_beta,
            "censored_accuracy_alpha": c_alpha,
            "censored_accuracy_beta": c_beta,
            "accuracy_jobs": int(okacc.sum()),
            "paper_partition_chi": part["paper_chi"],
            "paper_partition_rho": part["paper_rho"],
        },
    }


def fit_downey(
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
    from o2ksim.prediction.model import ALL, fit_clm, select_jobs

    if partition is not None or window is not None:
        jobs = select_jobs(trace.jobs, trace.header, partition=partition, window=window)
        trace = type(trace)(jobs=jobs, header=trace.header, source=trace.source)
    jobs = trace.jobs
    header = trace.header
    if len(jobs) < 10:
        raise O2KSimError("the trace has too few jobs to fit (need at least 10)")
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
    classes = []
    for c in fitted:
        n = total if c.name == ALL else int((labels == c.name).sum())
        classes.append(
            {
                "name": c.name,
                "share": float(n / total),
                "beta0": c.beta0,
                "beta1": c.beta1,
                "sequential": bool(c.name == "sequential"),
            }
        )
    s = sum(c["share"] for c in classes)
    for c in classes:
        c["share"] /= s
    par = ok & (procs >= 2)
    max_procs = int(
        getattr(header, "max_procs", None) or getattr(header, "max_nodes", None) or procs.max()
    )
    if par.sum() >= 2 and len(np.unique(procs[par])) >= 2:
        g1, g0 = uniform_log_ls(procs[par], base=math.e)
    else:
        g1, g0 = 1.0, 0.0
    from o2ksim.workloads.reshape import trace_span

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
        "class": classes,
        "fit": {
            "source": str(getattr(trace, "source", None) or ""),
            "jobs": len(jobs),
            "trim": trim,
            "by_queue": bool(by_queue),
            "classes": clm.rule.text,
        },
    }


def _queue_names(header: Any) -> dict[int, str]:
    """Queue numbers to names from ``Queue:`` header lines or a ``Queues:`` list, when present."""
    names: dict[int, str] = {}
    queues = getattr(header, "queues", None)
    if queues:  # o2ksim's generators: "queue = ...: 1 sequential, 2 short, ..."
        for num, name in re.findall(r"(\d+)\s+([A-Za-z_][\w-]*)", str(queues).split(":", 1)[-1]):
            names[int(num)] = name
    extra = getattr(header, "extra", {}) or {}
    for key, value in extra.items():
        if key.lower() != "queue":
            continue
        for line in str(value).splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].lstrip("-").isdigit():
                names[int(parts[0])] = parts[1]
    return names
