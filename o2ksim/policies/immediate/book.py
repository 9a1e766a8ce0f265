"""Trials in progress, the victims they owe processors to, and the immediate-service counters.

:class:`TrialBook` records each trial and its victims; :func:`borrowed_view`
gives the snapshot a backfill pass must see while victims are owed their
processors (they hold them, as :class:`Borrowed` stand-ins for the jobs).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any, cast

from o2ksim.engine.decisions import Resume
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.policies.immediate.trials import TrialPlan


class Borrowed:
    """A preempted job as the backfill pass must see it: holding the processors it will
    take back when the trial that preempted it ends, until its request is served."""

    __slots__ = (
        "alloc_mem", "alloc_procs", "host", "id", "job", "resume_at", "spec", "state", "time_limit",
    )  # fmt: skip

    def __init__(self, job: Job, resume_at: float) -> None:
        self.job = job
        self.spec = job.spec
        self.id = job.id
        self.host = job.host
        self.state = JobState.RUNNING
        self.alloc_procs = job.resume_procs
        self.alloc_mem = job.alloc_mem
        self.resume_at = resume_at
        self.time_limit = math.inf

    @property
    def last_start(self) -> float:
        return self.resume_at

    def predicted_end(self, now: float) -> float:
        spec = self.spec
        done = self.job.work_done(now)
        owed = spec.procs * spec.req_time - done
        if owed <= 0 and self.job.overrun_time:  # overrun rule "requested": raised to R
            owed = spec.procs * self.job.overrun_time - done
        start = max(self.resume_at, now)
        return start + max(owed, 0.0) / self.alloc_procs


@dataclass
class TrialBook:
    """Trials in progress and what they owe; the immediate-service counters.

    ``start`` records a planned trial; ``ended`` notes the trials that left
    (completed or requeued) and any of their victims still preempted (the
    engine resumes them itself when their processors are free at the trial's
    end, ``Start.resumes``); ``resume`` returns the ``Resume`` decisions for
    those; ``borrowed`` gives, per host, the victims still owed processors.
    """

    running: dict[int, tuple[Job, tuple[Job, ...]]] = field(default_factory=dict)
    to_resume: dict[str, list[Job]] = field(default_factory=dict)
    given: set[int] = field(default_factory=set)
    completed: set[int] = field(default_factory=set)
    preempting: set[int] = field(default_factory=set)
    preemptions: int = 0

    def start(self, plan: TrialPlan) -> None:
        self.running[plan.job.id] = (plan.job, plan.victims)
        self.given.add(plan.job.id)
        if plan.victims:
            self.preempting.add(plan.job.id)
            self.preemptions += len(plan.victims)

    def ended(self, departed: Iterable[Job]) -> None:
        """Note the trials among ``departed`` that left (completed or back in the queue)."""
        for job in departed:
            entry = self.running.pop(job.id, None)
            if entry is None:
                continue
            if job.state is JobState.COMPLETED:
                self.completed.add(job.id)
            for v in entry[1]:
                if v.state is JobState.PREEMPTED:
                    self.to_resume.setdefault(v.host or "", []).append(v)

    def resume(self, free: dict[str, list[float]]) -> tuple[list[Any], list[Job]]:
        """``Resume`` every victim whose trial has ended and whose processors are free.

        Returns the decisions and the jobs they resume (their processors are
        booked in ``free``); a victim that does not fit yet stays owed.
        """
        out: list[Any] = []
        resumed: list[Job] = []
        for host, waiting in list(self.to_resume.items()):
            f = free[host]
            left = []
            for v in waiting:
                if v.state is not JobState.PREEMPTED:
                    continue
                if v.resume_procs <= f[0]:
                    f[0] -= v.resume_procs
                    resumed.append(v)
                    out.append(
                        Resume(v, note="the trial that preempted it has ended; "
                                       f"back on its {v.resume_procs} processors")
                    )  # fmt: skip
                else:
                    left.append(v)
            if left:
                self.to_resume[host] = left
            else:
                del self.to_resume[host]
        return out, resumed

    def borrowed(self, now: float, resumed: Iterable[Job] = ()) -> dict[str, list[Borrowed]]:
        """Per host: the preempted victims still owed processors, with when they get them
        back (``resumed``: victims being resumed in this pass, i.e. now)."""
        out: dict[str, list[Borrowed]] = {}
        for trial, victims in self.running.values():
            at = trial.predicted_end(now)
            for v in victims:
                if v.state is JobState.PREEMPTED:
                    out.setdefault(v.host or "", []).append(Borrowed(v, at))
        for v in chain(resumed, chain.from_iterable(self.to_resume.values())):
            if v.state is JobState.PREEMPTED:
                out.setdefault(v.host or "", []).append(Borrowed(v, now))
        return out

    def summary_counts(self, ids: Collection[int] | None = None) -> dict[str, int]:
        """The immediate-service counters over ``ids`` (e.g. the analysed jobs) or every job:
        trials given, trials that completed the job, trials that preempted someone."""

        def n(s: set[int]) -> int:
            return len(s if ids is None else s.intersection(ids))

        # a trial that finished after the last pass that ran is not noted yet (the
        # engine skips passes with nothing to decide): count it here
        done = JobState.COMPLETED
        completed = self.completed | {i for i, (t, _) in self.running.items() if t.state is done}
        return {
            "immediate_service_jobs": n(self.given),
            "immediate_service_completed": n(completed),
            "immediate_service_preempting": n(self.preempting),
        }


def borrowed_view(snap: Snapshot, borrowed: dict[str, list[Borrowed]]) -> Snapshot:
    """``snap`` as the backfill pass must see it: preempted victims hold what they are owed."""
    hosts = []
    for h in snap.hosts:
        items = borrowed.get(h.name)
        if not items:
            hosts.append(h)
            continue
        owed = sum(b.alloc_procs for b in items)
        version = hash((h.version, tuple((b.id, b.resume_at) for b in items)))
        hosts.append(
            HostView(
                h.spec,
                h.free_procs - owed,
                h.free_mem,
                (*h.running, *cast("list[Job]", items)),  # duck-typed: see Borrowed
                tuple(p for p in h.preempted if all(p is not b.job for b in items)),
                version,
            )
        )
    views = tuple(hosts)
    return replace(snap, hosts=views, host_by_name={v.name: v for v in views})
