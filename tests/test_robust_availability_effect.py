"""Availability periods that change nothing are said, not accepted in silence (issue 27, D8).

* a file with only its header line takes nothing down: refused at load, exit 2;
* a period that starts at or after the run's last event changes nothing (known only after
  the run, like an unused seed): one warning line after the run, with a hint when its start
  reads as a Unix time of the trace (the file's times are seconds since the trace start).

The hand-made trace: two jobs of 4 processors on a 4-processor host, submitted at 0 and 10 s,
running 100 and 50 s; FCFS runs them 0-100 and 100-150, so the run's last event is at 150 s.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.errors import UnusedAvailabilityWarning
from tests.conftest import one_line

UNIX = 1_000_000_000


def _files(tmp_path: Path) -> tuple[Path, Path]:
    trace = tmp_path / "t.swf"
    trace.write_text(
        f"; UnixStartTime: {UNIX}\n; MaxProcs: 4\n"
        "1 0 -1 100 4 -1 -1 4 100 -1 1 1 1 1 1 1 -1 -1\n"
        "2 10 -1 50 4 -1 -1 4 50 -1 1 1 1 1 1 1 -1 -1\n"
    )
    machine = tmp_path / "m.toml"
    machine.write_text('name = "m"\n[[host]]\nname = "h"\nprocs = 4\n')
    return trace, machine


def _run(tmp_path: Path, capsys, rows: str) -> tuple[int, list[str]]:
    trace, machine = _files(tmp_path)
    avail = tmp_path / "a.csv"
    avail.write_text("host,from,to,procs\n" + rows)
    code = main(["run", "--trace", str(trace), "--machine", str(machine), "--policy", "fcfs",
                 "--availability", str(avail)])  # fmt: skip
    return code, [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


def test_a_file_with_only_its_header_is_refused(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, "# nothing down\n")
    assert code == 2
    assert one_line("\n".join(err)).startswith(f"o2ksim: error: {tmp_path / 'a.csv'}:1: no periods, only the header line")


def test_a_period_after_the_run_is_said(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, "h,200,300,all\n")
    assert code == 0
    assert err == [
        f"o2ksim: warning: --availability {tmp_path / 'a.csv'}: its period host h from 200 s (3.33m) "
        "starts at or after the run's last event at 150 s (2.5m): it changed nothing"
    ]


def test_a_unix_time_gets_a_hint(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, f"h,{UNIX + 100},{UNIX + 200},all\nh,20,30,1\n")
    assert code == 0
    assert len(err) == 1 and err[0].startswith(
        f"o2ksim: warning: --availability {tmp_path / 'a.csv'}: 1 of its 2 periods, host h from {UNIX + 100} s"
    )
    assert err[0].endswith(
        f"looks like a Unix time: the trace's UnixStartTime is {UNIX}, so it may be meant as 100"
    )


def test_a_period_within_the_run_says_nothing(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, "h,120,130,all\n")  # job 2 runs 100-150: drained at 150
    assert code == 0
    assert not [ln for ln in err if "availability" in ln]


def test_the_api_warns_too(tmp_path):
    trace, machine = _files(tmp_path)
    with pytest.warns(UnusedAvailabilityWarning, match="its period host h from 200 s .* it changed nothing"):
        simulate(str(trace), machine=str(machine), policy="fcfs",
                 availability=[{"host": "h", "from": 200, "to": 300, "procs": 4}])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedAvailabilityWarning)
        simulate(str(trace), machine=str(machine), policy="fcfs",
                 availability=[{"host": "h", "from": 20, "to": 30, "procs": 4}])  # fmt: skip


def test_write_availability_is_whole_or_nothing(tmp_path):
    from o2ksim.availability import Outage, write_availability
    from o2ksim.errors import O2KSimError

    periods = [Outage("h", 20.0, 30.0, 4)]
    with pytest.raises(O2KSimError, match="cannot write there"):  # was a FileNotFoundError traceback
        write_availability(periods, tmp_path / "missing" / "a.csv")
    target = tmp_path / "a.csv"
    write_availability(periods, target)
    assert target.read_text() == "host,from,to,procs\nh,20,30,4\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]  # no temporary file left
