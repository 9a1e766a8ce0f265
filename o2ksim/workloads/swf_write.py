"""Write jobs as an SWF file: the header's comment lines, then one right-aligned line per job.

The writer is the reader's inverse: :func:`write_swf` followed by
:func:`~o2ksim.workloads.swf.read_swf` gives back the same jobs and header.
Files are written under a temporary name and renamed, so an interrupted write
never leaves a truncated trace behind, and gzip output has no name or
timestamp, so the same trace always gives the same bytes.
"""

from __future__ import annotations

import gzip
import io
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from o2ksim.errors import O2KSimError
from o2ksim.files import write_atomically
from o2ksim.table import column, is_frame
from o2ksim.workloads.swf_fields import N_FIELDS, SWF_FIELDS
from o2ksim.workloads.swf_header import SWFHeader
from o2ksim.workloads.swf_trace import Trace
from o2ksim.workloads.swf_values import check_jobs_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["write_swf"]


def write_swf(
    trace: Trace | pd.DataFrame,
    path: str | os.PathLike[str],
    header: SWFHeader | None = None,
) -> None:
    """Write jobs as an SWF file, gzip-compressed when *path* ends with ``.gz``.

    *trace* is a :class:`Trace` or a job table; columns of :data:`SWF_FIELDS`
    missing from a table are written as ``-1`` and other columns are ignored.
    *header* replaces the trace's own header.  The table is checked as
    ``simulate(frame)`` checks it (:func:`~o2ksim.workloads.swf_values.check_jobs_frame`):
    a value the SWF reader would refuse -- not a number, NaN or infinite, a
    fraction in an integer field (``2.5`` processors), below ``-1``, beyond
    int64, a time past 10^12 s, a job id twice -- is an :class:`O2KSimError`
    showing the value as given, not written altered.  Times given as fractions
    of a second are rounded to the nearest second (SWF's unit).  Values are
    written in right-aligned columns like the archive's files, under a
    temporary name and renamed, so an interrupted write never leaves a
    truncated trace behind.
    """
    if isinstance(trace, Trace):
        frame = trace.table
        if header is None:
            header = trace.header
    elif is_frame(trace):
        frame = trace
    else:
        raise O2KSimError(f"write_swf: needs a Trace or a DataFrame, not {type(trace).__name__}")
    if header is None:
        header = SWFHeader()

    check_jobs_frame(frame, "write_swf")
    values = _frame_values(frame)
    if len(values) and values.min() < -1:  # simulate() takes a submit time below -1; SWF does not
        row, k = np.argwhere(values < -1)[0]
        raise O2KSimError(
            f"write_swf: column {SWF_FIELDS[k]} has {values[row, k]} at row {row}; "
            "SWF allows only -1 (unknown) or values >= 0 (its reader would refuse the file)"
        )
    text = "\n".join(header.to_lines())
    if text:
        text += "\n"
    payload = text.encode("utf-8") + _format_rows(values)

    spath = os.fspath(path)
    if spath.endswith(".gz"):
        payload = _gzip_bytes(payload)
    write_atomically(spath, payload)


def _frame_values(frame: Any) -> np.ndarray:
    """The job table (a DataFrame or a :class:`~o2ksim.table.ColumnTable`), already
    checked by :func:`~o2ksim.workloads.swf_values.check_jobs_frame`, as an (n, 18) int64
    array in SWF field order (times rounded to whole seconds)."""
    n = len(frame)
    out = np.full((n, N_FIELDS), -1, dtype=np.int64)
    for k, name in enumerate(SWF_FIELDS):
        if name not in frame.columns:
            continue
        col = column(frame, name)
        if col.dtype.kind in "iub":
            out[:, k] = col.astype(np.int64)
        else:  # numbers (checked): whole, or times and avg_cpu rounded half up
            out[:, k] = np.floor(np.asarray(col, dtype=np.float64) + 0.5).astype(np.int64)
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
