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

The pass exists twice: :meth:`Backfill._reference_pass` follows the steps
above job by job, and :meth:`Backfill._fast_pass` (the default) gives the same
schedule faster: a pass with one waiting job (dynamic sliding reservations)
only starts it if it fits; otherwise reservations are placed lazily and the
rest of the queue is scanned with numpy over the engine's
:class:`~o2ksim.engine.queue_index.QueueIndex`; once every reservation is
placed, a host holding one of them is reduced to EASY's shadow time and extra
resources (:class:`~o2ksim.policies.shadow.Shadow`), and a single deferred
reservation is placed without building any profile.  A property test checks
that the two passes agree (``fast_path = false`` selects the reference).

What the availability profile assumes about the jobs on a host:

* a RUNNING job releases its processors and memory at its predicted end
  (start + requested runtime; *now* once it has overrun, SPEC §2; from the
  work still owed if it was resized or resumed), or at the time limit it was
  started with (``Start.time_limit``) if that comes first — there the engine
  kills or requeues it;
* a PREEMPTED job holds its memory and no processors, and the profile never
  gives that memory back: when it will resume and end is not known, so the
  memory stays unavailable to reservations and backfilled jobs (the free
  memory the host reports already excludes it);
* jobs started earlier in the same pass count as running jobs from now.
"""

from __future__ import annotations

import math
import types
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from o2ksim.engine.decisions import Decision, Reserve, Start, WakeAt
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.policies import immediate
from o2ksim.policies.base import POLICIES, Param, Policy
from o2ksim.policies.priority import (
    PRIORITIES,
    WEIGHT_NAMES,
    Priority,
    RankedQueue,
    check_priority,
    make_priority,
)
from o2ksim.policies.profile import Profile, with_added
from o2ksim.policies.shadow import Releases, Shadow


@dataclass(slots=True)
class Free:
    """What one host has free *now* during a pass, booked down as the pass starts jobs."""

    procs: int
    mem: float

    def book(self, spec: JobSpec) -> None:
        self.procs -= spec.procs
        self.mem -= spec.mem


def free_resources(hosts: Iterable[HostView]) -> dict[str, Free]:
    """Each host's free processors and memory at the start of a pass, by name."""
    return {h.name: Free(h.free_procs, h.free_mem) for h in hosts}


class FCFS(Policy):
    """Strict first-come first-served: start jobs in order until one does not fit."""

    kind = "fcfs"
    description = (
        "Strict FCFS: jobs start in submission order; the first that does not fit blocks the rest"
    )
    source = "T§2.3.2"
    PARAMS: ClassVar[dict[str, Param]] = {}

    def schedule(self, snap: Snapshot) -> list[Decision]:
        free = free_resources(snap.hosts)
        decisions: list[Decision] = []
        for job in snap.queue:
            host = _best_host(job, snap.hosts, free)
            if host is None:
                break
            decisions.append(Start(job, host, note="next in FCFS order and fits"))
        return decisions

    def idle_when_nothing_fits(self) -> bool:
        """A pass starts only jobs that fit now and keeps nothing: the engine may skip it."""
        return True


RESERVATION_KINDS = ("dynamic", "fixed")
ALL_RESERVATIONS = ("all", "inf")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _check_reservations(v: Any) -> bool:
    if isinstance(v, str):
        return v.lower() in ALL_RESERVATIONS
    return _is_number(v) and v >= 0 and v == int(v)


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
            option=True,
            metavar="N|all",
        ),
        "reservation_kind": Param(
            str,
            "dynamic",
            "dynamic-job: the current top N hold the reservations; fixed-job: a job keeps its "
            "reservation until it starts (Maui CURRHIGHEST / HIGHEST, T§3.2.1)",
            choices=RESERVATION_KINDS,
            option=True,
        ),
        "sliding": Param(
            bool,
            True,
            "reservations move earlier when a job ends early (T§3.2.1 Fig. 2); "
            "false = the non-sliding NCSA-MS* error of T§5.3.3",
            option=True,
        ),
        "fast_path": Param(
            bool,
            True,
            "scan the queue for backfill candidates with numpy (same schedule); "
            "false = the plain reference pass, job by job (slower; for checking)",
        ),
        **immediate.PARAMS,
    }

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        p = self.params
        self.priority: Priority = make_priority(p["priority"])
        n = p["reservations"]
        self.n_reservations: int | float = math.inf if isinstance(n, str) else int(n)
        self.fixed: bool = p["reservation_kind"] == "fixed"
        self.sliding: bool = p["sliding"]
        self.fast_path: bool = p["fast_path"]
        # reservations carried from one pass to the next (fixed-job or non-sliding):
        # job -> (host, reserved start), in the order they were granted
        self._stateful = self.fixed or not self.sliding
        self._held: dict[Job, tuple[str, float]] = {}
        self._wakes: set[float] = set()
        self._profile_cache: dict[str, tuple[int, Profile]] = {}
        self._release_cache: dict[str, Releases] = {}  # host_releases' memo
        trials = immediate.TrialSettings.from_params(p)
        self.immediate = None if trials.mode == "off" else immediate.ImmediateService(trials)

    def bind(self, machine: Any, rng: Any = None) -> None:
        """Called before each run: everything kept between passes belongs to the previous run.

        The per-host caches are keyed by host versions and job ids, which a new
        run reuses; reservations held by fixed-job or non-sliding backfill, the
        pending wake-ups and the immediate service's trials and counters are
        that run's.  So one policy object run twice gives two fresh runs.
        """
        super().bind(machine, rng)
        self._held = {}
        self._wakes = set()
        self._profile_cache.clear()
        self._release_cache.clear()
        if self.immediate is not None:
            self.immediate = immediate.ImmediateService(self.immediate.settings)

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        if not isinstance(d["priority"], str | dict):
            d["priority"] = self.priority.describe()
        return d

    def held_reservations(self) -> dict[int, tuple[str, float]]:
        """Reservations carried into the next pass, by job id (fixed-job or non-sliding)."""
        return {job.id: where for job, where in self._held.items()}

    def schedule(self, snap: Snapshot) -> list[Decision]:
        """One pass; with immediate service, the trial runs around it (:mod:`.immediate`)."""
        if self.immediate is not None:
            return self.immediate.schedule(snap, self._schedule, not self._stateful)
        return self._schedule(snap)

    def idle_when_nothing_fits(self) -> bool:
        """Dynamic sliding reservations: a pass where nothing fits starts nothing and keeps
        nothing (reservations are recomputed every pass), unless immediate service has
        pending work (:meth:`has_pending_work`)."""
        return not self._stateful

    def has_pending_work(self, arrived: bool) -> bool:
        """Immediate service may give a trial or resume a victim when nothing fits."""
        return self.immediate is not None and self.immediate.has_pending_work(arrived)

    def summary_counts(self, ids: Collection[int] | None = None) -> dict[str, int]:
        """Immediate-service counters over ``ids`` (empty without immediate service)."""
        return {} if self.immediate is None else self.immediate.summary_counts(ids)

    def stats(self) -> dict[str, float]:
        """Immediate-service counters over every job of the run (``run.json``)."""
        return {} if self.immediate is None else self.immediate.stats()

    def _schedule(self, snap: Snapshot) -> list[Decision]:
        """One pass (module docstring): the fast path, or the reference pass it must equal."""
        # Nothing can start when no processor is free.  Sliding reservations are
        # recomputed at the next pass anyway, so the pass is skipped unless it must
        # grant (fixed-job) or keep (non-sliding) a reservation now.
        free: dict[str, Free] = {}
        max_free: int | float = -math.inf  # int | float: stays an int once it is one
        for h in snap.hosts:
            free[h.name] = Free(h.free_procs, h.free_mem)
            if h.free_procs > max_free:
                max_free = h.free_procs
        if (
            max_free <= 0
            and not snap.explain
            and (not self._stateful or (self.sliding and len(self._held) >= self.n_reservations))
        ):
            return []
        if self.fast_path and len(snap.queue) == 1 and not self._stateful and not snap.explain:
            # the commonest pass on a lightly loaded machine: the one waiting job starts if
            # it fits now; otherwise its (dynamic) reservation protects nobody
            (job,) = snap.queue
            host = _best_host(job, snap.hosts, free)
            return [] if host is None else [Start(job, host, note="highest priority and fits now")]
        order = self._order(snap)
        p = _Pass(self, snap, free, max_free)
        if self.fast_path:
            self._fast_pass(p, order)
        else:
            self._reference_pass(p, order)
        if self._stateful:
            self._held = p.placed
            if p.wake:
                p.decisions.extend(self._wake_ups(p.wake, snap.now))
        return p.decisions

    def _order(self, snap: Snapshot) -> Collection[Job]:
        """The queue in priority order; under fixed-job, held reservations first (T§3.2.1)."""
        if self.fast_path:
            order = self.priority.rank(snap.queue, snap.now, snap.queue_index)
        else:
            order = self.priority.order(snap.queue, snap.now)
        if self.fixed and self._held:
            # held reservations come first, in the order they were granted: each starts
            # if it fits now and delays no earlier one, else is reserved again, and
            # every other job is then checked against all of them
            held = [j for j in self._held if j.state is JobState.QUEUED]
            if held:
                held_set = set(held)
                return [*held, *(j for j in order if j not in held_set)]
        return order

    def _reference_pass(self, p: _Pass, order: Iterable[Job]) -> None:
        """The pass of T§3.2.1 job by job, in priority order; the fast path must equal it.

        1. Until some job cannot start, start each job on the host with the
           fewest free processors that has its processors and memory free now.
        2. A job that cannot start gets a reservation while fewer than ``N``
           are held: the earliest start on any host, from the requested
           runtimes of the running jobs and of earlier reservations.
        3. After the first such job, a job starts now only if it fits now and
           delays no reservation (it fits each reserved host's profile over
           its requested runtime); otherwise step 2 applies to it.

        The steps are :class:`_Pass` methods shared with the fast path, so
        they carry two shortcuts a reader should know: ``p.max_free`` is the
        most processors free on any host, kept up to date as jobs start (a
        job wider than it fits no host, the same answer as asking each host),
        and "fits now" (the host has the job's processors and memory free) is
        written out as ``free.procs >= procs and free.mem >= mem`` inside the
        host loops.
        """
        limit = self.n_reservations
        blocked = False
        for job in order:
            if not blocked:
                if p.start_first_fit(job):
                    continue
                if limit == 0:  # no reservations: nothing to protect, nothing blocks
                    continue
                blocked = True
                p.build_profiles()
            elif p.backfill(job):
                continue
            elif p.n_res >= limit and p.max_free <= 0:
                break  # every reservation placed and every host full: nothing more happens
            if p.n_res < limit:
                p.reserve(job)

    def _fast_pass(self, p: _Pass, order: Collection[Job]) -> None:
        """The reference pass with the same result, faster on deep queues.

        * Profiles are built only when needed: with dynamic sliding reservations
          and no decision log, the reservations of blocked jobs matter only once a
          later job fits now somewhere, so they are placed at that moment — in
          order, on the same profile state, hence with the same result.
        * Once the ``N`` reservations are held, the rest of the queue is scanned
          with numpy (:func:`_fits`): each step finds the first job
          that fits now on some host by processors and memory and fits the
          profile of every reserved host over its requested runtime; only that
          job is then placed in Python (same host rule as the reference).  Below
          ``INDEXED_SCAN_MIN`` jobs left, :func:`_scan` goes job by job, with each
          host's free resources and guard looked up once per pass.
        * Either scan stops at once when no host has as many free processors as
          the smallest request in the queue (``QueueIndex.smallest_procs``):
          the reservations all counted (placed or pending), nothing else can happen.
        * The priority order comes from :meth:`Priority.rank`, over the queue
          index's rows (the same order as :meth:`Priority.order`).
        """
        limit = self.n_reservations
        lazy = not self._stateful and not p.snap.explain
        pending: list[Job] = []  # blocked jobs whose reservations are not placed yet
        consumed = 0
        jobs = iter(order)
        blocked = False
        for job in jobs:
            consumed += 1
            if not blocked:
                if p.start_first_fit(job):
                    continue
                if limit == 0:
                    continue
                blocked = True
                if not lazy:
                    p.build_profiles()
            elif p.profiles is None:
                if not p.fits_now_somewhere(job):
                    pending.append(job)
                    p.n_res += 1
                    if p.n_res >= limit:
                        break
                    continue
                p.build_profiles()
                p.place(pending)
            if p.profiles is not None and p.backfill(job):
                continue
            if p.profiles is None:
                pending.append(job)
                p.n_res += 1
            else:
                p.reserve(job)
            if p.n_res >= limit:
                break
        else:
            return
        index = p.snap.queue_index
        if index is None or len(index) != len(order):
            _scan(p, jobs, pending, 1)  # no index for this queue: job by job
            return
        # every job left asks for at least the queue's smallest request: none fits now
        # when no host has that many processors free; the N reservations are all
        # counted (placed, or pending and then placing them starts nothing), so
        # nothing else can happen and the rest of the queue is not looked at
        fewest = index.smallest_procs()
        if p.max_free < fewest:
            return
        if len(order) - consumed < INDEXED_SCAN_MIN:
            _scan(p, jobs, pending, fewest)  # short rest: job by job
            return
        rows = _rows_in_order(index, order, consumed)
        procs, mem, req = index.procs[rows], index.mem[rows], index.req_time[rows]
        # Resources only shrink during a pass, so a job that fails the test now fails
        # at its turn too: each step tests only the jobs that passed the last one.
        if p.profiles is None:
            left_at = np.flatnonzero(_fits(p, procs, mem, req, with_profiles=False))
            if not len(left_at):
                return
            p.place_pending(pending)
        else:
            left_at = np.arange(len(rows))
            p.keep_only_reserved()
        while len(left_at) and p.max_free > 0:
            left_at = left_at[
                _fits(p, procs[left_at], mem[left_at], req[left_at], with_profiles=True)
            ]
            if not len(left_at):
                return
            started = p.backfill(index.jobs[rows[left_at[0]]])
            assert started, "the indexed scan and the job-by-job test disagree"
            left_at = left_at[1:]

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


class _Pass:
    """The state of one backfill pass: free resources, profiles, reservations, decisions."""

    __slots__ = (
        "decisions", "free", "held", "hosts", "max_free", "n_res", "now", "placed", "policy",
        "profiles", "reserved_at", "reserved_hosts", "shadows", "snap", "started", "wake",
    )  # fmt: skip

    def __init__(
        self, policy: Backfill, snap: Snapshot, free: dict[str, Free], max_free: int | float
    ) -> None:
        self.policy = policy
        self.snap = snap
        self.now = snap.now
        self.hosts = snap.hosts
        self.free = free
        self.max_free = max_free  # most free processors on a host
        self.held = policy._held  # reservations held from the previous pass (stateful only)
        self.decisions: list[Decision] = []
        # jobs started before the profiles exist: (host, predicted end, procs, mem)
        self.started: list[tuple[str, float, int, float]] = []
        self.profiles: dict[str, Profile] | None = None
        # once every reservation is placed: what a backfilled job must not delay (keep_only_reserved)
        self.shadows: dict[str, Profile | Shadow] | None = None
        self.reserved_hosts: set[str] = set()
        self.reserved_at: list[tuple[str, float]] = []  # every reservation placed: (host, start)
        self.n_res = 0
        self.placed: dict[Job, tuple[str, float]] = {}  # reservations to hold (stateful)
        self.wake: list[tuple[str, float]] = []  # kept (non-slid) reservation times

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
        host = _best_host(job, self.hosts, self.free)
        if host is None:
            return False
        self.decisions.append(Start(job, host, note="highest priority and fits now"))
        self.started.append((host, self.now + spec.req_time, spec.procs, spec.mem))
        self._booked(host, spec.procs)
        return True

    def build_profiles(self) -> None:
        policy = self.policy
        self.profiles = _profiles(
            self.snap, self.started, policy._profile_cache, use_index=policy.fast_path
        )

    def backfill(self, job: Job) -> bool:
        """Step 3: start ``job`` now if it fits and delays no reservation."""
        spec = job.spec
        if spec.procs > self.max_free:
            return False
        guards = self.guards()
        host = _backfill_host(job, self.hosts, self.free, guards, self.reserved_hosts, self.now)
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
        note = "reserved job fits now" if job in self.held else "backfilled: delays no reservation"
        self.decisions.append(Start(job, host, note=note))
        if guard is not None:
            guard.take(self.now, spec.procs, spec.mem, spec.req_time)

    def guards(self) -> Mapping[str, Profile | Shadow]:
        """The profiles (or shadows) a backfilled job is checked against and booked in."""
        if self.shadows is not None:
            return self.shadows
        assert self.profiles is not None
        return self.profiles

    def reserve(self, job: Job) -> None:
        """Step 2: reserve the earliest start of ``job`` (kept if non-sliding)."""
        assert self.profiles is not None
        policy = self.policy
        old = policy._held.get(job) if not policy.sliding else None
        at, where, kept = _reserve(job, self.hosts, self.free, self.profiles, self.now, old)
        if where is not None:
            self._reserve_on(where, at, job)
            if policy._stateful:
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
            at, where, _kept = _reserve(job, self.hosts, self.free, self.profiles, self.now)
            if where is not None:
                self._reserve_on(where, at, job)

    def place_pending(self, pending: list[Job]) -> None:
        """Place the deferred reservations, then keep only what backfilling needs.

        One reservation needs no profile at all: each host's earliest start
        and shadow come straight from its sorted releases
        (:meth:`Shadow.reserve`), and the host is chosen as :func:`_reserve`
        does.
        """
        if len(pending) == 1:
            self._place_as_shadow(pending[0])
            return
        self.build_profiles()
        self.place(pending)
        self.keep_only_reserved()

    def _place_as_shadow(self, job: Job) -> None:
        """Reserve ``job`` as :func:`_reserve` would, keeping only the chosen host's shadow.

        Each host's start comes from its :class:`Releases` (kept between passes
        while the host is unchanged: two bisections per host), or from numpy on
        a host with many running jobs; only the winner's :class:`Shadow` is built.
        """
        spec = job.spec
        procs, mem = spec.procs, spec.mem
        now = self.now
        added = _added_by_host(self.started, now) if self.started else {}
        cache = self.policy._release_cache
        best_at = math.inf
        best_free: int | float = math.inf
        best: tuple[str, Releases | Shadow] | None = None
        for h in self.hosts:
            if h.spec.procs < procs or h.spec.memory < mem:
                continue
            name = h.name
            memo = cache.get(name)
            found: Releases | Shadow | None
            if memo is not None and memo.version == h.version and name not in added:
                found = memo  # host_releases' memo, looked up inline
                at = memo.start(now, procs, mem)
            elif h.releases is not None and _indexed(h):
                t, p, m, free_procs, free_mem = with_added(
                    now, h.free_procs, h.free_mem, h.releases, added.get(name, [])
                )
                at, found = Shadow.reserve(
                    now, (free_procs, free_mem), (t, p, m), (procs, mem, spec.req_time)
                )
            else:
                found = host_releases(h, now, added.get(name), cache)
                at = found.start(now, procs, mem)
            if at <= best_at and found is not None and at != math.inf:
                f = self.free[name].procs
                if at < best_at or f < best_free:
                    best_at, best_free, best = at, f, (name, found)
        self.shadows = {}
        if best is not None:
            host, found = best
            if isinstance(found, Shadow):
                shadow: Shadow | None = found
            else:
                shadow = found.reserve(now, (procs, mem, spec.req_time))[1]
            assert shadow is not None
            self.shadows[host] = shadow
            self.reserved_hosts.add(host)
            self.reserved_at.append((host, best_at))

    def _reserve_on(self, host: str, at: float, job: Job) -> None:
        assert self.profiles is not None
        spec = job.spec
        assert self.shadows is None, "no reservation once the shadows are taken"
        self.profiles[host].reserve(at, spec.procs, spec.mem, spec.req_time)
        self.reserved_hosts.add(host)
        self.reserved_at.append((host, at))

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
        self.shadows = kept


INDEXED_SCAN_MIN = 64  # below this many jobs left, numpy's per-call cost outweighs the scan
ARRAY_PROFILE_MIN = 64  # running jobs on a host from which its profile is built with numpy


def _scan(p: _Pass, jobs: Iterable[Job], pending: list[Job], fewest: float) -> None:
    """Backfill from ``jobs`` once every reservation is held, job by job (the reference's
    step 3 with lazily placed reservations); ``fewest``: no job asks for fewer processors,
    so the scan stops once no host has that many free."""
    if p.profiles is not None:
        p.keep_only_reserved()
    floor = max(fewest, 1)
    jobs = iter(jobs)
    if p.shadows is None:  # reservations not placed yet: until some job fits now
        for job in jobs:
            if p.max_free < floor:
                return
            if job.spec.procs <= p.max_free and p.fits_now_somewhere(job):
                p.place_pending(pending)
                p.backfill(job)
                break
        else:
            return
    _scan_placed(p, jobs, floor)


def _scan_placed(p: _Pass, jobs: Iterator[Job], floor: float) -> None:
    """:func:`_scan`'s loop once every reservation is placed: :meth:`_Pass.backfill` for
    each job, with every host's name, free resources and reservation guard looked up
    once per pass instead of once per job and host (same host rule: the fewest free
    processors among the hosts where the job fits now and delays no reservation)."""
    assert p.shadows is not None
    shadows, reserved = p.shadows, p.reserved_hosts
    hosts = [
        (h.name, p.free[h.name], shadows.get(h.name) if h.name in reserved else None)
        for h in p.hosts
    ]
    now = p.now
    for job in jobs:
        if p.max_free < floor:
            return
        spec = job.spec
        procs, mem = spec.procs, spec.mem
        if procs > p.max_free:
            continue  # fits no host now
        best: tuple[str, Free, Profile | Shadow | None] | None = None
        best_free: int | float = math.inf
        for host in hosts:
            _name, free, guard = host
            have = free.procs
            if have < procs or free.mem < mem or have >= best_free:
                continue
            if guard is not None and not guard.fits(now, procs, mem, spec.req_time):
                continue
            best, best_free = host, have
        if best is not None:
            name, free, guard = best
            free.book(spec)
            p.start_backfilled(job, name, guard)


def _rows_in_order(index: QueueIndex, order: Collection[Job], skip: int) -> np.ndarray:
    """QueueIndex rows of ``order`` after its first ``skip`` jobs."""
    if isinstance(order, RankedQueue):
        return order.rows[skip:]
    if isinstance(order, list):
        row = index.row_of
        rest = order[skip:]
        return np.fromiter((row[j.id] for j in rest), dtype=np.intp, count=len(rest))
    return index.rows()[skip:]  # the queue itself, in queue (= row) order


def _fits(
    p: _Pass,
    procs: np.ndarray,
    mem: np.ndarray,
    req: np.ndarray,
    *,
    with_profiles: bool,
) -> np.ndarray:
    """Which of these requests fit now on some host (and, ``with_profiles``, delay no
    reservation there): the reference pass's test, for many jobs at once.

    A job fits a reserved host's profile over ``[now, now + req)`` iff every
    step starting before ``now + req`` has its processors and memory, i.e. iff
    the running minimum of the steps up to the last such step does; a host
    reduced to its :class:`Shadow` answers with EASY's test directly.
    """
    ok = np.zeros(len(procs), dtype=bool)
    guards = p.guards() if with_profiles else {}
    for h in p.hosts:
        f = p.free[h.name]
        if f.procs <= 0:
            continue
        here = (procs <= f.procs) & (mem <= f.mem)
        prof = guards.get(h.name) if h.name in p.reserved_hosts else None
        if isinstance(prof, Shadow):
            here &= prof.admits(procs, mem, req)
        elif prof is not None:
            fit = np.flatnonzero(here)  # only these need the profile
            steps: Any = prof  # a Profile's steps are lists, an ArrayProfile's numpy arrays
            last = np.asarray(steps.times).searchsorted(p.now + req[fit], side="left") - 1
            np.maximum(last, 0, out=last)
            min_procs = np.minimum.accumulate(np.asarray(steps.procs, dtype=float))
            min_mem = np.minimum.accumulate(np.asarray(steps.mem, dtype=float))
            here[fit] = (min_procs[last] >= procs[fit]) & (min_mem[last] >= mem[fit])
        ok |= here
    return ok


def _backfill_host(
    job: Job,
    hosts: tuple[HostView, ...],
    free: dict[str, Free],
    profiles: Mapping[str, Profile | Shadow],
    reserved_hosts: set[str],
    now: float,
) -> str | None:
    """The host with the fewest free processors where ``job`` fits now and delays no
    reservation; books it in ``free``."""
    spec = job.spec
    procs, mem = spec.procs, spec.mem
    best = None
    best_free: int | float = math.inf
    for h in hosts:
        name = h.name
        f = free[name]
        have = f.procs
        if have < procs or f.mem < mem or have >= best_free:
            continue
        if name in reserved_hosts and not profiles[name].fits(now, procs, mem, spec.req_time):
            continue
        best, best_free = name, have
    if best is not None:
        free[best].book(spec)
    return best


def _best_host(job: Job, hosts: tuple[HostView, ...], free: dict[str, Free]) -> str | None:
    """The host that can start ``job`` now with the fewest free processors; books it in ``free``."""
    spec = job.spec
    procs, mem = spec.procs, spec.mem
    best = None
    best_free: int | float = math.inf
    for h in hosts:
        f = free[h.name]
        have = f.procs
        if have >= procs and f.mem >= mem and have < best_free:
            best, best_free = h.name, have
    if best is not None:
        free[best].book(spec)
    return best


def _profiles(
    snap: Snapshot,
    started: list[tuple[str, float, int, float]],
    cache: dict[str, tuple[int, Profile]] | None = None,
    *,
    use_index: bool = False,
) -> dict[str, Profile]:
    """Availability profiles of every host: running jobs plus jobs started earlier in this pass.

    ``use_index``: build each from the engine's sorted release arrays
    (:class:`~o2ksim.engine.releases.ReleaseIndex`) when the host has one
    and no job whose release moves with time.  Otherwise from the running
    jobs one by one; ``cache`` then keeps each host's profile between passes,
    reused (as a copy seen from now) while the host's allocations are
    unchanged.
    """
    now = snap.now
    extra = _added_by_host(started, now)
    profiles = {}
    for h in snap.hosts:
        added = extra.get(h.name)
        index = h.releases
        if use_index and index is not None and _indexed(h):
            profiles[h.name] = Profile.from_release_index(
                now, h.free_procs, h.free_mem, index, added or []
            )
        elif added is None and cache is not None:
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


def _added_by_host(
    started: list[tuple[str, float, int, float]], now: float
) -> dict[str, list[tuple[float, int, float]]]:
    """Jobs started earlier in the pass as releases ``(end, procs, mem)``, by host."""
    added: dict[str, list[tuple[float, int, float]]] = {}
    for host, end, p, m in started:
        added.setdefault(host, []).append((max(end, now), p, m))
    return added


def host_releases(
    h: HostView,
    now: float,
    added: list[tuple[float, int, float]] | None,
    cache: dict[str, Releases],
) -> Releases:
    """A host's expected releases and free resources, with the jobs ``added`` in this
    pass counted as running (plain lists; the host's running jobs one by one).

    Without ``added``, ``cache`` keeps a host's :class:`Releases` between
    passes while its allocations are unchanged (its ``version``): every
    release time has the form ``max(constant, now)``
    (:meth:`~o2ksim.jobs.Job.predicted_end`), so the releases of an earlier
    pass, in the order of their constants, answer for this one
    (:class:`Releases` explains why).  When the version has changed, the
    kept instance is updated for the jobs that left and started since
    (:func:`_update_releases`) where that is exact, and rebuilt otherwise.
    """
    if not added:
        entry = cache.get(h.name)
        if entry is None or (entry.version != h.version and not _update_releases(entry, h, now)):
            rows_of: dict[int, tuple[float, float, float]] = {
                j.id: (release_time(j, now), j.alloc_procs, j.alloc_mem) for j in _running(h)
            }
            entry = Releases(sorted(rows_of.values()), h.free_procs, h.free_mem, h.version, rows_of)
            cache[h.name] = entry
        return entry
    raised: list[tuple[float, float, float]] = [
        (max(release_time(j, now), now), j.alloc_procs, j.alloc_mem) for j in _running(h)
    ]
    raised.extend(added)
    raised.sort()
    free_procs = h.free_procs - sum(b for _a, b, _c in added)
    free_mem = h.free_mem - sum(c for _a, _b, c in added)
    return Releases(raised, free_procs, free_mem)


def _update_releases(entry: Releases, h: HostView, now: float) -> bool:
    """Bring a host's kept :class:`Releases` to its current version in place, from the
    jobs that left and started since; ``False`` (untouched) when that would not be exact.

    Exact when every allocation change since ``entry.version`` is one of
    those starts or departures: then every job running both then and now was
    left alone and keeps its row (:class:`Releases`).  The engine bumps a
    host's version by one per allocation change (``Host.take``/``give``:
    start, end, preemption, resumption, resize), so that holds iff the
    version moved by exactly the number of jobs that started or left; a
    resize, a job that left and came back (requeued, resumed) or a job that
    came and went in between all make the count differ.
    """
    rows_of = entry.rows_of
    if rows_of is None:
        return False
    running = getattr(h.running, "mapping", None)  # the engine's live dict of running jobs
    if running is None:
        running = {j.id: j for j in _running(h)}
    left = rows_of.keys() - running.keys()
    started = running.keys() - rows_of.keys()
    if h.version - entry.version != len(left) + len(started):
        return False
    first = len(entry.times)
    for job_id in left:
        i = entry.remove(rows_of.pop(job_id))
        if i < first:
            first = i
    for job_id in started:
        j = running[job_id]
        row = rows_of[job_id] = (release_time(j, now), j.alloc_procs, j.alloc_mem)
        i = entry.insert(row)
        if i < first:
            first = i
    entry.resum(first, h.free_procs, h.free_mem, h.version)
    return True


def _indexed(h: HostView) -> bool:
    """Whether the host's profile is built from the engine's release arrays (numpy)."""
    index = h.releases
    return (
        index is not None
        and len(index) >= ARRAY_PROFILE_MIN
        and not index.irregular
        and len(index) == len(h.running)
    )


class Releasing(Protocol):
    """What a release profile reads of a running job.

    A :class:`~o2ksim.jobs.Job`, or a stand-in with these fields: immediate
    service shows the backfill pass each preempted job still owed processors
    as one (``immediate.Borrowed``).  Typed apart from :class:`Job` so that
    the compiled build (setup.py) does not insist on a real :class:`Job`.
    """

    @property
    def id(self) -> int: ...
    @property
    def alloc_procs(self) -> int: ...
    @property
    def alloc_mem(self) -> int: ...
    @property
    def time_limit(self) -> float: ...
    def predicted_end(self, now: float) -> float: ...


def _running(h: HostView) -> Collection[Releasing]:
    """The jobs running on ``h``, as the release profiles read them (:class:`Releasing`)."""
    return h.running


def release_time(job: Releasing, now: float) -> float:
    """When a running job is expected to give its processors and memory back.

    Its predicted end (start + requested runtime, or *now* once overrun,
    SPEC §2; from the work still owed if it was resized or preempted), but
    never after the time limit it was started with (``Start.time_limit``):
    there the engine kills or requeues it, and either way it releases
    everything.
    """
    end = job.predicted_end(now)
    limit = job.time_limit
    return limit if limit < end else end


def _build_profile(h: HostView, now: float, added: Iterable[tuple[float, int, float]]) -> Profile:
    added = list(added)
    releases: list[tuple[float, int, float]] = [
        (release_time(j, now), j.alloc_procs, j.alloc_mem) for j in _running(h)
    ]
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
    free: dict[str, Free],
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
    best_at, best_host = math.inf, None
    best_free: int | float = math.inf
    for h in hosts:
        if h.spec.procs < spec.procs or h.spec.memory < spec.mem:
            continue
        at = profiles[h.name].earliest(spec.procs, spec.mem, spec.req_time, not_before)
        f = free[h.name].procs
        if at < best_at or (at == best_at and f < best_free):
            best_at, best_host, best_free = at, h.name, f
    return best_at, best_host, False


POLICIES.register(FCFS)
POLICIES.register(Backfill)
