"""Immediate service on random workloads: the run invariants hold while preempted jobs keep memory.

No host over-commits processors or memory (preempted victims hold their
memory and no processors), no job holds more processors than it requested,
work is conserved for every job that completed without a restart, every input
job is in the output exactly once, and nobody finishes faster than its actual
runtime.  Trials are checked against their definition: a job that completed
in its trial ran at most ``q`` and its peak memory fit the trial memory.
"""

from __future__ import annotations

from conftest import IMMEDIATE_PRESETS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.invariants import violations
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_MB, HostSpec, MachineSpec

MB = KB_PER_MB
MACHINE = MachineSpec(
    "three",
    (HostSpec("a", 16, 4096 * MB), HostSpec("b", 16, 2048 * MB), HostSpec("c", 8, 4096 * MB)),
)


@st.composite
def workloads(draw, max_jobs=40):
    n = draw(st.integers(1, max_jobs))
    t = 0
    jobs = []
    for i in range(n):
        t += draw(st.integers(0, 120))
        procs = draw(st.sampled_from([1, 2, 4, 8, 8, 16]))
        run = draw(st.sampled_from([0, 5, 30, 59, 60, 61, 300, 900, 2000, 5000]))
        req = draw(st.sampled_from([run, run * 3, run + 600, 10000]))
        mem = draw(st.sampled_from([0, 256, 1024, 1500, 3000])) * MB
        used = draw(st.sampled_from([0, 100, 900, 1200])) * MB
        jobs.append(JobSpec(i + 1, float(t), procs, mem, float(max(req, 1)), float(run), used_mem=used))
    return jobs


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    jobs=workloads(),
    policy=st.sampled_from(["fcfs-backfill", "lxfw-backfill", "sjf-backfill"]),
    mode=st.sampled_from(["preemptive", "preemptive", "soon"]),
    quantum=st.sampled_from([30, 60, 120]),
    eligible_after=st.sampled_from([0, 100, 600]),
    reservations=st.sampled_from([1, 2]),
)
def test_immediate_service_keeps_the_invariants(jobs, policy, mode, quantum, eligible_after, reservations):
    params = {
        "immediate_service": mode, "quantum": quantum, "eligible_after": eligible_after,
        "reservations": reservations,
    }  # fmt: skip
    r = simulate(jobs, machine=MACHINE, policy=policy, policy_params=params)
    assert violations(r.jobs, r.segments, MACHINE, [j.job_id for j in jobs]) == []
    assert set(r.jobs.status) <= {"completed", "rejected"}
    done = r.jobs[r.jobs.status == "completed"]
    assert (done.end - done.submit >= done.run_time - 1e-6).all()
    assert (done.wait >= -1e-6).all()
    s = r.summary
    assert s["immediate_service_completed"] <= s["immediate_service_jobs"]
    assert s["immediate_service_preempting"] <= s["immediate_service_jobs"]
    if mode == "soon":
        assert s["preemptions"] == 0
    # a job that completed in its trial fits the trial's definition
    specs = {j.job_id: j for j in jobs}
    seg = r.segments
    for jid in done.loc[(done.restarts == 0), "job_id"]:
        rows = seg[seg.job_id == jid]
        if len(rows) == 1 and rows["mem"].iloc[0] * MB < specs[jid].mem:  # ran with trial memory
            assert specs[jid].run_time <= quantum
            assert specs[jid].used_mem <= rows["mem"].iloc[0] * MB


def test_same_seed_same_schedule_with_preemption():
    jobs = [
        JobSpec(i, float(i * 37 % 900), [1, 4, 8, 16][i % 4], 512 * MB, 4000.0, float([20, 3000, 50, 2500][i % 4]))
        for i in range(1, 120)
    ]
    a = simulate(jobs, machine=MACHINE, policy="lxfw-backfill", policy_params={"immediate_service": "preemptive"})
    b = simulate(jobs, machine=MACHINE, policy="lxfw-backfill", policy_params={"immediate_service": "preemptive"})
    assert a.jobs.equals(b.jobs)
    assert a.summary["preemptions"] > 0


@settings(SETTINGS, max_examples=15)
@given(jobs=workloads(max_jobs=30), preset=st.sampled_from(IMMEDIATE_PRESETS))
def test_immediate_presets_keep_the_invariants(jobs, preset):
    r = simulate(jobs, machine=MACHINE, policy=preset)
    assert violations(r.jobs, r.segments, MACHINE, [j.job_id for j in jobs]) == []
    assert set(r.jobs.status) <= {"completed", "rejected"}
