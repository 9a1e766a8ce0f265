"""The backfill pass's own early exit, without the engine's pass skipping.

The engine used to skip a pass when no waiting job fitted any host, if the
policy said it may (``idle_when_nothing_fits``).  That device leaves the
engine contract; backfill instead returns from such a pass itself, in
O(hosts), from the queue's smallest requests (``backfill.nothing_fits``).
Checked here:

* by hand: ``nothing_fits`` compares each host with the smallest processor
  and the smallest memory request, and answers "may fit" when it cannot tell;
* on random multi-host workloads with memory, with every reservation option:
  o2ksim's backfill run at *every* pass (the engine told never to skip) starts
  every job where and when the reference pass of T§3.2.1 (tests/oracles, which
  never exits early and is never skipped) does.
"""

from __future__ import annotations

import pandas as pd
from conftest import backfill_options, bursty_jobs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.backfill_reference import ReferenceBackfill

from o2ksim import simulate
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies.backfill import Backfill, nothing_fits

MACHINE = MachineSpec(
    "three",
    (
        HostSpec("a", 16, 8 * KB_PER_GB),
        HostSpec("b", 16, 4 * KB_PER_GB),
        HostSpec("c", 8, 8 * KB_PER_GB),
    ),
)


class EveryPass(Backfill):
    """o2ksim's backfill with the engine told never to skip a pass."""

    def idle_when_nothing_fits(self) -> bool:
        return False


class ReferenceEveryPass(ReferenceBackfill):
    """The reference pass, run at every pass too."""

    def idle_when_nothing_fits(self) -> bool:
        return False


def _snapshot(free: list[tuple[int, int]], requests: list[tuple[int, int]], *, index: bool = True):
    hosts = tuple(
        HostView(HostSpec(f"h{i}", 16, 100), p, m, [], []) for i, (p, m) in enumerate(free)
    )
    jobs = [Job(JobSpec(k + 1, 0.0, p, m, 10.0, 10.0)) for k, (p, m) in enumerate(requests)]
    queue_index = QueueIndex(jobs)
    for job in jobs:
        queue_index.add(job)
    return Snapshot(
        0.0, jobs, hosts, {h.name: h for h in hosts}, MACHINE,
        queue_index=queue_index if index else None,
    )  # fmt: skip


def test_nothing_fits_compares_every_host_with_the_smallest_requests():
    # requests (4 procs, 50 KB) and (8 procs, 10 KB): smallest 4 procs, smallest 10 KB
    requests = [(4, 50), (8, 10)]
    assert nothing_fits(_snapshot([(3, 100), (16, 5)], requests))  # few procs / little memory
    assert not nothing_fits(_snapshot([(3, 100), (4, 10)], requests))  # h1 may fit
    # (4, 10) fits neither job -- (4, 50) needs more memory, (8, 10) more processors --
    # but the test cannot tell: it says "may fit" and the pass runs (and starts nothing)
    assert not nothing_fits(_snapshot([(4, 10)], requests))
    # no index of the queue: unknown, so the pass runs
    assert not nothing_fits(_snapshot([(0, 0)], requests, index=False))


@st.composite
def options(draw):
    return backfill_options(
        priority=draw(st.sampled_from(["fcfs", "lxf", {"w": 1, "x": 5, "p": 0.2}])),
        reservations=draw(st.sampled_from([0, 1, 1, 2, "all"])),
        reservation_kind=draw(st.sampled_from(["dynamic", "dynamic", "fixed"])),
        sliding=draw(st.sampled_from([True, True, False])),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=st.composite(lambda draw: bursty_jobs(draw, st, 70, [0, 512, 3072, 6000]))(),
    opts=options(),
)
def test_backfill_run_at_every_pass_equals_the_reference_pass(jobs, opts):
    def run(policy):
        r = simulate(jobs, machine=MACHINE, policy=policy)
        return r.jobs[["job_id", "start", "end", "host", "status"]]

    pd.testing.assert_frame_equal(run(ReferenceEveryPass(**opts)), run(EveryPass(**opts)))
