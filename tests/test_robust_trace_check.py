"""``o2ksim trace check`` / ``trace info`` flag the jobs a run would reject (issue 27), by the
run's own rules: the expected reasons are worked out by hand from the machine below, and the
run's ``jobs.csv`` must give the same job the same reason."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from o2ksim.cli import main

MACHINE = """name = "two"
[[host]]
name = "a"
procs = 4
memory_gb = 4
[[host]]
name = "b"
procs = 8
memory_gb = 1
"""
# id submit wait run alloc cpu used procs req_time req_mem(KB per proc) status user group app queue part prec think
JOBS = [
    "1  0 0  60  2 -1 -1  2  60    1024 1 1 1 1 1 1 -1 -1",  # fits host a
    "2 10 0  60 16 -1 -1 16  60      -1 1 1 1 1 1 1 -1 -1",  # 16 > 8 processors
    "3 20 0  60 12 -1 -1 12  60      -1 1 1 1 1 1 1 -1 -1",  # 12 > 8: the same reason, folded
    "4 30 0  60 -1 -1 -1 -1  60      -1 1 1 1 1 1 1 -1 -1",  # no processor count at all
    "5 40 0  -1  2 -1 -1  2  60      -1 1 1 1 1 1 1 -1 -1",  # actual runtime unknown
    "6 50 0  60  6 -1 -1  6  60  524288 1 1 1 1 1 1 -1 -1",  # 6 x 512 MB = 3 GB; only b has 6 procs, 1 GB
    "7 60 0  60  4 -1 -1  4  60  524288 1 1 1 1 1 1 -1 -1",  # 4 x 512 MB = 2 GB: fits a (4 GB)
]
EXPECTED = {
    2: "requests 16 processors; the largest host has 8",
    3: "requests 12 processors; the largest host has 8",
    4: "requested processors unknown or not positive",
    5: "actual runtime unknown",
    6: "requests 3072 MB; no host with 6 processors has that much memory",
}


def _files(tmp: Path) -> tuple[str, str]:
    (tmp / "two.toml").write_text(MACHINE)
    (tmp / "t.swf").write_text("; MaxProcs: 12\n" + "\n".join(JOBS) + "\n")
    return str(tmp / "t.swf"), str(tmp / "two.toml")


def test_trace_check_counts_per_reason_with_job_numbers(tmp_path, capsys):
    trace, machine = _files(tmp_path)
    assert main(["trace", "check", trace, "--machine", machine]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("a run would reject 5 job(s) on two: 2 host(s), 12 processors")
    assert out[2:] == [
        "  2 'requests 16 processors; the largest host has 8' and alike: job 2, 3",
        "  1 'requested processors unknown or not positive': job 4",
        "  1 'actual runtime unknown': job 5",
        "  1 'requests 3072 MB; no host with 6 processors has that much memory': job 6",
    ]


def test_trace_info_counts_them_and_points_to_check(tmp_path, capsys):
    trace, machine = _files(tmp_path)
    assert main(["trace", "info", trace, "--machine", machine]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("rejected:      5 by a run on two: ")
    assert last.endswith(f"(`o2ksim trace check {trace} --machine {machine}` lists them)")
    # the command pointed to lists the same jobs (without --machine it judged them on the
    # header's machine: 3 jobs, found by the session-13 audit)
    pointed = last.split("`")[1].split()[1:]
    assert main(pointed) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("a run would reject 5 job(s) on two")


def test_the_header_machine_is_the_default(tmp_path, capsys):
    """Without --machine: one host of MaxProcs = 12, so only 16 processors is too many."""
    trace, _ = _files(tmp_path)
    assert main(["trace", "check", trace]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("a run would reject 3 job(s) on trace: 1 host(s), 12 processors")
    assert "  1 'requests 16 processors; the largest host has 12': job 2" in out


def test_the_run_rejects_the_same_jobs_for_the_same_reasons(tmp_path):
    trace, machine = _files(tmp_path)
    assert main(["run", "--trace", trace, "--machine", machine, "--policy", "fcfs", "--out", str(tmp_path / "o"), "-q"]) == 0
    jobs = pd.read_csv(tmp_path / "o" / "jobs.csv")
    rejected = jobs.loc[jobs["status"] == "rejected"]
    assert dict(zip(rejected["job_id"], rejected["reason"], strict=True)) == EXPECTED


def test_an_unknown_machine_is_one_line_before_any_output(tmp_path, capsys):
    trace, _ = _files(tmp_path)
    assert main(["trace", "check", trace, "--machine", "no-such-machine"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "no-such-machine" in err
