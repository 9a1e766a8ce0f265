"""Defaults that change results are said on screen (issue 27).

Perfect estimates for jobs without a requested runtime, the rejected jobs per
reason, and the machine a trace runs on (named by ``o2ksim generate`` in the
SWF header, else one host from ``MaxProcs``).  Expected counts come from the
hand-written traces below.
"""

from __future__ import annotations

from pathlib import Path

from o2ksim.cli import main

HEADER = "; MaxProcs: 8\n"


def job(job_id: int, *, procs: int = 2, req_time: int = 100, run: int = 50, submit: int = 0) -> str:
    return f"{job_id} {submit} -1 {run} {procs} -1 -1 {procs} {req_time} -1 1 1 1 1 1 1 -1 -1"


def trace(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "t.swf"
    path.write_text(HEADER + "\n".join(lines) + "\n")
    return str(path)


def test_jobs_without_requested_runtime_are_said_to_get_perfect_estimates(tmp_path, capsys):
    path = trace(tmp_path, job(1, req_time=-1), job(2), job(3, req_time=-1))
    assert main(["run", "--trace", path]) == 0
    err = capsys.readouterr().err
    warning = [ln for ln in err.splitlines() if "requested" in ln]
    assert warning == [
        f"o2ksim: warning: {path}: 2 of 3 jobs have no requested runtime (field 9); they are "
        "planned with their actual runtimes (perfect estimates, which flatter backfilling); "
        "--estimates scenario-a:20 plans with 1.2 x the runtime"
    ]
    assert main(["run", "--trace", path, "--estimates", "scenario-a:20"]) == 0
    assert "requested runtime" not in capsys.readouterr().err


PERFECT = (
    "2 of 3 jobs have no requested runtime (field 9); they are planned with their actual "
    "runtimes (perfect estimates, which flatter backfilling)"
)


def test_the_api_and_scenario_run_say_it_too(tmp_path, capsys):
    """The audit's variants of the bullet: ``simulate()`` and ``o2ksim scenario run`` said
    nothing.  The API warns (PerfectEstimatesWarning), once per call; ``scenario run`` prints
    one line per trace, not one per run, and its runs stay silent."""
    import warnings

    import pytest

    from o2ksim import simulate
    from o2ksim.errors import PerfectEstimatesWarning

    path = trace(tmp_path, job(1, req_time=-1), job(2), job(3, req_time=-1))
    with pytest.warns(PerfectEstimatesWarning, match=PERFECT.replace("(", r"\(").replace(")", r"\)")):
        simulate(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simulate(path, estimates="scenario-a:20")  # estimates that do not come from the runtimes
    scenario = tmp_path / "s.toml"
    scenario.write_text(f'name = "s"\npolicies = ["fcfs", "fcfs-backfill"]\n[workload]\ntrace = "{path}"\n')
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Python warning escapes the CLI
        assert main(["scenario", "run", str(scenario), "--out", str(tmp_path / "res"), "-j", "1",
                     "--no-report"]) == 0  # fmt: skip
    err = capsys.readouterr().err.splitlines()
    assert [ln for ln in err if "requested runtime" in ln] == [
        f"o2ksim: warning: {path}: {PERFECT}; --estimates scenario-a:20 plans with 1.2 x the runtime"
    ]


def test_rejected_jobs_are_counted_per_reason_with_a_pointer(tmp_path, capsys):
    path = trace(tmp_path, job(1, procs=16), job(2, procs=32), job(3), job(4, procs=64))
    out = tmp_path / "out"
    assert main(["run", "--trace", path, "--out", str(out)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("rejected")]
    assert lines == [
        "rejected 3: 3 'requests 16 processors; the largest host has 8' and alike "
        "(the reason column of jobs.csv gives each job's)"
    ]


def test_the_machine_chosen_for_a_trace_is_said(tmp_path, capsys):
    path = trace(tmp_path, job(1))
    assert main(["run", "--trace", path]) == 0
    assert (
        "o2ksim: note: machine: one host of 8 processors from the trace header's MaxProcs"
        in capsys.readouterr().err
    )
    assert main(["run", "--trace", path, "--machine", "o2k"]) == 0
    assert "note: machine" not in capsys.readouterr().err


def test_a_generated_o2k_trace_names_its_machine_and_runs_on_it(tmp_path, capsys):
    from o2ksim import read_swf, simulate

    out = tmp_path / "week.swf"
    assert main(["generate", "--span", "2d", "--out", str(out)]) == 0
    assert "; O2KSimMachine: o2k" in out.read_text().splitlines()[:40]
    capsys.readouterr()
    assert main(["run", "--trace", str(out)]) == 0
    captured = capsys.readouterr()
    assert "machine o2k, named by the trace header (O2KSimMachine)" in captured.err
    assert "on o2k: 8 host(s), 960 processors" in captured.out
    # the API picks it up too, and an explicit machine still wins
    assert len(simulate(str(out)).machine.hosts) == 8
    assert len(simulate(read_swf(out)).machine.hosts) == 8


def test_a_rejected_analysed_job_does_not_make_the_cool_down_short(tmp_path, capsys):
    # job 2 asks for 16 processors of 8: rejected; job 1 starts at 0; job 3 arrives after the
    # window, so arrivals continued past every start the window needed (hand count: not short)
    path = trace(tmp_path, job(1), job(2, procs=16, submit=100), job(3, submit=5000))
    assert main(["run", "--trace", path, "--window", "0", "1000", "--warmup", "0"]) == 0
    out = capsys.readouterr().out
    assert "rejected 1:" in out
    assert "ran out of arrivals" not in out
    from o2ksim import simulate

    summary = simulate(path, window=(0, 1000, 0)).summary
    assert summary["cooldown_short"] is False and summary["cooldown_needed"] == 0.0
