"""Scoring predictions against a replayed schedule: accuracy, per-event predictions, D§6.1.

Accuracy (D§5): the coefficient of correlation (CC, Pearson) of predicted and
actual queue times, the CC of their logarithms (both floored at 1 s), median
and mean absolute error (:func:`accuracy`).  The other functions turn the
events of a :class:`~o2ksim.prediction.replay.Replay` into long tables of
predictions (one row per event and predictor) and summarise them.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.prediction.model import CLM, fit_clm
from o2ksim.prediction.predictors import combined, predict_states, whole_queue
from o2ksim.prediction.replay import Replay

__all__ = [
    "accuracy",
    "another_time",
    "by_need",
    "score_heads",
    "score_whole_queue",
    "summarise",
]


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


def score_heads(
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


def summarise(pred: pd.DataFrame) -> pd.DataFrame:
    """One row per (kind, predictor): events, events without a prediction, and :func:`accuracy`."""
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


def by_need(pred: pd.DataFrame) -> pd.DataFrame:
    """CC of predictors A and B per range of n' (D§5.3), head events only."""
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


def score_whole_queue(
    rp: Replay, clm: CLM, *, overdue: str, window: tuple[float, float] | None, sample: int
) -> pd.DataFrame:
    """Whole-queue predictions (beyond the paper, D§7.1) for the arrivals that wait.

    Only arrivals in *window*, and at most *sample* of them, evenly spaced (0: all).
    """
    ev = rp.events
    sel = (ev["kind"] == "arrival").to_numpy()
    if window is not None:
        t = ev["time"].to_numpy()
        sel = sel & (t >= window[0]) & (t < window[1])  # a new array: to_numpy() may be read-only
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
            t_last=None if st.t_last is None else st.t_last[a:b],
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


def another_time(
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
            p = score_heads(rp, clm, sel, threshold=threshold, overdue=overdue)
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
