"""Read and write the Standard Workload Format (SWF) of the Parallel Workloads Archive.

SWF (Chapin et al., "Benchmarks and Standards for the Evaluation of Parallel
Job Schedulers", §2.3) stores one job per line as 18 whitespace-separated
integers, ``-1`` meaning "unknown"; lines starting with ``;`` are comments, and
the first ones carry ``; Label: value`` header fields (``MaxProcs``,
``UnixStartTime``, ``Note`` ...).  Every workload o2ksim simulates passes
through this module, so it is both strict (a malformed line is reported with
its file, line and field, never silently turned into a wrong job) and fast
(the 447,794 jobs of RICC-2010 load in about half a second).

How reading works, and why:

* The file is read whole; gzip is recognised by its magic bytes, whatever the
  name.  A corrupt or truncated gzip stream is reported at the line where the
  readable text ends.
* *Fast path*: when the job part of the file contains only digits, ``-``,
  ``.`` and whitespace, :func:`numpy.loadtxt` converts it in one go (C code),
  and the result is checked as a whole (18 columns, nothing below ``-1``).
* *Exact path*: only when the fast path fails or finds a problem, the lines
  are scanned one by one to find every bad line, its line number and field.
  The default mode raises :class:`~o2ksim.errors.InputError` for the first one;
  ``lenient=True`` skips them and counts them in :class:`ReadReport`.

One deliberate relaxation of "all integers": real archive files (HPC2N-2002,
SDSC-BLUE-2000, SDSC-Par-1996, OSC-Clust-2000, UniLu-Gaia-2014) write field 6,
the *average* CPU time, with two decimals (``552.21``).  Field 6 therefore
accepts a plain decimal number, rounded to the nearest second; every other
field must be an integer.
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from o2ksim.errors import InputError
from o2ksim.table import ColumnTable, is_frame
from o2ksim.validation import MAX_JOB_MEMORY_KB, MAX_PROCS, MAX_TIME, MAX_UNIX_TIME

if TYPE_CHECKING:  # pandas is imported when a DataFrame is asked for (see Trace.jobs)
    import pandas as pd

__all__ = [
    "SWF_FIELDS",
    "ReadReport",
    "SWFHeader",
    "Trace",
    "jobs_frame",
    "read_swf",
    "write_swf",
]

SWF_FIELDS: tuple[str, ...] = (
    "job_id",
    "submit",
    "wait",
    "run_time",
    "alloc_procs",
    "avg_cpu",
    "used_mem",
    "req_procs",
    "req_time",
    "req_mem",
    "status",
    "user",
    "group",
    "app",
    "queue",
    "partition",
    "prev_job",
    "think_time",
)
"""The 18 fields of SWF version 2 in file order; field *k* (1-based) is ``SWF_FIELDS[k-1]``."""

_NF = len(SWF_FIELDS)
_AVG_CPU = SWF_FIELDS.index("avg_cpu")  # 0-based column that may hold a decimal
_SUBMIT = SWF_FIELDS.index("submit")
_MAX_EXAMPLES = 5
_INT64_MAX = 2**63 - 1

# ----------------------------------------------------------------------------
# header labels: (attribute, canonical spelling, kind), in the order written
# ----------------------------------------------------------------------------

_HEADER_LABELS: tuple[tuple[str, str, str], ...] = (
    ("version", "Version", "text"),
    ("computer", "Computer", "text"),
    ("installation", "Installation", "text"),
    ("acknowledge", "Acknowledge", "text"),
    ("information", "Information", "text"),
    ("conversion", "Conversion", "text"),
    ("max_jobs", "MaxJobs", "int"),
    ("max_records", "MaxRecords", "int"),
    ("preemption", "Preemption", "text"),
    ("unix_start_time", "UnixStartTime", "int"),
    ("time_zone", "TimeZone", "int"),
    ("time_zone_string", "TimeZoneString", "text"),
    ("start_time", "StartTime", "text"),
    ("end_time", "EndTime", "text"),
    ("max_nodes", "MaxNodes", "int"),
    ("max_procs", "MaxProcs", "int"),
    ("max_runtime", "MaxRuntime", "int"),
    ("max_memory", "MaxMemory", "int"),
    ("allow_overuse", "AllowOveruse", "bool"),
    ("queues", "Queues", "text"),
    ("partitions", "Partitions", "text"),
)
_LABELS_BY_KEY = MappingProxyType(
    {label.lower(): (attr, label, kind) for attr, label, kind in _HEADER_LABELS}
)
_NOTE_KEY = "note"
_BOOL_WORDS = MappingProxyType(
    {
        "yes": True,
        "y": True,
        "true": True,
        "1": True,
        "no": False,
        "n": False,
        "false": False,
        "0": False,
    }
)

# '; Label: value' -- the colon must be followed by whitespace or the end, so that
# a continuation line holding a URL ('http://...') is not taken for a label.
_LABEL_RE = re.compile(r";([ \t]*)([A-Za-z][A-Za-z0-9_]*)[ \t]*:([ \t]*)(.*)$")
# numeric header value: an integer, optionally followed by a description in
# parentheses, as the standard suggests for MaxNodes ('400 (48 interactive, ...)').
_INT_VALUE_RE = re.compile(r"([+-]?[0-9]+)(?:[ \t]*(\(.*\)))?")

# ----------------------------------------------------------------------------
# job lines
# ----------------------------------------------------------------------------

_FAST_ALLOWED = b"0123456789-. \t\r\n"
_CONTROL = bytes(range(0, 9)) + b"\x0b\x0c" + bytes(range(14, 32)) + b"\x7f"
_INT_TOKEN = re.compile(rb"-?[0-9]+")
_DEC_TOKEN = re.compile(rb"-?[0-9]+(?:\.[0-9]*)?")
_DEC_TOKEN_STR = re.compile(r"-?[0-9]+(?:\.[0-9]*)?")
_I = rb"-?[0-9]{1,18}"
# a line the exact scanner accepts without looking closer (values below -1 are
# caught afterwards, on the converted array)
_GOOD_LINE = re.compile(
    rb"[ \t]*(?:" + _I + rb"[ \t]+){5}" + _I + rb"(?:\.[0-9]*)?(?:[ \t]+" + _I + rb"){12}[ \t]*\r?"
)
_COMPRESSED_MAGIC = (
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PK\x03\x04", "zip"),
)
_GZIP_MAGIC = b"\x1f\x8b"


def _field_name(k: int) -> str:
    """The field label used in messages, e.g. ``4 (run_time)`` for 1-based *k*."""
    return f"{k} ({SWF_FIELDS[k - 1]})"


# ============================================================================
# data classes
# ============================================================================


@dataclass
class SWFHeader:
    """The header of an SWF file, parsed from its ``; Label: value`` comment lines.

    Every field is optional (``None`` = not given).  Labels are matched without
    regard to case.  A label that appears several times (``Information`` in
    SDSC-BLUE) or has continuation lines keeps all its text, joined by
    newlines.  Each ``Note:`` is one element of :attr:`notes`.  Labels this
    class does not name (``MaxQueues``, ``Queue``, ``Partition`` ...) go to
    :attr:`extra` verbatim under their first spelling; the special key ``""``
    holds free comment lines that carry no label (a title line, say).  When a
    numeric label is followed by a description in parentheses, e.g.
    ``MaxNodes: 400 (48 interactive, 352 batch)``, the number goes to the field
    and the whole text to ``extra["MaxNodes"]`` so that writing keeps it.
    """

    version: str | None = None
    computer: str | None = None
    installation: str | None = None
    acknowledge: str | None = None
    information: str | None = None
    conversion: str | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    preemption: str | None = None
    unix_start_time: int | None = None
    time_zone: int | None = None
    time_zone_string: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    max_runtime: int | None = None
    max_memory: int | None = None
    allow_overuse: bool | None = None
    queues: str | None = None
    partitions: str | None = None
    notes: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)

    def to_lines(self) -> list[str]:
        """The header as SWF comment lines (``; Label: value``), without newlines.

        Reading the lines back with :func:`read_swf` gives an equal header.
        Free text (``extra[""]``) comes first, then the standard labels in the
        order the archive uses, the other labels, and the notes last.
        """
        lines: list[str] = []
        extra_by_key = {k.lower(): (k, v) for k, v in self.extra.items()}
        used: set[str] = set()
        if "" in self.extra:
            lines.extend(f"; {text}".rstrip() for text in self.extra[""].split("\n"))
            lines.append(";")
            used.add("")
        for attr, label, kind in _HEADER_LABELS:
            value = getattr(self, attr)
            if value is None:
                continue
            if kind == "int":
                text = str(int(value))
                described = extra_by_key.get(label.lower())
                if described is not None:
                    used.add(described[0])
                    m = _INT_VALUE_RE.fullmatch(described[1].strip())
                    if m and m.group(2) and int(m.group(1)) == int(value):
                        text = described[1]
                lines.append(f"; {label}: {text}")
            elif kind == "bool":
                lines.append(f"; {label}: {'Yes' if value else 'No'}")
            else:
                lines.extend(_label_lines(label, str(value)))
        for key, value in self.extra.items():
            if key not in used:
                lines.extend(_label_lines(key, value))
        for note in self.notes:
            lines.extend(_label_lines("Note", note, repeat=False))
        return lines


def _label_lines(label: str, value: str, *, repeat: bool = True) -> list[str]:
    """``; Label: value`` for a value holding newlines.

    Parts that start with blanks (indented continuation text) become
    continuation lines starting in the value column; other parts repeat the
    label, unless *repeat* is false (notes), where every part is a
    continuation.  Either way :func:`read_swf` joins them back into *value*.
    """
    first, *rest = value.split("\n")
    head = f"; {label}: "
    pad = ";" + " " * (len(head) - 1)
    lines = [(head + first).rstrip()]
    for part in rest:
        if repeat and part[:1] not in (" ", "\t"):
            lines.append((head + part).rstrip())
        else:
            lines.append((pad + part).rstrip())
    return lines


@dataclass
class ReadReport:
    """What :func:`read_swf` found besides the jobs: skipped and reordered lines.

    ``skipped`` maps a reason (``"wrong field count"``, ``"not an integer"``,
    ``"negative value"``, ``"out of range"``, ``"binary data"``,
    ``"bad header value"``, ``"out of order"``) to the number of lines skipped
    for it; it is only ever non-empty in lenient mode.  ``examples`` holds the
    first few ``(line number, reason)`` pairs.  ``reordered`` counts job lines
    whose submit time is smaller than that of an earlier line; the jobs were
    sorted by submit time to put them in place.  An unknown submit time (-1)
    counts too: all 1190 such lines of LLNL-Thunder-2007 are jobs with submit
    time -1 (the "808" in SOURCES.md counts drops below the previous line).
    """

    path: str
    n_jobs: int
    skipped: dict[str, int] = field(default_factory=dict)
    examples: list[tuple[int, str]] = field(default_factory=list)
    reordered: int = 0

    @property
    def n_skipped(self) -> int:
        """Total number of lines skipped (lenient mode)."""
        return sum(self.skipped.values())

    def summary(self) -> str:
        """One human-readable line, e.g.
        ``kth.swf: 28476 jobs; 3 lines skipped (2 wrong field count, 1 negative value); 0 reordered``.
        """
        jobs = f"{self.n_jobs} job" + ("" if self.n_jobs == 1 else "s")
        n = self.n_skipped
        skipped = f"{n} line" + ("" if n == 1 else "s") + " skipped"
        if n:
            parts = sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
            skipped += " (" + ", ".join(f"{count} {reason}" for reason, count in parts) + ")"
        return f"{self.path}: {jobs}; {skipped}; {self.reordered} reordered"


class Trace:
    """A workload: the jobs of an SWF file with its header.

    ``jobs`` has exactly the 18 :data:`SWF_FIELDS` columns, all ``int64``,
    ``-1`` meaning unknown, one row per job, rows sorted by submit time (stably,
    so jobs submitted at the same second keep their file order), with a
    ``RangeIndex``.  Units are those of SWF: seconds and kilobytes (per
    processor for memory).

    A trace read from a file or generated by a model keeps its jobs as one
    int64 block and builds the ``jobs`` DataFrame on first access (then keeps
    it): a run that never asks for it never imports pandas.  :attr:`table`
    gives the same jobs without building the frame.
    """

    def __init__(
        self,
        jobs: pd.DataFrame | None = None,
        header: SWFHeader | None = None,
        source: str | None = None,
        report: ReadReport | None = None,
        *,
        block: np.ndarray | None = None,
    ) -> None:
        if (jobs is None) == (block is None):
            raise TypeError("Trace needs either jobs (a DataFrame) or block (an (18, n) int64 array)")
        self._frame = jobs
        self._block = block
        self.header = header if header is not None else SWFHeader()
        self.source = source
        self.report = report

    @classmethod
    def from_rows(
        cls,
        values: np.ndarray,
        header: SWFHeader,
        source: str | None = None,
        report: ReadReport | None = None,
    ) -> Trace:
        """A trace of an (n, 18) int64 array in SWF field order (the frame is built when asked)."""
        return cls(None, header, source, report, block=np.ascontiguousarray(values.T))

    @property
    def jobs(self) -> pd.DataFrame:
        """The job table (a DataFrame; built on first access)."""
        if self._frame is None:
            self._frame = _block_frame(self._block)
            self._block = None
        return self._frame

    @jobs.setter
    def jobs(self, frame: pd.DataFrame) -> None:
        self._frame = frame
        self._block = None

    @property
    def table(self) -> pd.DataFrame | ColumnTable:
        """The job table without building a DataFrame: the frame once it exists,
        else a :class:`~o2ksim.table.ColumnTable` of the 18 SWF columns."""
        if self._frame is not None:
            return self._frame
        block = self._block
        return ColumnTable(dict(zip(SWF_FIELDS, block, strict=True)), block.shape[1])

    def __len__(self) -> int:
        return len(self._frame) if self._frame is not None else self._block.shape[1]

    def __repr__(self) -> str:
        return f"Trace({len(self)} jobs, source={self.source!r})"


# ============================================================================
# public functions
# ============================================================================


def jobs_frame(rows: Iterable[Sequence[int]] | None = None) -> pd.DataFrame:
    """A job table with the 18 :data:`SWF_FIELDS` columns, dtype ``int64``.

    Without *rows* the table is empty; otherwise every row must have 18
    integers (SWF field order).  Generators build their output with this so it
    has exactly the shape :func:`read_swf` returns.
    """
    if rows is None:
        data = np.empty((0, _NF), dtype=np.int64)
    else:
        seq = rows if isinstance(rows, np.ndarray) else list(rows)
        if len(seq) == 0:
            data = np.empty((0, _NF), dtype=np.int64)
        else:
            data = np.asarray(seq)
            if data.ndim != 2 or data.shape[1] != _NF:
                raise ValueError(f"jobs_frame: each row needs {_NF} values, got shape {data.shape}")
            if data.dtype.kind == "f" and not np.all(np.isfinite(data) & (data == np.round(data))):
                raise ValueError("jobs_frame: values must be integers")
            data = data.astype(np.int64)
    import pandas as pd

    return pd.DataFrame(data, columns=list(SWF_FIELDS))


def jobs_from_columns(n: int, **columns: Any) -> pd.DataFrame:
    """A job table of ``n`` jobs from named SWF columns; ``job_id`` defaults to 1..n, the rest to -1.

    Generators use it so that fields are set by name (``run_time=...``), not by
    position; a scalar fills the whole column.
    """
    return _block_frame(block_from_columns(n, **columns))


def block_from_columns(n: int, **columns: Any) -> np.ndarray:
    """:func:`jobs_from_columns` as an (18, n) int64 block (one row per SWF field), for
    :class:`Trace`'s ``block``: no DataFrame, no pandas."""
    unknown = set(columns) - set(SWF_FIELDS)
    if unknown:
        raise ValueError(f"jobs_from_columns: unknown field(s) {', '.join(sorted(unknown))}")
    data = np.full((_NF, n), -1, dtype=np.int64)
    data[0] = np.arange(1, n + 1)
    for name, values in columns.items():
        data[SWF_FIELDS.index(name)] = np.asarray(values).astype(np.int64)
    return data


def read_swf(
    path: str | os.PathLike[str],
    *,
    lenient: bool = False,
    strict_order: bool = False,
    limit: int | None = None,
) -> Trace:
    """Read an SWF file (plain or gzip) into a :class:`Trace`.

    By default the first malformed line raises :class:`InputError` naming the
    file, line and field (a wrong field count, a token that is not an integer,
    a negative value other than ``-1``, binary data, a bad numeric header
    value).  With ``lenient=True`` such lines are skipped instead and counted in
    ``trace.report``.  Job lines whose submit time goes backwards are sorted
    into place and counted in ``report.reordered``; with ``strict_order=True``
    the first one is an error instead (or, when lenient, skipped).  An unknown
    submit time (-1) sorts first, like any other value: callers that simulate
    should drop jobs whose submit time, run time or size is unknown.  *limit*
    stops after that many job lines, like ``head``.  A file with no job lines
    gives an empty trace; whether that is acceptable is for the caller to say.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    spath = os.fspath(path)
    data = _load_bytes(spath)

    # header region: the comment and blank lines before the first job line
    comments: list[tuple[int, bytes]] = []
    pos, lineno, size = 0, 0, len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        if end < 0:
            end = size
        stripped = data[pos:end].strip()
        if stripped and stripped[:1] != b";":
            break
        lineno += 1
        if stripped:
            comments.append((lineno, data[pos:end]))
        pos = end + 1
    body = data[pos:]
    first_line = lineno + 1
    if limit is not None:
        body = _head(body, limit)

    problems: list[_Problem] = []
    values = _fast_parse(body)
    reordered = 0
    if values is not None:
        reordered = _count_reordered(values[:, _SUBMIT])
        if (reordered and strict_order) or _out_of_range(values).any() or _has_duplicates(values):
            values = None  # need line numbers: take the exact path
    if values is None:
        values, line_numbers, body_comments, problems = _scan(body, first_line)
        comments.extend(body_comments)
        values, line_numbers = _drop_out_of_range(values, line_numbers, problems)
        values, problems, reordered = _check_order(values, line_numbers, problems, strict_order)

    header = _parse_header(comments, problems)
    problems.sort(key=lambda p: p.line)
    if problems and not lenient:
        first = problems[0]
        raise InputError(spath, first.message, line=first.line, field=first.field)

    skipped: dict[str, int] = {}
    for p in problems:
        skipped[p.key] = skipped.get(p.key, 0) + 1
    examples = [
        (p.line, f"field {p.field}: {p.message}" if p.field else p.message)
        for p in problems[:_MAX_EXAMPLES]
    ]

    if reordered:
        values = values[np.argsort(values[:, _SUBMIT], kind="stable")]
    report = ReadReport(
        path=spath, n_jobs=len(values), skipped=skipped, examples=examples, reordered=reordered
    )
    return Trace.from_rows(values, header, spath, report)


def _block_frame(block: np.ndarray) -> pd.DataFrame:
    """The job table of an (18, n) int64 block (one row per SWF field).

    pandas keeps a frame's columns as the rows of one (18, n) block; handing it
    the array already in that layout avoids its own row-by-row copy, several
    times slower on long traces.
    """
    import pandas as pd

    return pd.DataFrame(block.T, columns=list(SWF_FIELDS), copy=False)


def write_swf(
    trace: Trace | pd.DataFrame,
    path: str | os.PathLike[str],
    header: SWFHeader | None = None,
) -> None:
    """Write jobs as an SWF file, gzip-compressed when *path* ends with ``.gz``.

    *trace* is a :class:`Trace` or a job table; columns of :data:`SWF_FIELDS`
    missing from a table are written as ``-1`` and other columns are ignored.
    *header* replaces the trace's own header.  Values are written as integers
    (floats rounded, NaN as ``-1``) in right-aligned columns like the archive's
    files.  A value below ``-1`` is a :class:`ValueError`: the file would not
    be valid SWF.  The file is written under a temporary name and renamed, so
    an interrupted write never leaves a truncated trace behind.
    """
    if isinstance(trace, Trace):
        frame = trace.table
        if header is None:
            header = trace.header
    elif is_frame(trace):
        frame = trace
    else:
        raise TypeError(f"write_swf needs a Trace or a DataFrame, not {type(trace).__name__}")
    if header is None:
        header = SWFHeader()

    values = _frame_values(frame)
    text = "\n".join(header.to_lines())
    if text:
        text += "\n"
    payload = text.encode("utf-8") + _format_rows(values)

    spath = os.fspath(path)
    if spath.endswith(".gz"):
        payload = _gzip_bytes(payload)
    _write_atomically(Path(spath), payload)


# ============================================================================
# reading: bytes
# ============================================================================


def _load_bytes(path: str) -> bytes:
    """The file's content, gunzipped when it starts with the gzip magic bytes."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, not an SWF file") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from None
    if raw[:2] == _GZIP_MAGIC:
        raw = _gunzip(raw, path)
    else:
        for magic, name in _COMPRESSED_MAGIC:
            if raw.startswith(magic):
                raise InputError(
                    path,
                    f"{name}-compressed data; o2ksim reads plain or gzip SWF (decompress it first)",
                    line=1,
                )
    if raw[:3] == b"\xef\xbb\xbf":  # UTF-8 byte-order mark
        raw = raw[3:]
    if b"\r" in raw:
        # every line ending reads as one: CR LF (DOS) and a lone CR (old Mac OS)
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return raw


def _gunzip(raw: bytes, path: str) -> bytes:
    """Decompress (possibly multi-member) gzip data; a corrupt or truncated
    stream is an :class:`InputError` at the line where the readable text stops."""
    out: list[bytes] = []

    def fail(reason: str) -> InputError:
        return InputError(path, reason, line=sum(c.count(b"\n") for c in out) + 1)

    chunk = 1 << 20
    while True:
        dec = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pos = 0
        while not dec.eof and pos < len(raw):
            try:
                out.append(dec.decompress(raw[pos : pos + chunk]))
            except zlib.error as exc:
                raise fail(f"corrupt gzip data ({exc})") from None
            pos += chunk
        if not dec.eof:
            raise fail("gzip data is truncated (the file ends inside the compressed stream)")
        rest = dec.unused_data + raw[pos:]
        if not rest.strip(b"\x00"):  # nothing left but (tape-style) zero padding
            return b"".join(out)
        if rest[:2] != _GZIP_MAGIC:
            raise fail("unexpected data after the end of the gzip stream")
        raw = rest


def _head(body: bytes, limit: int) -> bytes:
    """*body* cut after its first *limit* job lines (comments and blanks not counted)."""
    pos, seen, size = 0, 0, len(body)
    while pos < size and seen < limit:
        end = body.find(b"\n", pos)
        if end < 0:
            end = size
        stripped = body[pos:end].strip()
        if stripped and stripped[:1] != b";":
            seen += 1
        pos = end + 1
    return body[:pos]


# ============================================================================
# reading: job lines
# ============================================================================


class _Problem(NamedTuple):
    """One bad line: 1-based line, reason key (for counts), message, field label."""

    line: int
    key: str
    message: str
    field: str | None


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
        return np.empty((0, _NF), dtype=np.int64)
    converters = {_AVG_CPU: _avg_cpu} if b"." in body else None
    arr = np.loadtxt(
        io.BytesIO(body),
        dtype=np.int64,
        comments=None,
        ndmin=2,
        converters=converters,
        encoding="ascii",
    )
    if arr.shape[1] != _NF:
        raise ValueError("wrong number of columns")
    return arr


def _fast_parse(body: bytes) -> np.ndarray | None:
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


def _diagnose(line: bytes) -> tuple[str, str, str | None] | None:
    """Why a job line is not valid SWF: (reason key, message, field label), or None."""
    text = line[:-1] if line.endswith(b"\r") else line
    if len(text.translate(None, _CONTROL)) != len(text) or b"\r" in text:
        return ("binary data", "binary data, not SWF text", None)
    if not text.isascii():
        try:
            text.decode("utf-8")
        except UnicodeDecodeError:
            return ("binary data", "binary data, not SWF text", None)
    tokens = text.split()
    if len(tokens) != _NF:
        return ("wrong field count", f"expected {_NF} fields, found {len(tokens)}", None)
    for k, tok in enumerate(tokens, 1):
        shown = tok.decode("utf-8")
        if len(shown) > 40:
            shown = shown[:37] + "..."
        name = _field_name(k)
        if k - 1 == _AVG_CPU:
            if not _DEC_TOKEN.fullmatch(tok):
                return ("not an integer", f"{shown!r} is not a number", name)
            value: float = float(tok)
        else:
            if not _INT_TOKEN.fullmatch(tok):
                return ("not an integer", f"{shown!r} is not an integer", name)
            value = int(tok)
        if value < 0 and value != -1:
            return ("negative value", f"negative value {shown} (only -1 means unknown)", name)
        if value > _INT64_MAX:
            return ("out of range", f"value {shown} is too large", name)
    return None


def _line_values(line: bytes) -> list[int]:
    """The 18 values of a line :func:`_diagnose` accepts, converted in Python."""
    return [
        _avg_cpu(tok.decode()) if k == _AVG_CPU else int(tok) for k, tok in enumerate(line.split())
    ]


def _scan(
    body: bytes, first_line: int
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, bytes]], list[_Problem]]:
    """The exact path: classify every line, keep the good job lines.

    Returns the values of the good job lines, their places (an (n, 2) array of
    file line number and job line number, i.e. the count of job lines up to
    and including it), the comment lines found among the jobs, and the bad
    lines.
    """
    good: list[bytes] = []
    places: list[tuple[int, int]] = []
    comments: list[tuple[int, bytes]] = []
    problems: list[_Problem] = []
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
        why = _diagnose(line)
        if why is None:
            good.append(line)
            places.append((number, job_no))
        else:
            problems.append(_job_problem(number, job_no, *why))
    try:
        values = _loadtxt(b"\n".join(good))
    except (ValueError, OverflowError):  # pragma: no cover - _diagnose accepted every line
        values = np.array([_line_values(line) for line in good], dtype=np.int64).reshape(-1, _NF)
    numbers = np.asarray(places, dtype=np.int64).reshape(-1, 2)
    bad_rows = np.flatnonzero((values < -1).any(axis=1)) if values.size else np.empty(0, int)
    if bad_rows.size:
        for row in bad_rows:
            why = _diagnose(good[row])
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
_PROC_COLUMNS = (SWF_FIELDS.index("req_procs"), SWF_FIELDS.index("alloc_procs"))


def _out_of_range(values: np.ndarray) -> np.ndarray:
    """Rows whose values the simulation cannot use exactly: a time at or beyond
    :data:`~o2ksim.validation.MAX_TIME` (the float clock stops stepping near
    2**53 s) or a memory request x processors beyond
    :data:`~o2ksim.validation.MAX_JOB_MEMORY_KB` (int64 would wrap around)."""
    if not values.size:
        return np.zeros(len(values), dtype=bool)
    bad = (values[:, list(_TIME_COLUMNS)] >= MAX_TIME).any(axis=1)
    procs = np.maximum(values[:, _PROC_COLUMNS[0]], values[:, _PROC_COLUMNS[1]]).astype(np.float64)
    mem = values[:, _REQ_MEM].astype(np.float64) * np.maximum(procs, 0.0)
    return bad | (mem >= MAX_JOB_MEMORY_KB)


def _has_duplicates(values: np.ndarray) -> bool:
    """Whether a job id repeats (O(n) when the ids increase, as in archive files)."""
    ids = values[:, _JOB_ID]
    if len(ids) < 2 or bool((ids[1:] > ids[:-1]).all()):
        return False
    ordered = np.sort(ids)
    return bool((ordered[1:] == ordered[:-1]).any())


def _range_reason(row: np.ndarray, seen_line: int | None) -> tuple[str, str, str | None]:
    """Why a row :func:`_out_of_range` flagged (or a duplicate id) is refused."""
    for k in _TIME_COLUMNS:
        if row[k] >= MAX_TIME:
            return (
                "out of range",
                f"{row[k]} s is beyond the largest time o2ksim simulates ({MAX_TIME:g} s, "
                "about 31,700 years)",
                _field_name(k + 1),
            )
    if seen_line is None:
        procs = max(int(row[_PROC_COLUMNS[0]]), int(row[_PROC_COLUMNS[1]]))
        return (
            "out of range",
            f"{row[_REQ_MEM]} KB per processor x {procs} processors is beyond "
            f"{MAX_JOB_MEMORY_KB:g} KB of memory",
            _field_name(_REQ_MEM + 1),
        )
    return (
        "duplicate job id",
        f"job id {row[_JOB_ID]} is already used on line {seen_line}",
        _field_name(_JOB_ID + 1),
    )


def _drop_out_of_range(
    values: np.ndarray, numbers: np.ndarray, problems: list[_Problem]
) -> tuple[np.ndarray, np.ndarray]:
    """Report (and drop) rows out of range and rows repeating an earlier job id."""
    bad = _out_of_range(values)
    dup = np.zeros(len(values), dtype=bool)
    first_line: dict[int, int] = {}
    if _has_duplicates(values):
        _, first = np.unique(np.ascontiguousarray(values[:, _JOB_ID]), return_index=True)
        dup[:] = True
        dup[first] = False
        first_line = {int(values[i, _JOB_ID]): int(numbers[i, 0]) for i in first.tolist()}
    for row in np.flatnonzero(bad | dup).tolist():
        seen = None if bad[row] else first_line[int(values[row, _JOB_ID])]
        problems.append(
            _job_problem(int(numbers[row, 0]), int(numbers[row, 1]), *_range_reason(values[row], seen))
        )
    keep = ~(bad | dup)
    if keep.all():
        return values, numbers
    return values[keep], numbers[keep]


def _job_problem(line: int, job_no: int, key: str, message: str, field: str | None) -> _Problem:
    """A problem on a job line; the message also gives the job line's rank among
    the job lines (comments and blank lines not counted), which is the job
    number in a well-formed SWF file."""
    return _Problem(line, key, f"{message} (job line {job_no})", field)


def _count_reordered(submit: np.ndarray) -> int:
    """Number of entries smaller than some earlier entry."""
    if len(submit) < 2:
        return 0
    return int(np.count_nonzero(submit[1:] < np.maximum.accumulate(submit)[:-1]))


def _check_order(
    values: np.ndarray, numbers: np.ndarray, problems: list[_Problem], strict_order: bool
) -> tuple[np.ndarray, list[_Problem], int]:
    """Count submit times that go backwards; with *strict_order* they are problems
    (and their rows are dropped, which only matters in lenient mode)."""
    submit = values[:, _SUBMIT]
    if not strict_order:
        return values, problems, _count_reordered(submit)
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
                _field_name(_SUBMIT + 1),
            )
        )
    keep = np.ones(len(values), dtype=bool)
    keep[late] = False
    return values[keep], problems, 0


# ============================================================================
# reading: header
# ============================================================================


def _decode_comment(raw: bytes) -> str | None:
    """Text of a comment line, or None if it is binary data.

    UTF-8 is tried first, then Latin-1 (old logs); bytes that are control
    characters in both mean binary data.
    """
    raw = raw.rstrip(b"\r")
    if len(raw.translate(None, _CONTROL)) != len(raw) or b"\r" in raw:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        if any(0x80 <= b <= 0x9F for b in raw):
            return None
        return raw.decode("latin-1")


class _Open(NamedTuple):
    """The header entry that continuation lines extend."""

    target: str  # "note", "attr" or "extra"
    key: str  # note index (as str), attribute name or extra key
    value_col: int  # column where the label's value starts


def _parse_header(comments: list[tuple[int, bytes]], problems: list[_Problem]) -> SWFHeader:
    """Build the header from comment lines (line number, raw bytes) in file order.

    A line ``; Label: value`` starts an entry.  A following comment line that
    is indented (two or more blanks after ``;``) and has no label of its own
    continues the entry; so does an indented line that looks like an unknown
    label but starts at or after the entry's value column (``;\\tsee: http://``
    under a Note).  A bare ``;`` ends the entry.  Other lines without a label
    are free text (``extra[""]``).  Problems (bad numeric value, binary data)
    are appended to *problems*.
    """
    header = SWFHeader()
    texts: dict[str, list[str]] = {}  # attribute -> occurrences
    extras: dict[str, tuple[str, list[str]]] = {}  # lower label -> (first spelling, occurrences)
    free: list[str] = []
    current: _Open | None = None

    def append_to(entry: _Open, text: str) -> None:
        """Add a continuation line to *entry*."""
        if entry.target == "note":
            idx = int(entry.key)
            header.notes[idx] = f"{header.notes[idx]}\n{text}"
        elif entry.target == "attr":
            texts[entry.key][-1] += f"\n{text}"
        else:
            extras[entry.key][1][-1] += f"\n{text}"

    for number, raw in comments:
        decoded = _decode_comment(raw)
        if decoded is None:
            problems.append(_Problem(number, "binary data", "binary data, not SWF text", None))
            current = None
            continue
        line = decoded.strip().expandtabs(8)  # starts with ';'
        rest = line[1:]
        content = rest.strip()
        if not content:
            current = None
            continue
        indent = len(rest) - len(rest.lstrip())
        m = _LABEL_RE.match(line)
        key = m.group(2).lower() if m else None
        known = key is not None and (key == _NOTE_KEY or key in _LABELS_BY_KEY)
        if m is not None and not known and not m.group(3) and m.group(4):
            m = key = None  # a colon inside text ('http://...'), not an unknown label
        if (
            not known
            and current is not None
            and indent >= 2
            and (m is None or 1 + indent >= current.value_col)
        ):
            # keep indentation beyond the value column (the archive's filter lists)
            at_value = 1 + indent >= current.value_col
            append_to(current, line[current.value_col :].rstrip() if at_value else content)
            continue
        if m is None or key is None:
            free.append(content)
            current = None
            continue
        value = m.group(4).strip()
        value_col = max(m.start(4), m.start(3) + 1)  # at least one blank after the colon
        if key == _NOTE_KEY:
            header.notes.append(value)
            current = _Open("note", str(len(header.notes) - 1), value_col)
        elif key in _LABELS_BY_KEY:
            attr, label, kind = _LABELS_BY_KEY[key]
            current = None
            if kind == "text":
                texts.setdefault(attr, []).append(value)
                current = _Open("attr", attr, value_col)
            elif kind == "int":
                im = _INT_VALUE_RE.fullmatch(value)
                if im is None:
                    problems.append(
                        _Problem(
                            number,
                            "bad header value",
                            f"header {label}: {value!r} is not an integer",
                            None,
                        )
                    )
                    continue
                value_int = int(im.group(1))
                limit = {"unix_start_time": MAX_UNIX_TIME, "max_procs": MAX_PROCS,
                         "max_nodes": MAX_PROCS}.get(attr, _INT64_MAX)  # fmt: skip
                if not -limit <= value_int <= limit:
                    problems.append(
                        _Problem(
                            number,
                            "bad header value",
                            f"header {label}: {value_int} is out of range (at most {limit})",
                            None,
                        )
                    )
                    continue
                setattr(header, attr, value_int)
                if im.group(2):
                    extras[label.lower()] = (label, [value])
                else:
                    extras.pop(label.lower(), None)
            else:
                flag = _BOOL_WORDS.get(value.lower())
                if flag is None:
                    problems.append(
                        _Problem(
                            number,
                            "bad header value",
                            f"header {label}: {value!r} is not Yes or No",
                            None,
                        )
                    )
                    continue
                setattr(header, attr, flag)
        else:
            label = m.group(2)
            extras.setdefault(key, (label, []))[1].append(value)
            current = _Open("extra", key, value_col)

    for attr, occurrences in texts.items():
        setattr(header, attr, "\n".join(occurrences))
    if free:
        header.extra[""] = "\n".join(free)
    for label, occurrences in extras.values():
        header.extra[label] = "\n".join(occurrences)
    return header


# ============================================================================
# writing
# ============================================================================


def _frame_values(frame: Any) -> np.ndarray:
    """The job table (a DataFrame or a :class:`~o2ksim.table.ColumnTable`) as an
    (n, 18) int64 array in SWF field order."""
    n = len(frame)
    out = np.full((n, _NF), -1, dtype=np.int64)
    for k, name in enumerate(SWF_FIELDS):
        if name not in frame.columns:
            continue
        col = frame[name]
        if isinstance(col, np.ndarray) and col.dtype.kind in "iub":  # a ColumnTable's column
            arr = col.astype(np.int64)
        elif col.dtype.kind in "iub" and not col.hasnans:
            arr = col.to_numpy(dtype=np.int64)
        else:
            import pandas as pd

            num = pd.to_numeric(col, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
            arr = np.where(np.isfinite(num), np.floor(num + 0.5), -1).astype(np.int64)
        out[:, k] = arr
    if n and out.min() < -1:
        row, k = np.argwhere(out < -1)[0]
        raise ValueError(
            f"write_swf: column {SWF_FIELDS[k]} has {out[row, k]} at row {row}; "
            "SWF allows only -1 (unknown) or values >= 0"
        )
    return out


def _format_rows(values: np.ndarray) -> bytes:
    """Job lines with each column right-aligned to its widest value, as in the archive."""
    if len(values) == 0:
        return b""
    widths = [max(len(str(int(col.min()))), len(str(int(col.max())))) for col in values.T]
    fmt = " ".join(f"%{w}d" for w in widths)
    return ("\n".join(fmt % tuple(row) for row in values.tolist()) + "\n").encode("ascii")


def _gzip_bytes(payload: bytes) -> bytes:
    """gzip without name or timestamp (like ``gzip -n``): the same trace always
    gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=6) as gz:
        gz.write(payload)
    return buf.getvalue()


def _write_atomically(target: Path, payload: bytes) -> None:
    """Write *payload* to a temporary file next to *target*, then rename it over
    *target*, so that readers never see a half-written trace."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        # os.open applies the umask to 0o666, as a plain open() would
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(target, f"cannot write file: {exc.strerror or exc}") from None
