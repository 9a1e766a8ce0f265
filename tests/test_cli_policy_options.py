"""``o2ksim run``'s policy options come from the policies' declared parameters, and its
policy line from the policy's own counts (``Policy.summary_counts``).

A user's kind is registered in a fresh interpreter (the registry is
process-wide), so these tests run ``o2ksim`` in a child process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from o2ksim.cli import main

REPO = Path(__file__).resolve().parents[1]
TINY = str(REPO / "traces" / "tiny.swf")

USER_POLICY = '''
import sys
from o2ksim.cli import main
from o2ksim.engine.decisions import Start
from o2ksim.policies import POLICIES, Param, Policy


class CountingFCFS(Policy):
    """Strict FCFS on one host that counts the jobs it starts."""

    kind = "counting-fcfs"
    description = "strict FCFS that counts its starts"
    PARAMS = {
        "bonus": Param(int, 0, "added to the number of starts (to see the option arrive)", option=True,
                       metavar="N"),
        "quiet_param": Param(int, 0, "a parameter that is not a command-line option"),
    }

    def bind(self, machine, rng=None):
        super().bind(machine, rng)
        self.started = set()

    def schedule(self, snap):
        out = []
        free = {h.name: h.free_procs for h in snap.hosts}
        for job in snap.queue:
            host = next((h for h, f in free.items() if f >= job.spec.procs), None)
            if host is None:
                break
            free[host] -= job.spec.procs
            self.started.add(job.id)
            out.append(Start(job, host))
        return out

    def summary_counts(self, ids=None):
        started = self.started if ids is None else self.started & set(ids)
        return {"fcfs_starts": len(started) + self.params["bonus"]}


POLICIES.register(CountingFCFS)
sys.exit(main(sys.argv[1:]))
'''


def _user(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", USER_POLICY, *args], capture_output=True, text=True, cwd=REPO
    )


def _trace_jobs(path: str) -> int:
    """Job lines of an SWF file (not comments): every job the run simulates."""
    lines = Path(path).read_text().splitlines()
    return sum(1 for line in lines if line.strip() and not line.lstrip().startswith(";"))


@pytest.mark.parametrize(
    ("policy", "option", "value"),
    [
        ("fcfs-backfill", "--min-interval", "0"),  # EQspatial's, not backfill's
        ("eqspatial-5m", "--reservations", "2"),  # backfill's, not EQspatial's
        ("ncsa-lsf", "--quantum", "2m"),  # immediate service's, not NCSA-LSF*'s
        ("fcfs", "--no-sliding", None),  # strict FCFS takes no parameter at all
    ],
)
def test_an_option_the_policy_does_not_declare_is_refused_in_one_line(policy, option, value, capsys):
    argv = ["run", "--trace", TINY, "--policy", policy, option] + ([value] if value else [])
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("o2ksim: error: " + option.replace("--no-", "--"))
    assert f"policy '{policy}'" in err[0] and "does not take it" in err[0]


def test_an_option_is_checked_by_its_declaration(capsys):
    # the parameter's own check ("an integer >= 0 or 'all'"): a usage error, exit 2, one line
    assert main(["run", "--trace", TINY, "--reservations", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--reservations" in err[0] and "integer from 0 to 2147483647 or 'all'" in err[0]


def test_a_declared_option_of_a_users_policy_is_listed_and_reaches_it(tmp_path):
    help_text = _user(["run", "--help"]).stdout
    assert "--bonus N" in help_text and "[counting-fcfs]" in help_text
    assert "--quiet-param" not in help_text  # declared without option=True
    listing = _user(["policies", "counting-fcfs"]).stdout
    assert "bonus = 0" in listing and "[o2ksim run --bonus]" in listing
    out = tmp_path / "run"
    done = _user(["run", "--trace", TINY, "--policy", "counting-fcfs", "--bonus", "100", "--out", str(out)])
    assert done.returncode == 0, done.stderr
    # every job of the trace starts once under strict FCFS (all fit the host): the count is
    # the number of job lines, plus the bonus the option passed
    expected = _trace_jobs(TINY) + 100
    assert f"policy counts: fcfs_starts {expected}" in done.stdout.splitlines()
    assert json.loads((out / "summary.json").read_text())["fcfs_starts"] == expected


def test_a_users_policy_refuses_an_option_it_does_not_declare():
    done = _user(["run", "--trace", TINY, "--policy", "counting-fcfs", "--quantum", "2m"])
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and "--quantum: policy 'counting-fcfs'" in err[0]


def test_a_policy_without_counts_prints_no_policy_line(capsys):
    assert main(["run", "--trace", TINY, "--policy", "fcfs-backfill"]) == 0
    assert "policy counts:" not in capsys.readouterr().out
