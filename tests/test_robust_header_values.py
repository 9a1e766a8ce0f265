"""SWF header values that cannot be meant are refused at their line (issue 27, D9 D10 D19 D26).

* a label of one value (``MaxProcs``, ``TimeZone``, ``TimeZoneString``, ``O2KSimMachine``)
  given twice with different values: which one is meant is unknowable, so both lines are
  named (the same value twice is fine);
* a ``TimeZone`` that is no offset from UTC: offsets in use run from -12 h (Baker Island)
  to +14 h (the Line Islands), seconds added to UTC as KTH-SP2's ``TimeZone: 3600`` (CET);
* a ``TimeZoneString`` Python's zone database does not know (``Mars/Olympus``, ``America``);
* an ``O2KSimMachine`` that is not a shipped machine's name: a path in a trace is never opened.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.run.checks import header_machine
from o2ksim.units import trace_zone
from o2ksim.workloads.swf import read_swf
from o2ksim.workloads.swf_header import SWFHeader
from tests.conftest import one_line

JOB = "1 0 0 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1"
UNIX = 946684800  # 2000-01-01 00:00 UTC


def _trace(tmp_path: Path, *header: str) -> str:
    path = tmp_path / "h.swf"
    path.write_text("\n".join([*header, JOB]) + "\n")
    return str(path)


def _refused(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    return one_line(capsys.readouterr().err)


def test_a_repeated_label_with_another_value_names_both_lines(tmp_path, capsys):
    path = _trace(tmp_path, "; MaxProcs: 16", "; Note: two values", "; maxprocs: 4")
    for argv in (["run", "--trace", path], ["trace", "check", path]):
        line = _refused(argv, capsys)
        assert line.startswith(f"o2ksim: error: {path}:3: header MaxProcs: ")
        assert "4" in line and "16 on line 1" in line


@pytest.mark.parametrize(
    ("first", "second"),
    [("; TimeZone: 3600", "; TimeZone: 7200"), ("; TimeZoneString: Europe/Paris", "; TimeZoneString: UTC"),
     ("; AllowOveruse: Yes", "; AllowOveruse: No"), ("; O2KSimMachine: o2k", "; O2KSimMachine: kth-sp2")],
)  # fmt: skip
def test_every_single_valued_label_is_checked(tmp_path, first, second):
    label = first[2:].split(":")[0]
    with pytest.raises(O2KSimError, match=rf"h\.swf:2: .*{label}.* on line 1"):
        read_swf(_trace(tmp_path, first, second, "; MaxProcs: 4"))


def test_the_same_value_twice_is_one_value(tmp_path):
    header = read_swf(
        _trace(
            tmp_path, "; MaxProcs: 16", "; MAXPROCS: 16", "; TimeZoneString: UTC", "; TimeZoneString: UTC",
            "; O2KSimMachine: o2k", "; O2KSimMachine: o2k",
        )
    ).header
    assert (header.max_procs, header.time_zone_string) == (16, "UTC")
    assert header.extra["O2KSimMachine"] == "o2k"


@pytest.mark.parametrize("offset", [86400, 99999999999999, -86400, 14 * 3600 + 1, -12 * 3600 - 1])
def test_a_time_zone_beyond_the_offsets_in_use_is_refused_at_its_line(tmp_path, capsys, offset):
    path = _trace(tmp_path, f"; UnixStartTime: {UNIX}", f"; TimeZone: {offset}", "; MaxProcs: 4")
    for argv in (
        ["run", "--trace", path, "--window", "2000-01-01", "2000-01-02"],
        ["trace", "check", path],
        ["characterize", path],
    ):
        line = _refused(argv, capsys)
        assert line.startswith(f"o2ksim: error: {path}:2: header TimeZone: {offset} s is not an offset from UTC")


@pytest.mark.parametrize("offset", [14 * 3600, -12 * 3600, 3600, 0])
def test_the_offsets_in_use_are_read(tmp_path, offset):
    path = _trace(tmp_path, f"; UnixStartTime: {UNIX}", f"; TimeZone: {offset}", "; MaxProcs: 4")
    assert read_swf(path).header.time_zone == offset


@pytest.mark.parametrize("zone", ["Mars/Olympus", "America", "../../etc/passwd"])
def test_an_unknown_zone_name_is_named_with_its_line(tmp_path, capsys, zone):
    path = _trace(tmp_path, f"; UnixStartTime: {UNIX}", "; MaxProcs: 4", f"; TimeZoneString: {zone}")
    line = _refused(["run", "--trace", path, "--window", "2000-01-01", "2000-01-02"], capsys)
    assert line.startswith(f"o2ksim: error: {path}:3: header TimeZoneString: {zone!r} is not a time zone")


def test_a_header_built_in_code_with_an_unknown_zone_says_so():
    zone, label = trace_zone(SWFHeader(unix_start_time=UNIX, time_zone_string="America"))
    assert zone.utcoffset(None) == timedelta(0)
    assert label.startswith("UTC ") and "'America' is not a time zone" in label
    with pytest.raises(O2KSimError, match="TimeZone: 86400 s is not an offset from UTC"):
        trace_zone(SWFHeader(unix_start_time=UNIX, time_zone=86400))


@pytest.mark.parametrize("name", ["nosuch", "../../../etc/passwd", "hosts/o2k.toml", "mine"])
def test_the_header_names_a_shipped_machine_and_opens_no_path(tmp_path, capsys, monkeypatch, name):
    # a valid machine file of that name in the working directory is not opened either
    (tmp_path / "mine").write_text('name = "mine"\n[[host]]\nname = "h"\nprocs = 4\n')
    monkeypatch.chdir(tmp_path)
    path = _trace(tmp_path, "; MaxProcs: 4", f"; O2KSimMachine: {name}")
    for argv in (["run", "--trace", path], ["trace", "check", path]):
        line = _refused(argv, capsys)
        assert line.startswith(f"o2ksim: error: {path}:2: field O2KSimMachine: unknown machine {name!r}")


def test_a_header_built_in_code_names_no_path(tmp_path):
    trace = read_swf(_trace(tmp_path, "; MaxProcs: 4"))
    trace.header.extra["O2KSimMachine"] = "/etc/passwd"
    with pytest.raises(O2KSimError, match="field O2KSimMachine: unknown machine '/etc/passwd'"):
        header_machine(trace.header, "t.swf")
    with pytest.raises(O2KSimError, match="field O2KSimMachine: unknown machine '/etc/passwd'"):
        simulate(trace)
