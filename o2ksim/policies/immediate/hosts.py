"""Immediate service for jobs no host can take now, one trial per host (EQspatial, T§3.2.3).

EQspatial gives a job that no host has the memory (or a processor) for the
immediate service of T§3.2.2: a quantum on its requested processors with the
initial memory, on free processors or by preempting eligible jobs'
processors; if it does not finish there it waits in the queue for memory.
:class:`HostTrials` is that service for a policy that partitions hosts: the
same rules (:func:`~o2ksim.policies.immediate.trials.plan_trial`,
:func:`~o2ksim.policies.immediate.trials.trial_decisions`, the
:class:`~o2ksim.policies.immediate.book.TrialBook`), with one trial per host
at a time, and the hosts where a trial runs or whose victims are owed their
processors *blocked*: the holding policy leaves them alone until the trial's
victims are back.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from o2ksim.engine.decisions import WakeAt
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job
from o2ksim.policies.immediate.book import TrialBook
from o2ksim.policies.immediate.eligibility import next_eligible
from o2ksim.policies.immediate.settings import TrialSettings
from o2ksim.policies.immediate.trials import plan_trial, trial_decisions


class HostTrials:
    """Trial runs for jobs with no host, one per host at a time; the hosts they block.

    ``pending_mem(host)`` (given by the holder) is memory the holder has
    promised on a host that the engine does not know of yet: a trial may not
    use it.  Per pass: :meth:`begin_pass`, then :meth:`end_trials` when
    trials ran, :meth:`give` for a job that cannot be placed, :meth:`retry`
    for those still waiting for a trial, and :meth:`blocked_hosts`.
    """

    def __init__(self, settings: TrialSettings, pending_mem: Callable[[str], int]) -> None:
        self.settings = settings
        self.book = TrialBook()
        self.host_of: dict[int, str] = {}  # trial in progress -> its host
        # no host, no trial possible yet: queued jobs in the order they began to wait
        self.awaiting: OrderedDict[int, Job] = OrderedDict()
        self.settling: set[str] = set()  # hosts whose victims resume in this pass
        self._pending_mem = pending_mem
        self._wakes: set[float] = set()
        self._free: dict[str, list[float]] | None = None

    def begin_pass(self) -> None:
        self._free = None
        self.settling = set()

    def give(self, job: Job, snap: Snapshot, out: list[Any]) -> None:
        """A trial for ``job`` (once per job, unless the mode is ``off``), or a wait for one."""
        if self.settings.mode == "off" or job.id in self.book.given:
            return
        if not self._try(job, snap, out):
            self.awaiting[job.id] = job
            if self.settings.preemptive:
                self._next_eligibility(snap, out)

    def try_now(self, job: Job, snap: Snapshot, out: list[Any], host: str, own_mem: int) -> bool:
        """A trial for ``job`` on ``host`` now if one can start there (once per job, unless the
        mode is ``off``), without waiting for one: EQspatial's ``new_job_service = immediate``,
        for a job placed on ``host`` whose promised memory ``own_mem`` the trial may use."""
        if self.settings.mode == "off" or job.id in self.book.given:
            return False
        return self._try(job, snap, out, host, own_mem)

    def retry(self, snap: Snapshot, out: list[Any]) -> None:
        """Try again for the jobs waiting for a trial, in the order they began to wait.

        ``awaiting`` holds only jobs still queued and waiting for a host: the holder
        takes a job out (:meth:`drop`) when it places it or it leaves, and a job is
        taken out here when its trial starts, so no walk is needed to clean it.  A
        trial blocks its host, and a try over no unblocked host is refused with no
        side effect (:func:`~o2ksim.policies.immediate.trials.plan_trial` over no host
        is ``None``), so once every host is blocked the rest of the jobs are not
        tried: O(1) a pass on a blocked machine, instead of one try per waiting job.
        """
        started = []
        for job_id, job in self.awaiting.items():
            if not self._unblocked(snap):
                break  # every try would fail: one trial per host
            if self._try(job, snap, out):
                started.append(job_id)
        for job_id in started:
            del self.awaiting[job_id]
        if self.awaiting and self.settings.preemptive:
            self._next_eligibility(snap, out)

    def drop(self, job_id: int) -> None:
        """``job_id`` no longer waits for a trial (placed, or out of the queue)."""
        self.awaiting.pop(job_id, None)

    def _unblocked(self, snap: Snapshot) -> bool:
        """Some host is not blocked (:meth:`blocked_hosts`): a trial could run there."""
        busy = self.blocked_hosts()
        return any(v.name not in busy for v in snap.hosts)

    def end_trials(self, snap: Snapshot, out: list[Any]) -> list[str]:
        """Victims of trials that ended get their processors back (``Resume``); returns the
        hosts where every victim is back, which the holder may repartition in a new pass."""
        book = self.book
        book.ended(snap.departed)
        hosts = set(book.to_resume)
        for job_id in [j for j in self.host_of if j not in book.running]:
            hosts.add(self.host_of.pop(job_id))
        free = {v.name: [v.free_procs, v.free_mem] for v in snap.hosts}
        resumes, _ = book.resume(free)
        out.extend(resumes)
        self.settling = hosts
        return [name for name in hosts if name not in book.to_resume]

    def blocked_hosts(self) -> set[str]:
        """Hosts where a trial runs or preempted victims are owed their processors."""
        hosts = set(self.host_of.values())
        hosts.update(self.book.to_resume)
        hosts.update(self.settling)
        return hosts

    def _free_now(self, snap: Snapshot) -> dict[str, list[float]]:
        """Processors and memory a trial may use on each host (promised memory deducted)."""
        owed = {}
        for host, victims in self.book.to_resume.items():
            owed[host] = sum(v.resume_procs for v in victims)
        free = {}
        for view in snap.hosts:
            free[view.name] = [
                view.free_procs - owed.get(view.name, 0),
                view.free_mem - self._pending_mem(view.name),
            ]
        return free

    def _try(
        self, job: Job, snap: Snapshot, out: list[Any], only: str | None = None, own_mem: int = 0
    ) -> bool:
        free = self._free
        if free is None:
            free = self._free = self._free_now(snap)
        busy = self.blocked_hosts()
        hosts = [
            v for v in snap.hosts if v.name not in busy and only in (None, v.name)
        ]  # one trial per host
        settings = self.settings
        if only is not None and only in free:
            free[only][1] += own_mem  # the job's own promise on its host
        plan = plan_trial(job, hosts, free, snap.now, settings,
                          preempt=settings.preemptive, protected=set(self.book.running))  # fmt: skip
        if only is not None and only in free:
            free[only][1] -= own_mem
        if plan is None:
            return False
        f = free[plan.host]
        f[0] += sum(v.alloc_procs for v in plan.victims) - job.procs
        f[1] -= plan.mem
        self.book.start(plan)
        self.host_of[job.id] = plan.host
        out.extend(trial_decisions(plan, settings, snap.now))
        return True

    def _next_eligibility(self, snap: Snapshot, out: list[Any]) -> None:
        """A pass when the next running job becomes eligible for preemption (T§3.4's extra event)."""
        now = snap.now
        soonest = next_eligible(snap.hosts, now, self.settings.eligible_after)
        self._wakes = {w for w in self._wakes if w > now}
        if soonest < math.inf and soonest not in self._wakes:
            self._wakes.add(soonest)
            out.append(
                WakeAt(
                    soonest, tag="immediate service: a running job becomes eligible for preemption"
                )
            )
