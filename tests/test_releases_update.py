"""A host's kept ``Releases`` updated for the jobs that left and started, instead of rebuilt.

``host_releases`` (o2ksim/policies/shadow.py) updates its per-host memo in
place when the host's version moved by exactly the number of jobs that
started or left (``_update_releases``).  Checked here:

* ``remove``/``insert``/``resum`` leave every list -- rows, left-to-right sums,
  running sums with the free resources -- equal, bit for bit, to a fresh
  ``Releases`` of the resulting rows (fractional memory, ties, changes at the
  front, middle and end);
* ``host_releases`` by hand: a departure and a start are applied in place
  and answer as computed by hand; a resize (version moved by one, no job came
  or went) and a job that came and went in between are rebuilt instead;
* a seeded mutation: an update that forgets a departure is caught both by the
  fresh-instance comparison and by the fast = reference run on small hosts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import running_job, small_host_view
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles.backfill_reference import ReferenceBackfill

from o2ksim import simulate
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies import backfill
from o2ksim.policies import shadow as shadow_module
from o2ksim.policies.shadow import Releases

LISTS = ("times", "procs", "mem", "sum_procs", "sum_mem", "cum_procs", "cum_mem")


def _lists(r: Releases) -> tuple[list[float], ...]:
    return tuple(getattr(r, name) for name in LISTS)


ROW = st.tuples(
    st.integers(0, 8).map(float),
    st.integers(1, 4).map(float),
    st.floats(0.0, 5.0, allow_nan=False).map(lambda x: round(x, 3)),
)


@st.composite
def update_cases(draw):
    """Rows, which of them leave, which rows arrive, and the new free resources."""
    rows = sorted(draw(st.lists(ROW, max_size=12)))
    leaving = draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    arriving = draw(st.lists(ROW, max_size=5))
    free = (float(draw(st.integers(0, 6))), round(draw(st.floats(0.0, 9.0)), 3))
    return rows, leaving, arriving, free


def _apply(r: Releases, rows, leaving, arriving, free) -> list[tuple[float, float, float]]:
    """Update ``r`` as host_releases does; the rows it should now hold."""
    kept = list(rows)
    first = len(r.times)
    for row, leaves in zip(rows, leaving, strict=True):
        if leaves:
            first = min(first, r.remove(row))
            kept.remove(row)
    for row in arriving:
        first = min(first, r.insert(row))
        kept.append(row)
    r.resum(first, *free, version=7)
    return sorted(kept)


@settings(max_examples=400, deadline=None)
@given(case=update_cases())
def test_an_updated_releases_equals_a_fresh_one_bit_for_bit(case):
    rows, leaving, arriving, free = case
    updated = Releases(rows, 2.0, 1.7)
    expected_rows = _apply(updated, rows, leaving, arriving, free)
    fresh = Releases(expected_rows, *free)
    assert _lists(updated) == _lists(fresh)  # exact: the same floats, summed in the same order
    assert (updated.free_procs, updated.free_mem, updated.version) == (*free, 7)


class _ForgetsDepartures(Releases):
    """The seeded mutation: ``remove`` leaves the row in place."""

    def remove(self, row: tuple[float, float, float]) -> int:
        return len(self.times)


def test_an_update_that_forgets_a_departure_is_caught():
    rng = np.random.default_rng(20261122)
    caught = 0
    for _ in range(50):
        n = int(rng.integers(1, 10))
        rows = sorted(
            (float(rng.integers(0, 8)), float(rng.integers(1, 4)), round(float(rng.uniform(0, 5)), 3))
            for _ in range(n)
        )
        leaving = [bool(b) for b in rng.integers(0, 2, size=n)]
        arriving = [(float(rng.integers(0, 8)), 1.0, 0.5)]
        mutant = _ForgetsDepartures(rows, 2.0, 1.7)
        expected_rows = _apply(mutant, rows, leaving, arriving, (3.0, 2.0))
        if _lists(mutant) != _lists(Releases(expected_rows, 3.0, 2.0)):
            caught += 1
        else:
            assert not any(leaving)  # only when nothing left can the mutant pass
    assert caught > 0


def test_host_releases_are_updated_in_place_for_jobs_that_left_and_started():
    # host h: 8 procs, 100 KB.  A: 2 procs / 10 KB from 0 for 100 s (ends 100); B: 3 / 20
    # from 10 for 30 s (ends 40).  At 20 a 5-processor job waits for B: 3 + 3 at 40.
    a = running_job(1, 2, 10, start=0.0, req=100.0)
    b = running_job(2, 3, 20, start=10.0, req=30.0)
    cache: dict[str, Releases] = {}
    memo = shadow_module.host_releases(small_host_view(1, [a, b]), 20.0, None, cache)
    assert memo.start(20.0, 5, 0) == 40.0
    # B ends (version 2) and C starts at 40: 4 procs / 30 KB for 200 s, ends 240 (version 3).
    # Free 2 procs / 60 KB; releases A at 100 (+2 -> 4) and C at 240 (+4 -> 8).
    c = running_job(3, 4, 30, start=40.0, req=200.0)
    updated = shadow_module.host_releases(small_host_view(3, [a, c]), 50.0, None, cache)
    assert updated is memo  # updated, not rebuilt
    assert (updated.times, updated.procs, updated.mem) == ([100.0, 240.0], [2.0, 4.0], [10.0, 30.0])
    assert (updated.cum_procs, updated.cum_mem) == ([4.0, 8.0], [70.0, 100.0])
    at, shadow = updated.reserve(50.0, (5, 0, 10.0))
    assert (at, shadow.now_procs, shadow.extra_procs) == (240.0, 2, 3)
    assert memo.rows_of == {1: (100.0, 2.0, 10.0), 3: (240.0, 4.0, 30.0)}


def test_host_releases_are_rebuilt_when_a_change_is_not_a_start_or_a_departure():
    a = running_job(1, 2, 10, start=0.0, req=100.0)
    b = running_job(2, 3, 20, start=10.0, req=30.0)
    cache: dict[str, Releases] = {}
    memo = shadow_module.host_releases(small_host_view(1, [a, b]), 20.0, None, cache)
    # A resized to 4 processors at 20 (version 2): nobody came or went, but A's row changed.
    # Owed: 2 * 100 - 2 * 20 = 160 processor-seconds at 4 -> ends at 60.
    a.alloc_procs, a.resizes, a.segment_start, a.remaining_work = 4, 1, 20.0, a.spec.work - 40.0
    rebuilt = shadow_module.host_releases(small_host_view(2, [a, b]), 20.0, None, cache)
    assert rebuilt is not memo
    assert (rebuilt.times, rebuilt.procs) == ([40.0, 60.0], [3.0, 4.0])
    # D came and went in between (versions 3, 4) and E started (5): three changes, one seen
    e = running_job(5, 1, 5, start=30.0, req=10.0)
    again = shadow_module.host_releases(small_host_view(5, [a, b, e]), 30.0, None, cache)
    assert again is not rebuilt
    assert (again.times, again.procs) == ([40.0, 40.0, 60.0], [1.0, 3.0, 4.0])


SMALL_HOSTS = MachineSpec(
    "few-small",
    tuple(HostSpec(f"h{i}", procs, gb * KB_PER_GB) for i, (procs, gb) in enumerate([(4, 2), (8, 4), (16, 8)])),
)


def _seeded_jobs(seed: int, n: int = 300) -> list[JobSpec]:
    rng = np.random.default_rng(seed)
    t = 0.0
    jobs = []
    for i in range(n):
        t += float(rng.choice([0, 1, 5, 30, 120]))
        procs = int(rng.choice([1, 1, 2, 3, 4, 8, 16]))
        run = float(rng.integers(1, 900))
        req = float(rng.choice([run, 2 * run + 1, 1000.0]))
        mem = int(rng.choice([0, 256, 1024, 3000])) * 1024
        jobs.append(JobSpec(i + 1, t, procs, mem, req, run))
    return jobs


def _schedule(jobs, fast: bool) -> pd.DataFrame:
    params = {"priority": "fcfs", "reservations": 1}
    policy = backfill.Backfill(**params) if fast else ReferenceBackfill(**params)
    r = simulate(jobs, machine=SMALL_HOSTS, policy=policy)
    return r.jobs[["job_id", "start", "end", "host", "status"]]


def test_fast_path_with_updated_releases_equals_reference_and_the_mutant_does_not(monkeypatch):
    jobs = _seeded_jobs(7)
    updates = []
    real_update = shadow_module._update_releases

    def counting(entry, h, now):
        ok = real_update(entry, h, now)
        updates.append(ok)
        return ok

    monkeypatch.setattr(shadow_module, "_update_releases", counting)
    reference = _schedule(jobs, fast=False)
    pd.testing.assert_frame_equal(reference, _schedule(jobs, fast=True))
    assert sum(updates) > 50  # the in-place update is the path taken, often

    monkeypatch.setattr(Releases, "remove", lambda self, row: len(self.times))  # forgets departures
    with pytest.raises(AssertionError):
        pd.testing.assert_frame_equal(reference, _schedule(jobs, fast=True))


def test_a_backfill_policy_reused_for_another_run_starts_with_empty_caches():
    # host versions and job ids restart with each run, so a kept Releases (keyed by
    # version, updated from job-id differences) must not carry over into the next run
    policy = backfill.Backfill(priority="fcfs", reservations=1)
    first = simulate(_seeded_jobs(7), machine=SMALL_HOSTS, policy=policy)
    assert policy.release_cache  # the run kept releases
    policy.bind(SMALL_HOSTS, np.random.default_rng(0))
    assert not policy.release_cache and not policy.profile_cache
    again = simulate(_seeded_jobs(7), machine=SMALL_HOSTS, policy=policy)
    pd.testing.assert_frame_equal(first.jobs, again.jobs)
