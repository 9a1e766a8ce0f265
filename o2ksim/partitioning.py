"""Measures and checks of dynamic processor partitioning, read from a run's output.

Everything here works on the per-job table and the allocation segments (one
row per interval during which a job held a fixed number of processors), so a
user can check a result file without the policy that produced it:

* :func:`allocation_columns` -- per job, the processor-seconds it received
  and its mean processors over its life (``mean_procs``: received / (end -
  start)), so an equal partitioning can be seen in ``jobs.csv``;
* :func:`resize_times` -- the instants at which a host resized running jobs
  (its *repartitionings*);
* :func:`partitioning_violations` -- the EQspatial-MinInterval invariants
  (T§3.2.3): at least MinInterval between two repartitionings of a host; no
  job holds more than it requested; with MinInterval = 0, after every event
  each host's allocation is an equipartition.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from o2ksim.machine import MachineSpec
from o2ksim.table import column, grouped_sum

if TYPE_CHECKING:  # imported where a DataFrame is built: the run's result path needs no pandas
    import pandas as pd

TOLERANCE = 1e-6  # seconds


@runtime_checkable
class JobColumns(Protocol):
    """A policy that adds per-job columns to ``jobs.csv`` (e.g. EQspatial's ``catchup_credit``)."""

    def job_columns(self) -> Mapping[str, Mapping[int, float]]:
        """Column name -> {job id: value}; jobs not listed get 0."""
        ...


def allocation_columns(jobs: pd.DataFrame, segments: pd.DataFrame) -> pd.DataFrame:
    """``jobs`` with ``proc_seconds`` (received) and ``mean_procs`` (received / (end - start)) added."""
    out = jobs.copy()
    out["proc_seconds"], out["mean_procs"] = allocation_arrays(
        out["job_id"].to_numpy(),
        out["start"].to_numpy(float),
        out["end"].to_numpy(float),
        out["procs"].to_numpy(),
        out["status"].eq("completed").to_numpy(),
        segments,
    )
    return out


def allocation_arrays(
    job_id: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    procs: np.ndarray,
    completed: np.ndarray,
    segments: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """Per job (arrays aligned with ``job_id``): processor-seconds received, and mean processors.

    The mean is received / (end - start); a completed job that ran for no time
    held its request for no time and reports the request; NaN otherwise when
    the job has no length.  ``segments``: a DataFrame or a
    :class:`~o2ksim.table.ColumnTable` with the segment columns.
    """
    got = np.zeros(len(job_id))
    if len(segments):
        seg_procs = column(segments, "procs")
        work = seg_procs * (column(segments, "end") - column(segments, "start"))
        # each job's processor-seconds, correctly rounded (math.fsum per job)
        ids, received = grouped_sum(column(segments, "job_id"), work)
        if len(ids):
            pos = np.minimum(np.searchsorted(ids, job_id), len(ids) - 1)
            found = ids[pos] == job_id
            got = np.where(found, received[pos], 0.0)
    life = end - start
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(life > 0, got / np.where(life > 0, life, 1.0), np.nan)
    zero = (life == 0) & completed
    return got, np.where(zero, procs.astype(float), mean)


def _by_job(segments: pd.DataFrame) -> dict[int, list[tuple[float, float, int, str]]]:
    rows: dict[int, list[tuple[float, float, int, str]]] = defaultdict(list)
    for jid, host, start, end, procs in segments[["job_id", "host", "start", "end", "procs"]].itertuples(
        index=False
    ):
        rows[int(jid)].append((float(start), float(end), int(procs), str(host)))
    for segs in rows.values():
        segs.sort()
    return rows


def resize_times(segments: pd.DataFrame) -> dict[str, list[float]]:
    """Per host, the sorted distinct instants at which a running job's processor count changed.

    A resize is two consecutive segments of one job on one host that touch
    (the first ends where the second starts), both with processors, with
    different counts.  Preemption (a 0-processor segment) and resumption are
    not resizes.
    """
    out: dict[str, set[float]] = defaultdict(set)
    for segs in _by_job(segments).values():
        for (_s0, e0, p0, h0), (s1, _e1, p1, h1) in itertools.pairwise(segs):
            if h0 == h1 and p0 > 0 and p1 > 0 and p0 != p1 and abs(e0 - s1) <= TOLERANCE:
                out[h0].add(e0)
    return {h: sorted(t) for h, t in out.items()}


def partitioning_violations(
    jobs: pd.DataFrame,
    segments: pd.DataFrame,
    machine: MachineSpec,
    *,
    min_interval: float,
    long_threshold: float | None = None,
    credit: pd.Series | None = None,
    trials: set[int] | None = None,
    limit: int = 5,
) -> list[str]:
    """What breaks the EQspatial-MinInterval invariants in a run (empty when nothing does).

    * between two repartitionings (:func:`resize_times`) of one host at least
      ``min_interval`` passes;
    * no job ever holds more processors than it requested;
    * with ``min_interval == 0``: after every event, on every host, among the
      jobs sharing equally -- not catching up (received processor-seconds
      below their ``credit``, indexed by job id), not long-running (run longer
      than ``long_threshold``) -- every job below its request holds no fewer
      than any other sharing job minus one (max - min <= 1 among uncapped
      jobs, and a capped job never above an uncapped one + 1), and if one is
      below its request the host has no idle processor.  Instants when a host
      holds a preempted job or a trial run (immediate service) are skipped.

    ``credit`` (catch-up credit by job id) and ``trials`` (ids of jobs given an
    immediate-service trial, whose first segment is the trial) default to the
    ``catchup_credit`` and ``immediate_service`` columns of ``jobs`` when it
    has them (EQspatial runs do).
    """
    if credit is None and "catchup_credit" in jobs:
        credit = jobs.set_index("job_id")["catchup_credit"]
    if trials is None and "immediate_service" in jobs:
        trials = set(jobs.loc[jobs["immediate_service"] > 0, "job_id"].astype(int))
    problems: list[str] = []
    for host, times in resize_times(segments).items():
        gaps = np.diff(np.asarray(times))
        bad = np.flatnonzero(gaps < min_interval - TOLERANCE)
        for i in bad[:limit]:
            problems.append(
                f"host {host}: repartitioned at t={times[i]:g} and again at t={times[i + 1]:g} "
                f"(MinInterval {min_interval:g} s)"
            )
    req = dict(zip(jobs["job_id"].astype(int), jobs["procs"].astype(int), strict=True))
    over = segments.loc[segments["procs"].to_numpy() > segments["job_id"].map(req).to_numpy()]
    for row in over.head(limit).itertuples(index=False):
        problems.append(
            f"job {row.job_id} holds {row.procs} processors on {row.host} from t={row.start:g} "
            f"(requested {req[int(row.job_id)]})"
        )
    if min_interval == 0:
        problems.extend(
            _equipartition_violations(jobs, segments, machine, long_threshold, credit, trials, limit)
        )
    return problems


def _equipartition_violations(
    jobs: pd.DataFrame,
    segments: pd.DataFrame,
    machine: MachineSpec,
    long_threshold: float | None,
    credit: pd.Series | None,
    trials: set[int] | None,
    limit: int,
) -> list[str]:
    req = dict(zip(jobs["job_id"].astype(int), jobs["procs"].astype(int), strict=True))
    restarts = dict(zip(jobs["job_id"].astype(int), jobs["restarts"].astype(int), strict=True))
    credits = {} if credit is None else {int(k): float(v) for k, v in credit.items() if v > 0}
    by_job = _by_job(segments)
    # per job: first start of its real run, trial segments, and the time its catch-up ends
    trial: dict[int, tuple[float, float]] = {}
    first: dict[int, float] = {}
    caught_up: dict[int, float] = {}
    trials = trials or set()
    for jid, segs in by_job.items():
        tried = jid in trials or restarts.get(jid, 0) > 0
        if tried and segs:
            trial[jid] = (segs[0][0], segs[0][1])
        real = segs[1:] if tried else segs
        if not real:
            continue
        first[jid] = real[0][0]
        need = credits.get(jid, 0.0)
        t_end = real[0][0]
        got = 0.0
        for s, e, p, _h in real:
            if got + p * (e - s) >= need - 1e-6:
                t_end = s + (need - got) / p if p > 0 else s
                break
            got += p * (e - s)
            t_end = e
        caught_up[jid] = t_end if need > 0 else -math.inf
    capacity = {h.name: h.procs for h in machine.hosts}
    seg = segments.loc[segments["end"] > segments["start"]]
    problems: list[str] = []
    for host, part in seg.groupby("host"):
        starts = part["start"].to_numpy(float)
        ends = part["end"].to_numpy(float)
        procs = part["procs"].to_numpy(int)
        ids = part["job_id"].to_numpy(int)
        for t in np.unique(starts):
            live = (starts <= t) & (ends > t)
            if (procs[live] == 0).any():
                continue  # a preempted job: immediate service in progress
            if any(jid in trial and trial[jid][0] <= t < trial[jid][1] for jid in ids[live]):
                continue
            sharing = []
            for jid, p in zip(ids[live], procs[live], strict=True):
                if caught_up.get(jid, -math.inf) > t + TOLERANCE:
                    continue
                if long_threshold is not None and t - first.get(jid, t) >= long_threshold - TOLERANCE:
                    continue
                sharing.append((int(jid), int(p)))
            below = [p for jid, p in sharing if p < req[jid]]
            if not below:
                continue
            top = max(p for _, p in sharing)
            if top - min(below) > 1:
                problems.append(
                    f"host {host} at t={t:g}: not an equipartition "
                    f"({', '.join(f'J{j}={p}/{req[j]}' for j, p in sharing)})"
                )
            elif procs[live].sum() < capacity[str(host)]:
                problems.append(
                    f"host {host} at t={t:g}: {capacity[str(host)] - procs[live].sum()} idle processors "
                    f"while a job holds fewer than it requested"
                )
            if len(problems) >= limit:
                return problems
    return problems


DEMAND_RANGES = ("<= P", "P+1 - 2P", "2P+1 - 3P", "> 3P")


def host_demand(
    jobs: pd.DataFrame, segments: pd.DataFrame, machine: MachineSpec, span: tuple[float, float] | None = None
) -> pd.DataFrame:
    """T§6.1.2, Table 14: fraction of time each host's jobs request <= P, P+1-2P, 2P+1-3P, > 3P processors.

    ``P`` is the host's processors; a job counts on its host from its first
    segment there to its last (its requested processors, however many it
    holds).  ``span`` defaults to the analysed window (first analysed submit
    to last analysed end).  One row per host: host, procs, and the four
    fractions.
    """
    if span is None:
        a = jobs.loc[jobs["analysed"]] if "analysed" in jobs else jobs
        span = (float(a["submit"].min()), float(a["end"].max()))
    t0, t1 = span
    req = dict(zip(jobs["job_id"].astype(int), jobs["procs"].astype(int), strict=True))
    life = segments.groupby(["job_id", "host"]).agg(start=("start", "min"), end=("end", "max")).reset_index()
    rows = []
    for host in machine.hosts:
        part = life.loc[life["host"] == host.name]
        start = np.clip(part["start"].to_numpy(float), t0, t1)
        end = np.clip(part["end"].to_numpy(float), t0, t1)
        p = part["job_id"].map(req).to_numpy(float)
        times = np.concatenate([start, end, [t0, t1]])
        delta = np.concatenate([p, -p, [0.0, 0.0]])
        order = np.lexsort((delta, times))
        times, level = times[order], np.cumsum(delta[order])
        dur = np.diff(times)
        demand = level[:-1]
        total = max(t1 - t0, 1e-12)
        bounds = [host.procs, 2 * host.procs, 3 * host.procs]
        cls = np.searchsorted(np.asarray(bounds, float), demand, side="left")
        row = {"host": host.name, "procs": host.procs}
        for i, name in enumerate(DEMAND_RANGES):
            row[name] = float(dur[cls == i].sum() / total)
        rows.append(row)
    # pandas only to return this table (the rest of the module works on numpy arrays)
    import pandas as pd

    return pd.DataFrame(rows)
