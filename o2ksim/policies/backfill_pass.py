"""One pass of priority backfill with hosts and memory (T§3.2.1, SPEC §3.1).

:func:`run_pass` walks the queue in priority order:

1. **Start in priority order.**  While no job has been refused, each job
   that fits now (processors AND memory) starts on the host with the
   *fewest free processors* that can hold it (:meth:`BackfillPass.start_first_fit`).
2. **Reserve.**  The first job that cannot start gets a reservation: the
   earliest time some host's availability profile
   (:class:`~o2ksim.policies.profile.Profile`, from the requested runtimes of
   the running jobs and of earlier reservations) has its processors and
   memory for its whole requested runtime; the earliest host wins, ties to
   the fewest free processors (:func:`reserve`).
3. **Backfill.**  Every later job starts now only if it fits now and, on
   each host holding reservations, fits the profile over its requested
   runtime -- so it delays no reservation (:meth:`BackfillPass.backfill`);
   up to ``N`` jobs that cannot start get reservations as in step 2.

With one reservation on a host the profile test is EASY's: the job ends
before the *shadow time* or fits in the *extra* processors
(:class:`~o2ksim.policies.shadow.Shadow`); with more it is the conservative
test of T§3.2.1 (Fig. 1c).  Dynamic or fixed, sliding or non-sliding
reservations are the policy's business (:mod:`o2ksim.policies.backfill`):
the pass gets the held reservations to honour and hands back the ones to keep.

The pass is fast on deep queues and large machines without changing what it
decides:

* **Lazy reservations.**  With dynamic sliding reservations (recomputed every
  pass) and no decision log, the reservations of blocked jobs matter only once
  a later job fits now somewhere, so they are placed at that moment -- in
  order, on the same profile state, hence with the same result.  A single
  pending reservation is placed without building any profile
  (:class:`~o2ksim.policies.shadow.Releases`, kept between passes).
* **Reduced profiles.**  Once the ``N`` reservations are placed, a host holding
  exactly one is reduced to its shadow time and extra resources.
* **The walk** over the queue (:func:`~o2ksim.policies.backfill_scan.run_pass`)
  and its indexed scan of the rest of the queue live in
  :mod:`o2ksim.policies.backfill_scan`; the conservative pass carried from one
  pass to the next in :mod:`o2ksim.policies.carried_plan`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple, Protocol

from o2ksim.engine.decisions import Decision, Reserve, Start
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job
from o2ksim.policies.backfill_hosts import Free, backfill_host, best_host, reserve
from o2ksim.policies.profile import (
    Profile,
    ProfileMemo,
    Started,
    added_by_host,
    host_profiles,
    indexed,
)
from o2ksim.policies.profile_memo import NO_TIES
from o2ksim.policies.release_arrays import with_added
from o2ksim.policies.shadow import Releases, Shadow, host_releases


class Placed(NamedTuple):
    """One reservation of a pass, as :mod:`o2ksim.policies.carried_plan` carries it."""

    job: Job
    host: str | None  # None: no host's profile ever holds the job (``at`` is inf)
    at: float
    before: tuple[int, float]  # the host's free processors and memory at ``at`` just before
    spare: tuple[int, float]  # releases at ``at`` it deferred by one instant (tie rule)
    tied: bool  # another host could have started it as early


class Reservations(Protocol):
    """What a pass reads of its policy's reservation settings and per-run memos."""

    n_reservations: int | float  # N; ``inf`` for every waiting job
    sliding: bool
    stateful: bool  # fixed-job or non-sliding: reservations carried between passes
    host_first: bool  # backfill_host = "fewest-free": host by free resources, then the test
    ties_together: bool  # release_ties = "together": no release deferred by the tie rule
    held: dict[Job, tuple[str, float]]  # carried from the last pass: job -> (host, start)
    profile_cache: dict[str, ProfileMemo]
    release_cache: dict[str, Releases]


class BackfillPass:
    """The state of one backfill pass: free resources, profiles, reservations, decisions."""

    __slots__ = (
        "backfilled", "decisions", "free", "guarded", "hosts", "max_free", "n_res", "now",
        "pending", "placed", "plan", "policy", "profiles", "reserved_at", "reserved_hosts",
        "snap", "started", "wake",
    )  # fmt: skip

    def __init__(self, policy: Reservations, snap: Snapshot, free: dict[str, Free]) -> None:
        self.policy = policy
        self.snap = snap
        self.now = snap.now
        self.hosts = snap.hosts
        self.free = free
        self.max_free: int | float = -math.inf  # the most free processors on a host
        for f in free.values():
            if f.procs > self.max_free:
                self.max_free = f.procs
        self.decisions: list[Decision] = []
        self.started: list[Started] = []  # jobs started before the profiles exist
        self.profiles: dict[str, Profile] | None = None
        # once every reservation is placed: what a backfilled job must not delay
        self.guarded: dict[str, Profile | Shadow] | None = None
        self.reserved_hosts: set[str] = set()
        self.reserved_at: list[tuple[str, float]] = []  # every reservation placed: (host, start)
        self.n_res = 0  # reservations counted (placed or pending)
        self.placed: dict[Job, tuple[str, float]] = {}  # reservations to hold (stateful)
        self.wake: list[tuple[str, float]] = []  # kept (non-slid) reservation times
        self.pending: list[Job] = []  # lazy: blocked jobs whose reservations are not placed yet
        # what the next pass carries (:mod:`.carried_plan`), recorded only when asked for
        # (``plan`` not None): every reservation in order, and the jobs backfilled (as releases)
        self.plan: list[Placed] | None = None
        self.backfilled: list[Started] = []

    # -- step 1 ---------------------------------------------------------------------
    def fits_now_somewhere(self, job: Job) -> bool:
        spec = job.spec
        procs = spec.procs
        if procs > self.max_free:
            return False
        mem = spec.mem
        return any(f.procs >= procs and f.mem >= mem for f in self.free.values())

    def _booked(self, host: str, procs: int) -> None:
        """``procs`` were just booked on ``host``: keep :attr:`max_free` (the most free
        processors on any host) without looking at every host unless ``host`` had them."""
        free = self.free
        left = free[host].procs
        if left + procs >= self.max_free:
            self.max_free = left if len(free) == 1 else max(f.procs for f in free.values())

    def start_first_fit(self, job: Job) -> bool:
        """Step 1: start ``job`` now on the fitting host with the fewest free processors."""
        spec = job.spec
        if spec.procs > self.max_free:
            return False
        host = best_host(job, self.hosts, self.free)
        if host is None:
            return False
        self.decisions.append(Start(job, host, note="highest priority and fits now"))
        self.started.append((host, self.now + spec.req_time, spec.procs, spec.mem))
        self._booked(host, spec.procs)
        return True

    # -- step 2 ---------------------------------------------------------------------
    def build_profiles(self) -> None:
        """Every host's profile, with the jobs started so far in this pass running."""
        policy = self.policy
        self.profiles = host_profiles(self.snap, self.started, policy.profile_cache)
        if policy.ties_together:  # no release is deferred by the tie rule (Profile.deferred)
            for profile in self.profiles.values():
                profile.releases = NO_TIES

    def reserve(self, job: Job) -> None:
        """Step 2: reserve the earliest start of ``job`` (kept if non-sliding)."""
        assert self.profiles is not None
        policy = self.policy
        old = policy.held.get(job) if not policy.sliding else None
        at, where, kept, tied = reserve(job, self.hosts, self.free, self.profiles, self.now, old)
        if where is None:
            self._unplaced(job)
        else:
            self._reserve_on(where, at, job, tied)
            if policy.stateful:
                self.placed[job] = (where, at)
            if kept and self.snap.interval is None:
                self.wake.append((where, at))
            if self.snap.explain:
                note = f"reservation {self.n_res + 1} of {policy.n_reservations}"
                if kept:
                    note += " (kept: non-sliding)"
                self.decisions.append(Reserve(job, where, at, note=note))
        self.n_res += 1

    def place(self, pending: list[Job]) -> None:
        """Place deferred reservations, in order (dynamic sliding only: nothing to keep)."""
        assert self.profiles is not None
        for job in pending:
            at, where, _kept, tied = reserve(job, self.hosts, self.free, self.profiles, self.now)
            if where is None:
                self._unplaced(job)
            else:
                self._reserve_on(where, at, job, tied)

    def place_pending(self, pending: list[Job]) -> None:
        """Place the deferred reservations, then keep only what backfilling needs."""
        if len(pending) == 1:
            self._place_as_shadow(pending[0])
            return
        self.build_profiles()
        self.place(pending)
        self.keep_only_reserved()

    def _place_as_shadow(self, job: Job) -> None:
        """Reserve ``job`` as :func:`reserve` would, keeping only the chosen host's shadow.

        No profile is built: each host's earliest start comes from its
        :class:`Releases` (kept between passes while the host is unchanged, or
        read from the engine's release arrays on a host running many jobs).
        """
        spec = job.spec
        procs, mem = spec.procs, spec.mem
        now = self.now
        added = added_by_host(self.started, now) if self.started else {}
        cache = self.policy.release_cache
        best_at = math.inf
        best_free: int | float = math.inf
        best: tuple[str, Releases] | None = None
        for h in self.hosts:
            if h.spec.procs < procs or h.spec.memory < mem:
                continue  # this host can never hold the job
            name = h.name
            memo = cache.get(name)
            if (
                memo is not None
                and memo.version == h.version
                and now < memo.valid_until
                and name not in added
            ):
                found = memo  # host_releases' memo, looked up inline
            elif h.releases is not None and indexed(h):
                t, p, m, free_procs, free_mem = with_added(
                    now, h.free_procs, h.free_mem, h.releases, added.get(name, [])
                )
                found = Releases.from_arrays(t, p, m, free_procs, free_mem)
            else:
                found = host_releases(h, now, added.get(name), cache)
            at = found.start(now, procs, mem)
            if at <= best_at and at != math.inf:
                f = self.free[name].procs
                if at < best_at or f < best_free:
                    best_at, best_free, best = at, f, (name, found)
        self.guarded = {}
        if best is not None:
            host, found = best
            shadow = found.reserve(
                now, (procs, mem, spec.req_time), self.policy.ties_together
            )[1]
            assert shadow is not None
            self.guarded[host] = shadow
            self.reserved_hosts.add(host)
            self.reserved_at.append((host, best_at))

    def _reserve_on(self, host: str, at: float, job: Job, tied: bool = False) -> None:
        assert self.profiles is not None
        spec = job.spec
        assert self.guarded is None, "no reservation once the shadows are taken"
        profile = self.profiles[host]
        if self.plan is None:
            profile.reserve(at, spec.procs, spec.mem, spec.req_time)
        else:
            before = profile.value_at(at)
            spare = profile.reserve(at, spec.procs, spec.mem, spec.req_time)
            self.plan.append(Placed(job, host, at, before, spare, tied))
        self.reserved_hosts.add(host)
        self.reserved_at.append((host, at))

    def _unplaced(self, job: Job) -> None:
        """``job`` fits no host's profile ever: no reservation (recorded in :attr:`plan`)."""
        if self.plan is not None:
            self.plan.append(Placed(job, None, math.inf, (0, 0.0), (0, 0.0), False))

    def keep_only_reserved(self) -> None:
        """Every reservation is placed: from now on the pass only backfills, so keep the
        profiles of the reserved hosts alone, each reduced to its :class:`Shadow`
        (EASY's shadow time and extra resources) when it holds one reservation."""
        assert self.profiles is not None
        hosts = [host for host, _at in self.reserved_at]
        kept: dict[str, Profile | Shadow] = {}
        for host, at in self.reserved_at:
            profile = self.profiles[host]
            shadow = Shadow.of(profile, at) if hosts.count(host) == 1 else None
            kept[host] = profile if shadow is None else shadow
        self.guarded = kept

    # -- step 3 ---------------------------------------------------------------------
    def guards(self) -> Mapping[str, Profile | Shadow]:
        """The profiles (or shadows) a backfilled job is checked against and booked in."""
        if self.guarded is not None:
            return self.guarded
        assert self.profiles is not None
        return self.profiles

    def backfill(self, job: Job) -> bool:
        """Step 3: start ``job`` now if it fits and delays no reservation."""
        spec = job.spec
        if spec.procs > self.max_free:
            return False
        guards = self.guards()
        host = backfill_host(job, self.hosts, self.free, guards, self.reserved_hosts, self.now,
                             self.policy.host_first)  # fmt: skip
        if host is None:
            return False
        self.start_backfilled(job, host, guards.get(host))
        return True

    def start_backfilled(self, job: Job, host: str, guard: Profile | Shadow | None) -> None:
        """Start ``job`` on ``host`` (already booked in :attr:`free`), where it fits now and
        delays no reservation; book it in the host's ``guard`` (``None``: an unreserved
        host once every reservation is placed)."""
        spec = job.spec
        self._booked(host, spec.procs)
        held = job in self.policy.held
        note = "reserved job fits now" if held else "backfilled: delays no reservation"
        self.decisions.append(Start(job, host, note=note))
        if self.plan is not None:
            self.backfilled.append((host, self.now + spec.req_time, spec.procs, spec.mem))
        if guard is not None:
            guard.take(self.now, spec.procs, spec.mem, spec.req_time)


__all__ = ["BackfillPass", "Placed", "Reservations"]
