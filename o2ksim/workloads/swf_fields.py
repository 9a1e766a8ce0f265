"""The vocabulary of the Standard Workload Format shared by the SWF reader and writer.

SWF (Chapin et al., "Benchmarks and Standards for the Evaluation of Parallel
Job Schedulers", §2.3) stores one job per line as 18 integers.  This module
names the 18 fields and the columns the reader checks, and defines how a bad
line is reported (:class:`Problem`, :func:`field_name`), so that the header
parser (:mod:`~o2ksim.workloads.swf_header`) and the job-line parser
(:mod:`~o2ksim.workloads.swf_lines`) word their messages alike.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SWF_FIELDS", "Problem", "field_name"]

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

N_FIELDS = len(SWF_FIELDS)
AVG_CPU = SWF_FIELDS.index("avg_cpu")  # 0-based column that may hold a decimal
SUBMIT = SWF_FIELDS.index("submit")
INT64_MAX = 2**63 - 1
CONTROL_BYTES = bytes(range(0, 9)) + b"\x0b\x0c" + bytes(range(14, 32)) + b"\x7f"
"""Bytes that never occur in SWF text (tab, LF and CR excepted): their presence means binary data."""


def field_name(k: int) -> str:
    """The field label used in messages, e.g. ``4 (run_time)`` for 1-based *k*."""
    return f"{k} ({SWF_FIELDS[k - 1]})"


class Problem(NamedTuple):
    """One bad line: 1-based line, reason key (for counts), message, field label."""

    line: int
    key: str
    message: str
    field: str | None
