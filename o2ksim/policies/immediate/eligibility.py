"""Which running jobs a trial may preempt (T§3.2.2), kept between passes.

:class:`EligibilityCache` keeps, per host, what eligibility needs of each
running job; :class:`VictimLists` gives, once per pass, each host's eligible
jobs in preemption order (increasing current slowdown, ties by job id).
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterable

from o2ksim.engine.snapshot import HostView
from o2ksim.jobs import Job

_Entry = tuple[Job, float, float]  # (job, last_start, predicted end)
_Kept = tuple[float, int, float, _Entry]  # (segment start, processors, time limit, entry)
_SLACK = 1e-3  # s: the answer is kept until this before a job's eligibility could change


def next_eligible(
    hosts: Iterable[HostView], now: float, t: float, protected: Container[int] = frozenset()
) -> float:
    """When the next running job becomes eligible for preemption; ``math.inf`` if none will.

    A job is eligible once it has run uninterrupted for ``t`` and is still
    predicted to need more than ``t`` then (T§3.2.2); jobs in ``protected``
    (this pass's trials and their victims) are left out.  The policies ask for
    a pass at that time (the thesis simulator's extra event, T§3.4).
    """
    soonest = math.inf
    for view in hosts:
        for v in view.running:
            at = v.last_start + t
            if now < at < soonest and v.id not in protected and v.predicted_end(now) - at > t:
                soonest = at
    return soonest


class EligibilityCache:
    """Per host, what eligibility needs of each running job, rebuilt only when the host changes.

    Keyed by :attr:`HostView.version` (bumped by the engine on every start,
    preemption, resumption, resize or departure on the host), so between two
    such events a pass reuses the host's entries instead of asking every
    running job again.  An entry keeps the job, the start of its current
    uninterrupted run and its predicted end, constant during the run and the
    same float :meth:`Job.predicted_end` gives while it is after now (start +
    requested runtime, or :meth:`Job.rate_end` for a job resized, reduced or
    resumed, capped by the time limit).  The per-pass eligibility test is then
    two float comparisons per job, with the same outcome as
    :func:`is_eligible_victim`; a job whose prediction the overrun rule
    ``requested`` will raise is asked itself.
    """

    __slots__ = ("_eligible", "_hosts")

    def __init__(self) -> None:
        # per host: (version, entries, job id -> (segment start, processors, time limit, entry))
        self._hosts: dict[str, tuple[int, list[_Entry], dict[int, _Kept]]] = {}
        # per host: (version, t, valid from, valid until, eligible jobs, their ids)
        self._eligible: dict[str, tuple[int, float, float, float, list[Job], frozenset[int]]] = {}

    def eligible(self, host: HostView, now: float, t: float) -> tuple[list[Job], frozenset[int]]:
        """``host``'s running jobs eligible for preemption at ``now`` (:func:`is_eligible_victim`),
        and their ids.

        The answer is kept until the host changes or the first time at which
        some job's eligibility could change (a job reaching ``t`` of
        uninterrupted run, or an eligible job's predicted end coming within
        ``t``), less ``_SLACK``; so a pass usually reuses it without a scan.
        """
        name = host.name
        kept = self._eligible.get(name)
        if (
            kept is not None and kept[0] == host.version and kept[1] == t
            and kept[2] <= now < kept[3]
        ):  # fmt: skip
            return kept[4], kept[5]
        got: list[Job] = []
        until = math.inf
        for v, last_start, end in self.entries(host, now):
            if now - last_start < t:
                until = min(until, last_start + t - _SLACK)
                continue
            if v.overrun_time:  # overrun rule "requested": its prediction is raised once passed
                ok = v.predicted_end(now) - now > t
                until = now  # ask again next time
            else:
                ok = end - now > t  # end <= now: predicted *now*, 0 > t is false too
            if ok:
                got.append(v)
                until = min(until, end - t - _SLACK)
        ids = frozenset(v.spec.job_id for v in got)
        self._eligible[name] = (host.version, t, now, until, got, ids)
        return got, ids

    def entries(self, host: HostView, now: float) -> list[_Entry]:
        """``host``'s running jobs as ``(job, last_start, predicted end)``."""
        cached = self._hosts.get(host.name)
        if cached is not None and cached[0] == host.version:
            return cached[1]
        before = cached[2] if cached is not None else {}
        got: list[_Entry] = []
        by_job: dict[int, _Kept] = {}
        for v in host.running:
            spec = v.spec
            old = before.get(spec.job_id)
            if (
                old is not None and old[0] == v.segment_start and old[1] == v.alloc_procs
                and old[2] == v.time_limit
            ):  # fmt: skip
                got.append(old[3])  # the same run as when its entry was made
                by_job[spec.job_id] = old
                continue
            if v.alloc_procs == spec.procs and not (v.resizes or v.preemptions or v.reduced):
                end = v.last_start + spec.req_time
            elif v.alloc_procs:
                end = v.rate_end(spec.req_time)
            else:
                end = math.inf
            if v.time_limit < end:
                end = v.time_limit
            entry = (v, v.last_start, end)
            got.append(entry)
            by_job[spec.job_id] = (v.segment_start, v.alloc_procs, v.time_limit, entry)
        self._hosts[host.name] = (host.version, got, by_job)
        return got


class VictimLists:
    """Per host, the jobs eligible for preemption in preemption order, built once per pass.

    :func:`plan_trial` asks for a host's list; it is computed on first use
    (eligible running jobs by increasing current slowdown, ties by id) and
    reused for every other job that wants a trial in the same pass.
    :meth:`remove` drops jobs chosen as victims (or started as trials) so that
    nobody is preempted twice.  ``cache`` (kept by the caller between passes)
    saves rebuilding what each running job's eligibility depends on.
    """

    def __init__(
        self,
        now: float,
        t: float,
        protected: Iterable[int] = (),
        cache: EligibilityCache | None = None,
    ) -> None:
        self.now = now
        self.t = t
        self.removed: set[int] = set(protected)
        self._cache = cache if cache is not None else EligibilityCache()
        self._lists: dict[str, list[Job]] = {}
        self._sorted: set[str] = set()
        self._procs: dict[str, int] = {}

    def total(self, host: HostView) -> int:
        """Processors of ``host``'s eligible jobs (no sorting needed for this bound)."""
        name = host.name
        if name not in self._lists:
            removed = self.removed
            eligible, ids = self._cache.eligible(host, self.now, self.t)
            if removed.isdisjoint(ids):
                got = list(eligible)
            else:
                got = [v for v in eligible if v.spec.job_id not in removed]
            self._lists[name] = got
            self._procs[name] = sum(v.alloc_procs for v in got)
        return self._procs[name]

    def of(self, host: HostView) -> tuple[list[Job], int]:
        """``host``'s eligible jobs in preemption order and their total processors."""
        total = self.total(host)
        name = host.name
        got = self._lists[name]
        if name not in self._sorted:
            now = self.now
            inf = math.inf
            keyed = []
            for v in got:  # current_slowdown's arithmetic, inlined: this is the hot loop
                spec = v.spec
                ran = (
                    (spec.work - v.remaining_work + (now - v.segment_start) * v.alloc_procs) / spec.procs
                    if spec.procs else 0.0
                )  # fmt: skip
                keyed.append(((now - spec.submit) / ran if ran > 0 else inf, spec.job_id, v))
            keyed.sort()
            got[:] = [k[2] for k in keyed]
            self._sorted.add(name)
        return got, total

    def remove(self, jobs: Iterable[Job]) -> None:
        for job in jobs:
            self.removed.add(job.id)
            if job.host in self._lists and job in self._lists[job.host]:
                self._lists[job.host].remove(job)
                self._procs[job.host] -= job.alloc_procs
