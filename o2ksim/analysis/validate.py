"""Validation against what really happened: replay a trace and compare each job's wait.

Every Parallel Workloads Archive trace records each job's real wait (SWF
field 3).  :func:`validate` replays the trace under a policy on the usual run
path (:func:`o2ksim.run.api.run_config`: recorded submit times, requested
processors and times, actual runtimes) and compares, job by job, the
simulated wait with the recorded one (thesis §3.7 does this for NCSA-LSF*
against the O2K's measured waits, Figs. 8-10).

A job is *compared* when it was analysed (inside the window, if one is
given), has a recorded wait (field 3 >= 0) and started in the simulation.
Every other job is counted and listed with its reason
(:attr:`ValidationResult.excluded`), never dropped silently:

* ``outside the window`` -- submitted outside ``[start, end)`` (including
  the warm-up jobs, simulated but not analysed, and those before it);
* ``no recorded wait`` -- field 3 is -1;
* ``rejected by the simulation`` -- the run refused it (too wide for the
  machine, unknown runtime or size, ...; the run's reason is kept);
* ``did not start in the simulation`` -- it never started (a stalled run).

The measures (:mod:`o2ksim.analysis.validate_stats`) are computed overall,
per thesis runtime group, per powers-of-two size group, per queue (field 15),
per partition (field 16) and per calendar month; the utilisation per day is
computed from the recorded schedule (start = submit + recorded wait, for the
recorded runtime on the allocated processors) and from the simulated one.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.analysis.validate_availability import (
    RecordedSchedule,
    suspected_outages,
    wait_in_periods,
)
from o2ksim.analysis.validate_stats import (
    GROUPINGS,
    compare_waits,
    daily_busy,
    day_label,
    day_starts,
    group_table,
    month_labels,
)
from o2ksim.availability import Outage, unused_periods_note, write_availability
from o2ksim.errors import O2KSimError, UnusedAvailabilityWarning, UnusedSeedWarning, output_dir
from o2ksim.machine import MachineSpec
from o2ksim.run.api import run_config, unused_seed_note
from o2ksim.run.checks import check_estimates_have_effect
from o2ksim.run.config import RunConfig
from o2ksim.run.results import Result, write_json
from o2ksim.run.workload import load_workload
from o2ksim.validation import check_duration, check_flags, shown
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.transforms import DEFAULT_WARMUP, Window, read_window

__all__ = ["EXCLUSION_REASONS", "ValidationResult", "inferred_availability", "validate"]

EXCLUSION_REASONS = (
    "outside the window",
    "no recorded wait",
    "rejected by the simulation",
    "did not start in the simulation",
)
"""Why a job is not compared, in the order they are tested (a job counts under the first)."""

HOUR = 3600.0
INFERRED = ("inferred", "inferred-idle")
"""The availability timelines :func:`validate` infers from the recorded schedule."""


@dataclass
class ValidationResult:
    """The comparison of one replay with the recorded schedule.

    ``compared``: one row per compared job (``job_id``, ``submit``,
    ``run_time``, ``procs``, ``queue``, ``partition``, ``month``,
    ``recorded_wait``, ``simulated_wait``, seconds).  ``overall``: the
    measures of all of them (:func:`~o2ksim.analysis.validate_stats.compare_waits`).
    ``tables``: one row per group and grouping (``runtime``, ``size``,
    ``queue``, ``partition``, ``month``).  ``excluded``: one row per job not
    compared (``job_id``, ``reason``, ``detail``).  ``utilisation``: per day,
    ``recorded`` and ``simulated`` busy share of the machine.  ``result``: the
    simulated run (its ``save`` writes ``jobs.csv`` and ``summary.json``).
    ``outages``: the suspected outages or drains inferred from the recorded
    schedule (:func:`~o2ksim.analysis.validate_availability.suspected_outages`);
    ``availability``: their totals (periods, hours, share of the trace's span,
    share of the recorded waiting time that falls inside them).
    """

    result: Result
    compared: pd.DataFrame
    overall: dict[str, float]
    tables: pd.DataFrame
    excluded: pd.DataFrame
    utilisation: pd.DataFrame
    config: dict[str, Any] = field(default_factory=dict)
    outages: pd.DataFrame = field(default_factory=pd.DataFrame)
    availability: dict[str, float] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        """Number of jobs excluded per reason (every reason, zeros included)."""
        vc = self.excluded["reason"].value_counts()
        return {r: int(vc.get(r, 0)) for r in EXCLUSION_REASONS}

    def message(self) -> str:
        """One line: how many jobs can be compared, and why the others cannot."""
        total = len(self.compared) + len(self.excluded)
        why = ", ".join(f"{n} {r}" for r, n in self.counts.items() if n)
        return f"{len(self.compared)} of {total} jobs compared" + (f" ({why})" if why else "")

    def table(self) -> pd.DataFrame:
        """``overall`` and every group as one long table (what ``validation.csv`` holds)."""
        head = pd.DataFrame([{"grouping": "overall", "key": "all", "group": "all", **self.overall}])
        return pd.concat([head, self.tables], ignore_index=True)

    def text(self) -> str:
        """A short report for the terminal: the message and the overall measures in hours."""
        o = self.overall
        if not o.get("jobs"):
            return self.message()

        def h(k: str) -> str:
            return f"{o[k] / HOUR:.3g}"

        lines = [
            self.message(),
            "wait (h)      recorded  simulated",
            *(
                f"  {name:<11} {h('rec_' + k):>8}  {h('sim_' + k):>9}"
                for name, k in (("mean", "mean"), ("median", "median"), ("95th", "p95"), ("max", "max"))
            ),
            f"  zero waits  {o['rec_zero_share']:>8.1%}  {o['sim_zero_share']:>9.1%}",
            f"KS distance {o['ks']:.3f}; per-job Pearson {o['pearson']:.3f} (of log(1+wait) {o['pearson_log']:.3f})",
        ]
        if self.config.get("availability"):
            what = self.config["availability"]
            lines.append(
                f"replayed with {self.config['periods_down']} periods of processors down "
                f"({'given' if what == 'given' else what + ' from the recorded schedule'})"
            )
        a = self.availability
        if a:
            lines.append(
                f"suspected outages or drains: {a['periods']} periods of at least "
                f"{a['min_hours']:g} h, {a['hours']:.0f} h in all ({a['span_share']:.0%} of the trace), "
                f"holding {a['wait_share']:.0%} of the recorded waiting time"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def save(
        self, out_dir: str | os.PathLike[str], *, extra: Callable[[Any], object] | None = None
    ) -> Any:
        """Write ``validation.csv``, ``validation.json``, ``compared.csv``, ``excluded.csv``,
        ``utilisation.csv`` and the run's ``jobs.csv``, ``summary.json``, ``run.json``
        (and whatever ``extra(staging)`` stages: ``o2ksim validate``'s page and figures).

        All of them are staged and committed together with the run's files
        (:meth:`~o2ksim.run.results.Result.save_run`, a result of kind ``validation``,
        replacing an earlier validation's files as a set): a full disk or an interrupt
        leaves the folder as it was, never half a validation (issue-27 audit).  Returns
        the committed :class:`~o2ksim.outfiles.Staging`."""
        out = output_dir(out_dir)

        def stage(staged: Any) -> None:
            self._stage(staged)
            if extra is not None:
                extra(staged)

        return self.result.save_run(out, extra=stage, kind="validation")

    def _stage(self, staged: Any) -> None:
        self.table().to_csv(staged.path("validation.csv"), index=False)
        self.compared.to_csv(staged.path("compared.csv"), index=False)
        self.excluded.to_csv(staged.path("excluded.csv"), index=False)
        self.utilisation.to_csv(staged.path("utilisation.csv"), index=False)
        self.outages.to_csv(staged.path("outages.csv"), index=False)
        replayed = self.result.config.get("availability")
        if replayed:
            write_availability(
                (Outage(r["host"], r["from"], r["to"], r["procs"]) for r in replayed),
                staged.path("availability.csv"),
            )
        write_json(
            staged.path("validation.json"),
            {
                "config": self.config,
                "message": self.message(),
                "compared": len(self.compared),
                "excluded": self.counts,
                "overall": self.overall,
                "availability": self.availability,
                "tables": json.loads(self.tables.to_json(orient="records")),
                "utilisation": json.loads(self.utilisation.to_json(orient="records")),
            },
        )


def validate(
    trace: Trace | str | os.PathLike[str],
    machine: MachineSpec | str | os.PathLike[str] | None = None,
    policy: Any = "fcfs-backfill",
    *,
    policy_params: Mapping[str, Any] | None = None,
    window: Window | Sequence[float | str] | None = None,
    estimates: str | None = None,
    interval: float | str | None = None,
    seed: int | None = None,
    progress: bool = False,
    lenient: bool = False,
    outage_min: float | str = 3600.0,
    availability: Any = None,
) -> ValidationResult:
    """Replay ``trace`` under ``policy`` on ``machine`` and compare each job's wait with its recorded one.

    ``trace``: an SWF path or a :class:`~o2ksim.workloads.swf.Trace`.
    ``machine``, ``policy``, ``policy_params``, ``estimates``, ``interval``,
    ``seed``: as :func:`o2ksim.simulate` (the run goes through the same
    :func:`~o2ksim.run.api.run_config`; a seed given that changed nothing warns
    :class:`~o2ksim.errors.UnusedSeedWarning`).  ``window``: compare only jobs
    submitted in ``[start, end)``; a :class:`Window` or ``(start, end[,
    warmup])`` whose bounds may also be dates (``"1997-01-01"``, read with
    the trace's ``UnixStartTime`` in its header's time zone, as ``o2ksim run
    --window``); the warm-up defaults to 7 days.
    ``outage_min``: the shortest suspected outage reported (seconds or a
    duration, default 1 hour).  ``availability``: replay with processors down
    between times -- ``"inferred"`` (the suspected outages, each taking its
    ``down_at_least`` processors of the machine's one host: the fewest that
    explain the record), ``"inferred-idle"`` (each taking every processor
    the record shows idle when it began: the most; see
    :func:`inferred_availability`), an availability file, or its periods
    (as :func:`o2ksim.simulate` takes them); needs ``machine``.

    Raises :class:`~o2ksim.errors.O2KSimError` (one line) when no job of the
    trace has a recorded wait.
    """
    check_flags("validate", progress=progress, lenient=lenient)
    # seconds or a duration, >= 0 (the CLI's --outage-min; -1 was taken, 'x' not named)
    min_outage = check_duration(outage_min, "validate", "outage_min", allow_none=False) or 0.0
    tr = load_workload(trace, lenient=lenient)
    source = str(tr.source or "the trace")
    if len(tr) == 0:
        raise O2KSimError(f"{source}: the trace has no jobs")
    unix = tr.header.unix_start_time if tr.header is not None else None
    jobs = tr.table
    rec_wait = np.asarray(jobs["wait"], dtype=float)
    if not (rec_wait >= 0).any():
        raise O2KSimError(
            f"{source}: no job has a recorded wait (SWF field 3 is -1 for all {len(tr)} jobs); "
            "0 jobs can be compared"
        )
    win = _window(window, tr.header, np.asarray(jobs["submit"], dtype=float))
    replayed = availability
    if isinstance(availability, str) and availability in INFERRED:
        if machine is None:
            raise O2KSimError(f"availability {availability!r} needs a machine (the host to take processors from)")
        mach = RunConfig.create(tr, machine).machine
        found, _ = _availability(tr, mach.total_procs if mach else 0, min_outage)
        replayed = inferred_availability(found, mach, idle=availability == "inferred-idle")
    config = RunConfig.create(
        tr,
        machine,
        policy,
        policy_params=policy_params,
        window=win,
        estimates=estimates,
        interval=interval,
        seed=0 if seed is None else seed,
        progress=progress,
        availability=replayed,
    )
    check_estimates_have_effect(config)  # as simulate(): estimates no decision reads, refused
    result = run_config(config)
    unused = "" if seed is None else unused_seed_note(result, config, f"seed={seed}")
    if unused:
        warnings.warn(unused, UnusedSeedWarning, stacklevel=2)
    late = unused_periods_note(  # as simulate() says it: known only after the replay
        config.availability, result.stats.sim_end, result.unix_start, f"availability={shown(availability)}"
    )
    if late:
        warnings.warn(late, UnusedAvailabilityWarning, stacklevel=2)
    result.config["workload"] = source
    compared, excluded = _match(tr, result, unix)
    tables = pd.concat(
        [group_table(compared, g) for g in GROUPINGS if len(compared)], ignore_index=True
    ) if len(compared) else pd.DataFrame(columns=["grouping", "key", "group"])
    overall = compare_waits(compared["recorded_wait"], compared["simulated_wait"])
    util = _utilisation(tr, result, win, unix)
    outages, avail = _availability(tr, result.machine.total_procs, min_outage)
    meta = {
        "trace": source,
        "policy": result.policy.get("name"),
        "machine": result.machine.describe(),
        "procs": result.machine.total_procs,
        "window": None if win is None else [win.start, win.end, win.warmup],
        "unix_start_time": unix,
        "scheduler_note": _note(tr),
        "availability": None if availability is None else (
            availability if isinstance(availability, str) else "given"
        ),
        "periods_down": len(config.availability),
    }
    return ValidationResult(result, compared, overall, tables, excluded, util, meta, outages, avail)


def inferred_availability(
    outages: pd.DataFrame, machine: MachineSpec | None, *, idle: bool = False
) -> tuple[Outage, ...]:
    """The suspected outages as periods down: each takes its ``down_at_least`` processors,
    or with ``idle`` every processor the record shows idle when it began.

    ``down_at_least`` is the fewest processors that explain why the oldest
    waiting job did not start (``free - need + 1``).  Since no job starts
    in a period, the record says nothing about the other idle processors:
    ``idle`` takes all of them (``down_at_least + need - 1``, the free ones
    at the period's start), the most the record allows.  The true capacity
    lies between the two.  The inference sees the machine as a whole, so the
    machine must have one host (every shared trace's does); the periods are
    disjoint by construction.
    """
    if machine is None or len(machine.hosts) != 1:
        raise O2KSimError(
            "availability 'inferred' needs a machine of one host (the inference sees the machine "
            "as a whole); give an availability file for a machine of several hosts"
        )
    host = machine.hosts[0]
    down = outages["down_at_least"] + (outages["need"] - 1 if idle else 0)
    return tuple(
        Outage(host.name, float(a), float(b), int(min(k, host.procs)))
        for a, b, k in zip(outages["start"], outages["end"], down, strict=True)
        if k > 0
    )


def _availability(tr: Trace, capacity: int, min_duration: float) -> tuple[pd.DataFrame, dict[str, float]]:
    """The suspected outages of the recorded schedule and their totals."""
    s = RecordedSchedule.from_columns(tr.table)
    outages = suspected_outages(s, capacity, min_duration)
    if len(s.submit) == 0:
        return outages, {}
    span = float(s.end.max() - s.submit.min())
    waited = float((s.start - s.submit).sum())
    inside = float(wait_in_periods(s.submit, s.start, outages).sum())
    return outages, {
        "periods": len(outages),
        "min_hours": min_duration / HOUR,
        "hours": float(outages["hours"].sum()),
        "span_share": float((outages["end"] - outages["start"]).sum()) / span if span > 0 else 0.0,
        "wait_share": inside / waited if waited > 0 else 0.0,
    }


def _note(tr: Trace) -> str | None:
    """The header's notes (where PWA traces name their scheduler), joined."""
    h = tr.header
    notes = getattr(h, "notes", None) if h is not None else None
    if isinstance(notes, list | tuple):
        return " ".join(str(n) for n in notes) or None
    return str(notes) if notes else None


def _window(window: Window | Sequence[float | str] | None, header: Any, submit: np.ndarray) -> Window | None:
    """The window with date bounds read against the trace header's ``UnixStartTime``, in its
    time zone, refused when it is reversed or holds no submitted job (in the user's terms)."""
    if window is None or isinstance(window, Window):
        return window
    if isinstance(window, str) or not isinstance(window, Sequence) or len(window) not in (2, 3):
        raise O2KSimError(f"window: expected (start, end[, warmup]), got {shown(window)}")
    parts = list(window)
    warmup = parts[2] if len(parts) == 3 else DEFAULT_WARMUP
    return read_window(parts[:2], header, warmup, submit)[0]  # refusals in the dates typed


def _match(tr: Trace, result: Result, unix: int | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The compared jobs and the excluded ones (with reasons), joined on the job number."""
    t = tr.table
    rec = pd.DataFrame(
        {
            "job_id": np.asarray(t["job_id"], dtype=np.int64),
            "submit": np.asarray(t["submit"], dtype=float),
            "recorded_wait": np.asarray(t["wait"], dtype=float),
            "queue": np.asarray(t["queue"], dtype=np.int64),
            "partition": np.asarray(t["partition"], dtype=np.int64),
        }
    )
    if rec["job_id"].duplicated().any():
        dup = int(rec.loc[rec["job_id"].duplicated(), "job_id"].iloc[0])
        raise O2KSimError(f"{tr.source}: job number {dup} appears twice; jobs cannot be matched")
    sim = result.jobs
    cols = ["job_id", "wait", "status", "reason", "run_time", "procs"]
    cols += ["analysed"] if "analysed" in sim else []
    joined = rec.merge(sim[cols], on="job_id", how="left", validate="one_to_one")
    simulated = joined["status"].notna().to_numpy()
    analysed = simulated & (
        joined["analysed"].fillna(False).astype(bool).to_numpy() if "analysed" in joined else True
    )
    status = joined["status"].fillna("").to_numpy()
    reason = np.full(len(joined), "", dtype=object)
    detail = np.full(len(joined), "", dtype=object)
    started = np.isin(status, ("completed", "killed"))
    tests = (
        (~analysed, "outside the window"),
        (joined["recorded_wait"].to_numpy() < 0, "no recorded wait"),
        (status == "rejected", "rejected by the simulation"),
        (~started, "did not start in the simulation"),
    )
    for mask, why in tests:
        new = mask & (reason == "")
        reason[new] = why
    rejected = reason == "rejected by the simulation"
    detail[rejected] = joined.loc[rejected, "reason"].fillna("").astype(str).to_numpy()
    not_started = reason == "did not start in the simulation"
    detail[not_started] = status[not_started]
    keep = reason == ""
    c = joined.loc[keep]
    compared = pd.DataFrame(
        {
            "job_id": c["job_id"].to_numpy(),
            "submit": c["submit"].to_numpy(),
            "run_time": c["run_time"].to_numpy(float),
            "procs": c["procs"].to_numpy(np.int64),
            "queue": c["queue"].to_numpy(),
            "partition": c["partition"].to_numpy(),
            "month": month_labels(c["submit"].to_numpy(), unix, _zone(tr)),
            "recorded_wait": c["recorded_wait"].to_numpy(float),
            "simulated_wait": c["wait"].to_numpy(float),
        }
    )
    excluded = pd.DataFrame(
        {"job_id": joined.loc[~keep, "job_id"].to_numpy(), "reason": reason[~keep], "detail": detail[~keep]}
    )
    return compared, excluded


def _zone(tr: Trace) -> str | None:
    return tr.header.time_zone_string if tr.header is not None else None


def _utilisation(tr: Trace, result: Result, win: Window | None, unix: int | None) -> pd.DataFrame:
    """Busy share of the machine per day, recorded against simulated.

    Recorded: each job with a recorded wait and runtime runs from ``submit +
    wait`` for ``run_time`` on its allocated processors (field 5, else the
    requested ones, field 8).  Simulated: the run's allocation segments.
    Days are 86,400 s from the trace start, over the window when one is
    given, else from the first submit to the last recorded or simulated end.
    """
    t = tr.table
    submit = np.asarray(t["submit"], dtype=float)
    wait = np.asarray(t["wait"], dtype=float)
    run = np.asarray(t["run_time"], dtype=float)
    alloc = np.asarray(t["alloc_procs"], dtype=float)
    procs = np.where(alloc > 0, alloc, np.asarray(t["req_procs"], dtype=float))
    ok = (wait >= 0) & (run >= 0) & (procs > 0)
    r_start, r_end = submit[ok] + wait[ok], submit[ok] + wait[ok] + run[ok]
    seg = result.segment_table
    s_start = np.asarray(seg["start"], dtype=float)
    s_end = np.asarray(seg["end"], dtype=float)
    s_procs = np.asarray(seg["procs"], dtype=float)
    if win is not None:
        lo, hi = win.start, win.end
    else:
        ends = [x.max() for x in (r_end, s_end) if len(x)]
        lo, hi = float(submit.min()), float(max(ends)) if ends else float(submit.max())
    days = day_starts(lo, hi)
    cap = float(result.machine.total_procs) * 86400.0
    return pd.DataFrame(
        {
            "day_start": days,
            "day": [day_label(d, unix) for d in days],
            "recorded": daily_busy(r_start, r_end, procs[ok], days) / cap,
            "simulated": daily_busy(s_start, s_end, s_procs, days) / cap,
        }
    )
