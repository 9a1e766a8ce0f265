"""Hostile input and failure: one named regression test per defect of issue 16.

Each test states the contract: a user mistake gives exit 2 and one line
``o2ksim: error: ...`` naming the file (and line and field where there is one),
never a traceback, never a silently wrong result, never a hang.  Expected values
come from the inputs written in the test (hand counts), not from o2ksim output.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from o2ksim.cli import main
from o2ksim.errors import ConfigError, O2KSimError, output_dir
from o2ksim.machine import load_machine
from o2ksim.run.api import simulate
from o2ksim.workloads.swf import read_swf

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "traces" / "tiny.swf"
SAMPLE = ROOT / "traces" / "kth-sp2-sample.swf"

pytestmark = pytest.mark.timeout(120)

HEADER = "; MaxProcs: 16\n; UnixStartTime: 946684800\n"


def job_line(job_id: int, submit: int = 0, run: int = 60, procs: int = 1, mem: int = -1) -> str:
    """One SWF job line (18 fields)."""
    fields = [job_id, submit, -1, run, procs, -1, -1, procs, run, mem, 1, 1, 1, 1, 1, 1, -1, -1]
    return " ".join(map(str, fields))


def swf(tmp_path: Path, *lines: str, header: str = HEADER, name: str = "t.swf") -> Path:
    p = tmp_path / name
    p.write_text(header + "\n".join(lines) + "\n")
    return p


def machine_file(tmp_path: Path, text: str, name: str = "m.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


GOOD_MACHINE = """
name = "m"
[[host]]
name = "a"
procs = 16
memory_gb = 16
"""


def one_line_error(capsys, code: int, *needles: str) -> str:
    """Exit 2, one stderr line starting ``o2ksim: error:``, holding every needle."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("o2ksim: error: "), err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# ------------------------------------------------------------------------- silently wrong
def test_submit_time_2_53_is_refused_with_line_and_field_not_a_hang(tmp_path, capsys):
    p = swf(tmp_path, job_line(1), job_line(2, submit=2**53))
    one_line_error(capsys, main(["trace", "check", str(p)]), "t.swf:4", "field 2 (submit)")
    one_line_error(capsys, main(["run", "--trace", str(p), "-q"]), "t.swf:4", "submit")


def test_huge_run_time_is_refused(tmp_path, capsys):
    p = swf(tmp_path, job_line(1, run=10**15))
    one_line_error(capsys, main(["run", "--trace", str(p), "-q"]), "t.swf:3", "field 4 (run_time)")


def test_kill_overrun_string_in_machine_file_is_refused(tmp_path, capsys):
    p = machine_file(tmp_path, GOOD_MACHINE + '[options]\nkill_overrun = "no"\n')
    with pytest.raises(ConfigError, match=r"kill_overrun.*TOML boolean"):
        load_machine(p)
    code = main(["run", "--trace", str(TINY), "--machine", str(p), "-q"])
    one_line_error(capsys, code, "m.toml", "kill_overrun")
    with pytest.raises(O2KSimError, match="kill_overrun"):
        simulate(TINY, policy="fcfs", kill_overrun="no")


def test_overrun_grace_nan_is_refused(tmp_path, capsys):
    p = machine_file(tmp_path, GOOD_MACHINE + "[options]\noverrun_grace = nan\n")
    with pytest.raises(ConfigError, match="overrun_grace"):
        load_machine(p)
    with pytest.raises(O2KSimError, match="overrun_grace"):
        simulate(TINY, policy="fcfs", kill_overrun=True, overrun_grace=float("nan"))
    code = main(["run", "--trace", str(TINY), "--grace", "nan", "-q"])
    one_line_error(capsys, code, "--grace")


def test_memory_times_processors_overflow_is_refused(tmp_path, capsys):
    # 2**62 KB per processor x 4 processors wraps int64 to 0: the job would run "in no memory"
    p = swf(tmp_path, job_line(1), job_line(2, procs=4, mem=2**62))
    code = main(["run", "--trace", str(p), "--machine", str(machine_file(tmp_path, GOOD_MACHINE)), "-q"])
    one_line_error(capsys, code, "t.swf:4", "field 10 (req_mem)")


@pytest.mark.parametrize(
    ("text", "field", "guess"),
    [
        (GOOD_MACHINE.replace("memory_gb", "memory_gbs"), "host[0].memory_gbs", "memory_gb"),
        (GOOD_MACHINE + "[options]\nkil_overrun = true\n", "options.kil_overrun", "kill_overrun"),
        ("nmae = 'x'\n" + GOOD_MACHINE.replace('name = "m"', ""), "nmae", "name"),
        (GOOD_MACHINE + "[option]\nkill_overrun = true\n", "option", "options"),
        (GOOD_MACHINE + "memory = {}\n", "host[0].memory", "memory_mb"),
    ],
)
def test_unknown_machine_key_names_the_nearest_valid_key(tmp_path, capsys, text, field, guess):
    p = machine_file(tmp_path, text)
    code = main(["machines", str(p)])
    one_line_error(capsys, code, "m.toml", f"field {field}", f"did you mean '{guess}'")


def test_window_says_how_many_jobs_it_drops(tmp_path, capsys):
    trace = read_swf(SAMPLE)
    start, warmup = 10 * 86400, 2 * 86400
    before = int((trace.jobs["submit"] < start - warmup).sum())  # hand count from the input
    assert before > 0
    code = main([
        "run", "--trace", str(SAMPLE), "--window", "10d", "20d", "--warmup", "2",
        "--policy", "fcfs", "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert f"{before} job(s) submitted before 8d after the trace start" in err  # 10d - 2d
    jobs = pd.read_csv(tmp_path / "jobs.csv")
    # the later jobs that never arrived (the run stopped first) are counted, not written
    not_arrived = json.loads((tmp_path / "summary.json").read_text())["not_arrived"]
    assert len(jobs) + not_arrived == len(trace.jobs) - before


# ------------------------------------------------------------------------------ tracebacks
def test_duplicate_job_ids_are_refused_by_run_and_trace_check(tmp_path, capsys):
    p = swf(tmp_path, job_line(1), job_line(2, submit=5), job_line(1, submit=9))
    one_line_error(capsys, main(["trace", "check", str(p)]), "t.swf:5", "job id 1", "line 3")
    one_line_error(capsys, main(["run", "--trace", str(p), "-q"]), "t.swf:5", "job id 1")
    # lenient reading skips the repeated line and says so
    assert main(["trace", "check", str(p), "--lenient"]) == 0
    assert "1 duplicate job id" in capsys.readouterr().out


def test_job_specs_out_of_range_are_refused_not_a_hang():
    from o2ksim.jobs import JobSpec
    from o2ksim.machine import single_host

    for bad in (JobSpec(1, 2.0**53, 1, 0, 60.0, 60.0), JobSpec(1, 0.0, 1, 0, math.nan, 60.0)):
        with pytest.raises(O2KSimError, match="not a time o2ksim simulates"):
            simulate([JobSpec(0, 0.0, 1, 0, 60.0, 60.0), bad], machine=single_host(4), policy="fcfs")
    with pytest.raises(O2KSimError, match="more than once"):
        simulate([JobSpec(1, 0.0, 1, 0, 6.0, 6.0)] * 2, machine=single_host(4), policy="fcfs")


def test_duplicate_job_ids_in_a_frame_are_refused():
    frame = read_swf(TINY).jobs
    frame.loc[1, "job_id"] = frame.loc[0, "job_id"]
    with pytest.raises(O2KSimError, match="appears more than once"):
        simulate(frame, machine="kth-sp2", policy="fcfs")


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("memory_gb = nan", "host[0].memory_gb"),
        ("memory_gb = inf", "host[0].memory_gb"),
        ("memory_mb = 0.0001", "host[0].memory_mb"),
        ("memory_gb = -3", "host[0].memory_gb"),
        ('memory_gb = "16"', "host[0].memory_gb"),
        ("procs = 1e3", "host[0].procs"),
    ],
)
def test_bad_machine_values_are_one_line_errors(tmp_path, capsys, value, needle):
    text = GOOD_MACHINE.replace("memory_gb = 16", "").replace("procs = 16", "procs = 16\n" + value)
    if value.startswith("procs"):
        text = GOOD_MACHINE.replace("procs = 16", value)
    p = machine_file(tmp_path, text)
    code = main(["run", "--trace", str(TINY), "--machine", str(p), "-q"])
    one_line_error(capsys, code, "m.toml", needle)


def test_machine_options_not_a_table(tmp_path, capsys):
    p = machine_file(tmp_path, "options = 5\n" + GOOD_MACHINE)
    one_line_error(capsys, main(["machines", str(p)]), "m.toml", "field options")


def test_binary_machine_file(tmp_path, capsys):
    p = tmp_path / "m.toml"
    p.write_bytes(bytes(range(256)) * 4)
    one_line_error(capsys, main(["machines", str(p)]), "m.toml")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--interval", "0"], ["--interval"]),
        (["--interval", "-5m"], ["--interval", "negative"]),
        (["--interval", "1e-6"], ["--interval", "at least 1 s"]),
        (["--seed", "-1"], ["--seed"]),
        (["--window", "1d", "2d", "--warmup", "nan"], ["--warmup", "finite"]),
        (["--grace", "-5m"], ["--grace", "negative"]),
    ],
)
def test_bad_run_option_values_are_one_line_errors(capsys, args, needles):
    code = main(["run", "--trace", str(SAMPLE), "-q", *args])
    one_line_error(capsys, code, *needles)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--span", "-5d"], ["--span", "negative"]),
        (["--span", "100000d"], ["--span", "at most 3660 days"]),
        (["--span", "10d", "--warmup", "inf"], ["--warmup", "finite"]),
    ],
)
def test_bad_generated_workload_options_are_refused_up_front(capsys, args, needles):
    t0 = time.perf_counter()
    code = main(["run", "-q", *args])
    one_line_error(capsys, code, *needles)
    assert time.perf_counter() - t0 < 10


def test_out_in_an_unwritable_place(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker / "sub", Path("/proc/o2ksim-out")):
        code = main(["run", "--trace", str(TINY), "--out", str(out), "-q"])
        one_line_error(capsys, code, "--out", str(out))


def test_an_output_directory_that_cannot_be_made_is_a_user_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert output_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    with pytest.raises(O2KSimError, match="cannot create the output directory"):
        output_dir(blocker / "sub")


SCENARIO = """
name = "hostile"
machine = "kth-sp2"
policies = ["fcfs", "fcfs-backfill"]
[workload]
trace = "{trace}"
[outputs]
report = false
"""


def scenario_file(tmp_path: Path, extra: str = "", trace: Path = TINY) -> Path:
    p = tmp_path / "sc.toml"
    p.write_text(SCENARIO.format(trace=trace) + extra)
    return p


def test_scenario_run_out_is_an_existing_file(tmp_path, capsys):
    out = tmp_path / "taken"
    out.write_text("x")
    code = main(["scenario", "run", str(scenario_file(tmp_path)), "--out", str(out), "-q", "-j", "1"])
    one_line_error(capsys, code, "--out", "not a directory")


def test_scenario_outputs_dir_under_proc(tmp_path, capsys):
    sc = scenario_file(tmp_path).read_text().replace("report = false", 'report = false\ndir = "/proc/o2k"')
    p = tmp_path / "sc.toml"
    p.write_text(sc)
    code = main(["scenario", "run", str(p), "-q", "-j", "1"])
    one_line_error(capsys, code, "[outputs] dir", "/proc/o2k")


def test_scheduler_not_an_address_fails_at_once(tmp_path, capsys):
    t0 = time.perf_counter()
    code = main(["scenario", "run", str(scenario_file(tmp_path)), "--scheduler", "not-an-address",
                 "--out", str(tmp_path / "r"), "-q"])  # fmt: skip
    one_line_error(capsys, code, "--scheduler", "not-an-address")
    assert time.perf_counter() - t0 < 5


def test_trace_info_on_a_far_future_unix_start_time(tmp_path, capsys):
    p = swf(tmp_path, job_line(1), header="; MaxProcs: 4\n; UnixStartTime: 99999999999999\n")
    one_line_error(capsys, main(["trace", "info", str(p)]), "t.swf:2", "UnixStartTime")


def _queue_building_trace(tmp_path: Path) -> Path:
    """Three jobs that queue behind a full machine, so the priority is asked."""
    return swf(
        tmp_path, job_line(1, 0, 600, 16), job_line(2, 10, 60, 4), job_line(3, 20, 60, 4),
        job_line(4, 30, 60, 4),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("raise RuntimeError('boom')", "raised RuntimeError: boom"),
        ("return ['a'] * len(q)", "must return numbers"),
        ("return np.full(len(q), np.nan)", "NaN"),
    ],
)
def test_user_priority_function_errors_are_one_line(tmp_path, capsys, monkeypatch, body, needle):
    mod = tmp_path / "hostile_priority.py"
    mod.write_text(f"import numpy as np\ndef score(q):\n    {body}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("hostile_priority", None)
    code = main([
        "run", "--trace", str(_queue_building_trace(tmp_path)), "--policy", "priority-backfill",
        "--set", "priority='hostile_priority:score'", "-q",
    ])  # fmt: skip
    one_line_error(capsys, code, "hostile_priority:score", needle)


def test_cr_only_file_is_read_as_text(tmp_path):
    text = HEADER + "\n".join(job_line(i, 10 * i) for i in range(1, 6)) + "\n"
    lf, cr = tmp_path / "lf.swf", tmp_path / "cr.swf"
    lf.write_text(text)
    cr.write_bytes(text.replace("\n", "\r").encode())
    a, b = read_swf(lf), read_swf(cr)
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert b.header.max_procs == 16
    bad = tmp_path / "bad.swf"
    bad.write_bytes((HEADER + job_line(1) + "\r" + job_line(2)[:-3] + " x\r").encode())
    with pytest.raises(O2KSimError, match=r"bad.swf:4: field 18"):  # the line count of a CR file
        read_swf(bad)


def test_working_directory_entry_does_not_shadow_a_machine_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "o2k").mkdir()
    (tmp_path / "kth-sp2").write_text("not a machine")
    assert load_machine("o2k").total_procs == 960
    assert load_machine("kth-sp2").total_procs == 100


# ------------------------------------------------------------------- failure and concurrency
def _descendants(pid: int) -> list[int]:
    import psutil

    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.timeout(150)
def test_kill_9_of_the_coordinator_leaves_no_process_behind(tmp_path):
    pytest.importorskip("psutil")
    # runs long enough (a few seconds each) that the kill lands mid-sweep
    sc = tmp_path / "slow.toml"
    sc.write_text(textwrap.dedent("""
        name = "slow"
        machine = "o2k"
        policies = ["fcfs-backfill"]
        [workload]
        model = "o2k"
        span = "20d"
        [protocol]
        seeds = [1, 2, 3, 4]
        [outputs]
        report = false
    """))
    proc = subprocess.Popen(
        [sys.executable, "-m", "o2ksim", "scenario", "run", str(sc), "-j", "2",
         "--out", str(tmp_path / "r"), "-q"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            seen.update(_descendants(proc.pid))
            if len(seen) >= 4:  # forkserver, resource tracker and two workers
                break
            if proc.poll() is not None:
                pytest.fail("the sweep ended before the kill")
            time.sleep(0.2)
        assert len(seen) >= 4, f"only {len(seen)} helper processes started"
        time.sleep(1.0)
        seen.update(_descendants(proc.pid))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in seen):
            time.sleep(0.2)
        left = [p for p in seen if _alive(p)]
        assert not left, f"processes left behind after kill -9 of the coordinator: {left}"
    finally:
        for p in [proc.pid, *_descendants(proc.pid), *seen]:  # never leave one behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


def test_a_second_sweep_on_a_locked_results_directory_is_refused(tmp_path, capsys):
    from o2ksim.experiments.sweep import results_lock

    out = tmp_path / "r"
    with results_lock(out):
        code = main(["scenario", "run", str(scenario_file(tmp_path)), "--out", str(out), "-q", "-j", "1"])
        one_line_error(capsys, code, "another sweep", str(out))
        assert not (out / "runs").exists()  # nothing simulated
    assert main(["scenario", "run", str(scenario_file(tmp_path)), "--out", str(out), "-q", "-j", "1"]) == 0


def test_a_report_is_refused_while_a_sweep_writes_its_results_and_a_sweep_while_a_report_reads(
    tmp_path, capsys
):
    from o2ksim.experiments.store import reading_results
    from o2ksim.experiments.sweep import results_lock

    out = tmp_path / "r"
    sc = str(scenario_file(tmp_path))
    assert main(["scenario", "run", sc, "--out", str(out), "-q", "-j", "1", "--no-report"]) == 0
    with results_lock(out):  # a sweep storing runs: the report would miss some, looking whole
        code = main(["report", str(out), "-q"])
        one_line_error(capsys, code, "a sweep (process", str(out))
        assert not (out / "report").exists()
    with reading_results(out):  # a report being made: the sweep is refused, saying why
        code = main(["scenario", "run", sc, "--out", str(out), "-q", "-j", "1"])
        one_line_error(capsys, code, "or a report is being made from it", str(out))
    assert main(["report", str(out), "-q"]) == 0
    assert (out / "report" / "report.html").exists()
    plain = tmp_path / "not-results"
    plain.mkdir()
    assert main(["report", str(plain), "-q"]) == 2
    assert list(plain.iterdir()) == []  # no lock file left in a folder that is not a results one


def test_two_concurrent_sweeps_never_simulate_a_run_twice(tmp_path):
    sc = scenario_file(tmp_path, trace=SAMPLE)
    out = tmp_path / "r"
    cmd = [sys.executable, "-m", "o2ksim", "scenario", "run", str(sc), "--out", str(out), "-j", "1"]
    procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=100) for p in procs]
    codes = [p.returncode for p in procs]
    ran = 0
    for (stdout, stderr), code in zip(outputs, codes, strict=True):
        assert "Traceback" not in stderr
        if code == 0:
            ran += int(stdout.split(" run(s) in")[0].rsplit("\n", 1)[-1])
        else:
            assert code == 2 and "another sweep" in stderr
    assert ran == 2  # the plan's two runs, each simulated once in total


def test_a_corrupt_jobs_parquet_is_not_counted_as_finished(tmp_path, capsys):
    from o2ksim.experiments.scenario import load_scenario
    from o2ksim.experiments.store import load_results
    from o2ksim.experiments.sweep import run_sweep

    sc = load_scenario(scenario_file(tmp_path))
    out = tmp_path / "r"
    first = run_sweep(sc, out, workers=1)
    assert len(first.ran) == 2
    victim = first.runs[0].run_id
    p = out / "runs" / victim / "jobs.parquet"
    p.write_bytes(p.read_bytes()[:100] + b"garbage")
    assert json.loads((p.parent / "summary.json").read_text())["status"] == "ok"  # intact summary
    table = load_results(out).table
    assert table.set_index("run_id").loc[victim, "status"] == "corrupt"
    code = main(["report", str(out), "-q"])
    assert code in (0, 2) and "Traceback" not in capsys.readouterr().err
    again = run_sweep(sc, out, workers=1)
    assert again.ran == [victim] and len(again.skipped) == 1
    pd.read_parquet(p)  # rewritten


def test_no_retry_failed_exits_non_zero_while_failed_runs_remain(tmp_path, capsys, monkeypatch):
    mod = tmp_path / "failing_priority.py"
    mod.write_text("def score(q):\n    raise RuntimeError('always')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    p = tmp_path / "sc.toml"
    p.write_text(SCENARIO.format(trace=_queue_building_trace(tmp_path)).replace(
        'machine = "kth-sp2"\n', ""  # the trace's 16 processors, so a queue forms
    ).replace(
        'policies = ["fcfs", "fcfs-backfill"]',
        'policies = ["fcfs"]\n[[policy]]\nname = "priority-backfill"\nlabel = "bad"\n'
        'params = { priority = "failing_priority:score" }',
    ))  # fmt: skip
    out = tmp_path / "r"
    assert main(["scenario", "run", str(p), "--out", str(out), "-q", "-j", "1"]) == 1
    capsys.readouterr()
    code = main(["scenario", "run", str(p), "--out", str(out), "-q", "-j", "1", "--no-retry-failed"])
    assert code == 1


def test_a_million_run_plan_is_refused_up_front(tmp_path, capsys):
    levels = ", ".join(str(i) for i in range(1000))
    p = scenario_file(tmp_path, f"[protocol]\nseeds = [{levels}]\n[factors]\npolicy.reservations = [{levels}]\n")
    p.write_text(p.read_text().replace('policies = ["fcfs", "fcfs-backfill"]', 'policies = ["fcfs-backfill"]'))
    t0 = time.perf_counter()
    one_line_error(capsys, main(["scenario", "show", str(p)]), "1,000,000 runs", "100,000")
    assert time.perf_counter() - t0 < 10


# ------------------------------------------------------------------------- invariant checker
def _run_tables():
    res = simulate(TINY, policy="fcfs-backfill")
    return res.jobs.copy(), res.segments.copy(), res.machine, res.jobs["job_id"].tolist()


def test_invariants_flag_end_before_start():
    from o2ksim.invariants import violations

    jobs, segments, machine, ids = _run_tables()
    assert violations(jobs, segments, machine, ids) == []
    jobs.loc[2, "end"] = jobs.loc[2, "start"] - 5
    assert any("ends before it starts" in v for v in violations(jobs, segments, machine, ids))


def test_invariants_flag_allocations_on_unknown_hosts():
    from o2ksim.invariants import violations

    jobs, segments, machine, ids = _run_tables()
    segments.loc[0, "host"] = "ghost"
    assert any("unknown host 'ghost'" in v for v in violations(jobs, segments, machine, ids))


def test_invariants_check_work_without_segments():
    from o2ksim.invariants import violations

    jobs, segments, machine, ids = _run_tables()
    empty = segments.iloc[0:0]
    assert violations(jobs, empty, machine, ids) == []
    jobs.loc[3, "end"] = jobs.loc[3, "start"] + jobs.loc[3, "run_time"] / 2  # ran half its time
    found = violations(jobs, empty, machine, ids)
    assert any(f"job {jobs.loc[3, 'job_id']} ran" in v for v in found)


def test_run_check_writes_and_verifies_segments(tmp_path, capsys):
    code = main(["run", "--trace", str(SAMPLE), "--policy", "fcfs-backfill", "--out", str(tmp_path), "--check"])
    assert code == 0
    assert "check: ok" in capsys.readouterr().out
    segments = pd.read_csv(tmp_path / "segments.csv")
    assert set(segments.columns) >= {"job_id", "host", "start", "end", "procs"}
    jobs = pd.read_csv(tmp_path / "jobs.csv")
    done = jobs[jobs["status"] == "completed"]
    work = (segments["procs"] * (segments["end"] - segments["start"])).groupby(segments["job_id"]).sum()
    np.testing.assert_allclose(work.reindex(done["job_id"]).to_numpy(), (done["run_time"] * done["procs"]).to_numpy())


# ---------------------------------------------------------------------------- policy presets
@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--set", "reservatons=2"], ["field reservatons", "did you mean 'reservations'"]),
        (["--set", 'kill_overrun="no"'], ["kill_overrun"]),
        (["--set", "overrun_grace=nan"], ["overrun_grace"]),
        (["--set", "interval=1e-6"], ["field interval", "is a run setting"]),
    ],
)
def test_bad_policy_values_are_one_line_errors(capsys, args, needles):
    one_line_error(capsys, main(["run", "--trace", str(TINY), "-q", *args]), *needles)


def test_policy_preset_files_are_checked(tmp_path, capsys):
    typo = tmp_path / "p.toml"
    typo.write_text('kind = "backfill"\nparms = {}\n')
    one_line_error(capsys, main(["run", "--trace", str(TINY), "--policy", str(typo), "-q"]), "p.toml", "did you mean 'params'")
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\xff\xfe\x00kind")
    one_line_error(capsys, main(["run", "--trace", str(TINY), "--policy", str(binary), "-q"]), "b.toml")
