"""``Start.resumes``: the engine resumes a run's preempted jobs the moment the run ends.

Scripted policies on a 4-processor host (as in ``test_engine.py``); every
expected time is worked out by hand in the comments.  The policy never returns
``Resume``: the resumption has to come from the engine, at the end of the run
that preempted, whether that run finishes, is requeued at its time limit or is
killed.
"""

from __future__ import annotations

import pytest

from o2ksim.engine.core import Simulation
from o2ksim.engine.decisions import Kill, PolicyError, Preempt, Resume, Start, WakeAt
from o2ksim.engine.monitor import Observer, jobs_table
from o2ksim.jobs import JobSpec, JobState
from o2ksim.machine import single_host
from o2ksim.policies.base import Policy


def spec(job_id, submit, procs, run, req=None):
    return JobSpec(
        job_id, float(submit), procs, 0, float(req if req is not None else run), float(run)
    )


class Script(Policy):
    """Returns the decisions ``script(snap)`` builds and keeps every snapshot's view of job 1."""

    kind = "script"

    def __init__(self, script):
        super().__init__()
        self.script = script
        self.seen: dict[float, tuple[str, int]] = {}

    def schedule(self, snap):
        host = snap.hosts[0]
        for job in host.running:
            if job.id == 1:
                self.seen[snap.now] = ("running", host.free_procs)
        for job in host.preempted:
            if job.id == 1:
                self.seen[snap.now] = ("preempted", host.free_procs)
        return self.script(snap)


class Decisions(Observer):
    def __init__(self) -> None:
        self.resumes: list[tuple[float, int, str]] = []

    def on_decision(self, now, decision) -> None:
        if isinstance(decision, Resume):
            self.resumes.append((now, decision.job.id, decision.note))


def trial_script(limit: float, kill_at: float | None = None):
    """J1 starts at 0; at 4 it is preempted for J2's run (limit ``limit``, requeue on it);
    queued jobs start in order when the host has room; the policy never resumes J1."""

    def script(snap):
        queue = list(snap.queue)
        if snap.now == 0:
            return [
                Start(queue[0], "machine"),
                WakeAt(4.0),
                *([WakeAt(kill_at)] if kill_at else []),
            ]
        if snap.now == 4:
            j1 = next(iter(snap.hosts[0].running))
            j2 = next(j for j in queue if j.id == 2)
            return [
                Preempt(j1),
                Start(j2, "machine", time_limit=limit, on_limit="requeue", resumes=(j1,)),
            ]
        if kill_at is not None and snap.now == kill_at:
            return [Kill(j, "killed by the test") for j in snap.hosts[0].running if j.id == 2]
        free = snap.hosts[0].free_procs
        out = []
        for job in queue:
            if job.procs <= free:
                free -= job.procs
                out.append(Start(job, "machine"))
        return out

    return script


def run(script, specs):
    policy = Script(script)
    log = Decisions()
    sim = Simulation(single_host(4), specs, policy, observers=[log])
    sim.run()
    return sim, policy, log, jobs_table(list(sim.jobs.values())).set_index("job_id")


JOBS = [spec(1, 0, 4, 10), spec(2, 1, 4, 5)]


def test_a_requeued_trial_gives_its_victim_back_at_once():
    # J2's trial 4-6 (limit 2 < 5 s): requeued at 6.  J1 (6 s of work left) is back on its
    # 4 processors at 6, before the pass at 6, and ends at 12; J2 then runs 12-17.
    sim, policy, log, t = run(trial_script(2.0), JOBS)
    assert policy.seen[6.0] == ("running", 0)  # the pass at 6 sees J1 running, nothing idle
    assert t.loc[1, "end"] == 12 and t.loc[1, "preemptions"] == 1
    assert t.loc[2, "restarts"] == 1 and (t.loc[2, "start"], t.loc[2, "end"]) == (4, 17)
    seg = sim.monitor.segments()
    j1 = seg[seg.job_id == 1].sort_values("start")
    assert list(j1["procs"]) == [4, 0, 4] and list(j1["start"]) == [0, 4, 6]
    assert log.resumes == [
        (6.0, 1, "the trial that preempted it has ended (J2); back on its 4 processors")
    ]


def test_a_finished_trial_gives_its_victim_back_at_once():
    # J2 needs 1 s: 4-5 within its limit of 2.  J1 resumes at 5, ends at 5 + 6 = 11.
    _, policy, log, t = run(trial_script(2.0), [spec(1, 0, 4, 10), spec(2, 1, 4, 1)])
    assert policy.seen[5.0] == ("running", 0)
    assert t.loc[2, "end"] == 5 and t.loc[2, "restarts"] == 0
    assert t.loc[1, "end"] == 11
    assert [(now, job) for now, job, _ in log.resumes] == [(5.0, 1)]


def test_a_killed_run_gives_its_victim_back():
    # J2 (limit 60) is killed by the policy at 5: J1 resumes at 5 and ends at 11.
    sim, _, _, t = run(trial_script(60.0, kill_at=5.0), JOBS)
    assert t.loc[2, "status"] == "killed" and t.loc[2, "end"] == 5
    assert t.loc[1, "end"] == 11
    assert sim.jobs[1].state is JobState.COMPLETED


def test_resumes_must_name_jobs_preempted_on_that_host():
    def script(snap):
        queue = list(snap.queue)
        if snap.now == 0:
            return [Start(queue[0], "machine", procs=2), WakeAt(4.0)]
        if snap.now == 4:
            j1 = next(iter(snap.hosts[0].running))  # running, not preempted
            return [Start(next(j for j in queue if j.id == 2), "machine", procs=2, resumes=(j1,))]
        return []

    with pytest.raises(PolicyError, match="not preempted"):
        run(script, [spec(1, 0, 4, 10), spec(2, 1, 2, 5)])
