"""SWF inputs range-checked before they reach an integer type, and non-text refused fast (issue 27).

The wrap-around is shown with numpy itself (2**62 KB x 4 processors is 0 in
int64), so the refusal is tested against arithmetic, not against o2ksim's
own output.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from o2ksim.errors import InputError
from o2ksim.workloads.swf import MAX_LINE, read_swf

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
HEADER = "; MaxProcs: 8\n"


def line(**fields: int) -> str:
    values = dict(job_id=1, submit=0, wait=-1, run_time=100, alloc_procs=4, avg_cpu=-1,
                  used_mem=-1, req_procs=4, req_time=100, req_mem=-1, status=1, user=1,
                  group=1, app=1, queue=1, partition=1, prev_job=-1, think_time=-1)  # fmt: skip
    values.update(fields)
    return " ".join(str(v) for v in values.values())


def write(tmp_path: Path, text: str | bytes, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_the_wrap_around_the_check_prevents():
    with np.errstate(over="ignore"):
        assert np.int64(2**62) * np.int64(4) == 0


@pytest.mark.parametrize(
    ("name", "field"), [("used_mem", "7 (used_mem)"), ("req_mem", "10 (req_mem)")]
)
def test_memory_times_processors_beyond_int64_is_refused_with_line_and_field(tmp_path, name, field):
    path = write(tmp_path, HEADER + line(job_id=1) + "\n" + line(job_id=2, **{name: 2**62}) + "\n")
    with pytest.raises(InputError) as info:
        read_swf(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 3, field)
    assert "x 4 processors" in str(info.value)


def test_lenient_skips_the_line_and_keeps_the_others(tmp_path):
    path = write(tmp_path, HEADER + line(job_id=1) + "\n" + line(job_id=2, used_mem=2**62) + "\n")
    trace = read_swf(path, lenient=True)
    assert list(trace.jobs["job_id"]) == [1]
    assert trace.report.skipped == {"out of range": 1}


def test_a_frame_with_used_memory_beyond_int64_is_refused():
    from o2ksim import simulate
    from o2ksim.workloads.swf import SWF_FIELDS

    row = dict(zip(SWF_FIELDS, [int(v) for v in line(used_mem=2**62).split()], strict=True))
    with pytest.raises(InputError, match="used_mem"):
        simulate(pd.DataFrame([row]), machine="o2k")


def test_negative_max_procs_is_refused_as_such(tmp_path):
    path = write(tmp_path, "; MaxProcs: -5\n" + line() + "\n")
    with pytest.raises(InputError, match=r":1: header MaxProcs: negative value -5"):
        read_swf(path)


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("; MaxProcs: 0\n", "the trace header gives MaxProcs 0 (no processors) and no other size"),
        ("; MaxProcs: 0\n; MaxNodes: 0\n", "gives MaxProcs 0 and MaxNodes 0 (no processors)"),
        ("", "the trace header has no MaxProcs or MaxNodes"),
    ],
)
def test_a_header_sizing_no_machine_says_what_it_gives(tmp_path, header, said):
    """Found by the session-13 audit: ``MaxProcs: 0`` was reported as no MaxProcs at all."""
    from o2ksim.machine import machine_from_header

    trace = read_swf(write(tmp_path, header + line() + "\n"))
    with pytest.raises(InputError, match="give the machine with --machine") as info:
        machine_from_header(trace.header, "t.swf")
    assert said in str(info.value)


def test_a_header_max_nodes_sizes_the_machine_when_max_procs_is_zero(tmp_path):
    from o2ksim.machine import machine_from_header

    trace = read_swf(write(tmp_path, "; MaxProcs: 0\n; MaxNodes: 64\n" + line() + "\n"))
    assert machine_from_header(trace.header).hosts[0].procs == 64


# ------------------------------------------------------------------ non-text, refused quickly
def run_cli(*args: str) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "o2ksim", "run", *args], env=ENV,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return proc.returncode, proc.stderr, time.perf_counter() - t0


def test_dev_zero_is_refused_at_once():
    code, err, seconds = run_cli("--trace", "/dev/zero")
    assert code == 2 and err.strip() == "o2ksim: error: /dev/zero:1: binary data, not SWF text"
    assert seconds < 10  # it used to read until MemoryError (15-32 s)


def test_dev_urandom_is_refused_at_once():
    code, err, _ = run_cli("--trace", "/dev/urandom")
    assert code == 2 and "binary data, not SWF text" in err and len(err.splitlines()) == 1


def test_a_line_longer_than_the_limit_is_refused_at_its_line(tmp_path):
    path = write(tmp_path, HEADER + line() + "\n" + "7" * (MAX_LINE + 10) + "\n")
    with pytest.raises(InputError, match=r":3: a line longer than 1024 KiB"):
        read_swf(path)


def test_gzipped_zeros_are_refused_after_the_first_megabyte(tmp_path):
    path = write(tmp_path, gzip.compress(b"\0" * (50 << 20)), "zeros.swf.gz")
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r":1: binary data"):
        read_swf(path)
    assert time.perf_counter() - t0 < 5


def test_a_binary_line_among_text_lines_is_still_skipped_one_by_one(tmp_path):
    text = HEADER.encode() + "\n".join(line(job_id=i) for i in range(1, 40)).encode()
    path = write(tmp_path, text + b"\n\x00\x01\x02 garbage\n")
    trace = read_swf(path, lenient=True)
    assert len(trace.jobs) == 39 and trace.report.skipped == {"binary data": 1}


# ------------------------------------------------------------------ one-line errors (issue 27)
@pytest.mark.parametrize("model", ["cirne-berman", "downey"])
def test_fit_on_an_empty_trace_names_the_file(tmp_path, capsys, model):
    from o2ksim.cli import main

    path = str(write(tmp_path, "; Version: 2\n"))
    assert main(["fit", path, "--model", model]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"o2ksim: error: {path}: 0 job(s), too few to fit (need at least 10)"


@pytest.mark.parametrize(
    ("model", "fields", "said"),
    [
        ("cirne-berman", {"req_time": -1}, "no requested times (field 9)"),
        ("downey", {"run_time": -1}, "too few jobs with a positive run time"),
        ("cirne-berman", {}, "covers no whole day"),
    ],
)
def test_fit_on_a_degenerate_trace_names_the_file(tmp_path, capsys, model, fields, said):
    """Found by the session-13 audit: what the trace lacks was said without the file."""
    from o2ksim.cli import main

    jobs = "".join(line(job_id=i, submit=10 * i, **fields) + "\n" for i in range(1, 21))
    path = str(write(tmp_path, HEADER + jobs))
    assert main(["fit", path, "--model", model]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"o2ksim: error: {path}: cannot fit {model}: ") and said in err, err
    assert "\n" not in err


@pytest.mark.parametrize(
    ("command", "message"),
    [(["characterize"], "no jobs to characterise"), (["run", "--trace"], "the trace has no jobs"),
     (["validate"], "the trace has no jobs")],
)  # fmt: skip
def test_other_commands_on_an_empty_trace_name_the_file(tmp_path, capsys, command, message):
    """The audit's variant of the fit bullet: characterize said only "the trace has no jobs";
    and the --out folder the command created before its work stayed behind, empty."""
    from o2ksim.cli import main

    path = str(write(tmp_path, "; MaxProcs: 16\n"))
    out = tmp_path / "new"
    assert main([*command, path, "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"o2ksim: error: {path}: {message}"
    assert not out.exists()


@pytest.mark.parametrize("argv", [["run", "--bogus"], ["--bogus"], ["trace", "info", "a", "b"]])
def test_an_unrecognized_argument_has_the_prefix_once(capsys, argv):
    from o2ksim.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.count("o2ksim:") == 1 and "unrecognized arguments" in err, err
