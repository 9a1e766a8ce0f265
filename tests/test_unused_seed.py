"""A seed that changed nothing is said once, after the run (issue 27: every option changes the
run or is said not to).

Whether a policy draws from the run's generator is known only after the run (a user's policy
may), so o2ksim looks at the generator's ``bit_generator.state``: unchanged means no draw.  The
hand-made cases: FCFS never draws; NCSA-LSF draws the host it drains among equal ones (T§3.1:
two 2-processor hosts both busy for 10 h, a third job overdue after its 5 h drain wait); a
generated workload is drawn from the seed itself.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.errors import UnusedSeedWarning
from o2ksim.experiments.scenario import load_scenario
from o2ksim.experiments.sweep import run_sweep
from o2ksim.policies import make_policy

NOTE = (
    "{given} changed nothing in this run: neither the workload (read, not generated) nor the "
    "policy {policy} drew from the run's random generator, so every seed gives the same schedule"
)

# two hosts of 2 processors, the LSF classes of tests/test_lsf.py (a 2 h job is "st": drain after 5 h)
TOY = """name = "toy"
[lsf]
user_limit = 0
system_limits = {}
time_classes = { vst = 1, st = 10, mt = 20, lt = 40 }
size_classes = { sj = [2, 1], mj = [4, 2], lj = [16, 8] }
drain_wait = { vst = 2, st = 5, mt = 10, lt = 20 }
[[host]]
name = "a"
procs = 2
memory_gb = 4
lsf = { priority = ["sj"], limits = {} }
[[host]]
name = "b"
procs = 2
memory_gb = 4
lsf = { priority = ["sj"], limits = {} }
"""


def _swf_line(i: int, submit: int, run: int, procs: int, req: int) -> str:
    return f"{i} {submit} -1 {run} {procs} -1 -1 {procs} {req} -1 1 1 1 1 1 1 -1 -1"


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    """A trace (J1, J2 fill both hosts for 10 h; J3, 2 processors for 1 h of a requested 2 h,
    comes at 0.1 h and is overdue at 5.1 h: LSF drains a host drawn at random) and the machine."""
    trace = tmp_path / "t.swf"
    lines = ["; UnixStartTime: 1000000000", "; MaxProcs: 4"]
    lines += [_swf_line(1, 0, 36000, 2, 36000), _swf_line(2, 0, 36000, 2, 36000), _swf_line(3, 360, 3600, 2, 7200)]
    trace.write_text("\n".join(lines) + "\n")
    machine = tmp_path / "toy.toml"
    machine.write_text(TOY)
    return trace, machine


def _run(capsys, *args: str) -> list[str]:
    assert main(["run", *args]) == 0
    return [ln for ln in capsys.readouterr().err.splitlines() if "changed nothing" in ln]


def test_fcfs_on_a_trace_with_a_seed_says_so_once(files, capsys):
    trace, _ = files
    said = _run(capsys, "--trace", str(trace), "--policy", "fcfs", "--seed", "7")
    assert said == ["o2ksim: warning: " + NOTE.format(given="--seed 7", policy="fcfs")]


def test_no_seed_given_no_note(files, capsys):
    trace, _ = files
    assert _run(capsys, "--trace", str(trace), "--policy", "fcfs") == []


def test_ncsa_lsf_drawing_a_drained_host_has_no_note(files, capsys):
    trace, machine = files
    args = ["--trace", str(trace), "--machine", str(machine), "--policy", "ncsa-lsf", "--seed", "7"]
    assert _run(capsys, *args) == []


def test_the_lsf_case_does_draw(files):
    """The case above is one where LSF drains (the draw happens at each drain given), and the
    drained host follows the seed: both come up over 16 seeds."""
    trace, machine = files
    drained = set()
    for seed in range(16):
        policy = make_policy("ncsa-lsf")
        policy.log = []
        result = simulate(str(trace), machine=str(machine), policy=policy, seed=seed)
        assert policy.counters["drains"] == 1 and result.random_draws is True
        drained |= {e[2] for e in policy.log if e[1] == "drain"}
    assert drained == {"a", "b"}


def test_a_generated_workload_uses_the_seed_so_no_note(capsys):
    assert _run(capsys, "--model", "o2k", "--span", "1d", "--policy", "fcfs", "--seed", "7", "-q") == []
    assert _run(capsys, "--model", "o2k", "--span", "1d", "--policy", "fcfs", "--seed", "7") == []


def test_quiet_says_nothing(files, capsys):
    trace, _ = files
    assert _run(capsys, "--trace", str(trace), "--policy", "fcfs", "--seed", "7", "-q") == []


def test_the_api_warns_with_its_class(files):
    trace, machine = files
    with pytest.warns(UnusedSeedWarning) as caught:
        simulate(str(trace), policy="fcfs", seed=0)  # given, even if it is the default value
    assert [str(w.message) for w in caught if w.category is UnusedSeedWarning] == [
        NOTE.format(given="seed=0", policy="fcfs")
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedSeedWarning)
        simulate(str(trace), policy="fcfs")  # no seed given
        simulate(str(trace), machine=str(machine), policy="ncsa-lsf", seed=7)  # drew


def _scenario(tmp_path: Path, trace: Path, machine: Path, policies: str, seeds: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        f'name = "s"\npolicies = {policies}\nmachine = "{machine}"\n[workload]\ntrace = "{trace}"\n'
        f"[protocol]\n{seeds}\n[outputs]\nreport = false\n"
    )
    return path


@pytest.mark.parametrize(
    ("policies", "seeds", "quiet"),
    [
        ('["fcfs", "fcfs-backfill"]', "seeds = [1, 2, 3]", "fcfs, fcfs-backfill"),
        ('["fcfs", "ncsa-lsf"]', "seeds = [1, 2, 3, 4]", "fcfs"),  # LSF drew: not named
        ('["ncsa-lsf"]', "seeds = [1, 2, 3, 4]", None),
        ('["fcfs"]', "", None),  # no seeds given (the default [0])
    ],
)
def test_a_sweep_says_it_once_for_the_scenario(files, tmp_path, capsys, policies, seeds, quiet):
    trace, machine = files
    path = _scenario(tmp_path, trace, machine, policies, seeds)
    assert main(["scenario", "run", str(path), "--out", str(tmp_path / "res"), "-j", "1"]) == 0
    said = [ln for ln in capsys.readouterr().err.splitlines() if "changed nothing" in ln]
    listed = seeds.partition("[")[2].rstrip("]")
    expected = [] if quiet is None else [
        f"o2ksim: warning: {path}: protocol.seeds {listed} changed nothing in the runs of {quiet}: "
        "neither the workload (read, not generated) nor the policy drew from the run's random "
        "generator, so every seed gives the same schedule"
    ]  # fmt: skip
    assert said == expected


def test_run_sweep_warns_once(files, tmp_path):
    trace, machine = files
    sc = load_scenario(_scenario(tmp_path, trace, machine, '["fcfs"]', "seeds = [1, 2, 3]"))
    with pytest.warns(UnusedSeedWarning) as caught:
        res = run_sweep(sc, tmp_path / "res", workers=1, progress=False)
    assert [w for w in caught if w.category is UnusedSeedWarning] and len(
        [w for w in caught if w.category is UnusedSeedWarning]
    ) == 1
    assert res.unused_seeds.endswith("every seed gives the same schedule") and len(res.ran) == 3


def test_validate_warns_too(tmp_path):
    """``validate`` runs the same way: FCFS on a trace with recorded waits, seed given."""
    from o2ksim.analysis.validate import validate

    trace = tmp_path / "w.swf"
    lines = ["; UnixStartTime: 1000000000", "; MaxProcs: 4"]
    lines += [f"{i} {3600 * i} 0 60 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1" for i in range(1, 6)]
    trace.write_text("\n".join(lines) + "\n")
    with pytest.warns(UnusedSeedWarning, match="^seed=3 changed nothing in this run"):
        validate(str(trace), policy="fcfs", seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedSeedWarning)
        validate(str(trace), policy="fcfs")
