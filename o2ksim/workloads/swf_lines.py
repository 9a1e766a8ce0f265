"""The job lines of an SWF file: converted fast when they are clean, diagnosed line by line when not.

*Fast path* (:func:`fast_parse`): when the job part of the file holds only
digits, ``-``, ``.`` and whitespace, :func:`numpy.loadtxt` converts it in one
go (C code) and the result is checked as a whole.  *Exact path*
(:func:`scan`): only when the fast path fails or finds a problem, every line
is classified on its own, so that each bad one is reported with its line
number and field (:func:`diagnose`).  Checks on the converted values (times
beyond the simulated range, memory beyond int64, repeated job ids, submit
times that go backwards) are the same for both paths.

Field 6 (the *average* CPU time) is the one field that may hold a decimal
(real archive files write ``552.21``); it is rounded to the nearest second.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from o2ksim.validation import MAX_JOB_MEMORY_KB, MAX_TIME
from o2ksim.workloads.swf_fields import (
    AVG_CPU,
    CONTROL_BYTES,
    INT64_MAX,
    N_FIELDS,
    SUBMIT,
    SWF_FIELDS,
    Problem,
    field_name,
)

__all__ = [
    "check_order",
    "count_reordered",
    "drop_out_of_range",
    "fast_parse",
    "has_duplicates",
    "out_of_range",
    "scan",
]

_FAST_ALLOWED = b"0123456789-. \t\r\n"
_INT_TOKEN = re.compile(rb"-?[0-9]+")
_DEC_TOKEN = re.compile(rb"-?[0-9]+(?:\.[0-9]*)?")
_DEC_TOKEN_STR = re.compile(r"-?[0-9]+(?:\.[0-9]*)?")
_I = rb"-?[0-9]{1,18}"
# a line the exact scanner accepts without looking closer (values below -1 are
# caught afterwards, on the converted array)
_GOOD_LINE = re.compile(
    rb"[ \t]*(?:" + _I + rb"[ \t]+){5}" + _I + rb"(?:\.[0-9]*)?(?:[ \t]+" + _I + rb"){12}[ \t]*\r?"
)


def _avg_cpu(text: str) -> int:
    """Converter for field 6 in :func:`numpy.loadtxt`: decimal -> nearest integer.

    Returns -2 for a negative value other than -1 so that the array check
    flags the line (and the exact path explains it).  Only the bytes of
    :data:`_FAST_ALLOWED` reach it, so a token without ``.`` is digits and
    ``-`` signs, which ``int`` converts or refuses exactly as the pattern would.
    """
    if "." not in text:
        whole = int(text)
        return whole if whole >= -1 else -2
    if not _DEC_TOKEN_STR.fullmatch(text):
        raise ValueError(text)
    value = float(text)
    if value == -1:
        return -1
    if value < 0:
        return -2
    return math.floor(value + 0.5)


def _loadtxt(body: bytes) -> np.ndarray:
    """Convert job lines to an (n, 18) int64 array; raises ValueError on any problem."""
    if not body or body.isspace():
        return np.empty((0, N_FIELDS), dtype=np.int64)
    converters: dict[int | str, Callable[[str], Any]] | None = (
        {AVG_CPU: _avg_cpu} if b"." in body else None
    )
    arr = np.loadtxt(
        io.BytesIO(body),
        dtype=np.int64,
        comments=None,
        ndmin=2,
        converters=converters,
        encoding="ascii",
    )
    if arr.shape[1] != N_FIELDS:
        raise ValueError("wrong number of columns")
    return arr


def fast_parse(body: bytes) -> np.ndarray | None:
    """All job lines at once, or None when anything looks wrong (-> exact path)."""
    if body.translate(None, _FAST_ALLOWED):
        return None  # other bytes: comments, text, binary ...
    if b"\r" in body and body.count(b"\r") != body.count(b"\r\n"):
        return None
    try:
        arr = _loadtxt(body)
    except (ValueError, OverflowError, TypeError):
        return None
    if arr.size and arr.min() < -1:
        return None
    return arr


def diagnose(line: bytes) -> tuple[str, str, str | None] | None:
    """Why a job line is not valid SWF: (reason key, message, field label), or None."""
    text = line[:-1] if line.endswith(b"\r") else line
    if len(text.translate(None, CONTROL_BYTES)) != len(text) or b"\r" in text:
        return ("binary data", "binary data, not SWF text", None)
    if not text.isascii():
        try:
            text.decode("utf-8")
        except UnicodeDecodeError:
            return ("binary data", "binary data, not SWF text", None)
    tokens = text.split()
    if len(tokens) != N_FIELDS:
        return ("wrong field count", f"expected {N_FIELDS} fields, found {len(tokens)}", None)
    for k, tok in enumerate(tokens, 1):
        shown = tok.decode("utf-8")
        if len(shown) > 40:
            shown = shown[:37] + "..."
        name = field_name(k)
        if k - 1 == AVG_CPU:
            if not _DEC_TOKEN.fullmatch(tok):
                return ("not an integer", f"{shown!r} is not a number", name)
            value: float = float(tok)
        else:
            if not _INT_TOKEN.fullmatch(tok):
                return ("not an integer", f"{shown!r} is not an integer", name)
            value = int(tok)
        if value < 0 and value != -1:
            return ("negative value", f"negative value {shown} (only -1 means unknown)", name)
        if value > INT64_MAX:
            return ("out of range", f"value {shown} is too large", name)
    return None


def _line_values(line: bytes) -> list[int]:
    """The 18 values of a line :func:`diagnose` accepts, converted in Python."""
    return [
        _avg_cpu(tok.decode()) if k == AVG_CPU else int(tok) for k, tok in enumerate(line.split())
    ]


def scan(
    body: bytes, first_line: int
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, bytes]], list[Problem]]:
    """The exact path: classify every line, keep the good job lines.

    Returns the values of the good job lines, their places (an (n, 2) array of
    file line number and job line number, i.e. the count of job lines up to
    and including it), the comment lines found among the jobs, and the bad
    lines.
    """
    good: list[bytes] = []
    places: list[tuple[int, int]] = []
    comments: list[tuple[int, bytes]] = []
    problems: list[Problem] = []
    match = _GOOD_LINE.fullmatch
    job_no = 0
    for number, line in enumerate(body.split(b"\n"), first_line):
        if match(line):
            job_no += 1
            good.append(line)
            places.append((number, job_no))
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if stripped[:1] == b";":
            comments.append((number, line))
            continue
        job_no += 1
        why = diagnose(line)
        if why is None:
            good.append(line)
            places.append((number, job_no))
        else:
            problems.append(_job_problem(number, job_no, *why))
    try:
        values = _loadtxt(b"\n".join(good))
    except (ValueError, OverflowError):  # pragma: no cover - diagnose accepted every line
        values = np.array([_line_values(line) for line in good], dtype=np.int64).reshape(
            -1, N_FIELDS
        )
    numbers = np.asarray(places, dtype=np.int64).reshape(-1, 2)
    bad_rows = np.flatnonzero((values < -1).any(axis=1)) if values.size else np.empty(0, int)
    if bad_rows.size:
        for row in bad_rows:
            why = diagnose(good[row])
            assert why is not None, "a value below -1 is always diagnosed"
            problems.append(_job_problem(int(numbers[row, 0]), int(numbers[row, 1]), *why))
        keep = np.ones(len(values), dtype=bool)
        keep[bad_rows] = False
        values, numbers = values[keep], numbers[keep]
    return values, numbers, comments, problems


_TIME_COLUMNS = tuple(
    SWF_FIELDS.index(n) for n in ("submit", "wait", "run_time", "req_time", "think_time")
)
_JOB_ID = SWF_FIELDS.index("job_id")
_REQ_MEM = SWF_FIELDS.index("req_mem")
_USED_MEM = SWF_FIELDS.index("used_mem")
_MEM_COLUMNS = (_REQ_MEM, _USED_MEM)  # KB per processor: the job's memory is value x processors
_PROC_COLUMNS = (SWF_FIELDS.index("req_procs"), SWF_FIELDS.index("alloc_procs"))


def out_of_range(values: np.ndarray) -> np.ndarray:
    """Rows whose values the simulation cannot use exactly: a time at or beyond
    :data:`~o2ksim.validation.MAX_TIME` (the float clock stops stepping near
    2**53 s) or a requested or used memory (fields 10 and 7, KB per processor)
    x processors beyond :data:`~o2ksim.validation.MAX_JOB_MEMORY_KB` (int64
    would wrap around: 2**62 KB x 4 processors is 0 in int64).

    The other fields are integers below 2**63 (the parser refuses larger ones)
    that are compared, never multiplied, so int64 holds them exactly."""
    if not values.size:
        return np.zeros(len(values), dtype=bool)
    bad = np.asarray((values[:, list(_TIME_COLUMNS)] >= MAX_TIME).any(axis=1))
    procs = np.maximum(values[:, _PROC_COLUMNS[0]], values[:, _PROC_COLUMNS[1]]).astype(np.float64)
    for k in _MEM_COLUMNS:  # in float64, which cannot wrap
        bad = bad | (values[:, k].astype(np.float64) * np.maximum(procs, 0.0) >= MAX_JOB_MEMORY_KB)
    return bad


def has_duplicates(values: np.ndarray) -> bool:
    """Whether a job id repeats (O(n) when the ids increase, as in archive files)."""
    ids = values[:, _JOB_ID]
    if len(ids) < 2 or bool((ids[1:] > ids[:-1]).all()):
        return False
    ordered = np.sort(ids)
    return bool((ordered[1:] == ordered[:-1]).any())


def _range_reason(row: np.ndarray, seen_line: int | None) -> tuple[str, str, str | None]:
    """Why a row :func:`out_of_range` flagged (or a duplicate id) is refused."""
    for k in _TIME_COLUMNS:
        if row[k] >= MAX_TIME:
            return (
                "out of range",
                f"{row[k]} s is beyond the largest time o2ksim simulates ({MAX_TIME:g} s, "
                "about 31,700 years)",
                field_name(k + 1),
            )
    if seen_line is None:
        procs = max(int(row[_PROC_COLUMNS[0]]), int(row[_PROC_COLUMNS[1]]))
        k = next(
            (k for k in _MEM_COLUMNS if float(row[k]) * max(procs, 0) >= MAX_JOB_MEMORY_KB),
            _REQ_MEM,
        )
        return (
            "out of range",
            f"{row[k]} KB per processor x {procs} processors is beyond "
            f"{MAX_JOB_MEMORY_KB:g} KB of memory",
            field_name(k + 1),
        )
    return (
        "duplicate job id",
        f"job id {row[_JOB_ID]} is already used on line {seen_line}",
        field_name(_JOB_ID + 1),
    )


def drop_out_of_range(
    values: np.ndarray, numbers: np.ndarray, problems: list[Problem]
) -> tuple[np.ndarray, np.ndarray]:
    """Report (and drop) rows out of range and rows repeating an earlier job id."""
    bad = out_of_range(values)
    dup = np.zeros(len(values), dtype=bool)
    first_line: dict[int, int] = {}
    if has_duplicates(values):
        _, first = np.unique(np.ascontiguousarray(values[:, _JOB_ID]), return_index=True)
        dup[:] = True
        dup[first] = False
        first_line = {int(values[i, _JOB_ID]): int(numbers[i, 0]) for i in first.tolist()}
    for row in np.flatnonzero(bad | dup).tolist():
        seen = None if bad[row] else first_line[int(values[row, _JOB_ID])]
        problems.append(
            _job_problem(
                int(numbers[row, 0]), int(numbers[row, 1]), *_range_reason(values[row], seen)
            )
        )
    keep = ~(bad | dup)
    if keep.all():
        return values, numbers
    return values[keep], numbers[keep]


def _job_problem(line: int, job_no: int, key: str, message: str, field: str | None) -> Problem:
    """A problem on a job line; the message also gives the job line's rank among
    the job lines (comments and blank lines not counted), which is the job
    number in a well-formed SWF file."""
    return Problem(line, key, f"{message} (job line {job_no})", field)


def count_reordered(submit: np.ndarray) -> int:
    """Number of entries smaller than some earlier entry."""
    if len(submit) < 2:
        return 0
    return int(np.count_nonzero(submit[1:] < np.maximum.accumulate(submit)[:-1]))


def check_order(
    values: np.ndarray, numbers: np.ndarray, problems: list[Problem], strict_order: bool
) -> tuple[np.ndarray, list[Problem], int]:
    """Count submit times that go backwards; with *strict_order* they are problems
    (and their rows are dropped, which only matters in lenient mode)."""
    submit = values[:, SUBMIT]
    if not strict_order:
        return values, problems, count_reordered(submit)
    if len(submit) < 2:
        return values, problems, 0
    running = np.maximum.accumulate(submit)[:-1]
    late = np.flatnonzero(submit[1:] < running) + 1
    if late.size == 0:
        return values, problems, 0
    for row in late:
        problems.append(
            _job_problem(
                int(numbers[row, 0]),
                int(numbers[row, 1]),
                "out of order",
                f"submit time {submit[row]}{' (unknown)' if submit[row] == -1 else ''} "
                f"goes backwards (an earlier line has {running[row - 1]}); strict order "
                "needs lines sorted by submit time",
                field_name(SUBMIT + 1),
            )
        )
    keep = np.ones(len(values), dtype=bool)
    keep[late] = False
    return values[keep], problems, 0
