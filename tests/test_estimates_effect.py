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
