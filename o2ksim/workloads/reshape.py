"""Reshape workloads in time: load scaling, shifting, merging.

* :func:`scale_load` -- the usual way to study a workload at another load
  (G§4: "artificially created by shrinking job interarrival times"): every
  interarrival time is multiplied by ``rho_now / rho_target``, the jobs
  themselves are unchanged.  Note that this stretches or compresses the
  calendar, so daily and weekly cycles no longer line up with the clock.
* :func:`shift` -- move every job by a number of seconds.
* :func:`merge` -- several traces into one, on a common clock.

The offered load ``rho = sum(P x T) / (procs x span)`` is the processor demand
of T§4.1 / Table 6.  (Time windows and runtime-estimate scenarios live in
:mod:`o2ksim.workloads.transforms`.)

All functions return new :class:`~o2ksim.workloads.swf.Trace` objects; their
inputs are not changed.
"""

from __future__ import annotations

import contextlib
import copy
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.validation import MAX_LOAD, MAX_TIME, MIN_LOAD
from o2ksim.workloads.swf import SWFHeader, Trace

__all__ = ["merge", "offered_load", "scale_load", "shift", "trace_span"]


def _procs(jobs: pd.DataFrame) -> np.ndarray:
    req = jobs["req_procs"].to_numpy()
    return np.where(req > 0, req, jobs["alloc_procs"].to_numpy())


def trace_span(trace: Any) -> float:
    """The time a trace covers, in seconds.

    A generated trace records its span (header ``O2KSimSpan``); otherwise the
    span of the submit times times ``n / (n - 1)``, i.e. the number of jobs
    times the mean interarrival time.
    """
    extra = getattr(trace.header, "extra", {}) or {}
    if "O2KSimSpan" in extra:
        try:
            return float(extra["O2KSimSpan"])
        except ValueError:
            pass
    s = trace.jobs["submit"].to_numpy()
    n = len(s)
    return float(s.max() - s.min()) * n / (n - 1) if n > 1 else 0.0


def _machine_procs(trace: Any, procs: int | None) -> int:
    p = (
        procs
        or getattr(trace.header, "max_procs", None)
        or getattr(trace.header, "max_nodes", None)
    )
    if not p:
        if len(trace.jobs) == 0:
            raise O2KSimError("cannot compute the load of an empty trace without a machine size")
        p = int(_procs(trace.jobs).max())
    return int(p)


def offered_load(trace: Any, procs: int | None = None, span: float | None = None) -> float:
    """``rho = sum(P x T) / (procs x span)`` of *trace*.

    *procs* defaults to the header's ``MaxProcs`` (else ``MaxNodes``, else the
    largest job); *span* to :func:`trace_span`.  P is the requested
    processors, falling back to the allocated ones; unknown run times count 0.
    """
    jobs = trace.jobs
    if len(jobs) == 0:
        return 0.0
    span = trace_span(trace) if span is None else float(span)
    m = _machine_procs(trace, procs)
    if span <= 0:
        raise O2KSimError("the trace spans no time; its load is undefined")
    work = (
        (np.maximum(_procs(jobs), 0) * np.maximum(jobs["run_time"].to_numpy(), 0))
        .astype(float)
        .sum()
    )
    return float(work / (m * span))


def _copy_trace(trace: Any, jobs: pd.DataFrame) -> Any:
    return Trace(jobs=jobs, header=copy.deepcopy(trace.header), source=trace.source)


def scale_load(
    trace: Any, rho: float, *, procs: int | None = None, span: float | None = None
) -> Any:
    """*trace* with its interarrival times scaled so that its offered load becomes *rho*.

    Submit times become ``first + (submit - first) * f`` (rounded to whole
    seconds) with ``f = rho_now / rho``; the recorded span (``O2KSimSpan``)
    is scaled too and a header note says what was done.
    """
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not MIN_LOAD <= rho <= MAX_LOAD:
        raise O2KSimError(f"target load must be from {MIN_LOAD:g} to {MAX_LOAD:g}, got {rho!r}")
    now = offered_load(trace, procs, span)
    if now <= 0:
        raise O2KSimError("the trace has no processor demand; its load cannot be scaled")
    f = now / rho
    jobs = trace.jobs.copy()
    s = jobs["submit"].to_numpy()
    if len(s):
        first = s.min()
        if (s.max() - first) * f > MAX_TIME:  # submit times must stay times a trace can hold
            raise O2KSimError(
                f"target load {rho:g} stretches the arrivals over {(s.max() - first) * f:.3g} s, "
                f"beyond {MAX_TIME:g} s; the load is {now:.3g} now"
            )
        jobs["submit"] = (first + np.rint((s - first) * f)).astype(np.int64)
    out = _copy_trace(trace, jobs)
    extra = out.header.extra
    if "O2KSimSpan" in extra:
        with contextlib.suppress(ValueError):
            extra["O2KSimSpan"] = f"{float(extra['O2KSimSpan']) * f:.12g}"
    out.header.notes.append(
        f"load scaled from {now:.4f} to {rho:.4f}: interarrival times x {f:.6f}"
    )
    return out


def shift(trace: Any, seconds: float) -> Any:
    """*trace* with every submit time moved by *seconds* (whole seconds; may not go below 0)."""
    jobs = trace.jobs.copy()
    d = round(seconds)
    if len(jobs) and jobs["submit"].min() + d < 0:
        raise O2KSimError(f"shifting by {d} s would move jobs before the trace start")
    jobs["submit"] = jobs["submit"] + d
    out = _copy_trace(trace, jobs)
    out.header.notes.append(f"submit times shifted by {d} s")
    return out


def merge(traces: Sequence[Any], *, align: str = "unix", distinct_users: bool = True) -> Any:
    """One trace holding the jobs of all *traces*, sorted by submit time and renumbered.

    ``align="unix"`` puts every trace on the clock of its ``UnixStartTime``
    (the merged start is the earliest); ``align="start"`` lets every trace
    start at time 0.  Job numbers become 1..n; preceding-job references
    (field 16) follow their jobs.  With *distinct_users*, user and group ids
    of later traces are offset so they do not collide.
    """
    if not traces:
        raise O2KSimError("nothing to merge")
    if align not in ("unix", "start"):
        raise O2KSimError(f"align must be 'unix' or 'start', not '{align}'")
    starts = [getattr(t.header, "unix_start_time", None) for t in traces]
    unix_starts = [int(s) for s in starts if s is not None]
    if align == "unix" and len(unix_starts) < len(traces):
        raise O2KSimError(
            "align='unix' needs UnixStartTime in every trace header; use align='start'"
        )
    base = min(unix_starts) if align == "unix" else 0
    frames = []
    user_off = group_off = 0
    next_id = 0
    for k, t in enumerate(traces):
        j = t.jobs.copy()
        if align == "unix":
            j["submit"] = j["submit"] + (unix_starts[k] - base)
        old_ids = j["job_id"].to_numpy()
        j["_src"] = k
        j["_old"] = old_ids
        if distinct_users:
            for col, off in (("user", user_off), ("group", group_off)):
                v = j[col].to_numpy()
                j[col] = np.where(v >= 0, v + off, v)
            user_off = max(user_off, int(j["user"].max()) + 1 if len(j) else user_off)
            group_off = max(group_off, int(j["group"].max()) + 1 if len(j) else group_off)
        next_id += len(j)
        frames.append(j)
    allj = pd.concat(frames, ignore_index=True)
    allj = allj.sort_values(["submit", "_src"], kind="stable").reset_index(drop=True)
    new_id = np.arange(1, len(allj) + 1, dtype=np.int64)
    key = dict(
        zip(
            zip(allj["_src"].to_numpy().tolist(), allj["_old"].to_numpy().tolist(), strict=True),
            new_id.tolist(),
            strict=True,
        )
    )
    prev = allj["prev_job"].to_numpy()
    src = allj["_src"].to_numpy()
    allj["prev_job"] = [
        key.get((int(s), int(p)), -1) if p >= 0 else -1 for s, p in zip(src, prev, strict=True)
    ]
    allj["job_id"] = new_id
    jobs = allj.drop(columns=["_src", "_old"]).astype(np.int64)
    procs = [getattr(t.header, "max_procs", None) for t in traces]
    header = SWFHeader(
        version="2.2",
        unix_start_time=base,
        max_procs=max((p for p in procs if p), default=None),
        max_nodes=max(
            (p for p in (getattr(t.header, "max_nodes", None) for t in traces) if p), default=None
        ),
        notes=[
            f"merged from {len(traces)} traces (align={align}): "
            + ", ".join(str(t.source or f"trace{k + 1}") for k, t in enumerate(traces))
        ],
    )
    return Trace(jobs=jobs, header=header, source="merged")
