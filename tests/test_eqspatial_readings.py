"""EQspatial's open readings (docs/background/fidelity/eqspatial.md): hand-computed tiny schedules.

Linear slowdown: a job of T seconds on P processors has work T*P and progresses
at rate p on p processors.  Trial runs follow T§3.2.2: the victim chosen has
run uninterrupted for longer than t and has more than t left; it vacates all
its processors and resumes on the same number when the trial ends.
"""

from __future__ import annotations

import math

import pytest

from o2ksim import simulate
from o2ksim.jobs import JobSpec
from o2ksim.machine import HostSpec, MachineSpec

ONE = MachineSpec("one", (HostSpec("h", 8, math.inf),))
TWO = MachineSpec("two", (HostSpec("a", 8, math.inf), HostSpec("b", 8, math.inf)))


def job(i: int, submit: float, procs: int, run: float) -> JobSpec:
    return JobSpec(i, float(submit), procs, 0, float(run), float(run))


def run(jobs, machine, **params):
    return simulate(jobs, machine=machine, policy="eqspatial", policy_params=params)


def segments(result, job_id: int) -> list[tuple[float, float, int]]:
    s = result.segments[result.segments.job_id == job_id]
    return [(float(a), float(b), int(p)) for a, b, p in zip(s.start, s.end, s.procs, strict=True)]


# J1 and J2 (8 processors, 1000 s) share the host 4/4 from 10 s: the host's first
# repartitioning, so with MinInterval 60 the next one may come at 70.  J3 (2 processors)
# arrives at 40: no free processor, and the host may not repartition.
TIMED = dict(min_interval=60, quantum=10, eligible_after=20)


def test_new_job_trial_that_finishes():
    # new_job_service = immediate: J3 (5 s) gets a trial at 40.  Both running jobs are
    # eligible (run uninterrupted 40 s and 30 s > t = 20; far more than 20 s left); their
    # current slowdowns are 40/40 = 30/30 = 1, the tie goes to J1 (lower id), whose 4
    # processors cover J3's 2.  J3 runs 40-45 and finishes; J1 resumes on 4 at 45.  At 70 the
    # timer finds 4/4 already: no resize.  J1: 80 (0-10 on 8) + 120 (10-40 on 4) = 200 done,
    # 7800 left on 4 from 45 -> 1995.  J2 by then: 4 * 1985 = 7940, 60 left on 8 -> 2002.5.
    jobs = [job(1, 0, 8, 1000), job(2, 10, 8, 1000), job(3, 40, 2, 5)]
    r = run(jobs, ONE, new_job_service="immediate", **TIMED)
    end = r.jobs.set_index("job_id").end.to_dict()
    assert end == pytest.approx({1: 1995.0, 2: 2002.5, 3: 45.0})
    assert segments(r, 3) == [(40.0, 45.0, 2)]
    assert segments(r, 1) == [(0.0, 10.0, 8), (10.0, 40.0, 4), (40.0, 45.0, 0), (45.0, 1995.0, 4)]  # preempted 40-45
    assert r.jobs.set_index("job_id").wait[3] == pytest.approx(0.0)
    assert r.summary["new_job_trials"] == 1 and r.summary["placed_on_arrival"] == 3
    assert segments(run(jobs, ONE, **TIMED), 3) == [(40.0, 45.0, 2)]  # immediate is the default
    # wait (the default before issue 23): J3 waits for the repartitioning at 70 (3/3/2), ends at 75
    d = run(jobs, ONE, new_job_service="wait", **TIMED)
    assert segments(d, 3) == [(70.0, 75.0, 2)]
    assert "new_job_trials" not in d.summary


def test_new_job_trial_that_does_not_finish_keeps_its_host():
    # J3 now needs 30 s: its trial 40-50 is killed (J1 resumes on 4 at 50); J3 stays placed
    # on h and, with no free processor, starts afresh at the repartitioning at 70:
    # equipartition(8, [8, 8, 2]) = 3, 3, 2 -> J3 ends at 100.  Its 2 processors stay idle
    # until 130 (MinInterval), then 4/4.  J1: 200 + 80 (50-70) + 180 (70-130) = 460, 7540 left
    # on 4 -> 2015; J2: 240 + 180 = 420 by 130, 4 * 1885 more by 2015, 40 left on 8 -> 2020.
    jobs = [job(1, 0, 8, 1000), job(2, 10, 8, 1000), job(3, 40, 2, 30)]
    r = run(jobs, ONE, new_job_service="immediate", **TIMED)
    end = r.jobs.set_index("job_id").end.to_dict()
    assert end == pytest.approx({1: 2015.0, 2: 2020.0, 3: 100.0})
    assert segments(r, 3) == [(40.0, 50.0, 2), (70.0, 100.0, 2)]
    assert r.jobs.set_index("job_id").host[3] == "h"
    assert r.summary["new_job_trials"] == 1 and r.summary["placed_on_arrival"] == 3


def test_new_job_service_leaves_min_interval_0_alone():
    # with MinInterval 0 the host repartitions at every arrival: no trial is ever needed
    jobs = [job(1, 0, 8, 1000), job(2, 10, 8, 1000), job(3, 40, 2, 5)]
    r = run(jobs, ONE, min_interval=0, new_job_service="immediate", quantum=10, eligible_after=20)
    assert r.summary["new_job_trials"] == 0
    assert segments(r, 3) == [(40.0, 45.0, 2)]  # equipartition(8, [8, 8, 2]) gives J3 its 2


def test_long_job_placement_deduct():
    # Two hosts of 8, MinInterval 0, long-job threshold 100 s.  Placement (ratio P / (requested
    # + new), ties to the first host): J1 (8) at 0 -> a (8/8 = 8/8).  J2 (8) at 60: a 8/16,
    # b 8/8 -> b.  J3 (4) at 61: a 8/12 = b 8/12 -> a.  J5 (8) at 62: a 8/20 = 0.4, b 8/16 = 0.5
    # -> b.  At 100 J1 has run 100 s: long-running on a (J3 keeps one processor).
    # J4 (2) at 150, J1 the only long job:
    #   share:  a 8/(12+2) = 0.571 > b 8/(16+2) = 0.444 -> a;
    #   deduct: a (8-8)/(4+2) = 0 < b 0.444 -> b.
    jobs = [job(1, 0, 8, 1000), job(2, 60, 8, 1000), job(3, 61, 4, 1000), job(5, 62, 8, 1000),
            job(4, 150, 2, 10)]  # fmt: skip
    common = dict(min_interval=0, long_job_threshold=100)
    share = run(jobs, TWO, **common).jobs.set_index("job_id").host.to_dict()
    deduct = run(jobs, TWO, long_job_placement="deduct", **common).jobs.set_index("job_id").host.to_dict()
    assert share == {1: "a", 2: "b", 3: "a", 5: "b", 4: "a"}
    assert deduct == {1: "a", 2: "b", 3: "a", 5: "b", 4: "b"}


def test_bad_reading_names_are_refused():
    with pytest.raises(Exception, match="new_job_service"):
        run([job(1, 0, 1, 1)], ONE, new_job_service="soon")


def test_long_job_grant_whole_is_a_condition():
    # One host of 8, MinInterval 0, threshold 100 s.  J1 (8 procs, 300 s) at 0, J2 (8, 100 s)
    # at 50: 4/4 from 50.  At 100 J1 has run 100 s.  partial (test_eqspatial): J1 gets
    # min(8, 8 - 1) = 7, J2 1 -> J1 ends at 100 + 1800/7.  whole: 8 processors would leave
    # J2 none, so J1 keeps its equal share 4/4 (as does J2 from 150): the plain schedule,
    # J2 ends at 50 + 800/4 = 250, J1 then has 400 + 800 = 1200 left on 8 -> 400.
    jobs = [job(1, 0, 8, 300), job(2, 50, 8, 100)]
    whole = run(jobs, ONE, min_interval=0, long_job_threshold=100, long_job_grant="whole")
    assert whole.jobs.set_index("job_id").end.to_dict() == pytest.approx({1: 400.0, 2: 250.0})
    partial = run(jobs, ONE, min_interval=0, long_job_threshold=100)
    assert partial.jobs.set_index("job_id").end[1] == pytest.approx(100 + 1800 / 7)
    # a 6-processor J1 leaves J2 two processors: whole and partial agree (6 / 2 from 100)
    jobs = [job(1, 0, 6, 300), job(2, 50, 8, 100)]
    for grant in ("partial", "whole"):
        r = run(jobs, ONE, min_interval=0, long_job_threshold=100, long_job_grant=grant)
        s = r.segments[(r.segments.start <= 120) & (r.segments.end > 120)]
        assert dict(zip(s.job_id, s.procs, strict=True)) == {1: 6, 2: 2}


def test_long_job_clock_work_counts_work_on_the_request():
    # One host of 8, MinInterval 0, threshold 100 s.  J1 (8 procs, 300 s) at 0, J2 (8, 100 s)
    # at 50: 4/4 from 50.  wall: J1 is long at 100 (7/1).  work: J1 needs 100 s on its 8
    # processors = 800: 400 by 50, then 4 a second -> long at 150, when it gets 7 and J2 1.
    # J1 then has 1600 left on 7 -> ends 150 + 1600/7; J2 has 400 + 1600/7 done, the rest of
    # its 800 on 8 -> 400.
    jobs = [job(1, 0, 8, 300), job(2, 50, 8, 100)]
    r = run(jobs, ONE, min_interval=0, long_job_threshold=100, long_job_clock="work")
    assert r.jobs.set_index("job_id").end.to_dict() == pytest.approx({1: 150 + 1600 / 7, 2: 400.0})
    at = {t: r.segments[(r.segments.start <= t) & (r.segments.end > t)] for t in (120, 160)}
    assert dict(zip(at[120].job_id, at[120].procs, strict=True)) == {1: 4, 2: 4}
    assert dict(zip(at[160].job_id, at[160].procs, strict=True)) == {1: 7, 2: 1}
