"""The values of a job table with SWF columns, checked as the SWF reader checks a file's.

:func:`check_jobs_frame` is the one check of a table built in Python (a user's frame, a
generator's, a scenario's inline jobs): ``simulate(frame)`` runs it before the engine sees
the jobs, and :func:`~o2ksim.workloads.swf_write.write_swf` before it writes them, so that
a value the reader would refuse in the file (``2.5`` processors, a NaN runtime, a user
number beyond int64) is refused with the value as given, not written altered.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from o2ksim.errors import InputError
from o2ksim.table import column
from o2ksim.validation import MAX_JOB_MEMORY_KB, MAX_TIME
from o2ksim.workloads.swf_fields import INT64_MAX, SWF_FIELDS

__all__ = ["FRACTIONS_ALLOWED", "TIME_FIELDS", "check_frame_values", "check_jobs_frame"]

TIME_FIELDS = ("submit", "wait", "run_time", "req_time", "think_time")


def check_jobs_frame(frame: Any, source: str | None = None) -> None:
    """Ranges the engine relies on, checked on a job table with the SWF columns
    (a DataFrame or a :class:`~o2ksim.table.ColumnTable`).

    * job ids are unique (the engine and every output key jobs by id);
    * times are below :data:`MAX_TIME` (beyond 2**53 s the clock cannot step);
    * a job's memory (KB per processor x processors) stays below
      :data:`MAX_JOB_MEMORY_KB`, so it cannot wrap around int64.

    The SWF reader does the same with line numbers; this covers tables built
    in Python (generators, scenario inline jobs, user frames).
    """
    where = source or "the workload"
    check_frame_values(frame, where)
    if "job_id" in frame:
        ids = column(frame, "job_id")
        ordered = ids if bool((ids[1:] > ids[:-1]).all()) else np.sort(ids)
        if bool((ordered[1:] == ordered[:-1]).any()):
            _, first = np.unique(ids, return_index=True)
            dup_rows = np.setdiff1d(np.arange(len(ids)), first)
            raise InputError(
                where, f"job id {ids[dup_rows[0]]} appears more than once", field="job_id"
            )
    for name in TIME_FIELDS:
        if name in frame:
            col = column(frame, name, np.float64)
            bad = ~np.isfinite(col) | (col >= MAX_TIME)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise InputError(
                    where,
                    f"{col[row]:g} s is beyond the largest time o2ksim simulates ({MAX_TIME:g} s)",
                    field=f"{name} (job {column(frame, 'job_id')[row] if 'job_id' in frame else row})",
                )
    procs = np.zeros(len(frame))
    for name in ("req_procs", "alloc_procs"):
        if name in frame:
            procs = np.maximum(procs, column(frame, name, np.float64))
    for name in ("req_mem", "used_mem"):  # KB per processor; x processors must not wrap int64
        if name not in frame:
            continue
        mem = column(frame, name, np.float64) * np.maximum(procs, 0)
        bad = ~np.isfinite(mem) | (mem >= MAX_JOB_MEMORY_KB)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(
                where,
                f"memory {column(frame, name)[row]} KB x {procs[row]:g} processors is beyond "
                f"{MAX_JOB_MEMORY_KB:g} KB",
                field=name,
            )


def _job_label(frame: Any, row: int) -> str:
    if "job_id" in frame:
        return f"job {column(frame, 'job_id').tolist()[row]!r}"
    return f"row {row}"


def check_frame_values(frame: Any, where: str) -> None:
    """Every SWF column of a job table holds numbers the engine can turn into its integer
    and float fields: not text, not None, not True/False, finite, and whole in the integer
    fields (all but ``avg_cpu`` and the times, which a table built in Python may give as
    fractions), at most 2**63 - 1 (a larger one wraps in int64); a field below -1 (SWF's "unknown"; the submit time excepted) is refused
    as the SWF reader refuses it.  Without this a user frame failed deep in the engine with a numpy
    ``ValueError`` (found by the issue-27 audit), or had ``1.5`` processors truncated to 1.
    """
    for name in SWF_FIELDS:
        if name not in frame:
            continue
        raw = column(frame, name)
        if raw.dtype.kind in "iu":  # int64 columns: nothing to convert
            values = raw.astype(np.float64)
        else:
            bad_type = [
                i for i, v in enumerate(raw.tolist()) if isinstance(v, bool | str | bytes) or v is None
            ][:1] if raw.dtype.kind in "Ob" else []
            if raw.dtype.kind not in "fOb" or bad_type:
                row = bad_type[0] if bad_type else 0
                raise InputError(
                    where, f"{raw.tolist()[row]!r} is not a number ({_job_label(frame, row)})",
                    field=name,
                )  # fmt: skip
            values = np.asarray(raw, dtype=np.float64)
        bad = ~np.isfinite(values)
        kind = "not a finite number"
        if not bad.any() and name not in FRACTIONS_ALLOWED:
            bad, kind = values != np.floor(values), "not a whole number"
        if not bad.any() and name != "submit":
            bad, kind = values < -1, "negative (only -1 means unknown)"
        if not bad.any():  # SWF fields are 64-bit integers (the reader refuses larger ones)
            kind = f"beyond the largest SWF value ({INT64_MAX})"
            if raw.dtype.kind == "i":  # an int64 holds no larger value; as floats 2**63 - 1 rounds up
                pass
            elif raw.dtype.kind == "u":  # compared as integers, for the same reason
                bad = raw > INT64_MAX
            else:
                bad = values >= 2.0**63
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(
                where, f"{raw.tolist()[row]!r} is {kind} ({_job_label(frame, row)})", field=name
            )


FRACTIONS_ALLOWED = frozenset({"avg_cpu", "submit", "wait", "run_time", "req_time", "think_time"})
"""Columns a table built in Python may hold as fractions (times in seconds, the average CPU)."""
