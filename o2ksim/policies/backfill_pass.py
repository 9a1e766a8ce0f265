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
* **Indexed scan.**  The rest of the queue is tested with numpy over the
  engine's :class:`~o2ksim.engine.queue_index.QueueIndex` (:func:`_fits`):
  each step finds the first job that fits now and delays no reservation; only
  that job is placed in Python, with the same host rule.  Resources only shrink
  during a pass, so a job that fails once fails for the rest of the pass.
  When the order is kept as an index (FCFS, :mod:`~o2ksim.policies.order_scan`),
  whole blocks of rows are skipped on their minima (:func:`_backfill_blocks`).
* **Pruning.**  Every scan stops as soon as no host has as many free processors
  as the smallest request in the queue.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Protocol

import numpy as np

from o2ksim.engine.decisions import Decision, Reserve, Start
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job
from o2ksim.policies.backfill_hosts import (
    Free,
    backfill_host,
    best_host,
    fits_somewhere,
    reserve,
)
from o2ksim.policies.order_scan import IndexedOrder, MergedOrder, MergedScan, RowScan
from o2ksim.policies.priority import RankedQueue
from o2ksim.policies.profile import (
    Profile,
    Started,
    added_by_host,
    host_profiles,
    indexed,
    with_added,
)
from o2ksim.policies.shadow import Releases, Shadow, host_releases

INDEXED_SCAN_MIN = 64  # below this many jobs left, numpy's per-call cost outweighs the scan


class Reservations(Protocol):
    """What a pass reads of its policy's reservation settings and per-run memos."""

    n_reservations: int | float  # N; ``inf`` for every waiting job
    sliding: bool
    stateful: bool  # fixed-job or non-sliding: reservations carried between passes
    held: dict[Job, tuple[str, float]]  # carried from the last pass: job -> (host, start)
    profile_cache: dict[str, tuple[int, Profile]]
    release_cache: dict[str, Releases]


class BackfillPass:
    """The state of one backfill pass: free resources, profiles, reservations, decisions."""

    __slots__ = (
        "decisions", "free", "guarded", "hosts", "max_free", "n_res", "now", "placed",
        "policy", "profiles", "reserved_at", "reserved_hosts", "snap", "started", "wake",
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

    def reserve(self, job: Job) -> None:
        """Step 2: reserve the earliest start of ``job`` (kept if non-sliding)."""
        assert self.profiles is not None
        policy = self.policy
        old = policy.held.get(job) if not policy.sliding else None
        at, where, kept = reserve(job, self.hosts, self.free, self.profiles, self.now, old)
        if where is not None:
            self._reserve_on(where, at, job)
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
            at, where, _kept = reserve(job, self.hosts, self.free, self.profiles, self.now)
            if where is not None:
                self._reserve_on(where, at, job)

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
            if memo is not None and memo.version == h.version and name not in added:
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
            shadow = found.reserve(now, (procs, mem, spec.req_time))[1]
            assert shadow is not None
            self.guarded[host] = shadow
            self.reserved_hosts.add(host)
            self.reserved_at.append((host, best_at))

    def _reserve_on(self, host: str, at: float, job: Job) -> None:
        assert self.profiles is not None
        spec = job.spec
        assert self.guarded is None, "no reservation once the shadows are taken"
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
        host = backfill_host(job, self.hosts, self.free, guards, self.reserved_hosts, self.now)
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
        if guard is not None:
            guard.take(self.now, spec.procs, spec.mem, spec.req_time)


def run_pass(p: BackfillPass, order: Collection[Job]) -> None:
    """Steps 1-3 over ``order``: the queue in priority order (held fixed reservations
    first).

    Lazy reservations (module docstring): with dynamic sliding reservations and no
    decision log, a blocked job's reservation is only *counted* (``pending``) until
    some later job fits now; then the pending reservations are placed, in order, on
    the profiles as they stood, and that job is tested against them.  Once ``N``
    reservations are counted, the rest of the queue can only be backfilled
    (:func:`_backfill_rest`).
    """
    policy = p.policy
    limit = policy.n_reservations
    lazy = not policy.stateful and not p.snap.explain
    pending: list[Job] = []  # blocked jobs whose reservations are not placed yet
    consumed = 0
    jobs = iter(order)
    blocked = False  # some job could not start: from now on, jobs are backfilled
    job = None
    for job in jobs:
        consumed += 1
        if not blocked:
            if p.start_first_fit(job):  # step 1: in priority order, while all fit
                continue
            if limit == 0:  # no reservations: nothing to protect, nothing blocks
                continue
            blocked = True  # the first job that cannot start
            if not lazy:
                p.build_profiles()
        elif p.profiles is None:  # lazy, and no job after the first blocked one fitted
            if not p.fits_now_somewhere(job):
                pending.append(job)  # step 2, deferred
                p.n_res += 1
                if p.n_res >= limit:
                    break
                continue
            p.build_profiles()  # this job fits now: place the deferred reservations
            p.place(pending)
        if p.profiles is not None and p.backfill(job):  # step 3: delays no reservation
            continue
        if p.profiles is None:
            pending.append(job)  # step 2, deferred
            p.n_res += 1
        else:
            p.reserve(job)  # step 2
        if p.n_res >= limit:
            break
    else:
        return  # the whole queue was seen
    assert job is not None
    _backfill_rest(p, order, jobs, consumed, pending, job)


def _backfill_rest(
    p: BackfillPass,
    order: Collection[Job],
    jobs: Iterator[Job],
    consumed: int,
    pending: list[Job],
    last: Job,
) -> None:
    """Step 3 for the rest of the queue once every reservation is counted (``last``:
    the last job seen so far)."""
    index = p.snap.queue_index
    if index is None or len(index) != len(order):
        _scan(p, jobs, pending, 1)  # no index for this queue: job by job
        return
    # every job left asks for at least the queue's smallest request: none fits now
    # when no host has that many processors free
    fewest = index.smallest_procs()
    if p.max_free < fewest:
        return
    if len(order) - consumed < INDEXED_SCAN_MIN:
        _scan(p, jobs, pending, fewest)  # short rest: job by job
        return
    if isinstance(order, IndexedOrder | MergedOrder):  # an order kept as an index
        _backfill_blocks(p, order.scan_after(last), pending)
        return
    if not isinstance(order, RankedQueue | list):  # the queue itself, in queue (= row) order
        _backfill_blocks(p, RowScan(index, index.row_of[last.id] + 1), pending)
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
        left_at = left_at[_fits(p, procs[left_at], mem[left_at], req[left_at], with_profiles=True)]
        if not len(left_at):
            return
        started = p.backfill(index.jobs[rows[left_at[0]]])
        assert started, "the indexed scan and the job-by-job test disagree"
        left_at = left_at[1:]


def _backfill_blocks(p: BackfillPass, scan: RowScan | MergedScan, pending: list[Job]) -> None:
    """:func:`_backfill_rest`'s indexed scan when the rest of the order is kept as an
    index (the queue itself, or :mod:`~o2ksim.policies.order_scan`): each step asks it
    for the first job that passes :func:`_fits` (monotone in the request, so whole
    blocks of rows are skipped on their minima).

    The same jobs as the scan over every row: resources only shrink during a pass,
    so a job that fails once fails at every later step, and the first job after
    the last started one that passes now is the one the job-by-job scan finds.
    """
    if p.profiles is None:
        job = scan.first(lambda pr, me, rq: _fits(p, pr, me, rq, with_profiles=False), p.max_free)
        if job is None:
            return
        p.place_pending(pending)
    else:
        p.keep_only_reserved()

    def fits(pr: np.ndarray, me: np.ndarray, rq: np.ndarray) -> np.ndarray:
        return _fits(p, pr, me, rq, with_profiles=True)

    while p.max_free > 0:
        job = scan.first(fits, p.max_free)
        if job is None:
            return
        started = p.backfill(job)
        assert started, "the indexed scan and the job-by-job test disagree"
        scan.skip(job)


def _scan(p: BackfillPass, jobs: Iterable[Job], pending: list[Job], fewest: float) -> None:
    """Step 3 job by job once every reservation is counted; ``fewest``: no job asks for
    fewer processors, so the scan stops once no host has that many free."""
    if p.profiles is not None:
        p.keep_only_reserved()
    floor = max(fewest, 1)
    jobs = iter(jobs)
    if p.guarded is None:  # reservations not placed yet: until some job fits now
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


def _scan_placed(p: BackfillPass, jobs: Iterator[Job], floor: float) -> None:
    """:func:`_scan`'s loop once every reservation is placed: :meth:`BackfillPass.backfill`
    for each job, with each host's free resources and guard looked up once per pass."""
    assert p.guarded is not None
    guarded, reserved = p.guarded, p.reserved_hosts
    hosts = [
        (h.name, p.free[h.name], guarded.get(h.name) if h.name in reserved else None)
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
    p: BackfillPass, procs: np.ndarray, mem: np.ndarray, req: np.ndarray, *, with_profiles: bool
) -> np.ndarray:
    """:func:`~o2ksim.policies.backfill_hosts.fits_somewhere` on the pass's hosts: fits
    now (and, ``with_profiles``, delays no reservation) -- step 3's test, many jobs at once."""
    guards = p.guards() if with_profiles else {}
    return fits_somewhere(p.hosts, p.free, guards, p.reserved_hosts, p.now, (procs, mem, req))


__all__ = ["BackfillPass", "Reservations", "run_pass"]
