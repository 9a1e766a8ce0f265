"""On a machine of one host the backfill fast path still gives the reference pass's schedule.

Traces such as KTH-SP2 and HPC2N run on one host, and the fast path scans the
rest of the queue for them with a loop of its own (``_scan_one_host``: the
host, its free resources and its reservation guard looked up once); the
multi-host property test in ``test_backfill_fast_path.py`` never reaches it.
Here the same comparison runs on one host with memory, on bursty workloads
deep enough that jobs are backfilled, with every reservation option.
"""

from __future__ import annotations

import pandas as pd
from conftest import backfill_options, bursty_jobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.backfill_reference import ReferenceBackfill

from o2ksim import simulate
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec

ONE_HOST = MachineSpec("one", (HostSpec("h", 16, 8 * KB_PER_GB),))


@st.composite
def workloads(draw):
    return bursty_jobs(draw, st, 70, [0, 0, 512, 3072, 6000])


@st.composite
def options(draw):
    return backfill_options(
        priority=draw(st.sampled_from(["fcfs", "fcfs", "sjf", "lxf", {"w": 1, "x": 5}])),
        reservations=draw(st.sampled_from([0, 1, 1, 1, 2, "all"])),
        reservation_kind=draw(st.sampled_from(["dynamic", "dynamic", "fixed"])),
        sliding=draw(st.sampled_from([True, True, False])),
    )


def schedule(jobs, opts, fast):
    """o2ksim's backfill (``fast``) or the reference pass of tests/oracles."""
    policy = "backfill" if fast else ReferenceBackfill(**opts)
    r = simulate(jobs, machine=ONE_HOST, policy=policy, policy_params=opts if fast else None)
    return r.jobs[["job_id", "start", "end", "host", "status"]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=workloads(), opts=options())
def test_one_host_fast_path_equals_reference_pass(jobs, opts):
    pd.testing.assert_frame_equal(schedule(jobs, opts, fast=False), schedule(jobs, opts, fast=True))


def test_one_host_backfills_behind_a_reservation_by_hand():
    # 16 processors.  J1 (12 procs, requested 100 s) runs from 0.  J2 (8 procs) cannot
    # start: its reservation (the shadow time) is at 100, when J1's processors return,
    # leaving 16 - 8 = 8 extra processors there.  J3 (4 procs, 50 s) ends before 100:
    # backfilled at 2, which leaves no processor free.  J4 (4 procs, 500 s) waits until
    # J3 ends at 52; it would run past 100 but fits the 8 extra processors: backfilled
    # at 52.  J2 starts at its reservation, 100.
    jobs = [
        JobSpec(1, 0.0, 12, 0, 100.0, 100.0),
        JobSpec(2, 1.0, 8, 0, 100.0, 100.0),
        JobSpec(3, 2.0, 4, 0, 50.0, 50.0),
        JobSpec(4, 3.0, 4, 0, 500.0, 500.0),
    ]
    starts = schedule(jobs, {"reservations": 1}, fast=True).set_index("job_id")["start"]
    assert starts.to_dict() == {1: 0.0, 2: 100.0, 3: 2.0, 4: 52.0}
