"""NCSA-LSF* (T§3.1, Tables 3-4): each dispatch rule on a hand-made trace with a hand-computed schedule.

The toy machines use small classes so that a few jobs exercise a rule:
time classes vst <= 1 h, st <= 10 h, mt <= 20 h, lt <= 40 h (drain waits 2, 5,
10, 20 h) and size classes sj <= 2 processors and 1 GB, mj <= 4 and 2 GB,
lj <= 16 and 8 GB.  Times below are hours.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from o2ksim.analysis.lsf_classes import job_classes, lsf_class_table
from o2ksim.engine.core import Simulation
from o2ksim.engine.monitor import jobs_table
from o2ksim.errors import ConfigError
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, load_machine, parse_machine, single_host
from o2ksim.policies import make_policy
from o2ksim.policies.lsf import NCSALSF, lsf_config
from o2ksim.run.api import simulate

H = 3600.0


def lsf_table(**over):
    table = {
        "time_classes": {"vst": 1, "st": 10, "mt": 20, "lt": 40},
        "size_classes": {"sj": [2, 1], "mj": [4, 2], "lj": [16, 8]},
        "drain_wait": {"vst": 2, "st": 5, "mt": 10, "lt": 20},
        "system_limits": {},
        "user_limit": 0,
    }
    table.update(over)
    return table


def host(name, procs, mem_gb, priority, limits=None):
    return {
        "name": name,
        "procs": procs,
        "memory_gb": mem_gb,
        "lsf": {"priority": list(priority), "limits": dict(limits or {})},
    }


def toy(*hosts, **lsf):
    return parse_machine({"name": "toy", "lsf": lsf_table(**lsf), "host": list(hosts)}, "toy.toml")


def job(i, submit, procs, run, req=None, mem_gb=0.0, user=-1):
    """A job: submit/run/req in hours, memory in GB."""
    req = run if req is None else req
    return JobSpec(i, submit * H, procs, int(mem_gb * KB_PER_GB), req * H, run * H, user=user)


def run(machine, jobs, seed=0, **params):
    policy = NCSALSF(**params)
    policy.log = []
    sim = Simulation(machine, jobs, policy, rng=np.random.default_rng(seed))
    sim.run()
    table = jobs_table(list(sim.jobs.values())).set_index("job_id")
    return table, policy


def starts(table):
    return {int(i): round(s / H, 4) for i, s in table["start"].items() if not math.isnan(s)}


def events(policy, kind=None):
    return [
        (round(t / H, 4), e, h, j)
        for t, e, h, j in policy.log
        if kind is None or e == kind or e.startswith(kind)
    ]


# ------------------------------------------------------------------------------- classes
def test_thesis_example_classes_on_o2k():
    cfg = lsf_config(load_machine("o2k"))
    gb = KB_PER_GB
    # T§3.1: 16 processors, up to 4 GB, 50 hours is st-mj
    assert cfg.classify(16, 4 * gb, 50 * H) == ("st", "mj")
    assert cfg.classify(8, 2 * gb, 5 * H) == ("vst", "sj")
    assert cfg.classify(8, 2 * gb + 1, 5 * H + 1) == ("st", "mj")  # memory moves it up
    assert cfg.classify(1, 0, 200 * H) == ("mt", "sj")
    assert cfg.classify(17, 0, 400 * H) == ("lt", "lj")
    assert cfg.classify(64, 16 * gb, 1) == ("vst", "lj")
    assert cfg.classify(65, 0, 1) is None
    assert cfg.classify(4, 16 * gb + 1, 1) is None
    assert cfg.classify(4, 0, 400 * H + 1) is None
    assert cfg.system_limits == {"mt": 48, "lt": 20}
    limits = {h.name: (h.priority, dict(h.limits)) for h in cfg.hosts}
    assert limits["hod1"] == (("lj", "mj", "sj"), {"lj": 6, "mj": 2})
    assert limits["eir"] == (("lj", "mj", "sj"), {"lj": 3, "mj": 4})
    assert limits["mimir"] == (("sj",), {})
    assert limits["modi2"] == (("mj",), {})


def test_dedicated_hosts_are_not_lsf_hosts():
    cfg = lsf_config(load_machine("o2k-full"))
    assert [h.name for h in cfg.hosts] == [h.name for h in load_machine("o2k").hosts]


# ------------------------------------------------------------------------------- priority rules
def test_size_class_priority_and_blocking_of_lower_classes():
    # One host, 8 procs, lj > mj > sj.  J0 holds it until 1 h.  At 1 h: lj J3 (5 procs) first;
    # mj J2 (4) does not fit in the 3 left, so it blocks sj -- but mj J4 (2 procs, 1.5 GB)
    # may still start; sj J1 (1 proc) waits although one processor is idle.
    m = toy(host("a", 8, 16, ["lj", "mj", "sj"]))
    jobs = [
        job(0, 0.0, 8, 1, 2),
        job(1, 0.1, 1, 1, 2),
        job(2, 0.2, 4, 1, 2),
        job(3, 0.3, 5, 1, 2),
        job(4, 0.4, 2, 1, 2, mem_gb=1.5),
    ]
    t, _ = run(m, jobs)
    assert starts(t) == {0: 0, 3: 1, 4: 1, 2: 2, 1: 2}


def test_priority_order_follows_the_host_list():
    # The same jobs on a host whose priority is sj > mj > lj: at 1 h the sj job goes first.
    m = toy(host("a", 8, 16, ["sj", "mj", "lj"]))
    jobs = [job(0, 0.0, 8, 1, 2), job(1, 0.1, 1, 1, 2), job(2, 0.2, 4, 1, 2), job(3, 0.3, 5, 1, 2)]
    t, _ = run(m, jobs)
    # sj J1 (1), mj J2 (4) start at 1 h; lj J3 (5) no longer fits and waits for them.
    assert starts(t) == {0: 0, 1: 1, 2: 1, 3: 2}


def test_vst_first_then_fcfs_inside_a_size_class():
    m = toy(host("a", 2, 4, ["sj"]))
    jobs = [
        job(0, 0.0, 2, 1, 2),
        job(1, 0.1, 2, 1, 2),  # st
        job(2, 0.2, 2, 0.5, 1),  # vst
        job(3, 0.3, 2, 1, 2),  # st
        job(4, 0.4, 2, 0.5, 1),  # vst
    ]
    t, _ = run(m, jobs)
    assert starts(t) == {0: 0, 2: 1, 4: 1.5, 1: 2, 3: 3}


def test_arriving_job_goes_to_the_host_with_most_free_processors():
    m = toy(host("a", 8, 8, ["sj"]), host("b", 8, 8, ["sj"]))
    jobs = [job(0, 0, 2, 10), job(1, 1, 2, 10), job(2, 2, 1, 10), job(3, 3, 1, 10)]
    t, _ = run(m, jobs)
    # 8/8 tie -> a; 6/8 -> b; 6/6 tie -> a; 5/6 -> b  (backfill would pick the fewest)
    assert list(t["host"]) == ["a", "b", "a", "b"]
    assert starts(t) == {0: 0, 1: 1, 2: 2, 3: 3}


def test_host_class_limits_and_a_class_at_its_limit_does_not_block():
    m = toy(host("a", 8, 16, ["lj", "mj", "sj"], {"lj": 1, "mj": 1}))
    jobs = [
        job(0, 0.0, 1, 2, 2, mem_gb=3),  # lj (memory)
        job(1, 0.1, 1, 1, 2, mem_gb=3),  # lj: limit 1 reached
        job(2, 0.2, 1, 1, 2, mem_gb=1.5),  # mj: lj is at its limit, so mj has priority
        job(3, 0.3, 1, 1, 2, mem_gb=1.5),  # mj: limit reached
        job(4, 0.4, 1, 1, 2),  # sj
    ]
    t, _ = run(m, jobs)
    assert starts(t) == {0: 0, 2: 0.2, 4: 0.4, 3: 1.2, 1: 2}


def test_limit_keys_cover_classes_and_all():
    # A per-host total ("all" = 2) and a per-class limit (st_sj = 1).
    m = toy(host("a", 8, 16, ["sj"], {"all": 2, "st_sj": 1}))
    jobs = [job(0, 0, 1, 2, 5), job(1, 0, 1, 1, 5), job(2, 0, 1, 1, 1), job(3, 0, 1, 1, 1)]
    t, _ = run(m, jobs)
    # vst J2 and J3 first (the total of 2 is reached); at 1 h st J0 starts and J1 waits for
    # st_sj = 1 although the total has room.
    assert starts(t) == {2: 0, 3: 0, 0: 1, 1: 3}


def test_system_wide_time_class_limits():
    m = toy(host("a", 8, 8, ["sj"]), host("b", 8, 8, ["sj"]), system_limits={"mt": 1, "lt": 1})
    jobs = [
        job(0, 0.0, 1, 2, 15),  # mt
        job(1, 0.1, 1, 1, 15),  # mt: waits for job 0 although b is empty
        job(2, 0.2, 1, 3, 30),  # lt
        job(3, 0.3, 1, 1, 30),  # lt: waits
        job(4, 0.4, 1, 1, 5),  # st: a job over a limit blocks nobody
    ]
    t, _ = run(m, jobs)
    assert starts(t) == {0: 0, 1: 2, 2: 0.2, 3: 3.2, 4: 0.4}


@pytest.mark.parametrize(("mode", "vst_sj_start"), [("same-time-class", 2.0), ("never", 0.2)])
def test_vst_job_does_not_block_other_time_classes(mode, vst_sj_start):
    m = toy(host("a", 8, 16, ["lj", "mj", "sj"]))
    jobs = [
        job(0, 0.0, 6, 2, 5),  # st-lj holds 6 of 8 procs until 2 h
        job(1, 0.1, 5, 0.5, 1),  # vst-lj: does not fit
        job(2, 0.2, 1, 0.5, 1),  # vst-sj
        job(3, 0.3, 1, 1, 5),  # st-sj: never blocked by the vst job
    ]
    t, _ = run(m, jobs, vst_blocking=mode)
    assert starts(t) == {0: 0, 1: 2, 2: vst_sj_start, 3: 0.3}


def test_non_vst_job_blocks_every_lower_class():
    m = toy(host("a", 8, 16, ["lj", "mj", "sj"]))
    jobs = [
        job(0, 0.0, 6, 2, 5),
        job(1, 0.1, 5, 0.5, 5),
        job(2, 0.2, 1, 0.5, 1),
        job(3, 0.3, 1, 1, 5),
    ]
    t, _ = run(m, jobs, vst_blocking="never")
    assert starts(t) == {0: 0, 1: 2, 2: 2, 3: 2}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("obey", {0: 0, 1: 2, 2: 2, 3: 2, 4: 2, 5: 2.5}),
        ("ignore", {0: 0, 1: 2, 2: 0.2, 3: 0.3, 4: 2, 5: 1.5}),
    ],
)
def test_arrival_blocking_reading(mode, expected):
    """T§3.1's arrival rule read two ways (the `arrival_blocking` ablation).

    Host a: 8 processors, lj > mj > sj.  Job 0 (st-lj, 6 procs) runs 0-2 h; job 1 (st-lj,
    5 procs) cannot fit and blocks the lower size classes.  ``obey``: every sj job waits for
    job 1, which starts at 2 h with 8 processors free, and so do jobs 2-4 (5 + 3 x 1 = 8);
    job 5 (1.5 h) gets job 1's processors at 2.5 h.
    ``ignore``: sj jobs 2 (0.2 h) and 3 (0.3 h) start at their arrivals on the 2 free
    processors; job 4 (0.4 h) finds none and waits; at job 2's and job 3's departures
    (1.2 h, 1.3 h) the departure rule applies, so job 4 stays blocked until 2 h; job 5
    arrives at 1.5 h with 2 processors free and starts at once, ahead of job 4."""
    m = toy(host("a", 8, 16, ["lj", "mj", "sj"]))
    jobs = [
        job(0, 0.0, 6, 2, 5),
        job(1, 0.1, 5, 0.5, 5),
        job(2, 0.2, 1, 1, 5),
        job(3, 0.3, 1, 1, 5),
        job(4, 0.4, 1, 1, 5),
        job(5, 1.5, 1, 0.1, 5),
    ]
    t, _ = run(m, jobs, arrival_blocking=mode)
    assert starts(t) == expected


def test_size_blocking_never_is_a_diagnostic_switch():
    """``size_blocking = "never"``: the hand-worked blocking example above without the blocking.
    Job 1 (st-lj, 5 procs) cannot fit beside job 0 (6 of 8); sj jobs 2 and 3 take the 2 free
    processors at once (0.2 h, 0.3 h), end at 1.2 h and 1.3 h, and job 1 starts when job 0
    leaves at 2 h.  With the blocking (default) jobs 2 and 3 wait for job 1, all at 2 h."""
    m = toy(host("a", 8, 16, ["lj", "mj", "sj"]))
    jobs = [job(0, 0.0, 6, 2, 5), job(1, 0.1, 5, 0.5, 5), job(2, 0.2, 1, 1, 5), job(3, 0.3, 1, 1, 5)]
    assert starts(run(m, jobs)[0]) == {0: 0, 1: 2, 2: 2, 3: 2}
    assert starts(run(m, jobs, size_blocking="never")[0]) == {0: 0, 1: 2, 2: 0.2, 3: 0.3}


def test_per_user_limit_is_an_option():
    m = toy(host("a", 8, 8, ["sj"]))
    jobs = [job(0, 0, 1, 1, user=1), job(1, 0.1, 1, 1, user=1), job(2, 0.2, 1, 1, user=2)]
    assert starts(run(m, jobs)[0]) == {0: 0, 1: 0.1, 2: 0.2}  # default: unlimited
    assert starts(run(m, jobs, user_limit=1)[0]) == {0: 0, 1: 1, 2: 0.2}
    m1 = toy(host("a", 8, 8, ["sj"]), user_limit=1)
    assert starts(run(m1, jobs)[0]) == {0: 0, 1: 1, 2: 0.2}  # the machine's [lsf].user_limit
    assert starts(run(m1, jobs, user_limit=0)[0]) == {0: 0, 1: 0.1, 2: 0.2}  # parameter wins


def test_three_host_mini_o2k():
    """eir-like (lj > mj > sj, lj <= 1, mj <= 1), mimir-like (sj only), modi2-like (mj only).

    Every dispatch rule at once: placement on the most free processors, host
    limits handing priority to the next class, blocking of sj behind a waiting
    mj job, the system-wide mt limit, and the jobs going where they may.
    """
    m = toy(
        host("eir", 8, 16, ["lj", "mj", "sj"], {"lj": 1, "mj": 1}),
        host("mimir", 4, 4, ["sj"]),
        host("modi2", 4, 4, ["mj"]),
        system_limits={"mt": 1},
    )
    jobs = [
        job(1, 0.0, 6, 2, 5),  # L1 st-lj: eir only
        job(2, 0.1, 5, 1, 5),  # L2 st-lj: eir's lj limit is reached -> waits, blocks nothing
        job(3, 0.2, 2, 2, 5, mem_gb=1.5),  # M1 st-mj: eir has 2 free, modi2 4 -> modi2
        job(4, 0.3, 2, 1, 5, mem_gb=1.5),  # M2 st-mj: 2 free on both, tie -> eir (file order)
        job(5, 0.4, 2, 1, 5, mem_gb=1.5),  # M3 st-mj: eir's mj limit reached -> modi2
        job(6, 0.5, 2, 3, 5),  # S1 st-sj -> mimir
        job(7, 0.55, 2, 3, 5),  # S1b st-sj -> mimir (now full until 3.5 h)
        job(8, 0.6, 3, 1, 15),  # M4 mt-mj: no room
        job(9, 0.7, 3, 1, 15),  # M5 mt-mj: no room
        job(10, 1.0, 1, 1, 5),  # S2 st-sj: mimir full, eir full
    ]
    t, _ = run(m, jobs)
    # 1.3 h: M2 ends, eir has 2 free: L2 is over its limit (skipped), M4 (3 procs) does not
    #        fit and blocks sj, so S2 waits although it would fit.
    # 2.0 h: L1 ends: L2 starts (lj first), then M4 (mt count 1 = the system limit).
    # 2.2 h: M1 ends, modi2 is free, but M5 is mt: over the system-wide limit.
    # 3.0 h: L2 and M4 end: M5 goes to eir (8 free against modi2's 4), then S2 to eir.
    assert starts(t) == {1: 0, 2: 2, 3: 0.2, 4: 0.3, 5: 0.4, 6: 0.5, 7: 0.55, 8: 2, 9: 3, 10: 3}
    hosts = t["host"].to_dict()
    assert hosts == {
        1: "eir",
        2: "eir",
        3: "modi2",
        4: "eir",
        5: "modi2",
        6: "mimir",
        7: "mimir",
        8: "eir",
        9: "eir",
        10: "eir",
    }


# ------------------------------------------------------------------------------- draining
NO_LT_DRAIN = {"vst": 2, "st": 5, "mt": 10, "lt": math.inf}


def starving_stream(first_id, n, start=0.2):
    """1-proc lt-sj jobs that grab every processor freed (4 h each; never drain: NO_LT_DRAIN)."""
    return [job(first_id + k, start + 0.01 * k, 1, 4, 30) for k in range(n)]


def fill_four():
    """Four 1-proc st-sj jobs ending at 3, 4, 5 and 6 h."""
    return [job(100 + k, 0.0, 1, 3 + k, 10) for k in range(4)]


def test_draining_starts_a_starving_job_after_its_drain_wait():
    # Host a (4 procs, sj only).  J (2 procs, st) never finds 2 free processors: each freed
    # processor goes to a 1-proc job of the same size class (allowed: J blocks nothing of its own
    # class).  At 0.1 + 5 h it drains a (a timer pass: nothing arrives or ends then); a starts
    # nothing else; at 7 h two processors are free and J starts.
    m = toy(host("a", 4, 4, ["sj"]), drain_wait=NO_LT_DRAIN)
    jobs = [*fill_four(), job(1, 0.1, 2, 1, 2), *starving_stream(10, 12)]
    t, pol = run(m, jobs)
    assert events(pol, "drain") == [(5.1, "drain", "a", 1)]
    assert starts(t)[1] == 7.0
    assert [e for e in events(pol, "start") if 5.1 <= e[0] < 7] == []
    assert events(pol, "undrain") == [(7.0, "undrain-started", "a", 1)]
    assert pol.counters["drains"] == 1
    # a held 1 idle processor from 6 h to 7 h for the drained job
    assert pol.counters["drain_idle_proc_seconds"] == pytest.approx(1 * H)
    t_off, _ = run(m, jobs, draining=False)
    assert starts(t_off)[1] > 12  # without draining J waits for the whole stream


def test_draining_is_lost_when_the_time_class_limit_is_reached_and_comes_back():
    # J is mt-sj on host a (sj only); b serves mj only.  System-wide mt <= 1.
    m = toy(
        host("a", 4, 4, ["sj"]),
        host("b", 8, 8, ["mj"]),
        system_limits={"mt": 1},
        drain_wait=NO_LT_DRAIN,
    )
    jobs = [
        *fill_four(),
        job(1, 0.1, 2, 1, 15),  # mt-sj, drain wait 10 h
        *starving_stream(10, 20),
        job(2, 11.5, 4, 2, 15),  # mt-mj on b: the mt limit is reached at 11.5 h
    ]
    t, pol = run(m, jobs)
    assert events(pol, "drain") == [(10.1, "drain", "a", 1), (13.5, "drain", "a", 1)]
    assert events(pol, "undrain") == [
        (11.5, "undrain-lost", "a", 1),
        (15.5, "undrain-started", "a", 1),
    ]
    # a starts a stream job as soon as the drain is lost (1 processor was idle)
    assert (11.5, "start", "a", 18) in events(pol, "start")
    assert starts(t)[2] == 11.5
    assert starts(t)[1] == 15.5


def test_redraining_elsewhere_when_the_size_class_loses_priority():
    # a: 16 procs, 4 GB; b: 8 procs, 16 GB; both lj > mj.
    m = toy(host("a", 16, 4, ["lj", "mj"]), host("b", 8, 16, ["lj", "mj"]))
    jobs = [
        job(0, 0.0, 8, 6, 10, mem_gb=6),  # lj, only b has the memory: b busy until 6 h
        *[job(10 + k, 0.01, 4, 20, 20) for k in range(4)],  # mt-mj fill a until 20.01 h
        job(1, 0.1, 4, 1, 2),  # J: st-mj, overdue at 5.1 h
        job(2, 0.2, 8, 20, 20, mem_gb=6),  # mt-lj, b only: lj has priority on b, J drains a
        job(3, 6.0, 12, 1, 30),  # lt-lj, a only (12 procs): mj loses priority on a at 6 h
    ]
    t, pol = run(m, jobs)
    assert events(pol, "drain") == [(5.1, "drain", "a", 1), (6.0, "drain", "b", 1)]
    assert events(pol, "undrain") == [
        (6.0, "undrain-moved", "a", 1),
        (20.01, "undrain-started", "b", 1),
    ]
    assert starts(t) == {0: 0, 10: 0.01, 11: 0.01, 12: 0.01, 13: 0.01, 2: 6, 3: 20.01, 1: 20.01}
    assert t.loc[1, "host"] == "a"  # J started where it fitted first, not on its drained host
    assert [e for e in events(pol, "start") if e[2] == "b" and e[0] > 6] == []


def test_one_drained_host_per_job_and_one_job_per_drained_host():
    m = toy(host("a", 2, 4, ["sj"]))
    jobs = [job(0, 0, 2, 10, 10), job(1, 0.1, 2, 1, 2), job(2, 0.2, 2, 1, 2)]
    t, pol = run(m, jobs)
    # J1 drains a at 5.1 h; J2 (overdue at 5.2 h) finds no free host until J1 starts at 10 h
    assert events(pol, "drain") == [(5.1, "drain", "a", 1), (10.0, "drain", "a", 2)]
    assert starts(t) == {0: 0, 1: 10, 2: 11}


def test_drain_host_is_random_and_seeded():
    m = toy(host("a", 2, 4, ["sj"]), host("b", 2, 4, ["sj"]))
    jobs = [job(0, 0, 2, 10, 10), job(1, 0, 2, 10, 10), job(2, 0.1, 2, 1, 2)]
    chosen = [events(run(m, jobs, seed=s)[1], "drain")[0][2] for s in range(16)]
    assert set(chosen) == {"a", "b"}
    assert chosen == [events(run(m, jobs, seed=s)[1], "drain")[0][2] for s in range(16)]


def test_a_drain_wait_of_inf_never_drains():
    m = toy(host("a", 4, 4, ["sj"]), drain_wait={"vst": 2, "st": math.inf, "mt": 10, "lt": 20})
    jobs = [*fill_four(), job(1, 0.1, 2, 1, 2), *starving_stream(10, 12)]
    _, pol = run(m, jobs)
    assert events(pol, "drain") == []


# ------------------------------------------------------------------------------- admission
def test_jobs_that_fit_no_class_or_host_are_rejected_with_the_reason():
    m = toy(host("a", 32, 32, ["lj", "sj"]), system_limits={"lt": 0})
    jobs = [
        job(0, 0, 17, 1),  # > 16 procs: no size class
        job(1, 0, 1, 1, 41),  # > 40 h: no time class
        job(2, 0, 4, 1, 2),  # mj: no host serves mj
        job(3, 0, 1, 1, 30),  # lt: system-wide limit 0
        job(4, 0, 1, 1, 2),  # fine
    ]
    t, _ = run(m, jobs)
    assert list(t["status"]) == ["rejected"] * 4 + ["completed"]
    assert "largest LSF size class (lj) allows 16 processors" in t.loc[0, "reason"]
    assert "longer than the longest LSF time class (lt <= 40 h)" in t.loc[1, "reason"]
    assert "no LSF host serves st_mj" in t.loc[2, "reason"]
    assert "system-wide LSF limit for lt is 0" in t.loc[3, "reason"]


def test_on_o2k_oversized_jobs_are_rejected_not_dropped():
    jobs = [job(0, 0, 65, 1), job(1, 0, 4, 1, 401), job(2, 0, 64, 1, 400, mem_gb=16)]
    r = simulate(jobs, machine="o2k", policy="ncsa-lsf")
    assert list(r.jobs["status"]) == ["rejected", "rejected", "completed"]
    assert r.summary["rejected"] == 2


# ------------------------------------------------------------------------------- configuration
def test_machine_without_lsf_tables_is_a_clear_error():
    with pytest.raises(ConfigError, match=r"has no \[lsf\] table") as e:
        simulate([job(0, 0, 1, 1)], machine=single_host(8), policy="ncsa-lsf")
    assert e.value.field == "lsf"


@pytest.mark.parametrize(
    ("change", "field", "text"),
    [
        ({"system_limits": {"xt": 3}}, "lsf.system_limits", "not a limit key"),
        ({"system_limits": {"mt": -1}}, "lsf.system_limits.mt", "integer >= 0"),
        ({"drain_wait": {"vst": 1}}, "lsf.drain_wait", "no drain wait for time class 'st'"),
        ({"size_classes": {"sj": [2]}}, "lsf.size_classes.sj", "[processors, GB]"),
        ({"size_classes": {"sj": [2, 4], "mj": [4, 2]}}, "lsf.size_classes", "at least"),
        ({"time_classes": {"vst": 0}}, "lsf.time_classes.vst", "positive number"),
        ({"user_limit": "3"}, "lsf.user_limit", "integer >= 0"),
        ({"priority_time_classes": ["zz"]}, "lsf.priority_time_classes", "unknown time class"),
        ({"colour": 1}, "lsf", "unknown key(s) colour"),
    ],
)
def test_bad_machine_tables_name_the_key(change, field, text):
    m = toy(host("a", 8, 8, ["sj"]), **change)
    with pytest.raises(ConfigError) as e:
        lsf_config(m)
    assert e.value.field == field
    assert text in str(e.value)
    assert str(e.value).startswith("toy.toml")


@pytest.mark.parametrize(
    ("lsf", "field", "text"),
    [
        ({"priority": ["xj"]}, "host[0].lsf.priority", "unknown size class(es) xj"),
        ({"priority": []}, "host[0].lsf.priority", "non-empty list"),
        ({"priority": ["sj", "sj"]}, "host[0].lsf.priority", "a size class twice"),
        ({"priority": ["sj"], "limits": {"sj": 1.5}}, "host[0].lsf.limits.sj", "integer"),
        ({"priority": ["sj"], "limit": {}}, "host[0].lsf", "unknown key(s) limit"),
    ],
)
def test_bad_host_tables_name_the_host_and_key(lsf, field, text):
    m = parse_machine(
        {"lsf": lsf_table(), "host": [{"name": "a", "procs": 8, "lsf": lsf}]}, "toy.toml"
    )
    with pytest.raises(ConfigError) as e:
        lsf_config(m)
    assert e.value.field == field
    assert text in str(e.value)


def test_retuning_is_a_toml_edit(tmp_path):
    # Appendix E style: lower the lj limit of the five "lj <= 3" hosts to 1, no code involved.
    with open(load_machine("o2k").source) as f:
        text = f.read()
    assert text.count("limits = { lj = 3, mj = 4 }") == 5
    tuned = tmp_path / "o2k-tuned.toml"
    tuned.write_text(text.replace("limits = { lj = 3, mj = 4 }", "limits = { lj = 1, mj = 4 }"))
    jobs = [job(i, 0, 8, 1, 2, mem_gb=5) for i in range(20)]  # twenty st-lj jobs at once
    at_once = {}
    for name in ("o2k", str(tuned)):
        r = simulate(jobs, machine=name, policy="ncsa-lsf")
        at_once[name] = int((r.jobs["start"] == 0).sum())
    assert at_once == {"o2k": 20, str(tuned): 1 + 1 + 6 + 1 + 1 + 1}


# ------------------------------------------------------------------------------- preset and metrics
def test_preset_and_params():
    pol = make_policy("ncsa-lsf")
    assert isinstance(pol, NCSALSF)
    assert pol.params == {
        "user_limit": None, "draining": True, "vst_blocking": "same-time-class",
        "arrival_blocking": "obey", "size_blocking": "lower-classes",
    }  # fmt: skip
    with pytest.raises(ConfigError):
        make_policy("ncsa-lsf", vst_blocking="sometimes")


def test_lsf_class_table_gives_mean_and_max_wait_per_class():
    m = toy(host("a", 8, 16, ["lj", "mj", "sj"]))
    jobs = [
        job(0, 0.0, 8, 1, 2),
        job(1, 0.1, 1, 1, 2),
        job(2, 0.2, 4, 1, 2),
        job(3, 0.3, 5, 1, 2),
        job(4, 0.4, 2, 1, 2, mem_gb=1.5),
    ]
    t, _ = run(m, jobs)
    table = lsf_class_table(t.reset_index(), m).set_index("class")
    assert list(table.index) == [
        f"{tc}_{sc}" for sc in ("sj", "mj", "lj") for tc in ("vst", "st", "mt", "lt")
    ]
    assert table.loc["st_sj", "jobs"] == 1
    assert table.loc["st_sj", "mean_wait"] == pytest.approx(1.9 * H)
    assert table.loc["st_mj", "jobs"] == 2  # J2 waited 1.8 h, J4 0.6 h
    assert table.loc["st_mj", "mean_wait"] == pytest.approx(1.2 * H)
    assert table.loc["st_mj", "max_wait"] == pytest.approx(1.8 * H)
    assert table.loc["st_lj", "max_wait"] == pytest.approx(0.7 * H)
    assert table.loc["vst_sj", "jobs"] == 0 and math.isnan(table.loc["vst_sj", "mean_wait"])


def test_job_classes_of_a_result_on_o2k():
    frame = pd.DataFrame(
        {
            "req_time": [5 * H, 50 * H, 401 * H, 1],
            "procs": [8, 16, 1, 65],
            "mem": [2048.0, 4096.0, 0.0, 0.0],
        }
    )
    assert list(job_classes(frame)) == ["vst_sj", "st_mj", "unclassified", "unclassified"]
