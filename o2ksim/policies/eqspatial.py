"""EQspatial-MinInterval: dynamic equal space partitioning across hosts (T§3.2.3, T§6.1, SPEC §3.4).

Every job gets all the memory it requests; the processors of each host are
repartitioned as equally as possible among the jobs placed on it, never more
than a job requested, with linear slowdown on fewer processors (the engine's
``Resize``).  One pass:

1. books the catch-up credit waiting jobs earned since the last pass
   (:class:`~o2ksim.policies.equipartition.CreditLedger`), forgets departed
   jobs (their host must be repartitioned), notices jobs that finished
   catching up or passed the long-job threshold (``/>50hr``);
2. places new (and, after a departure, waiting) jobs in submission order, each
   on the host with enough free memory and the largest ratio processors /
   requested processors (:func:`~o2ksim.policies.equipartition.choose_host`);
   a job no host can take gets the preemptive immediate service of T§3.2.2
   (a quantum on its requested processors with the initial memory, through
   :mod:`o2ksim.policies.immediate`) and, if it does not finish in it, waits
   in the queue for memory, earning catch-up credit;
3. repartitions each host that needs it, if MinInterval allows and no trial
   run is using (or owes back) processors there
   (:func:`~o2ksim.policies.equipartition.host_allocation`: shrinks first, then
   starts, then grows, so the engine never sees an over-commit); a host that
   may not repartition yet lets newly placed jobs run on its free processors
   (a job that gets none has the T§3.2.2 trial on that host:
   ``new_job_service = immediate``) and asks for a pass at the time it may
   (``WakeAt``, the extra event of T§3.4); this step's methods are in
   :mod:`o2ksim.policies.eqspatial_repartition`.

A *repartitioning* is a recomputation that resizes at least one running job;
only those count against MinInterval (starting a placed job on processors that
are free is not one).  The choices the thesis leaves open: ``docs/background/policies/
eqspatial.md``; four are parameters (:mod:`o2ksim.policies.eqspatial_params`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Set as AbstractSet
from typing import Any, ClassVar

import numpy as np

from o2ksim.engine.decisions import WakeAt
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.machine import MachineSpec
from o2ksim.policies import immediate
from o2ksim.policies.base import POLICIES, Param, Policy
from o2ksim.policies.eqspatial_params import PARAMS
from o2ksim.policies.eqspatial_quiet import DECIDES, quiet_bound
from o2ksim.policies.eqspatial_repartition import Repartitioning
from o2ksim.policies.eqspatial_waiting import WaitingOrder, offer_order
from o2ksim.policies.equipartition import (
    CreditLedger,
    Deadlines,
    HostLoad,
    HostState,
    RepartitionClock,
    choose_host,
    equipartition,
    long_procs,
    placement_ratio,
)
from o2ksim.policies.immediate.hosts import HostTrials
from o2ksim.policies.quiet import proved_for
from o2ksim.units import parse_duration


class EQSpatial(Repartitioning, Policy):
    """EQspatial-MinInterval (T§3.2.3): equal processor shares per host, repartitioned at most every MinInterval."""

    kind = "eqspatial"
    description = "dynamic equal space partitioning per host, MinInterval between repartitionings"
    source = "T§3.2.3, T§6.1"
    follows_free_procs = False  # partitions each host's full size (no availability periods)
    PARAMS: ClassVar[dict[str, Param]] = PARAMS

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        p = self.params
        self.min_interval = parse_duration(p["min_interval"])
        t = p["long_job_threshold"]
        self.long_threshold: float | None = None if t is None else parse_duration(t)
        self.new_job_service: str = p["new_job_service"]
        self.deduct_long = p["long_job_placement"] == "deduct"
        self.whole_long = p["long_job_grant"] == "whole"
        self.work_clock = p["long_job_clock"] == "work"
        self.trial_settings = immediate.TrialSettings.from_params(p)
        self._reset()

    def _reset(self) -> None:
        self._hosts: dict[str, HostState] = {}
        self._where: dict[int, str] = {}  # job id -> host it is placed on
        self._credit: dict[int, float] = {}  # catching-up job -> credit (processor-seconds)
        self._long: set[int] = set()
        self._catchup_due = Deadlines()
        self._long_due = Deadlines()
        self._ledger = CreditLedger()
        self._waiting: dict[int, Job] = {}  # not placed, waiting for memory
        self._order: WaitingOrder | None = None  # the waiting jobs in the order _place offers them
        self._in_system: Counter[int] = Counter()  # requested processors -> jobs in the system
        self._clock = RepartitionClock(self.min_interval)
        self._total_procs = 0
        self.credits: dict[int, float] = {}  # every job's catch-up credit, for the output
        self._notes: dict[int, str] = {}  # placement reasons, for the decision log (explain)
        self._trials = HostTrials(self.trial_settings, lambda name: self._hosts[name].pending_mem)
        self.counters: Counter[str] = Counter()
        self._blocked: set[str] = set()
        self._placed_now: list[Job] = []  # placed on arrival in this pass
        self._in_trial: set[int] = set()  # placed jobs in an immediate-service trial (new_job_service)
        self._job_counts: dict[str, set[int]] = {
            "placed_on_arrival": set(), "waited": set(), "catchups": set(), "long_jobs": set(),
            "started_on_free": set(),
        }  # fmt: skip
        if self.new_job_service == "immediate":
            self._job_counts["new_job_trials"] = set()

    def bind(self, machine: MachineSpec, rng: np.random.Generator | None = None) -> None:
        super().bind(machine, rng)
        self._reset()
        self._hosts = {h.name: HostState(h.name, h.procs) for h in machine.hosts}
        self._total_procs = machine.total_procs
        self.counters["repartitions"] = 0
        self.counters["resizes"] = 0

    # ------------------------------------------------------------------------------ the pass
    def schedule(self, snap: Snapshot) -> list[Any]:
        now = snap.now
        out: list[Any] = []
        self._trials.begin_pass()
        self._placed_now = []
        self._ledger.accrue(now, snap.interval)
        in_system = self._in_system
        for job in snap.arrived:
            in_system[job.procs] += 1
        for job in snap.departed:
            if job.state.terminal:
                in_system[job.procs] -= 1
            self._forget(job)
        if self._trials.book.running or self._trials.book.to_resume:
            self._end_trials(snap, out)
        for timer in snap.timers:
            if timer.tag.startswith("repartition") and timer.host in self._hosts:
                h = self._hosts[timer.host]
                if h.timer is not None and h.timer <= now + 1e-9:
                    h.timer = None
        self._deadlines(now, out)
        self._place(snap, out)
        if self._trials.awaiting and (snap.departed or snap.timers):
            self._trials.retry(snap, out)  # free processors or eligibility may have changed
        if self.new_job_service == "immediate" and self._placed_now:
            self._serve_new_jobs(snap, out)
        self._blocked = self._trials.blocked_hosts()
        for h in self._hosts.values():
            if h.dirty or h.pending:
                self._resolve(h, snap.host_by_name[h.name], snap, out)
        if self._ledger.waiting:
            self._ledger.set_level(now, self._total_procs, self._in_system)
        else:
            self._ledger.since = now
        return out

    def quiet_until(self, snap: Snapshot) -> float:
        """Until the first deadline or the end of a dirty host's MinInterval (the argument:
        :mod:`o2ksim.policies.eqspatial_quiet`)."""
        if snap.explain or not proved_for(self, EQSpatial, *DECIDES):
            return snap.now
        parts = (self._ledger, (self._catchup_due, self._long_due), self._clock)
        return quiet_bound(snap.now, *parts, self._hosts.values(), snap.interval, self._trials)

    # ------------------------------------------------------------------------------ bookkeeping
    def _forget(self, job: Job) -> None:
        if job.state.terminal and job.id in self._waiting:  # finished in its trial run
            del self._waiting[job.id]
            if self._order is not None:
                self._order.remove(job)
            self._trials.drop(job.id)
            self._ledger.stop(job.id)
            self._ledger.forget(job.id)
        if job.id in self._in_trial:  # a placed job's trial ended (new_job_service = immediate)
            self._in_trial.discard(job.id)
            h = self._hosts[self._where[job.id]]
            if not job.state.terminal:  # killed: it stays placed, and starts when the host allows
                h.touch(f"J{job.id} back from its trial")
                return
            del h.pending[job.id]
            h.pending_mem -= job.mem
        name = self._where.pop(job.id, None)
        if name is None:
            return
        h = self._hosts[name]
        h.jobs.pop(job.id, None)
        if job.id in self._credit:
            del self._credit[job.id]
            self._catchup_due.drop(job.id)
            h.catchup_procs -= job.procs
        else:
            h.requested -= job.procs
        self._long.discard(job.id)
        self._long_due.drop(job.id)
        h.touch(f"J{job.id} left")

    def _deadlines(self, now: float, out: list[Any]) -> None:
        for job_id in self._catchup_due.due(now):
            name = self._where.get(job_id)
            if name is None or job_id not in self._credit:
                continue
            h = self._hosts[name]
            job = h.jobs[job_id]
            owed = self._credit[job_id] - job.work_done(now)
            if owed <= 1e-9 * max(1.0, self._credit[job_id]) + 1e-6:
                del self._credit[job_id]
                h.catchup_procs -= job.procs
                h.requested += job.procs
                h.touch(f"J{job_id} caught up")
            elif job.alloc_procs > 0:
                self._catchup_due.set(job_id, now + owed / job.alloc_procs)
        for job_id in self._long_due.due(now):
            name = self._where.get(job_id)
            if name is None:
                continue
            job = self._hosts[name].jobs[job_id]
            if self.work_clock and self._long_timer(job, now, job.alloc_procs, out):
                continue  # not there yet (it ran on fewer processors, or was preempted)
            self._long.add(job_id)
            self._count("long_jobs", job_id)
            self._hosts[name].touch(f"J{job_id} has run {(self.long_threshold or 0) / 3600:g} h")

    # ------------------------------------------------------------------------------ placement
    def _place(self, snap: Snapshot, out: list[Any]) -> None:
        """Offer ``choose_host`` the new jobs and, after a departure, the waiting ones, in
        submission order (ties by id), each against the loads the jobs before it left.

        The waiting jobs are kept in that order (:class:`WaitingOrder`), and the search
        for the next one skips those no host can take under the current loads
        (:mod:`o2ksim.policies.eqspatial_waiting`), which the walk would have offered in
        vain; after a placement the loads change, so the search starts again right after
        the last job offered.  A pass sorts only its new jobs, merged in by row.
        """
        new = [j for j in snap.arrived if j.state is JobState.QUEUED]
        # back from a trial run (a placed job back from its trial stays where it is)
        new.extend(j for j in snap.departed if j.state is JobState.QUEUED and j.id not in self._where)
        retry = bool(snap.departed) and bool(self._waiting)
        if not new and not retry:
            return
        new = sorted((j for j in new if j.id not in self._waiting), key=offer_order)
        loads = [self._load(h, snap.host_by_name[h.name]) for h in self._hosts.values()]
        most_mem = max(x.free_mem for x in loads)
        room = any(x.jobs < x.capacity for x in loads)
        w = -1  # the row of the next waiting job to offer, or -1
        if retry:  # rows are in offer_order: new jobs merge in by row
            order = self._order_of(snap, new)
            row_of = order.row_of
            w = order.first(0, loads)
        joined: list[Job] = []  # new jobs that wait: into the order after the walk
        i = 0
        while w >= 0 or i < len(new):
            if w >= 0 and (i == len(new) or w < row_of[new[i].id]):
                job = order.jobs[w]
                w = order.first(w + 1, loads)
                if job.state is not JobState.QUEUED:
                    continue  # in its trial run
            else:
                job = new[i]
                i += 1
            best = None if job.mem > most_mem or not room else choose_host(loads, job.procs, job.mem)
            if best is None:
                if job.id not in self._waiting:
                    self._no_host(job, snap, out)
                    joined.append(job)
                continue
            self._trials.drop(job.id)
            if job.id in self._waiting:
                order.remove(job)
                del self._waiting[job.id]
                self._put(job, self._hosts[best.name], snap, loads, waited=True)
            else:
                self._put(job, self._hosts[best.name], snap, loads, waited=False)
            # keep this pass's loads current for the next job
            best.free_mem -= job.mem
            best.jobs += 1
            if job.id in self._credit:
                best.procs -= job.procs
            else:
                best.requested += job.procs
            most_mem = max(x.free_mem for x in loads)
            if best.jobs >= best.capacity:
                room = any(x.jobs < x.capacity for x in loads)
            if retry:  # the loads changed: search again after the job just placed
                w = order.first(row_of[job.id] + 1, loads)
        if joined:
            order = self._order_of(snap, joined)
            for job in joined:
                self._waiting[job.id] = job
                order.add(job)

    def _order_of(self, snap: Snapshot, new: list[Job]) -> WaitingOrder:
        """The waiting jobs' order, knowing ``new`` too: built when a job first waits, over
        every job of the run (the engine's queue index numbers them all), rebuilt if a job
        it does not know comes (a snapshot without the engine's index)."""
        order = self._order
        if order is None:
            index = snap.queue_index
            order = WaitingOrder(index.jobs if index is not None else new)
        if not order.knows(new):
            order = order.rebuilt(new)
        self._order = order
        return order

    def _load(self, h: HostState, view: HostView) -> HostLoad:
        long = long_procs(h, self._long, self._credit) if self.deduct_long else 0  # or shared
        return HostLoad(
            h.name,
            h.capacity,
            h.capacity - h.catchup_procs - long,
            h.requested - long,
            view.free_mem - h.pending_mem,
            len(h.jobs),
        )

    def _put(self, job: Job, h: HostState, snap: Snapshot, loads: list[HostLoad], waited: bool) -> None:
        credit = self._ledger.stop(job.id)
        self._ledger.forget(job.id)
        self._where[job.id] = h.name
        h.jobs[job.id] = job
        h.pending[job.id] = job
        h.pending_mem += job.mem
        if credit > 0:
            self._credit[job.id] = credit
            self.credits[job.id] = credit
            h.catchup_procs += job.procs
            self._count("catchups", job.id)
        else:
            h.requested += job.procs
        if not waited:
            self._count("placed_on_arrival", job.id)
            self._placed_now.append(job)
        if snap.explain:
            ratios = ", ".join(
                f"{x.name} {x.procs}/({x.requested}+{job.procs})="
                f"{placement_ratio(x.procs, x.requested, job.procs):.2f}"
                for x in loads
                if x.free_mem >= job.mem and x.capacity >= job.procs and x.jobs < x.capacity
            )
            why = f"placed on {h.name}, the largest procs/requested ratio ({ratios})"
            if credit > 0:
                why += f"; catches up the {credit:.0f} processor-seconds it earned while waiting"
            self._notes[job.id] = why
        h.touch(f"J{job.id} placed")

    def _no_host(self, job: Job, snap: Snapshot, out: list[Any]) -> None:
        """No host has the memory (or a processor) for ``job``: the immediate service of
        T§3.2.2 (:mod:`o2ksim.policies.immediate`), then it waits for memory, earning credit
        (the caller puts it in ``_waiting`` and the order after its walk: :meth:`_place`)."""
        self._ledger.wait(job.id, job.procs)
        self._count("waited", job.id)
        self._trials.give(job, snap, out)

    def _end_trials(self, snap: Snapshot, out: list[Any]) -> None:
        """Victims of trials that ended get their processors back; their host repartitions after."""
        for name in self._trials.end_trials(snap, out):
            h = self._hosts.get(name)
            if h is not None and (h.dirty or h.pending):
                # the victims are back on their processors, but this snapshot predates
                # that: repartition in a new pass at this instant
                out.append(WakeAt(snap.now, name, "repartition: a trial run ended"))

    def _serve_new_jobs(self, snap: Snapshot, out: list[Any]) -> None:
        """``new_job_service = immediate``: a trial for each job placed on arrival in this pass
        that its host can give no processor now (it may not repartition yet, or a trial holds it,
        and its free processors go to other placed jobs first, as :meth:`_start_on_free` shares them)."""
        now = snap.now
        blocked = self._trials.blocked_hosts()
        placed_now = {j.id for j in self._placed_now}
        for h in self._hosts.values():
            new = [j for j in h.pending.values() if j.id in placed_now]
            if not new:
                continue
            view = snap.host_by_name[h.name]
            held = view.preempted or h.name in blocked
            if not held and self._clock.can(h.name, now):
                continue  # it repartitions in this pass: every placed job gets a processor
            jobs = [j for j in h.pending.values() if j.id not in self._in_trial]
            free = 0 if held else max(view.free_procs, 0)
            shares = dict(zip([j.id for j in jobs], equipartition(free, [j.procs for j in jobs]), strict=True))
            for job in new:
                if shares[job.id] == 0 and self._trials.try_now(job, snap, out, h.name, job.mem):
                    self._in_trial.add(job.id)
                    self._count("new_job_trials", job.id)

    # ------------------------------------------------------------------------------ output
    def summary_counts(self, ids: AbstractSet[int] | None = None) -> dict[str, int]:
        """Counters for ``summary.json``.

        ``repartitions`` is per run (every host, warm-up included); the others
        count jobs among ``ids`` (the analysed jobs, or all): placed on
        arrival, waited for memory, caught up, ran past the long-job threshold,
        started on free processors of a host that could not repartition yet,
        and the immediate-service counters of :mod:`o2ksim.policies.immediate`.
        """
        out = {"repartitions": int(self.counters["repartitions"])}
        for key, jobs in self._job_counts.items():
            out[key] = len(jobs if ids is None else jobs & ids)
        out.update(self._trials.book.summary_counts(ids))
        return out

    def stats(self) -> dict[str, float]:
        """Run counters for ``run.json``: repartitionings and the resizes the policy asked for."""
        return {k: float(v) for k, v in self.counters.items()}

    def job_columns(self) -> dict[str, dict[int, float]]:
        """Per-job output columns: ``catchup_credit`` (processor-seconds earned while waiting)
        and ``immediate_service`` (1 for a job given a trial run, whose first segment it is)."""
        return {
            "catchup_credit": dict(self.credits),
            "immediate_service": dict.fromkeys(self._trials.book.given, 1),
        }


POLICIES.register(EQSpatial)
