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
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError, output_dir
from o2ksim.prediction.model import (
    CLM,
    OVERDUE_MODES,
    fit_clm,
    load_clm,
    median_table,
    partition_size,
    select_jobs,
)
from o2ksim.prediction.predictors import States, combined, predict_states, whole_queue

__all__ = ["PredictionResult", "accuracy", "predict", "replay"]

POLICIES = ("fcfs", "fcfs-backfill")


# ============================================================================
# replaying a schedule
# ============================================================================


@dataclass
class Replay:
    """Events of a simulated schedule and the machine state at each (flat running-job pairs)."""

    jobs: pd.DataFrame  # schedule in queue order: job_id, submit, start, end, procs, label
    events: pd.DataFrame  # kind, pos (queue position of the job), time, actual, need, running, free
    pair_event: np.ndarray
    pair_job: np.ndarray  # queue position of the running job
    total_procs: int

    def states(self, clm: CLM, select: np.ndarray | None = None) -> tuple[States, np.ndarray]:
        """:class:`States` of the events ``select`` (a boolean mask; all by default) under ``clm``."""
        ev = self.events
        idx = np.arange(len(ev)) if select is None else np.flatnonzero(select)
        remap = np.full(len(ev), -1, dtype=np.int64)
        remap[idx] = np.arange(len(idx))
        keep = remap[self.pair_event] >= 0
        pe = remap[self.pair_event[keep]]
        pj = self.pair_job[keep]
        b0, b1, last = clm.params_of(self.jobs["label"].to_numpy()[pj])
        t = ev["time"].to_numpy()[idx][pe]
        st = States(
            event=pe,
            age=t - self.jobs["start"].to_numpy()[pj],
            procs=self.jobs["procs"].to_numpy()[pj].astype(float),
            beta0=b0,
            beta1=b1,
            need=ev["need"].to_numpy()[idx].astype(float),
            t_last=last,
        )
        return st, idx


def replay(
    schedule: pd.DataFrame, labels: np.ndarray, total_procs: int, *, arrivals: bool = True
) -> Replay:
    """Head-of-queue (and arrival) events of ``schedule`` with the running jobs at each.

    ``schedule`` has one row per job (``job_id, submit, start, end, procs``) in
    the queue order of the simulation (submission order); ``labels`` are the
    jobs' class names in the same order.
    """
    jobs = schedule[["job_id", "submit", "start", "end", "procs"]].reset_index(drop=True).copy()
    jobs["label"] = np.asarray(labels, dtype=object)
    submit = jobs["submit"].to_numpy(dtype=float)
    start = jobs["start"].to_numpy(dtype=float)
    end = jobs["end"].to_numpy(dtype=float)
    procs = jobs["procs"].to_numpy(dtype=np.int64)
    if np.isnan(start).any():
        raise O2KSimError(
            "the simulated schedule has jobs that never started; cannot evaluate predictions"
        )
    n = len(jobs)
    before = np.concatenate([[-np.inf], np.maximum.accumulate(start)[:-1]]) if n else np.empty(0)
    head = np.maximum(submit, before)
    kinds, pos, times, actual = [], [], [], []
    waits_at_head = np.flatnonzero(start > head + 1e-9)
    kinds.append(np.full(len(waits_at_head), "head", dtype=object))
    pos.append(waits_at_head)
    times.append(head[waits_at_head])
    actual.append(start[waits_at_head] - head[waits_at_head])
    if arrivals:
        waits = np.flatnonzero(start > submit + 1e-9)
        kinds.append(np.full(len(waits), "arrival", dtype=object))
        pos.append(waits)
        times.append(submit[waits])
        actual.append(start[waits] - submit[waits])
    ev = pd.DataFrame(
        {
            "kind": np.concatenate(kinds),
            "pos": np.concatenate(pos).astype(np.int64),
            "time": np.concatenate(times),
            "actual": np.concatenate(actual),
        }
    )
    ev = ev.sort_values(["time", "pos", "kind"], kind="stable", ignore_index=True)
    ev_time = ev["time"].to_numpy()
    ev_pos = ev["pos"].to_numpy()
    # every job is running for the events in [start, end): a contiguous range of the sorted events
    lo = np.searchsorted(ev_time, start, side="left")
    hi = np.searchsorted(ev_time, end, side="left")
    cnt = np.maximum(hi - lo, 0)
    pair_job = np.repeat(np.arange(n), cnt)
    offs = np.repeat(np.cumsum(cnt) - cnt, cnt)
    pair_event = np.repeat(lo, cnt) + (np.arange(len(pair_job)) - offs)
    # a job starting in the very pass of the event, behind the event's job in the queue, was not running
    same = (start[pair_job] == ev_time[pair_event]) & (pair_job > ev_pos[pair_event])
    pair_job, pair_event = pair_job[~same], pair_event[~same]
    order = np.argsort(pair_event, kind="stable")
    pair_job, pair_event = pair_job[order], pair_event[order]
    busy = np.bincount(pair_event, weights=procs[pair_job], minlength=len(ev))
    ev["job_id"] = jobs["job_id"].to_numpy()[ev_pos]
    ev["procs"] = procs[ev_pos]
    ev["free"] = total_procs - busy
    ev["need"] = ev["procs"] - ev["free"]
    ev["running"] = np.bincount(pair_event, minlength=len(ev))
    return Replay(jobs, ev, pair_event, pair_job, total_procs)


# ============================================================================
# accuracy
# ============================================================================


def accuracy(predicted: Any, actual: Any) -> dict[str, float]:
    """CC, CC of logs (floored at 1 s), median / mean absolute error of the finite predictions."""
    p = np.asarray(predicted, dtype=float)
    a = np.asarray(actual, dtype=float)
    ok = np.isfinite(p) & np.isfinite(a)
    p, a = p[ok], a[ok]
    out: dict[str, float] = {"predictions": len(p)}
    if len(p) >= 2 and p.std() > 0 and a.std() > 0:
        out["cc"] = float(np.corrcoef(p, a)[0, 1])
        lp, la = np.log10(np.maximum(p, 1.0)), np.log10(np.maximum(a, 1.0))
        out["cc_log"] = (
            float(np.corrcoef(lp, la)[0, 1]) if lp.std() > 0 and la.std() > 0 else float("nan")
        )
    else:
        out["cc"] = out["cc_log"] = float("nan")
    err = np.abs(p - a)
    out["median_abs_error"] = float(np.median(err)) if len(p) else float("nan")
    out["mean_abs_error"] = float(err.mean()) if len(p) else float("nan")
    out["median_actual"] = float(np.median(a)) if len(p) else float("nan")
    out["within_factor_2"] = float(np.mean((p <= 2 * a) & (a <= 2 * p))) if len(p) else float("nan")
    return out


# ============================================================================
# the whole evaluation
# ============================================================================


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
        self.predictions.to_csv(out / "predictions.csv", index=False)
        self.summary.to_csv(out / "summary.csv", index=False)
        self.by_need.to_csv(out / "by_need.csv", index=False)
        self.clm.save(out / "clm.toml")
        self.clm.table().to_csv(out / "clm.csv", index=False)
        if self.another_time is not None:
            self.another_time.to_csv(out / "another_time.csv", index=False)
        if self.medians is not None:
            self.medians.to_csv(out / "medians.csv", index_label="class")
        data = {
            "config": self.config,
            "summary": _records(self.summary),
            "clm": _records(self.clm.table()),
            "another_time": None if self.another_time is None else _records(self.another_time),
            "timings": {k: round(v, 3) for k, v in self.timings.items()},
        }
        (out / "summary.json").write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
        if figure:
            from o2ksim.prediction.plot import scatter_figure

            fig = scatter_figure(self.predictions)
            fig.savefig(out / "fig4.png", dpi=110)
            import matplotlib.pyplot as plt

            plt.close(fig)
        from o2ksim.report.prediction import write_prediction_page

        write_prediction_page(self, out)
        return out


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
    from o2ksim.machine import MachineSpec, load_machine, machine_from_header, single_host

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


def _time(value: Any, trace: Any) -> float:
    from o2ksim.workloads.transforms import parse_time

    return float(parse_time(value, getattr(trace.header, "unix_start_time", None)))


def _window(value: Sequence[Any] | None, trace: Any, what: str) -> tuple[float, float] | None:
    if value is None:
        return None
    if len(value) != 2:
        raise O2KSimError(f"{what} needs START END")
    a, b = _time(value[0], trace), _time(value[1], trace)
    if b <= a:
        raise O2KSimError(f"{what}: END must be after START")
    return a, b


def _score(
    rp: Replay, clm: CLM, select: np.ndarray, *, threshold: float, overdue: str
) -> pd.DataFrame:
    """Predictions A, B, combined for the head events in ``select`` (long format)."""
    st, idx = rp.states(clm, select)
    res = predict_states(st, overdue=overdue)
    ev = rp.events.iloc[idx]
    need = ev["need"].to_numpy(dtype=float)
    comb, _ = combined(res["A"], res["B"], need, threshold)
    base = ev[["job_id", "kind", "time", "need", "running"]].reset_index(drop=True)
    base["benefactors"] = res["benefactors"].astype(int)
    frames = []
    for name, vals in (("A", res["A"]), ("B", res["B"]), ("combined", comb)):
        f = base.copy()
        f["predictor"] = name
        f["predicted"] = vals
        f["actual"] = ev["actual"].to_numpy()
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def _summarise(pred: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (kind, name), g in pred.groupby(["kind", "predictor"], sort=False):
        acc = accuracy(g["predicted"], g["actual"])
        rows.append(
            {
                "kind": kind,
                "predictor": name,
                "events": len(g),
                "no_prediction": int(g["predicted"].isna().sum()),
                **acc,
            }
        )
    return pd.DataFrame(rows)


def _by_need(pred: pd.DataFrame) -> pd.DataFrame:
    bins = [0, 4, 8, 16, 32, 64, 128, np.inf]
    head = pred[pred["kind"] == "head"]
    rows = []
    for lo, hi in itertools.pairwise(bins):
        row: dict[str, Any] = {"need_from": lo + 1, "need_to": hi}
        for name in ("A", "B"):
            g = head[(head["predictor"] == name) & (head["need"] > lo) & (head["need"] <= hi)]
            acc = accuracy(g["predicted"], g["actual"])
            row[f"{name}_predictions"] = acc["predictions"]
            row[f"{name}_cc"] = acc["cc"]
            row[f"{name}_cc_log"] = acc["cc_log"]
        rows.append(row)
    return pd.DataFrame(rows)


def _whole_queue(
    rp: Replay, clm: CLM, *, overdue: str, window: tuple[float, float] | None, sample: int
) -> pd.DataFrame:
    ev = rp.events
    sel = (ev["kind"] == "arrival").to_numpy()
    if window is not None:
        t = ev["time"].to_numpy()
        sel &= (t >= window[0]) & (t < window[1])
    if sample and sel.sum() > sample:
        # evenly spaced arrivals: the fluid replay costs one step per job ahead in the queue
        chosen = np.flatnonzero(sel)[np.linspace(0, sel.sum() - 1, sample).round().astype(np.int64)]
        sel = np.zeros(len(sel), dtype=bool)
        sel[chosen] = True
    st, idx = rp.states(clm, sel)
    bounds = np.searchsorted(st.event, np.arange(len(idx) + 1))
    jobs = rp.jobs
    start = jobs["start"].to_numpy(dtype=float)
    procs = jobs["procs"].to_numpy(dtype=float)
    jb0, jb1, jlast = clm.params_of(jobs["label"].to_numpy())
    started_by = np.maximum.accumulate(start)
    out = np.full(len(idx), np.nan)
    ahead_n = np.zeros(len(idx), dtype=np.int64)
    pos = ev["pos"].to_numpy()[idx]
    times = ev["time"].to_numpy()[idx]
    free = ev["free"].to_numpy()[idx]
    for e in range(len(idx)):
        k, tau = pos[e], times[e]
        first = int(np.searchsorted(started_by[:k], tau, side="right"))
        cand = np.arange(first, k)
        ahead = cand[start[cand] > tau] if len(cand) else cand
        ahead_n[e] = len(ahead)
        a, b = bounds[e], bounds[e + 1]
        out[e] = whole_queue(
            st.age[a:b],
            st.procs[a:b],
            st.beta0[a:b],
            st.beta1[a:b],
            float(free[e]),
            procs[ahead],
            jb0[ahead],
            jb1[ahead],
            float(procs[k]),
            overdue=overdue,
            t_last=st.t_last[a:b],
            ahead_t_last=jlast[ahead],
        )
    evs = ev.iloc[idx].reset_index(drop=True)
    return pd.DataFrame(
        {
            "job_id": evs["job_id"],
            "kind": "arrival",
            "time": evs["time"],
            "need": evs["need"],
            "running": evs["running"],
            "benefactors": ahead_n,  # for arrivals: jobs ahead in the queue
            "predictor": "whole-queue",
            "predicted": out,
            "actual": evs["actual"],
        }
    )


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
    """
    import time as _time_mod

    from o2ksim import simulate
    from o2ksim.run.workload import load_workload

    if policy not in POLICIES:
        raise O2KSimError(
            f"policy must be one of {', '.join(POLICIES)} (predictions assume FCFS order), got {policy!r}"
        )
    if overdue not in OVERDUE_MODES:
        raise O2KSimError(f"overdue must be one of {', '.join(OVERDUE_MODES)}, got {overdue!r}")
    if whole_queue_sample < 0:
        raise O2KSimError(
            f"whole_queue_sample must be 0 (all) or positive, got {whole_queue_sample}"
        )
    if not threshold > 0:
        raise O2KSimError(f"threshold must be positive, got {threshold}")
    timings: dict[str, float] = {}
    t0 = _time_mod.perf_counter()
    tr = load_workload(trace, lenient=lenient)
    source = str(tr.source or "the trace")
    jobs = select_jobs(tr.jobs, tr.header, partition=partition, source=source)
    jobs = jobs[jobs["run_time"] >= 0].sort_values("submit", kind="stable", ignore_index=True)
    if len(jobs) < 2:
        raise O2KSimError(f"{source}: too few jobs to evaluate predictions ({len(jobs)})")
    mach = _machine(tr, machine, procs, partition)
    fit_opts = {
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
        clm = fit_clm(jobs, tr.header, window=_window(fit_window, tr, "fit window"), **fit_opts)
    timings["load_fit"] = _time_mod.perf_counter() - t0

    t0 = _time_mod.perf_counter()
    sim = simulate(jobs, mach, policy)
    sched = sim.jobs.set_index("job_id").loc[jobs["job_id"]].reset_index()
    started = sched["start"].notna().to_numpy()
    rejected = int((~started).sum())  # e.g. unknown processor counts: the engine rejects them
    sched = sched.loc[started].reset_index(drop=True)
    jobs = jobs.loc[started].reset_index(drop=True)
    timings["simulate"] = _time_mod.perf_counter() - t0

    t0 = _time_mod.perf_counter()
    labels = clm.labels(jobs, tr.header)
    sched["procs"] = sched["procs"].astype(np.int64)
    rp = replay(sched, labels, mach.total_procs)
    win = _window(window, tr, "window")
    ev = rp.events
    head = (ev["kind"] == "head").to_numpy() & (ev["need"] > 0).to_numpy()
    if win is not None:
        t = ev["time"].to_numpy()
        head &= (t >= win[0]) & (t < win[1])
    timings["replay"] = _time_mod.perf_counter() - t0
    t0 = _time_mod.perf_counter()
    pred = _score(rp, clm, head, threshold=threshold, overdue=overdue)
    timings["head_predictions"] = _time_mod.perf_counter() - t0
    frames = [pred]
    if whole_queue:
        t0 = _time_mod.perf_counter()
        frames.append(_whole_queue(rp, clm, overdue=overdue, window=win, sample=whole_queue_sample))
        timings["whole_queue_predictions"] = _time_mod.perf_counter() - t0
    predictions = pd.concat(frames, ignore_index=True)

    another = medians = None
    if periods is not None:
        bounds = [_time(p, tr) for p in periods]
        if len(bounds) < 3 or any(b <= a for a, b in itertools.pairwise(bounds)):
            raise O2KSimError("periods needs at least three increasing boundaries (two intervals)")
        labels_p = [str(p) for p in periods]
        iv = [
            (f"{labels_p[i]}..{labels_p[i + 1]}", bounds[i], bounds[i + 1])
            for i in range(len(bounds) - 1)
        ]
        medians = median_table(jobs, tr.header, iv, rule=clm.rule, trim=trim, source=source)
        another = _another_time(
            rp, jobs, tr.header, iv, fit_opts, threshold=threshold, overdue=overdue
        )

    config = {
        "trace": source,
        "partition": None if partition is None else str(partition),
        "jobs": len(jobs),
        "rejected_by_simulation": rejected,
        "machine": mach.name,
        "procs": mach.total_procs,
        "policy": policy,
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
        "mean_wait": float(sim.summary.get("mean_wait", float("nan"))),
        "utilisation": float(sim.summary.get("utilisation", float("nan"))),
    }
    return PredictionResult(
        predictions=predictions,
        summary=_summarise(predictions),
        by_need=_by_need(predictions),
        clm=clm,
        schedule=sched,
        config=config,
        another_time=another,
        medians=medians,
        timings=timings,
    )


def _another_time(
    rp: Replay,
    jobs: pd.DataFrame,
    header: Any,
    intervals: list[tuple[str, float, float]],
    fit_opts: dict[str, Any],
    *,
    threshold: float,
    overdue: str,
) -> pd.DataFrame:
    """D§6.1: each interval after the first predicted with its own fit and with the previous interval's."""
    ev = rp.events
    t = ev["time"].to_numpy()
    head = (ev["kind"] == "head").to_numpy() & (ev["need"] > 0).to_numpy()
    fits = [fit_clm(jobs, header, window=(a, b), **fit_opts) for _, a, b in intervals]
    rows = []
    pooled: dict[str, list[pd.DataFrame]] = {"same": [], "previous": []}
    for i in range(1, len(intervals)):
        label, a, b = intervals[i]
        sel = head & (t >= a) & (t < b)
        for which, clm in (("same", fits[i]), ("previous", fits[i - 1])):
            p = _score(rp, clm, sel, threshold=threshold, overdue=overdue)
            pooled[which].append(p)
            for name, g in p.groupby("predictor", sort=False):
                rows.append(
                    {
                        "interval": label,
                        "parameters": which,
                        "predictor": name,
                        **accuracy(g["predicted"], g["actual"]),
                    }
                )
    for which, frames in pooled.items():
        if not frames:
            continue
        p = pd.concat(frames, ignore_index=True)
        for name, g in p.groupby("predictor", sort=False):
            rows.append(
                {
                    "interval": "pooled",
                    "parameters": which,
                    "predictor": name,
                    **accuracy(g["predicted"], g["actual"]),
                }
            )
    return pd.DataFrame(rows)
