"""Evaluation of the predictors as in D§5: predictions against a simulated schedule.

The workload (one partition of a trace) is simulated by o2ksim's own engine
under strict FCFS (the paper's simulator) or FCFS-backfill, on a one-host
machine.  The schedule is then replayed:

* **head-of-queue events** (D§5): job ``k`` reaches the head of the queue at
  ``h_k = max(submit_k, latest start of the jobs before it in queue order)``;
  if it cannot start then (``start_k > h_k``), the predictors see the machine
  at ``h_k`` -- the jobs running then, their ages ``h_k - start_i``, sizes and
  classes -- and ``n' = n_k - free``; the actual value is ``start_k - h_k``;
* **arrival events** (beyond the paper, D§7.1): every job that does not start
  when it arrives gets a whole-queue prediction
  (:func:`~o2ksim.prediction.predictors.whole_queue`) from the machine and the
  queue ahead of it; the actual value is ``start_k - submit_k``.

A job that starts in the same instant as ``h_k`` but later in queue order (a
backfilled job) is not part of the state the head job saw.  Accuracy:
coefficient of correlation (CC, Pearson) of predicted and actual, CC of their
logarithms (both floored at 1 s), median and mean absolute error.

The pieces: :mod:`~o2ksim.prediction.replay` (the events of a schedule),
:mod:`~o2ksim.prediction.scoring` (predictions and their accuracy); this
module runs the whole evaluation (:func:`predict`).
"""

from __future__ import annotations

import itertools
import json
import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError, PerfectEstimatesWarning, output_dir
from o2ksim.machine import MachineSpec, load_machine, machine_from_header, single_host
from o2ksim.outfiles import Staging, claim
from o2ksim.prediction.model import (
    CLM,
    OVERDUE_MODES,
    fit_clm,
    load_clm,
    median_table,
    partition_size,
    select_jobs,
)
from o2ksim.prediction.page import prediction_page
from o2ksim.prediction.plot import scatter_figure
from o2ksim.prediction.replay import Replay, replay
from o2ksim.prediction.scoring import (
    accuracy,
    another_time,
    by_need,
    score_heads,
    score_whole_queue,
    summarise,
)
from o2ksim.run.api import simulate
from o2ksim.run.checks import perfect_estimates_note
from o2ksim.run.workload import load_workload
from o2ksim.units import trace_zone
from o2ksim.validation import (
    MAX_PROCS,
    check_count,
    check_flags,
    check_number,
    check_path,
    check_str,
    shown,
)
from o2ksim.workloads.transforms import parse_time, read_bounds

__all__ = ["PredictionResult", "Replay", "accuracy", "predict", "recorded_schedule", "replay"]

POLICIES = ("fcfs", "fcfs-backfill")
SCHEDULES = ("simulated", "recorded")
"""What the predictions are scored against: o2ksim's schedule of the jobs, or the trace's own."""


@dataclass
class PredictionResult:
    """What ``predict`` produced.

    ``predictions``: one row per (event, predictor): ``job_id, kind, time,
    need`` (n'), ``running, benefactors, predictor, predicted, actual``
    (``predicted`` nan = no prediction).  ``summary``: one row per (kind,
    predictor) with counts and accuracy.  ``by_need``: CC of A and B per range
    of n' (D§5.3).  ``clm``: the model used (``clm.table()``).
    ``another_time``: D§6.1 (with ``periods``); ``medians``: D Table 5 layout.
    """

    predictions: pd.DataFrame
    summary: pd.DataFrame
    by_need: pd.DataFrame
    clm: CLM
    schedule: pd.DataFrame
    config: dict[str, Any] = field(default_factory=dict)
    another_time: pd.DataFrame | None = None
    medians: pd.DataFrame | None = None
    timings: dict[str, float] = field(default_factory=dict)
    #: the jobs left out because they never started (``job_id``, ``reason``): rejected by the
    #: simulation (wider than ``procs``), or without a processor count in the recorded schedule
    left_out: pd.DataFrame | None = None

    def cc(self, predictor: str = "combined", kind: str = "head") -> float:
        row = self.summary[
            (self.summary["kind"] == kind) & (self.summary["predictor"] == predictor)
        ]
        return float(row["cc"].iloc[0]) if len(row) else float("nan")

    def save(self, out_dir: str | os.PathLike[str], *, figure: bool = True) -> Path:
        """Write ``predictions.csv``, ``summary.csv``, ``summary.json``, ``by_need.csv``, ``clm.toml``,
        ``clm.csv``, ``another_time.csv`` / ``medians.csv`` (with periods), ``fig4.png`` and the
        page ``prediction.html``."""
        out = output_dir(out_dir)
        with claim(out, option="", kind="prediction"), Staging.of(out, "prediction") as staged:
            try:  # every file staged, then committed together (issue-27 audit)
                self._write(staged, figure)
                staged.commit()
            except OSError as exc:
                raise O2KSimError(
                    f"{out}: cannot write the prediction ({exc.strerror or exc}); "
                    "nothing new was written there"
                ) from None
        return out

    def _write(self, staged: Staging, figure: bool) -> None:
        self.predictions.to_csv(staged.path("predictions.csv"), index=False)
        self.summary.to_csv(staged.path("summary.csv"), index=False)
        self.by_need.to_csv(staged.path("by_need.csv"), index=False)
        staged.path("clm.toml").write_text(self.clm.to_toml())
        self.clm.table().to_csv(staged.path("clm.csv"), index=False)
        if self.another_time is not None:
            self.another_time.to_csv(staged.path("another_time.csv"), index=False)
        if self.medians is not None:
            self.medians.to_csv(staged.path("medians.csv"), index_label="class")
        data = {
            "config": self.config,
            "summary": _records(self.summary),
            "clm": _records(self.clm.table()),
            "another_time": None if self.another_time is None else _records(self.another_time),
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
        }
        staged.path("summary.json").write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
        # no prediction at all (a log too short for its fit window): no figure, not a crash
        fig_path = staged.path("fig4.png") if figure and len(self.predictions) else None
        if fig_path is not None:
            fig = scatter_figure(self.predictions)
            fig.savefig(fig_path, dpi=110, format="png")
            # matplotlib is heavy and needed only to close the figure drawn above
            import matplotlib.pyplot as plt

            plt.close(fig)
        staged.path("prediction.html").write_text(prediction_page(self, fig_path))


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    recs = df.to_dict(orient="records")
    return [
        {
            k: (
                None
                if isinstance(v, float) and not np.isfinite(v)
                else (v.item() if isinstance(v, np.generic) else v)
            )
            for k, v in r.items()
        }
        for r in recs
    ]


def _machine(trace: Any, machine: Any, procs: int | None, partition: Any) -> Any:
    if procs is not None:
        return single_host(int(procs), name=f"{procs}-procs")
    if isinstance(machine, MachineSpec):
        mach = machine
    elif machine is not None:
        mach = load_machine(machine)
    else:
        size = partition_size(trace.header, partition)
        mach = (
            single_host(size, name=f"partition-{partition}")
            if size
            else machine_from_header(trace.header, trace.source)
        )
    if len(mach.hosts) != 1:
        raise O2KSimError(
            f"machine {mach.name}: prediction needs a one-host (space-shared) machine, it has {len(mach.hosts)} hosts"
        )
    return mach


def _time(value: Any, trace: Any, what: str) -> float:
    """``value`` (seconds, a duration or a date in the header's zone) as trace seconds; an
    error names the parameter ``what`` (``window: 'x' is not a duration``)."""
    unix = getattr(trace.header, "unix_start_time", None)
    try:
        return float(parse_time(value, unix, trace_zone(trace.header)[0]))
    except O2KSimError as exc:
        raise O2KSimError(f"{what}: {exc}") from None



def _window(
    value: Sequence[Any] | None, trace: Any, what: str, jobs: pd.DataFrame | None = None
) -> tuple[float, float] | None:
    """``value`` as ``(start, end)`` trace seconds; a reversed window is refused in the user's
    terms (the dates typed and their zone).  Given the fitted ``jobs``, a window holding fewer
    than the 10 jobs with a positive run time a fit needs is refused in those terms too."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
        raise O2KSimError(f"{what}: expected (START, END), got {shown(value)}")
    try:
        a, b, said = read_bounds(value, trace.header)
    except O2KSimError as exc:
        raise O2KSimError(f"{what}: {exc}") from None
    if jobs is not None:
        submit, run = jobs["submit"].to_numpy(dtype=float), jobs["run_time"].to_numpy(dtype=float)
        n = int(((submit >= a) & (submit < b) & (run > 0)).sum())
        if n < 10:
            since = "" if said.unix_start is not None else " after the trace start"
            raise O2KSimError(
                f"{what}: only {n} job(s) submitted in [{said.as_written(value[0], a)}, "
                f"{said.as_written(value[1], b)}){since} with a positive run time to fit (need "
                f"at least 10){said.zone_said}"
            )
    return a, b


def recorded_schedule(jobs: pd.DataFrame) -> pd.DataFrame:
    """The trace's own schedule of ``jobs`` (SWF columns, a recorded wait each), in their order:
    ``job_id, submit, start = submit + wait, end = start + run_time, wait, procs`` (allocated,
    else requested; 0 when both are unknown, and the caller leaves the job out)."""
    start = jobs["submit"].to_numpy(float) + jobs["wait"].to_numpy(float)
    procs = np.where(jobs["alloc_procs"] > 0, jobs["alloc_procs"], jobs["req_procs"])
    return pd.DataFrame(
        {
            "job_id": jobs["job_id"].to_numpy(),
            "submit": jobs["submit"].to_numpy(float),
            "start": start,
            "end": start + jobs["run_time"].to_numpy(float),
            "wait": jobs["wait"].to_numpy(float),
            "procs": np.maximum(procs, 0).astype(np.int64),
        }
    )


def _recorded_utilisation(sched: pd.DataFrame, total_procs: int) -> float:
    """Busy share of the machine from the first submit to the last end of a recorded schedule."""
    span = float(sched["end"].max() - sched["submit"].min())
    busy = float((sched["procs"] * (sched["end"] - sched["start"])).sum())
    return busy / (total_procs * span) if span > 0 else 0.0


def predict(
    trace: Any,
    *,
    machine: Any = None,
    procs: int | None = None,
    policy: str = "fcfs",
    partition: int | str | None = None,
    classes: str | None = None,
    sequential: bool = True,
    fit: CLM | str | os.PathLike[str] | None = None,
    fit_window: Sequence[Any] | None = None,
    window: Sequence[Any] | None = None,
    periods: Sequence[Any] | None = None,
    threshold: float = 32,
    overdue: str = "tail",
    whole_queue: bool = True,
    whole_queue_sample: int = 2000,
    trim: float = 0.1,
    lenient: bool = False,
    schedule: str = "simulated",
) -> PredictionResult:
    """Fit the CLM, simulate, and evaluate predictors A, B, combined (and whole-queue) on the schedule.

    ``trace``: an SWF path or :class:`~o2ksim.workloads.swf.Trace`;
    ``partition``: keep only this partition (number or header name, SWF field
    16; the paper: ``"batch"``); the machine is ``procs`` processors, else
    ``machine`` (one host), else the partition's size if the header names it
    (SDSC-Par: 352 batch nodes), else the header's MaxProcs.  ``policy``:
    ``fcfs`` (the paper) or ``fcfs-backfill``.  ``classes``: the grouping rule
    (:func:`~o2ksim.prediction.model.parse_class_rule`; default ``queue``).  ``fit``: a fitted
    :class:`CLM` or its TOML; otherwise fitted on ``fit_window`` (dates or
    trace seconds; default the whole trace, as the paper does).  ``window``:
    score only events in it.  ``periods``: boundaries ``[p0, p1, ..., pK]``
    for D§6.1 (each interval predicted with the fit of the previous one) and
    the D Table 5 medians.  ``threshold``: n' from which the combined
    predictor uses B.  ``whole_queue``: also predict the whole queue time of
    every arrival that waits (beyond the paper), on ``whole_queue_sample``
    evenly spaced arrivals (0: all of them).  ``overdue``: jobs older than their class's t_max
    (``release`` or ``hold``, see :func:`~o2ksim.prediction.model.conditional_cdf`).
    ``schedule``: ``simulated`` (the paper: the jobs simulated under
    ``policy``) or ``recorded`` (what really happened: each job starts at
    submit + its recorded wait, SWF field 3, and runs its recorded runtime on
    its allocated processors; jobs without a recorded wait are left out and
    counted, ``config["no_recorded_wait"]``; ``policy`` is not used).
    """
    if schedule not in SCHEDULES:
        raise O2KSimError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    if policy not in POLICIES:
        raise O2KSimError(
            f"policy must be one of {', '.join(POLICIES)} (predictions assume FCFS order), got {policy!r}"
        )
    if overdue not in OVERDUE_MODES:
        raise O2KSimError(f"overdue must be one of {', '.join(OVERDUE_MODES)}, got {overdue!r}")
    check_number(whole_queue_sample, "predict", "whole_queue_sample", minimum=0,
                 maximum=2**63 - 1, integer=True)  # fmt: skip  (0: all)
    check_number(threshold, "predict", "threshold", minimum=0, exclusive_minimum=True,
                 maximum=MAX_PROCS)  # fmt: skip  (a processor count n')
    if procs is not None:
        check_count(procs, "predict", "procs")
    check_flags("predict", sequential=sequential, whole_queue=whole_queue, lenient=lenient)
    check_number(trim, "predict", "trim", minimum=0, maximum=0.5)  # and below 0.5: fit_class
    if classes is not None:
        check_str(classes, "predict", "classes")
    if fit is not None and not isinstance(fit, CLM):
        check_path(fit, "predict", "fit", also=" (a fitted model's TOML) or a CLM")
    if periods is not None and (isinstance(periods, str) or not isinstance(periods, Sequence)):
        raise O2KSimError(f"periods: expected boundaries [p0, p1, ..., pK], got {shown(periods)}")
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    tr = load_workload(trace, lenient=lenient)
    source = str(tr.source or "the trace")
    jobs = select_jobs(tr.jobs, tr.header, partition=partition, source=source)
    jobs = jobs[jobs["run_time"] >= 0].sort_values("submit", kind="stable", ignore_index=True)
    if len(jobs) < 2:
        raise O2KSimError(f"{source}: too few jobs to evaluate predictions ({len(jobs)})")
    mach = _machine(tr, machine, procs, partition)
    win = _window(window, tr, "window")  # the times are read before any fit or simulation
    bounds = None if periods is None else [_time(p, tr, "periods") for p in periods]
    if bounds is not None and (
        len(bounds) < 3 or any(b <= a for a, b in itertools.pairwise(bounds))
    ):
        raise O2KSimError("periods: needs at least three increasing boundaries (two intervals)")
    fit_opts: dict[str, Any] = {
        "rule": classes or "queue",
        "sequential": sequential,
        "trim": trim,
        "source": source,
    }
    if fit is not None and fit_window is not None:
        raise O2KSimError("give either fit (a fitted model) or fit_window, not both")
    if fit is not None and classes is not None:
        raise O2KSimError(
            "a fitted model (fit) brings its own class rule; do not give classes with it"
        )
    if isinstance(fit, CLM):
        clm = fit
    elif fit is not None:
        clm = load_clm(fit)
    else:
        clm = fit_clm(jobs, tr.header, window=_window(fit_window, tr, "fit_window", jobs), **fit_opts)
    timings["load_fit"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    no_wait = 0
    sim_summary: dict[str, Any] = {}
    if schedule == "recorded":
        known = (jobs["wait"] >= 0).to_numpy()
        no_wait = int((~known).sum())
        jobs = jobs.loc[known].reset_index(drop=True)
        if len(jobs) < 2:
            raise O2KSimError(
                f"{source}: {len(jobs)} jobs have a recorded wait (SWF field 3); too few to evaluate predictions"
            )
        sched = recorded_schedule(jobs)
        started = (sched["procs"] > 0).to_numpy()
        reasons = ["no processor count recorded (SWF fields 5 and 8)"] * int((~started).sum())
    else:
        with warnings.catch_warnings():  # said below, naming the trace, not "the workload"
            warnings.simplefilter("ignore", PerfectEstimatesWarning)
            sim = simulate(jobs, mach, policy)
        note = perfect_estimates_note(jobs, source)
        if note:  # `o2ksim predict` prints it in one line, as `o2ksim run` does
            warnings.warn(note, PerfectEstimatesWarning, stacklevel=2)
        sim_summary = sim.summary
        sched = sim.jobs.set_index("job_id").loc[jobs["job_id"]].reset_index()
        started = sched["start"].notna().to_numpy()
        reasons = sched["reason"].loc[~started].tolist()
    rejected = int((~started).sum())  # e.g. unknown processor counts: the engine rejects them
    left_out = pd.DataFrame({"job_id": sched["job_id"].loc[~started].to_numpy(), "reason": reasons})
    sched = sched.loc[started].reset_index(drop=True)
    jobs = jobs.loc[started].reset_index(drop=True)
    timings["simulate"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    labels = clm.labels(jobs, tr.header)
    sched["procs"] = sched["procs"].astype(np.int64)
    rp = replay(sched, labels, mach.total_procs)
    ev = rp.events
    head = (ev["kind"] == "head").to_numpy() & (ev["need"] > 0).to_numpy()
    if win is not None:
        t = ev["time"].to_numpy()
        head &= (t >= win[0]) & (t < win[1])
    timings["replay"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = score_heads(rp, clm, head, threshold=threshold, overdue=overdue)
    timings["head_predictions"] = time.perf_counter() - t0
    frames = [pred]
    if whole_queue:
        t0 = time.perf_counter()
        frames.append(
            score_whole_queue(rp, clm, overdue=overdue, window=win, sample=whole_queue_sample)
        )
        timings["whole_queue_predictions"] = time.perf_counter() - t0
    predictions = pd.concat(frames, ignore_index=True)

    another = medians = None
    if periods is not None and bounds is not None:
        labels_p = [str(p) for p in periods]
        iv = [
            (f"{labels_p[i]}..{labels_p[i + 1]}", bounds[i], bounds[i + 1])
            for i in range(len(bounds) - 1)
        ]
        medians = median_table(jobs, tr.header, iv, rule=clm.rule, trim=trim, source=source)
        another = another_time(
            rp, jobs, tr.header, iv, fit_opts, threshold=threshold, overdue=overdue
        )

    config = {
        "trace": source,
        "partition": None if partition is None else str(partition),
        "jobs": len(jobs),
        "rejected_by_simulation": rejected,
        "machine": mach.name,
        "procs": mach.total_procs,
        "policy": "recorded schedule" if schedule == "recorded" else policy,
        "schedule": schedule,
        "no_recorded_wait": no_wait,
        "classes": clm.rule.text,
        "sequential_class": clm.rule.sequential,
        "fit": str(fit)
        if fit is not None and not isinstance(fit, CLM)
        else ("window" if fit_window else "whole trace"),
        "fit_window": None if fit_window is None else [str(x) for x in fit_window],
        "window": None if window is None else [str(x) for x in window],
        "threshold": threshold,
        "overdue": overdue,
        "trim": trim,
        "whole_queue_sample": whole_queue_sample if whole_queue else None,
        "head_events": int(((ev["kind"] == "head") & (ev["need"] > 0)).sum()),
        "head_events_without_need": int(((ev["kind"] == "head") & (ev["need"] <= 0)).sum()),
        "mean_wait": float(
            sched["wait"].mean()
            if schedule == "recorded"
            else sim_summary.get("mean_wait", float("nan"))
        ),
        "utilisation": float(
            _recorded_utilisation(sched, mach.total_procs)
            if schedule == "recorded"
            else sim_summary.get("utilisation", float("nan"))
        ),
    }
    return PredictionResult(
        predictions=predictions,
        summary=summarise(predictions),
        by_need=by_need(predictions),
        clm=clm,
        schedule=sched,
        config=config,
        another_time=another,
        medians=medians,
        timings=timings,
        left_out=left_out,
    )
