"""Invariants on random workloads: no over-commit, no early start, no lost job, work conserved.

Covers the foundation policies and a "chaos" test policy that preempts,
resumes and resizes at random (seeded), so the engine's bookkeeping is checked
under every kind of change, not only the ones today's policies make.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.engine.decisions import Preempt, Resize, Resume, Start, WakeAt
from o2ksim.invariants import violations
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies.base import Policy

MACHINE = MachineSpec(
    "three",
    (HostSpec("a", 16, 8 * KB_PER_GB), HostSpec("b", 16, 4 * KB_PER_GB), HostSpec("c", 8, 8 * KB_PER_GB)),
)


@st.composite
def workloads(draw, max_jobs=40):
    n = draw(st.integers(1, max_jobs))
    t = 0
    jobs = []
    for i in range(n):
        t += draw(st.integers(0, 50))
        procs = draw(st.sampled_from([1, 1, 2, 4, 8, 16, 20]))
        run = draw(st.integers(0, 400))
        req = draw(st.sampled_from([run, run * 2, max(1, run // 2), run + 60]))
        mem = draw(st.sampled_from([0, 256, 1024, 3072, 6000])) * 1024
        jobs.append(JobSpec(i + 1, float(t), procs, mem, float(max(req, 1)), float(run)))
    return jobs


SETTINGS = settings(max_examples=35, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(jobs=workloads(), policy=st.sampled_from(["fcfs", "fcfs-backfill"]), reservations=st.integers(1, 3))
def test_foundation_policies_keep_the_invariants(jobs, policy, reservations):
    params = {"reservations": reservations} if policy == "fcfs-backfill" else {}
    r = simulate(jobs, machine=MACHINE, policy=policy, policy_params=params)
    assert violations(r.jobs, r.segments, MACHINE, [j.job_id for j in jobs]) == []
    ran = r.jobs[r.jobs.status == "completed"]
    assert ((ran.end - ran.start) == ran.run_time).all()
    # every job that can fit somewhere runs
    assert set(r.jobs.status) <= {"completed", "rejected"}


class Chaos(Policy):
    """Starts what fits, then at random instants preempts, resumes and resizes jobs (seeded)."""

    kind = "chaos-test"

    def schedule(self, snap):
        out = []
        free = {h.name: [h.free_procs, h.free_mem] for h in snap.hosts}
        rng = self.rng
        for h in snap.hosts:
            for job in list(h.running):
                roll = rng.random()
                if roll < 0.2:
                    out.append(Preempt(job))
                    free[h.name][0] += job.alloc_procs
                elif roll < 0.4 and job.alloc_procs > 1:
                    new = int(rng.integers(1, job.alloc_procs))
                    out.append(Resize(job, new))
                    free[h.name][0] += job.alloc_procs - new
            for job in list(h.preempted):
                procs = int(rng.integers(1, job.procs + 1))
                if free[h.name][0] >= procs and rng.random() < 0.7:
                    out.append(Resume(job, procs))
                    free[h.name][0] -= procs
        for job in snap.queue:
            for h in snap.hosts:
                f = free[h.name]
                if f[0] >= job.procs and f[1] >= job.mem:
                    f[0] -= job.procs
                    f[1] -= job.mem
                    out.append(Start(job, h.name))
                    break
        out.append(WakeAt(snap.now + float(rng.integers(1, 30))))
        return out


@SETTINGS
@given(jobs=workloads(max_jobs=25), seed=st.integers(0, 2**16))
def test_work_is_conserved_under_preemption_and_resizing(jobs, seed):
    r = simulate(jobs, machine=MACHINE, policy=Chaos(), seed=seed)
    assert violations(r.jobs, r.segments, MACHINE, [j.job_id for j in jobs]) == []
    done = r.jobs[r.jobs.status == "completed"]
    # response >= actual runtime: nobody finishes faster than on its full request
    assert (done.end - done.start >= done.run_time - 1e-6).all()
    assert set(r.jobs.status) <= {"completed", "rejected"}


def test_same_seed_gives_identical_results():
    rng = np.random.default_rng(3)
    jobs = [
        JobSpec(i, float(i * 7), int(rng.choice([1, 2, 4, 8])), 0, 100.0, float(rng.integers(1, 100)))
        for i in range(200)
    ]
    a = simulate(jobs, machine=MACHINE, policy=Chaos(), seed=11)
    b = simulate(jobs, machine=MACHINE, policy=Chaos(), seed=11)
    c = simulate(jobs, machine=MACHINE, policy=Chaos(), seed=12)
    cols = ["job_id", "start", "end", "host", "preemptions", "resizes"]
    assert a.jobs[cols].equals(b.jobs[cols])
    assert not a.jobs[cols].equals(c.jobs[cols])


def test_invariant_checker_catches_an_over_commit():
    import pandas as pd

    jobs = pd.DataFrame(
        {"job_id": [1, 2], "submit": [0.0, 0.0], "start": [0.0, 1.0], "end": [10.0, 5.0],
         "status": ["completed"] * 2, "restarts": [0, 0], "run_time": [10.0, 4.0], "procs": [10, 10]}
    )  # fmt: skip
    seg = pd.DataFrame(
        {"job_id": [1, 2], "host": ["c", "c"], "start": [0.0, 1.0], "end": [10.0, 5.0],
         "procs": [8, 8], "mem": [0.0, 0.0]}
    )  # fmt: skip
    found = violations(jobs, seg, MACHINE, [1, 2])
    assert any("16 processors in use" in p for p in found)
    assert any("needs 100" in p for p in found)
