"""The single reservation placed from plain-Python releases, memoised per host version.

``Releases`` (o2ksim/policies/shadow.py) replaces numpy on hosts with few
running jobs and is kept between passes while a host's allocations are
unchanged.  Checked here:

* built from lists it gives the numbers of the same releases read from numpy
  arrays (:meth:`Releases.from_arrays`) bit for bit, fractional memory included
  (same left-to-right running sums);
* the memo claim: releases read at an earlier ``now0`` answer for any later
  ``now1`` like the thesis's list profile built afresh at ``now1``;
* ``host_releases`` by hand: reused while the host's version is unchanged
  (also when a release has become due), rebuilt when it changes;
* whole runs on many small hosts with memory, at the default thresholds (so
  the plain-Python path is the one taken): the pass starts every job
  exactly where and when the reference pass (tests/oracles) does.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from conftest import bursty_jobs, running_job, small_host_view
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles.backfill_reference import ReferenceBackfill

from o2ksim import simulate
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies import shadow as shadow_module
from o2ksim.policies.profile import Profile
from o2ksim.policies.shadow import Releases, Shadow


def _fields(shadow: Shadow | None) -> tuple[float, ...] | None:
    if shadow is None:
        return None
    return (shadow.now, shadow.now_procs, shadow.now_mem, shadow.at, shadow.extra_procs, shadow.extra_mem)


def _arrays(rows):
    return tuple(np.array([r[k] for r in rows], dtype=float) for k in range(3))


@st.composite
def fractional_cases(draw):
    """Releases (some due before now, ties common) with fractional memory."""
    now = float(draw(st.integers(0, 5)))
    mem = st.floats(0.0, 5.0, allow_nan=False).map(lambda x: round(x, 3))
    rows = sorted(
        draw(st.lists(st.tuples(st.integers(0, 20).map(float), st.integers(1, 4), mem), max_size=12))
    )
    free = (draw(st.integers(0, 4)), draw(mem))
    request = (draw(st.integers(1, 12)), draw(st.floats(0.0, 12.0).map(lambda x: round(x, 2))),
               float(draw(st.integers(0, 12))))  # fmt: skip
    return now, free, rows, request


@settings(max_examples=400, deadline=None)
@given(case=fractional_cases())
def test_plain_releases_give_the_numpy_shadow_bit_for_bit(case):
    now, free, rows, request = case
    expected_at, expected = Releases.from_arrays(*_arrays(rows), *free).reserve(now, request)
    releases = Releases(rows, *free)
    at, shadow = releases.reserve(now, request)
    assert at == expected_at
    assert releases.start(now, request[0], request[1]) == expected_at
    assert _fields(shadow) == _fields(expected)  # exact equality: the same float sums


@st.composite
def memo_cases(draw):
    """Release constants c_i, read at now0; asked again at a later now1 (integers)."""
    now0 = draw(st.integers(0, 10))
    now1 = now0 + draw(st.sampled_from([0, 1, 3, 7, 15, 30]))
    consts = draw(
        st.lists(st.tuples(st.integers(0, 30), st.integers(1, 4), st.sampled_from([0, 1, 2])), max_size=10)
    )
    free = (draw(st.integers(0, 4)), draw(st.integers(0, 4)))
    request = (draw(st.integers(1, 12)), draw(st.integers(0, 6)), draw(st.integers(0, 12)))
    starts = draw(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 3), st.integers(0, 25)), max_size=6))
    return now0, now1, consts, free, request, starts


@settings(max_examples=400, deadline=None)
@given(case=memo_cases())
def test_releases_read_earlier_answer_later_like_a_fresh_profile(case):
    # what host_releases keeps: each release as the scheduler predicted it at now0
    # (never before now0), in that order.  At now1 the thesis profile is built afresh
    # from max(c, now1); the memo must reserve where it does and leave the same shadow.
    now0, now1, consts, (free_p, free_m), (rp, rm, rd), starts = case
    memo = Releases(sorted((float(max(c, now0)), p, m) for c, p, m in consts), free_p, free_m)
    now = float(now1)
    plain = Profile(now, free_p, float(free_m), [(float(max(c, now1)), p, float(m)) for c, p, m in consts])
    expected_at = plain.earliest(rp, rm, rd)
    at, shadow = memo.reserve(now, (rp, rm, rd))
    assert at == expected_at
    if math.isinf(at):
        assert shadow is None
        return
    plain.reserve(at, rp, rm, rd)
    for p, m, d in starts:  # every later job starting now fits (and books) as on the profile
        fits = plain.fits(now, p, m, float(d))
        assert shadow.fits(now, p, m, float(d)) == fits
        if fits:
            plain.take(now, p, m, float(d))
            shadow.take(now, p, m, float(d))


def test_host_releases_are_kept_while_the_host_is_unchanged_and_rebuilt_when_it_changes():
    # host h: 8 procs, 100 KB.  A: 2 procs / 10 KB from 0, requested 100 s (ends 100);
    # B: 3 procs / 20 KB from 10, requested 30 s (ends 40).  Free: 3 procs, 70 KB.
    a = running_job(1, 2, 10, start=0.0, req=100.0)
    b = running_job(2, 3, 20, start=10.0, req=30.0)
    cache: dict[str, Releases] = {}
    first = shadow_module.host_releases(small_host_view(1, [a, b], live=False), 20.0, None, cache)
    # a 5-processor job for 10 s: 3 free + B's 3 at 40 = 6 >= 5 -> at 40, 1 extra there
    at, shadow = first.reserve(20.0, (5, 0, 10.0))
    assert (at, shadow.now_procs, shadow.extra_procs) == (40.0, 3, 1)
    # at 45 nothing changed (B overran its request): the same releases answer, and B's
    # release is now due -> the job can start now: 3 + 3 - 5 = 1 left now and at "now"
    again = shadow_module.host_releases(small_host_view(1, [a, b], live=False), 45.0, None, cache)
    assert again is first
    at, shadow = again.reserve(45.0, (5, 0, 10.0))
    assert (at, shadow.now_procs, shadow.now_mem, shadow.extra_procs) == (45.0, 1, 90, 1)
    # B ends at 40 and C (4 procs / 30 KB, requested 200 s) starts: version 2.  Free:
    # 2 procs; releases A at 100 (2 -> 4 free) and C at 240 (4 -> 8 free): at 240, 3 extra
    c = running_job(3, 4, 30, start=40.0, req=200.0)
    rebuilt = shadow_module.host_releases(small_host_view(2, [a, c], live=False), 50.0, None, cache)
    at, shadow = rebuilt.reserve(50.0, (5, 0, 10.0))
    assert (at, shadow.now_procs, shadow.extra_procs) == (240.0, 2, 3)
    # a job started earlier in the same pass (ends 60, 1 proc, 5 KB) counts as running
    # and bypasses the memo: free 1 proc, releases 60 (+1), 100 (+2), 240 (+4) -> 5 at 240
    added = shadow_module.host_releases(small_host_view(2, [a, c], live=False), 50.0, [(60.0, 1, 5.0)], cache)
    assert added is not cache["h"]
    assert added.start(50.0, 4, 0) == 100.0 and added.start(50.0, 5, 0) == 240.0


SMALL_HOSTS = MachineSpec(
    "many-small",
    tuple(
        HostSpec(f"h{i}", procs, gb * KB_PER_GB)
        for i, (procs, gb) in enumerate([(2, 1), (4, 2), (4, 8), (8, 2), (8, 4), (8, 8), (16, 4), (16, 16)])
    ),
)


@st.composite
def small_host_workloads(draw):
    """Bursty jobs of 1-16 processors with memory, so that queues form on every host."""
    return bursty_jobs(draw, st, 80, [0, 256, 1024, 3000, 7000])


@settings(max_examples=60, deadline=None)
@given(
    jobs=small_host_workloads(),
    priority=st.sampled_from(["fcfs", "sjf", "lxf", {"w": 1, "x": 5, "p": 0.2}]),
    reservations=st.sampled_from([1, 1, 1, 2]),
)
def test_fast_path_equals_reference_on_many_small_hosts_with_memory(jobs, priority, reservations):
    def run(fast):
        params = {"priority": priority, "reservations": reservations}
        policy = "backfill" if fast else ReferenceBackfill(**params)
        r = simulate(jobs, machine=SMALL_HOSTS, policy=policy, policy_params=params if fast else None)
        return r.jobs[["job_id", "start", "end", "host", "status"]]

    pd.testing.assert_frame_equal(run(False), run(True))
