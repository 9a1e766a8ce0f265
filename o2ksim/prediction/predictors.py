"""Downey's queue-time predictors (D§4): A (median, eq. 8), B (mean, eq. 9), combined (D§5.3).

The state of the machine when a job waits at the head of the queue: ``p``
running jobs with ages ``a_i`` and cluster sizes ``n_i``, each with the CLM
parameters of its class; ``n'`` is the number of *additional* processors the
waiting job needs (its size minus the free processors).

* **Predictor A** (the benefactor approximation, D eq. 8): the request is
  still unsatisfied at ``t`` about when none of the jobs that could satisfy it
  alone (``n_i >= n'``) has ended::

      Pr{F < n'} ~ prod_{i | n_i >= n'} (1 - cdf_L|a_i(t))

  and the prediction is the median: the ``t`` where this product is 0.5.  It
  ignores that several smaller jobs can free ``n'`` together, so it never
  predicts less than the exact median of D eqs. 5-7: it approximates it from
  above.  No benefactor: no prediction.
* **Predictor B** (continuous release, D eq. 9): a job frees its processors
  gradually, a fraction ``cdf_L|a_i(t)`` by ``t``::

      F(t) = sum_i n_i cdf_L|a_i(t)

  and the prediction is the ``t`` where ``F(t) = n'``.
* **Combined** (D§5.3): A when ``n' < threshold`` (32 in the paper), B
  otherwise; here, when A has no prediction (no benefactor), B.

Times ``t`` are measured from now: a running job of age ``a`` has lifetime
``a + t``.  Both equations are monotone in ``t`` and are solved by bisection
on ``ln t`` for all the states of a batch at once (numpy over the running
jobs of every state; no loop over jobs or outcomes).  A prediction below
``Q_FLOOR`` seconds is reported as 0; a state where the equation has no
solution (no benefactor for A; for B, fewer releasable processors than
``n'``, which only happens with ``overdue="hold"``) gives ``nan``, counted as
"no prediction".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from o2ksim.prediction.model import conditional_cdf, t_bounds

__all__ = [
    "Q_FLOOR",
    "States",
    "combined",
    "predict_a",
    "predict_b",
    "predict_states",
    "whole_queue",
]

#: Predictions shorter than this (seconds) are reported as 0.
Q_FLOOR = 1e-3
_ITERATIONS = 44
_LOG_HALF = float(np.log(0.5))


@dataclass(frozen=True)
class States:
    """Many machine states in flat form: one row per (state, running job) pair.

    ``event[k]`` is the state the ``k``-th pair belongs to (pairs sorted by
    state); ``need[e]`` is ``n'`` of state ``e``.
    """

    event: np.ndarray
    age: np.ndarray
    procs: np.ndarray
    beta0: np.ndarray
    beta1: np.ndarray
    need: np.ndarray
    t_last: np.ndarray | None = (
        None  # per pair: longest lifetime of the job's class (overdue="tail")
    )

    @property
    def n_states(self) -> int:
        return len(self.need)

    @classmethod
    def single(
        cls, ages: Any, procs: Any, beta0: Any, beta1: Any, need: float, t_last: Any = None
    ) -> States:
        a = np.atleast_1d(np.asarray(ages, dtype=float))
        p = np.atleast_1d(np.asarray(procs, dtype=float))
        return cls(
            event=np.zeros(len(a), dtype=np.int64),
            age=a,
            procs=p,
            beta0=np.broadcast_to(np.asarray(beta0, dtype=float), a.shape).copy(),
            beta1=np.broadcast_to(np.asarray(beta1, dtype=float), a.shape).copy(),
            need=np.array([float(need)]),
            t_last=None
            if t_last is None
            else np.broadcast_to(np.asarray(t_last, dtype=float), a.shape).copy(),
        )


def _segment_sum(values: np.ndarray, event: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(event, weights=values, minlength=n)


def _horizon(st: States, relevant: np.ndarray, overdue: str) -> np.ndarray:
    """Per state: the latest time a relevant running job can still end."""
    _, tmax = t_bounds(st.beta0, st.beta1)
    rem = tmax - st.age
    if overdue == "hold":
        rem = np.where(rem > 0, rem, -np.inf)
    elif overdue == "tail" and st.t_last is not None:
        rem = np.where(rem > 0, rem, st.t_last - st.age)
    elif overdue == "tail":
        rem = np.where(rem > 0, rem, np.inf)
    rem = np.where(relevant, np.maximum(rem, Q_FLOOR), -np.inf)
    h = np.full(st.n_states, -np.inf)
    np.maximum.at(h, st.event, rem)
    return np.where(np.isposinf(h), 1e9, h)


def _solve(st: States, satisfied: Any, horizon: np.ndarray) -> np.ndarray:
    """Smallest ``t`` (to bisection precision) with ``satisfied(t)`` per state; nan if none by the horizon."""
    n = st.n_states
    out = np.full(n, np.nan)
    has = np.isfinite(horizon)
    hi_t = np.where(has, np.maximum(horizon, Q_FLOOR), Q_FLOOR)
    ok_hi = satisfied(hi_t) & has
    ok_lo = satisfied(np.full(n, Q_FLOOR)) & has
    out[ok_lo] = 0.0
    todo = ok_hi & ~ok_lo
    lo = np.full(n, np.log(Q_FLOOR))
    hi = np.log(hi_t)
    for _ in range(_ITERATIONS):
        mid = 0.5 * (lo + hi)
        s = satisfied(np.exp(mid))
        hi = np.where(s, mid, hi)
        lo = np.where(s, lo, mid)
    out[todo] = np.exp(hi[todo])
    return out


def predict_states(st: States, *, overdue: str = "tail") -> dict[str, np.ndarray]:
    """Predictors A and B for every state of ``st``: ``{"A": ..., "B": ...}`` (nan = no prediction)."""
    n = st.n_states
    need_pair = st.need[st.event]
    benefactor = st.procs >= need_pair
    nbenef = _segment_sum(benefactor.astype(float), st.event, n)

    def a_ok(t: np.ndarray) -> np.ndarray:
        c = conditional_cdf(
            st.age + t[st.event], st.age, st.beta0, st.beta1, overdue=overdue, t_last=st.t_last
        )
        with np.errstate(divide="ignore"):
            logsurv = np.where(benefactor, np.log1p(-np.minimum(c, 1.0)), 0.0)
        return _segment_sum(logsurv, st.event, n) <= _LOG_HALF + 1e-12

    def b_ok(t: np.ndarray) -> np.ndarray:
        c = conditional_cdf(
            st.age + t[st.event], st.age, st.beta0, st.beta1, overdue=overdue, t_last=st.t_last
        )
        return _segment_sum(st.procs * c, st.event, n) >= st.need * (1 - 1e-12)

    a = _solve(st, a_ok, _horizon(st, benefactor, overdue))
    a[nbenef == 0] = np.nan
    b = _solve(st, b_ok, _horizon(st, np.ones(len(st.age), dtype=bool), overdue))
    return {"A": a, "B": b, "benefactors": nbenef}


def predict_a(
    ages: Any,
    procs: Any,
    beta0: Any,
    beta1: Any,
    need: float,
    *,
    overdue: str = "tail",
    t_last: Any = None,
) -> float:
    """Predictor A (D eq. 8) for one machine state; ``nan`` when no running job has ``n_i >= n'``."""
    return _predict_one("A", ages, procs, beta0, beta1, need, overdue, t_last)


def predict_b(
    ages: Any,
    procs: Any,
    beta0: Any,
    beta1: Any,
    need: float,
    *,
    overdue: str = "tail",
    t_last: Any = None,
) -> float:
    """Predictor B (D eq. 9) for one machine state; ``nan`` when ``F`` never reaches ``n'``."""
    return _predict_one("B", ages, procs, beta0, beta1, need, overdue, t_last)


def _predict_one(
    which: str, ages: Any, procs: Any, beta0: Any, beta1: Any, need: float, overdue: str, t_last: Any
) -> float:
    """Predictor ``which`` ("A" or "B") for the single machine state given by the arguments."""
    state = States.single(ages, procs, beta0, beta1, need, t_last)
    return float(predict_states(state, overdue=overdue)[which][0])


def combined(
    a: np.ndarray, b: np.ndarray, need: np.ndarray, threshold: float = 32
) -> tuple[np.ndarray, np.ndarray]:
    """D§5.3: A where ``n' < threshold`` and A has a prediction, else B; also which one was used."""
    use_a = (np.asarray(need) < threshold) & np.isfinite(a)
    return np.where(use_a, a, b), np.where(use_a, "A", "B")


#: Time grid of the whole-queue extension: 0, then 280 points 1 s, 1.07 s, ... 10^8 s
#: (geometric, 6.8 % apart).
_WQ_POINTS = 280
_WQ_STEP = np.log(1e8) / (_WQ_POINTS - 1)
WHOLE_QUEUE_GRID = np.concatenate([[0.0], np.exp(_WQ_STEP * np.arange(_WQ_POINTS))])
# ln(grid[j] - grid[s]) = base(s) + _LN_TAIL[j - s]: the grid is geometric after its first point
_LN_TAIL_FROM_ZERO = np.concatenate([[-np.inf], _WQ_STEP * np.arange(_WQ_POINTS)])
with np.errstate(divide="ignore"):
    _LN_TAIL = np.concatenate(
        [[-np.inf], np.log(np.expm1(_WQ_STEP * np.arange(1, _WQ_POINTS + 1)))]
    )


def whole_queue(
    age: np.ndarray,
    procs: np.ndarray,
    beta0: np.ndarray,
    beta1: np.ndarray,
    free: float,
    ahead_procs: np.ndarray,
    ahead_beta0: np.ndarray,
    ahead_beta1: np.ndarray,
    n: float,
    *,
    overdue: str = "tail",
    t_last: np.ndarray | None = None,
    ahead_t_last: np.ndarray | None = None,
) -> float:
    """Whole queue time of a new arrival under FCFS: predictor B extended to the jobs in queue.

    The extension D§7.1 sketches.  Processors are a fluid, as in predictor B:
    the running jobs free ``n_i cdf_L|a_i(t)`` by ``t``.  The jobs ahead in the
    queue start in FCFS order, each at the first ``t`` (not before the previous
    start ``s_{j-1}``) where the fluid free processors reach its size ``m_j``;
    from then on it holds ``m_j`` and frees ``m_j cdf_L(t - s_j)`` (its class's
    unconditional cdf: age 0), all of them by ``ahead_t_last[j]`` (its class's
    longest fitted lifetime: the model's line, fitted on the middle 80 %, can
    reach far beyond the queue's limit, and over hundreds of queued jobs that
    tail dominates).  The new job starts, in the same way, after the
    last of them.  Solved on :data:`WHOLE_QUEUE_GRID` (6.8 % resolution; the
    prediction is the first grid time at which the job fits); ``nan`` when a
    start lies beyond 10^8 s.
    """
    g = WHOLE_QUEUE_GRID
    size = len(g)
    if len(age):
        c = conditional_cdf(
            age[:, None] + g[None, :],
            age[:, None],
            beta0[:, None],
            beta1[:, None],
            overdue=overdue,
            t_last=None if t_last is None else np.asarray(t_last)[:, None],
        )
        avail = free + (procs[:, None] * c).sum(axis=0)
    else:
        avail = np.full(size, float(free))
    start = 0
    last = len(ahead_procs)
    for j in range(last + 1):
        m = float(n) if j == last else float(ahead_procs[j])
        k = int(np.argmax(avail[start:] >= m - 1e-9))
        if avail[start + k] < m - 1e-9:
            return float("nan")
        start += k
        if j == last:
            break
        if start == 0:
            lt = _LN_TAIL_FROM_ZERO
            base = 0.0
        else:
            lt = _LN_TAIL[: size - start]
            base = (start - 1) * _WQ_STEP
        f = np.minimum(np.maximum(ahead_beta0[j] + ahead_beta1[j] * (base + lt), 0.0), 1.0)
        if ahead_t_last is not None:
            f[g[start:] - g[start] >= ahead_t_last[j]] = 1.0
        avail[start:] -= m * (1.0 - f)
    return float(g[start])
