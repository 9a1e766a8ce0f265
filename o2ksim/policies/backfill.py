"""Strict FCFS and the priority-backfill family with hosts and memory (T§3.2.1, T§5.1, SPEC §3.1).

One pass of :class:`Backfill`, in priority order (the priority is recomputed at
every pass, :mod:`o2ksim.policies.priority`):

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
conservative test of T§3.2.1 (Fig. 1c).

Reservation options (T§3.2.1, T§5.1, T§5.3.3):

* ``reservation_kind = "dynamic"`` (default, Maui CURRHIGHEST): the current top
  ``N`` jobs that cannot start hold the reservations, recomputed every pass.
* ``"fixed"`` (Maui HIGHEST): a job that got a reservation keeps it until it
  starts.  Held reservations are placed first, in the order they were granted,
  so every other job — even one that now outranks the holder — may start only
  if it delays none of them; new reservations go to the best-ranked jobs that
  cannot start while fewer than ``N`` are held.
* ``sliding = true`` (default): a reservation is recomputed at every pass, so
  it moves earlier when a job ends early (Fig. 2).  ``false`` reproduces the
  NCSA-MS* error of T§5.3.3 (Fig. 56): a job keeps the reservation time (and
  host) it was given; it still starts as soon as it really fits, but the time
  used to protect it from backfilled jobs never moves earlier, so the gap a
  departure opens is backfilled.  The time is recomputed (never earlier) only
  when it has passed or become impossible (a running job overran its
  request).  The policy asks for a pass at each kept time (``WakeAt``) unless
  it runs on a fixed ``interval``.

Per-run state (held reservations) lives on the policy object: one instance
serves one run.  Strict FCFS stops at the first job that cannot start.
"""

from __future__ import annotations

import bisect
import math
import types
from collections.abc import Iterable
from itertools import chain
from typing import Any, ClassVar

from o2ksim.engine.decisions import Reserve, Start, WakeAt
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.errors import O2KSimError
from o2ksim.jobs import Job, JobState
from o2ksim.policies import immediate
from o2ksim.policies.base import POLICIES, Param, Policy
from o2ksim.policies.priority import (
    PRIORITIES,
    WEIGHT_NAMES,
    Priority,
    check_priority,
    make_priority,
)
from o2ksim.workloads.transforms import parse_duration


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

    @classmethod
    def _of(
        cls,
        times: list[float],
        procs: list[int],
        mem: list[float],
        releases: dict[float, list[tuple[int, float]]],
    ) -> Profile:
        profile = cls.__new__(cls)
        profile.times, profile.procs, profile.mem, profile.releases = times, procs, mem, releases
        return profile

    def seen_at(self, now: float) -> Profile:
        """A fresh, modifiable copy of this unmodified profile as seen from ``now`` (>= its start).

        Valid while the host's allocations are unchanged: steps up to ``now``
        merge into the first one, and their releases count as releases at ``now``.
        """
        times = self.times
        k = bisect.bisect_right(times, now) - 1
        if k <= 0 and times[0] == now:
            return Profile._of(list(times), list(self.procs), list(self.mem), self.releases)
        k = max(k, 0)
        merged: list[tuple[int, float]] = []
        for t in times[: k + 1]:
            merged.extend(self.releases.get(t, ()))
        releases = dict(self.releases)
        if merged:
            merged.sort()
            releases[now] = merged
        return Profile._of([now, *times[k + 1 :]], self.procs[k:], self.mem[k:], releases)

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

    def earliest(
        self, procs: int, mem: float, duration: float, not_before: float | None = None
    ) -> float:
        """Earliest start (a step start, or ``not_before``) at which ``procs``/``mem``
        stay free for ``duration``; ``inf`` when never."""
        times = self.times
        n = len(times)
        if not_before is None or not_before <= times[0]:
            i, floor = 0, times[0]
        else:
            i, floor = bisect.bisect_right(times, not_before) - 1, not_before
        while i < n:
            if self.procs[i] < procs or self.mem[i] < mem:
                i += 1
                continue
            start = times[i] if times[i] > floor else floor
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


RESERVATION_KINDS = ("dynamic", "fixed")
ALL_RESERVATIONS = ("all", "inf")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _check_reservations(v: Any) -> bool:
    if isinstance(v, str):
        return v.lower() in ALL_RESERVATIONS
    return _is_number(v) and v >= 0 and v == int(v)


def _check_duration(v: Any, positive: bool) -> bool:
    if isinstance(v, bool):
        return False
    try:
        seconds = parse_duration(v)
    except O2KSimError:
        return False
    return seconds > 0 if positive else seconds >= 0


class Backfill(Policy):
    """Priority backfill: ``N`` dynamic or fixed, sliding or non-sliding reservations.

    With the defaults (FCFS priority, one dynamic sliding reservation) it is
    EASY backfill.  See the module docstring for the reservation options.
    """

    kind = "backfill"
    description = "Priority backfill with hosts and memory: reservations for the top waiting jobs"
    source = "T§3.2.1, T§5.1"
    PARAMS: ClassVar[dict[str, Param]] = {
        "priority": Param(
            (str, dict, Priority, types.FunctionType),
            "fcfs",
            f"job priority, recomputed every pass: {' | '.join(sorted(PRIORITIES))} "
            f"| a registered name | 'module:function' | a table of weights "
            f"{', '.join(WEIGHT_NAMES)} (T Tables 12-13)",
            check=check_priority,
            check_help="must be a known priority name, 'module:function', or a table of "
            f"numeric weights among {', '.join(WEIGHT_NAMES)}",
        ),
        "reservations": Param(
            (int, str),
            1,
            "N: how many waiting jobs hold a reservation (0 = none, 'all' = every waiting job)",
            check=_check_reservations,
            check_help="must be an integer >= 0 or 'all'",
        ),
        "reservation_kind": Param(
            str,
            "dynamic",
            "dynamic-job: the current top N hold the reservations; fixed-job: a job keeps its "
            "reservation until it starts (Maui CURRHIGHEST / HIGHEST, T§3.2.1)",
            choices=RESERVATION_KINDS,
        ),
        "sliding": Param(
            bool,
            True,
            "reservations move earlier when a job ends early (T§3.2.1 Fig. 2); "
            "false = the non-sliding NCSA-MS* error of T§5.3.3",
        ),
        "interval": Param(
            (int, float, str),
            None,
            "scheduling pass every INTERVAL (seconds or e.g. '5m') instead of at every arrival "
            "and departure (NCSA-MS* ran every 5 minutes, T§3.7); unset = event-driven",
            check=lambda v: _check_duration(v, positive=True),
            check_help="must be a positive duration (seconds, or e.g. '5m')",
        ),
        "kill_overrun": Param(
            bool,
            False,
            "start each job with a time limit of its requested runtime + overrun_grace; "
            "the engine kills it there (off: jobs run their trace runtime)",
        ),
        "overrun_grace": Param(
            (int, float, str),
            0,
            "grace after the requested runtime before the kill (seconds or e.g. '1h'; "
            "NCSA-MS* allowed one hour, T§4.5.1)",
            check=lambda v: _check_duration(v, positive=False),
            check_help="must be a duration >= 0 (seconds, or e.g. '1h')",
        ),
        **immediate.PARAMS,
    }

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        p = self.params
        self.priority: Priority = make_priority(p["priority"])
        n = p["reservations"]
        self.n_reservations: float = math.inf if isinstance(n, str) else int(n)
        self.fixed: bool = p["reservation_kind"] == "fixed"
        self.sliding: bool = p["sliding"]
        self.interval: float | None = (
            None if p["interval"] is None else parse_duration(p["interval"])
        )
        self.time_limit_extra: float | None = (
            parse_duration(p["overrun_grace"]) if p["kill_overrun"] else None
        )
        # reservations carried from one pass to the next (fixed-job or non-sliding):
        # job -> (host, reserved start), in the order they were granted
        self._stateful = self.fixed or not self.sliding
        self._held: dict[Job, tuple[str, float]] = {}
        self._wakes: set[float] = set()
        self._profile_cache: dict[str, tuple[int, Profile]] = {}
        trials = immediate.TrialSettings.from_params(p)
        self.immediate = None if trials.mode == "off" else immediate.ImmediateService(trials)

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        if not isinstance(d["priority"], str | dict):
            d["priority"] = self.priority.describe()
        return d

    def held_reservations(self) -> dict[int, tuple[str, float]]:
        """Reservations carried into the next pass, by job id (fixed-job or non-sliding)."""
        return {job.id: where for job, where in self._held.items()}

    def schedule(self, snap: Snapshot) -> list[Any]:
        if self.immediate is not None:
            return self.immediate.schedule(snap, self._schedule)
        return self._schedule(snap)

    def summary_counts(self, ids: set[int] | None = None) -> dict[str, int]:
        """Immediate-service counters over ``ids`` (empty without immediate service)."""
        return {} if self.immediate is None else self.immediate.counts(ids)

    def _schedule(self, snap: Snapshot) -> list[Any]:
        now = snap.now
        hosts = snap.hosts
        stateful = self._stateful
        explain = snap.explain
        # Nothing can start when no processor is free.  Sliding reservations are
        # recomputed at the next pass anyway, so the pass is skipped unless it must
        # grant (fixed-job) or keep (non-sliding) a reservation now.
        if (
            not explain
            and not any(h.free_procs > 0 for h in hosts)
            and (not stateful or (self.sliding and len(self._held) >= self.n_reservations))
        ):
            return []
        free = {h.name: [h.free_procs, h.free_mem] for h in hosts}
        decisions: list[Any] = []
        started: list[tuple[str, float, int, float]] = []
        profiles: dict[str, Profile] | None = None
        reserved_hosts: set[str] = set()
        n_res = 0
        limit = self.n_reservations
        extra = self.time_limit_extra
        order: Iterable[Job] = self.priority.order(snap.queue, now)

        prev = self._held
        placed: dict[Job, tuple[str, float]] = {}
        keep_times = not self.sliding
        wake: list[tuple[str, float]] = []  # kept (non-slid) reservation times
        if self.fixed and prev:
            # held reservations come first, in the order they were granted (T§3.2.1):
            # each starts if it fits now and delays no earlier one, else is reserved
            # again, and every other job is then checked against all of them
            held = [j for j in prev if j.state is JobState.QUEUED]
            if held:
                held_set = set(held)
                order = chain(held, (j for j in order if j not in held_set))

        # Profiles are expensive (one per host, from every running job).  With
        # dynamic sliding reservations and no decision log, the reservations of
        # blocked jobs only matter once a lower-priority job fits now somewhere, so
        # they are placed lazily at that moment — in order, on the same profile
        # state, hence with exactly the same result.
        lazy = not stateful and not explain
        pending: list[Job] = []
        free_lists = list(free.values())
        max_free = max(f[0] for f in free_lists)  # most free processors on any host
        for job in order:
            spec = job.spec
            if profiles is None and not pending:
                host = _best_host(job, hosts, free)
                if host is not None:
                    decisions.append(self._start(job, host, extra, "highest priority and fits now"))
                    started.append((host, now + spec.req_time, spec.procs, spec.mem))
                    max_free = max(f[0] for f in free_lists)
                    continue
                if limit == 0:
                    continue
                if lazy:
                    pending.append(job)
                    n_res += 1
                    continue
                profiles = _profiles(snap, started, self._profile_cache)
            elif n_res >= limit and max_free <= 0:
                break
            if profiles is None:
                if spec.procs > max_free or not any(
                    f[0] >= spec.procs and f[1] >= spec.mem for f in free_lists
                ):
                    if n_res < limit:
                        pending.append(job)
                        n_res += 1
                    continue
                profiles = _profiles(snap, started, self._profile_cache)
                for blocked in pending:
                    at, where, _kept = _reserve(blocked, hosts, free, profiles, now)
                    if where is not None:
                        b = blocked.spec
                        profiles[where].reserve(at, b.procs, b.mem, b.req_time)
                        reserved_hosts.add(where)
            host = (
                None
                if spec.procs > max_free
                else self._backfill_host(job, hosts, free, profiles, reserved_hosts, now)
            )
            if host is not None:
                note = (
                    "reserved job fits now" if job in prev else "backfilled: delays no reservation"
                )
                decisions.append(self._start(job, host, extra, note))
                profiles[host].take(now, spec.procs, spec.mem, spec.req_time)
                max_free = max(f[0] for f in free_lists)
                continue
            if n_res < limit:
                old = prev.get(job) if keep_times else None
                at, where, kept = _reserve(job, hosts, free, profiles, now, old)
                if where is not None:
                    profiles[where].reserve(at, spec.procs, spec.mem, spec.req_time)
                    reserved_hosts.add(where)
                    if stateful:
                        placed[job] = (where, at)
                    if kept and self.interval is None and snap.interval is None:
                        wake.append((where, at))
                    if explain:
                        note = f"reservation {n_res + 1} of {limit}"
                        if kept:
                            note += " (kept: non-sliding)"
                        decisions.append(Reserve(job, where, at, note=note))
                n_res += 1

        if stateful:
            self._held = placed
            if wake:
                decisions.extend(self._wake_ups(wake, now))
        return decisions

    @staticmethod
    def _start(job: Job, host: str, extra: float | None, note: str) -> Start:
        if extra is None:
            return Start(job, host, note=note)
        return Start(job, host, time_limit=job.spec.req_time + extra, on_limit="kill", note=note)

    def _wake_ups(self, reservations: Iterable[tuple[str, float]], now: float) -> list[WakeAt]:
        """A pass at every kept (non-slid) reservation time not yet asked for.

        A reservation computed afresh sits at a predicted end of a running job
        (or just after one, by the tie rule): its event comes anyway, or the job
        ends early and the next pass handles it.  A *kept* time has lost that
        event — the job it waited for left early — so without a wake-up nothing
        would look at the reservation again until some unrelated event.
        Only kept times get one, so the wake-ups cannot feed themselves.
        """
        self._wakes = {t for t in self._wakes if t > now}
        out = []
        for host, at in reservations:
            if now < at < math.inf and at not in self._wakes:
                self._wakes.add(at)
                out.append(WakeAt(at, host, "non-sliding reservation"))
        return out

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


def _profiles(
    snap: Snapshot,
    started: list[tuple[str, float, int, float]],
    cache: dict[str, tuple[int, Profile]] | None = None,
) -> dict[str, Profile]:
    """Availability profiles of every host: running jobs plus jobs started earlier in this pass.

    ``cache`` keeps each host's profile between passes; it is reused (as a
    copy seen from now) while the host's allocations are unchanged, which
    saves rebuilding it from every running job at every pass.
    """
    now = snap.now
    extra: dict[str, list[tuple[float, int, float]]] = {}
    for host, end, p, m in started:
        extra.setdefault(host, []).append((max(end, now), p, m))
    profiles = {}
    for h in snap.hosts:
        added = extra.get(h.name)
        if added is None and cache is not None:
            entry = cache.get(h.name)
            if entry is None or entry[0] != h.version:
                base = _build_profile(h, now, ())
                cache[h.name] = (h.version, base)
            else:
                base = entry[1]
            profiles[h.name] = base.seen_at(now)
        else:
            profiles[h.name] = _build_profile(h, now, added or ())
    return profiles


def _build_profile(h: HostView, now: float, added: Iterable[tuple[float, int, float]]) -> Profile:
    added = list(added)
    releases = [(j.predicted_end(now), j.alloc_procs, j.alloc_mem) for j in h.running]
    releases.extend(added)
    return Profile(
        now,
        h.free_procs - sum(p for _, p, _m in added),
        h.free_mem - sum(m for _, _p, m in added),
        releases,
    )


def _reserve(
    job: Job,
    hosts: tuple[HostView, ...],
    free: dict[str, list[float]],
    profiles: dict[str, Profile],
    now: float,
    old: tuple[str, float] | None = None,
) -> tuple[float, str | None, bool]:
    """Where and when ``job`` is reserved, and whether that is its ``old`` reservation kept.

    Normally the earliest start over the hosts that could ever hold the job
    (ties: fewest free processors).  ``old`` is the job's reservation from the
    previous pass when reservations do not slide: it is kept while it is still
    in the future and possible; otherwise the new time is the earliest one not
    before it.
    """
    spec = job.spec
    not_before = now
    if old is not None:
        host, at = old
        if at > now:
            prof = profiles.get(host)
            if prof is not None and prof.fits(at, spec.procs, spec.mem, spec.req_time):
                return at, host, True
            not_before = at
    best_at, best_host, best_free = math.inf, None, math.inf
    for h in hosts:
        if h.spec.procs < spec.procs or h.spec.memory < spec.mem:
            continue
        at = profiles[h.name].earliest(spec.procs, spec.mem, spec.req_time, not_before)
        f = free[h.name][0]
        if at < best_at or (at == best_at and f < best_free):
            best_at, best_host, best_free = at, h.name, f
    return best_at, best_host, False


POLICIES.register(FCFS)
POLICIES.register(Backfill)
