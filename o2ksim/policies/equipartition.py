"""The arithmetic of EQspatial-MinInterval (T§3.2.3), kept apart from the engine.

Pure functions and small bookkeeping classes, each testable by hand:

* :func:`equipartition` -- divide a host's processors "as equally as possible"
  among its jobs, never more than a job requested (integer water-filling);
* :func:`host_allocation` -- the whole target allocation of one host: jobs
  that are catching up (and, under ``/>50hr``, jobs that have run long) get
  their full request while every other job keeps at least one processor; the
  rest is an :func:`equipartition`;
* :func:`equi_level` -- the "true equi-allocation" over the whole machine, as
  if there were no host boundaries (continuous water-filling), which sets the
  rate at which a waiting job earns catch-up credit;
* :func:`placement_ratio` / :func:`choose_host` -- the host-placement
  heuristic: the largest ratio processors / requested processors;
* :class:`CreditLedger` -- the catch-up credit of waiting jobs;
* :class:`RepartitionClock` -- MinInterval per host;
* :class:`HostState` -- what EQspatial keeps of one host between passes.

Where the thesis is silent the choices are made here, with their reasons
(documented in ``docs/background/policies/eqspatial.md``):

* rounding: when ``A`` processors are shared by ``n`` uncapped jobs, each gets
  ``A // n`` and ``A % n`` of them one more; the extra processors go to the
  jobs that already hold the most (then earliest submitted), so a
  repartitioning resizes as few jobs as possible;
* caps: a job never gets more than it requested; what a capped job does not
  take is shared among the others (so among uncapped jobs max - min <= 1, and a
  capped job never holds more than an uncapped one + 1);
* privileged jobs (catching up, long-running) are served in order (catch-up
  first, then by start time) and each leaves at least one processor for every
  job after it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from o2ksim.engine.ticks import last_exact_tick
from o2ksim.jobs import Job
from o2ksim.policies.tick_sums import grid_between, repeat_add

TIME_EPS = 1e-9  # seconds: float slack when comparing timer times with MinInterval bounds


def equipartition(
    procs: int, requests: Sequence[int], prefer: Sequence[Hashable] | None = None
) -> list[int]:
    """Divide ``procs`` processors as equally as possible among jobs with ``requests``.

    Integer water-filling: a job that requests no more than the current equal
    share gets its request; the processors left are shared equally by the
    others, ``procs // n`` each and one more for ``procs % n`` of them.  Those
    ``+1`` go to the jobs with the smallest ``prefer`` key (default: list
    order).  If the requests sum to at most ``procs`` every job gets its
    request (the rest stays idle).  Needs ``procs >= len(requests)`` for every
    job to get one processor; otherwise some get 0.

    >>> equipartition(10, [8, 8, 8])
    [4, 3, 3]
    >>> equipartition(10, [1, 8, 8])
    [1, 5, 4]
    >>> equipartition(10, [2, 3])
    [2, 3]
    """
    n = len(requests)
    if n == 0:
        return []
    if procs < 0:
        raise ValueError("procs must be >= 0")
    if any(r <= 0 for r in requests):
        raise ValueError("every request must be >= 1 processor")
    alloc = [0] * n
    order = sorted(range(n), key=lambda i: requests[i])
    left = procs
    remaining = n
    k = 0
    while k < n:
        i = order[k]
        if requests[i] * remaining <= left:  # request <= left / remaining (exact in integers)
            alloc[i] = requests[i]
            left -= requests[i]
            remaining -= 1
            k += 1
        else:
            break
    if k == n:
        return alloc
    uncapped = order[k:]
    base, extra = divmod(left, remaining)
    if prefer is not None:
        uncapped = sorted(uncapped, key=lambda i: (prefer[i], i))
    else:
        uncapped = sorted(uncapped)
    for rank, i in enumerate(uncapped):
        alloc[i] = base + (
            1 if rank < extra else 0
        )  # request > left/remaining >= base, so <= request
    return alloc


class HostJob(NamedTuple):
    """One job as the host allocation sees it.

    ``request``: requested processors; ``privileged``: 0 = shares equally,
    1 = catching up, 2 = long-running (``/>50hr``); ``order``: among
    privileged jobs of one kind, who is served first (start time); ``prefer``:
    tie key for the ``+1`` of the equipartition (smaller wins).
    """

    key: Hashable
    request: int
    privileged: int = 0
    order: float = 0.0
    prefer: tuple = ()


def host_allocation(
    procs: int, jobs: Sequence[HostJob], whole_long: bool = False
) -> dict[Hashable, int]:
    """Target processors of every job on a host of ``procs`` processors.

    Privileged jobs first (catching up before long-running, each kind by
    ``order``): each gets its request, but no more than leaves one processor
    for every job still to be served.  The rest is an :func:`equipartition`
    among the other jobs.  Needs ``procs >= len(jobs)``.  ``whole_long``: a
    long-running job (``privileged == 2``) whose whole request does not leave
    one processor for every other job gets no privilege and shares equally
    (the ``/>50hr`` rule's "as long as" read as a condition, not a cap).

    >>> host_allocation(16, [HostJob("a", 8), HostJob("b", 8), HostJob("c", 12, privileged=1)])
    {'c': 12, 'a': 2, 'b': 2}
    >>> host_allocation(8, [HostJob("a", 8), HostJob("b", 8), HostJob("c", 8, privileged=2)], whole_long=True)
    {'a': 3, 'b': 3, 'c': 2}
    """
    if len(jobs) > procs:
        raise ValueError(f"{len(jobs)} jobs cannot each get a processor of {procs}")
    out: dict[Hashable, int] = {}
    privileged = sorted((j for j in jobs if j.privileged), key=lambda j: (j.privileged, j.order))
    equal = [j for j in jobs if not j.privileged]
    left = procs
    still = len(jobs)
    for j in privileged:
        if whole_long and j.privileged == 2 and j.request > left - (still - 1):
            equal.append(j)  # it shares equally (still counts it: it is served below)
            continue
        still -= 1
        give = min(j.request, left - still)
        out[j.key] = give
        left -= give
    shares = equipartition(left, [j.request for j in equal], [j.prefer for j in equal])
    for j, s in zip(equal, shares, strict=True):
        out[j.key] = s
    return out


def equi_level(total: float, requests: Iterable[float]) -> float:
    """The water level ``L`` of true equi-allocation: job ``j`` gets ``min(P_j, L)``.

    ``total`` processors shared by all jobs in the system as if there were no
    host boundaries, continuously (fractional processors).  ``inf`` when the
    requests fit (every job gets its request).

    >>> equi_level(10, [1, 8, 8])
    4.5
    >>> equi_level(10, [2, 3])
    inf
    """
    reqs = sorted(requests)
    left = float(total)
    n = len(reqs)
    for k, r in enumerate(reqs):
        if r * (n - k) > left:
            return left / (n - k)
        left -= r
    return math.inf


def equi_level_counts(total: float, counts: Mapping[int, int]) -> float:
    """:func:`equi_level` for requests given as {processors: number of jobs} (faster when sizes repeat).

    >>> equi_level_counts(10, {1: 1, 8: 2})
    4.5
    """
    left = float(total)
    n = sum(counts.values())
    for r in sorted(counts):
        k = counts[r]
        if k <= 0:
            continue
        if r * n > left:
            return left / n
        left -= r * k
        n -= k
    return math.inf


def placement_ratio(procs: float, requested: float, new_job: int) -> float:
    """T§3.2.3: processors available on the host / (requested processors of its jobs + the new job's)."""
    return procs / (requested + new_job)


@dataclass(slots=True)
class HostLoad:
    """What the placement heuristic knows about one host.

    ``procs``: the host's processors minus those held by catching-up jobs;
    ``requested``: requested processors of the other jobs placed on it;
    ``free_mem``: memory not held or promised; ``jobs``: jobs placed on it
    (every job must be able to get one processor).
    """

    name: str
    capacity: int
    procs: int
    requested: int
    free_mem: float
    jobs: int


def choose_host(loads: Sequence[HostLoad], procs: int, mem: float) -> HostLoad | None:
    """The host for a new job of ``procs`` processors and ``mem`` memory, or ``None``.

    Candidates: hosts with at least ``mem`` free memory, at least ``procs``
    processors (so the job can one day run on its full request) and fewer jobs
    than processors (so it gets at least one).  The largest
    :func:`placement_ratio` wins; ties go to the host listed first.  A lone
    candidate is chosen whatever its ratio (T§3.2.3: "If more than one such hosts
    are found, the job is scheduled on the host that has the largest ratio"),
    negative too: when catching-up jobs hold more than the host's processors.
    """
    best: HostLoad | None = None
    best_ratio = -math.inf
    for h in loads:
        if h.free_mem < mem or h.capacity < procs or h.jobs >= h.capacity:
            continue
        ratio = placement_ratio(h.procs, h.requested, procs)
        if ratio > best_ratio:
            best, best_ratio = h, ratio
    return best


class CreditLedger:
    """Catch-up credit (T§3.2.3): processor-seconds a waiting job would have had under true equi-allocation.

    Between two scheduling passes the set of jobs in the system is constant, so
    each waiting job's equi-share ``min(P, L)`` is constant too.  Call
    :meth:`accrue` at the start of a pass (books the interval since the last
    one at the level set then) and :meth:`set_level` at its end.

    **Groups.**  Jobs that start waiting between the same two bookings with the
    same request and the same credit (0 for a new job) are booked the same
    additions, in the same order, from then on: their credits are the same
    float at every pass.  So the ledger keeps one credit per such *group*
    (invariant: every waiting job's credit is its group's), and :meth:`accrue`
    costs O(groups), not O(waiting jobs): a same-instant flood is one group per
    processor count.  A job that joins after a booking starts a new group even
    if its request matches (its sequence of additions differs).
    """

    def __init__(self) -> None:
        self.waiting: dict[int, int] = {}  # job id -> requested processors
        self.level = math.inf
        self.since = 0.0
        self._groups: dict[int, list[float]] = {}  # group -> [credit, requested processors, jobs]
        self._group_of: dict[int, int] = {}  # waiting job -> its group
        self._joining: dict[tuple[int, float], int] = {}  # (procs, credit) -> group, until a booking
        self._kept: dict[int, float] = {}  # jobs no longer waiting -> their credit, until forgotten
        self._next_group = 0

    @property
    def credit(self) -> dict[int, float]:
        """Every job's credit (waiting, or stopped and not forgotten): a new dict, O(jobs)."""
        out = dict(self._kept)
        for job_id, g in self._group_of.items():
            out[job_id] = self._groups[g][0]
        return out

    @property
    def groups(self) -> int:
        """The credits kept for the waiting jobs: what a booking costs."""
        return len(self._groups)

    def credit_of(self, job_id: int) -> float:
        """``job_id``'s credit (0 for a job the ledger does not know)."""
        g = self._group_of.get(job_id)
        return self._groups[g][0] if g is not None else self._kept.get(job_id, 0.0)

    def wait(self, job_id: int, procs: int) -> None:
        """``job_id`` is waiting from now on (credit starts at 0 if new)."""
        credit = self.credit_of(job_id)
        self._leave(job_id)
        self._kept.pop(job_id, None)
        self.waiting[job_id] = procs
        key = (procs, credit)
        g = self._joining.get(key)
        if g is None:
            g = self._joining[key] = self._next_group
            self._next_group += 1
            self._groups[g] = [credit, float(procs), 0.0]
        self._groups[g][2] += 1
        self._group_of[job_id] = g

    def stop(self, job_id: int) -> float:
        """``job_id`` started (or left): stop accruing; return its credit (kept until
        :meth:`forget`)."""
        if job_id in self._group_of:
            self._kept[job_id] = self.credit_of(job_id)
            self._leave(job_id)
            del self.waiting[job_id]
        return self._kept.get(job_id, 0.0)

    def forget(self, job_id: int) -> None:
        """Drop a stopped job's credit."""
        self._kept.pop(job_id, None)

    def _leave(self, job_id: int) -> None:
        g = self._group_of.pop(job_id, None)
        if g is None:
            return
        group = self._groups[g]
        group[2] -= 1
        if not group[2]:
            del self._groups[g]
            key = (int(group[1]), group[0])
            if self._joining.get(key) == g:
                del self._joining[key]

    def accrue(self, now: float, interval: float | None = None) -> None:
        """Book ``min(P, L) * (now - since)`` for every waiting job (once per group).

        With a fixed ``interval`` (a pass at every tick ``k * interval``), a
        pass after skipped quiet ticks books them as ticking through would, one
        addition per tick (:mod:`o2ksim.policies.tick_sums`): the same floats.
        """
        dt = now - self.since
        if dt > 0 and self.waiting:
            self._joining = {}  # a job joining from now on has a different sequence
            ticks = None
            if interval is not None and now <= last_exact_tick(interval):
                ticks = grid_between(self.since, now, interval)
            if ticks is None or interval is None:
                for group in self._groups.values():
                    group[0] += min(group[1], self.level) * dt
            else:
                k1, k2 = ticks
                first, last = k1 * interval - self.since, now - k2 * interval
                for group in self._groups.values():
                    rate = min(group[1], self.level)
                    c = group[0] + rate * first
                    c = repeat_add(c, rate * interval, k2 - k1)
                    group[0] = c + rate * last
        self.since = now

    def set_level(self, now: float, total_procs: float, requests: Mapping[int, int]) -> None:
        """The equi-allocation level from ``now`` on; ``requests``: {processors: jobs in the system}."""
        self.since = now
        self.level = equi_level_counts(total_procs, requests) if self.waiting else math.inf


@dataclass(eq=False)
class HostState:
    """EQspatial's view of one host between passes (:mod:`o2ksim.policies.eqspatial`)."""

    name: str
    capacity: int
    jobs: dict[int, Job] = field(default_factory=dict)  # placed: running or waiting for processors
    pending: dict[int, Job] = field(default_factory=dict)  # placed, not started yet
    pending_mem: int = 0  # memory promised to pending jobs (the engine does not know it)
    requested: int = 0  # requested processors of placed jobs not catching up
    catchup_procs: int = 0  # requested processors of placed jobs catching up
    dirty: bool = False  # the allocation may differ from an equipartition
    reasons: list[str] = field(default_factory=list)
    timer: float | None = None  # pending repartitioning wake-up

    def touch(self, reason: str) -> None:
        self.dirty = True
        if len(self.reasons) < 6:
            self.reasons.append(reason)
        elif len(self.reasons) == 6:
            self.reasons.append("...")


def long_procs(h: HostState, long: Collection[int], catching_up: Collection[int]) -> int:
    """Requested processors of ``h``'s jobs past the long-job threshold that are not catching
    up: what ``long_job_placement = "deduct"`` deducts, like a catching-up job's, from the
    host's processors and requested processors (a job both catching up and long counts once,
    as catching up: deducted twice, the requested processors went below zero)."""
    return sum(j.procs for i, j in h.jobs.items() if i in long and i not in catching_up)


class RepartitionClock:
    """MinInterval per host: at most one repartitioning per ``min_interval`` seconds on each host."""

    def __init__(self, min_interval: float) -> None:
        if min_interval < 0:
            raise ValueError("min_interval must be >= 0")
        self.min_interval = float(min_interval)
        self.last: dict[str, float] = {}

    def next_allowed(self, host: str) -> float:
        return self.last.get(host, -math.inf) + self.min_interval

    def can(self, host: str, now: float) -> bool:
        return now + TIME_EPS >= self.next_allowed(host)

    def mark(self, host: str, now: float) -> None:
        self.last[host] = now


class Deadlines:
    """Jobs due for attention at given times (catch-up ends, the 50-hour mark): a lazy heap."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int]] = []
        self._when: dict[int, float] = {}

    def set(self, job_id: int, when: float) -> bool:
        """Schedule ``job_id`` at ``when``; ``True`` if this is a new time (ask for a wake-up)."""
        if self._when.get(job_id) == when:
            return False
        self._when[job_id] = when
        heapq.heappush(self._heap, (when, job_id))
        return True

    def drop(self, job_id: int) -> None:
        self._when.pop(job_id, None)

    def due(self, now: float) -> list[int]:
        out = []
        heap = self._heap
        while heap and heap[0][0] <= now + TIME_EPS:
            when, job_id = heapq.heappop(heap)
            if self._when.get(job_id) == when:
                del self._when[job_id]
                out.append(job_id)
        return out

    def __contains__(self, job_id: int) -> bool:
        return job_id in self._when

    def first(self) -> float:
        """The earliest live deadline (``inf`` when none): the quiet guarantee's bound."""
        return min(self._when.values(), default=math.inf)


def shares_by_key(keys: Iterable[Hashable], shares: Mapping[Hashable, int]) -> list[int]:
    """Shares in ``keys`` order (a convenience for tests and logs)."""
    return [shares[k] for k in keys]
