"""Tests of the SWF reader/writer (o2ksim.workloads.swf) and ``o2ksim trace``."""

from __future__ import annotations

import dataclasses
import gzip
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim.errors import InputError, O2KSimError
from o2ksim.validation import MAX_JOB_MEMORY_KB, MAX_TIME
from o2ksim.workloads.swf import (
    SWF_FIELDS,
    ReadReport,
    SWFHeader,
    Trace,
    jobs_frame,
    read_swf,
    write_swf,
)

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "traces" / "tiny.swf"
KTH_SAMPLE = REPO / "traces" / "kth-sp2-sample.swf"
SHARED_TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"

HEADER = """\
; Version: 2.2
; Computer: Test machine
; MaxProcs: 64
; MaxNodes: 4
;
"""


def job_line(job_id: int, submit: int, **fields: int | str) -> str:
    """A valid 18-field job line; keyword arguments override fields by name."""
    values: dict[str, int | str] = dict.fromkeys(SWF_FIELDS, -1)
    values.update(
        job_id=job_id,
        submit=submit,
        wait=0,
        run_time=100,
        alloc_procs=4,
        req_procs=4,
        req_time=200,
        status=1,
        user=1,
    )
    values.update(fields)
    return " ".join(str(values[name]) for name in SWF_FIELDS)


def good_lines(n: int = 30) -> list[str]:
    return [job_line(i, 10 * i) for i in range(1, n + 1)]


@pytest.fixture
def write(tmp_path: Path):
    """Write text (or bytes) to a file in tmp_path and return its path."""

    def _write(content: str | bytes, name: str = "t.swf") -> Path:
        path = tmp_path / name
        if isinstance(content, str):
            content = content.encode()
        path.write_bytes(content)
        return path

    return _write


def lines_file(write, jobs: list[str], name: str = "t.swf") -> Path:
    return write(HEADER + "\n".join(jobs) + "\n", name)


HEADER_LINES = HEADER.count("\n")  # job line i (1-based) is file line HEADER_LINES + i


# ----------------------------------------------------------------------------
# valid input
# ----------------------------------------------------------------------------


def test_reads_tiny_sample() -> None:
    trace = read_swf(TINY)
    assert isinstance(trace, Trace)
    assert len(trace) == 8
    assert list(trace.jobs.columns) == list(SWF_FIELDS)
    assert all(dtype == np.int64 for dtype in trace.jobs.dtypes)
    assert trace.jobs["job_id"].tolist() == list(range(1, 9))
    assert (trace.jobs["req_time"] > 0).all()
    assert (trace.jobs["req_mem"] > 0).sum() == 7
    assert trace.jobs.loc[7, "prev_job"] == 4 and trace.jobs.loc[7, "think_time"] == 1500
    h = trace.header
    assert (h.max_procs, h.max_nodes, h.max_memory, h.max_runtime) == (16, 1, 1048576, 43200)
    assert h.allow_overuse is False
    assert h.unix_start_time == 946684800 and h.time_zone == 0
    assert len(h.notes) == 3
    assert trace.source == str(TINY)
    assert trace.report == ReadReport(str(TINY), 8, {}, [], 0)
    assert isinstance(trace.jobs.index, pd.RangeIndex)


def test_reads_kth_sample() -> None:
    trace = read_swf(KTH_SAMPLE)
    assert len(trace) == 2000
    assert trace.jobs["job_id"].iloc[0] == 15 and trace.jobs["job_id"].iloc[-1] == 2014
    assert trace.header.max_procs == 100
    assert trace.header.notes[-1] == (
        "first 2000 jobs of KTH-SP2-1996-2.1-cln (Parallel Workloads Archive)"
    )


def test_empty_and_comment_only_files_give_no_jobs(write) -> None:
    for content in ["", "\n\n  \n", HEADER, HEADER + "\n\n"]:
        trace = read_swf(write(content))
        assert len(trace) == 0
        assert list(trace.jobs.columns) == list(SWF_FIELDS)
        assert all(dtype == np.int64 for dtype in trace.jobs.dtypes)
    assert read_swf(write(HEADER)).header.max_procs == 64


def test_whitespace_variants(write) -> None:
    """Tabs, leading blanks, CRLF, blank lines, no final newline, a BOM."""
    jobs = good_lines(5)
    text = "\r\n".join(
        [
            ";Version: 2",
            "",
            "\t" + jobs[0].replace(" ", "\t"),
            "   " + jobs[1],
            jobs[2] + "   ",
            "",
            jobs[3],
            jobs[4],
        ]
    )
    trace = read_swf(write(b"\xef\xbb\xbf" + text.encode()))
    assert trace.jobs["job_id"].tolist() == [1, 2, 3, 4, 5]
    assert trace.header.version == "2"


def test_comments_between_jobs(write) -> None:
    """Comments after the first job line are allowed (and read as header)."""
    jobs = good_lines(6)
    path = lines_file(write, [*jobs[:3], "; Note: in the middle", *jobs[3:]])
    trace = read_swf(path)
    assert len(trace) == 6
    assert trace.header.notes == ["in the middle"]


def test_avg_cpu_may_be_a_decimal(write) -> None:
    """Archive files write field 6 (average CPU time) with decimals; it is rounded."""
    path = lines_file(
        write,
        [
            job_line(1, 0, avg_cpu="552.21"),
            job_line(2, 5, avg_cpu="2.5"),
            job_line(3, 9, avg_cpu="7."),
            job_line(4, 9, avg_cpu="-1.00"),
        ],
    )
    assert read_swf(path).jobs["avg_cpu"].tolist() == [552, 3, 7, -1]


def test_negative_zero_and_leading_zeros(write) -> None:
    path = lines_file(write, [job_line(1, 0, wait="-0", run_time="007")])
    jobs = read_swf(path).jobs
    assert (jobs.loc[0, "wait"], jobs.loc[0, "run_time"]) == (0, 7)


def test_limit_reads_only_the_first_job_lines(write) -> None:
    jobs = good_lines(20)
    jobs[15] = "garbage after the limit"
    path = lines_file(write, jobs)
    assert read_swf(path, limit=10).jobs["job_id"].tolist() == list(range(1, 11))
    assert len(read_swf(path, limit=0)) == 0
    with pytest.raises(InputError):
        read_swf(path, limit=16)
    assert len(read_swf(KTH_SAMPLE, limit=100)) == 100
    assert len(read_swf(KTH_SAMPLE, limit=10**6)) == 2000
    with pytest.raises(O2KSimError, match="limit must be an integer >= 0"):  # one line, as the CLI
        read_swf(path, limit=-1)


# ----------------------------------------------------------------------------
# malformed input
# ----------------------------------------------------------------------------

BAD_LINES = [
    # (replacement for job line 21, reason key, expected message (regex), field)
    (
        " ".join(job_line(21, 210).split()[:12]),
        "wrong field count",
        r"expected 18 fields, found 12",
        None,
    ),
    (job_line(21, 210) + " 5", "wrong field count", r"expected 18 fields, found 19", None),
    (
        job_line(21, 210, run_time="abc"),
        "not an integer",
        r"'abc' is not an integer",
        "4 (run_time)",
    ),
    (
        job_line(21, 210, alloc_procs=-7),
        "negative value",
        r"negative value -7 \(only -1 means unknown\)",
        "5 (alloc_procs)",
    ),
    (job_line(21, "12.5e"), "not an integer", r"'12\.5e' is not an integer", "2 (submit)"),
    (job_line(21, "12.5"), "not an integer", r"'12\.5' is not an integer", "2 (submit)"),
    (
        job_line(21, 210, req_time="+5"),
        "not an integer",
        r"'\+5' is not an integer",
        "9 (req_time)",
    ),
    (job_line(21, 210, user="1e3"), "not an integer", r"'1e3' is not an integer", "12 (user)"),
    (
        job_line(21, 210, avg_cpu="1.5.2"),
        "not an integer",
        r"'1\.5\.2' is not a number",
        "6 (avg_cpu)",
    ),
    (
        job_line(21, 210, avg_cpu="-0.5"),
        "negative value",
        r"negative value -0\.5 \(only -1 means unknown\)",
        "6 (avg_cpu)",
    ),
    (
        job_line(21, 210, think_time="99999999999999999999"),
        "out of range",
        r"value 99999999999999999999 is too large",
        "18 (think_time)",
    ),
    (job_line(21, 210, app="café"), "not an integer", r"'café' is not an integer", "14 (app)"),
    ("\x00\x01\x02 garbage", "binary data", r"binary data, not SWF text", None),
]


@pytest.mark.parametrize(("bad", "key", "message", "field"), BAD_LINES)
def test_bad_line_is_reported_with_line_and_field(write, bad, key, message, field) -> None:
    jobs = good_lines()
    jobs[20] = bad
    path = lines_file(write, jobs)
    line = HEADER_LINES + 21
    with pytest.raises(InputError) as info:
        read_swf(path)
    err = info.value
    assert err.line == line
    assert err.field == field
    assert re.fullmatch(message + r" \(job line 21\)", err.reason), err.reason
    prefix = f"{path}:{line}: " + (f"field {field}: " if field else "")
    assert str(err).startswith(prefix)
    assert "\n" not in str(err)

    trace = read_swf(path, lenient=True)
    assert len(trace) == 29
    assert 21 not in trace.jobs["job_id"].tolist()
    assert trace.report.skipped == {key: 1}
    assert trace.report.examples[0][0] == line


def test_undecodable_bytes_are_binary(write) -> None:
    jobs = [line.encode() for line in good_lines(5)]
    jobs[2] = b"\xff\xfe\x93 1 2 3"
    path = write(HEADER.encode() + b"\n".join(jobs) + b"\n")
    with pytest.raises(InputError, match=r":8: binary data, not SWF text \(job line 3\)$"):
        read_swf(path)


def test_whole_binary_file(write) -> None:
    rng = np.random.default_rng(1)
    path = write(b"\x89PNG\r\n\x1a\n" + rng.integers(0, 256, 4000, dtype=np.uint8).tobytes())
    with pytest.raises(InputError, match=r":1: binary data"):
        read_swf(path)


def test_first_bad_line_wins(write) -> None:
    jobs = good_lines()
    jobs[25] = job_line(26, 250, run_time="x")
    jobs[5] = job_line(6, 50, wait=-3)  # earlier line, found by the array check
    with pytest.raises(InputError) as info:
        read_swf(lines_file(write, jobs))
    assert info.value.line == HEADER_LINES + 6


def test_lenient_counts_every_reason(write) -> None:
    jobs = good_lines(40)
    jobs[2] = "1 2 3"
    jobs[4] = "4 5"
    jobs[7] = job_line(8, 70, status=-2)
    jobs[9] = job_line(10, 90, queue="q")
    jobs[11] = "\x07bell"
    jobs[13] = job_line(14, 130, wait=-9)
    jobs[30] = job_line(31, 300, wait=-9)
    path = lines_file(write, jobs)
    report = read_swf(path, lenient=True).report
    assert report.n_jobs == 33
    assert report.skipped == {
        "wrong field count": 2,
        "negative value": 3,
        "not an integer": 1,
        "binary data": 1,
    }
    assert [line - HEADER_LINES for line, _ in report.examples] == [3, 5, 8, 10, 12]
    assert report.examples[2][1] == (
        "field 11 (status): negative value -2 (only -1 means unknown) (job line 8)"
    )
    assert report.summary() == (
        f"{path}: 33 jobs; 7 lines skipped (3 negative value, 2 wrong field count, "
        "1 binary data, 1 not an integer); 0 reordered"
    )


def test_lenient_still_fails_for_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read_swf(tmp_path / "nope.swf", lenient=True)
    assert info.value.line is None
    assert str(info.value) == f"{tmp_path / 'nope.swf'}: no such file"


def test_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="directory"):
        read_swf(tmp_path)


# ----------------------------------------------------------------------------
# submit order
# ----------------------------------------------------------------------------


def test_out_of_order_submits_are_sorted_stably(write) -> None:
    jobs = [
        job_line(1, 0),
        job_line(2, 50),
        job_line(3, 20),
        job_line(4, 20),
        job_line(5, 60),
        job_line(6, 50),
    ]
    trace = read_swf(lines_file(write, jobs))
    assert trace.jobs["job_id"].tolist() == [1, 3, 4, 2, 6, 5]
    assert trace.jobs["submit"].is_monotonic_increasing
    assert trace.report.reordered == 3  # lines 3, 4 and 6 are below an earlier submit
    assert isinstance(trace.jobs.index, pd.RangeIndex)


def test_strict_order_names_the_first_out_of_order_line(write) -> None:
    jobs = good_lines()
    jobs[21], jobs[22] = jobs[22], jobs[21]
    path = lines_file(write, jobs)
    with pytest.raises(InputError) as info:
        read_swf(path, strict_order=True)
    assert info.value.line == HEADER_LINES + 23
    assert info.value.field == "2 (submit)"
    assert "220" in info.value.reason and "230" in info.value.reason
    trace = read_swf(path, strict_order=True, lenient=True)
    assert trace.report.skipped == {"out of order": 1}
    assert len(trace) == 29


def test_unknown_submit_sorts_first_and_counts_as_reordered(write) -> None:
    """LLNL-Thunder's 'out of order' lines are jobs with submit time -1."""
    jobs = [job_line(1, 0), job_line(2, 50), job_line(3, -1, run_time=-1), job_line(4, 60)]
    path = lines_file(write, jobs)
    trace = read_swf(path)
    assert trace.jobs["job_id"].tolist() == [3, 1, 2, 4]
    assert trace.report.reordered == 1
    with pytest.raises(InputError, match=r"submit time -1 \(unknown\) goes backwards"):
        read_swf(path, strict_order=True)


def test_equal_submits_are_in_order(write) -> None:
    jobs = [job_line(i, 100) for i in range(1, 6)]
    trace = read_swf(lines_file(write, jobs), strict_order=True)
    assert trace.report.reordered == 0 and len(trace) == 5


# ----------------------------------------------------------------------------
# header
# ----------------------------------------------------------------------------

RICH_HEADER = """\
;   --- converted for a test ---
; Version: 2.2
; computer: Lower-case label machine
; INSTALLATION: Upper-case label site
; Information: http://example.org/first
;              http://example.org/second
; Information: http://example.org/third
; MaxJobs: 12
; MaxRecords: 10
; Preemption: No
; UnixStartTime: 843480031
; TimeZone: -28800
; TimeZoneString: US/Pacific
; StartTime: Mon Sep 23 14:00:31 CEST 1996
; EndTime:   Fri Aug 29 10:55:01 CEST 1997
; MaxNodes: 400 (48 interactive, 352 batch)
; MaxProcs: 400
; MaxRuntime: 64800
; MaxMemory: 262144
; AllowOveruse: yes
; Queues: 0 is interactive,
;         1 is batch
; Partitions: one
; MaxQueues: 2
; Queue:  0  interactive
; Queue:  1  batch
; Note: THIS IS A CLEANED VERSION OF THE LOG!
;       The filter used to produce it was
;         job<=14 (14 jobs removed)
;
; Note: Curie has thin and fat nodes,
;\tsee: http://example.org/nodes
; Note: single line
"""


def test_header_labels_notes_and_extras(write) -> None:
    trace = read_swf(write(RICH_HEADER + job_line(1, 0) + "\n"))
    h = trace.header
    assert h.version == "2.2"
    assert h.computer == "Lower-case label machine"
    assert h.installation == "Upper-case label site"
    assert h.information == (
        "http://example.org/first\nhttp://example.org/second\nhttp://example.org/third"
    )
    assert (h.max_jobs, h.max_records, h.unix_start_time, h.time_zone) == (
        12,
        10,
        843480031,
        -28800,
    )
    assert h.preemption == "No" and h.time_zone_string == "US/Pacific"
    assert h.start_time == "Mon Sep 23 14:00:31 CEST 1996"
    assert h.end_time == "Fri Aug 29 10:55:01 CEST 1997"
    assert (h.max_nodes, h.max_procs, h.max_runtime, h.max_memory) == (400, 400, 64800, 262144)
    assert h.allow_overuse is True
    assert h.queues == "0 is interactive,\n1 is batch"
    assert h.partitions == "one"
    assert h.notes == [
        "THIS IS A CLEANED VERSION OF THE LOG!\nThe filter used to produce it was\n"
        "  job<=14 (14 jobs removed)",
        "Curie has thin and fat nodes,\nsee: http://example.org/nodes",
        "single line",
    ]
    assert h.extra == {
        "": "--- converted for a test ---",
        "MaxNodes": "400 (48 interactive, 352 batch)",
        "MaxQueues": "2",
        "Queue": "0  interactive\n1  batch",
    }


def test_header_round_trip_through_to_lines(write, tmp_path: Path) -> None:
    trace = read_swf(write(RICH_HEADER + job_line(1, 0) + "\n"))
    out = tmp_path / "out.swf"
    write_swf(trace, out)
    again = read_swf(out)
    assert dataclasses.asdict(again.header) == dataclasses.asdict(trace.header)
    text = out.read_text()
    assert "; MaxNodes: 400 (48 interactive, 352 batch)\n" in text
    assert ";         job<=14 (14 jobs removed)\n" in text


@pytest.mark.parametrize(
    ("line", "label"),
    [
        ("; MaxProcs: many", "MaxProcs"),
        ("; maxnodes: 12x", "MaxNodes"),
        ("; UnixStartTime: 1.5e9", "UnixStartTime"),
        ("; TimeZone:", "TimeZone"),
        ("; AllowOveruse: maybe", "AllowOveruse"),
    ],
)
def test_bad_numeric_header_value(write, line: str, label: str) -> None:
    path = write(HEADER + line + "\n" + job_line(1, 0) + "\n")
    with pytest.raises(InputError) as info:
        read_swf(path)
    assert info.value.line == HEADER_LINES + 1
    assert label in str(info.value)
    trace = read_swf(path, lenient=True)
    assert trace.report.skipped == {"bad header value": 1}
    assert len(trace) == 1


def test_header_to_lines_from_scratch() -> None:
    header = SWFHeader(
        computer="X",
        max_procs=128,
        allow_overuse=False,
        notes=["two\nlines"],
        extra={"Custom": "value"},
    )
    assert header.to_lines() == [
        "; Computer: X",
        "; MaxProcs: 128",
        "; AllowOveruse: No",
        "; Custom: value",
        "; Note: two",
        ";       lines",
    ]
    assert SWFHeader().to_lines() == []


# ----------------------------------------------------------------------------
# gzip
# ----------------------------------------------------------------------------


def test_gzip_is_detected_by_content(write) -> None:
    text = HEADER + "\n".join(good_lines(10)) + "\n"
    packed = gzip.compress(text.encode())
    for name in ["zipped.swf", "zipped.swf.gz", "zipped.data"]:
        assert len(read_swf(write(packed, name))) == 10
    assert len(read_swf(write(text, "plain.swf.gz"))) == 10  # a .gz name holding plain text


def test_multi_member_gzip(write) -> None:
    part1 = gzip.compress((HEADER + "\n".join(good_lines(5)) + "\n").encode())
    part2 = gzip.compress(("\n".join(good_lines(10)[5:]) + "\n").encode())
    assert len(read_swf(write(part1 + part2, "m.swf.gz"))) == 10


def test_corrupt_and_truncated_gzip(write) -> None:
    text = HEADER + "\n".join(good_lines(3000)) + "\n"
    packed = gzip.compress(text.encode())
    with pytest.raises(InputError, match="truncated") as info:
        read_swf(write(packed[: len(packed) // 2], "cut.swf.gz"))
    assert info.value.line is not None and info.value.line > 1
    broken = bytearray(packed)
    broken[len(broken) // 2 : len(broken) // 2 + 64] = b"\x00" * 64
    with pytest.raises(InputError, match="gzip") as info:
        read_swf(write(bytes(broken), "bad.swf.gz"))
    assert info.value.line is not None
    with pytest.raises(InputError, match="gzip"):
        read_swf(write(b"\x1f\x8b\x08garbage", "tiny.gz"))


def test_other_compression_is_explained(write) -> None:
    with pytest.raises(InputError, match="bzip2"):
        read_swf(write(b"BZh91AY&SY" + b"\x00" * 20))


# ----------------------------------------------------------------------------
# writing and round trips
# ----------------------------------------------------------------------------


def assert_same_trace(a: Trace, b: Trace) -> None:
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert dataclasses.asdict(a.header) == dataclasses.asdict(b.header)


@pytest.mark.parametrize("name", ["out.swf", "out.swf.gz"])
@pytest.mark.parametrize("source", [TINY, KTH_SAMPLE])
def test_round_trip_samples(tmp_path: Path, source: Path, name: str) -> None:
    trace = read_swf(source)
    out = tmp_path / name
    write_swf(trace, out)
    assert (out.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    assert_same_trace(read_swf(out), trace)


def test_written_columns_are_aligned(tmp_path: Path) -> None:
    out = tmp_path / "tiny.swf"
    write_swf(read_swf(TINY), out)
    jobs = [line for line in out.read_text().splitlines() if not line.startswith(";")]
    assert len({len(line) for line in jobs}) == 1
    assert " ".join(jobs[0].split()) == "1 0 0 3600 8 3420 200000 8 7200 262144 1 1 1 1 1 1 -1 -1"


def test_gzip_output_is_reproducible(tmp_path: Path) -> None:
    trace = read_swf(TINY)
    write_swf(trace, tmp_path / "a.swf.gz")
    write_swf(trace, tmp_path / "b.swf.gz")
    assert (tmp_path / "a.swf.gz").read_bytes() == (tmp_path / "b.swf.gz").read_bytes()


def test_write_dataframe_with_missing_and_float_columns(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "job_id": [1, 2, 3],
            "submit": [0.0, 10.4, 10.6],
            "run_time": [5.0, -1.0, 7.5],
            "comment": ["a", "b", "c"],
        }
    )
    out = tmp_path / "f.swf"
    write_swf(frame, out, header=SWFHeader(max_procs=8))
    trace = read_swf(out)
    assert trace.header.max_procs == 8
    assert trace.jobs["submit"].tolist() == [0, 10, 11]
    assert trace.jobs["run_time"].tolist() == [5, -1, 8]
    # NaN is no SWF value: refused as simulate(frame) refuses it (issue 27, D12), not written as -1
    frame.loc[1, "run_time"] = np.nan
    with pytest.raises(O2KSimError, match="field run_time: nan is not a finite number"):
        write_swf(frame, tmp_path / "nan.swf")
    assert (trace.jobs.drop(columns=["job_id", "submit", "run_time"]) == -1).all().all()


def test_write_rejects_invalid_values(tmp_path: Path) -> None:
    frame = jobs_frame([[1, 0, 0, 10, 1, -1, -1, 1, -1, -1, 1, 1, 1, 1, 1, 1, -1, -5]])
    # one-line O2KSimErrors, as every API refusal (issue 27; were ValueError and TypeError)
    with pytest.raises(O2KSimError, match="think_time"):
        write_swf(frame, tmp_path / "x.swf")
    assert not (tmp_path / "x.swf").exists()
    with pytest.raises(O2KSimError, match="needs a Trace or a DataFrame"):
        write_swf([1, 2, 3], tmp_path / "x.swf")  # type: ignore[arg-type]


def test_write_to_missing_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot write"):
        write_swf(read_swf(TINY), tmp_path / "no" / "such" / "dir.swf")


def test_jobs_frame() -> None:
    empty = jobs_frame()
    assert empty.shape == (0, 18) and list(empty.columns) == list(SWF_FIELDS)
    assert all(dtype == np.int64 for dtype in empty.dtypes)
    assert jobs_frame([]).shape == (0, 18)
    rows = [list(range(18)), [-1] * 18]
    frame = jobs_frame(rows)
    assert frame.shape == (2, 18) and frame["think_time"].tolist() == [17, -1]
    assert all(dtype == np.int64 for dtype in frame.dtypes)
    assert jobs_frame(iter(rows)).equals(frame)
    with pytest.raises(ValueError):
        jobs_frame([[1, 2, 3]])


field_value = st.one_of(st.just(-1), st.integers(0, 10**12))


@st.composite
def frames(draw) -> pd.DataFrame:
    n = draw(st.integers(0, 25))
    rows = [draw(st.lists(field_value, min_size=18, max_size=18)) for _ in range(n)]
    # what the reader accepts: distinct job ids, times below MAX_TIME, memory x
    # processors below MAX_JOB_MEMORY_KB (tests/test_hostile.py, test_robust_swf.py check the refusals)
    ids = draw(st.lists(st.integers(0, 10**12), min_size=n, max_size=n, unique=True))
    for row, job_id in zip(rows, ids, strict=True):
        row[0] = job_id
        for k in (1, 2, 3, 8, 17):  # submit, wait, run_time, req_time, think_time
            row[k] = min(row[k], MAX_TIME - 1)
        for k in (6, 9):  # used_mem, req_mem (KB per processor) x max(req_procs, alloc_procs)
            if row[k] > 0 and max(row[4], row[7]) > 0:
                row[k] = min(row[k], (MAX_JOB_MEMORY_KB - 1) // max(row[4], row[7]))
    frame = jobs_frame(rows)
    # read_swf returns rows sorted by submit; write them that way for an exact round trip
    return frame.sort_values("submit", kind="stable", ignore_index=True)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(frame=frames(), gz=st.booleans())
def test_round_trip_property(tmp_path: Path, frame: pd.DataFrame, gz: bool) -> None:
    out = tmp_path / ("p.swf.gz" if gz else "p.swf")
    header = SWFHeader(computer="prop", max_procs=64, notes=["a\nb"])
    write_swf(frame, out, header=header)
    trace = read_swf(out, strict_order=True)
    pd.testing.assert_frame_equal(trace.jobs, frame)
    assert trace.header == header


def test_fast_and_exact_paths_agree(write) -> None:
    """A comment among the job lines forces the line-by-line path; same result."""
    text = KTH_SAMPLE.read_text()
    head, jobs = text.split("\n   15 ", 1)
    jobs = ("   15 " + jobs).splitlines()
    mixed = head + "\n" + "\n".join([*jobs[:1000], "; a comment", *jobs[1000:]]) + "\n"
    pd.testing.assert_frame_equal(read_swf(write(mixed)).jobs, read_swf(KTH_SAMPLE).jobs)


def test_report_summary_wording() -> None:
    assert ReadReport("kth.swf", 1, {}, [], 0).summary() == (
        "kth.swf: 1 job; 0 lines skipped; 0 reordered"
    )
    assert ReadReport(
        "kth.swf", 28476, {"wrong field count": 2, "negative value": 1}, [], 0
    ).summary() == (
        "kth.swf: 28476 jobs; 3 lines skipped (2 wrong field count, 1 negative value); 0 reordered"
    )


# ----------------------------------------------------------------------------
# the shared Parallel Workloads Archive traces
# ----------------------------------------------------------------------------


def shared_trace_table() -> dict[str, tuple[int, int | None]]:
    """file name -> (job count, MaxProcs or None) from SOURCES.md."""
    table: dict[str, tuple[int, int | None]] = {}
    for line in (SHARED_TRACES / "SOURCES.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].endswith(".swf.gz"):
            continue
        jobs = int(cells[2].split()[0].replace(",", ""))
        procs = cells[3].split()[0]
        table[cells[0]] = (jobs, int(procs) if procs.isdigit() else None)
    return table


@pytest.mark.traces
def test_shared_traces_load_with_expected_job_counts() -> None:
    if not (SHARED_TRACES / "SOURCES.md").exists():
        pytest.skip(f"{SHARED_TRACES} not available")
    table = shared_trace_table()
    files = sorted(SHARED_TRACES.glob("*.swf.gz"))
    assert files and len(table) >= len(files) - 1
    for path in files:
        trace = read_swf(path)
        expected_jobs, expected_procs = table[path.name]
        assert len(trace) == expected_jobs, path.name
        if expected_procs is not None and trace.header.max_procs is not None:
            assert trace.header.max_procs == expected_procs, path.name
        assert trace.jobs["submit"].is_monotonic_increasing
        assert trace.report is not None and not trace.report.skipped


# ----------------------------------------------------------------------------
# the command line
# ----------------------------------------------------------------------------


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "o2ksim", "trace", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """Run ``o2ksim trace ARGS`` in this process: (exit code, stdout, stderr)."""
    from o2ksim.cli import main

    code = main(["trace", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_check_bad_file_in_a_subprocess(write) -> None:
    """The real entry point: exit code 2, one line on stderr naming the line, no traceback."""
    jobs = good_lines()
    jobs[20] = job_line(21, 210, run_time="abc")
    path = lines_file(write, jobs)
    result = run_cli("check", path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        f"o2ksim: error: {path}:{HEADER_LINES + 21}: field 4 (run_time)"
    )


def test_cli_check_lenient(write, capsys) -> None:
    jobs = good_lines()
    jobs[20] = job_line(21, 210, run_time="abc")
    code, out, err = cli(capsys, "check", "--lenient", lines_file(write, jobs))
    assert code == 0
    assert "29 jobs; 1 line skipped (1 not an integer); 0 reordered" in out
    assert f"line {HEADER_LINES + 21}: field 4 (run_time)" in out
    assert err.startswith("o2ksim: warning:")


def test_cli_check_order(write, capsys) -> None:
    jobs = good_lines()
    jobs[3] = job_line(4, 0)
    path = lines_file(write, jobs)
    code, out, err = cli(capsys, "check", path)
    assert code == 0
    assert out.splitlines()[0].endswith("30 jobs; 0 lines skipped; 1 reordered")
    assert err.startswith("o2ksim: warning:") and "sorted by submit time" in err
    code, out, err = cli(capsys, "check", "--strict-order", path)
    assert code == 2
    assert err.startswith(f"o2ksim: error: {path}:{HEADER_LINES + 4}: field 2 (submit): ")


def test_cli_empty_and_missing_file(write, tmp_path: Path, capsys) -> None:
    code, out, err = cli(capsys, "check", write(""))
    assert code == 0 and "0 jobs" in out and "no jobs" in err
    code, out, err = cli(capsys, "info", tmp_path / "missing.swf")
    assert code == 2
    assert err.strip() == f"o2ksim: error: {tmp_path / 'missing.swf'}: no such file"


def test_cli_info(capsys) -> None:
    code, out, _ = cli(capsys, "info", TINY)
    assert code == 0
    assert re.search(r"MaxProcs:\s+16\n", out)
    assert re.search(r"MaxNodes:\s+1\n", out)
    assert re.search(r"UnixStartTime:\s+946684800 \(2000-01-01 00:00:00 UTC\)", out)
    assert re.search(r"notes:\s+3\n", out)
    assert re.search(r"jobs:\s+8\n", out)
    assert re.search(r"time span:\s+3000 s", out)
    assert re.search(r"req\. time:\s+8 \(100\.0%\)", out)
    assert re.search(r"req\. memory:\s+7 \(87\.5%\)", out)
    assert re.search(r"reordered:\s+0", out)


def test_cli_convert(tmp_path: Path, capsys) -> None:
    out_path = tmp_path / "head.swf.gz"
    code, out, _ = cli(capsys, "convert", KTH_SAMPLE, out_path, "--limit", "50")
    assert code == 0 and "wrote 50 jobs" in out
    trace = read_swf(out_path)
    assert len(trace) == 50
    assert trace.header.max_procs == 100
    assert "first 50 job lines of kth-sp2-sample" in trace.header.notes[-1]
    pd.testing.assert_frame_equal(trace.jobs, read_swf(KTH_SAMPLE, limit=50).jobs)
    back = tmp_path / "back.swf"
    code, _, _ = cli(capsys, "convert", out_path, back)
    assert code == 0
    assert_same_trace(read_swf(back), trace)


def test_jobs_from_columns_sets_fields_by_name():
    from o2ksim.workloads.swf import SWF_FIELDS, jobs_from_columns

    df = jobs_from_columns(3, submit=[0, 5, 9], run_time=[1, 2, 3], status=1)
    assert list(df.columns) == list(SWF_FIELDS)
    assert list(df["job_id"]) == [1, 2, 3] and list(df["submit"]) == [0, 5, 9]
    assert (df["status"] == 1).all() and (df["req_mem"] == -1).all()
    assert str(df["run_time"].dtype) == "int64"
    with pytest.raises(ValueError, match="unknown field"):
        jobs_from_columns(1, runtime=[1])
