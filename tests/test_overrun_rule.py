"""The overrun rule (``--overrun now|requested``), in tiny scenarios computed by hand.

Tsafrir, Etsion & Feitelson (IEEE TPDS 2007) plan backfilling with each
user's recent runtimes and, when a job outlives its prediction, raise the
prediction to the user's requested runtime R.  o2ksim keeps R beside the
estimate (``JobSpec.requested_time``) and, under ``overrun="requested"``,
predicts a running job past its estimate to end at start + R (then *now*
once R too has passed); the default ``now`` predicts its end as *now* at once
(SPEC §2).  The kill rule stops a job at R + grace, never at a prediction.

Machine: one host of 4 processors; memory unconstrained.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.engine.decisions import Reserve
from o2ksim.engine.monitor import Observer
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.experiments.scenario import load_scenario
from o2ksim.jobs import JobSpec
from o2ksim.run.config import RunConfig
from tests.conftest import one_host

GOAL = ["tradeoff-tw-avgx", "lexical-tw-avgx"]


def jobs(rows):
    """(submit, procs, actual T, requested R, user) per job, ids 1, 2, ... in this order;
    every recorded wait 0 (the user-recent history: a job ends at submit + T)."""
    return pd.DataFrame(
        {
            "job_id": range(1, len(rows) + 1),
            "submit": [r[0] for r in rows],
            "req_procs": [r[1] for r in rows],
            "alloc_procs": [r[1] for r in rows],
            "run_time": [r[2] for r in rows],
            "req_time": [r[3] for r in rows],
            "user": [r[4] for r in rows],
            "wait": 0, "used_mem": -1, "req_mem": -1, "queue": -1,
        }
    )  # fmt: skip


class Reservations(Observer):
    """Every reservation the policy announced (``explain=True``): (pass time, job, at)."""

    def __init__(self) -> None:
        self.made: list[tuple[float, int, float]] = []

    def on_decision(self, now, decision):
        if isinstance(decision, Reserve):
            self.made.append((now, decision.job.id, decision.at))


def run(rows, policy, **kw):
    """Starts by job id and the reservations of a run with ``user-recent:1`` estimates."""
    seen = Reservations()
    r = simulate(jobs(rows), one_host(4), policy, estimates="user-recent:1", explain=True,
                 observers=[seen], **kw)  # fmt: skip
    j = r.jobs
    return dict(zip(j["job_id"].tolist(), j["start"].tolist(), strict=True)), seen.made, r


# Job 1 (user 1, 1 proc, T = 10, R = 100) has no history: estimate R; it runs 0 - 10.
# Job 2 (user 1, 2 procs, T = 100, R = 200) at 20: its user's last ended job ran 10 s,
# so it is planned for 10 s (ends 30 by the plan) but runs until 120.
# Job 3 (user 2, 4 procs, T = R = 10) at 25: waits for job 2's 2 processors.
# Job 4 (user 3, 2 procs, T = R = 50) at 40, when job 2 is past its estimate (30).
#
# Pass at 25: job 2 is predicted to end at 30 under both rules -> job 3 reserved at 30.
# Pass at 40 (job 4 arrives), job 2 overrun:
#   now:       job 2 predicted to end at 40 -> job 3 reserved at 40 (4 free then);
#              job 4 on the 2 free processors over [40, 90) would take 2 of job 3's 4 ->
#              it waits; job 2 ends at 120: job 3 starts 120 (ends 130), job 4 at 130.
#   requested: job 2 predicted to end at 20 + R = 220 -> job 3 reserved at 220; job 4
#              over [40, 90) ends before 220 -> backfilled at 40; at 90 (job 4 ends)
#              job 3 again reserved at 220; job 2 ends at 120: job 3 starts at 120.
OVERRUN = [(0, 1, 10, 100, 1), (20, 2, 100, 200, 1), (25, 4, 10, 10, 2), (40, 2, 50, 50, 3)]


def test_fcfs_backfill_reserves_at_now_or_at_the_request():
    starts, reserved, _ = run(OVERRUN, "fcfs-backfill")
    assert starts == {1: 0, 2: 20, 3: 120, 4: 130}
    assert [(t, at) for t, j, at in reserved if j == 3] == [(25, 30), (40, 40)]

    starts, reserved, _ = run(OVERRUN, "fcfs-backfill", overrun="requested")
    assert starts == {1: 0, 2: 20, 4: 40, 3: 120}
    assert [(t, at) for t, j, at in reserved if j == 3] == [(25, 30), (40, 220), (90, 220)]


# The goal-oriented search (threshold: the current wait of the oldest waiting job).
# At 40 the queue is job 3 (waited 15 s) and job 4 (just arrived):
#   now: job 2's processors are free an instant after now (40+), so
#     [3, 4]: 3 at 40+, 4 at 50+ -> waits 15+, 10+ -> Tw ~0
#     [4, 3]: 4 at 40, 3 at 90   -> waits 0, 65    -> Tw 50          => [3, 4]: job 3
#     reserved at 40+ and nothing starts; at 120 job 3, then job 4 at 130.
#   requested: 2 processors free until job 2's predicted end 220, then 4, so
#     [3, 4] and [4, 3] are the same schedule: 4 at 40 (ends 90), 3 at 220 -> job 4
#     starts at 40, job 3 reserved at 220 (again at 90); job 2 ends at 120: job 3.
@pytest.mark.parametrize("policy", GOAL)
def test_goal_search_reserves_at_now_or_at_the_request(policy):
    starts, reserved, _ = run(OVERRUN, policy)
    assert starts == {1: 0, 2: 20, 3: 120, 4: 130}
    at_40 = [at for t, j, at in reserved if j == 3 and t == 40]
    assert at_40 == [math.nextafter(40.0, math.inf)]

    starts, reserved, _ = run(OVERRUN, policy, overrun="requested")
    assert starts == {1: 0, 2: 20, 4: 40, 3: 120}
    assert [(t, at) for t, j, at in reserved if j == 3] == [(25, 30), (40, 220), (90, 220)]


# Past R too: job 2 now runs T = 300 > R = 200 (no kill).  Under "requested" its
# prediction is 220 until 220, then *now*.  Job 3 (4 procs) at 25 is reserved at 30
# (job 2's estimate end); job 4 (2 procs, T = R = 50) at 40 backfills as above (ends
# 90); job 5 (user 4, 2 procs, T = R = 100) arrives at 230 when job 2 is past R: job 2
# is predicted to end now, job 3 is reserved at 230 and job 5 (230 - 330) may not
# start beside it; job 2 ends at 320: job 3 at 320, job 5 at 330.
PAST_R = [(0, 1, 10, 100, 1), (20, 2, 300, 200, 1), (25, 4, 10, 10, 2), (40, 2, 50, 50, 3),
          (230, 2, 100, 100, 4)]  # fmt: skip


def test_past_the_request_the_prediction_is_now():
    starts, reserved, _ = run(PAST_R, "fcfs-backfill", overrun="requested")
    assert starts == {1: 0, 2: 20, 4: 40, 3: 320, 5: 330}
    assert [(t, at) for t, j, at in reserved if j == 3] == [(25, 30), (40, 220), (90, 220),
                                                             (230, 230)]  # fmt: skip


def test_the_kill_rule_applies_at_the_request_not_at_the_prediction():
    # job 2 planned for 10 s (prediction), R = 200, T = 300: killed at 20 + 200 + 5 = 225
    # under either overrun rule, never at its prediction (20 + 10 + 5 = 35)
    for rule in (None, "requested"):
        _, _, r = run(PAST_R[:2], "fcfs-backfill", overrun=rule, kill_overrun=True,
                      overrun_grace=5)  # fmt: skip
        j = r.jobs.set_index("job_id")
        assert j.loc[2, "status"] == "killed" and j.loc[2, "end"] == 225
        assert j.loc[1, "status"] == "completed"
    # and a job within its R is not killed though it outlives its prediction
    _, _, r = run(OVERRUN, "fcfs-backfill", kill_overrun=True, overrun_grace=0)
    assert (r.jobs["status"] == "completed").all()


# ------------------------------------------------------------------ exact estimates
@st.composite
def exact_workloads(draw):
    """Jobs planned with their actual runtime (req_time == T) and a request R >= T."""
    n = draw(st.integers(1, 12))
    specs = []
    for i in range(n):
        t = draw(st.integers(1, 500))
        specs.append(JobSpec(
            job_id=i + 1, submit=float(draw(st.integers(0, 600))), procs=draw(st.integers(1, 4)),
            mem=0, req_time=float(t), run_time=float(t),
            requested_time=float(t + draw(st.integers(0, 1000))),
        ))  # fmt: skip
    return specs


@settings(max_examples=60, deadline=None)
@given(specs=exact_workloads(), policy=st.sampled_from(
    ["fcfs-backfill", "lxf-backfill", "lxfw-backfill-immediate", "tradeoff-tw-avgx"]))  # fmt: skip
def test_with_exact_estimates_both_rules_give_the_same_schedule(specs, policy):
    if not any(s.requested_time > s.req_time for s in specs):
        specs[0] = JobSpec(specs[0].job_id, specs[0].submit, specs[0].procs, 0,
                           specs[0].req_time, specs[0].run_time,
                           requested_time=specs[0].req_time + 1)  # fmt: skip
    cols = ["job_id", "start", "end", "host"]
    now = simulate(specs, one_host(4), policy).jobs[cols]
    raised = simulate(specs, one_host(4), policy, overrun="requested").jobs[cols]
    pd.testing.assert_frame_equal(now, raised)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("bad", ["later", "", "Requested", 1])
def test_bad_overrun_rule_is_refused(bad):
    with pytest.raises(O2KSimError, match="overrun: must be now or requested"):
        simulate(jobs(OVERRUN), one_host(4), "fcfs-backfill", estimates="user-recent",
                 overrun=bad)  # fmt: skip


@pytest.mark.parametrize("estimates", [None, "actual", "scenario-a", "scenario-b"])
def test_requested_rule_without_predicted_estimates_has_no_effect(estimates):
    with pytest.raises(O2KSimError, match="has no effect"):
        simulate(jobs(OVERRUN), one_host(4), "fcfs-backfill", estimates=estimates,
                 overrun="requested")  # fmt: skip


def test_cli_refuses_a_bad_rule_in_one_line(capsys, tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 100 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    assert main(["run", "--trace", str(trace), "-q", "--estimates", "user-recent",
                 "--overrun", "soon"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "overrun" in err[0] and "now or requested" in err[0]
    assert main(["run", "--trace", str(trace), "-q", "--overrun", "requested"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--overrun requested: has no effect" in err[0]


# ------------------------------------------------------------------ configuration paths
def test_the_rule_travels_through_config_and_scenario(tmp_path):
    cfg = RunConfig.create("traces/tiny.swf", estimates="user-recent", overrun="requested")
    assert cfg.settings.overrun == "requested"
    assert cfg.to_dict()["protocol"]["overrun"] == "requested"
    assert RunConfig.from_dict(cfg.to_dict()) == cfg
    # the default is not written, so that earlier configurations read the same
    assert "overrun" not in RunConfig.create("traces/tiny.swf").to_dict()["protocol"]
    path = tmp_path / "s.toml"
    text = ('policies = ["fcfs-backfill"]\n[workload]\ntrace = "{t}"\nestimates = "user-recent"\n'
            '[protocol]\noverrun = "{rule}"\n')  # fmt: skip
    tiny = Path("traces/tiny.swf").resolve()
    path.write_text(text.format(t=tiny, rule="requested"))
    (spec,) = load_scenario(path).plan()
    assert RunConfig.from_dict(spec.config).settings.overrun == "requested"
    path.write_text(text.format(t=tiny, rule="soon"))
    with pytest.raises(ConfigError, match=r"protocol\.overrun: must be now or requested"):
        load_scenario(path)
