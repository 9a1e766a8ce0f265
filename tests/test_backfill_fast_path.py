"""The backfill pass gives exactly the reference pass's schedule (hypothesis).

``tests/oracles/backfill_reference.py`` is the pass of T§3.2.1 job by job;
o2ksim's pass places reservations lazily and scans the rest of the queue with numpy.  On
random multi-host workloads with memory — deep queues, estimates shorter and
longer than the runtimes, every reservation option — both must start every
job at the same time on the same host.  The indexed scan is forced on even for
short queues, and array-built profiles for hosts with few running jobs
(``INDEXED_SCAN_MIN = ARRAY_PROFILE_MIN = 0``), so that small examples exercise them.

Also: the profile built from the engine's sorted release arrays against the profile
built from the running jobs, operation by operation
(windows ending exactly on a step boundary included), and by hand how the profile treats
a running job with a time
limit and a preempted job that keeps its memory.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import THREE_HOSTS, backfill_options, bursty_jobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.backfill_reference import ReferenceBackfill

from o2ksim import simulate
from o2ksim.engine.snapshot import HostView
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import HostSpec
from o2ksim.policies import backfill_scan, profile
from o2ksim.policies.profile import Profile
from o2ksim.policies.profile_memo import NO_TIES
from o2ksim.policies.shadow import Releases, Shadow

MACHINE = THREE_HOSTS


@st.composite
def deep_workloads(draw):
    """Bursty arrivals of jobs longer than the gaps between them, so queues grow deep."""
    return bursty_jobs(draw, st, 90, [0, 512, 1024, 3072, 6000])


@st.composite
def options(draw):
    return backfill_options(
        priority=draw(st.sampled_from(["fcfs", "sjf", "lxf", {"w": 1, "x": 5, "p": 0.2}])),
        reservations=draw(st.sampled_from([0, 1, 1, 2, 3, "all"])),
        reservation_kind=draw(st.sampled_from(["dynamic", "fixed"])),
        sliding=draw(st.booleans()),
    )


def schedule(jobs, opts, fast, **run):
    """o2ksim's backfill (``fast``) or the oracle, on ``MACHINE``."""
    if fast:
        r = simulate(jobs, machine=MACHINE, policy="backfill", policy_params=opts, **run)
    else:
        r = simulate(jobs, machine=MACHINE, policy=ReferenceBackfill(**opts), **run)
    return r.jobs[["job_id", "start", "end", "host", "status"]]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(jobs=deep_workloads(), opts=options(), interval=st.sampled_from([None, None, 40.0]))
def test_fast_path_equals_reference_pass(jobs, opts, interval, monkeypatch_scan):
    reference = schedule(jobs, opts, fast=False, interval=interval)
    fast = schedule(jobs, opts, fast=True, interval=interval)
    pd.testing.assert_frame_equal(reference, fast)


@pytest.fixture
def monkeypatch_scan():
    """Use the indexed scan and array profiles at every size (restored afterwards; the same for
    every generated example, so sharing it across them is intended)."""
    saved = backfill_scan.INDEXED_SCAN_MIN, profile.ARRAY_PROFILE_MIN
    backfill_scan.INDEXED_SCAN_MIN = profile.ARRAY_PROFILE_MIN = 0
    yield
    backfill_scan.INDEXED_SCAN_MIN, profile.ARRAY_PROFILE_MIN = saved


def test_fast_path_equals_reference_on_a_deep_queue_at_the_default_threshold():
    # 300 one-processor jobs arrive at once behind a wide job: the queue is far deeper
    # than the threshold, so the default fast path takes the indexed scan
    jobs = [JobSpec(1, 0.0, 16, 0, 100.0, 100.0), JobSpec(2, 1.0, 16, 0, 50.0, 50.0)]
    jobs += [
        JobSpec(i, 2.0 + i % 7, 1 + i % 3, (i % 4) * 1024 * 1024, 30.0 + i % 90, 10.0 + i % 60)
        for i in range(3, 303)
    ]
    assert len(jobs) - 2 > backfill_scan.INDEXED_SCAN_MIN
    opts = {"priority": "fcfs", "reservations": 1}
    pd.testing.assert_frame_equal(schedule(jobs, opts, fast=False), schedule(jobs, opts, fast=True))


def _running(job_id, procs, mem, start, req, limit=math.inf):
    job = Job(JobSpec(job_id, 0.0, procs, mem, req, 10 * req))
    job.state = JobState.RUNNING
    job.host, job.alloc_procs, job.alloc_mem = "h", procs, mem
    job.first_start = job.last_start = job.segment_start = start
    job.time_limit = limit
    return job


def test_profile_releases_time_limited_jobs_at_their_limit_and_keeps_preempted_memory():
    # host: 10 procs, 100 KB.  At now = 50:
    #  * A: 4 procs / 20 KB since t=0, requested 100 s -> predicted end 100;
    #  * B: 3 procs / 30 KB since t=40, requested 1000 s but started with a 20 s time
    #    limit (a trial run, T§3.2.2) -> the engine stops it at 60, so it frees at 60;
    #  * C: preempted, holds 25 KB and no processors -> its memory never comes back.
    # free now: 10 - 4 - 3 = 3 procs, 100 - 20 - 30 - 25 = 25 KB.
    a = _running(1, 4, 20, start=0.0, req=100.0)
    b = _running(2, 3, 30, start=40.0, req=1000.0, limit=60.0)
    c = Job(JobSpec(3, 0.0, 2, 25, 100.0, 100.0))
    c.state, c.host, c.alloc_mem = JobState.PREEMPTED, "h", 25
    view = HostView(HostSpec("h", 10, 100), 3, 25, [a, b], [c])
    prof = profile.build_profile(view, 50.0)
    assert prof.times == [50.0, 60.0, 100.0]
    assert prof.procs == [3, 6, 10]
    assert prof.mem == [25, 55, 75]  # C's 25 KB stay held
    assert not prof.fits(50.0, 2, 30, 5.0)  # memory: 25 KB free until B stops at 60
    assert prof.fits(60.0, 6, 55, 1e9)
    assert prof.earliest(10, 75, 10.0) == 100.0
    assert prof.earliest(10, 76, 10.0) == math.inf  # would need C's memory


class _Releases:
    """Stands in for the engine's ReleaseIndex: sorted (time, procs, mem) arrays."""

    def __init__(self, releases):
        rel = sorted(releases)
        self.irregular = {}
        self._arrays = tuple(np.array([r[k] for r in rel], dtype=float) for k in range(3))

    def arrays(self):
        return self._arrays


@st.composite
def profile_cases(draw):
    """Small integer times so that equal times and exact fits are common."""
    now = draw(st.integers(0, 5))
    releases = draw(
        st.lists(
            st.tuples(st.integers(0, 30), st.integers(1, 4), st.sampled_from([0, 1, 2])),
            max_size=12,
        )
    )
    free_p = draw(st.integers(0, 4))
    free_m = draw(st.integers(0, 4))
    ops = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["earliest", "fits", "reserve", "take"]),
                st.integers(0, 35),  # a time offset from now
                st.integers(1, 8),  # procs
                st.integers(0, 4),  # mem
                st.integers(0, 12),  # duration
            ),
            max_size=10,
        )
    )
    return now, free_p, free_m, releases, ops


@settings(max_examples=300, deadline=None)
@given(case=profile_cases())
def test_profile_from_release_arrays_behaves_like_the_profile_from_jobs(case):
    now, free_p, free_m, releases, ops = case
    # the list profile is built with the releases due by now merged into its first step
    plain = Profile(float(now), free_p, float(free_m), [(float(t), p, float(m)) for t, p, m in releases])
    fast = Profile.from_release_index(float(now), free_p, float(free_m), _Releases(releases), [])
    for op, dt, p, m, d in ops:
        at = float(now + dt)
        if op == "earliest":
            assert plain.earliest(p, m, d, at) == fast.earliest(p, m, d, at)
            assert plain.earliest(p, m, d) == fast.earliest(p, m, d)
        elif op == "fits":
            assert plain.fits(at, p, m, d) == fast.fits(at, p, m, d)
        elif op == "reserve":
            start = plain.earliest(p, m, d, at)
            if math.isfinite(start):
                plain.reserve(start, p, m, d)
                fast.reserve(start, p, m, d)
        else:
            plain.take(float(now), p, m, d)
            fast.take(float(now), p, m, d)
        assert list(plain.times) == list(map(float, fast.times))
        assert list(map(float, plain.procs)) == list(map(float, fast.procs))
        assert list(map(float, plain.mem)) == list(map(float, fast.mem))
        # windows that end exactly on a step boundary, the delicate case
        times = plain.times
        for gap in {b - a for a in times for b in times if b > a}:
            for need in (1, 2, 3):
                assert plain.earliest(need, 0, gap) == fast.earliest(need, 0, gap)
                assert plain.fits(times[0], need, 0, gap) == fast.fits(times[0], need, 0, gap)


def test_release_index_predicts_a_job_started_on_fewer_processors_from_the_work_it_owes():
    # A job asking for 4 processors x 100 s that the engine started on 2 at t=0
    # (immediate service's trial or EQspatial's share): it owes 4 * 100 = 400
    # processor-seconds at 2 processors, so it frees its 2 processors at 200, not
    # at start + requested runtime = 100 (which the sorted release arrays would say).
    from o2ksim.engine.releases import ReleaseIndex

    reduced = Job(JobSpec(1, 0.0, 4, 10, 100.0, 100.0))
    reduced.state, reduced.host, reduced.alloc_procs, reduced.alloc_mem = JobState.RUNNING, "h", 2, 10
    reduced.first_start = reduced.last_start = reduced.segment_start = 0.0
    reduced.reduced = True
    index = ReleaseIndex()
    index.add(reduced)
    assert set(index.irregular) == {1} and len(index.arrays()[0]) == 0
    assert reduced.predicted_end(0.0) == pytest.approx(200.0)
    index.remove(reduced)
    assert len(index) == 0


@st.composite
def shadow_cases(draw):
    """A host's releases (some due before now, many at equal times), a reservation request,
    and jobs started now; small integers so that exact fits and ties are common."""
    now = draw(st.integers(0, 5))
    releases = draw(
        st.lists(
            st.tuples(st.integers(0, 20), st.integers(1, 4), st.sampled_from([0, 1, 2])),
            max_size=12,
        )
    )
    free = (draw(st.integers(0, 4)), draw(st.integers(0, 4)))
    request = (draw(st.integers(1, 12)), draw(st.integers(0, 6)), draw(st.integers(0, 12)))
    starts = draw(
        st.lists(st.tuples(st.integers(1, 6), st.integers(0, 3), st.integers(0, 25)), max_size=6)
    )
    return now, free, releases, request, starts


@settings(max_examples=400, deadline=None)
@given(case=shadow_cases(), together=st.booleans())
def test_shadow_answers_like_the_profile_holding_one_reservation(case, together):
    # EASY's shadow time and extra resources stand for the whole profile once one
    # reservation is placed: the reservation lands where the list profile puts it, and
    # every later job starting now fits (and books) exactly as on the list profile.
    # ``together`` (release_ties): the profile defers no release (NO_TIES), the shadow
    # counts every release at its time.
    now, (free_p, free_m), releases, (rp, rm, rd), starts = case
    now = float(now)
    plain = Profile(now, free_p, float(free_m), [(float(t), p, float(m)) for t, p, m in releases])
    if together:
        plain.releases = NO_TIES
    expected_at = plain.earliest(rp, rm, rd)
    t, p, m = _Releases(releases).arrays()
    found = Releases.from_arrays(t, p, m, free_p, free_m)
    at, shadow = found.reserve(now, (rp, rm, rd), together)
    assert at == expected_at
    if math.isinf(at):
        assert shadow is None
        return
    plain.reserve(at, rp, rm, rd)
    assert Shadow.of(plain, at) is not None  # the list profile reduces too
    for p, m, d in starts:
        fits = plain.fits(now, p, m, float(d))
        assert shadow.fits(now, p, m, float(d)) == fits
        assert bool(shadow.admits(np.array([p]), np.array([m]), np.array([float(d)]))[0]) == fits
        if fits:
            plain.take(now, p, m, float(d))
            shadow.take(now, p, m, float(d))


def test_shadow_declines_a_profile_it_cannot_stand_for():
    # 1 processor free now, 5 more released at 10.  One reservation of 2 processors at
    # 10 for 5 s leaves 4 extra at 10 and 6 from 15: the lowest step from 10 on is at 10.
    one = Profile(0.0, 1, 0.0, [(10.0, 5, 0.0)])
    one.reserve(10.0, 2, 0.0, 5.0)
    shadow = Shadow.of(one, 10.0)
    assert shadow is not None
    assert (shadow.now_procs, shadow.at, shadow.extra_procs) == (1, 10.0, 4)
    # a second reservation of 6 processors at 15 empties [15, 115): from 10 on the
    # profile is no longer lowest at 10, so three numbers cannot describe it
    one.reserve(15.0, 6, 0.0, 100.0)
    assert Shadow.of(one, 10.0) is None
