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

The pieces, each in its own module (this one reads files and ties them together):

* :mod:`~o2ksim.workloads.swf_fields` -- the 18 fields and how a bad line is named;
* :mod:`~o2ksim.workloads.swf_header` -- :class:`SWFHeader`, its labels, parsing and writing;
* :mod:`~o2ksim.workloads.swf_lines` -- the job lines: fast path, exact path, value checks;
* :mod:`~o2ksim.workloads.swf_trace` -- the data model (:class:`Trace`, :class:`ReadReport`);
* :mod:`~o2ksim.workloads.swf_write` -- :func:`write_swf`.

Their public names are importable from here, the one import path callers use.

One deliberate relaxation of "all integers": real archive files (HPC2N-2002,
SDSC-BLUE-2000, SDSC-Par-1996, OSC-Clust-2000, UniLu-Gaia-2014) write field 6,
the *average* CPU time, with two decimals (``552.21``).  Field 6 therefore
accepts a plain decimal number, rounded to the nearest second; every other
field must be an integer.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

from o2ksim.errors import InputError, O2KSimError
from o2ksim.validation import check_flags
from o2ksim.workloads.swf_fields import CONTROL_BYTES, SUBMIT, SWF_FIELDS, Problem
from o2ksim.workloads.swf_header import SWFHeader, parse_header
from o2ksim.workloads.swf_lines import (
    check_order,
    count_reordered,
    drop_out_of_range,
    fast_parse,
    has_duplicates,
    out_of_range,
    scan,
)
from o2ksim.workloads.swf_trace import (
    ReadReport,
    Trace,
    block_from_columns,
    jobs_frame,
    jobs_from_columns,
)
from o2ksim.workloads.swf_write import write_swf

__all__ = [
    "SWF_FIELDS",
    "ReadReport",
    "SWFHeader",
    "Trace",
    "block_from_columns",
    "jobs_frame",
    "jobs_from_columns",
    "read_swf",
    "write_swf",
]

_MAX_EXAMPLES = 5  # (line, reason) pairs kept in ReadReport.examples
_COMPRESSED_MAGIC = (
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PK\x03\x04", "zip"),
)
_GZIP_MAGIC = b"\x1f\x8b"


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
    if not isinstance(path, str | os.PathLike):
        raise O2KSimError(f"read_swf: expected a file path, got {path!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise O2KSimError(f"read_swf: limit must be an integer >= 0, got {limit!r}")
    check_flags("read_swf", lenient=lenient, strict_order=strict_order)
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

    problems: list[Problem] = []
    values = fast_parse(body)
    reordered = 0
    if values is not None:
        reordered = count_reordered(values[:, SUBMIT])
        if (reordered and strict_order) or out_of_range(values).any() or has_duplicates(values):
            values = None  # need line numbers: take the exact path
    if values is None:
        values, line_numbers, body_comments, problems = scan(body, first_line)
        comments.extend(body_comments)
        values, line_numbers = drop_out_of_range(values, line_numbers, problems)
        values, problems, reordered = check_order(values, line_numbers, problems, strict_order)

    header = parse_header(comments, problems)
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
        values = values[np.argsort(values[:, SUBMIT], kind="stable")]
    report = ReadReport(
        path=spath, n_jobs=len(values), skipped=skipped, examples=examples, reordered=reordered
    )
    return Trace.from_rows(values, header, spath, report)


CHUNK = 1 << 20
"""Bytes read (or decompressed) at a time; each piece is checked before the next is read."""
MAX_LINE = 1 << 20
"""The longest line accepted (1 MiB; an SWF line is under 200 bytes): a longer one means the
file is not SWF text, and reading stops there instead of filling the memory."""
SNIFF = 4096
_HIGH_BYTES = bytes(range(128, 256))
"""The first bytes looked at to tell text from binary data."""


class _TextGuard:
    """Checks text as it is read, so that ``--trace /dev/zero`` or a huge binary file is
    refused after its first megabyte, not after it has filled the memory.

    * the first :data:`SNIFF` bytes must be text: more than a tenth of control bytes
      (NUL and the like, never in SWF) or more than three tenths of bytes above 127
      (SWF is ASCII but for comments) is "binary data, not SWF text" at line 1;
    * no line may be longer than :data:`MAX_LINE` bytes.

    A few binary lines among text lines pass here and are reported one by one by
    the line checks (``lenient=True`` skips them).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.sniffed = False
        self.lines = 1  # the line being read (1-based)
        self.run = 0  # bytes since the last newline

    def feed(self, piece: bytes) -> None:
        if not piece:
            return
        if not self.sniffed:
            head = piece[:SNIFF]
            control = len(head) - len(head.translate(None, CONTROL_BYTES))
            high = len(head) - len(head.translate(None, _HIGH_BYTES))
            if control * 10 > len(head) or high * 10 > 3 * len(head):
                raise InputError(self.path, "binary data, not SWF text", line=1)
            self.sniffed = True
        first = piece.find(b"\n")
        if first < 0:
            self.run += len(piece)
        else:
            if self.run + first > MAX_LINE:
                self._too_long()
            self.lines += piece.count(b"\n")
            self.run = len(piece) - piece.rfind(b"\n") - 1
        if self.run > MAX_LINE:
            self._too_long()

    def _too_long(self) -> None:
        raise InputError(
            self.path,
            f"a line longer than {MAX_LINE // 1024} KiB: not SWF text (SWF lines are 18 numbers)",
            line=self.lines,
        )


def _load_bytes(path: str) -> bytes:
    """The file's content, gunzipped when it starts with the gzip magic bytes; read piece by
    piece and refused as soon as it is clearly not SWF text (:class:`_TextGuard`)."""
    guard = _TextGuard(path)
    try:
        with open(path, "rb") as handle:
            first = handle.read(CHUNK)
            if first[:2] == _GZIP_MAGIC:
                raw = _gunzip(first + handle.read(), path, guard)
            else:
                for magic, name in _COMPRESSED_MAGIC:
                    if first.startswith(magic):
                        raise InputError(
                            path,
                            f"{name}-compressed data; o2ksim reads plain or gzip SWF "
                            "(decompress it first)",
                            line=1,
                        )
                pieces = [first]
                guard.feed(first[3:] if first[:3] == b"\xef\xbb\xbf" else first)
                while piece := handle.read(CHUNK):
                    guard.feed(piece)
                    pieces.append(piece)
                raw = b"".join(pieces)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, not an SWF file") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None
    except MemoryError:
        raise InputError(path, "too large to read into memory") from None
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from None
    if raw[:3] == b"\xef\xbb\xbf":  # UTF-8 byte-order mark
        raw = raw[3:]
    if b"\r" in raw:
        # every line ending reads as one: CR LF (DOS) and a lone CR (old Mac OS)
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return raw


def _gunzip(raw: bytes, path: str, guard: _TextGuard) -> bytes:
    """Decompress (possibly multi-member) gzip data; a corrupt or truncated
    stream is an :class:`InputError` at the line where the readable text stops.
    Decompressed a megabyte at a time, each piece checked by ``guard`` (a
    compressed stream of zeros is refused after its first megabyte)."""
    out: list[bytes] = []

    def fail(reason: str) -> InputError:
        return InputError(path, reason, line=sum(c.count(b"\n") for c in out) + 1)

    while True:
        dec = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pos = 0
        while not dec.eof and pos < len(raw):
            data = raw[pos : pos + CHUNK]
            pos += CHUNK
            while data:
                try:
                    piece = dec.decompress(data, CHUNK)
                except zlib.error as exc:
                    raise fail(f"corrupt gzip data ({exc})") from None
                guard.feed(piece[3:] if not out and piece[:3] == b"\xef\xbb\xbf" else piece)
                out.append(piece)
                data = dec.unconsumed_tail
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
