"""The cool-down of the measurement protocol (T§3.4, SPEC §5).

"Under non-preemptive policies, a simulation is complete when all the jobs
submitted during the month have been started; under policies that allow the
jobs to be preempted [...], the simulation is complete when all the jobs
submitted during the month have completed" (T§3.4).  Until then, jobs keep
arriving: a month's last jobs compete with the jobs of the next days, not
with an empty queue.  Stopping the arrivals at the end of the month
understates the waits of the month's last jobs (the maximum wait by up to 3x
on the synthetic O2K month).

* A trace window simply keeps the trace's later jobs (``select_window``
  already does); :func:`cooldown_measures` says whether the trace had enough.
* A generated workload gets a *cool-down tail*: :func:`append_tail` generates
  more arrivals after the analysed span, in chunks with their own seeds, so
  the analysed jobs are the same whatever the tail's length.  Callers add
  chunks until :func:`cooldown_measures` reports the tail was long enough
  (:func:`run_with_cooldown`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from o2ksim.table import ColumnTable, column
from o2ksim.workloads.models import generate
from o2ksim.workloads.swf import SWF_FIELDS, Trace

COOLDOWN_CHUNK = 30 * 86400.0  # seconds of arrivals per generated tail chunk (default)
MAX_CHUNKS = 4
_TAIL_STREAM = 0xC001D0  # keeps tail seeds apart from the main workload's seed


def cooldown_chunk(window: Any) -> float:
    """Length of one tail chunk for an analysis ``window``: as long as the window, at least a day."""
    return max(86400.0, float(window.end - window.start))


def tail_seed(seed: int, chunk: int) -> int:
    """The seed of cool-down chunk ``chunk`` (0, 1, ...) of a workload generated with ``seed``."""
    return int(np.random.SeedSequence([int(seed), _TAIL_STREAM, int(chunk)]).generate_state(1)[0])


def append_tail(
    trace: Trace,
    model: str,
    *,
    after: float,
    seed: int,
    params: Any = None,
    chunks: int = 1,
    chunk_length: float = COOLDOWN_CHUNK,
) -> Trace:
    """``trace`` followed by ``chunks`` generated cool-down chunks starting at ``after`` seconds.

    Each chunk is the model's workload over ``chunk_length`` seconds (seed
    :func:`tail_seed`), with the arrival calendar of the days it covers
    (``UnixStartTime`` shifted by its start), shifted in time and renumbered
    after the trace's last job id.  The trace's own jobs are unchanged.
    """
    if chunks <= 0:
        return trace
    table = trace.table
    ids = column(table, "job_id")
    next_id = int(ids.max()) + 1 if len(table) else 1
    unix = trace.header.unix_start_time
    tails = []
    for k in range(chunks):
        start = after + k * chunk_length
        extra = generate(
            model, span=chunk_length, seed=tail_seed(seed, k), params=params,
            start_time=None if unix is None else int(unix + start),
        ).table  # fmt: skip
        tails.append((extra, int(start), next_id))
        next_id += len(extra)
    if list(table.columns) == list(SWF_FIELDS) and all(
        c.dtype == np.int64 for c in map(table.__getitem__, SWF_FIELDS)
    ):  # the usual case, a generated trace: one int64 block, no DataFrame
        blocks = [np.stack([column(table, name) for name in SWF_FIELDS])]
        for extra, shift, first_id in tails:
            block = np.stack([column(extra, name, np.int64) for name in SWF_FIELDS])
            block[SWF_FIELDS.index("submit")] += shift
            block[0] = np.arange(first_id, first_id + block.shape[1], dtype=np.int64)
            blocks.append(block)
        block = np.concatenate(blocks, axis=1)
        return Trace(None, copy.deepcopy(trace.header), trace.source, trace.report, block=block)
    # pandas only when the trace already holds a DataFrame (a run that never builds one never imports it)
    import pandas as pd

    frames = [trace.jobs]
    for extra, shift, first_id in tails:
        part = extra.to_frame() if isinstance(extra, ColumnTable) else extra.copy()
        part["submit"] += shift
        part["job_id"] = np.arange(first_id, first_id + len(part), dtype=np.int64)
        frames.append(part)
    jobs = pd.concat(frames, ignore_index=True)
    return Trace(jobs, copy.deepcopy(trace.header), trace.source, trace.report)


def cooldown_measures(
    jobs: Any, window_end: float, last_submit: float, sim_end: float
) -> dict[str, Any]:
    """How long arrivals continued after the window, and whether that was long enough.

    ``jobs`` is the per-job table with the ``analysed`` column (a DataFrame or
    a :class:`~o2ksim.table.ColumnTable`).  The run needed
    arrivals until every analysed job had started — or had finished, when any
    job of the run was preempted or restarted (a preemptive policy, T§3.4).
    ``cooldown_needed``: how long after the window's end the run needed
    arrivals (``inf`` if some analysed job never started; rejected jobs, which never
    start, do not count); ``cooldown_seconds``:
    arrivals after the window's end that the run used
    (until the run stopped or the workload ran out); ``cooldown_arrivals``: how
    many jobs arrived in that time; ``cooldown_short``: the workload ran out of
    arrivals before the run no longer needed them (the last waits are then
    understated).
    """
    analysed = column(jobs, "analysed", bool) if "analysed" in jobs else np.ones(len(jobs), bool)
    # a rejected job never starts and needs no later arrivals (its NaN start made the target
    # infinite: every run with a rejected analysed job was reported short)
    analysed = analysed & (column(jobs, "status") != "rejected")
    preemptive = bool(((column(jobs, "preemptions") > 0) | (column(jobs, "restarts") > 0)).any())
    if analysed.any():
        needed = column(jobs, "end" if preemptive else "start", float)[analysed]
        need_until = float(needed.max()) if not np.isnan(needed).any() else math.inf
    else:
        need_until = window_end
    used_until = min(sim_end, last_submit)
    submit = column(jobs, "submit", float)
    return {
        "cooldown_needed": max(0.0, need_until - window_end),
        "cooldown_seconds": max(0.0, used_until - window_end),
        "cooldown_arrivals": int(((submit >= window_end) & (submit <= sim_end)).sum()),
        "cooldown_short": bool(last_submit < need_until),
    }


def run_with_cooldown(
    run: Callable[[Any], Any],
    trace: Any,
    extend: Callable[[Any, int], Any],
    *,
    chunk_length: float | None = None,
    max_chunks: int = MAX_CHUNKS,
) -> Any:
    """``run(extend(trace, k))`` with ``k`` tail chunks, more until the cool-down was long enough.

    ``run`` returns a :class:`~o2ksim.run.results.Result` whose summary has the
    cool-down measures; ``extend(trace, k)`` is the trace with ``k`` tail
    chunks.  After a run that ran out of arrivals, ``k`` grows to cover the
    cool-down the run needed (with ``chunk_length``; else it doubles).  Stops
    at ``max_chunks`` (the summary then still says ``cooldown_short``).
    """
    k = 1
    while True:
        result = run(extend(trace, k))
        s = result.summary
        if not s.get("cooldown_short") or k >= max_chunks:
            return result
        need = s.get("cooldown_needed", math.inf)
        want = 2 * k
        if chunk_length and math.isfinite(need):
            want = max(k + 1, math.ceil(need / chunk_length) + 1)
        k = min(want, max_chunks)


__all__ = [
    "COOLDOWN_CHUNK",
    "append_tail",
    "cooldown_chunk",
    "cooldown_measures",
    "run_with_cooldown",
    "tail_seed",
]
