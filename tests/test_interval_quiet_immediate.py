"""Quiet ``--interval`` stretches under immediate service (T§3.2.2, T§5.5).

A backfill pass with immediate service decides nothing when the backfill pass
starts nothing and every job awaiting a trial is refused one.  Until the first
predicted release (the backfill argument) a refused trial stays refused:
``soon`` needs free processors, which only an event frees; ``preemptive``
needs enough processors from the eligible running jobs of one host, and that
set grows only when a running job has run ``t`` (``victims_may_grow_at``).
Expected values: hand computations here; the same run ticking through every
interval (``Scheduler.skip_ticks`` off), which does not use the guarantee, in
``test_interval_quiet.py`` (``IMMEDIATE``).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from conftest import job, one_host
from test_interval_quiet import placed, run, schedules

from o2ksim.policies.backfill import Backfill
from o2ksim.policies.immediate.service import victims_may_grow_at


class Recording(Backfill):
    """Backfill with immediate service that notes, at every pass, when the eligible
    running jobs may next grow (read before the pass decides).  A subclass that
    overrides ``schedule`` gets no quiet guarantee, so it passes at every tick."""

    def __init__(self, **params):
        super().__init__(**params)
        self.grows: list[tuple[float, float]] = []

    def schedule(self, snap):
        protected = set(self.immediate.book.running)
        t = self.immediate.settings.eligible_after
        self.grows.append((snap.now, victims_may_grow_at(snap, t, protected)))
        return super().schedule(snap)


def test_victims_may_grow_when_a_running_job_has_run_t():
    # t = 100.  A (2 procs, requests 10^4) starts at 0, C (2 procs, requests 150) at 0 too;
    # B (4 procs) arrives at 5 and can have no trial (no victim has run 100 s).  By hand:
    # at 1 and 5, A becomes eligible at 100 (it needs 10^4 - 100 > 100 more then), C never
    # (at 100 it needs 50 <= 100): the bound is 100, taken a few ulps early.  At 0 nothing
    # runs yet (inf).
    policy = Recording(immediate_service="preemptive", quantum=10, eligible_after=100)
    jobs = [job(1, 0, 2, 10**4, 30), job(2, 0, 2, 150, 30), job(3, 5, 4, 50, 5)]
    run(one_host(4), jobs, policy, 1.0)
    early = 100 - 4 * math.ulp(100.0)
    grows = dict(policy.grows)  # a pass at every tick (the subclass has no guarantee)
    assert (grows[0.0], grows[1.0], grows[5.0]) == (math.inf, early, early)
    assert grows[30.0] == math.inf  # A and C have left; B runs its trial (protected)


def test_a_refused_preemptive_trial_waits_for_its_victim_to_become_eligible():
    # 4 processors, a pass every second, quantum 10, t = 100.  A (4 procs, requests and
    # runs 10^4) starts at 0; B (2 procs, 5 s) arrives at 5: nothing free, and A has not
    # run 100 s, so no trial; the pass asks for one at 100 (a WakeAt: not quiet).  By
    # hand: passes at 0, 1 (quiet: skip to B's arrival), 5, 6 (quiet: the release is at
    # 10^4, A eligible at 100: skip to 100), 100 (B's trial preempts A), 101 (nothing
    # waits: skip to the next event), 105 (B has completed; the engine resumes A,
    # predicted from the work it owes: 105 + (4 * 10^4 - 4 * 100) / 4 = 10005, a fixed
    # time) and no other: A ends at 10005, which ends the run.
    policy = Backfill(immediate_service="preemptive", quantum=10, eligible_after=100)
    sim, at = run(one_host(4), [job(1, 0, 4, 10**4), job(2, 5, 2, 1000, 5)], policy, 1.0)
    assert at == [0.0, 1.0, 5.0, 6.0, 100.0, 101.0, 105.0]
    assert placed(sim) == [(1, "m", 0.0, 10005.0), (2, "m", 100.0, 105.0)]


def test_a_refused_soon_trial_stays_refused_until_processors_are_free():
    # the same jobs, immediate service ``soon`` (a trial only on free processors): B's
    # trial is refused at 5, and that pass is quiet.  By hand: passes at 0, 1, 5 and then
    # A's release at 10^4, where B starts as a full job, and 10001 (quiet: B's predicted
    # end is 11000; B ends at 10005, which ends the run).
    policy = Backfill(immediate_service="soon", quantum=10)
    sim, at = run(one_host(4), [job(1, 0, 4, 10**4), job(2, 5, 2, 1000, 5)], policy, 1.0)
    assert at == [0.0, 1.0, 5.0, 10**4, 10**4 + 1]
    assert placed(sim) == [(1, "m", 0.0, 10**4), (2, "m", 10**4, 10**4 + 5)]




@pytest.mark.parametrize("mode", ["preemptive", "soon"])
def test_quiet_passes_are_skipped_on_a_busy_queue(mode):
    # many short jobs behind one long one: ticking through makes a pass at every tick,
    # the skip far fewer, with the same schedule (``t`` = 5000: the long job is never
    # preempted; while a victim is preempted no pass is skipped).
    jobs = [job(1, 0, 6, 3000), *(job(i, 10 * i, 1 + i % 4, 40 + 7 * i, 30 + 5 * i)
                                   for i in range(2, 40))]  # fmt: skip
    params = {"immediate_service": mode, "quantum": 10, "eligible_after": 5000}
    skipping, s1 = schedules(jobs, "backfill", params, 1.0, skip=True, machine=one_host(8))
    ticking, s2 = schedules(jobs, "backfill", params, 1.0, skip=False, machine=one_host(8))
    pd.testing.assert_frame_equal(skipping, ticking)
    assert s1.passes < s2.passes / 2


def test_a_resized_jobs_prediction_is_one_float_through_its_segment():
    # P = 3, R = 3600.7 s (work owed 10802.1), resized to 5 processors at 777.7 with
    # 5401.15 processor-seconds still owed: by hand it ends at 777.7 + 5401.15 / 5 =
    # 1857.93.  From *now* it was now + (work owed now) / 5, a float that moved with now
    # (two values over these 100 passes); from the segment's start it is one float.
    from o2ksim.jobs import Job, JobSpec, JobState

    j = Job(JobSpec(1, 0.0, 3, 0, 3600.7, 3600.7))
    j.state, j.host, j.alloc_procs = JobState.RUNNING, "h", 5
    j.first_start = 0.0
    j.last_start = j.segment_start = 777.7
    j.remaining_work, j.resizes = 3 * 3600.7 / 2 + 0.1, 1
    nows = [777.7 + k * 0.1 for k in range(100)]
    assert {j.predicted_end(now) for now in nows} == {777.7 + 5401.15 / 5}
    assert abs(777.7 + 5401.15 / 5 - 1857.93) < 1e-9
    moving = {now + (3 * 3600.7 - j.work_done(now)) / 5 for now in nows}  # the old form
    assert len(moving) == 2
