"""Engine rules for jobs that run on other than their requested processors (issue 10).

* a job never holds more processors than it requested (Start, Resume, Resize
  refuse it, and the invariant checker notices it in a result);
* ``Resume`` without ``procs`` gives back the allocation the job had when it
  was preempted;
* the wait of a job that ever ran on fewer processors than requested is
  response - actual runtime (T§3.5), and its predicted end follows the
  allocation it really has.

Every expected value is computed by hand in the test.
"""

from __future__ import annotations

import pandas as pd
import pytest

from o2ksim.engine.core import Simulation
from o2ksim.engine.decisions import PolicyError, Preempt, Resize, Resume, Start, WakeAt
from o2ksim.engine.monitor import jobs_table
from o2ksim.invariants import violations
from o2ksim.jobs import JobSpec
from o2ksim.machine import single_host
from o2ksim.policies.base import Policy


def spec(job_id, submit, procs, run, req=None):
    return JobSpec(job_id, float(submit), procs, 0, float(req if req is not None else run), float(run))


class Script(Policy):
    kind = "script-alloc"

    def __init__(self, script):
        super().__init__()
        self.script = script

    def schedule(self, snap):
        return self.script(snap)


def run(specs, script, procs=8):
    sim = Simulation(single_host(procs), specs, Script(script))
    sim.run()
    return sim, jobs_table(list(sim.jobs.values())).set_index("job_id")


def first_queued(snap):
    return next(iter(snap.queue))


def test_start_on_more_processors_than_requested_is_refused():
    # a 2-processor job on 8 processors would finish 4x early
    with pytest.raises(PolicyError, match="requested only 2"):
        run([spec(1, 0, 2, 10)], lambda s: [Start(j, "machine", procs=8) for j in s.queue])


def test_resize_beyond_the_request_is_refused():
    def script(snap):
        if snap.now == 0:
            return [Start(first_queued(snap), "machine", procs=1), WakeAt(1.0)]
        return [Resize(j, 3) for j in snap.hosts[0].running]

    with pytest.raises(PolicyError, match="resize on 3 processors, but it requested only 2"):
        run([spec(1, 0, 2, 10)], script)


def test_resume_beyond_the_request_is_refused():
    def script(snap):
        if snap.now == 0:
            return [Start(first_queued(snap), "machine"), WakeAt(1.0), WakeAt(2.0)]
        if snap.now == 1:
            return [Preempt(j) for j in snap.hosts[0].running]
        return [Resume(j, 4) for j in snap.hosts[0].preempted]

    with pytest.raises(PolicyError, match="resume on 4 processors"):
        run([spec(1, 0, 2, 10)], script)


def test_resume_without_procs_restores_the_previous_allocation():
    # 4-proc job (T = 10 s, work 40) started on 2 procs at 0, preempted at 2 (4 done),
    # resumed at 5 with no procs given: back on 2 procs, 36 left at rate 2 -> ends at 23.
    def script(snap):
        if snap.now == 0:
            return [Start(first_queued(snap), "machine", procs=2), WakeAt(2.0), WakeAt(5.0)]
        if snap.now == 2:
            return [Preempt(j) for j in snap.hosts[0].running]
        if snap.now == 5:
            return [Resume(j) for j in snap.hosts[0].preempted]
        return []

    sim, t = run([spec(1, 0, 4, 10)], script)
    seg = sim.monitor.segments().sort_values("start")
    assert list(seg["procs"]) == [2, 0, 2]
    assert t.loc[1, "end"] == 23
    assert t.loc[1, "wait"] == 23 - 10


def test_wait_of_a_job_started_on_fewer_processors_is_response_minus_runtime():
    # 4-proc job, T = 10, started at once on 2 procs: ends at 20; its wait is 20 - 10 = 10,
    # not start - submit = 0 (T§3.5: runtime is on the requested processors)
    _, t = run([spec(1, 0, 4, 10)], lambda s: [Start(j, "machine", procs=2) for j in s.queue])
    assert t.loc[1, "end"] == 20
    assert t.loc[1, "wait"] == 10
    assert t.loc[1, "resizes"] == 0 and t.loc[1, "preemptions"] == 0


def test_predicted_end_follows_a_reduced_initial_allocation():
    # R = 10 on 4 procs owes 40 proc-s; on 2 procs that is 20 s from the start.
    seen = {}

    def script(snap):
        if snap.now == 0:
            return [Start(first_queued(snap), "machine", procs=2), WakeAt(5.0)]
        seen[snap.now] = next(iter(snap.hosts[0].running)).predicted_end(snap.now)
        return []

    run([spec(1, 0, 4, 30, req=10)], script)
    assert seen[5.0] == 20.0  # 10 proc-s done by t=5, 30 owed at rate 2 -> 5 + 15


def test_predicted_end_respects_a_time_limit():
    # a trial run with a 3 s limit releases its processors by t = 3, whatever it requested
    seen = {}

    def script(snap):
        if snap.now == 0:
            return [Start(first_queued(snap), "machine", time_limit=3.0, on_limit="requeue"), WakeAt(1.0)]
        if snap.now == 1:
            seen["pred"] = next(iter(snap.hosts[0].running)).predicted_end(1.0)
            return []
        return [Start(j, "machine") for j in snap.queue]

    run([spec(1, 0, 4, 10, req=100)], script)
    assert seen["pred"] == 3.0


def test_invariant_checker_catches_a_job_holding_more_than_it_requested():
    jobs = pd.DataFrame(
        {"job_id": [1], "submit": [0.0], "start": [0.0], "end": [2.5], "status": ["completed"],
         "restarts": [0], "run_time": [10.0], "procs": [2]}
    )  # fmt: skip
    seg = pd.DataFrame(
        {"job_id": [1], "host": ["machine"], "start": [0.0], "end": [2.5], "procs": [8], "mem": [0.0]}
    )
    found = violations(jobs, seg, single_host(8), [1])
    assert any("holds 8 processors, requested 2" in p for p in found)
