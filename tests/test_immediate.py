"""Immediate service (T§3.2.2, T§5.5): hand-computed schedules where each rule decides.

The main example (one host, 10 processors, 8 GB; FCFS-backfill; q = 60 s,
initial memory 1 GB, t = 600 s) exercises, in order: waiting for a trial
until a running job becomes eligible, victim order by current slowdown,
de-selection, a successful trial, a trial that fails on memory, and the
resumption of victims on their processors.  Every time below is worked out by
hand in the comments.
"""

from __future__ import annotations

import math

import pytest

from o2ksim import simulate
from o2ksim.engine.snapshot import HostView
from o2ksim.errors import ConfigError
from o2ksim.invariants import violations
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import KB_PER_GB, KB_PER_MB, HostSpec, MachineSpec
from o2ksim.policies import make_policy
from o2ksim.policies.backfill import Backfill
from o2ksim.policies.immediate import (
    EligibilityCache,
    ImmediateService,
    TrialSettings,
    VictimLists,
    choose_victims,
    current_slowdown,
    is_eligible_victim,
    parse_memory,
    plan_trial,
)

GB, MB = KB_PER_GB, KB_PER_MB
HOST = MachineSpec("one", (HostSpec("m", 10, 8 * GB),))


def job(i, submit, procs, run, req, mem=GB, used=0):
    return JobSpec(i, float(submit), procs, mem, float(req), float(run), used_mem=used)


# J1 2p, J2/J3 short 4p blockers, J4 and J5 4p long jobs that wait 20 s and 10 s,
# J6 a 30 s job that fits its trial, J7 a 30 s, 8p job whose peak memory (1.5 GB)
# exceeds the 1 GB trial memory.
SCRIPT = [
    job(1, 0, 2, 5000, 6000),
    job(2, 0, 4, 20, 20),
    job(3, 0, 4, 40, 40),
    job(4, 0, 4, 5000, 6000),
    job(5, 30, 4, 5000, 6000),
    job(6, 700, 4, 30, 3000, mem=512 * MB, used=100 * MB),
    job(7, 800, 8, 30, 3000, mem=2 * GB, used=1536 * MB),
]


def run_script(mode="preemptive", **params):
    return simulate(
        SCRIPT, machine=HOST, policy="fcfs-backfill",
        policy_params={"immediate_service": mode, **params}, explain=True,
    )  # fmt: skip


def test_every_rule_of_the_scripted_example():
    r = run_script()
    t = r.jobs.set_index("job_id")
    # t=0: J1, J2, J3 start (10 procs); J4 starts at 20 when J2 ends, J5 at 40 when J3 ends.
    assert list(t.loc[[1, 2, 3, 4, 5], "start"]) == [0, 0, 0, 20, 40]
    # t=700, J6 arrives, nothing free.  Eligible (run >= 600, predicted to need > 600):
    # J1 (ran 700), J4 (ran 680), J5 (ran 660).  Current slowdowns: J1 700/700 = 1,
    # J5 (700-30)/660 = 1.0152, J4 700/680 = 1.0294.  Selected in that order: J1 (2) is
    # not enough, J1+J5 = 6 >= 4.  De-selection (reverse order): J5 is needed, J1 is not.
    # So J5 alone is preempted (not J4: order by slowdown decides).  J6 completes its
    # trial at 730 (30 s <= q, 100 MB <= min(1 GB, 512 MB)); J5 resumes at 730.
    assert t.loc[6, "start"] == 700 and t.loc[6, "end"] == 730
    assert t.loc[6, "restarts"] == 0 and t.loc[6, "wait"] == 0
    # t=800, J7 (8 procs) arrives.  Eligible: J1 and J4; J5 ran only 70 s since it
    # resumed.  J1+J4 = 6 < 8: J7 waits for its trial.  The next job to become eligible
    # is J5 at 730 + 600 = 1330 (a timer).  At 1330: slowdowns J1 1, J4 1330/1310 =
    # 1.0153, J5 1300/1260 = 1.0317; J1+J4 = 6 < 8, +J5 = 10 >= 8; de-selection drops J1
    # (10 - 2 = 8 >= 8) but neither J5 nor J4.  J7's trial runs 1330-1390 and fails on
    # memory (1.5 GB > 1 GB) although 30 s would have been enough: killed at the end of
    # the quantum, back in the queue as a full job.  J4 and J5 resume at 1390.
    assert t.loc[7, "start"] == 1330 and t.loc[7, "restarts"] == 1
    assert t.loc[1, "preemptions"] == 0
    assert t.loc[4, "preemptions"] == 1 and t.loc[5, "preemptions"] == 2
    # Ends: J1 at 5000.  J4 ran 20-1330 (1310 s), 3690 s left after 1390 -> 5080.
    # J5 ran 40-700 and 730-1330 (1260 s), 3740 left after 1390 -> 5130.
    assert t.loc[1, "end"] == 5000 and t.loc[4, "end"] == 5080 and t.loc[5, "end"] == 5130
    # J7 (8 procs) needs J1, J4 and J5 gone: starts 5130, ends 5160.
    assert t.loc[7, "end"] == 5160
    # waits: response - actual runtime for the preempted and the restarted (T§3.5)
    assert t.loc[4, "wait"] == 5080 - 5000  # 20 queued + 60 preempted
    assert t.loc[5, "wait"] == (5130 - 30) - 5000  # 10 queued + 30 + 60 preempted
    assert t.loc[7, "wait"] == (5160 - 800) - 30
    assert t.loc[1, "wait"] == 0
    s = r.summary
    assert s["immediate_service_jobs"] == 2  # J6, J7 (J4, J5 started as full jobs first)
    assert s["immediate_service_completed"] == 1
    assert s["immediate_service_preempting"] == 2
    assert s["preemptions"] == 3
    assert violations(r.jobs, r.segments, HOST, [j.job_id for j in SCRIPT]) == []
    # the victims' segments: running, preempted (0 procs, memory kept), running
    seg = r.segments[r.segments.job_id == 5].sort_values("start")
    assert list(seg["procs"]) == [4, 0, 4, 0, 4]
    assert list(seg["start"]) == [40, 700, 730, 1330, 1390]
    assert (seg["mem"] == 1024).all()


def test_explain_shows_trials_preemptions_and_resumptions_with_reasons():
    from o2ksim.explain import DecisionLog

    log = DecisionLog(HOST, queue=False)
    simulate(SCRIPT, machine=HOST, policy="fcfs-backfill",
             policy_params={"immediate_service": "preemptive"}, explain=True, observers=[log])  # fmt: skip
    text = log.text()
    assert "J5    preempted   for J6's trial" in text
    assert "current slowdown 1.02" in text
    assert "immediate service: 60 s trial with 512 MB, preempting J5" in text
    assert "J5    resumes     the trial that preempted it has ended" in text
    assert "J7    requeued" in text and "trial run over without finishing" in text
    assert "a running job becomes eligible for preemption" in text


def test_soon_never_preempts_and_waits_for_free_processors():
    # soon: J6 gets no trial at 700 (nothing free) and keeps waiting; at 5000 J1's 2
    # processors free up, not enough for J6's 4 (J4/J5 hold 8).  J4 ends at 5020
    # (started 20, never preempted), freeing 4: J6 could now start as a full job (the
    # backfill pass runs first), so it never gets a trial; neither does J7.
    r = run_script("soon")
    t = r.jobs.set_index("job_id")
    assert t["preemptions"].sum() == 0
    assert t.loc[4, "end"] == 5020 and t.loc[5, "end"] == 5040
    assert r.summary["immediate_service_jobs"] == 0


def test_soon_gives_a_trial_on_free_processors_when_a_job_cannot_start_in_full():
    # host of 4 procs and 2 GB: J1 (2p, 1 GB) runs; J2 (2p) requests 2 GB and cannot start
    # in full (1 GB free), but its trial needs only 1 GB: it runs 10 s on 2 procs at once.
    m = MachineSpec("small", (HostSpec("h", 4, 2 * GB),))
    jobs = [job(1, 0, 2, 1000, 1000), job(2, 5, 2, 10, 100, mem=2 * GB, used=300 * MB)]
    r = simulate(jobs, machine=m, policy="fcfs-backfill", policy_params={"immediate_service": "soon"})
    t = r.jobs.set_index("job_id")
    assert (t.loc[2, "start"], t.loc[2, "end"]) == (5, 15)
    assert r.summary["immediate_service_completed"] == 1


def test_a_free_processor_trial_does_not_respect_reservations():
    # 4 procs.  J1 (2p) runs 0-100.  J2 (4p) arrives at 10 and is reserved at 100.  J3
    # (2p, 1000 s) arrives at 80: it may not backfill (it would delay J2), but its trial
    # runs 80-140 on the 2 free processors, so J2 starts at 140, not 100 (a delay <= q).
    m = MachineSpec("four", (HostSpec("h", 4, 8 * GB),))
    jobs = [job(1, 0, 2, 100, 100), job(2, 10, 4, 50, 50), job(3, 80, 2, 1000, 1000)]
    r = simulate(jobs, machine=m, policy="fcfs-backfill", policy_params={"immediate_service": "soon"})
    t = r.jobs.set_index("job_id")
    assert t.loc[3, "restarts"] == 1  # trial 80-140 failed (1000 s > q)
    assert t.loc[2, "start"] == 140 and t.loc[2, "end"] == 190
    assert t.loc[3, "start"] == 80 and t.loc[3, "end"] == 1190  # full run after J2


def test_a_victim_predicted_to_finish_within_t_is_not_preempted():
    # J1 (4p) requests 1000 s: at 500 it has run 500 >= t = 300 but is predicted to need
    # 500 s more, which is > t, so it is eligible; J2 requests 700 s: at 500 it needs 200 <= t.
    assert is_eligible_victim(_running(1, procs=4, start=0, req=1000), 500, 300)
    assert not is_eligible_victim(_running(2, procs=4, start=0, req=700), 500, 300)
    # boundaries: exactly t run is enough; exactly t remaining is not
    assert is_eligible_victim(_running(3, procs=4, start=200, req=1000), 500, 300)
    assert not is_eligible_victim(_running(4, procs=4, start=0, req=800), 500, 300)


def _running(i, procs, start, req, submit=0.0, host="a"):
    j = Job(JobSpec(i, float(submit), procs, 0, float(req), float(req)))
    j.move(JobState.QUEUED, submit)
    j.move(JobState.RUNNING, start)
    j.host, j.alloc_procs = host, procs
    j.first_start = j.last_start = j.segment_start = float(start)
    return j


def test_choose_victims_selects_in_order_then_deselects():
    a, b, c = (_running(i, p, 0, 9999) for i, p in ((1, 2), (2, 2), (3, 16)))
    # need 8 with none free: A, B, C selected (20); C is needed, B and A are not
    assert choose_victims([a, b, c], free=0, need=8) == [c]
    assert choose_victims([a, b], free=3, need=8) is None
    assert choose_victims([a, b, c], free=6, need=8) == [a]  # 6 + 2 = 8, nothing to drop
    assert choose_victims([a, b, c], free=8, need=8) == []


def test_current_slowdown_excludes_time_preempted():
    j = _running(1, procs=4, start=100, req=5000, submit=0)
    assert current_slowdown(j, 200) == pytest.approx(200 / 100)


def test_eligibility_cache_agrees_with_the_definition_at_every_time():
    """The cache (kept between passes of an unchanged host) gives, at every time, the
    jobs that have run uninterrupted >= t and are predicted to need > t more."""
    t = 600.0
    fresh = _running(1, 4, start=1000, req=5000)  # eligible from 1600 until 5400
    short = _running(2, 2, start=0, req=1000)  # never: predicted to need <= t once it has run t
    resumed = _running(3, 4, start=1200, req=4000)  # preempted once, 1000 s of work done before
    resumed.preemptions, resumed.remaining_work = 1, 4 * 4000.0 - 4 * 1000.0
    limited = _running(4, 8, start=500, req=9999)
    limited.time_limit = 2000.0  # e.g. a kill at its limit: needs > t only until 1400
    jobs = (fresh, short, resumed, limited)
    host = HostView(HostSpec("a", 32, 8 * GB), 14, 8 * GB, jobs, ())
    cache = EligibilityCache()
    boundaries = [1600, 5400, 1800, 1200 + 3000 - t, 1100, 1400]  # each job's start and end of eligibility
    times = sorted({*range(0, 7000, 50), *boundaries, *(b - 1e-7 for b in boundaries)})
    for now in times:
        expected = [j for j in jobs if now - j.last_start >= t and j.predicted_end(now) - now > t]
        got, ids = cache.eligible(host, now, t)
        assert got == expected, now
        assert ids == {j.id for j in expected}
        lists = VictimLists(now, t, protected={1}, cache=cache)
        assert lists.total(host) == sum(j.alloc_procs for j in expected if j.id != 1), now
    # spot checks by hand: at 2000 fresh (ran 1000, needs 4000) and resumed (ran 800, owes 2200)
    assert [j.id for j in cache.eligible(host, 2000.0, t)[0]] == [1, 3]
    assert [j.id for j in cache.eligible(host, 1200.0, t)[0]] == [4]  # ran 700, needs 800


def test_the_host_left_with_fewest_idle_processors_wins():
    settings = TrialSettings(eligible_after=100)
    a = _running(1, 8, 0, 9999, host="a")  # preempting it leaves 8 + 0 - 4 = 4 idle on a
    b = _running(2, 4, 0, 9999, host="b")  # on b: 1 free + 4 - 4 = 1 idle
    hosts = (
        HostView(HostSpec("a", 8, 8 * GB), 0, 8 * GB, (a,), ()),
        HostView(HostSpec("b", 8, 8 * GB), 1, 8 * GB, (b,), ()),
        HostView(HostSpec("c", 8, 512 * MB), 8, 512 * MB, (), ()),  # free procs, too little memory
    )
    new = Job(JobSpec(9, 500.0, 4, 2 * GB, 100.0, 10.0))
    free = {h.name: [h.free_procs, h.free_mem] for h in hosts}
    plan = plan_trial(new, hosts, free, 500.0, settings, preempt=True)
    assert plan.host == "b" and plan.victims == (b,) and plan.idle_after == 1
    assert plan.mem == GB
    assert plan_trial(new, hosts, free, 500.0, settings, preempt=False) is None


def test_parameters_and_their_errors():
    assert parse_memory("1GB") == GB and parse_memory(512) == 512 * MB and parse_memory("2048kb") == 2048
    s = TrialSettings.from_params({"immediate_service": "soon", "quantum": "2m"})
    assert (s.mode, s.quantum, s.eligible_after, s.initial_memory) == ("soon", 120, 1200, GB)
    pol = make_policy("lxfw-backfill", immediate_service="preemptive", eligible_after="5m")
    assert pol.immediate.settings.eligible_after == 300
    with pytest.raises(ConfigError, match="immediate_service"):
        make_policy("fcfs-backfill", immediate_service="always")
    with pytest.raises(ConfigError, match="quantum"):
        make_policy("fcfs-backfill", quantum="-1m")
    assert make_policy("fcfs-backfill").immediate is None
    assert math.isinf(_running(1, 4, 0, 10).time_limit)


def test_the_component_is_built_from_the_holders_parameters():
    # off: no component; otherwise the thesis's defaults, q = 1 min and t = 10 q (T§3.2.2, T§5.5)
    assert ImmediateService.from_params({"immediate_service": "off"}) is None
    assert ImmediateService.from_params({}) is None
    service = ImmediateService.from_params({"immediate_service": "preemptive"})
    assert service is not None
    assert (service.settings.quantum, service.settings.eligible_after, service.settings.initial_memory) == (
        60, 600, GB)  # fmt: skip
    # a backfill policy declares the component's parameters as its own
    assert set(ImmediateService.PARAMS) <= set(Backfill.PARAMS)
    # a new run starts with no trial in progress and no counts, with the same settings
    service.book.given.add(7)
    fresh = service.fresh()
    assert fresh.settings == service.settings and not fresh.book.given
    assert fresh.summary_counts() == {
        "immediate_service_jobs": 0, "immediate_service_completed": 0, "immediate_service_preempting": 0,
    }  # fmt: skip


def test_report_section_counts_the_trials_of_the_scripted_example(tmp_path):
    from o2ksim.experiments.scenario import load_scenario
    from o2ksim.experiments.store import load_results
    from o2ksim.experiments.sweep import run_sweep
    from o2ksim.report.html import write_report
    from o2ksim.report.immediate import immediate_table

    sc = load_scenario("explain-immediate")
    run_sweep(sc, tmp_path / "res", workers=1)
    table = immediate_table(load_results(tmp_path / "res")).iloc[0]
    # 7 arrivals, 2 trials (J6, J7), J6 finished in it, both preempted someone, 3 preemptions
    assert table["trials (% of arrivals)"] == pytest.approx(200 / 7)
    assert table["finished in trial (% of trials)"] == 50
    assert (table["preempting trials"], table["preemptions"]) == (2, 3)
    # jobs <= 1 min: J2 (20 s), J3 (40 s), J6 (30 s), J7 (30 s) -> waits 0, 0, 0, 4330 s
    assert table["max wait ≤1 min (h)"] == pytest.approx(4330 / 3600)
    page = write_report(tmp_path / "res", tmp_path / "report").read_text()
    assert "Immediate service (thesis §5.5, Figs. 66-67)" in page


def test_cli_option_on_any_backfill_policy(tmp_path, capsys):
    import json
    from pathlib import Path

    from o2ksim.cli import main

    trace = str(Path(__file__).resolve().parents[1] / "traces" / "tiny.swf")
    out = tmp_path / "run"
    argv = ["run", "--trace", trace, "--policy", "sjf-backfill", "--immediate-service", "preemptive",
            "--quantum", "2m", "--initial-memory", "512MB", "--eligible-after", "5m", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert "immediate_service_jobs" in capsys.readouterr().out  # the policy's counts line
    summary = json.loads((out / "summary.json").read_text())
    assert {"immediate_service_jobs", "immediate_service_completed", "immediate_service_preempting",
            "preemptions"} <= set(summary)  # fmt: skip
    policy = json.loads((out / "run.json").read_text())["policy"]
    assert (policy["quantum"], policy["initial_memory"], policy["eligible_after"]) == ("2m", "512MB", "5m")
    assert main(["run", "--trace", trace, "--policy", "fcfs-backfill", "--quantum", "soon"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("o2ksim: error:") and "quantum" in err[0]
