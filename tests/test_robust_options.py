"""Every option honoured or refused; the API refuses wrong types in one line (issue 27).

Each refusal is one line with exit 2 (CLI) or an :class:`O2KSimError` (API),
naming the option as the user wrote it, and comes before anything runs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from o2ksim.cli import main
from o2ksim.errors import O2KSimError

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")


def refused(capsys, args: list[str], *needles: str) -> str:
    capsys.readouterr()
    assert main(args) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert captured.out == ""  # nothing ran
    return lines[0]


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (["--grace", "5m"], ["--grace 5m: has no effect", "--kill-overrun"]),
        (["--grace", "5m", "--no-kill-overrun"], ["--grace 5m: has no effect"]),
        (["--quantum", "2m"], ["--quantum: has no effect", "immediate_service = off"]),
        (["--initial-memory", "2GB"], ["--initial-memory: has no effect"]),
        (["--set", "quantum=2m"], ["--set quantum: has no effect"]),
        (["--eligible-after", "5m"], ["--eligible-after: has no effect"]),
        (["--set", "reservations=1\nsliding=false"], ["--set", "one KEY=VALUE per --set"]),
        (["--window", "nan", "100"], ["--window nan 100:"]),
        (["--window", "x", "y"], ["--window x y:", "'x' is not a duration"]),
        (["--window", "100", "50"], ["--window 100 50:", "must be after its start"]),
        (["--window", "100", "100"], ["--window 100 100:"]),
        (["--window", "1000d", "2000d"], ["--window 1000d 2000d:", "no job of the trace"]),
        # found by the session-13 audit: accepted although no reservation is held
        (["--reservations", "0", "--no-sliding"], ["--no-sliding: has no effect", "reservations = 0"]),
        (["--reservations", "0", "--reservation-kind", "fixed"],
         ["--reservation-kind: has no effect", "reservations = 0"]),
        (["--set", "reservations=0", "--set", "sliding=false"], ["--set sliding: has no effect"]),
        (["--set", "reservations=0", "--set", "reservation_kind='fixed'"],
         ["--set reservation_kind: has no effect"]),
        # found by the session-13 audit: an OverflowError traceback; the option was not named
        (["--estimates", "user-recent:9223372036854775808"],
         ["--estimates: '9223372036854775808' is not a number of jobs from 1 to 1,000,000,000"]),
        (["--estimates", "user-recent:\u00b2"], ["--estimates: '\u00b2' is not a number of jobs"]),
        (["--estimates", "user-recent:0"], ["--estimates: '0' is not a number of jobs"]),
        (["--estimates", "scenario-a:1e400"], ["--estimates:", "from 0 to 30,000", "got '1e400'"]),
    ],
)  # fmt: skip
def test_options_without_effect_or_out_of_reach_are_refused(capsys, tmp_path, extra, needles):
    out = tmp_path / "out"
    refused(capsys, ["run", "--trace", TINY, "--out", str(out), *extra], *needles)
    assert not out.exists(), "refused before anything was written, the folder included"


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--parquet"], ["--parquet needs --out DIR"]),
        (["--no-sliding", "--set", "sliding=true"], ["--no-sliding and --set sliding:", "twice"]),
        (["--reservations", "2", "--set", "reservations=3"], ["--reservations and --set reservations"]),
        (["--policy", "fcfs-backfill-immediate", "--quantum", "2m", "--set", "quantum=120"],
         ["--quantum and --set quantum"]),
    ],
)  # fmt: skip
def test_an_option_without_its_place_or_given_twice_is_refused(capsys, args, needles):
    """Found by the issue-27 audit: ``--parquet`` without ``--out`` ran and wrote nothing;
    ``--no-sliding --set sliding=true`` ran with one of the two dropped in silence."""
    refused(capsys, ["run", "--trace", TINY, *args], *needles)


def test_the_options_are_honoured_where_they_act(capsys):
    assert main(["run", "--trace", TINY, "-q", "--grace", "5m", "--kill-overrun"]) == 0
    assert main(["run", "--trace", TINY, "-q", "--policy", "fcfs-backfill-immediate",
                 "--quantum", "2m", "--initial-memory", "2GB", "--eligible-after", "30m"]) == 0  # fmt: skip
    assert (
        main(["run", "--trace", TINY, "-q", "--set", "reservations=1", "--set", "sliding=false"])
        == 0
    )


def test_reservation_settings_are_accepted_with_reservations(capsys):
    """The refusals above are for ``reservations = 0`` only: with one reservation the same
    settings act (a preset's own fixed or non-sliding reservations are never refused)."""
    for extra in (["--no-sliding"], ["--reservation-kind", "fixed"], ["--release-ties", "together"]):
        assert main(["run", "--trace", TINY, "-q", "--reservations", "1", *extra]) == 0
    assert main(["run", "--trace", TINY, "-q", "--policy", "ncsa-ms", "--reservations", "0"]) == 0


def test_two_sets_reach_the_policy():
    from o2ksim import simulate

    result = simulate(
        TINY, policy="fcfs-backfill", policy_params={"reservations": 2, "sliding": False}
    )
    assert (result.policy["reservations"], result.policy["sliding"]) == (2, False)


# ------------------------------------------------------------------ the API: wrong types
def api_cases():
    from o2ksim import compare, load_machine, make_policy, read_swf, simulate, timeline, write_swf
    from o2ksim.experiments.scenario import load_scenario
    from o2ksim.experiments.sweep import run_sweep
    from o2ksim.invariants import violations

    return {
        "frame without SWF columns": (lambda: simulate(pd.DataFrame({"a": [1]}), machine="o2k"),
                                      "lacks the SWF column(s) job_id"),
        "observers=[5]": (lambda: simulate(TINY, observers=[5]), "observers: 5 is not an Observer"),
        "observers=5": (lambda: simulate(TINY, observers=5), "observers: expected a list"),
        "window=('x','y')": (lambda: simulate(TINY, window=("x", "y")), "window: 'x' is not a duration"),
        "window=nan": (lambda: simulate(TINY, window=(float("nan"), 100)), "window"),
        "window reversed": (lambda: simulate(TINY, window=(100, 50)), "window"),
        "interval='abc'": (lambda: simulate(TINY, interval="abc"), "interval: 'abc' is not a duration"),
        "overrun_grace without kills": (lambda: simulate(TINY, overrun_grace=60),
                                        "overrun_grace 60: has no effect"),
        "quantum without immediate service": (
            lambda: simulate(TINY, policy_params={"quantum": 60}), "quantum: has no effect"),
        "sliding without reservations": (
            lambda: simulate(TINY, policy_params={"reservations": 0, "sliding": False}),
            "sliding: has no effect: policy 'fcfs-backfill' runs with reservations = 0"),
        "estimates='user-recent:2**63'": (
            lambda: simulate(TINY, estimates=f"user-recent:{2**63}"),
            f"estimates: '{2**63}' is not a number of jobs from 1 to 1,000,000,000"),
        "estimates=5": (lambda: simulate(TINY, estimates=5),
                        "estimates: expected a runtime-estimate scenario name"),
        "compare([1, 2])": (lambda: compare([1, 2]), "compare: 1 is not a result"),
        "compare(5)": (lambda: compare(5), "compare: expected a list"),
        "compare([])": (lambda: compare([]), "at least one result"),
        "timeline(5)": (lambda: timeline(5), "timeline: 5 is not a result"),
        "load_scenario(5)": (lambda: load_scenario(5), "expected a scenario name or a TOML path"),
        "read_swf(5)": (lambda: read_swf(5), "read_swf: expected a file path"),
        "read_swf(limit=-1)": (lambda: read_swf(TINY, limit=-1), "limit must be an integer >= 0"),
        "run_sweep(workers=0)": (lambda: run_sweep(None, "/nonexistent/x", workers=0), "workers"),
        "run_sweep(workers=-3)": (lambda: run_sweep(None, "/nonexistent/x", workers=-3), "workers"),
        # found by the issue-27 audit (were TypeError / AttributeError tracebacks, or accepted)
        "interval=True": (lambda: simulate(TINY, interval=True), "interval: True is not a duration"),
        "load_machine(5)": (lambda: load_machine(5), "expected a machine name or a TOML path, got 5"),
        "make_policy(5)": (lambda: make_policy(5), "make_policy: expected a policy name"),
        "write_swf(5, path)": (lambda: write_swf(5, "/nonexistent/x.swf"), "write_swf: needs a Trace"),
        "write_swf(frame < -1)": (
            lambda: write_swf(pd.DataFrame({"job_id": [1], "submit": [-5]}),
                              os.path.join(tempfile.gettempdir(), "o2ksim-never-written.swf")),
            "write_swf: column submit has -5"),
        "violations(5, None, m)": (lambda: violations(5, None, load_machine("o2k")),
                                   "violations: jobs must be a DataFrame"),
        "violations(jobs, 5, m)": (lambda: violations(simulate(TINY).jobs, 5, load_machine("o2k")),
                                   "violations: segments must be a DataFrame"),
        "violations(jobs, None, 5)": (lambda: violations(simulate(TINY).jobs, None, 5),
                                      "violations: machine must be a MachineSpec"),
        "violations(frame without end)": (
            lambda: violations(pd.DataFrame({"job_id": [1]}), None, load_machine("o2k")),
            "violations: jobs lacks the column(s) submit, start, end, procs"),
        "Result.save(5)": (lambda: simulate(TINY).save(5), "out_dir: expected a folder path, got 5"),
    }  # fmt: skip


@pytest.mark.parametrize("case", list(api_cases()))
def test_the_api_refuses_wrong_values_in_one_line(case):
    call, needle = api_cases()[case]
    with pytest.raises(O2KSimError) as info:
        call()
    text = str(info.value)
    assert needle in text and "\n" not in text


def test_violations_accepts_segments_none_as_documented():
    from o2ksim import simulate
    from o2ksim.invariants import violations

    result = simulate(TINY)
    assert violations(result.jobs, None, result.machine) == []


KTH = str(ROOT / "traces" / "kth-sp2-sample.swf")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["validate", KTH, "--window", "x", "y"], ["--window x y:", "'x' is not a duration"]),
        (["predict", TINY, "--out", "{out}", "--window", "x", "y"], ["--window x y:", "'x'"]),
        (["predict", TINY, "--out", "{out}", "--fit-window", "1d", "zz"], ["--fit-window 1d zz:", "'zz'"]),
        (["predict", TINY, "--out", "{out}", "--periods", "0", "a", "9"], ["--periods 0 a 9:", "'a'"]),
        (["predict", TINY, "--out", "{out}", "--window", "100", "50"], ["--window 100 50:", "after"]),
        (["predict", TINY, "--out", "{out}", "--periods", "0", "9"], ["--periods 0 9:", "at least three"]),
    ],
)  # fmt: skip
def test_the_time_options_of_other_commands_are_named_too(capsys, tmp_path, args, needles):
    """Found by the issue-27 audit: ``validate`` and ``predict`` said only "'x' is not a
    duration" for a bad ``--window`` (``run`` named the option)."""
    out = tmp_path / "out"
    refused(capsys, [a.replace("{out}", str(out)) for a in args], *needles)
    assert not out.exists()


@pytest.mark.parametrize("kw", [{"window": ("x", "y")}, {"fit_window": (0, "zz")}, {"periods": [0, "a", 9]}])
def test_the_api_of_predict_names_the_parameter(kw):
    from o2ksim.prediction import predict

    with pytest.raises(O2KSimError, match=f"^{next(iter(kw))}: '"):
        predict(TINY, **kw)


def test_a_sweep_refused_after_its_folder_check_leaves_no_folder(capsys, tmp_path, monkeypatch):
    """Found by the issue-27 audit: ``scenario run --out NEW`` made NEW for its up-front
    write check, and a refusal after it (here an injected one from the sweep) left NEW
    behind, empty."""
    from o2ksim.experiments import sweep  # the command imports it once the folder is checked

    def refuse(*_a, **_k):
        raise O2KSimError("refused after the folder check")

    monkeypatch.setattr(sweep, "run_sweep", refuse)
    out = tmp_path / "new" / "sweep"
    refused(capsys, ["scenario", "run", str(ROOT / "scenarios" / "kth-backfill.toml"),
                     "--out", str(out), "-q"], "refused after the folder check")  # fmt: skip
    assert not out.exists()


def test_a_report_refused_after_its_folder_check_leaves_no_folder(capsys, tmp_path, monkeypatch):
    """The same for ``report DIR --out NEW``; a folder that existed before stays."""
    from o2ksim.report import html  # the command imports it once the folder is claimed

    def refuse(*_a, **_k):
        raise O2KSimError("refused after the folder check")

    monkeypatch.setattr(html, "write_report", refuse)
    results = tmp_path / "results"
    results.mkdir()
    (results / "plan.json").write_text("{}")
    out = tmp_path / "page"
    refused(capsys, ["report", str(results), "--out", str(out)], "refused after the folder check")
    assert not out.exists()
    out.mkdir()
    refused(capsys, ["report", str(results), "--out", str(out)], "refused after the folder check")
    assert out.is_dir()  # not the command's to remove
