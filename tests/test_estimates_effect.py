"""Runtime estimates for a policy that never reads them are refused (issue 27, D13).

Strict FCFS starts jobs in submission order by their processors and memory alone; the
engine reads a job's estimate only for the kill at its runtime (``--kill-overrun``) and
for the predicted ends policies see.  So ``--estimates X --policy fcfs`` without kills
gives every job the start, end and host of ``requested``: accepted, it let the user
believe the estimates applied (``run.json`` recorded them).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import one_line

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.run.api import run_config
from o2ksim.run.config import RunConfig

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "traces" / "kth-sp2-sample.swf"
ESTIMATES = ["actual", "scenario-a:20", "scenario-b", "user-recent"]


def _schedule(estimates: str, policy: str = "fcfs"):
    """The run's (start, end, host) per job, built without the refusal (RunConfig + run_config)."""
    jobs = run_config(RunConfig.create(SAMPLE, "kth-sp2", policy, estimates=estimates)).jobs
    return jobs.set_index("job_id")[["start", "end", "host"]].sort_index()


@pytest.mark.parametrize("estimates", ESTIMATES)
def test_the_premise_fcfs_gives_the_same_schedule_with_every_estimate(estimates):
    assert _schedule(estimates).equals(_schedule("requested"))


def test_the_control_backfilling_reads_them():
    assert not _schedule("actual", "fcfs-backfill").equals(_schedule("requested", "fcfs-backfill"))


@pytest.mark.parametrize("estimates", ESTIMATES)
def test_the_command_line_refuses_them_naming_estimates(estimates, capsys):
    assert main(["run", "--trace", str(SAMPLE), "--policy", "fcfs", "--estimates", estimates, "-q"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"o2ksim: error: --estimates {estimates}: has no effect: policy 'fcfs'")


def test_user_recent_with_the_requested_overrun_rule_is_refused_too(capsys):
    args = ["run", "--trace", str(SAMPLE), "--policy", "fcfs", "--estimates", "user-recent",
            "--overrun", "requested", "-q"]  # fmt: skip
    assert main(args) == 2
    assert "--estimates user-recent: has no effect" in one_line(capsys.readouterr().err)


def test_the_api_names_estimates():
    with pytest.raises(O2KSimError, match=r"^estimates actual: has no effect: policy 'fcfs'"):
        simulate(SAMPLE, "kth-sp2", "fcfs", estimates="actual")


def test_with_kills_they_may_act_and_are_accepted(capsys):
    # a job killed at its runtime: with 'actual' at max(R, T), not at R
    args = ["run", "--trace", str(SAMPLE), "--policy", "fcfs", "--estimates", "actual", "--kill-overrun", "-q"]
    assert main(args) == 0


@pytest.mark.parametrize("estimates", ["actual", "scenario-a:1e12"])
def test_validate_names_its_option_too(estimates, capsys):
    assert main(["validate", str(SAMPLE), "--policy", "fcfs", "--estimates", estimates, "-q"]) == 2
    assert one_line(capsys.readouterr().err).startswith("o2ksim: error: --estimates")


# ------------------------------------------------ EQspatial-0m reads them (issue 27, L5)
EQ_MACHINE = 'name = "one"\n[[host]]\nname = "h"\nprocs = 4\nmemory_gb = 4\n'
EQ_TRACE = """; MaxProcs: 4
1 0 -1 1000 4 -1 786432 4 100000 786432 1 1 1 -1 1 -1 -1 -1
2 700 -1 30 1 -1 524288 1 100000 2097152 1 1 1 -1 1 -1 -1 -1
"""
"""Job 1 holds the host's 4 processors and 3 GB from 0 to 1000 (requested 100000 s); job 2
(1 processor, 2 GB, peak 512 MB) arrives at 700 and no host has its memory, so EQspatial
gives it the immediate-service trial, on a victim's processors in 1 GB, if a running job
is eligible: run for t = 10 x quantum = 600 s and predicted to need more than t."""


def test_eqspatial_0m_reads_estimates_through_its_immediate_service(tmp_path, capsys):
    """Not refused like FCFS: with the requested runtime job 1 is predicted to need 99,300 s
    more at 700, a victim, and job 2 runs its 30 s at once in the trial (job 1 preempted 30 s,
    ends at 1030); with the actual runtime it needs 300 s < t, no victim, and job 2 waits
    until 1000.  (On the O2K month and KTH-SP2 the two schedules happen to be the same.)"""
    from o2ksim.policies import make_policy

    assert make_policy("eqspatial-0m").reads_estimates()
    (tmp_path / "m.toml").write_text(EQ_MACHINE)
    (tmp_path / "t.swf").write_text(EQ_TRACE)
    hand = {"requested": {1: (0, 1030), 2: (700, 730)}, "actual": {1: (0, 1000), 2: (1000, 1030)}}
    for estimates, expected in hand.items():
        config = RunConfig.create(tmp_path / "t.swf", str(tmp_path / "m.toml"), "eqspatial-0m",
                                  estimates=estimates)  # fmt: skip
        jobs = run_config(config).jobs.set_index("job_id")
        assert {j: (jobs.at[j, "start"], jobs.at[j, "end"]) for j in (1, 2)} == expected
    argv = ["run", "--trace", str(tmp_path / "t.swf"), "--machine", str(tmp_path / "m.toml"),
            "--policy", "eqspatial-0m", "--estimates", "actual", "-q"]  # fmt: skip
    assert main(argv) == 0


# ------------------------------------------------ a scenario's estimates (issue 27, L5)
def _scenario(tmp_path: Path, policies: str, tail: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(f'name = "s"\nmachine = "kth-sp2"\npolicies = {policies}\n[workload]\n'
                    f'trace = "{SAMPLE}"\n{tail}')  # fmt: skip
    return path


@pytest.mark.parametrize(
    ("tail", "field", "line"),
    [  # the five lines above, then the estimates (counted by hand)
        ('estimates = "actual"\n', "workload.estimates", 6),
        ('[factors]\nworkload.estimates = ["requested", "scenario-a:20"]\n', "factors.workload.estimates", 7),
    ],
)
def test_a_scenario_whose_estimates_change_nothing_is_refused_on_load(tmp_path, capsys, tail, field, line):
    """A scenario of FCFS alone with estimates (fixed or a factor) ran every run with them and
    stored them in silence, as `run --estimates` did before it was refused: refused when
    loaded, before any folder is made, naming the file, the line and the combination."""
    path = _scenario(tmp_path, '["fcfs"]', tail)
    out = tmp_path / "out"
    for argv in (["scenario", "show", str(path)], ["scenario", "run", str(path), "--out", str(out), "-q"]):
        assert main(argv) == 2
        err = one_line(capsys.readouterr().err)
        assert err.startswith(f"o2ksim: error: {path}:{line}: field {field}: has no effect in any run: "
                              "policy 'fcfs' with estimates "), err  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize(
    ("policies", "tail"),
    [  # FCFS beside a policy that reads them: the design's control; with kills they act
        ('["fcfs", "fcfs-backfill"]', '[factors]\nworkload.estimates = ["requested", "actual"]\n'),
        ('["fcfs", "fcfs-backfill"]', 'estimates = "actual"\n'),
        ('["fcfs"]', 'estimates = "actual"\n[protocol]\nkill_overrun = true\n'),
    ],
)
def test_a_scenario_where_some_run_reads_them_is_accepted(tmp_path, capsys, policies, tail):
    assert main(["scenario", "show", str(_scenario(tmp_path, policies, tail))]) == 0
