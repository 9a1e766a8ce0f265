"""The daily arrival cycle of the Cirne-Berman model (C§4): its shape, and its fit to a log.

The arrival rate over the day is a polynomial in the scaled minute
``m_s = (m - 719.5) / 1439`` (``m`` = minute of the day, so ``m_s`` spans
[-0.5, 0.5]); :func:`arrival_shape` evaluates it for the generator, and
:func:`fit_arrivals` estimates it from a log's submit times the way C§4 does:
per-minute rates from a 10-minute window over whole local days, C§4's rule
for the degree (:func:`select_degree`), and the uncommon days removed by
clustering the per-day polynomials.  The sampling and the estimation live
together so that both read the same definition of the polynomial.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from o2ksim.errors import O2KSimError
from o2ksim.workloads.clock import local_clock_unix

__all__ = ["MINUTES", "arrival_shape", "fit_arrivals", "select_degree", "whole_days"]

MINUTES = 1440
_MS = (np.arange(MINUTES) - 719.5) / 1439.0  # m_s of every minute of the day


def arrival_shape(coefficients: list[float] | np.ndarray) -> np.ndarray:
    """The polynomial evaluated at each minute of the day, negatives set to 0 (1440 values).

    ``coefficients[k]`` multiplies ``m_s**k`` (constant term first).
    """
    return np.maximum(
        np.polynomial.polynomial.polyval(_MS, np.asarray(coefficients, dtype=float)), 0.0
    )


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
    counts = np.zeros((len(days), MINUTES))
    np.add.at(counts, (rows[ok], minute[ok]), 1.0)
    kernel = np.zeros(MINUTES)
    half = window // 2
    kernel[np.arange(-half, window - half) % MINUTES] = 1.0
    # circular convolution per day: arrivals in [m - 5, m + 5) divided by the window length
    spec = np.fft.rfft(counts, axis=1) * np.conj(np.fft.rfft(kernel))
    return np.fft.irfft(spec, n=MINUTES, axis=1) / window


def _outlier_days(rates: np.ndarray, degree: int, linkage: str, max_fraction: float) -> list[int]:
    """Indices of the uncommon days (C§4): repeated two-group clustering of per-day polynomials.

    Each day's polynomial is described by its coefficients in the Chebyshev
    basis (orthogonal, so the coefficients of a degree-13 fit are well
    determined; power-basis coefficients of that degree are dominated by
    rounding), z-scored over the days, and clustered hierarchically
    (euclidean distance, *linkage*) into two groups; a group of one day is an
    outlier.  Repeated until no day is alone.
    """
    # scipy is a heavy import that only this fit needs: imported when it runs
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
