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


# ------------------------------------------- every command that takes periods says it (L4)
def test_validate_says_it_too(tmp_path, capsys):
    """``o2ksim validate --availability`` and ``validate()`` replayed without a word; the
    recorded waits (0 and 90 s) are FCFS's, so the replay's last event is at 150 s too."""
    from o2ksim.analysis.validate import validate

    trace, machine = _files(tmp_path)
    trace.write_text(trace.read_text().replace("1 0 -1 100", "1 0 0 100").replace("2 10 -1 50", "2 10 90 50"))
    avail = tmp_path / "a.csv"
    avail.write_text("host,from,to,procs\nh,200,300,all\n")
    assert main(["validate", str(trace), "--machine", str(machine), "--policy", "fcfs",
                 "--availability", str(avail)]) == 0  # fmt: skip
    said = [ln for ln in capsys.readouterr().err.splitlines() if "availability" in ln]
    assert said == [
        f"o2ksim: warning: --availability {avail}: its period host h from 200 s (3.33m) "
        "starts at or after the run's last event at 150 s (2.5m): it changed nothing"
    ]
    with pytest.warns(UnusedAvailabilityWarning, match="its period host h from 200 s .* it changed nothing"):
        validate(str(trace), str(machine), "fcfs", availability=str(avail))


def test_a_sweep_says_it_once_for_its_runs(tmp_path, capsys):
    """``scenario run`` and ``run_sweep`` ran every run with the periods late without a word;
    said once for the three runs (seeds 1-3 of the same trace: each ends at 150 s), not once
    per run."""
    from o2ksim.experiments.sweep import run_sweep

    trace, machine = _files(tmp_path)
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        f'name = "s"\nmachine = "{machine}"\npolicies = ["fcfs"]\n[workload]\ntrace = "{trace}"\n'
        '[protocol]\nseeds = [1, 2, 3]\navailability = [{host = "h", from = 200, to = 300, procs = 4}]\n'
    )
    assert main(["scenario", "run", str(scenario), "--out", str(tmp_path / "out"), "-j", "1", "--no-report"]) == 0
    said = [ln for ln in capsys.readouterr().err.splitlines() if "availability" in ln]
    assert said == [
        f"o2ksim: warning: {scenario}: protocol.availability: its period host h from 200 s (3.33m) "
        "starts at or after the last event of all 3 runs, the latest at 150 s (2.5m): it changed nothing"
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_sweep(str(scenario), tmp_path / "out2", workers=1, progress=False, log=lambda _: None)
    assert [str(w.message) for w in caught if w.category is UnusedAvailabilityWarning] == [said[0][len("o2ksim: warning: "):]]


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
