"""Strict FCFS and the priority-backfill family with hosts and memory (T§3.2.1, T§5.1, SPEC §3.1).

:class:`Backfill` is the thesis's priority backfill: at every scheduling
pass the waiting jobs are ordered by their priority, recomputed from the
current time (:mod:`o2ksim.policies.priority`, ties in submission order),
and :func:`~o2ksim.policies.backfill_scan.run_pass` walks that order:

1. while no job has been refused, start each job that fits now (processors AND
   memory) on the host with the fewest free processors;
2. the first job that cannot start gets a reservation: the earliest time some
   host can start it, computed from the requested runtimes of the running jobs
   (and of earlier reservations); the host with the earliest time wins;
3. every later job may start now only if it fits and, on each host holding
   reservations, fits the host's availability *profile* over its whole
   requested runtime -- so it delays no reservation; up to ``N`` jobs that
   cannot start get reservations the same way.

With one reservation the profile test is exactly EASY's "ends before the
shadow time or fits in the extra processors" test; with more it is the
conservative test of T§3.2.1 (Fig. 1c).

Reservation options (T§3.2.1, T§5.1, T§5.3.3):

* ``reservation_kind = "dynamic"`` (default, Maui CURRHIGHEST): the current top
  ``N`` jobs that cannot start hold the reservations, recomputed every pass.
* ``"fixed"`` (Maui HIGHEST): a job that got a reservation keeps it until it
  starts.  Held reservations are placed first, in the order they were granted,
  so every other job -- even one that now outranks the holder -- may start only
  if it delays none of them; new reservations go to the best-ranked jobs that
  cannot start while fewer than ``N`` are held.
* ``backfill_host = "delays-none"`` (default): a job backfilled (step 3) goes to
  the host with the fewest free processors among those where it fits now and
  delays no reservation.  ``"fewest-free"`` is the other reading of T§3.2.1's
  "If more than one host can start a job, the host with the smallest free
  processors is chosen": the host is picked by its free resources alone, and
  the job is backfilled only if it delays no reservation on that host (an
  ablation for issue 23; docs/background/fidelity/immediate-trials.md).
* ``release_ties = "smallest-first"`` (the default with a number of reservations,
  ``"auto"``): jobs ending at one instant are
  counted one at a time, smallest first, and a reservation there takes only
  the releases it needs; the others come an instant later, so a job
  backfilled across that instant may use only what that minimal set leaves
  (EASY's *extra* processors, as the reference implementation computes them:
  ``checks/easy_oracle.py``).  ``"together"``: every release at one instant
  is free at that instant, as in the availability profile of conservative
  backfilling (Mu'alem and Feitelson 2001), the default with
  ``reservations = "all"``.  The two differ only where a reservation starts
  exactly when jobs end.  Smallest-first treats an end differently once its job
  has started (a release, read smallest first) than while it is reserved (a
  step of the profile): with every waiting job reserved, one job starting can
  move most of the plan and its own start move it back (docs/guides/scaling.md);
  with ``"together"`` the plan carried between passes never needs repairing.
* ``sliding = true`` (default): a reservation is recomputed at every pass, so
  it moves earlier when a job ends early (Fig. 2).  ``false`` reproduces the
  NCSA-MS* error of T§5.3.3 (Fig. 56): a job keeps the reservation time (and
  host) it was given; it still starts as soon as it really fits, but the time
  used to protect it from backfilled jobs never moves earlier, so the gap a
  departure opens is backfilled.  The time is recomputed (never earlier) only
  when it has passed or become impossible (a running job overran its
  request).  The policy asks for a pass at each kept time (``WakeAt``) unless
  it runs on a fixed ``interval`` (where the kept times bound its quiet
  guarantee: :mod:`o2ksim.policies.quiet`).

Per-run state (held reservations, per-host memos) lives on the policy object:
one instance serves one run (:meth:`Backfill.bind` clears it).  Strict FCFS
stops at the first job that cannot start.

A pass in which no waiting job fits the free processors and memory of any
host starts nothing; with dynamic sliding reservations it also keeps nothing,
so :meth:`Backfill.backfill_pass` returns at once, in O(hosts), from the
queue's smallest requests (:meth:`~o2ksim.engine.queue_index.QueueIndex.smallest_request`).
"""

from __future__ import annotations

import math
import types
from collections.abc import Collection, Iterable, Sequence
from typing import Any, ClassVar

from o2ksim.engine.decisions import Decision, Start, WakeAt
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.policies import carried_plan, immediate
from o2ksim.policies.backfill_hosts import Free, best_host
from o2ksim.policies.backfill_pass import BackfillPass
from o2ksim.policies.backfill_scan import run_pass
from o2ksim.policies.base import POLICIES, Param, Policy
from o2ksim.policies.carried_plan import CarriedPlan, carries
from o2ksim.policies.order_scan import HeldFirst, IndexedOrder, MergedOrder
from o2ksim.policies.priority import (
    PRIORITIES,
    WEIGHT_NAMES,
    FCFSPriority,
    Priority,
    WeightedPriority,
    check_priority,
    make_priority,
)
from o2ksim.policies.profile import ProfileMemo
from o2ksim.policies.quiet import (
    LastPass,
    first_release,
    held_holds_until,
    order_holds_until,
    proved_for,
)
from o2ksim.policies.shadow import Releases


def free_resources(snap: Snapshot) -> dict[str, Free]:
    """Each host's free processors and memory at the start of a pass, by name."""
    return {h.name: Free(h.free_procs, h.free_mem) for h in snap.hosts}


def most_free_procs(snap: Snapshot) -> int | float:
    """The most processors free on any host (``-inf`` without hosts)."""
    most: int | float = -math.inf
    for h in snap.hosts:
        if h.free_procs > most:
            most = h.free_procs
    return most


def nothing_fits(snap: Snapshot) -> bool:
    """No waiting job fits the free processors and memory of any host now.

    O(hosts): each host is compared with the smallest processor request and
    the smallest memory request in the queue, kept by the engine's queue index
    as jobs come and go.  The two minima may belong to different jobs, so the
    answer may be "something may fit" when nothing does, never the other way
    round.  ``False`` (run the pass) when the snapshot has no index of its queue.
    """
    index = snap.queue_index
    if index is None or len(index) != len(snap.queue):
        return False
    procs = index.smallest_procs()
    mem = None  # looked up only for a host with enough processors
    for h in snap.hosts:
        if h.free_procs >= procs:
            if mem is None:
                mem = index.smallest_mem()
            if h.free_mem >= mem:
                return False
    return True


class FCFS(Policy):
    """Strict first-come first-served: start jobs in order until one does not fit."""

    kind = "fcfs"
    description = (
        "Strict FCFS: jobs start in submission order; the first that does not fit blocks the rest"
    )
    source = "T§2.3.2"
    PARAMS: ClassVar[dict[str, Param]] = {}

    def schedule(self, snap: Snapshot) -> list[Decision]:
        if nothing_fits(snap):
            return []
        free = free_resources(snap)
        decisions: list[Decision] = []
        for job in snap.queue:
            host = best_host(job, snap.hosts, free)
            if host is None:
                break
            decisions.append(Start(job, host, note="next in FCFS order and fits"))
        return decisions

    def quiet_until(self, snap: Snapshot) -> float:
        """Forever, until something happens: the order is the queue's and only a departure or
        a change of capacity frees anything (:mod:`o2ksim.policies.quiet`)."""
        return math.inf if proved_for(self, FCFS, "schedule") else snap.now

    def reads_estimates(self) -> bool:
        """Never: :meth:`schedule` starts jobs in queue order by their processors and memory
        alone (checked on KTH-SP2 and a generated O2K trace: the same start, end and host with
        every estimate).  A subclass that changes ``schedule`` may read them."""
        return not proved_for(self, FCFS, "schedule")


RESERVATION_KINDS = ("dynamic", "fixed")
RELEASE_TIES = ("auto", "smallest-first", "together")
BACKFILL_HOSTS = ("delays-none", "fewest-free")
ALL_RESERVATIONS = ("all", "inf")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _check_reservations(v: Any) -> bool:
    if isinstance(v, str):
        return v.lower() in ALL_RESERVATIONS
    return _is_number(v) and 0 <= v <= MAX_RESERVATIONS and v == int(v)


MAX_RESERVATIONS = 2**31 - 1
"""The most reservations a number may ask for (more than any queue; ``all`` reserves for
every waiting job): a count beyond int64 was taken as-is."""


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
            check_help="must be an integer from 0 to 2147483647 or 'all'",
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
        "release_ties": Param(
            str,
            "auto",
            "jobs ending at one instant: smallest-first = a reservation there takes only the "
            "releases it needs, the others come an instant later (EASY's extra processors); "
            "together = all are free at that instant (conservative backfilling's profile); "
            "auto = smallest-first with a number of reservations, together with 'all'",
            choices=RELEASE_TIES,
            option=True,
        ),
        "backfill_host": Param(
            str,
            "delays-none",
            "host of a backfilled job (T§3.2.1): delays-none = the fewest free processors among "
            "the hosts where it fits now and delays no reservation; fewest-free = the fewest "
            "free processors among the hosts where it fits now, backfilled only if it delays no "
            "reservation there (an ablation reading, issue 23)",
            choices=BACKFILL_HOSTS,
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
        # reservations carried from one pass to the next (fixed-job or non-sliding)
        self.stateful: bool = self.fixed or not self.sliding
        self.host_first: bool = p["backfill_host"] == "fewest-free"
        ties = p["release_ties"]
        if ties == "auto":
            ties = "together" if self.n_reservations == math.inf else "smallest-first"
        self.ties_together: bool = ties == "together"
        self.held: dict[Job, tuple[str, float]] = {}  # job -> (host, start), in granted order
        self.last_pass = LastPass()  # what the last pass did to ``held`` (quiet_until)
        self._wakes: set[float] = set()
        # per-host memos kept between passes while a host's allocations are unchanged
        self.profile_cache: dict[str, ProfileMemo] = {}
        self.release_cache: dict[str, Releases] = {}
        self.immediate = immediate.ImmediateService.from_params(p)
        # conservative backfilling (every waiting job reserved, FCFS): the plan carried
        # from one pass to the next (:mod:`.carried_plan`)
        self.carried: CarriedPlan | None = None
        if carries(
            self.n_reservations, self.stateful, type(self.priority) is FCFSPriority,
            self.immediate is not None,
        ):  # fmt: skip
            self.carried = CarriedPlan(self.ties_together)

    def bind(self, machine: Any, rng: Any = None) -> None:
        """Called before each run: everything kept between passes belongs to the previous run.

        The per-host memos are keyed by host versions and job ids, which a new
        run reuses; reservations held by fixed-job or non-sliding backfill, the
        pending wake-ups and the immediate service's trials and counters are
        that run's.  So one policy object run twice gives two fresh runs.
        """
        super().bind(machine, rng)
        self.held = {}
        self.last_pass = LastPass()
        self._wakes = set()
        self.profile_cache.clear()
        self.release_cache.clear()
        if self.carried is not None:
            self.carried = CarriedPlan(self.ties_together)
        if self.immediate is not None:
            self.immediate = self.immediate.fresh()

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        if not isinstance(d["priority"], str | dict):
            d["priority"] = self.priority.describe()
        if d.get("release_ties") == "auto":  # the rule the run used, in its results
            d["release_ties"] = "together" if self.ties_together else "smallest-first"
        return d

    def held_reservations(self) -> dict[int, tuple[str, float]]:
        """Reservations carried into the next pass, by job id (fixed-job or non-sliding)."""
        return {job.id: where for job, where in self.held.items()}

    def schedule(self, snap: Snapshot) -> Sequence[Decision]:
        """One pass; with immediate service, the trial runs around it (:mod:`.immediate`)."""
        if self.immediate is not None:
            return self.immediate.schedule(snap, self.backfill_pass)
        return self.backfill_pass(snap)

    def quiet_until(self, snap: Snapshot) -> float:
        """Until an event when no waiting job fits any host now (dynamic reservations, any
        order); else the first predicted release of a running job, for a static order, and
        for a weighted order the first time it may change if earlier; with immediate
        service, also the first time a refused trial may be granted; with fixed-job or
        non-sliding reservations, only after a pass that left them as it found them, and
        not after the earliest of their times; ``snap.now`` (no promise) otherwise.

        Why a pass on the same state decides nothing before then, and why the
        other settings get no promise: :mod:`o2ksim.policies.quiet`.
        """
        now = snap.now
        methods = ("schedule", "backfill_pass", "order", "_decides_nothing")
        if snap.explain or not proved_for(self, Backfill, *methods):
            return now
        if not self.stateful and self._decides_nothing(snap):
            holds = math.inf  # the pass's early exit, whatever the order: until an event
        else:
            prio = self.priority
            static = type(prio) is FCFSPriority or prio.is_static()
            if not (static or isinstance(prio, WeightedPriority)):
                return now
            kept = math.inf
            if self.stateful:
                kept = held_holds_until(self.last_pass, self.held, now)
                if kept <= now or self.last_pass.early:
                    return kept
            holds = min(first_release(snap), kept)
            if holds > now and not static:  # a weighted order that grows with the wait
                index = snap.queue_index
                if index is None or len(index) != len(snap.queue):
                    return now
                assert isinstance(prio, WeightedPriority)
                holds = order_holds_until(prio, index, now, holds)
        if self.immediate is not None and holds > now:  # trials refused stay refused
            holds = min(holds, self.immediate.quiet_until(snap))
        return holds

    def summary_counts(self, ids: Collection[int] | None = None) -> dict[str, int]:
        """Immediate-service counters over ``ids`` (empty without immediate service)."""
        return {} if self.immediate is None else self.immediate.summary_counts(ids)

    def stats(self) -> dict[str, float]:
        """Immediate-service counters over every job of the run (``run.json``)."""
        return {} if self.immediate is None else self.immediate.stats()

    def backfill_pass(self, snap: Snapshot) -> list[Decision]:
        """One backfill pass (module docstring), without immediate service.

        Returns at once when it can decide nothing: no waiting job, or none fits
        any host now and there are no fixed or kept reservations to grant or
        revisit; with stateful reservations, when no processor is free and every
        held reservation slides (nothing to grant, no time to keep).
        """
        carried = self.carried
        if carried is not None:
            carried.note_arrivals(snap.arrived)
        if not snap.explain and self._decides_nothing(snap):
            if self.stateful:
                self.last_pass = LastPass(snap.now, early=True, moved=False)
            return []
        free = free_resources(snap)
        if len(snap.queue) == 1 and not self.stateful and not snap.explain:
            # the commonest pass on a lightly loaded machine: the one waiting job starts if
            # it fits now; otherwise its (dynamic) reservation protects nobody
            if carried is not None:
                carried.forget()
            (job,) = snap.queue
            host = best_host(job, snap.hosts, free)
            return [] if host is None else [Start(job, host, note="highest priority and fits now")]
        if carried is not None and (snap.explain or len(snap.queue) < carried_plan.MIN_QUEUE):
            carried.forget()  # the decision log shows the fresh pass's reservations
            carried = None
        if carried is not None:
            p = BackfillPass(self, snap, free)
            if carried.carry(p):
                return p.decisions
            free = free_resources(snap)
        p = BackfillPass(self, snap, free)
        if carried is not None:
            p.plan = []
        run_pass(p, self.order(snap))
        if carried is not None:
            carried.record(p)
        if self.stateful:
            moved = list(p.placed.items()) != list(self.held.items())  # granted order too
            self.last_pass = LastPass(snap.now, early=False, moved=moved)
            self.held = p.placed
            if p.wake:
                p.decisions.extend(self._wake_ups(p.wake, snap.now))
        return p.decisions

    def _decides_nothing(self, snap: Snapshot) -> bool:
        """Whether this pass would decide nothing (the early exit; no decision log).

        Dynamic sliding reservations are recomputed at every pass, so a pass
        that can start nothing -- no waiting job, or none fits the free
        processors and memory of any host -- keeps nothing either.  Stateful
        reservations may have to be granted (fixed-job, fewer than ``N`` held)
        or kept and woken up for (non-sliding), so for them the pass returns
        early only when the reservations slide, ``N`` are held, and either no
        processor is free or every holder still waits and nothing fits.
        """
        if not self.stateful:
            if not snap.queue or nothing_fits(snap):
                return True
            return snap.queue_index is None and most_free_procs(snap) <= 0
        if self.sliding and len(self.held) >= self.n_reservations:
            if most_free_procs(snap) <= 0:
                return True
            # fixed-job, N held and all still waiting: the pass would hold the same N
            # again (at new, sliding times) and grant none, so nothing to keep either
            return all(j.state is JobState.QUEUED for j in self.held) and nothing_fits(snap)
        return False

    def order(self, snap: Snapshot) -> Collection[Job]:
        """The queue in priority order; under fixed-job, held reservations first (T§3.2.1)."""
        order = self.priority.order(snap.queue, snap.now, snap.queue_index)
        held = [j for j in self.held if j.state is JobState.QUEUED] if self.fixed else []
        if not held:
            return order
        # held reservations come first, in the order they were granted: each starts
        # if it fits now and delays no earlier one, else is reserved again, and
        # every other job is then checked against all of them
        if isinstance(order, IndexedOrder | MergedOrder):
            return HeldFirst(held, order)  # kept as an index: scanned as one
        held_set = set(held)
        return [*held, *(j for j in order if j not in held_set)]

    def _wake_ups(self, reservations: Iterable[tuple[str, float]], now: float) -> list[WakeAt]:
        """A pass at every kept (non-slid) reservation time not yet asked for.

        A reservation computed afresh sits at a predicted end of a running job
        (or just after one, by the tie rule): its event comes anyway, or the job
        ends early and the next pass handles it.  A *kept* time has lost that
        event -- the job it waited for left early -- so without a wake-up nothing
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


POLICIES.register(FCFS)
POLICIES.register(Backfill)
