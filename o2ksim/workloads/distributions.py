"""Distributions of the workload models and their estimators, independent of any model.

* uniform-log ``cdf(x) = chi*log_base(x) + rho`` (C§5-§7, D§3): sampling and
  the least-squares fit of the empirical CDF (:func:`uniform_log_ls`);
* piecewise uniform-log, a CDF linear in ``log2(x)`` between knots
  (:func:`piecewise_log_cdf`, :func:`piecewise_log_sample`; o2ksim's
  extension of C§6's partition size);
* the correlation of a Gaussian copula from Spearman's rank correlation, one
  margin right-censored (:func:`copula_correlation`, :func:`copula_spearman`;
  o2ksim's extension of C§7's accuracy);
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
    "copula_correlation",
    "copula_spearman",
    "ecdf_points",
    "exponential_fit",
    "gamma_fit",
    "gamma_mle",
    "hyperexp_fit",
    "hyperexp_goodness",
    "hyperexp_params",
    "hyperexp_sample",
    "piecewise_log_cdf",
    "piecewise_log_sample",
    "uniform_log_ls",
    "uniform_log_sample",
    "weibull_fit",
]


def uniform_log_sample(rng: np.random.Generator, n: int, chi: float, rho: float) -> np.ndarray:
    """Draws of the uniform-log ``cdf(x) = chi*log2(x) + rho`` (inverse transform, continuous)."""
    return np.exp2((rng.random(n) - rho) / chi)


def piecewise_log_cdf(x: np.ndarray, knots_x: np.ndarray, knots_cdf: np.ndarray) -> np.ndarray:
    """CDF of the piecewise uniform-log distribution with the given knots, at *x*.

    Between two knots ``(x_i, F_i)`` and ``(x_(i+1), F_(i+1))`` the CDF is
    linear in ``log2(x)`` (a uniform-log piece); it is 0 below the first knot
    (whose ``F_0`` is an atom at ``x_0``) and 1 from the last knot on
    (``F`` of the last knot must be 1).  One knot pair is C§6's single line.
    """
    lx = np.log2(np.maximum(np.asarray(x, dtype=float), 1e-300))
    return np.interp(lx, np.log2(np.asarray(knots_x, dtype=float)), knots_cdf, left=0.0, right=1.0)


def piecewise_log_sample(
    rng: np.random.Generator, n: int, knots_x: np.ndarray, knots_cdf: np.ndarray
) -> np.ndarray:
    """*n* draws of :func:`piecewise_log_cdf` by inverse transform (draws below ``F_0`` are ``x_0``)."""
    u = rng.random(n)
    return np.exp2(np.interp(u, knots_cdf, np.log2(np.asarray(knots_x, dtype=float))))


def copula_spearman(r: float, censored_share: float = 0.0) -> float:
    """Spearman's rank correlation of a Gaussian copula with correlation *r*, the top of *y* censored.

    The top *censored_share* of the second margin is replaced by one tied
    value (an accuracy capped at 1), ranked at its mid-rank.  Without
    censoring this is the closed form ``(6 / pi) * asin(r / 2)``; with it,
    a quadrature (Gauss-Hermite in x, a fine grid in y).
    """
    # scipy is heavy: imported only by the fits and samplers that need it
    from scipy import special

    p = float(censored_share)
    if p <= 0.0:
        return 6.0 / math.pi * math.asin(r / 2.0)
    if p >= 1.0:
        return 0.0
    c = float(special.ndtri(1.0 - p))
    zx, wx = np.polynomial.hermite_e.hermegauss(96)
    wx = wx / wx.sum()
    s = math.sqrt(max(1.0 - r * r, 1e-12))
    y = np.linspace(-9.0, c, 3001)
    dens = np.exp(-0.5 * ((y[None, :] - r * zx[:, None]) / s) ** 2) / (s * math.sqrt(2 * math.pi))
    below = np.trapezoid(special.ndtr(y)[None, :] * dens, y, axis=1)
    above = special.ndtr((r * zx - c) / s)
    e_v = below + (1.0 - p / 2.0) * above  # E[V | x], V = the mid-rank score of y
    e_uv = float((special.ndtr(zx) * e_v * wx).sum())
    var_v = (1.0 - p) ** 3 / 3.0 + p * (1.0 - p / 2.0) ** 2 - 0.25
    return (e_uv - 0.25) / math.sqrt(var_v / 12.0)


def copula_correlation(x: np.ndarray, y: np.ndarray, censored: np.ndarray | None = None) -> float:
    """Correlation ``r`` of the Gaussian copula whose rank correlation is that of ``(x, y)``.

    Spearman's rank correlation of the pairs (mid-ranks for ties) is matched
    by :func:`copula_spearman`; where *censored* is true *y* is only known to
    be above every uncensored value (an accuracy capped at 1), so those
    values tie at the top, in the data and in the matched copula alike.  A
    generator that draws ``y`` through the copula and then caps it is
    inverted by this estimator.
    """
    # scipy is heavy: imported only by the fits and samplers that need it
    from scipy import optimize, stats

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    cens = np.zeros(len(x), dtype=bool) if censored is None else np.asarray(censored, dtype=bool)
    if len(x) < 3 or len(y) != len(x) or len(cens) != len(x):
        raise O2KSimError("need at least three pairs to fit a copula correlation")
    top = np.where(cens, np.inf, y)
    rho_s = float(stats.spearmanr(x, top)[0])
    if not math.isfinite(rho_s):
        return 0.0
    p = float(cens.mean())
    lo, hi = copula_spearman(-0.999, p), copula_spearman(0.999, p)
    if rho_s <= lo:
        return -0.999
    if rho_s >= hi:
        return 0.999
    return float(
        optimize.brentq(lambda r: copula_spearman(r, p) - rho_s, -0.999, 0.999, xtol=1e-9)
    )


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
    # scipy is heavy: imported only by the fits and samplers that need it
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
    censor = math.inf if censor_at is None else float(censor_at)  # only read when n_c > 0

    def nll(z: np.ndarray) -> float:
        al, sc = math.exp(z[0]), math.exp(z[1])
        ll = (al - 1) * s_log - s_x / sc - n_e * (special.gammaln(al) + al * math.log(sc))
        if n_c:
            ll += n_c * math.log(max(float(special.gammaincc(al, censor / sc)), 1e-300))
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
    # scipy is heavy: imported only by the fits and samplers that need it
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
    # scipy is heavy: imported only by the fits and samplers that need it
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
    # scipy is heavy: imported only by the fits and samplers that need it
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
