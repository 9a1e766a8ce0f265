"""With ``--interval``, an idle stretch costs one timeout, not one pass per tick.

While nothing waits, runs or is preempted, the scheduler skips the ticks until
the first one at or after the next arrival (``Scheduler.tick``).  The schedule
must be exactly the one of ticking through: checked on hand-computed cases
(ticks, starts and passes counted by hand) and, on random workloads and
several policies, against the engine with the skip switched off.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import job, one_host

from o2ksim.engine.core import Simulation
from o2ksim.engine.scheduler import Scheduler, exact_tick
from o2ksim.jobs import JobSpec
from o2ksim.policies.backfill import FCFS
from o2ksim.run.api import simulate


class Recording(FCFS):
    """Strict FCFS that records the instant of every pass."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[float] = []

    def schedule(self, snap):
        self.at.append(snap.now)
        return super().schedule(snap)


def test_the_idle_ticks_are_skipped_and_the_next_arrival_waits_for_its_tick():
    # interval 10 s; A (0, runs 5 s) and B (submitted at 1003, runs 7 s), one processor each.
    # Ticks 0 (A starts), 10 (A's departure at 5 is seen), then the machine is idle:
    # the next tick at or after B's arrival is 1010, where B starts; B ends at 1017,
    # which ends the run.  Ticking through would make passes at 0, 10, 20, ..., 1010.
    pol = Recording()
    sim = Simulation(one_host(4), [job(1, 0, 1, 5), job(2, 1003, 1, 7)], pol, interval=10.0)
    stats = sim.run()
    assert pol.at == [0.0, 10.0, 1010.0]
    assert stats.passes == 3
    assert sim.scheduler.skipped_ticks == 99  # the ticks at 20, 30, ..., 1000
    a, b = sim.jobs[1], sim.jobs[2]
    assert (a.first_start, a.end, b.first_start, b.end) == (0.0, 5.0, 1010.0, 1017.0)


def test_an_arrival_on_a_tick_starts_at_that_tick():
    # B is submitted at 1000 exactly, a tick: it starts there, as when ticking through
    pol = Recording()
    sim = Simulation(one_host(4), [job(1, 0, 1, 5), job(2, 1000, 1, 7)], pol, interval=10.0)
    sim.run()
    assert pol.at == [0.0, 10.0, 1000.0]
    assert sim.jobs[2].first_start == 1000.0


def test_a_gap_of_a_billion_seconds_costs_a_handful_of_passes():
    # two 10-second jobs 10^9 s apart, a pass every second: about 10 passes per job
    # (ticks while each runs, one to see it leave) instead of 10^9
    pol = Recording()
    sim = Simulation(one_host(4), [job(1, 0, 1, 10), job(2, 1e9, 1, 10)], pol, interval=1.0)
    stats = sim.run()
    assert stats.passes <= 24
    assert sim.scheduler.skipped_ticks >= 1e9 - 30
    assert sim.jobs[2].first_start == 1e9 and sim.jobs[2].end == 1e9 + 10


def test_exact_tick():
    assert exact_tick(1e9, 1.0) and exact_tick(3e15, 300.0) and exact_tick(2.5e6, 2.5)
    assert not exact_tick(2.0**54, 1.0)  # beyond 2^53 s, whole seconds are no longer exact
    assert exact_tick(0.2, 0.1) and not exact_tick(3.0, 0.1)  # 0.1 is not a binary fraction


def test_a_non_binary_interval_ticks_through():
    # 0.1 s ticks are not exact floats: no skip, every tick is a pass (as before)
    pol = Recording()
    sim = Simulation(one_host(4), [job(1, 0, 1, 0.25), job(2, 1, 1, 0.25)], pol, interval=0.1)
    sim.run()
    assert sim.scheduler.skipped_ticks == 0
    assert len(pol.at) >= 11


def _workload(seed: int) -> list[JobSpec]:
    """Bursts of jobs separated by idle stretches longer than any job."""
    rng = np.random.default_rng(seed)
    jobs, t = [], 0
    for i in range(60):
        t += int(rng.exponential(5000 if i % 8 == 0 else 150))
        run = int(rng.integers(1, 900))
        jobs.append(job(i + 1, t, int(rng.integers(1, 17)), run + int(rng.integers(0, 900)), run))
    return jobs


@pytest.mark.parametrize(
    ("policy", "params"),
    [("fcfs", None), ("fcfs-backfill", None), ("lxfw-backfill", {"reservations": "all"}),
     ("fcfs-backfill-immediate", None), ("eqspatial-5m", None)],
)  # fmt: skip
@pytest.mark.parametrize(("interval", "seed"), [(1.0, 0), (7.0, 1), (2.5, 2)])
def test_same_schedule_as_ticking_through(monkeypatch, seed, policy, params, interval):
    jobs = _workload(seed)
    kw = {"policy": policy, "policy_params": params, "interval": interval}
    skipping = simulate(jobs, one_host(16, mem_gb=64), **kw)
    monkeypatch.setattr(Scheduler, "skip_ticks", False)  # every tick a pass
    ticking = simulate(jobs, one_host(16, mem_gb=64), **kw)
    cols = ["job_id", "host", "start", "end", "status", "preemptions", "restarts", "resizes"]
    assert skipping.jobs[cols].equals(ticking.jobs[cols])
    assert skipping.stats.passes < ticking.stats.passes
