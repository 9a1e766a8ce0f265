"""Strict FCFS and FCFS-backfill (EASY): hand-computed schedules, hosts and memory, the oracle.

The hand-computed cases follow thesis Figures 1(a,b) and 2 (T§3.2.1): a job
that cannot start gets a reservation; a lower-priority job is backfilled if it
ends before the reservation or fits in the processors the reserved job leaves
over; the reservation slides earlier when a running job ends early.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import job, starts

from o2ksim import simulate
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec, single_host

SHARED = Path(__file__).resolve().parents[2] / "shared"




FIG1 = [
    job(1, 0, 6, 100),  # runs 0..100
    job(2, 0, 2, 40),  # runs 0..40
    job(3, 1, 8, 50),  # needs 8: reservation at 100 (when J1 and J2 are both gone); extra = 2
    job(4, 2, 3, 10),  # does not fit the 2 idle processors
    job(5, 3, 2, 200),  # runs past the reservation but fits in the extra 2 processors: backfilled
    job(6, 4, 2, 50),  # at 40 (J2 ends): ends at 90 <= 100, backfilled
    job(7, 5, 2, 70),  # at 40/90: would end after 100 and no extra is left: waits
]


def test_fcfs_backfill_figure_1_by_hand():
    r = simulate(FIG1, machine=single_host(10), policy="fcfs-backfill")
    assert starts(r) == {1: 0, 2: 0, 3: 100, 4: 150, 5: 3, 6: 40, 7: 150}


def test_strict_fcfs_never_overtakes():
    r = simulate(FIG1, machine=single_host(10), policy="fcfs")
    s = starts(r)
    assert s == {1: 0, 2: 0, 3: 100, 4: 150, 5: 150, 6: 150, 7: 150}
    order = sorted(s, key=lambda j: (s[j], j))
    assert order == sorted(order)


def test_reservation_slides_when_a_job_ends_early_figure_2():
    jobs = [
        job(1, 0, 4, 100),
        job(2, 0, 4, 50, run=20),  # predicted to end at 50, really ends at 20
        job(3, 1, 4, 10),  # reserved for 50; slides to 20 when J2 leaves early
        job(4, 2, 4, 5),
    ]
    r = simulate(jobs, machine=single_host(8), policy="fcfs-backfill")
    assert starts(r) == {1: 0, 2: 0, 3: 20, 4: 30}


def test_overrunning_job_is_predicted_to_end_now_so_reservations_never_sit_in_the_past():
    jobs = [
        job(1, 0, 4, 10, run=30),  # asked for 10 s, runs 30 s
        job(2, 1, 8, 10),  # reservation: at 10 predicted, then "now" while J1 overruns
        job(3, 12, 4, 5),  # at 12 free = 4, J2's reservation is "now": J3 would delay it... by 5 s
    ]
    r = simulate(jobs, machine=single_host(8), policy="fcfs-backfill")
    assert starts(r) == {1: 0, 2: 30, 3: 40}


def two_hosts():
    return MachineSpec(
        "pair",
        (HostSpec("small", 8, 4 * KB_PER_GB), HostSpec("big", 8, 16 * KB_PER_GB)),
    )


def test_fewest_free_processors_host_and_memory_fit():
    jobs = [
        job(1, 0, 2, 100, mem_gb=1),  # both hosts fit, tie on free processors: first host
        job(2, 1, 4, 100, mem_gb=8),  # only the big host has the memory
        job(3, 2, 2, 100, mem_gb=1),  # small has 6 free, big has 4 free: big
        job(4, 3, 1, 100, mem_gb=4),  # small has 3 GB free only: big
    ]
    r = simulate(jobs, machine=two_hosts(), policy="fcfs-backfill")
    hosts = dict(zip(r.jobs["job_id"], r.jobs["host"], strict=True))
    assert hosts == {1: "small", 2: "big", 3: "big", 4: "big"}
    assert set(r.jobs["start"]) == {0, 1, 2, 3}


def test_memory_blocks_a_start_and_the_reservation_counts_memory():
    jobs = [
        job(1, 0, 1, 100, mem_gb=12),  # 4 GB left on the only host
        job(2, 1, 1, 10, mem_gb=14),  # processors free, memory not: reservation at 100, 2 GB spare then
        job(3, 2, 1, 200, mem_gb=3),  # fits now, but would hold 3 GB at 100 > 2 GB spare: waits
        job(4, 3, 1, 50, mem_gb=2),  # fits now and ends before 100: backfilled
        job(5, 4, 1, 500, mem_gb=1),  # fits now and in the 2 GB spare at 100: backfilled
    ]
    machine = MachineSpec("m", (HostSpec("h", 8, 16 * KB_PER_GB),))
    r = simulate(jobs, machine=machine, policy="fcfs-backfill")
    assert starts(r) == {1: 0, 2: 100, 3: 110, 4: 3, 5: 4}


def test_reservation_goes_to_the_host_that_can_start_earliest():
    machine = MachineSpec("pair", (HostSpec("a", 8), HostSpec("b", 8)))
    jobs = [
        job(1, 0, 8, 100),  # host a busy until 100
        job(2, 0, 6, 30),  # host b: 6 busy until 30
        job(3, 1, 8, 10),  # earliest on b at 30
        job(4, 2, 2, 50),  # fits b's 2 free, but would delay J3 on b (ends 52 > 30): no
    ]
    r = simulate(jobs, machine=machine, policy="fcfs-backfill")
    s = starts(r)
    assert s[3] == 30 and dict(zip(r.jobs["job_id"], r.jobs["host"], strict=True))[3] == "b"
    assert s[4] == 40


def test_jobs_too_big_for_every_host_are_rejected_with_reason():
    r = simulate([job(1, 0, 9, 10), job(2, 0, 2, 10, mem_gb=20)], machine=two_hosts(), policy="fcfs")
    t = r.jobs.set_index("job_id")
    assert list(t["status"]) == ["rejected", "rejected"]
    assert "largest host has 8" in t.loc[1, "reason"] and "memory" in t.loc[2, "reason"]
    assert r.summary["rejected"] == 2


def _oracle():
    path = SHARED / "checks" / "easy_oracle.py"
    if not path.exists():
        pytest.skip("../shared/checks is absent")
    spec = importlib.util.spec_from_file_location("easy_oracle", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["easy_oracle"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.traces
@pytest.mark.parametrize(("policy", "mode"), [("fcfs", "fcfs"), ("fcfs-backfill", "easy")])
def test_matches_independent_oracle_on_kth(tmp_path, policy, mode):
    trace = SHARED / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not trace.exists():
        pytest.skip("../shared/traces is absent")
    oracle = _oracle()
    from o2ksim.workloads.swf import read_swf, write_swf

    head = read_swf(trace, limit=3000)
    path = tmp_path / "kth3000.swf"
    write_swf(head, path)
    jobs, _ = oracle.read_swf(str(path))
    expected = oracle.simulate(jobs, 100, mode)
    r = simulate(path, policy=policy)
    got = starts(r)
    same = sum(1 for jid, (_s, st, _e, _p) in expected.items() if got.get(jid) == st)
    assert same == len(expected) == 3000
