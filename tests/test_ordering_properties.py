"""Properties that catch ordering bugs, not only resource safety.

On random workloads (hypothesis, seeded):

* strict FCFS never lets a later job start before an earlier one;
* FCFS-backfill (EASY, one reservation) gives exactly the start times of the
  independent plain-Python loop in ``../shared/checks/easy_oracle.py`` (SPEC
  §3.1), and strict FCFS those of its FCFS mode.

A reversed priority order, or a reservation booked one second late, breaks
these (see docs/reference/refusals.md, "How the suites were checked").
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.jobs import JobSpec
from o2ksim.machine import single_host

ORACLE = Path(__file__).resolve().parents[2] / "shared" / "checks" / "easy_oracle.py"
PROCS = 16

pytestmark = pytest.mark.timeout(180)


def _oracle() -> ModuleType:
    if not ORACLE.exists():
        pytest.skip(f"{ORACLE} not present (../shared is not checked out)")
    spec = importlib.util.spec_from_file_location("easy_oracle", ORACLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["easy_oracle"] = module
    spec.loader.exec_module(module)
    return module


@st.composite
def workloads(draw) -> list[tuple[int, float, float, int, float]]:
    """Oracle job tuples (id, submit, run, procs, estimate): bursts, ties, over- and under-estimates."""
    n = draw(st.integers(1, 30))
    jobs, t = [], 0
    for i in range(1, n + 1):
        t += draw(st.sampled_from([0, 0, 1, 5, 30, 100, 600]))
        run = draw(st.integers(0, 2000))
        est = draw(st.sampled_from([run, run, run * 2 + 1, max(run // 2, 1), run + 60]))
        procs = draw(st.integers(1, PROCS))
        jobs.append((i, float(t), float(run), procs, float(max(est, 1))))
    return jobs


def _specs(jobs) -> list[JobSpec]:
    return [JobSpec(j, s, p, 0, e, r) for j, s, r, p, e in jobs]


def _starts(result) -> dict[int, float]:
    return dict(zip(result.jobs["job_id"].tolist(), result.jobs["start"].tolist(), strict=True))


PROPERTY = settings(
    max_examples=100, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip


@PROPERTY
@given(jobs=workloads())
def test_strict_fcfs_never_lets_a_later_job_start_first_and_equals_the_loop(jobs) -> None:
    starts = _starts(simulate(_specs(jobs), machine=single_host(PROCS), policy="fcfs"))
    order = sorted(jobs, key=lambda j: (j[1], j[0]))  # submission order
    seq = [starts[j[0]] for j in order]
    assert all(a <= b for a, b in itertools.pairwise(seq)), seq
    expected = {j: v[1] for j, v in _oracle().simulate(jobs, PROCS, "fcfs").items()}
    assert starts == expected


@PROPERTY
@given(jobs=workloads())
def test_fcfs_backfill_equals_the_independent_easy_loop(jobs) -> None:
    expected = {j: v[1] for j, v in _oracle().simulate(jobs, PROCS, "easy").items()}
    got = _starts(simulate(_specs(jobs), machine=single_host(PROCS), policy="fcfs-backfill"))
    assert got == expected
