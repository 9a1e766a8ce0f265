"""EQspatial-MinInterval invariants on random workloads, and proof that the checker can fail.

On every host: at least MinInterval between two repartitionings; no job holds
more than it requested; no over-commit; work conserved; with MinInterval = 0
the allocation after each event is an equipartition among the jobs that share
equally (:func:`o2ksim.partitioning.partitioning_violations`).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.invariants import violations
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.partitioning import partitioning_violations
from o2ksim.policies import equipartition as eq
from o2ksim.policies.eqspatial import EQSpatial

MACHINE = MachineSpec(
    "three",
    (HostSpec("a", 16, 8 * KB_PER_GB), HostSpec("b", 16, 4 * KB_PER_GB), HostSpec("c", 8, 8 * KB_PER_GB)),
)


@st.composite
def workloads(draw, max_jobs=30):
    n = draw(st.integers(1, max_jobs))
    t = 0
    jobs = []
    for i in range(n):
        t += draw(st.integers(0, 60))
        procs = draw(st.sampled_from([1, 1, 2, 4, 8, 16]))
        run = draw(st.integers(0, 400))
        mem = draw(st.sampled_from([0, 256, 1024, 3072, 6000])) * 1024
        jobs.append(JobSpec(i + 1, float(t), procs, mem, float(max(run, 1)), float(run)))
    return jobs


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(result, jobs, min_interval, long=None):
    found = violations(result.jobs, result.segments, MACHINE, [j.job_id for j in jobs])
    found += partitioning_violations(
        result.jobs,
        result.segments,
        MACHINE,
        min_interval=min_interval,
        long_threshold=long,
    )
    return found


@SETTINGS
@given(jobs=workloads(), min_interval=st.sampled_from([0, 0, 30, 120]), long=st.sampled_from([None, 150]))
def test_eqspatial_keeps_its_invariants(jobs, min_interval, long):
    params = {"min_interval": min_interval, "long_job_threshold": long}
    r = simulate(jobs, machine=MACHINE, policy="eqspatial", policy_params=params)
    assert check(r, jobs, min_interval, long) == []
    assert set(r.jobs.status) <= {"completed", "rejected"}
    done = r.jobs[r.jobs.status == "completed"]
    assert (done.end - done.submit >= done.run_time - 1e-6).all()


def test_same_seed_same_schedule():
    jobs = [JobSpec(i, float(7 * i), 1 + (i * 5) % 16, (i % 4) * KB_PER_GB, 100.0, float(10 + (i * 37) % 300))
            for i in range(1, 120)]  # fmt: skip
    a = simulate(jobs, machine=MACHINE, policy="eqspatial-5m")
    b = simulate(jobs, machine=MACHINE, policy="eqspatial-5m")
    assert a.segments.equals(b.segments)


class NoClock(EQSpatial):
    """Broken on purpose: forgets each repartitioning, so MinInterval never holds a host back."""

    kind = "eqspatial-broken-clock"

    def _repartition(self, h, view, snap, out):
        super()._repartition(h, view, snap, out)
        self._clock.last.pop(h.name, None)


class FirstTakesAll(EQSpatial):
    """Broken on purpose: the first job on a host gets everything it asks for."""

    kind = "eqspatial-broken-share"

    def _host_jobs(self, h, now):
        jobs = super()._host_jobs(h, now)
        return [eq.HostJob(j.key, j.request, 1 if i == 0 else j.privileged, j.order, j.prefer)
                for i, j in enumerate(jobs)]  # fmt: skip


BUSY = [JobSpec(i, float(10 * i), 8, 0, 200.0, 200.0) for i in range(1, 12)]


def test_checker_catches_a_policy_that_ignores_min_interval():
    r = simulate(BUSY, machine=MACHINE, policy=NoClock(min_interval=60))
    assert any("MinInterval 60" in p for p in check(r, BUSY, 60))
    good = simulate(BUSY, machine=MACHINE, policy=EQSpatial(min_interval=60))
    assert check(good, BUSY, 60) == []


def test_checker_catches_a_policy_that_does_not_equipartition():
    r = simulate(BUSY, machine=MACHINE, policy=FirstTakesAll(min_interval=0))
    assert any("not an equipartition" in p for p in check(r, BUSY, 0))
