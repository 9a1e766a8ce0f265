"""The immediate-service component a backfill policy holds (T§3.2.2, T§5.5).

:class:`ImmediateService` is the one place where immediate service decides:
it is built from the policy's parameters (:meth:`ImmediateService.from_params`,
``None`` when the mode is ``off``), runs around the policy's own pass
(:meth:`ImmediateService.schedule`), answers the engine's pending-work
question and gives the policy's counters.

A pass costs O(log q) per job it offers a trial, not O(q): the jobs awaiting
a trial are kept in an index (:class:`~.awaiting.Awaiting`) that skips the
ones too wide for any host, and dropped when they leave the queue
(``Snapshot.left``) or are started by the pass, not found by a scan.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

from o2ksim.engine.decisions import Start, WakeAt
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.policies.base import Param
from o2ksim.policies.immediate.awaiting import Awaiting
from o2ksim.policies.immediate.book import TrialBook, borrowed_view
from o2ksim.policies.immediate.eligibility import EligibilityCache, VictimLists, next_eligible
from o2ksim.policies.immediate.settings import MODES, PARAMS, TrialSettings
from o2ksim.policies.immediate.trials import is_eligible_victim, plan_trial, trial_decisions


def victims_may_grow_at(snap: Snapshot, t: float, protected: Collection[int]) -> float:
    """The first time after ``snap.now`` at which a running job outside ``protected`` may
    become eligible for preemption (:func:`~.trials.is_eligible_victim`); ``snap.now`` when
    one is within rounding of it now, or its prediction may move.

    Eligible means run uninterrupted for ``t`` and predicted to need more than ``t``.
    For a prediction ``e`` fixed in time (every running job but one the overrun rule
    ``requested`` will raise: :func:`~o2ksim.policies.quiet.first_release`) the second only turns
    false as time goes on, so a job not eligible now is not eligible before
    ``last_start + t``, and never if ``e`` leaves no more than ``t`` after that.
    Both are tested in floats, so the bound is taken a few units in the last
    place early (``lo``): the first condition is false below it whatever the
    rounding, and a bound too early costs one pass, never a missed trial.  Jobs
    with moving predictions get no promise.
    """
    now = snap.now
    soonest = math.inf
    for h in snap.hosts:
        index = h.releases
        if index is None or h.preempted or any(j.overrun_time for j in index.irregular.values()):
            return now
        for v in h.running:
            if v.id in protected or is_eligible_victim(v, now, t):
                continue
            at = v.last_start + t
            lo = at - 4 * math.ulp(at)
            if v.predicted_end(now) - max(lo, now) <= t:
                continue  # needs no more than t once it has run t: never eligible again
            if lo <= now:  # not eligible only by rounding: ask at every tick
                return now
            soonest = min(soonest, lo)
    return soonest


class ImmediateService:
    """Immediate service around a policy's scheduling pass (T§3.2.2; package docstring).

    A backfill policy holds one (``Backfill.immediate``) when its
    ``immediate_service`` parameter is not ``off``, declares :attr:`PARAMS` among
    its own, and hands every pass, the engine's pending-work question and its
    counters to it.  Any policy whose pass returns only ``Start`` (and
    information-only) decisions can hold one the same way.

    ``schedule(snap, inner)`` resumes any victim of an ended trial the engine
    could not resume itself, runs ``inner`` (the backfill pass) on a snapshot
    in which the victims of running trials hold the processors they are owed
    (the plain snapshot when there are none), then gives a trial to each new
    job the pass did not start (and to earlier jobs still waiting for one).
    """

    PARAMS: ClassVar[Mapping[str, Param]] = PARAMS
    """The parameters it takes, which the holding policy declares as its own."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> ImmediateService | None:
        """The component configured by a policy's validated parameters; ``None`` when
        ``immediate_service`` is ``off`` (or absent)."""
        settings = TrialSettings.from_params(params)
        return None if settings.mode == "off" else cls(settings)

    def fresh(self) -> ImmediateService:
        """The same settings with nothing in progress: for the next run (``Policy.bind``)."""
        return type(self)(self.settings)

    def __init__(self, settings: TrialSettings) -> None:
        if settings.mode not in MODES or settings.mode == "off":
            raise ValueError(
                f"immediate service mode must be preemptive or soon, not {settings.mode!r}"
            )
        self.settings = settings
        self.book = TrialBook()
        self._awaiting = Awaiting()  # jobs not given a trial yet, in arrival order
        self._gone: list[Job] = []  # awaiting jobs that left the queue or started, to be dropped
        self._wakes: set[float] = set()
        self._eligibility = EligibilityCache()

    def schedule(
        self,
        snap: Snapshot,
        inner: Callable[[Snapshot], Sequence[Any]],
    ) -> list[Any]:
        """One pass around ``inner`` (the holding policy's own pass, which returns at once
        when it can decide nothing)."""
        now = snap.now
        book = self.book
        awaiting = self._awaiting
        owed: dict[str, int] = {}  # processors the preempted victims will take back, per host
        view = snap
        if book.running or book.to_resume:
            book.ended(snap.departed)
            decisions: list[Any] = []
            resumed: list[Job] = []
            if book.to_resume:
                decisions, resumed = book.resume(
                    {h.name: [h.free_procs, h.free_mem] for h in snap.hosts}
                )
            borrowed = book.borrowed(now, resumed)
            if borrowed:
                view = borrowed_view(snap, borrowed)
                owed = {host: sum(b.alloc_procs for b in items) for host, items in borrowed.items()}
            inner_decisions = inner(view)
            decisions.extend(inner_decisions)
        else:  # no trial running, nobody owed: the pass is the plain backfill pass
            inner_decisions = decisions = list(inner(view))
        for job in snap.arrived:
            if job.state is JobState.QUEUED:
                awaiting.add(job)
        gone = self._gone
        for job in snap.left:  # left the queue since the last pass: to be dropped below
            if job in awaiting:
                gone.append(job)
        if not awaiting:
            return decisions
        preemptive = self.settings.preemptive
        if not preemptive:  # soon: a trial needs free processors, which this pass cannot add
            most = max(h.free_procs for h in snap.hosts)
            if awaiting.smallest > most:  # every awaiting job (none dropped yet) asks more
                return decisions
        started: set[int] = set()
        for d in inner_decisions:
            if isinstance(d, Start):
                started.add(d.job.id)
                if d.job in awaiting:
                    gone.append(d.job)
        # drop the jobs started by this pass or no longer queued: only the jobs that left
        # the queue or started since the last drop can be either (the others are queued)
        queued = JobState.QUEUED
        for job in gone:
            if job in awaiting and (job.id in started or job.state is not queued):
                awaiting.remove(job)
        gone.clear()
        if not awaiting:
            return decisions
        free = {h.spec.name: [h.free_procs, h.free_mem] for h in snap.hosts}
        for host, procs in owed.items():
            free[host][0] -= procs
        for d in inner_decisions:
            if isinstance(d, Start):
                f = free[d.host]
                f[0] -= d.job.spec.procs if d.procs is None else d.procs
                f[1] -= d.job.spec.mem if d.mem is None else d.mem
        if decisions is inner_decisions:
            decisions = list(decisions)
        protected = set(book.running)
        victims = VictimLists(now, self.settings.eligible_after, protected, self._eligibility)
        # Most processors a trial could get on one host now (an upper bound), worked out
        # after a search fails so that later jobs too wide for it skip the search; not
        # before, as a search that succeeds usually stops at the first host it can fill
        # exactly and needs no other host's eligible jobs.  The jobs are offered a trial
        # in arrival order; `first` skips those asking more than `room`.
        room = math.inf
        place = awaiting.first(0, room)
        while place >= 0:
            job = awaiting.job_at(place)
            plan = plan_trial(
                job, snap.hosts, free, now, self.settings,
                preempt=preemptive, victims=victims,
            )  # fmt: skip
            if plan is None:
                if preemptive:
                    room = max(free[h.spec.name][0] + victims.total(h) for h in snap.hosts)
                else:
                    room = max(f[0] for f in free.values())
                place = awaiting.first(place + 1, room)
                continue
            awaiting.remove(job)
            f = free[plan.host]
            f[0] += sum(v.alloc_procs for v in plan.victims) - job.spec.procs
            f[1] -= plan.mem
            book.start(plan)
            protected.add(job.id)
            victims.remove(plan.victims)  # still "running" in this snapshot
            room = math.inf
            decisions.extend(trial_decisions(plan, self.settings, now))
            place = awaiting.first(place + 1, room)
        if awaiting and self.settings.preemptive:
            fresh = [d.job for d in inner_decisions if isinstance(d, Start)]
            decisions.extend(self._next_eligibility(snap, protected, fresh))
        return decisions

    def quiet_until(self, snap: Snapshot) -> float:
        """After a pass that decided nothing on ``snap``: until when a pass on the same
        state gives no trial either (the holding policy's own pass bounded apart,
        :mod:`o2ksim.policies.quiet`); ``snap.now`` for no promise.

        Nothing owed: no victim waits to be resumed (else ``now``).  A job still
        awaiting a trial was refused one on every host: ``soon`` needs free
        processors, which do not change without an event (``inf``); ``preemptive``
        needs the free processors and the eligible running jobs of one host to
        reach its request (:func:`~.trials.choose_victims` succeeds exactly
        then, whatever their order), so it stays refused until a running job
        becomes eligible (:func:`victims_may_grow_at`).  A trial whose victims
        are preempted leaves its host's ``preempted`` non-empty, for which the
        holding policy promises nothing.
        """
        now = snap.now
        if self.book.to_resume:
            return now
        if not self._awaiting or not self.settings.preemptive:
            return math.inf
        protected = set(self.book.running)
        return victims_may_grow_at(snap, self.settings.eligible_after, protected)

    def _next_eligibility(
        self, snap: Snapshot, protected: set[int], fresh: Sequence[Job]
    ) -> list[WakeAt]:
        """A pass when the next running job becomes eligible for preemption (T§3.4).

        ``fresh`` are the jobs started as full jobs in this pass (not yet running
        in the snapshot): they become eligible ``t`` from now.
        """
        now = snap.now
        t = self.settings.eligible_after
        soonest = next_eligible(snap.hosts, now, t, protected)
        if any(j.spec.req_time > 2 * t for j in fresh) and now + t < soonest:
            soonest = now + t
        self._wakes = {w for w in self._wakes if w > now}
        if not now < soonest < math.inf or soonest in self._wakes:
            return []
        self._wakes.add(soonest)
        return [
            WakeAt(soonest, tag="immediate service: a running job becomes eligible for preemption")
        ]

    def summary_counts(self, ids: Collection[int] | None = None) -> dict[str, int]:
        """Trials given, completed in their trial and preempting someone, over ``ids``
        (the analysed jobs; ``None``: every job): the holding policy's counters."""
        return self.book.summary_counts(ids)

    def stats(self) -> dict[str, float]:
        """The counters over every job of the run and the preemptions trials made (``run.json``)."""
        return {**self.book.summary_counts(), "trial_preemptions": self.book.preemptions}
