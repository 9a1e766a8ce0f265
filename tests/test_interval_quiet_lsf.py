"""NCSA-LSF* with ``--interval``: quiet stretches skipped, schedules and drain counters unchanged.

After a pass that decided nothing, and while nothing happens, NCSA-LSF*
promises quiet passes until its next drain deadline, and none while a drained
host has idle processors (their processor-seconds are summed pass by pass):
:mod:`o2ksim.policies.quiet`.  Expected values: passes worked out by hand, and
the same run ticking through every interval (``Scheduler.skip_ticks = False``),
an oracle that does not use the promise.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim.engine.core import Simulation
from o2ksim.engine.monitor import Observer
from o2ksim.engine.scheduler import Scheduler
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, parse_machine
from o2ksim.policies.lsf import NCSALSF

H = 3600.0


def toy(hosts, drain_wait, system_limits=None):
    """An LSF machine: ``hosts`` as (name, procs, GB, priority, limits); the classes of
    tests/test_lsf.py (hours: vst 1, st 10, mt 20, lt 40; sj 2 procs 1 GB, mj 4/2, lj 16/8)."""
    table = {
        "time_classes": {"vst": 1, "st": 10, "mt": 20, "lt": 40},
        "size_classes": {"sj": [2, 1], "mj": [4, 2], "lj": [16, 8]},
        "drain_wait": drain_wait,
        "system_limits": dict(system_limits or {}),
        "user_limit": 0,
    }
    host_tables = [
        {"name": n, "procs": p, "memory_gb": g, "lsf": {"priority": list(pr), "limits": dict(lim)}}
        for n, p, g, pr, lim in hosts
    ]
    return parse_machine({"name": "toy", "lsf": table, "host": host_tables}, "toy.toml")


class Passes(Observer):
    def __init__(self) -> None:
        self.at: list[float] = []

    def on_pass(self, now: float, n_decisions: int) -> None:
        self.at.append(now)


def run(machine, jobs, interval, *, skip=True, seed=0, **params):
    policy = NCSALSF(**params)
    policy.log = []
    passes = Passes()
    Scheduler.skip_ticks = skip
    try:
        sim = Simulation(machine, jobs, policy, interval=interval, observers=[passes],
                         rng=np.random.default_rng(seed))  # fmt: skip
        sim.run()
    finally:
        Scheduler.skip_ticks = True
    spans = [(j.id, j.host, j.first_start, j.end) for j in sim.jobs.values()]
    return spans, passes.at, policy


def test_a_drain_deadline_ends_the_skip_and_a_drained_idle_host_ticks_through():
    # Host a: 4 processors, sj only; st jobs drain after 5 h, lt never.  Interval 1800 s.
    # X1, X2 (1 proc, 8 h) and X3 (1 proc, 2 h) start at 0; J (st-sj, 2 procs, 1 h)
    # arrives at 0.1 h and S (lt-sj, 1 proc, 10 h) at 0.2 h.  By hand, the passes:
    #   0 (X1-X3 start), 1800 (J does not fit, S takes the last processor; J's drain
    #   timer at 5.1 h), 3600 (quiet: skip to the drain deadline), 7200 (X3 has left:
    #   1 free, J does not fit; quiet), 18360 (J's timer: J drains a, a holds its free
    #   processor: no decision, but from now on 1 processor idle on a drained host: no
    #   promise), every tick 19800 .. 27000, 28800 (X1, X2 leave: J starts), 30600
    #   (quiet: nothing can change), 32400 (J has left: quiet); S ends at 37800.
    # Ticking through: every tick 0 .. 36000 and the timer, 22 passes.  Idle on the
    # drained host: 1 processor from 18360 to 28800.
    m = toy([("a", 4, 4, ["sj"], {})], {"vst": 2, "st": 5, "mt": 10, "lt": math.inf})
    jobs = [
        JobSpec(1, 0.0, 1, 0, 10 * H, 8 * H), JobSpec(2, 0.0, 1, 0, 10 * H, 8 * H),
        JobSpec(3, 0.0, 1, 0, 10 * H, 2 * H), JobSpec(4, 0.1 * H, 2, 0, 2 * H, 1 * H),
        JobSpec(5, 0.2 * H, 1, 0, 30 * H, 10 * H),
    ]  # fmt: skip
    spans, at, pol = run(m, jobs, 1800.0)
    assert at == [0.0, 1800.0, 3600.0, 7200.0, 18360.0, *[19800.0 + 1800 * k for k in range(8)]]
    assert spans == [
        (1, "a", 0.0, 8 * H), (2, "a", 0.0, 8 * H), (3, "a", 0.0, 2 * H), (4, "a", 8 * H, 9 * H),
        (5, "a", 1800.0, 1800.0 + 10 * H),
    ]  # fmt: skip
    assert pol.counters["drain_idle_proc_seconds"] == 28800 - 18360
    ticking, every, pol2 = run(m, jobs, 1800.0, skip=False)
    assert ticking == spans and len(every) == 22
    assert pol2.counters == pol.counters


def test_a_subclass_that_decides_otherwise_inherits_no_promise():
    class Eager(NCSALSF):
        def _sync(self, snap):
            return super()._sync(snap)

    m = toy([("a", 4, 4, ["sj"], {})], {"vst": 2, "st": 5, "mt": 10, "lt": math.inf})
    jobs = [JobSpec(1, 0.0, 1, 0, 10 * H, 2 * H)]
    passes = Passes()
    Simulation(m, jobs, Eager(), interval=600.0, observers=[passes]).run()
    assert len(passes.at) == 12  # every tick while it runs: 0 .. 6600


# -- the same schedule as ticking through ------------------------------------------------------
HOSTS = [
    ("eir", 8, 4, ["lj", "mj", "sj"], {"lj": 1, "mj": 2}),
    ("mimir", 4, 2, ["sj"], {}),
    ("modi", 6, 4, ["mj", "sj"], {}),
]
DRAIN = {"vst": 0.01, "st": 0.05, "mt": 0.1, "lt": 0.3}  # hours: drains come often
VARIANTS = [
    {}, {"vst_blocking": "never"}, {"arrival_blocking": "ignore"}, {"draining": False},
    {"size_blocking": "never"}, {"user_limit": 1},
]  # fmt: skip


@st.composite
def workloads(draw):
    """Jobs of every class but lt (requests from minutes to 12 h, runs shorter or equal), users."""
    jobs, t = [], 0.0
    for i in range(draw(st.integers(1, 30))):
        t += draw(st.sampled_from([0, 0, 10, 60, 400, 2000]))
        procs = draw(st.sampled_from([1, 1, 2, 3, 4, 6, 8]))
        mem = draw(st.sampled_from([0, 0.5, 1, 1.5, 3]))
        req = draw(st.sampled_from([600, 1800, 3 * H, 12 * H]))
        run_ = draw(st.sampled_from([req, req / 2, req / 7, 100]))
        jobs.append(JobSpec(i + 1, t, procs, int(mem * KB_PER_GB), float(req), float(run_),
                            user=draw(st.integers(0, 2))))  # fmt: skip
    return jobs


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=workloads(),
    interval=st.sampled_from([60.0, 300.0, 33.3, 1000.0, 7.0]),
    params=st.sampled_from(VARIANTS),
    limits=st.sampled_from([{}, {"mt": 1}, {"lj": 1, "st": 2}]),
    seed=st.integers(0, 3),
)
def test_same_schedule_and_drains_as_ticking_through(jobs, interval, params, limits, seed):
    m = toy(HOSTS, DRAIN, limits)
    spans, at, pol = run(m, jobs, interval, seed=seed, **params)
    ticking, every, pol2 = run(m, jobs, interval, skip=False, seed=seed, **params)
    assert spans == ticking
    assert pol.log == pol2.log  # every start and drain event, at the same time
    assert pol.counters == pol2.counters  # drains, and idle processor-seconds (floats)
    assert len(at) <= len(every)


def test_most_ticks_of_a_long_wait_are_skipped():
    # the same machine, a job waiting behind a long one, draining off for lt: quiet for 30 h
    m = toy(HOSTS, {"vst": 2, "st": 5, "mt": 10, "lt": math.inf})
    jobs = [JobSpec(1, 0.0, 8, 0, 30 * H, 30 * H), JobSpec(2, 10.0, 8, 0, 30 * H, 1 * H)]
    spans, at, _ = run(m, jobs, 60.0)
    ticking, every, _ = run(m, jobs, 60.0, skip=False)
    assert spans == ticking and spans[1][2] == 30 * H
    # 0 (job 1 starts), 60 (job 2, arrived at 10 s, waits: quiet), 30 h (it starts),
    # 30 h + 60 s (quiet); ticking through: every minute of the 31 hours
    assert at == [0.0, 60.0, 30 * H, 30 * H + 60] and len(every) == 31 * 60
    assert pd.Series(at).is_monotonic_increasing
