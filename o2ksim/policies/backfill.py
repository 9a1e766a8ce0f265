"""Strict FCFS and priority backfill with hosts and memory (T§3.2.1, SPEC §3.1).

One pass, in priority order:

1. while no job has been refused, start each job that fits now (processors AND
   memory) on the host with the fewest free processors;
2. the first job that cannot start gets a reservation: the earliest time some
   host can start it, computed from the requested runtimes of the running jobs
   (and of earlier reservations); the host with the earliest time wins;
3. every later job may start now only if it fits and, on each host holding
   reservations, fits the host's availability *profile* over its whole
   requested runtime — so it delays no reservation; up to ``reservations``
   jobs that cannot start get reservations the same way.

With one reservation the profile test is exactly EASY's "ends before the
shadow time or fits in the extra processors" test; with more it is the
conservative test of T§3.2.1 (Fig. 1c).  Reservations are recomputed at every
pass, so they slide earlier when a job ends early.  Strict FCFS stops at the
first job that cannot start.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from typing import Any, ClassVar

from o2ksim.engine.decisions import Reserve, Start
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job
from o2ksim.policies.base import POLICIES, Param, Policy
from o2ksim.policies.priority import Priority, make_priority


class Profile:
    """Free processors and memory of one host from *now* on, as a step function.

    ``times[i]`` starts the step whose availability is ``procs[i]``/``mem[i]``;
    the last step lasts forever.  Built from the predicted ends of the running
    jobs; reservations and backfilled jobs are subtracted from it.

    Same-time releases are counted one job at a time, smallest first (the tie
    rule of SPEC §3.1 and of the reference EASY implementation): a reservation
    placed at a release time ``s`` takes only the releases it needs at ``s``;
    the others become available an instant later, so a job backfilled across
    ``s`` may use only the processors left over by that minimal set.
    """

    __slots__ = ("mem", "procs", "releases", "times")

    def __init__(
        self,
        now: float,
        free_procs: int,
        free_mem: float,
        releases: Iterable[tuple[float, int, float]],
    ) -> None:
        times = [now]
        procs = [free_procs]
        mem = [free_mem]
        at: dict[float, list[tuple[int, float]]] = {}
        for t, p, m in sorted((max(t, now), p, m) for t, p, m in releases):
            if t != times[-1]:
                times.append(t)
                procs.append(procs[-1])
                mem.append(mem[-1])
            procs[-1] += p
            mem[-1] += m
            at.setdefault(t, []).append((p, m))
        self.times = times
        self.procs = procs
        self.mem = mem
        self.releases = at

    def _split(self, t: float) -> int:
        """Index of the step starting exactly at ``t`` (creating it if needed)."""
        i = bisect.bisect_right(self.times, t) - 1
        if i >= 0 and self.times[i] == t:
            return i
        self.times.insert(i + 1, t)
        self.procs.insert(i + 1, self.procs[i])
        self.mem.insert(i + 1, self.mem[i])
        return i + 1

    def fits(self, start: float, procs: int, mem: float, duration: float) -> bool:
        """Whether ``procs``/``mem`` are free over ``[start, start + duration)``."""
        times = self.times
        i = max(0, bisect.bisect_right(times, start) - 1)
        end = start + duration
        n = len(times)
        while True:
            if self.procs[i] < procs or self.mem[i] < mem:
                return False
            i += 1
            if i >= n or times[i] >= end:
                return True

    def earliest(self, procs: int, mem: float, duration: float) -> float:
        """Earliest step start at which ``procs``/``mem`` stay free for ``duration``."""
        times = self.times
        n = len(times)
        i = 0
        while i < n:
            if self.procs[i] < procs or self.mem[i] < mem:
                i += 1
                continue
            start = times[i]
            end = start + duration
            k = i + 1
            while k < n and times[k] < end:
                if self.procs[k] < procs or self.mem[k] < mem:
                    break
                k += 1
            else:
                return start
            i = k + 1
        return math.inf

    def reserve(self, start: float, procs: int, mem: float, duration: float) -> None:
        """Hold ``procs``/``mem`` from ``start`` for ``duration`` for a reserved job.

        Releases at ``start`` that the job does not need are deferred by one
        representable instant (see the class docstring).
        """
        spare_p, spare_m = self._unneeded_releases(start, procs, mem)
        if spare_p or spare_m:
            later = math.nextafter(start, math.inf)
            self.take(start, spare_p, spare_m, later - start)
        self.take(start, procs, mem, duration)

    def _unneeded_releases(self, start: float, procs: int, mem: float) -> tuple[int, float]:
        rel = self.releases.get(start)
        if not rel:
            return 0, 0.0
        i = bisect.bisect_right(self.times, start) - 1
        have_p = self.procs[i] - sum(p for p, _ in rel)
        have_m = self.mem[i] - sum(m for _, m in rel)
        spare_p, spare_m = 0, 0.0
        for p, m in rel:
            if have_p >= procs and have_m >= mem:
                spare_p += p
                spare_m += m
            else:
                have_p += p
                have_m += m
        return spare_p, spare_m

    def take(self, start: float, procs: int, mem: float, duration: float) -> None:
        """Subtract a job's use over ``[start, start + duration)``."""
        if duration <= 0:
            return
        i = self._split(start)
        end = start + duration
        j = self._split(end) if math.isfinite(end) else len(self.times)
        for k in range(i, j):
            self.procs[k] -= procs
            self.mem[k] -= mem


class FCFS(Policy):
    """Strict first-come first-served: start jobs in order until one does not fit."""

    kind = "fcfs"
    description = (
        "Strict FCFS: jobs start in submission order; the first that does not fit blocks the rest"
    )
    source = "T§2.3.2"
    PARAMS: ClassVar[dict[str, Param]] = {}

    def schedule(self, snap: Snapshot) -> list[Any]:
        free = {h.name: [h.free_procs, h.free_mem] for h in snap.hosts}
        decisions: list[Any] = []
        for job in snap.queue:
            host = _best_host(job, snap.hosts, free)
            if host is None:
                break
            decisions.append(Start(job, host, note="next in FCFS order and fits"))
        return decisions


class Backfill(Policy):
    """Priority backfill with ``reservations`` reservations (EASY when 1 and FCFS)."""

    kind = "backfill"
    description = "Priority backfill with hosts and memory: reservations for the top waiting jobs"
    source = "T§3.2.1, T§5.1"
    PARAMS: ClassVar[dict[str, Param]] = {
        "priority": Param(
            (str, dict), "fcfs", "priority: fcfs | sjf | lxf, or a table of weights w, x, p, m, pe"
        ),
        "reservations": Param(
            int,
            1,
            "number of waiting jobs given a reservation (N); 0 = none",
            check=lambda v: v >= 0,
            check_help="must be >= 0",
        ),
    }

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        self.priority: Priority = make_priority(self.params["priority"])
        self.n_reservations: int = self.params["reservations"]

    def schedule(self, snap: Snapshot) -> list[Any]:
        now = snap.now
        hosts = snap.hosts
        free = {h.name: [h.free_procs, h.free_mem] for h in hosts}
        decisions: list[Any] = []
        started: list[tuple[str, float, int, float]] = []
        profiles: dict[str, Profile] | None = None
        reserved_hosts: set[str] = set()
        n_res = 0
        limit = self.n_reservations
        explain = snap.explain
        for job in self.priority.order(snap.queue, now):
            spec = job.spec
            if profiles is None:
                host = _best_host(job, hosts, free)
                if host is not None:
                    decisions.append(Start(job, host, note="highest priority and fits now"))
                    started.append((host, now + spec.req_time, spec.procs, spec.mem))
                    continue
                if limit == 0:
                    continue
                profiles = _profiles(snap, started)
            elif n_res >= limit and not any(f[0] > 0 for f in free.values()):
                break
            host = self._backfill_host(job, hosts, free, profiles, reserved_hosts, now)
            if host is not None:
                decisions.append(Start(job, host, note="backfilled: delays no reservation"))
                profiles[host].take(now, spec.procs, spec.mem, spec.req_time)
                continue
            if n_res < limit:
                at, where = _reserve(job, hosts, free, profiles)
                if where is not None:
                    profiles[where].reserve(at, spec.procs, spec.mem, spec.req_time)
                    reserved_hosts.add(where)
                    if explain:
                        decisions.append(
                            Reserve(job, where, at, note=f"reservation {n_res + 1} of {limit}")
                        )
                n_res += 1
        return decisions

    @staticmethod
    def _backfill_host(
        job: Job,
        hosts: tuple[HostView, ...],
        free: dict[str, list[float]],
        profiles: dict[str, Profile],
        reserved_hosts: set[str],
        now: float,
    ) -> str | None:
        spec = job.spec
        best = None
        best_free = math.inf
        for h in hosts:
            f = free[h.name]
            if f[0] < spec.procs or f[1] < spec.mem or f[0] >= best_free:
                continue
            if h.name in reserved_hosts and not profiles[h.name].fits(
                now, spec.procs, spec.mem, spec.req_time
            ):
                continue
            best, best_free = h.name, f[0]
        if best is not None:
            f = free[best]
            f[0] -= spec.procs
            f[1] -= spec.mem
        return best


def _best_host(job: Job, hosts: tuple[HostView, ...], free: dict[str, list[float]]) -> str | None:
    """The host that can start ``job`` now with the fewest free processors; books it in ``free``."""
    spec = job.spec
    best = None
    best_free = math.inf
    for h in hosts:
        f = free[h.name]
        if f[0] >= spec.procs and f[1] >= spec.mem and f[0] < best_free:
            best, best_free = h.name, f[0]
    if best is not None:
        f = free[best]
        f[0] -= spec.procs
        f[1] -= spec.mem
    return best


def _profiles(snap: Snapshot, started: list[tuple[str, float, int, float]]) -> dict[str, Profile]:
    now = snap.now
    extra: dict[str, list[tuple[float, int, float]]] = {}
    for host, end, p, m in started:
        extra.setdefault(host, []).append((max(end, now), p, m))
    profiles = {}
    for h in snap.hosts:
        releases = [(j.predicted_end(now), j.alloc_procs, j.alloc_mem) for j in h.running]
        releases.extend(extra.get(h.name, ()))
        profiles[h.name] = Profile(
            now,
            h.free_procs - sum(p for _, p, _m in extra.get(h.name, ())),
            h.free_mem - sum(m for _, _p, m in extra.get(h.name, ())),
            releases,
        )
    return profiles


def _reserve(
    job: Job,
    hosts: tuple[HostView, ...],
    free: dict[str, list[float]],
    profiles: dict[str, Profile],
) -> tuple[float, str | None]:
    """Earliest start over the hosts that could ever hold the job (ties: fewest free processors)."""
    spec = job.spec
    best_at, best_host, best_free = math.inf, None, math.inf
    for h in hosts:
        if h.spec.procs < spec.procs or h.spec.memory < spec.mem:
            continue
        at = profiles[h.name].earliest(spec.procs, spec.mem, spec.req_time)
        f = free[h.name][0]
        if at < best_at or (at == best_at and f < best_free):
            best_at, best_host, best_free = at, h.name, f
    return best_at, best_host


POLICIES.register(FCFS)
POLICIES.register(Backfill)
