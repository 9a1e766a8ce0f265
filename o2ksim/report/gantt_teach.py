"""What a teaching Gantt chart marks beyond the allocations, and how it is recorded.

:class:`Teaching` holds the decision information a chart cannot read from the
allocation segments: arrivals, requested runtimes and processors, backfilled
jobs, requeued trials, and every reservation with its history (where it was
made, where it slid, when the job started).  :class:`GanttRecorder` fills one
during a run (an observer; reservations need ``explain=True``);
:func:`teaching_from_jobs` fills what a job table knows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from o2ksim.engine.decisions import Reserve, Start
from o2ksim.engine.monitor import Observer
from o2ksim.jobs import Job, JobState


@dataclass
class Reservation:
    """One reservation of a job, from the pass that made it to the job's start.

    ``positions``: ``(when, reserved start)`` -- the first is where it was made
    (T§3.2.1 Fig. 2's t0 and t2), each later one a pass that moved it (it slid
    earlier when jobs ended before their requested times, or later behind a
    requeued trial); ``start``: when the job started (``None``: not in the run).
    """

    job: int
    host: str
    positions: list[tuple[float, float]]
    start: float | None = None

    @property
    def made(self) -> float:
        return self.positions[0][0]

    @property
    def at(self) -> float:
        """The last reserved start."""
        return self.positions[-1][1]


@dataclass
class Teaching:
    """What a teaching Gantt chart marks beyond the allocations (all optional).

    ``submit``/``requested``/``procs``: per job id, arrival time, requested
    runtime and processors (from ``Result.jobs``); ``backfilled``: ids of jobs
    started by backfilling; ``reservations``: ``(job, host, at)`` -- the first
    reserved start (shadow time) of each job that got a reservation;
    ``history``: every :class:`Reservation` with where it slid.  Filled by
    :class:`GanttRecorder` during a run, or by :func:`teaching_from_jobs`.
    """

    submit: dict[int, float] = field(default_factory=dict)
    requested: dict[int, float] = field(default_factory=dict)
    backfilled: set[int] = field(default_factory=set)
    reservations: list[tuple[int, str, float]] = field(default_factory=list)
    requeued: dict[int, list[float]] = field(default_factory=dict)
    """Per job, when a trial run of it ended and it went back to the queue (T§3.2.2)."""
    requeued_only: set[int] = field(default_factory=set)
    """Jobs (from a job table) restarted but never preempted: every gap is a requeue."""
    procs: dict[int, int] = field(default_factory=dict)
    history: list[Reservation] = field(default_factory=list)


def teaching_from_jobs(jobs: pd.DataFrame) -> Teaching:
    """Arrivals, requested runtimes and processors from a per-job table (no decision
    information: no reservations, no backfill tags)."""
    ids = jobs["job_id"].astype(int).tolist()
    requeued_only: set[int] = set()
    if "restarts" in jobs and "preemptions" in jobs:
        only = (jobs["restarts"] > 0) & (jobs["preemptions"] == 0)
        requeued_only = set(jobs.loc[only, "job_id"].astype(int))
    procs = dict(zip(ids, jobs["procs"].astype(int), strict=True)) if "procs" in jobs else {}
    return Teaching(
        submit=dict(zip(ids, jobs["submit"].astype(float), strict=True)),
        requested=dict(zip(ids, jobs["req_time"].astype(float), strict=True)),
        requeued_only=requeued_only,
        procs=procs,
    )


class GanttRecorder(Observer):
    """Collects a :class:`Teaching` during a run (attach it with ``observers=[...]``).

    Reservations are reported only when the run is made with ``explain=True``.
    """

    def __init__(self) -> None:
        self.teaching = Teaching()
        self._open: dict[int, Reservation] = {}  # each waiting job's current reservation

    def on_arrival(self, job: Job, now: float) -> None:
        self.teaching.submit[job.id] = job.spec.submit
        self.teaching.requested[job.id] = job.spec.req_time
        self.teaching.procs[job.id] = job.spec.procs

    def on_release(self, job: Job, now: float) -> None:
        if job.state is JobState.QUEUED:  # a trial run over without finishing: requeued
            self.teaching.requeued.setdefault(job.id, []).append(now)

    def on_end(self, job: Job, now: float) -> None:
        res = self._open.pop(job.id, None)  # done without starting at its reservation (a trial)
        if res is not None and job.last_start == job.last_start:  # not NaN: it ran
            res.start = job.last_start

    def on_decision(self, now: float, decision: Any) -> None:
        if isinstance(decision, Start):
            if decision.note.startswith("backfilled"):
                self.teaching.backfilled.add(decision.job.id)
            # a trial run (immediate service) keeps the reservation for when it is requeued
            res = self._open.get(decision.job.id)
            if res is not None and decision.on_limit != "requeue":
                res.start = now
                del self._open[decision.job.id]
        elif isinstance(decision, Reserve):
            job, res = decision.job.id, self._open.get(decision.job.id)
            if res is None or res.host != decision.host:  # a new reservation
                if not any(r[0] == job for r in self.teaching.reservations):
                    self.teaching.reservations.append((job, decision.host, decision.at))
                res = Reservation(job, decision.host, [(now, decision.at)])
                self._open[job] = res
                self.teaching.history.append(res)
            elif res.at != decision.at:  # it moved (slid)
                res.positions.append((now, decision.at))


__all__ = ["GanttRecorder", "Reservation", "Teaching", "teaching_from_jobs"]
