"""EQspatial-MinInterval (T§3.2.3, T§6.1): hand-computed schedules on tiny workloads.

Every expected number below is worked out by hand in the comments (linear
slowdown: a job of T seconds on P processors has work T*P and progresses at
rate p on p processors), or comes from an independent implementation written
in the test (round-robin equipartition, processor-sharing closed form).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.partitioning import partitioning_violations, resize_times
from o2ksim.policies import make_policy
from o2ksim.policies.equipartition import (
    CreditLedger,
    Deadlines,
    HostJob,
    HostLoad,
    RepartitionClock,
    choose_host,
    equi_level,
    equi_level_counts,
    equipartition,
    host_allocation,
)

G = KB_PER_GB


def one_host(procs: int, mem_gb: float = math.inf) -> MachineSpec:
    return MachineSpec("one", (HostSpec("h", procs, mem_gb * G if math.isfinite(mem_gb) else math.inf),))


def job(i, submit, procs, run, mem_gb=0.0, req=None):
    return JobSpec(i, float(submit), procs, int(mem_gb * G), float(req or run), float(run))


def run(jobs, machine, min_interval=0, long=None, explain=False):
    return simulate(
        jobs,
        machine=machine,
        policy="eqspatial",
        policy_params={"min_interval": min_interval, "long_job_threshold": long},
        explain=explain,
    )


def ends(result) -> dict[int, float]:
    return dict(zip(result.jobs.job_id, result.jobs.end, strict=True))


def alloc_at(result, t: float) -> dict[int, int]:
    s = result.segments
    live = s[(s.start <= t) & (s.end > t)]
    return dict(zip(live.job_id, live.procs, strict=True))


# ------------------------------------------------------------------------------------ pure parts
def round_robin(procs: int, requests: list[int]) -> list[int]:
    """Independent equipartition: hand out one processor at a time to the poorest job below its request."""
    alloc = [0] * len(requests)
    for _ in range(procs):
        below = [i for i in range(len(requests)) if alloc[i] < requests[i]]
        if not below:
            break
        i = min(below, key=lambda k: (alloc[k], k))
        alloc[i] += 1
    return alloc


def test_equipartition_by_hand():
    assert equipartition(10, [8, 8, 8]) == [4, 3, 3]  # 10 = 3*3 + 1, the +1 to the first
    assert equipartition(10, [1, 8, 8]) == [1, 5, 4]  # a capped job's spare share goes to the others
    assert equipartition(10, [2, 3]) == [2, 3]  # requests fit: every job its request
    assert equipartition(16, [3, 3, 16, 16]) == [3, 3, 5, 5]
    # the +1 goes to the smallest preference key (e.g. those already holding more)
    assert equipartition(10, [8, 8, 8], prefer=[(0,), (-4,), (0,)]) == [3, 4, 3]


@settings(max_examples=200, deadline=None)
@given(procs=st.integers(0, 64), requests=st.lists(st.integers(1, 40), min_size=1, max_size=12))
def test_equipartition_matches_round_robin(procs, requests):
    assert equipartition(procs, requests) == round_robin(procs, requests)
    # the level of true equi-allocation, from the list and from counts, gives the round-robin
    # shares in the limit: sum of min(P, L) = procs whenever the requests do not fit
    from collections import Counter

    level = equi_level(procs, requests)
    assert equi_level_counts(procs, Counter(requests)) == pytest.approx(level)
    if sum(requests) > procs:
        assert sum(min(r, level) for r in requests) == pytest.approx(procs)


def test_equi_level_by_hand():
    # 10 processors, requests 1, 8, 8: the 1 is capped, 9 left for two jobs: 4.5 each
    assert equi_level(10, [1, 8, 8]) == pytest.approx(4.5)
    assert equi_level(10, [2, 3]) == math.inf
    assert equi_level(12, [4, 4, 4]) == math.inf  # exactly fits
    assert equi_level(12, [6, 6, 6]) == pytest.approx(4.0)


def test_host_allocation_privileged_jobs_keep_one_processor_for_others():
    # catching-up job c wants 16 of 16 but must leave 1 for a and 1 for b
    got = host_allocation(16, [HostJob("a", 8), HostJob("b", 8), HostJob("c", 16, privileged=1)])
    assert got == {"c": 14, "a": 1, "b": 1}
    # catch-up before long-running; long-running ordered by start time
    got = host_allocation(
        16,
        [HostJob("l2", 8, 2, order=5.0), HostJob("l1", 8, 2, order=1.0), HostJob("c", 4, 1),
         HostJob("e", 16)],
    )  # fmt: skip
    # c: 4 (12 left, 3 jobs still to serve); l1: 8 (4 left); l2: min(8, 4-1) = 3; e: 1
    assert got == {"c": 4, "l1": 8, "l2": 3, "e": 1}
    with pytest.raises(ValueError):
        host_allocation(2, [HostJob("a", 1), HostJob("b", 1), HostJob("c", 1)])


def test_choose_host_largest_ratio_among_hosts_with_memory():
    loads = [
        HostLoad("a", 128, 128, 192, 8 * G, 3),
        HostLoad("b", 128, 100, 100, 8 * G, 2),  # catching-up jobs hold 28 of its 128
        HostLoad("c", 128, 128, 0, 1 * G, 0),  # the best ratio, but 1 GB free
        HostLoad("d", 64, 64, 0, 64 * G, 0),
    ]
    # 64 procs, 4 GB: a 128/256 = 0.5, b 100/164 = 0.61, d 64/64 = 1 -> d
    assert choose_host(loads, 64, 4 * G).name == "d"
    # 65 procs: d has only 64 processors; b 100/165 = 0.606 > a 128/257 = 0.498 -> b
    assert choose_host(loads, 65, 4 * G).name == "b"
    # ties go to the host listed first: two empty hosts
    assert choose_host([HostLoad("x", 8, 8, 0, G, 0), HostLoad("y", 8, 8, 0, G, 0)], 8, 0).name == "x"
    assert choose_host(loads, 1, 100 * G) is None
    full = [HostLoad("x", 2, 2, 2, 8 * G, 2)]  # two jobs on two processors: no room for a third
    assert choose_host(full, 1, 0) is None


def test_credit_ledger_and_clock_and_deadlines():
    ledger = CreditLedger()
    ledger.wait(7, 4)
    ledger.set_level(0.0, 4, {4: 2})  # two 4-proc jobs on 4 processors: level 2
    ledger.accrue(10.0)
    ledger.set_level(10.0, 4, {4: 3})  # a third job: level 4/3
    ledger.accrue(13.0)
    assert ledger.stop(7) == pytest.approx(2 * 10 + 4 / 3 * 3)
    clock = RepartitionClock(300)
    assert clock.can("h", 0.0)
    clock.mark("h", 10.0)
    assert not clock.can("h", 309.0) and clock.can("h", 310.0)
    assert clock.next_allowed("h") == 310.0
    d = Deadlines()
    assert d.set(1, 5.0) and not d.set(1, 5.0) and d.set(1, 7.0)
    assert d.due(6.0) == []  # the 5.0 entry was superseded
    assert d.due(7.0) == [1]


# ------------------------------------------------------------------------------------ schedules
THREE = [job(1, 0, 8, 100), job(2, 10, 8, 100), job(3, 20, 2, 30)]


def test_equipartition_on_one_host_min_interval_0():
    # 0-10 J1 alone on 8 (80 done).  10: J2 arrives, 4/4.  20: J3 (2 procs) arrives:
    # equipartition(8, [8, 8, 2]) = 3, 3, 2.  J3 needs 60 -> ends 50.  At 50: J1 has done
    # 80+40+90 = 210, J2 40+90 = 130; 4/4 again: J1 needs 590 more -> 50 + 590/4 = 197.5;
    # J2 then has 130+590 = 720, needs 80 on 8 -> 207.5.
    r = run(THREE, one_host(8), min_interval=0)
    assert ends(r) == pytest.approx({1: 197.5, 2: 207.5, 3: 50.0})
    assert alloc_at(r, 20) == {1: 3, 2: 3, 3: 2}
    assert r.summary["repartitions"] == 4  # at 10, 20, 50, 197.5 (J1's start at 0 resizes nobody)
    assert r.summary["resizes"] == 6  # J1 8->4->3->4, J2 4->3->4->8
    # wait = response - actual runtime for every resized job (T§3.5)
    assert r.jobs.set_index("job_id").wait.to_dict() == pytest.approx({1: 97.5, 2: 97.5, 3: 0.0})


def test_min_interval_delays_repartitioning_and_leaves_released_processors_idle():
    # MinInterval 60.  10: J2 arrives, first repartitioning (4/4), next allowed at 70.
    # 20: J3 arrives, no free processor: it waits on the host until the timer at 70, when
    # 3/3/2.  J3 ends at 100; its 2 processors stay idle until 130, then 4/4.
    # J1 by 130: 80 + 60*4 + 60*3 = 500, needs 300 more -> 130 + 75 = 205.
    # J2 by 205: 60*4 + 60*3 + 75*4 = 720 -> 80 more on 8: 215.
    r = run(THREE, one_host(8), min_interval=60)
    assert ends(r) == pytest.approx({1: 205.0, 2: 215.0, 3: 100.0})
    assert r.jobs.set_index("job_id").start[3] == 70.0
    assert alloc_at(r, 100) == {1: 3, 2: 3}  # 2 idle processors
    assert resize_times(r.segments) == {"h": [10.0, 70.0, 130.0, 205.0]}
    assert partitioning_violations(r.jobs, r.segments, one_host(8), min_interval=60) == []


def test_job_placed_on_blocked_host_runs_on_free_processors():
    # MinInterval 60.  J1 (4 procs) and J2 (8) share 8 as 4/4 at 10 (no resize: J1 is capped,
    # so no repartitioning is counted).  20: J3 (2 procs): 3/3/2, the first repartitioning,
    # next allowed at 80.  J3 ends at 30 (20 of work), its 2 processors idle.  40: J4 (4 procs)
    # arrives: the host may not repartition, so J4 runs on the 2 free processors.
    # 80: equipartition(8, [4, 8, 4]) = 3, 3, 2 with the +1s to the jobs holding most
    # (J1, J2 hold 3, J4 holds 2): nothing changes, so no resize at 80.
    jobs = [job(1, 0, 4, 400), job(2, 10, 8, 400), job(3, 20, 2, 10), job(4, 40, 4, 400)]
    r = run(jobs, one_host(8), min_interval=60)
    assert alloc_at(r, 10) == {1: 4, 2: 4}
    assert alloc_at(r, 20) == {1: 3, 2: 3, 3: 2}
    assert alloc_at(r, 40) == {1: 3, 2: 3, 4: 2}
    assert alloc_at(r, 85) == {1: 3, 2: 3, 4: 2}
    assert resize_times(r.segments)["h"][:1] == [20.0]
    assert r.summary["started_on_free"] == 1
    assert partitioning_violations(r.jobs, r.segments, one_host(8), min_interval=60) == []


def test_placement_uses_the_largest_ratio_and_simultaneous_arrivals_in_submission_order():
    m = MachineSpec("two", (HostSpec("a", 8, 4 * G), HostSpec("b", 4, 4 * G)))
    # t=0, in submission order: J1 (4): a 8/4=2 > b 4/4=1 -> a.  J2 (2): a 8/6=1.33 < b 4/2=2
    # -> b.  J3 (4): a 8/8=1 > b 4/6 -> a.  J4 (8 procs, 1 GB): b has only 4 processors; a
    # 8/16 -> a.  One repartitioning of a at t=0 covers J1, J3 and J4: equipartition(8,
    # [4, 4, 8]) = 3, 3, 2 (the +1s to the earliest submitted).
    jobs = [job(1, 0, 4, 100, 1), job(2, 0, 2, 100, 1), job(3, 0, 4, 100, 1), job(4, 0, 8, 100, 1)]
    r = run(jobs, m, min_interval=300)
    hosts = r.jobs.set_index("job_id").host.to_dict()
    assert hosts == {1: "a", 2: "b", 3: "a", 4: "a"}
    assert alloc_at(r, 0) == {1: 3, 2: 2, 3: 3, 4: 2}
    assert r.summary["placed_on_arrival"] == 4


def test_catch_up_credit_by_hand():
    # One host, 4 processors, 2 GB.  J1 (4 procs, 2 GB, 100 s) runs alone 0-100.  J2 (4 procs,
    # 1 GB, 100 s) finds no memory and waits; true equi-allocation of 4 processors between J1
    # and J2 gives it 2, so by t=100 it has earned 2*100 = 200 processor-seconds of credit.
    # t=100: J1 leaves, J2 is placed, then J3 (4 procs, 1 GB, 100 s) arrives.  J2 catches up
    # on its full request but must leave one processor to J3: 3 and 1.  J2 has received its
    # 200 at 100 + 200/3 = 166.67, joins the equipartition: 2/2.  J2 owes 200 -> 266.67.
    # J3: 66.67 + 200 = 266.67 done, 133.33 left on 4 -> 300.
    m = one_host(4, 2)
    jobs = [job(1, 0, 4, 100, 2), job(2, 0, 4, 100, 1), job(3, 100, 4, 100, 1)]
    r = run(jobs, m, min_interval=0)
    assert ends(r) == pytest.approx({1: 100.0, 2: 800 / 3, 3: 300.0})
    assert alloc_at(r, 100) == {2: 3, 3: 1}
    assert alloc_at(r, 170) == {2: 2, 3: 2}
    credit = r.jobs.set_index("job_id").catchup_credit
    assert credit.to_dict() == pytest.approx({1: 0.0, 2: 200.0, 3: 0.0})
    assert r.summary["catchups"] == 1 and r.summary["waited"] == 1
    assert partitioning_violations(r.jobs, r.segments, m, min_interval=0, credit=credit) == []
    # without the credit the checker sees J2's 3 processors as an unequal share
    assert partitioning_violations(r.jobs, r.segments, m, min_interval=0, credit=credit * 0) != []


def test_long_running_jobs_keep_their_request():
    # One host of 8.  J1 (8 procs, 300 s), J2 (8 procs, 100 s) arrives at 50.
    # Plain: 4/4 from 50; J2 needs 800 -> ends 250; J1 has 400 + 800 = 1200, 1200 left on 8
    # -> 400.  With a 100 s threshold: at 100 J1 has run 100 s and gets min(8, 8-1) = 7, J2 1
    # (J2 passes the threshold at 150 too, but is served after J1, which started first).
    # J1: 400 + 200 done at 100, 1800 left on 7 -> 100 + 257.14 = 357.14; J2 then has
    # 200 + 257.14 done, 342.86 left on 8 -> 400.
    jobs = [job(1, 0, 8, 300), job(2, 50, 8, 100)]
    plain = run(jobs, one_host(8), min_interval=0)
    assert ends(plain) == pytest.approx({1: 400.0, 2: 250.0})
    long = run(jobs, one_host(8), min_interval=0, long=100)
    assert ends(long) == pytest.approx({1: 100 + 1800 / 7, 2: 400.0})
    assert alloc_at(long, 120) == {1: 7, 2: 1}
    assert long.summary["long_jobs"] == 2
    assert (
        partitioning_violations(long.jobs, long.segments, one_host(8), min_interval=0, long_threshold=100)
        == []
    )


@settings(max_examples=20, deadline=None)
@given(runtimes=st.lists(st.integers(1, 500), min_size=1, max_size=4))
def test_equipartitioning_is_processor_sharing_for_full_machine_jobs(runtimes):
    # n jobs each asking for the whole 12-processor host, all at t=0: equipartitioning is
    # processor sharing (12 is divisible by 1..4).  Closed form, runtimes sorted T1 <= ... <= Tn:
    # job k completes at C_k = T1 + ... + Tk + (n - k) * Tk.
    jobs = [job(i + 1, 0, 12, t) for i, t in enumerate(runtimes)]
    r = run(jobs, one_host(12), min_interval=0)
    order = sorted(range(len(runtimes)), key=lambda i: (runtimes[i], i))
    n = len(runtimes)
    expected = {}
    done = 0.0
    for k, i in enumerate(order, start=1):
        done += runtimes[i]
        expected[i + 1] = done + (n - k) * runtimes[i]
    assert ends(r) == pytest.approx(expected)


def test_presets_and_parameters():
    assert make_policy("eqspatial-5m").min_interval == 300.0
    assert make_policy("eqspatial-0m").min_interval == 0.0
    p = make_policy("eqspatial-5m-50hr")
    assert (p.min_interval, p.long_threshold) == (300.0, 50 * 3600.0)
    assert make_policy("eqspatial-5m", min_interval="90s").min_interval == 90.0
    from o2ksim.errors import ConfigError

    with pytest.raises(ConfigError):
        make_policy("eqspatial", min_interval="-5m")
    with pytest.raises(ConfigError):
        make_policy("eqspatial", long_job_threshold=0)


def test_explain_shows_each_repartitioning_with_its_reason():
    from o2ksim.explain import explain

    result, log = explain("explain-eqspatial")
    text = log.text()
    # J3 goes to a: ratios a 8/(8+4) = 0.67 > b 4/(4+4) = 0.50; a repartitions at 0:02
    assert "0:02:00  J1    resized     8 -> 4 procs: repartitioning a (J3 placed): equal share 4" in text
    assert "a 8/(8+4)=0.67, b 4/(4+4)=0.50" in text
    # J5 arrives at 0:04 on a, which may repartition again only at 0:07 (MinInterval 5 min)
    assert "pass requested at 0:07:00 on a (repartition: J5 placed; a last repartitioned at 0:02:00)" in text
    # J4 leaves b at 0:07: its processors idle until b may repartition at 0:08
    assert "0:08:00  J2    resized     2 -> 4 procs: repartitioning b (J4 left)" in text
    # J6 (1.5 GB) fits nowhere: at 0:11 J2 has run 10 min (t = 10 q) and is preempted for J6's
    # one-minute trial, which fails (J6 runs 10 min); J2 resumes at 0:12 on its 4 processors
    assert "0:11:00  J2    preempted   for J6's trial" in text
    assert "0:12:00  J2    resumes" in text
    # J6's credit, true equi-allocation of 12 processors: 0:05-0:07 six jobs in the system
    # (requests 8,4,4,2,4,4): level 2, 120 s x 2 = 240; 0:07-0:24:30 (J4 gone, J2 ends 1 min
    # later because of the trial: 4 x 20 min of work, 2 min at 2 procs, 1 min preempted)
    # five jobs (8,4,4,4,4): level 2.4, 1050 s x 2.4 = 2520.  Total 2760.
    assert "catches up the 2760 processor-seconds" in text
    assert result.summary["immediate_service_jobs"] == 1
    assert result.summary["immediate_service_preempting"] == 1
    assert result.summary["repartitions"] == 8
    assert resize_times(result.segments)["a"] == [120.0, 420.0, 1500.0, 2220.0, 2660.0, 2960.0]


def test_host_demand_table_by_hand():
    import pandas as pd

    from o2ksim.partitioning import host_demand

    jobs = pd.DataFrame({"job_id": [1, 2, 3], "procs": [8, 8, 9], "submit": [0.0] * 3,
                         "end": [100.0, 50.0, 25.0]})  # fmt: skip
    seg = pd.DataFrame({"job_id": [1, 1, 2, 3], "host": ["h"] * 4, "start": [0.0, 10.0, 0.0, 0.0],
                        "end": [10.0, 100.0, 50.0, 25.0], "procs": [4, 8, 4, 1]})  # fmt: skip
    # 0-25: 8+8+9 = 25 > 3*8 -> "> 3P"; 25-50: 16 -> "P+1 - 2P"; 50-100: 8 -> "<= P"
    row = host_demand(jobs, seg, one_host(8)).iloc[0]
    assert (row["<= P"], row["P+1 - 2P"], row["2P+1 - 3P"], row["> 3P"]) == (0.5, 0.25, 0.0, 0.25)


def test_parameters_from_the_cli_and_a_scenario(tmp_path):
    import json

    from o2ksim.cli import main

    swf = tmp_path / "t.swf"
    # three jobs on one 8-processor host: THREE above, as SWF lines (submit, run, procs, req)
    swf.write_text(
        "; MaxProcs: 8\n"
        "1 0 -1 100 8 -1 -1 8 100 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        "2 10 -1 100 8 -1 -1 8 100 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        "3 20 -1 30 2 -1 -1 2 30 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
    )
    out = tmp_path / "out"
    code = main(["run", "--trace", str(swf), "--policy", "eqspatial-5m", "--set", "min_interval=60",
                 "--out", str(out), "-q"])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    # as test_min_interval_delays_repartitioning...: repartitionings at 10, 70, 130, 205
    assert summary["repartitions"] == 4 and summary["resizes"] == 6
    import pandas as pd

    jobs = pd.read_csv(out / "jobs.csv")
    assert jobs.set_index("job_id").end.to_dict() == pytest.approx({1: 205.0, 2: 215.0, 3: 100.0})
    assert {"mean_procs", "proc_seconds", "catchup_credit", "immediate_service"} <= set(jobs.columns)

    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'name = "s"\ndescription = "d"\nsource = "T§3.2.3"\n'
        '[machine]\nname = "one"\n[[machine.host]]\nname = "h"\nprocs = 8\n'
        '[[policy]]\nname = "eqspatial-5m"\nparams = { min_interval = "1m" }\n'
        "[workload]\njob = [\n"
        '  { id = 1, submit = 0, procs = 8, runtime = 100 },\n'
        '  { id = 2, submit = 10, procs = 8, runtime = 100 },\n'
        '  { id = 3, submit = 20, procs = 2, runtime = 30 },\n]\n'
    )
    from o2ksim.explain import explain

    result, _ = explain(scenario)
    assert dict(zip(result.jobs.job_id, result.jobs.end, strict=True)) == pytest.approx(
        {1: 205.0, 2: 215.0, 3: 100.0}
    )


def test_report_partitioning_view():
    from o2ksim.report.partitioning_view import partitioning_table, section

    r = run(THREE, one_host(8), min_interval=0)
    table = partitioning_table({"EQ": [r.jobs]})
    row = table.iloc[0]
    # J1, J2 resized 3 times each, J3 never; shares 800/197.5/8 = 0.506 (twice) and 1
    assert row["jobs"] == 3 and row["resized jobs (%)"] == pytest.approx(200 / 3)
    assert row["resizes per resized job"] == 3
    assert row["mean share of request"] == pytest.approx((800 / 197.5 / 8 + 800 / 197.5 / 8 + 1) / 3)
    assert "Dynamic partitioning" in section(table, lambda df: df.to_html())
    plain = simulate(THREE, machine=one_host(8), policy="fcfs-backfill")
    assert partitioning_table({"bf": [plain.jobs]}).empty


def test_a_catching_up_job_past_the_long_threshold_is_deducted_once():
    # Found by the interval property test (tests/test_interval_quiet_eqspatial.py): one host
    # of 4 processors and 8 GB, long_job_placement = deduct, threshold 30 s, no immediate
    # service.  A (2 procs, 6 GB) runs 0-100; B (1 proc, 6 GB, 200 s) waits for memory from
    # 5 and is placed at 100 with 95 processor-seconds of credit, catching up until 195;
    # at 130 it passes the threshold while still catching up.  C (1 proc) arrives at 140:
    # B counts once, as catching up (host 4 - 1 = 3 processors, 0 requested: ratio 3/1);
    # deducted twice, the requested processors were -1 and the ratio divided by zero.
    jobs = [job(1, 0, 2, 100, mem_gb=6), job(2, 5, 1, 200, mem_gb=6), job(3, 140, 1, 20)]
    params = {"min_interval": 0, "long_job_threshold": 30, "long_job_placement": "deduct",
              "immediate_service": "off"}  # fmt: skip
    r = simulate(jobs, machine=one_host(4, mem_gb=8), policy="eqspatial", policy_params=params)
    got = r.jobs[["job_id", "start", "end", "catchup_credit"]].values.tolist()
    assert got == [[1, 0.0, 100.0, 0.0], [2, 100.0, 300.0, 95.0], [3, 140.0, 160.0, 0.0]]
