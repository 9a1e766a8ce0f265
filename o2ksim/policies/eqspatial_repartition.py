"""EQspatial's third step (T§3.2.3): each host whose allocation may have changed is
repartitioned when its MinInterval allows, or, until it does, lets its newly placed jobs
run on its free processors and asks for a pass at the time it may.

A *repartitioning* recomputes the equal shares of the host's jobs
(:func:`~o2ksim.policies.equipartition.host_allocation`: catching-up jobs, then long-running
ones, get their requests first) and resizes at least one running job; only those count
against MinInterval.  Jobs shrink first, then placed jobs start, then jobs grow, so the
engine never sees an over-commit.  A job's catch-up and long-job timers follow its
processors.

:class:`Repartitioning` holds these methods; :class:`~o2ksim.policies.eqspatial.EQSpatial`
inherits them and owns the state they read (its ``_reset``; declared below for the type
checker), as one policy split in two files by step.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from o2ksim.clock import clock
from o2ksim.engine.decisions import Resize, Start, WakeAt
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.policies.eqspatial_params import repartition_note
from o2ksim.policies.equipartition import (
    Deadlines,
    HostJob,
    HostState,
    RepartitionClock,
    equipartition,
    host_allocation,
)

CATCHING_UP, LONG_RUNNING = 1, 2  # HostJob.privileged


class Repartitioning:
    """EQspatial's repartitioning step, mixed into :class:`~o2ksim.policies.eqspatial.EQSpatial`."""

    # the policy's state these methods read and change (EQSpatial._reset sets it)
    _blocked: set[str]  # hosts a trial run holds this pass
    _clock: RepartitionClock
    _in_trial: set[int]
    _credit: dict[int, float]
    _long: set[int]
    _notes: dict[int, str]
    _long_due: Deadlines
    _catchup_due: Deadlines
    _job_counts: dict[str, set[int]]
    counters: Counter[str]
    whole_long: bool
    work_clock: bool
    long_threshold: float | None
    min_interval: float

    def _count(self, what: str, job_id: int) -> None:
        self._job_counts[what].add(job_id)

    def _resolve(self, h: HostState, view: HostView, snap: Snapshot, out: list[Any]) -> None:
        now = snap.now
        if view.preempted or h.name in self._blocked:
            return  # a trial run holds processors (maybe of preempted jobs): wait until it ends
        if h.dirty and self._clock.can(h.name, now):
            self._repartition(h, view, snap, out)
            return
        if h.pending:
            self._start_on_free(h, view, snap, out)
        if h.dirty and h.timer is None:
            h.timer = self._clock.next_allowed(h.name)
            tag = "repartition"
            if snap.explain:
                last = clock(self._clock.last[h.name])
                tag += f": {', '.join(h.reasons)}; {h.name} last repartitioned at {last}"
            out.append(WakeAt(h.timer, h.name, tag))

    def _host_jobs(self, h: HostState, now: float) -> list[HostJob]:
        out = []
        for job in h.jobs.values():
            if job.id in self._in_trial:
                continue  # in its trial run elsewhere: no share until it is back
            if job.id in self._credit:
                kind = CATCHING_UP
            elif job.id in self._long:
                kind = LONG_RUNNING
            else:
                kind = 0
            started = job.first_start if job.state is JobState.RUNNING else now
            out.append(HostJob(job.id, job.procs, kind, started,
                               (-job.alloc_procs, job.spec.submit, job.id)))  # fmt: skip
        return out

    def _repartition(self, h: HostState, view: HostView, snap: Snapshot, out: list[Any]) -> None:
        now = snap.now
        target = host_allocation(h.capacity, self._host_jobs(h, now), self.whole_long)
        shrink, grow, start = [], [], []
        for job in h.jobs.values():
            if job.id in self._in_trial:
                continue
            new = target[job.id]
            if job.id in h.pending:
                if new > 0:
                    start.append((job, new))
            elif new < job.alloc_procs:
                shrink.append((job, new))
            elif new > job.alloc_procs:
                grow.append((job, new))
        resized = len(shrink) + len(grow)
        if resized:
            self._clock.mark(h.name, now)
            self.counters["repartitions"] += 1
            self.counters["resizes"] += resized
        note = rest = ""
        if snap.explain:
            note = repartition_note(h, target, self._credit, self._long, self.long_threshold,
                                    self.min_interval, now, resized > 0)  # fmt: skip
            rest = f"same repartitioning of {h.name}" if resized else ""
        for job, new in shrink:
            out.append(Resize(job, new, note=note))
            note = rest or note
        for job, new in start:
            self._start(h, job, new, now, out, note)
            note = rest or note
        for job, new in grow:
            out.append(Resize(job, new, note=note))
            note = rest or note
        for job, new in shrink + grow:
            self._catchup_timer(h, job, new, now, out)
            if self.work_clock and job.id in self._long_due:
                self._long_timer(job, now, new, out)
        h.dirty = False
        h.reasons.clear()

    def _start_on_free(self, h: HostState, view: HostView, snap: Snapshot, out: list[Any]) -> None:
        """The host may not repartition yet: placed jobs share the free processors (T§3.2.3)."""
        free = view.free_procs
        if free <= 0:
            return
        jobs = [j for j in h.pending.values() if j.id not in self._in_trial]
        shares = equipartition(free, [j.procs for j in jobs])
        note = ""
        if snap.explain:
            note = (f"runs on free processors until {h.name} may repartition at "
                    f"{clock(self._clock.next_allowed(h.name))}")  # fmt: skip
        for job, n in zip(jobs, shares, strict=True):
            if n > 0:
                self._start(h, job, n, snap.now, out, note)
                self._count("started_on_free", job.id)

    def _start(self, h: HostState, job: Job, procs: int, now: float, out: list[Any], note: str) -> None:
        del h.pending[job.id]
        h.pending_mem -= job.mem
        placed = self._notes.pop(job.id, "")
        if placed:
            note = f"{placed}; {note}" if note else placed
        out.append(Start(job, h.name, procs=procs, note=note))
        threshold = self.long_threshold
        if self.work_clock:
            self._long_timer(job, now, procs, out)
        elif threshold is not None:  # its real start (a trial run before it does not count)
            self._long_due.set(job.id, now + threshold)
            out.append(WakeAt(now + threshold, h.name, "long-running"))
        self._catchup_timer(h, job, procs, now, out)

    def _long_timer(self, job: Job, now: float, procs: int, out: list[Any]) -> bool:
        """``long_job_clock = work``: when ``job`` will have run the threshold on its request
        at ``procs`` processors; ``False`` if it has already."""
        owed = (self.long_threshold or 0.0) * job.procs - job.work_done(now)
        if owed <= 1e-6 * job.procs or self.long_threshold is None:
            return False
        when = now + owed / (procs or job.resume_procs or job.procs)  # early is safe: re-checked
        if self._long_due.set(job.id, when):
            out.append(WakeAt(when, tag="long-running"))
        return True

    def _catchup_timer(self, h: HostState, job: Job, procs: int, now: float, out: list[Any]) -> None:
        credit = self._credit.get(job.id)
        if credit is None or procs <= 0:
            return
        owed = max(0.0, credit - job.work_done(now))
        when = now + owed / procs
        if self._catchup_due.set(job.id, when):
            out.append(WakeAt(when, h.name, "caught up"))


__all__ = ["CATCHING_UP", "LONG_RUNNING", "Repartitioning"]
