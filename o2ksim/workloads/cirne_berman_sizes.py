"""The partition size of the Cirne-Berman model (C§6): its distribution, sampling and fit.

C§6 draws a size from a uniform-log ``cdf(n) = chi*log2(n) + rho`` over whole
processors and then, with probability ``pb``, moves it to its closest power
of two; otherwise the size is a non-power-of-two of the same distribution,
which makes ``pb`` exactly the power-of-two share C Table 6 reports.
o2ksim's extension replaces the line by a piecewise uniform-log
(``knots_procs``, ``knots_cdf``).  The exact probabilities
(:func:`partition_pmf`, :func:`knots_pmf`), the sampler (:func:`sample_partition`)
and the estimators (:func:`fit_partition`, :func:`fit_piecewise`) are kept
together so that the fit inverts exactly what the generator draws.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from o2ksim.errors import O2KSimError
from o2ksim.workloads.distributions import (
    ecdf_points,
    piecewise_log_cdf,
    piecewise_log_sample,
    uniform_log_ls,
    uniform_log_sample,
)

__all__ = [
    "MAX_SIZE_SEGMENTS",
    "PARTITION_METHODS",
    "fit_partition",
    "fit_piecewise",
    "knots_pmf",
    "partition_pmf",
    "partition_pmf_from_cdf",
    "sample_partition",
]


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
    cdf = piecewise_log_cdf(
        np.arange(1, max_procs + 1),
        np.asarray(knots_procs, dtype=float),
        np.asarray(knots_cdf, dtype=float),
    )
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


def sample_partition(
    rng: np.random.Generator, n: int, part: Mapping[str, Any], max_procs: int
) -> np.ndarray:
    """*n* partition sizes drawn with C§6's procedure (or the piecewise extension when *part* has knots)."""
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


PARTITION_METHODS = ("piecewise", "paper", "exact")
MAX_SIZE_SEGMENTS = 6
"""Most pieces of the piecewise uniform-log size fit (``fit --size-segments``): the fit
tries every choice of breakpoints among 10 candidates, C(10, k - 1) least-squares fits,
and 6 pieces already take seconds on a log of 2,000 jobs (the paper's line is one)."""


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
    # scipy is a heavy import that only the least-squares fits need: imported when they run
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
    # scipy is a heavy import that only the least-squares fits need: imported when they run
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
