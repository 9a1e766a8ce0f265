"""The simulation core with small scripted test policies: every engine capability on a tiny case.

Each test policy is a script: at given instants it returns given decisions,
so the expected schedule can be computed by hand.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from o2ksim.engine.core import Simulation
from o2ksim.engine.decisions import (
    Kill,
    PolicyError,
    Preempt,
    Reject,
    Resize,
    Resume,
    Start,
    WakeAt,
)
from o2ksim.engine.monitor import Observer, jobs_table
from o2ksim.jobs import IllegalTransition, Job, JobSpec, JobState
from o2ksim.machine import HostSpec, MachineSpec, single_host
from o2ksim.policies.base import Policy


def spec(job_id, submit, procs, run, req=None, mem=0):
    return JobSpec(job_id, float(submit), procs, mem, float(req if req is not None else run), float(run))


class Script(Policy):
    """Returns the decisions ``script(snap)`` builds; records every snapshot time."""

    kind = "script"

    def __init__(self, script):
        super().__init__()
        self.script = script
        self.passes = []

    def schedule(self, snap):
        self.passes.append(snap.now)
        return self.script(snap)


def greedy(snap):
    """Start every queued job that fits on the first host with room (no ordering games)."""
    out = []
    free = {h.name: h.free_procs for h in snap.hosts}
    for job in snap.queue:
        for h in snap.hosts:
            if free[h.name] >= job.procs and h.free_mem >= job.mem:
                free[h.name] -= job.procs
                out.append(Start(job, h.name))
                break
    return out


def run(specs, script, machine=None, **kw):
    policy = Script(script)
    sim = Simulation(machine or single_host(4), specs, policy, **kw)
    sim.run()
    return sim, policy, jobs_table(list(sim.jobs.values())).set_index("job_id")


def test_jobs_run_their_actual_runtime_and_release_processors():
    sim, _, t = run([spec(1, 0, 4, 10), spec(2, 0, 4, 5)], greedy)
    assert (t.loc[1, "start"], t.loc[1, "end"]) == (0, 10)
    assert (t.loc[2, "start"], t.loc[2, "end"]) == (10, 15)
    assert sim.hosts["machine"].free_procs == 4
    assert list(t["status"]) == ["completed", "completed"]


def test_one_pass_per_instant_after_departures_and_arrivals():
    # job 1 ends at 10 exactly when job 2 arrives: a single pass at t=10 sees both.
    _, policy, t = run([spec(1, 0, 4, 10), spec(2, 10, 4, 1)], greedy)
    assert policy.passes == [0.0, 10.0]  # the run stops when the last job ends at 11
    assert t.loc[2, "start"] == 10


def test_zero_length_jobs_end_in_a_second_pass_at_the_same_instant():
    _, policy, t = run([spec(1, 0, 4, 0), spec(2, 0, 4, 3)], greedy)
    assert t.loc[1, "end"] == 0 and t.loc[2, "start"] == 0
    assert policy.passes[:2] == [0.0, 0.0]


def test_kill_frees_resources_and_records_reason():
    def script(snap):
        if snap.now == 0:
            return [*greedy(snap), WakeAt(3.0)]
        if snap.now == 3 and snap.hosts[0].running:
            return [Kill(j, "test kill") for h in snap.hosts for j in h.running]
        return greedy(snap)

    _, _, t = run([spec(1, 0, 4, 10), spec(2, 1, 4, 2)], script)
    assert t.loc[1, "status"] == "killed" and t.loc[1, "end"] == 3
    assert t.loc[1, "reason"] == "test kill"
    assert t.loc[2, "start"] == 3 and t.loc[2, "end"] == 5


def test_preempt_keeps_memory_and_remaining_work_then_resume():
    # job 1: 4 procs, 10 s.  Preempted at 4 (6 s of work left), job 2 runs 4..6, job 1 resumes at 6.
    def script(snap):
        if snap.now == 0:
            return [Start(next(iter(snap.queue)), "machine"), WakeAt(4.0)]
        if snap.now == 4:
            j1 = next(iter(snap.hosts[0].running))
            j2 = next(iter(snap.queue))
            assert snap.hosts[0].free_mem == 8 * 1024 - 1024  # 1 MB held by job 1
            return [Preempt(j1), Start(j2, "machine")]
        if snap.departed and snap.departed[0].id == 2:
            return [Resume(j) for j in snap.hosts[0].preempted]
        return []

    machine = MachineSpec("m", (HostSpec("machine", 4, 8 * 1024),))
    sim, _, t = run([spec(1, 0, 4, 10, mem=1024), spec(2, 1, 4, 2, mem=1024 * 6)], script, machine)
    assert (t.loc[2, "start"], t.loc[2, "end"]) == (4, 6)
    assert t.loc[1, "end"] == 12 and t.loc[1, "preemptions"] == 1
    # preempted jobs: wait = response - actual runtime
    assert t.loc[1, "wait"] == 12 - 10
    seg = sim.monitor.segments()
    j1 = seg[seg.job_id == 1].sort_values("start")
    assert list(j1["procs"]) == [4, 0, 4]  # running, preempted (memory only), running
    assert list(j1["mem"]) == [1.0, 1.0, 1.0]


def test_resize_changes_rate_linearly():
    # 4 procs x 8 s = 32 proc-s.  At t=2 (8 done) shrink to 2 procs: 24 left at rate 2 -> ends at 14.
    def script(snap):
        if snap.now == 0:
            return [*greedy(snap), WakeAt(2.0)]
        if snap.now == 2:
            return [Resize(j, 2) for j in snap.hosts[0].running]
        return []

    sim, _, t = run([spec(1, 0, 4, 8)], script)
    assert t.loc[1, "end"] == 14 and t.loc[1, "resizes"] == 1
    seg = sim.monitor.segments()
    work = (seg["procs"] * (seg["end"] - seg["start"])).sum()
    assert work == pytest.approx(32.0)


def test_resize_up_speeds_up():
    def script(snap):
        if snap.now == 0:
            return [Start(next(iter(snap.queue)), "machine", procs=1), WakeAt(4.0)]
        if snap.now == 4:
            return [Resize(j, 4) for j in snap.hosts[0].running]
        return []

    # work 4 x 8 = 32; 1 proc for 4 s -> 28 left at 4 procs -> 7 s more
    _, _, t = run([spec(1, 0, 4, 8)], script)
    assert t.loc[1, "end"] == 11


def test_time_limit_kill_and_requeue():
    def script(snap):
        out = []
        for job in snap.queue:
            if job.restarts == 0:
                out.append(Start(job, "machine", time_limit=2.0, on_limit="requeue"))
            else:
                out.append(Start(job, "machine"))
        return out

    _, _, t = run([spec(1, 0, 4, 5)], script)
    # trial 0..2 fails, restarts from scratch at 2, ends at 7
    assert t.loc[1, "restarts"] == 1 and t.loc[1, "end"] == 7
    assert t.loc[1, "start"] == 0
    assert t.loc[1, "wait"] == 7 - 5


def test_kill_overrun_option():
    _, _, t = run([spec(1, 0, 4, 100, req=10)], greedy, kill_overrun=True, overrun_grace=5)
    assert t.loc[1, "status"] == "killed" and t.loc[1, "end"] == 15


def test_overrunning_job_predicted_to_end_now():
    seen = {}

    def script(snap):
        if snap.now == 12:
            seen["pred"] = next(iter(snap.hosts[0].running)).predicted_end(snap.now)
        return [*greedy(snap), WakeAt(12.0)] if snap.now == 0 else greedy(snap)

    run([spec(1, 0, 4, 20, req=10)], script)
    assert seen["pred"] == 12


def test_timers_come_back_with_host_and_tag():
    got = []

    def script(snap):
        got.extend((snap.now, t.host, t.tag) for t in snap.timers)
        if snap.now == 0:
            return [*greedy(snap), WakeAt(5.0, "machine", "repartition")]
        return []

    run([spec(1, 0, 1, 10)], script)
    assert got == [(5.0, "machine", "repartition")]


def test_scheduling_interval_batches_passes():
    _, policy, t = run([spec(1, 1, 4, 2), spec(2, 7, 4, 2)], greedy, interval=5.0)
    assert t.loc[1, "start"] == 5 and t.loc[2, "start"] == 10
    assert set(policy.passes) <= {0.0, 5.0, 10.0, 15.0}


def test_never_fitting_jobs_are_rejected_not_dropped():
    _, _, t = run([spec(1, 0, 8, 1), spec(2, 0, 2, 1), spec(3, 0, 0, 1)], greedy)
    assert t.loc[1, "status"] == "rejected" and "largest host has 4" in t.loc[1, "reason"]
    assert t.loc[3, "status"] == "rejected"
    assert t.loc[2, "status"] == "completed"
    assert math.isnan(t.loc[1, "start"])


def test_policy_reject_and_admit():
    class NoSerial(Script):
        def admit(self, job):
            return "serial jobs go elsewhere" if job.procs == 1 else None

    def script(snap):
        return [Reject(j, "too big for this test") for j in snap.queue if j.procs == 4]

    sim = Simulation(single_host(4), [spec(1, 0, 1, 1), spec(2, 0, 4, 1)], NoSerial(script))
    sim.run()
    t = jobs_table(list(sim.jobs.values())).set_index("job_id")
    assert t.loc[1, "reason"] == "serial jobs go elsewhere"
    assert t.loc[2, "reason"] == "too big for this test"


def test_illegal_decisions_raise_policy_errors():
    with pytest.raises(PolicyError, match="needs 4 procs"):
        run([spec(1, 0, 4, 1), spec(2, 0, 4, 1)], lambda s: [Start(j, "machine") for j in s.queue])
    with pytest.raises(PolicyError, match="cannot resume"):
        run([spec(1, 0, 4, 1)], lambda s: [Resume(j) for j in s.queue])
    with pytest.raises(PolicyError, match="unknown host"):
        run([spec(1, 0, 4, 1)], lambda s: [Start(j, "nowhere") for j in s.queue])


def test_state_machine_rejects_illegal_transitions():
    job = Job(spec(1, 0, 1, 1))
    with pytest.raises(IllegalTransition):
        job.move(JobState.RUNNING, 0.0)
    job.move(JobState.QUEUED, 0.0)
    job.move(JobState.RUNNING, 0.0)
    job.move(JobState.COMPLETED, 1.0)
    with pytest.raises(IllegalTransition):
        job.move(JobState.QUEUED, 2.0)


def test_watch_stops_when_analysed_jobs_are_done():
    sim, _, t = run([spec(1, 0, 4, 5), spec(2, 100, 4, 5)], greedy, watch=[1])
    assert sim.stats.sim_end == 5
    assert t.loc[2, "status"] == "not_started"


def test_observers_see_every_job_end_once():
    class Count(Observer):
        def __init__(self):
            self.ends = []

        def on_end(self, job, now):
            self.ends.append(job.id)

    c = Count()
    run([spec(i, i, 1 + i % 4, 3) for i in range(20)], greedy, observers=[c])
    assert sorted(c.ends) == list(range(20))


def test_a_policy_that_never_starts_a_job_stalls_cleanly():
    sim, _, t = run([spec(1, 0, 1, 1), spec(2, 0, 2, 1)], lambda s: [])
    assert sim.stats.stalled == 2
    assert set(t["status"]) == {"not_started"}


def test_duplicate_job_ids_are_refused():
    with pytest.raises(ValueError, match="duplicate"):
        Simulation(single_host(2), [spec(1, 0, 1, 1), spec(1, 1, 1, 1)], Script(greedy))


def test_policy_errors_surface_unchanged():
    from o2ksim.errors import ConfigError

    def script(snap):
        raise ConfigError("policy.toml", "bad weight", field="priority.w")

    with pytest.raises(ConfigError, match="bad weight"):
        run([spec(1, 0, 1, 1)], script)


def test_snapshot_knows_the_interval():
    seen = []
    run([spec(1, 0, 1, 1)], lambda s: seen.append(s.interval) or greedy(s), interval=60.0)
    assert seen and set(seen) == {60.0}


def test_job_specs_and_jobs_pickle_and_copy_with_every_field():
    """Specs go to worker processes (multiprocessing, dask) and get deep-copied with a
    workload: every field survives, on the pure and the compiled build alike (the
    compiled frozen class once refused to be restored)."""
    import copy
    import pickle

    spec = JobSpec(7, 12.5, 4, 2048, 600.0, 321.0, used_mem=1024, user=3, queue=2,
                   requested_time=900.0)  # fmt: skip
    for twin in (pickle.loads(pickle.dumps(spec)), copy.copy(spec), copy.deepcopy([spec])[0]):
        assert twin == spec
        assert [getattr(twin, f.name) for f in dataclasses.fields(JobSpec)] == [
            7, 12.5, 4, 2048, 600.0, 321.0, 1024, 3, 2, 900.0
        ]  # fmt: skip
    job = Job(spec)
    job.first_start = 20.0
    back = pickle.loads(pickle.dumps(job))
    assert (back.spec, back.id, back.first_start, back.remaining_work) == (spec, 7, 20.0, 4 * 321.0)
