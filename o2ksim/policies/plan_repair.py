"""The local repair of a carried plan (:mod:`o2ksim.policies.carried_plan`, condition 5).

A carried plan holds the fresh pass's reservations while the profiles it meets
are the fresh pass's.  They differ where the tie rule reads other releases (a
job started since ends at a reservation's time: that reservation now defers
other releases by one instant) and where a reservation due now had deferred
releases (the fresh pass starts that job without deferring anything).  Both
change one host's free resources over one instant ``[t, t + ulp)``.  Instead of
placing every later job again (O(queue x search)), :class:`PlanRepair` walks
the plan in queue order from the first change and re-decides only the
reservations such a change can reach, each exactly as the fresh pass would.

Notation: ``f_k`` is the host's profile the last pass placed the k-th
reservation in (every earlier reservation at its old place), ``g_k`` the one the
fresh pass places it in (every earlier reservation where the repair left it).
They differ only over *regions*: the instants above, and the old and new
windows of every reservation the repair moved.  A region where ``g`` has more
of something free is a *gain*.  For the k-th reservation (old start ``a``,
earliest in ``f_k``, the earliest start of a window is a function of the
profile's values alone):

* a start before ``a`` that fits ``g_k`` but not ``f_k`` has a window meeting a
  gain (elsewhere ``g_k <= f_k``);
* ``a`` still fits unless its window meets a region where ``g_k < f_k``;
* its deferral reads ``g_k(a)`` and the releases at ``a``.

So a reservation whose window meets no region and that fits no window meeting
a gain keeps its start and deferral.  The repair finds the others: those whose
current windows meet a region (by the profile's step starts, since every
reservation starts a step, within the longest requested runtime of the plan
before it), and those fitting a window that meets a gain in an upper bound of
every later ``g_k`` (the engine's queue index skips whole blocks of jobs whose
request minima fail the test, :meth:`~o2ksim.engine.queue_index.QueueIndex.first`).
Each is re-decided from ``g_k``, which is the carried profile (every
reservation where it is now) with the reservations from k on given back, read
over bounded spans only: first the earliest start meeting a gain, then the old
start, then (one host able to hold the job) the earliest later start, read over
spans growing fourfold from four times the plan's longest runtime.  A job that
now fits at once behind a job that did not start is backfilled, as the fresh
pass does.  Whatever the repair cannot decide this way (the job would start at
the head of the queue or does not fit the resources free now, another host
would tie or win, a job started now behind a change no longer fits, a span of
more than :data:`SPAN_STEPS_MAX` steps, no queue index, more than
:data:`CHANGES_MAX` changes) raises :class:`Declined`: the pass is then fresh.

Cost: O(changes x (steps within the longest runtime + block minima of the
queue)) per repaired pass, instead of O(queue x search).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from o2ksim.engine.queue_index import QueueIndex
from o2ksim.policies.backfill_pass import BackfillPass, Placed
from o2ksim.policies.profile import Profile
from o2ksim.policies.profile_memo import unneeded_releases

SPAN_STEPS_MAX = 50_000  # profile steps read for one region; more: the pass is fresh
CHANGES_MAX = 64  # reservations one repair may change; more (a cascade): the pass is fresh
HORIZON = 4  # a later start is first searched for within this many longest runtimes


@dataclass(slots=True)
class Entry:
    """A reservation of the plan, at position ``seq`` in queue order."""

    placed: Placed
    seq: int
    alive: bool = True  # False once the job started


class Declined(Exception):
    """The repair cannot decide this pass locally: run the fresh pass."""


class Region(NamedTuple):
    """Where the fresh pass's profile of ``host`` differs from the carried one."""

    host: str
    lo: float
    hi: float


class PlanState(Protocol):
    """What the repair reads and moves of a :class:`~o2ksim.policies.carried_plan.CarriedPlan`."""

    profiles: dict[str, Profile] | None
    order: list[Entry]
    head: int
    at: dict[tuple[str, float], list[Entry]]
    by_job: dict[int, Entry]
    due_now: list[Entry]
    longest: float

    def move(self, e: Entry, placed: Placed) -> None: ...

    def start_now(self, p: BackfillPass, e: Entry) -> bool: ...


Local = tuple[list[float], list[int], list[float]]  # a span of a profile: times, procs, mem


def _next(t: float) -> float:
    return math.nextafter(t, math.inf)


def _ulp(t: float) -> float:
    return _next(t) - t


def _give_back(prof: Profile, placed: Placed) -> None:
    """Give ``placed``'s reservation back to the carried profile: the releases it deferred
    by the tie rule (its spare resources over one ulp), then its job's resources."""
    spec = placed.job.spec
    if placed.spare != (0, 0.0):
        prof.give_back(placed.at, placed.spare[0], placed.spare[1], _ulp(placed.at))
    prof.give_back(placed.at, spec.procs, spec.mem, spec.req_time)


def _add(span: Local, a: float, b: float, procs: int, mem: float) -> None:
    times, free, fmem = span
    i = bisect.bisect_left(times, a) if a > times[0] else 0
    j = bisect.bisect_left(times, b)
    for x in range(i, j):
        free[x] += procs
        fmem[x] += mem


def _fits(span: Local, start: float, procs: int, mem: float, duration: float) -> bool:
    times, free, fmem = span
    i = bisect.bisect_right(times, start) - 1
    end = start + duration
    n = len(times)
    while i < n and times[i] < end:
        if free[i] < procs or fmem[i] < mem:
            return False
        i += 1
    return True


def _first_fit(
    span: Local, procs: int, mem: float, duration: float, after: float, before: float, end: float
) -> float:
    """The first step start ``s`` of ``span`` with ``after < s < before`` whose window fits
    (and ends by ``end``, where the span stops being known); ``inf`` when none."""
    times = span[0]
    i = bisect.bisect_right(times, after)
    n = len(times)
    while i < n and times[i] < before:
        s = times[i]
        if s + duration > end:
            return math.inf
        if _fits(span, s, procs, mem, duration):
            return s
        i += 1
    return math.inf


class PlanRepair:
    """One repair: :meth:`run` re-decides the reservations the changes reach (module
    docstring); ``changed`` counts the reservations it moved or whose deferral changed."""

    def __init__(self, plan: PlanState, p: BackfillPass) -> None:
        assert plan.profiles is not None
        self.plan = plan
        self.profiles = plan.profiles
        self.p = p
        self.now = p.now
        self.span = plan.longest
        self.gains: list[Region] = []
        self.cand: dict[Region, float] = {}  # per gain: its next reservation to decide
        self.bounds: dict[Region, Bound] = {}  # per gain: its bound, built at its first query
        self.heap: list[tuple[int, int, Entry | None, Region | None]] = []
        self.pushed: set[int] = set()
        self.changed = 0
        self.pos = 0  # every reservation before this position is decided
        self.last: Entry | None = None

    # -- the walk ---------------------------------------------------------------------
    def run(self, touched: Sequence[Entry], gains_at: Sequence[tuple[int, Region]]) -> int:
        """Re-decide ``touched`` (reservations at a time whose releases changed) and what
        the gains ``gains_at`` (position, region; in force after that position) reach."""
        for e in touched:
            self._push(e)
        for seq, gain in gains_at:
            heapq.heappush(self.heap, (seq, -1, None, gain))
        if not self.heap:
            return 0
        self.pos = self.heap[0][0]
        order = self.plan.order
        for e in reversed(order):
            if e.alive:
                self.last = e
                break
        while True:
            for g in self.gains:  # each gain's next reservation to look at, from pos on
                c = self.cand.get(g)
                if c is None or c < self.pos:
                    found = self._query(g)
                    self.cand[g] = math.inf if found is None else found.seq
                    if found is not None:
                        self._push(found)
            if not self.heap:
                return self.changed
            seq, _n, entry, region = heapq.heappop(self.heap)
            if region is not None:
                self._gain(region)
                self.pos = max(self.pos, seq + 1)
                continue
            assert entry is not None
            if seq < self.pos or not entry.alive:
                continue
            self._decide(entry)
            self.pos = seq + 1

    def _push(self, e: Entry) -> None:
        if e.seq not in self.pushed and e.seq >= self.pos:
            self.pushed.add(e.seq)
            heapq.heappush(self.heap, (e.seq, 0, e, None))

    # -- g_k over a span ---------------------------------------------------------------
    def _over(self, host: str, lo: float, hi: float) -> list[Entry]:
        """The live reservations on ``host`` whose windows meet ``[lo, hi)``."""
        times = self.profiles[host].times
        i = bisect.bisect_left(times, lo - self.span)
        j = bisect.bisect_left(times, hi)
        if j - i > SPAN_STEPS_MAX:
            raise Declined
        at = self.plan.at
        out = []
        for x in times[i:j]:
            for e in at.get((host, x), ()):
                if e.alive and x + e.placed.job.spec.req_time > lo:
                    out.append(e)
        return out

    def _prefix(self, host: str, seq: int, lo: float, hi: float) -> Local:
        """``g_seq`` of ``host`` over the steps meeting ``[lo, hi)``: the carried profile
        with the reservations from ``seq`` on (and the jobs started now behind it) given
        back."""
        prof = self.profiles[host]
        times = prof.times
        i0 = max(bisect.bisect_right(times, lo) - 1, 0)
        i1 = max(bisect.bisect_left(times, hi), i0 + 1)
        if i1 - i0 > SPAN_STEPS_MAX:
            raise Declined
        span: Local = (times[i0:i1], prof.procs[i0:i1], prof.mem[i0:i1])
        first = span[0][0]
        for e in self._over(host, first, hi):
            if e.seq >= seq:
                placed, spec = e.placed, e.placed.job.spec
                _add(span, placed.at, placed.at + spec.req_time, spec.procs, spec.mem)
                sp, sm = placed.spare
                if sp or sm:
                    _add(span, placed.at, math.nextafter(placed.at, math.inf), sp, sm)
        for e in self.plan.due_now:  # started now behind position seq: not there yet
            spec = e.placed.job.spec
            if e.seq >= seq and e.placed.host == host and self.now + spec.req_time > first:
                _add(span, self.now, self.now + spec.req_time, spec.procs, spec.mem)
        return span

    def _value(self, host: str, seq: int, t: float) -> tuple[int, float]:
        _t, free, fmem = self._prefix(host, seq, t, math.nextafter(t, math.inf))
        return free[-1], fmem[-1]

    # -- one reservation -----------------------------------------------------------------
    def _decide(self, e: Entry) -> None:
        """Re-decide ``e`` from ``g`` at its position (module docstring) and apply it."""
        placed = e.placed
        host = placed.host
        if host is None:
            return  # fits no host ever, whatever the others do
        spec = placed.job.spec
        procs, mem, dur = spec.procs, spec.mem, spec.req_time
        a, k, now = placed.at, e.seq, self.now
        capable = [h.name for h in self.p.hosts if h.spec.procs >= procs and h.spec.memory >= mem]
        best = a
        for g in self.gains:  # earlier starts whose windows meet a gain
            if self.cand.get(g) != k or g.host not in capable or g.lo - dur >= best:
                continue  # (another gain's query skipped k: it fits no window meeting it)
            span = self._prefix(g.host, k, max(now, g.lo - dur), g.hi + dur)
            if g.host != host:  # at or before a: another host would tie or win
                if (
                    _first_fit(span, procs, mem, dur, g.lo - dur, min(g.hi, _next(a)), g.hi + dur)
                    <= a
                ):
                    raise Declined
                continue
            best = min(
                best, _first_fit(span, procs, mem, dur, g.lo - dur, min(g.hi, best), g.hi + dur)
            )
        if best == a and not _fits(self._prefix(host, k, a, a + dur), a, procs, mem, dur):
            if len(capable) > 1:
                raise Declined  # another host may now be the earliest
            best = self._later(host, k, a, procs, mem, dur)
        if best <= now:  # the fresh pass backfills it now
            if len(capable) > 1 or not self.plan.start_now(self.p, e):
                raise Declined
            self._started(e)
            return
        before = self._value(host, k, best)
        rel = self.profiles[host].releases.get(best)
        spare = unneeded_releases(rel, before, procs, mem) if rel else (0, 0.0)
        new = placed._replace(at=best, before=before, spare=spare)
        if new == placed:
            return
        if best == a and spare == placed.spare:
            e.placed = new  # the same reservation; it read another value before it
            return
        self._apply(e, new)

    def _later(self, host: str, k: int, a: float, procs: int, mem: float, dur: float) -> float:
        """The earliest start after ``a`` in ``g_k`` (``a`` no longer fits there): read
        over spans growing fourfold, up to the whole profile."""
        width = HORIZON * max(self.span, dur)
        last = self.profiles[host].times[-1]
        while True:
            end = a + width if a + width <= last else math.inf
            best = _first_fit(self._prefix(host, k, a, end), procs, mem, dur, a, end, end)
            if best < math.inf:
                return best
            if end == math.inf:
                raise Declined  # fits the host never (not a reservation the plan holds)
            width *= 4

    def _apply(self, e: Entry, new: Placed) -> None:
        """Move ``e``'s reservation (or change its deferral) in the carried profile; the
        reservations its old and new windows meet are re-decided after it."""
        old = e.placed
        host = old.host
        assert host is not None
        prof = self.profiles[host]
        self._count()
        if new.at == old.at:
            dp, dm = new.spare[0] - old.spare[0], new.spare[1] - old.spare[1]
            ulp = _ulp(old.at)
            prof.take(old.at, dp, dm, ulp)
            if dp < 0 or dm < 0:
                prof.gained(old.at, old.at + ulp)
            e.placed = new
            self._region(
                Region(host, old.at, old.at + ulp), e.seq, dp < 0 or dm < 0, dp > 0 or dm > 0
            )
            return
        self.plan.move(e, new)
        self._relocate(e.seq, old, new.at, new.spare)

    def _count(self) -> None:
        self.changed += 1
        if self.changed > CHANGES_MAX:
            raise Declined  # a cascade: the fresh pass costs less than repairing it

    def _started(self, e: Entry) -> None:
        """``e``'s job was just started now as a backfill instead of its reservation."""
        self._count()
        self._relocate(e.seq, e.placed, self.now)

    def _relocate(
        self, seq: int, old: Placed, start: float, spare: tuple[int, float] = (0, 0.0)
    ) -> None:
        """Give ``old``'s reservation back, hold its job from ``start`` on instead (with
        the releases ``spare`` deferred there), and re-decide what the freed and the taken
        windows meet (a move, or a start now)."""
        host = old.host
        assert host is not None
        spec = old.job.spec
        prof = self.profiles[host]
        _give_back(prof, old)
        if spare != (0, 0.0):
            prof.take(start, spare[0], spare[1], _ulp(start))
        prof.take(start, spec.procs, spec.mem, spec.req_time)
        self._region(Region(host, old.at, old.at + spec.req_time), seq, True, False)
        self._region(Region(host, start, start + spec.req_time), seq, False, True)

    def _region(self, r: Region, seq: int, gain: bool, loss: bool) -> None:
        """A change in force after position ``seq``: re-decide the reservations after it
        whose windows meet it; a job started now behind a loss read the old profile."""
        for e in self._over(r.host, r.lo, r.hi):
            if e.seq > seq:
                self._push(e)
        if loss:  # a job started now behind it must still fit (the fresh pass's backfill)
            for g in [g for g in self.bounds if g.host == r.host]:
                if g.lo - self.span < r.hi and r.lo < g.hi + self.span:
                    del self.bounds[g]  # tighter now: rebuilt at its next query
            now = self.now
            for e in self.plan.due_now:
                spec = e.placed.job.spec
                dur = spec.req_time
                if e.seq > seq and e.placed.host == r.host and now < r.hi and now + dur > r.lo:
                    span = self._prefix(r.host, e.seq, now, now + dur)
                    if not _fits(span, now, spec.procs, spec.mem, dur):
                        raise Declined
        if gain:
            self._gain(r)

    def _gain(self, r: Region) -> None:
        """Add the gain ``r``, merged with the gains on its host within the longest
        runtime of it (a larger region only adds starts that are checked exactly)."""
        lo, hi = r.lo, r.hi
        keep = []
        near = 2 * self.span  # apart by more, neither meets the span the other reads
        for g in self.gains:
            if g.host == r.host and g.lo <= hi + near and lo <= g.hi + near:
                lo, hi = min(lo, g.lo), max(hi, g.hi)
                self.cand.pop(g, None)
                self.bounds.pop(g, None)
            else:
                keep.append(g)
        keep.append(Region(r.host, lo, hi))
        self.gains = keep

    # -- the reservations a gain may reach ---------------------------------------------
    def _query(self, g: Region) -> Entry | None:
        """The first live reservation at or after :attr:`pos` whose request may fit a window
        meeting the gain ``g`` in ``g_pos`` (:class:`Bound`, an upper bound of every later
        ``g_k``: the profile only loses resources near ``g`` now, gains being merged;
        kept until a loss lands within the span it reads, which would tighten it, or
        ``g`` is merged); ``None`` when none may, now or later."""
        index: QueueIndex | None = self.p.snap.queue_index
        last = self.last
        if index is None:
            raise Declined
        if last is None or last.seq < self.pos:
            return None
        order, plan = self.plan.order, self.plan
        i = bisect.bisect_left(order, self.pos, lo=plan.head, key=_seq)
        while i < len(order) and not order[i].alive:
            i += 1
        if i == len(order):
            return None  # every later job started (the repair backfilled the last ones)
        row = index.row_of[order[i].placed.job.id]
        stop = index.row_of[last.placed.job.id] + 1
        bound = self.bounds.get(g)
        if bound is None:  # still an upper bound of every later g_k while g is not merged
            lo = max(self.now, g.lo - self.span)
            bound = Bound(g, self._prefix(g.host, self.pos, lo, g.hi + self.span))
            self.bounds[g] = bound
        while True:
            r = index.first(row, bound.admits, bound.top, stop)
            if r < 0:
                return None
            e = plan.by_job.get(index.jobs[r].id)
            if e is not None and e.alive and e.seq >= self.pos:
                return e
            row = r + 1


class Bound:
    """For one gain: the longest run of steps of a profile span meeting the gain with at
    least ``v`` free processors, for each value ``v`` of the span, and the most free
    memory.  A window meeting the gain that fits lies in such a run: a request for
    more time than the run of its processors, or more memory, fits none (monotone in
    processors, memory and time)."""

    __slots__ = ("gain", "levels", "longest", "mem", "top")

    def __init__(self, gain: Region, span: Local) -> None:
        times, free, fmem = span
        end = gain.hi  # the span reaches beyond the gain; a run to its end may go on
        t = np.array([*times, math.inf])
        fp = np.array(free, dtype=float)
        self.gain = gain
        self.levels = np.unique(fp)
        self.top = float(self.levels[-1]) if len(self.levels) else 0.0
        self.mem = float(np.max(fmem)) if len(fmem) else 0.0
        longest = np.zeros(len(self.levels) + 1)
        n = len(fp)
        for x, v in enumerate(self.levels.tolist()):
            edges = np.diff(np.concatenate(([0], (fp >= v).astype(np.int8), [0])))
            starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
            meets = (t[starts] < end) & (t[stops] > gain.lo)
            if meets.any():
                runs = np.where(stops == n, math.inf, t[stops] - t[starts])
                longest[x] = float(np.max(runs[meets]))
        self.longest = longest

    def admits(self, procs: np.ndarray, mem: np.ndarray, req: np.ndarray) -> np.ndarray:
        run = self.longest[np.searchsorted(self.levels, procs, side="left")]
        return (run > 0) & (req <= run) & (mem <= self.mem)


def _seq(e: Entry) -> int:
    return e.seq


__all__ = ["Declined", "Entry", "PlanRepair", "PlanState", "Region"]
