"""Strict FCFS against queueing theory: the M/M/1 and M/M/c mean waits (closed forms).

One host with ``c`` processors, one-processor jobs, Poisson arrivals (rate λ)
and exponential runtimes (rate μ) is the M/M/c FCFS queue, whose mean wait in
queue is known exactly:

* M/M/1: ``Wq = ρ / (μ − λ)`` with ``ρ = λ/μ``;
* M/M/c: ``Wq = C(c, a) / (cμ − λ)``, ``a = λ/μ``, with Erlang's C formula
  ``C = (a^c / c!) / ((1 − ρ) Σ_{k<c} a^k/k! + a^c / c!)``, ``ρ = a/c``.

Tolerance: the first ``WARMUP`` jobs are dropped (the queue starts empty);
the standard error of the mean wait is estimated from ``BATCHES`` batch means
(consecutive jobs are correlated, so the plain standard deviation would
understate it), and the simulated mean must lie within 4 standard errors of
the closed form.  The test also requires that standard error to be under 10 %
of ``Wq``, so the check stays sharp enough to catch a wrong queue discipline
or a lost job.  Seeded, so it is deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import one_host

from o2ksim import simulate
from o2ksim.jobs import JobSpec

JOBS = 24_000
WARMUP = 2_000
BATCHES = 20


def mm_workload(lam: float, mu: float, n: int, seed: int) -> list[JobSpec]:
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(1.0 / lam, n))
    run = rng.exponential(1.0 / mu, n)
    return [JobSpec(i + 1, float(submit[i]), 1, 0, float(run[i]), float(run[i])) for i in range(n)]


def erlang_c_wait(lam: float, mu: float, c: int) -> float:
    a = lam / mu
    rho = a / c
    top = a**c / math.factorial(c)
    below = (1 - rho) * sum(a**k / math.factorial(k) for k in range(c)) + top
    return (top / below) / (c * mu - lam)


def test_erlang_c_reduces_to_mm1():
    lam, mu = 0.006, 0.01
    assert erlang_c_wait(lam, mu, 1) == pytest.approx((lam / mu) / (mu - lam))


@pytest.mark.parametrize(
    ("c", "lam", "mu", "seed"),
    [
        (1, 0.005, 0.01, 11),  # M/M/1, ρ = 0.5: Wq = 100 s
        (4, 0.028, 0.01, 12),  # M/M/4, ρ = 0.7: Wq = C(4, 2.8) / 0.012 ≈ 35.7 s
    ],
)
def test_fcfs_mean_wait_matches_the_closed_form(c, lam, mu, seed):
    jobs = mm_workload(lam, mu, JOBS, seed)
    result = simulate(jobs, machine=one_host(c), policy="fcfs")
    waits = result.jobs.sort_values("submit")["wait"].to_numpy()[WARMUP:]
    batches = np.array_split(waits, BATCHES)
    means = np.array([b.mean() for b in batches])
    stderr = means.std(ddof=1) / math.sqrt(BATCHES)
    expected = erlang_c_wait(lam, mu, c)
    assert stderr < 0.10 * expected, (stderr, expected)
    assert abs(waits.mean() - expected) < 4 * stderr, (waits.mean(), expected, stderr)
