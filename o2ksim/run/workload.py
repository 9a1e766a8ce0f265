"""A run's workload: built from its recipe, described in one line, checked before the engine sees it.

A :class:`~o2ksim.run.config.WorkloadRecipe` (a trace file, a generated model,
a scenario's inline jobs, with load scaling) becomes a
:class:`~o2ksim.workloads.swf.Trace` here (:func:`build_workload`, cached per
process: consecutive runs of a sweep share their workload);
:func:`workload_label` names it in results and scenario listings.
:func:`check_jobs_frame` (in :mod:`o2ksim.workloads.swf_values`, which ``write_swf`` shares)
and :func:`check_job_specs` check the ranges the engine relies on, with the limits of :mod:`o2ksim.validation`, on whatever
workload a run is given.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from o2ksim.errors import InputError, O2KSimError
from o2ksim.validation import MAX_JOB_MEMORY_KB, MAX_TIME
from o2ksim.workloads.cooldown import COOLDOWN_CHUNK, append_tail
from o2ksim.workloads.models import generate
from o2ksim.workloads.swf import SWFHeader, Trace, jobs_frame, read_swf
from o2ksim.workloads.swf_values import TIME_FIELDS, check_frame_values, check_jobs_frame


def load_workload(source: Any, *, lenient: bool = False, strict_order: bool = False) -> Trace:
    """A :class:`~o2ksim.workloads.swf.Trace` from a path (SWF, plain or gzip) or a Trace."""
    if isinstance(source, Trace):
        return source
    if isinstance(source, str | os.PathLike):
        return read_swf(source, lenient=lenient, strict_order=strict_order)
    raise O2KSimError(f"cannot use {type(source).__name__} as a workload")


def workload_label(w: dict[str, Any]) -> str:
    """A short human description of a workload section."""
    if w.get("trace"):
        text = f"trace {Path(w['trace']).name}"
    elif w.get("model"):
        text = f"model {w['model']} over {w['span'] / 86400:g} days"
        if w.get("params"):
            text += " " + json.dumps(w["params"], sort_keys=True)
    else:
        text = f"{len(w['jobs'])} inline job(s)"
    if w.get("load") is not None:
        text += f", load scaled to {w['load']:g}"
    if w.get("estimates"):
        text += f", estimates {w['estimates']}"
    return text



# ------------------------------------------------------------------------ building
@lru_cache(maxsize=4)
def _cached_workload(key: str, procs: int | None, _stamp: tuple[int, int] | None) -> Any:
    return _build_workload(json.loads(key), procs)


def _file_stamp(path: str | None) -> tuple[int, int] | None:
    """A trace file's modification time and size: an edited file is read again."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # reading it says what is wrong
    return st.st_mtime_ns, st.st_size


def build_workload(w: dict[str, Any], machine_procs: int | None = None) -> Any:
    """The :class:`~o2ksim.workloads.swf.Trace` a run's ``workload`` section describes.

    Reads the trace, generates the model (with ``w["seed"]``) or builds the
    inline jobs, then scales the load (``w["load"]``, the offered load on
    ``machine_procs`` processors; default: the trace header's ``MaxProcs``).
    Runtime estimates and the window are applied by
    :func:`~o2ksim.run.api.run_config`.  Results are cached per process (a few
    entries), because consecutive runs share their workload.
    """
    procs = machine_procs if w.get("load") is not None else None  # only load scaling uses it
    return _cached_workload(json.dumps(w, sort_keys=True), procs, _file_stamp(w.get("trace")))


def _build_workload(w: dict[str, Any], procs: int | None) -> Any:
    if w.get("trace"):
        trace = read_swf(w["trace"], lenient=bool(w.get("lenient")))
    elif w.get("model") and w.get("cooldown_chunks"):  # the month without its tail: often cached
        month = {k: v for k, v in w.items() if k not in ("cooldown_chunks", "cooldown_chunk")}
        trace = build_workload({**month, "load": None})
    elif w.get("model"):
        trace = generate(
            w["model"], span=w["span"], seed=int(w["seed"] or 0), params=w["params"] or None
        )
    else:
        trace = Trace(inline_jobs_frame(w["jobs"]), _inline_header(w["jobs"]), "inline jobs")
    main = trace
    if w.get("model") and w.get("cooldown_chunks"):  # arrivals after the span (T§3.4)
        trace = append_tail(
            trace, w["model"], after=w["span"], seed=int(w["seed"] or 0),
            params=w["params"] or None, chunks=int(w["cooldown_chunks"]),
            chunk_length=float(w.get("cooldown_chunk") or COOLDOWN_CHUNK),
        )  # fmt: skip
    if w.get("load") is not None:
        # here, not at the top: reshape needs pandas, which a run without load scaling never imports
        from o2ksim.workloads.reshape import offered_load, scale_load, trace_span

        rho = float(w["load"])
        if trace is not main:  # scale the tail by the same factor as the month
            span = trace_span(main)
            factor = offered_load(main, procs, span) / rho
            rho = offered_load(trace, procs, span) / factor
            trace = scale_load(trace, rho, procs=procs, span=span)
        else:
            trace = scale_load(trace, rho, procs=procs)
    return trace


def inline_jobs_frame(jobs: Iterable[dict[str, Any]]) -> Any:
    """SWF columns for jobs written inline in a scenario (memory: KB per processor, as SWF)."""
    rows = []
    for j in sorted(jobs, key=lambda j: (j["submit"], j["id"])):
        procs = j["procs"]
        mem_kb = -1 if j["mem_mb"] is None else math.ceil(j["mem_mb"] * 1024 / procs)
        used_kb = -1 if j.get("used_mb") is None else math.ceil(j["used_mb"] * 1024 / procs)
        run = math.ceil(j["runtime"])
        req = math.ceil(j["requested"])
        rows.append(
            [j["id"], math.floor(j["submit"]), -1, run, procs, -1, used_kb, procs, req, mem_kb,
             1, j["user"], -1, -1, -1, -1, -1, -1]
        )  # fmt: skip
    return jobs_frame(rows)


def _inline_header(jobs: list[dict[str, Any]]) -> Any:
    return SWFHeader(max_procs=max(j["procs"] for j in jobs), computer="inline")


# ---------------------------------------------------------------------------- checks
def check_job_specs(specs: Iterable[Any], source: str = "the job list") -> None:
    """:func:`check_jobs_frame` for a list of :class:`~o2ksim.jobs.JobSpec` (the API's
    other workload form): unique ids, finite times below :data:`MAX_TIME`, memory
    below :data:`MAX_JOB_MEMORY_KB`."""
    seen: set[int] = set()
    for s in specs:
        if s.job_id in seen:
            raise InputError(source, f"job id {s.job_id} appears more than once", field="job_id")
        seen.add(s.job_id)
        for name in ("submit", "run_time", "req_time"):
            value = getattr(s, name)
            if not (math.isfinite(value) and value < MAX_TIME):
                raise InputError(
                    source,
                    f"{value} s is not a time o2ksim simulates (finite, below {MAX_TIME:g} s)",
                    field=f"{name} (job {s.job_id})",
                )
        r = s.requested_time
        if r is not None and not (isinstance(r, int | float) and r > 0):  # inf: R unknown
            raise InputError(
                source, f"{r!r} is not a requested runtime (seconds > 0, inf if unknown, or None)",
                field=f"requested_time (job {s.job_id})",
            )
        for name in ("mem", "used_mem"):
            value = getattr(s, name)
            if not value < MAX_JOB_MEMORY_KB:
                raise InputError(
                    source, f"{value} KB is beyond {MAX_JOB_MEMORY_KB:g} KB", field=f"{name} (job {s.job_id})"
                )


__all__ = [
    "TIME_FIELDS",
    "build_workload",
    "check_frame_values",
    "check_job_specs",
    "check_jobs_frame",
    "inline_jobs_frame",
    "load_workload",
    "workload_label",
]
