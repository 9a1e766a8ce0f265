"""Replaying a simulated schedule as the events at which D§5 asks for a prediction.

* **head-of-queue events** (D§5): job ``k`` reaches the head of the queue at
  ``h_k = max(submit_k, latest start of the jobs before it in queue order)``;
  if it cannot start then (``start_k > h_k``), the predictors see the machine
  at ``h_k`` -- the jobs running then, their ages ``h_k - start_i``, sizes and
  classes -- and ``n' = n_k - free``; the actual value is ``start_k - h_k``;
* **arrival events** (beyond the paper, D§7.1): every job that does not start
  when it arrives; the actual value is ``start_k - submit_k``.

A job that starts in the same instant as ``h_k`` but later in queue order (a
backfilled job) is not part of the state the head job saw.  The machine state
of all events is kept flat (one row per running job and event), so that the
predictors run vectorised over every event at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.prediction.model import CLM
from o2ksim.prediction.predictors import States

__all__ = ["Replay", "replay"]


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
