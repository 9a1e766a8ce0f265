"""Test oracle: the backfill pass of T§3.2.1 written out job by job, nothing skipped.

``ReferenceBackfill`` is :class:`o2ksim.policies.backfill.Backfill` (same
parameters, same reservation state between passes, same wake-ups) with its
pass replaced by the thesis's steps taken literally:

1. until some job cannot start, start each job in priority order on the host
   with the fewest free processors that has its processors and memory now;
2. a job that cannot start gets a reservation while fewer than ``N`` are
   held: the earliest start on any host's availability profile (the requested
   runtimes of the running jobs and of earlier reservations), ties to the
   fewest free processors;
3. after the first such job, a job starts now only if it fits now and delays
   no reservation (it fits each reserved host's profile over its requested
   runtime); otherwise step 2 applies to it.

Every profile is built from the running jobs one by one and every job is
looked at, at every pass: no lazy reservations, shadows, release memos,
queue-index scans or early exits, and the queue order is a plain sort of the
priority scores.  The package's pass must give the same schedule
(``tests/test_backfill_fast_path.py`` and friends).
"""

from __future__ import annotations

import math

import numpy as np

from o2ksim.engine.decisions import Decision, Reserve, Start
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.policies.backfill import Backfill
from o2ksim.policies.profile import Profile, build_profile


class ReferenceBackfill(Backfill):
    """:class:`Backfill` with the literal pass of T§3.2.1 (module docstring)."""

    def backfill_pass(self, snap: Snapshot) -> list[Decision]:
        now = snap.now
        hosts = snap.hosts
        free = {h.name: [h.free_procs, h.free_mem] for h in hosts}
        started: dict[str, list[tuple[float, int, float]]] = {}
        decisions: list[Decision] = []
        profiles: dict[str, Profile] | None = None
        reserved: set[str] = set()
        placed: dict[Job, tuple[str, float]] = {}
        kept_times: list[tuple[str, float]] = []
        n_res = 0
        for job in self._reference_order(snap):
            spec = job.spec
            if profiles is None:
                host = _fewest_free(hosts, free, spec.procs, spec.mem, lambda name: True)
                if host is not None:  # step 1
                    _book(free, host, spec)
                    started.setdefault(host, []).append((now + spec.req_time, spec.procs, spec.mem))
                    decisions.append(Start(job, host, note="highest priority and fits now"))
                    continue
                if self.n_reservations == 0:
                    continue
                profiles = {h.name: build_profile(h, now, started.get(h.name, ())) for h in hosts}
                if self.ties_together:  # every release at its time: no deferral
                    for prof in profiles.values():
                        prof.releases = {}
            else:
                prof = profiles

                def delays_none(name: str, spec=spec, prof=prof) -> bool:
                    return name not in reserved or prof[name].fits(
                        now, spec.procs, spec.mem, spec.req_time
                    )

                host = _fewest_free(hosts, free, spec.procs, spec.mem, delays_none)
                if host is not None:  # step 3
                    _book(free, host, spec)
                    profiles[host].take(now, spec.procs, spec.mem, spec.req_time)
                    note = "reserved job fits now" if job in self.held else "backfilled: delays no reservation"
                    decisions.append(Start(job, host, note=note))
                    continue
            if n_res < self.n_reservations:  # step 2
                at, where, kept = self._reference_reserve(job, hosts, free, profiles, now)
                if where is not None:
                    profiles[where].reserve(at, spec.procs, spec.mem, spec.req_time)
                    reserved.add(where)
                    if self.stateful:
                        placed[job] = (where, at)
                    if kept and snap.interval is None:
                        kept_times.append((where, at))
                    if snap.explain:
                        note = f"reservation {n_res + 1} of {self.n_reservations}"
                        if kept:
                            note += " (kept: non-sliding)"
                        decisions.append(Reserve(job, where, at, note=note))
                n_res += 1
        if self.stateful:
            self.held = placed
            decisions.extend(self._wake_ups(kept_times, now))
        return decisions

    def _reference_order(self, snap: Snapshot) -> list[Job]:
        """Priority order by a plain stable sort of the scores; held fixed reservations first."""
        queue = list(snap.queue)
        if len(queue) > 1 and self.priority.name != "fcfs":
            score = np.asarray(self.priority.scores(self.priority.view(queue, snap.now)), dtype=float)
            queue = [queue[i] for i in np.argsort(-score, kind="stable")]
        if self.fixed:
            held = [j for j in self.held if j.state is JobState.QUEUED]
            queue = held + [j for j in queue if j not in held]
        return queue

    def _reference_reserve(
        self,
        job: Job,
        hosts: tuple[HostView, ...],
        free: dict[str, list],
        profiles: dict[str, Profile],
        now: float,
    ) -> tuple[float, str | None, bool]:
        """The earliest start over the hosts that could ever hold ``job`` (ties: fewest free
        processors); non-sliding: the old reservation while in the future and possible,
        else the earliest start not before it."""
        spec = job.spec
        not_before = now
        old = self.held.get(job) if not self.sliding else None
        if old is not None and old[1] > now:
            host, at = old
            if host in profiles and profiles[host].fits(at, spec.procs, spec.mem, spec.req_time):
                return at, host, True
            not_before = at
        best: tuple[float, float, str] | None = None
        for h in hosts:
            if h.spec.procs < spec.procs or h.spec.memory < spec.mem:
                continue
            at = profiles[h.name].earliest(spec.procs, spec.mem, spec.req_time, not_before)
            key = (at, free[h.name][0], h.name)
            if best is None or key[:2] < best[:2]:
                best = key
        if best is None:
            return math.inf, None, False
        return best[0], best[2], False


def _fewest_free(hosts, free, procs, mem, allowed) -> str | None:
    """The host with the fewest free processors that has ``procs``/``mem`` free now and
    is ``allowed`` (first such host in machine order among ties)."""
    best = None
    for h in hosts:
        have_p, have_m = free[h.name]
        fits = have_p >= procs and have_m >= mem and allowed(h.name)
        if fits and (best is None or have_p < free[best][0]):
            best = h.name
    return best


def _book(free, host, spec) -> None:
    free[host][0] -= spec.procs
    free[host][1] -= spec.mem
