"""Distributions of the workload models and their estimators, independent of any model.

* uniform-log ``cdf(x) = chi*log_base(x) + rho`` (C§5-§7, D§3): sampling and
  the least-squares fit of the empirical CDF (:func:`uniform_log_ls`);
* gamma: maximum likelihood, plain, right-censored or interval-censored
  (:func:`gamma_mle`, C§7.1);
* beta with a given mean and CV (:func:`beta_params`, the ratio shapes of
  T Tables 10-11);
* two-stage hyperexponential with balanced means (T§4.3): parameters,
  sampling and goodness of fit; Weibull, gamma and exponential fits of
  interarrival times (T§4.3, Fig. 20).

Only numpy at import; scipy is imported by the estimators that need it (it
takes half a second to load and generating needs none of it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from o2ksim.errors import O2KSimError

__all__ = [
    "beta_params",
    "ecdf_points",
    "exponential_fit",
    "gamma_fit",
    "gamma_mle",
    "hyperexp_fit",
    "hyperexp_goodness",
    "hyperexp_params",
    "hyperexp_sample",
    "uniform_log_ls",
    "uniform_log_sample",
    "weibull_fit",
]


def uniform_log_sample(rng: np.random.Generator, n: int, chi: float, rho: float) -> np.ndarray:
    """Draws of the uniform-log ``cdf(x) = chi*log2(x) + rho`` (inverse transform, continuous)."""
    return np.exp2((rng.random(n) - rho) / chi)


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


def beta_params(mean: float, cv: float) -> tuple[float, float]:
    """Beta(a, b) on (0, 1) with the given mean and coefficient of variation (moment match)."""
    var = (cv * mean) ** 2
    nu = mean * (1.0 - mean) / var - 1.0
    return mean * nu, (1.0 - mean) * nu


def hyperexp_params(mean: float, cv: float) -> tuple[float, float, float]:
    """Two-stage hyperexponential with balanced means: ``(p1, mean1, mean2)``.

    The standard construction (Allen 1990, cited in T§4.3 footnote 2): the
    stages carry equal shares of the mean, ``p1*mean1 = p2*mean2 = mean/2``,
    and ``p1 = (1 + sqrt((cv^2 - 1)/(cv^2 + 1)))/2``.  ``cv = 1`` gives an
    exponential distribution.
    """
    c2 = cv * cv
    p1 = 0.5 * (1.0 + math.sqrt(max(c2 - 1.0, 0.0) / (c2 + 1.0)))
    p2 = 1.0 - p1
    m1 = mean / (2.0 * p1)
    m2 = mean / (2.0 * p2) if p2 > 0 else m1
    return p1, m1, m2


def hyperexp_sample(rng: np.random.Generator, n: int, mean: float, cv: float) -> np.ndarray:
    """*n* draws of the balanced two-stage hyperexponential with *mean* and *cv* (:func:`hyperexp_params`)."""
    p1, m1, m2 = hyperexp_params(mean, cv)
    stage1 = rng.random(n) < p1
    return rng.standard_exponential(n) * np.where(stage1, m1, m2)


def hyperexp_fit(x: np.ndarray) -> dict[str, float]:
    """Two-stage hyperexponential with the sample's mean and CV (balanced means; T§4.3 fn 2).

    A CV below 1 cannot be matched by a hyperexponential; the result is then
    the exponential (``p1 = 1``) and ``matched_cv`` is 1.
    """
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
