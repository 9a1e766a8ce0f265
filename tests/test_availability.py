"""Capacity over time: availability files, periods of processors down drained by the engine.

The schedules below are worked out by hand on a 10-processor host.  The
engine drains: at a period's start the processors it takes stop taking new
jobs, the running jobs finish, and the processors are down until its end,
when a pass is asked for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DRAIN_JOBS, write_drain_trace

import o2ksim
from o2ksim.analysis.validate import inferred_availability, validate
from o2ksim.analysis.validate_availability import RecordedSchedule, suspected_outages
from o2ksim.availability import Outage, load_availability, write_availability
from o2ksim.cli import main
from o2ksim.engine.core import Simulation
from o2ksim.errors import O2KSimError
from o2ksim.invariants import violations
from o2ksim.jobs import JobSpec
from o2ksim.machine import parse_machine, single_host
from o2ksim.policies import make_policy

MACHINE = single_host(10)


def job(i: int, submit: float, procs: int, run: float) -> JobSpec:
    return JobSpec(i, submit, procs, 0, run, run)


def schedule(jobs, policy, outages=(), **kw) -> tuple[dict[int, tuple[float, float]], Simulation]:
    sim = Simulation(MACHINE, jobs, make_policy(policy), availability=outages, **kw)
    sim.run()
    return {j.id: (j.end - j.spec.run_time, j.end) for j in sim.jobs.values()}, sim


# Jobs 1 and 2 fill the machine from 0 to 100.  Four processors go down from 50 to 300:
# the drain waits for jobs 1 and 2 to end at 100, then holds 4 of the 10 processors.
# Job 3 (8 procs) needs more than the 6 left: it waits until 300.  Job 4 (2 procs, 20 s):
# under FCFS it waits behind job 3 (starts at 300, beside it); under EASY it starts at 100
# on the 6 processors left (job 3 cannot fit before 300, so it holds no reservation that
# job 4 could delay).  Without the period both start at 100.
DRAIN = [job(j, s, p, r) for j, s, p, r in DRAIN_JOBS]
DOWN = (Outage("machine", 50, 300, 4),)


@pytest.mark.parametrize(
    ("policy", "outages", "starts"),
    [
        ("fcfs", (), {1: 0, 2: 0, 3: 100, 4: 100}),
        ("fcfs", DOWN, {1: 0, 2: 0, 3: 300, 4: 300}),
        ("fcfs-backfill", (), {1: 0, 2: 0, 3: 100, 4: 100}),
        ("fcfs-backfill", DOWN, {1: 0, 2: 0, 3: 300, 4: 100}),
    ],
)
def test_a_drained_period_delays_exactly_the_jobs_worked_out_by_hand(policy, outages, starts):
    got, sim = schedule(DRAIN, policy, outages)
    assert {j: s for j, (s, _e) in got.items()} == starts
    if outages:
        assert sim.outages[0].held_from == 100  # drained when jobs 1 and 2 ended


def test_processors_draining_take_no_new_job():
    # 8 processors go down from 50 to 80 while job 1 runs on 6 until 100: the drain never
    # completes and is called off at 80.  Job 2 (2 procs, submitted at 55) would fit the 4
    # idle processors, but they are being drained: it starts at 80, not 55.
    jobs = [job(1, 0, 6, 100), job(2, 55, 2, 10)]
    got, sim = schedule(jobs, "fcfs", (Outage("machine", 50, 80, 8),))
    assert got[2][0] == 80
    assert sim.outages[0].held_from is None
    got, _ = schedule(jobs, "fcfs")
    assert got[2][0] == 55


def test_reservations_do_not_count_on_processors_down():
    # Job 1 fills the machine until 100; 4 processors go down from 50 to 1000.  Job 2 (8 procs)
    # arrives at 60: only 6 processors will be up, so no reservation can be placed before
    # 1000.  Job 3 (6 procs, 500 s) arrives at 61 and starts at 100 on the 6 left; were the
    # drained processors counted as coming back at 100, job 2 would be reserved there and
    # job 3 (ending at 600) would have to wait.  Job 2 starts at 1000, when they are back.
    jobs = [job(1, 0, 10, 100), job(2, 60, 8, 10), job(3, 61, 6, 500)]
    got, _ = schedule(jobs, "fcfs-backfill", (Outage("machine", 50, 1000, 4),))
    assert got[3][0] == 100 and got[2][0] == 1000
    # a job that fits what stays up is reserved and not delayed by a backfilled one:
    # job 2 now needs 6; it is reserved at 100 and job 3 (6 procs) must wait for it
    jobs = [job(1, 0, 10, 100), job(2, 60, 6, 10), job(3, 61, 6, 500)]
    got, _ = schedule(jobs, "fcfs-backfill", (Outage("machine", 50, 1000, 4),))
    assert got[2][0] == 100 and got[3][0] == 110


def test_with_a_fixed_interval_the_next_tick_sees_the_processors_back():
    # passes every 60 s (0, 60, 120, ...); the whole host is down 30-130, so job 1 (submitted
    # at 40) starts at the first tick after 130: 180
    got, _ = schedule([job(1, 40, 2, 10)], "fcfs", (Outage("machine", 30, 130, 10),), interval=60.0)
    assert got[1][0] == 180


def test_no_over_commit_counting_the_periods_down():
    """Random workloads and random overlapping periods under several policies: no job starts
    on processors down or draining, no host holds more than it has."""
    rng = np.random.default_rng(7)
    machine = single_host(32)
    for seed in range(4):
        n = 150
        submit = np.cumsum(rng.exponential(200, n))
        specs = [
            JobSpec(i + 1, float(submit[i]), int(rng.choice([1, 2, 4, 8, 16, 32])), 0,
                    float(r * rng.uniform(1, 3)), float(r))
            for i, r in enumerate(rng.integers(60, 3000, n))
        ]  # fmt: skip
        outages = tuple(
            Outage("machine", float(s), float(s + rng.integers(600, 20000)), int(rng.integers(1, 6)))  # six overlap at most 30 of 32
            for s in rng.uniform(0, submit[-1], 6)
        )
        for policy in ("fcfs", "fcfs-backfill", "lxfw-backfill", "sjf-backfill", "lxfw-backfill-immediate"):
            r = o2ksim.simulate(specs, machine, policy, availability=outages, seed=seed)
            assert violations(r.jobs, r.segments, machine, [s.job_id for s in specs], availability=outages) == []
            assert (r.jobs["status"] == "completed").all()


def test_a_policy_partitioning_each_hosts_full_size_is_refused():
    with pytest.raises(O2KSimError, match="eqspatial-5m partitions each host's full size"):
        o2ksim.simulate(DRAIN, MACHINE, "eqspatial-5m", availability=DOWN)


def test_the_check_catches_a_start_on_processors_down():
    """The invariant can fail: a hand-made schedule that starts a job on a drained processor."""
    jobs = pd.DataFrame({"job_id": [1, 2], "submit": [0.0, 0.0], "start": [0.0, 60.0], "end": [100.0, 70.0],
                         "procs": [6, 2], "run_time": [100.0, 10.0], "status": ["completed"] * 2,
                         "restarts": [0, 0], "host": ["machine"] * 2})  # fmt: skip
    segments = pd.DataFrame({"job_id": [1, 2], "host": ["machine"] * 2, "start": [0.0, 60.0],
                             "end": [100.0, 70.0], "procs": [6, 2], "mem": [0.0, 0.0]})  # fmt: skip
    down = (Outage("machine", 50, 80, 8),)
    assert violations(jobs, segments, MACHINE) == []
    assert any("down" in p for p in violations(jobs, segments, MACHINE, availability=down))


# ---------------------------------------------------------------------------------- the file
TWO_HOSTS = parse_machine({"name": "pair", "host": [{"name": "a", "procs": 8}, {"name": "b", "procs": 4}]})


def test_availability_file_is_read_with_durations_all_and_comments(tmp_path: Path):
    f = tmp_path / "down.csv"
    f.write_text("# maintenance\nhost,from,to,procs\na,1d,26h,all  # whole host\n\nb,3600,7200,2\n")
    assert load_availability(f, TWO_HOSTS) == (
        Outage("b", 3600, 7200, 2),
        Outage("a", 86400, 86400 + 7200, 8),
    )
    back = write_availability(load_availability(f, TWO_HOSTS), tmp_path / "again.csv")
    assert load_availability(back, TWO_HOSTS) == load_availability(f, TWO_HOSTS)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("host,from,to\n", "down.csv:1: the header must be host,from,to,procs"),
        ("host,from,to,procs\nc,0,10,1\n", "down.csv:2: field host: 'c' is not a host of machine pair"),
        ("host,from,to,procs\n,0,10,1\n", "down.csv:2: field host: must name a host"),
        ("host,from,to,procs\na,x,10,1\n", "down.csv:2: field from: 'x' is not a duration"),
        ("host,from,to,procs\na,10,10,1\n", "down.csv:2: field to: must be after from"),
        ("host,from,to,procs\na,0,10,9\n", "down.csv:2: field procs: must be from 1 to 8"),
        ("host,from,to,procs\na,0,10,two\n", "down.csv:2: field procs: must be a processor count"),
        ("host,from,to,procs\n\na,0,10\n", "down.csv:3: 3 fields, expected 4"),
        ("host,from,to,procs\na,0,100,5\na,50,60,4\n", "host a: 9 processors down at 50s"),
        ("", "down.csv: empty"),
    ],
)
def test_bad_availability_files_name_file_line_and_field(tmp_path: Path, text, says):
    f = tmp_path / "down.csv"
    f.write_text(text)
    with pytest.raises(O2KSimError) as exc:
        load_availability(f, TWO_HOSTS)
    assert says in str(exc.value)


def test_cli_run_takes_an_availability_file_and_refuses_a_bad_one(tmp_path: Path, capsys):
    trace = write_drain_trace(tmp_path / "t.swf")
    machine = tmp_path / "m.toml"
    machine.write_text('name = "m"\n[[host]]\nname = "m"\nprocs = 10\n')
    down = tmp_path / "down.csv"
    down.write_text("host,from,to,procs\nm,50,300,4\n")
    out = tmp_path / "out"
    args = ["run", "--trace", str(trace), "--machine", str(machine), "--policy", "fcfs", "-q"]
    assert main([*args, "--availability", str(down), "--out", str(out), "--check"]) == 0
    starts = pd.read_csv(out / "jobs.csv").set_index("job_id")["start"].to_dict()
    assert starts == {1: 0, 2: 0, 3: 300, 4: 300}
    down.write_text("host,from,to,procs\nm,50,300,11\n")
    assert main([*args, "--availability", str(down)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "down.csv:2: field procs" in err
    assert main(["run", "--trace", str(trace), "--availability", str(down)]) == 2
    assert "--availability needs --machine" in capsys.readouterr().err


def test_api_configuration_round_trip_keeps_the_periods(tmp_path: Path):
    from o2ksim.run.config import RunConfig

    cfg = RunConfig.create(str(tmp_path / "t.swf"), TWO_HOSTS, "fcfs",
                           availability=[{"host": "b", "from": "1h", "to": "2h", "procs": 2}])  # fmt: skip
    assert cfg.availability == (Outage("b", 3600, 7200, 2),)
    assert RunConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(O2KSimError, match="needs a machine"):
        RunConfig.create(str(tmp_path / "t.swf"), None, "fcfs", availability=[Outage("b", 0, 1, 1)])


# ------------------------------------------------------------------- the inference's truth
def test_the_inference_finds_periods_o2ksim_itself_took_down(tmp_path: Path):
    """o2ksim schedules a busy 32-processor machine under strict FCFS with five periods of
    processors down (its availability feature: the truth is known).  The schedule, written as
    a recorded trace, does not say so; the inference must find periods only inside the true
    ones (under FCFS a head job that fits the free processors and does not start proves
    processors down), never claim more down than were, and find most of the blocked time."""
    rng = np.random.default_rng(11)
    n = 900
    submit = np.cumsum(rng.exponential(150, n)).round()
    procs = rng.choice([1, 2, 4, 8, 16], n)
    run = rng.integers(60, 1800, n)
    specs = [JobSpec(i + 1, float(submit[i]), int(procs[i]), 0, float(run[i]), float(run[i])) for i in range(n)]
    machine = single_host(32)
    span = float(submit[-1])
    truth = tuple(
        Outage("machine", round(s), round(s) + 6 * 3600, int(k))
        for s, k in zip(np.linspace(0.1, 0.8, 5) * span, [8, 16, 24, 31, 32], strict=True)
    )
    r = o2ksim.simulate(specs, machine, "fcfs", availability=truth)
    jobs = r.jobs.set_index("job_id")
    rec = pd.DataFrame({"job_id": jobs.index, "submit": jobs["submit"], "wait": jobs["wait"],
                        "run_time": jobs["run_time"], "alloc_procs": jobs["procs"], "req_procs": jobs["procs"]})  # fmt: skip
    found = suspected_outages(RecordedSchedule.from_columns(rec), 32, min_duration=3600)
    assert len(found) >= 3
    for _, p in found.iterrows():
        inside = [o for o in truth if o.start <= p["start"] and p["end"] <= o.end]
        assert inside, f"period {p['start']}-{p['end']} is not inside a true one"
        assert p["down_at_least"] <= inside[0].procs
    covered = (found["end"] - found["start"]).sum()
    assert covered > 0.5 * sum(o.end - o.start for o in truth)
    # and replayed as processors down, the inferred periods take the same jobs' waits back up
    trace = tmp_path / "rec.swf"
    rows = zip(rec["job_id"], rec["submit"], rec["wait"], rec["run_time"], rec["alloc_procs"], strict=True)
    trace.write_text("; MaxProcs: 32\n" + "".join(
        f"{j} {int(s)} {int(w)} {int(rt)} {p} -1 -1 {p} {int(rt)} -1 1 1 1 -1 -1 -1 -1 -1\n"
        for j, s, w, rt, p in rows))  # fmt: skip
    plain = validate(trace, machine, "fcfs")
    replay = validate(trace, machine, "fcfs", availability="inferred")
    assert replay.config["periods_down"] == len(found)
    assert plain.overall["sim_mean"] < replay.overall["sim_mean"] <= plain.overall["rec_mean"] * 1.0001
    assert inferred_availability(found, machine)[0].procs == found["down_at_least"].iloc[0]


def test_validate_availability_needs_a_machine_of_one_host():
    with pytest.raises(O2KSimError, match="one host"):
        inferred_availability(pd.DataFrame({"start": [], "end": [], "down_at_least": []}), TWO_HOSTS)


def test_cli_validate_replays_inferred_availability_and_writes_it(tmp_path: Path, capsys):
    # 4 processors; job 1 (1 proc) runs 0-100; job 2 (2 procs) arrives at 10 and starts only
    # at 5010 although 3, then 4, processors were free: at least 2 (and at most the 3 idle at
    # 10) were down from 10 to 5010.  Replayed with 2 down (inferred), job 2 finds 4 - 1 - 2 = 1
    # free and starts when job 1 ends, at 100 (wait 90); with 3 down (inferred-idle) it finds
    # 1 free even then and waits for the period's end, 5010 (wait 5000, as recorded).
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n1 0 0 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
                     "2 10 5000 10 2 -1 -1 2 10 -1 1 1 1 -1 -1 -1 -1 -1\n")  # fmt: skip
    machine = tmp_path / "m.toml"
    machine.write_text('name = "m"\n[[host]]\nname = "m"\nprocs = 4\n')
    for how, wait2 in (("inferred", 90), ("inferred-idle", 5000)):
        out = tmp_path / how
        args = ["validate", str(trace), "--machine", str(machine), "--policy", "fcfs"]
        assert main([*args, "--availability", how, "--out", str(out)]) == 0
        assert "replayed with 1 periods of processors down" in capsys.readouterr().out
        down = load_availability(out / "availability.csv", single_host(4, "m"))
        assert down == (Outage("m", 10, 5010, 2 if how == "inferred" else 3),)
        waits = pd.read_csv(out / "compared.csv").set_index("job_id")["simulated_wait"]
        assert waits[2] == wait2
        # the file it wrote, given back as an availability file, replays the same
        again = tmp_path / f"{how}-again"
        assert main([*args, "--availability", str(out / "availability.csv"), "--out", str(again), "-q"]) == 0
        assert pd.read_csv(again / "compared.csv").set_index("job_id")["simulated_wait"][2] == wait2
    assert main(["validate", str(trace), "--availability", "inferred"]) == 2
    assert "--availability needs --machine" in capsys.readouterr().err
    assert main(["validate", str(trace), "--machine", str(machine), "--availability", "nope.csv"]) == 2
    assert "no such file" in capsys.readouterr().err
