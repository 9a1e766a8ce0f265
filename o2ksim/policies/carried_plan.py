"""Conservative backfilling carried from one pass to the next (``--reservations all``).

With a reservation for every waiting job, a fresh pass
(:func:`~o2ksim.policies.backfill_scan.run_pass`) places the whole queue again:
q placements, each a search over a profile whose steps grow with q, so
O(n^3) for a run that drains a queue of n jobs.  Most of that work repeats
the last pass: when the jobs that ended since ended when their requested
runtimes said, the fresh pass gives every old waiting job the reservation it
had.  :class:`CarriedPlan` keeps the last pass's *plan* (every reservation in
queue order: job, host, time, and what its placement read) and the host
profiles with every reservation in them; the next pass then only starts the
jobs whose reservation time has come and places the jobs that arrived since.
When a condition below fails, the pass is a fresh full pass, which records a
new plan (condition 5: the plan is repaired where it changes, when it can be).  The decisions are those of the fresh pass (tests check it).

Why they are the same (t1: the last pass, t2 = now).  The conditions, each
checked in this pass (a fallback when it fails):

1. **Settings** (:func:`carries`): dynamic sliding reservations for every
   waiting job, FCFS order, no decision log, no immediate service; and at least
   :data:`MIN_QUEUE` waiting jobs (a pass on a shorter queue is fresh and keeps
   no plan).
2. **Queue**: the waiting jobs are the plan's, in its order, then the jobs
   that arrived since (counted; FCFS puts them last).
3. **Hosts** (:meth:`CarriedPlan._host_as_predicted`): every host's releases
   after t2 are those the last pass predicted (its running jobs and the jobs it
   started), and its total resources are unchanged: no job ended before its
   predicted end, was killed, preempted or resized.  Then each host's fresh
   profile equals, from t2 on, the last pass's with its started jobs in it.
   Job by job in the same order, the fresh pass meets the same profile from t2
   on as the last pass did before each old job; its earliest start at or after
   t2 is the last one (a window that fits at some time fits from the start of
   that step, so an earlier fresh answer would have been the old one), and it
   makes the same reservation.
4. **Plan**: no reservation before t2 (with ``--interval``, reservation times
   fall between passes: every such pass is fresh); the reservations at t2 start
   now, on their host (the fresh pass's host rule, fewest free processors, is
   checked: step 1 for those at the head of the queue, a backfill for the
   others, which then must fit no other host now) (a deferral at t2 is
   condition 5's); no reservation was tied with another host's (``Placed.tied``: the tie
   goes to the fewest free processors *now*, which has changed) or is of a job
   requesting no time (it holds nothing: a later backfill may take its place).  An old job
   reserved later than t2 cannot start now: its window does not fit at t2 on
   any host's profile, and a host without reservations has at least its free
   resources at every later time.
5. **Tie rule** (:meth:`~o2ksim.policies.profile.Profile.reserve` defers the
   releases at its time that a reservation does not need): the releases a
   reservation at time t reads change where a job started since ends at t (the
   last pass's backfilled jobs, this pass's step-1 starts), and a reservation
   due now that deferred releases at t2 starts without deferring them.  Either
   changes one host's free resources over one instant [t, t + ulp) only.  The
   reservations at such a (host, time) are re-decided, and whatever their
   changes reach, by :class:`~o2ksim.policies.plan_repair.PlanRepair` (its
   docstring says why the result is the fresh pass's); the pass is then
   *repaired* (counted).  When the repair cannot decide locally (a cascade of
   more than :data:`~o2ksim.policies.plan_repair.CHANGES_MAX` changes, a tie
   with another host, a reservation that would start now in front of the
   queue, ...) the pass is fresh.  With ``release_ties = "together"`` no
   reservation defers anything: this condition always holds, nothing is repaired.

The new arrivals then meet the carried profiles, equal to the fresh pass's
(values and releases), and are placed by the pass's own methods.  A carried
pass costs O(hosts x running jobs + jobs started + arrivals x search), a repair
adds O(changes x (steps within the longest runtime + block minima of the queue));
a fresh one costs O(queue x search).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Iterable

from o2ksim.engine.decisions import Decision, Start
from o2ksim.engine.snapshot import HostView
from o2ksim.jobs import Job, JobState
from o2ksim.policies.backfill_pass import BackfillPass, Placed
from o2ksim.policies.plan_repair import Declined, Entry, PlanRepair, Region
from o2ksim.policies.profile import Profile
from o2ksim.policies.running_releases import release_time, running_jobs

ENABLED = True  # tests switch the carried plan off to compare with the fresh pass
# below this many waiting jobs a fresh pass costs less than keeping the plan (KTH-SP2's
# queues: +17 % CPU when every pass kept it); tests lower it to reach the carried path
MIN_QUEUE = 64

#: A release: (time, processors, memory).
Release = tuple[float, int, float]


def carries(n_reservations: float, stateful: bool, fcfs: bool, immediate: bool) -> bool:
    """Whether a backfill policy with these settings carries its plan (condition 1)."""
    return ENABLED and n_reservations == math.inf and not stateful and fcfs and not immediate


class CarriedPlan:
    """The last pass's plan and profiles, carried into the next pass (module docstring).

    ``counts``: passes carried (``repaired`` of them re-decided part of the plan) and
    fresh in this run (the tests check which path is taken).
    """

    def __init__(self, together: bool = False) -> None:
        self.together = together  # release_ties = "together": no tie rule, nothing to repair
        self.counts = {"carried": 0, "fresh": 0, "repaired": 0}
        self.seq = 0  # the next entry's position in queue order (never reused)
        self.forget()

    def forget(self) -> None:
        """Drop the plan: the next pass is fresh."""
        self.profiles: dict[str, Profile] | None = None
        self.order: list[Entry] = []  # the plan in queue order (started ones dead)
        self.head = 0  # no live entry before this position
        self.alive = 0
        self.tied = 0  # live entries tied with another host or of no length (_fragile)
        self.due: list[tuple[float, int, Entry]] = []  # heap of (time, seq, entry)
        self.at: dict[tuple[str, float], list[Entry]] = {}  # (host, time) -> entries
        self.held: dict[str, int] = {}  # live reservations by host
        self.base: dict[str, tuple[list[float], list[Release]]] = {}  # predicted releases
        self.total: dict[str, tuple[int, float]] = {}  # host resources in all
        self.backfill_ends: list[tuple[str, float]] = []  # last pass's backfilled jobs' ends
        self.due_now: list[Entry] = []  # the reservations due now started in this pass
        self.by_job: dict[int, Entry] = {}  # live entries by job id
        self.longest = 0.0  # the longest requested runtime of a reservation since the plan began
        self.arrivals: list[Job] = []  # arrived since the last pass that ran

    def note_arrivals(self, jobs: Iterable[Job]) -> None:
        """Jobs that arrived since the previous pass (every pass, even one that returns early)."""
        self.arrivals.extend(jobs)

    # -- the carried pass ------------------------------------------------------------
    def carry(self, p: BackfillPass) -> bool:
        """Decide this pass from the plan into ``p`` (untouched by the caller otherwise);
        ``False``: a condition failed, run the fresh pass (on a new :class:`BackfillPass`)."""
        if self.profiles is None or self.tied:
            return False
        snap, now = p.snap, p.now
        arrivals = [j for j in self.arrivals if j.state is JobState.QUEUED]
        if len(snap.queue) != self.alive + len(arrivals):  # condition 2
            return False
        due = self._due(now)  # condition 4
        if due is None:
            return False
        deferred = [e for e in due if e.placed.spare != (0, 0.0)]
        releases: dict[str, list[Release]] = {}
        for h in snap.hosts:  # condition 3
            rel = self._host_as_predicted(h, now)
            if rel is None:
                return False
            releases[h.name] = rel
        p.plan = []  # records the jobs backfilled (and the arrivals' reservations)
        started = self._start_head(p, now, arrivals)
        if started is None:
            return False
        self.due_now = []
        n_head = len(p.decisions)
        for e in due:  # the other reservations due now: backfilled on their host
            if not e.alive:
                continue
            if not self._backfill_due(p, e):
                return False
            self.due_now.append(e)
        profiles = self.profiles
        for name, prof in profiles.items():
            prof.advance(now)
            if not self.together:
                prof.releases = _by_time(releases[name], p.started, name, now)
        for job, start in zip(
            arrivals[:started], p.started[len(p.started) - started :], strict=True
        ):
            spec = job.spec  # an arrival started in step 1: not in the plan's profiles yet
            profiles[start[0]].take(now, spec.procs, spec.mem, spec.req_time)
        if not self._repair(p, deferred):  # condition 5
            return False
        if len(p.decisions) > n_head:  # the backfills in queue order, as the fresh pass
            rank = {e.placed.job.id: e.seq for e in self.due_now}
            p.decisions[n_head:] = sorted(p.decisions[n_head:], key=lambda d: rank[_job_id(d)])
        # the arrivals meet the profiles the fresh pass would have: placed by the pass itself
        p.profiles = self.profiles
        p.reserved_hosts = {h for h, n in self.held.items() if n}
        p.n_res = self.alive
        for job in arrivals[started:]:
            if not p.backfill(job):
                p.reserve(job)
        self._keep(p, releases)
        self.counts["carried"] += 1
        return True

    def _due(self, now: float) -> list[Entry] | None:
        """The live reservations at ``now`` in queue order; ``None`` when one is earlier or
        deferred releases at ``now`` (condition 4)."""
        heap = self.due
        out = []
        while heap and (not heap[0][2].alive or heap[0][0] <= now):
            _at, _seq, e = heapq.heappop(heap)
            if not e.alive:
                continue
            if _at != e.placed.at:
                continue  # moved by a repair: its current time is in the heap too
            if e.placed.at < now:
                return None
            out.append(e)
        return out

    def _host_as_predicted(self, h: HostView, now: float) -> list[Release] | None:
        """Condition 3 for host ``h``: its running jobs' releases (sorted), or ``None``."""
        rel: list[Release] = sorted(
            (release_time(j, now), j.alloc_procs, j.alloc_mem) for j in running_jobs(h)
        )
        total = (h.free_procs + sum(r[1] for r in rel), h.free_mem + sum(r[2] for r in rel))
        if total != self.total.get(h.name):
            return None
        times, expected = self.base[h.name]
        k = bisect.bisect_right(times, now)
        j = bisect.bisect_right([r[0] for r in rel], now)
        return rel if expected[k:] == rel[j:] else None

    def _start_head(self, p: BackfillPass, now: float, arrivals: list[Job]) -> int | None:
        """Step 1 of the pass: the head of the queue starts while it fits now; those plan
        jobs must be due now and start on their host (``None`` otherwise).  Returns how
        many arrivals started too (when the whole plan did)."""
        order = self.order
        i = self.head
        while i < len(order):
            e = order[i]
            i += 1
            if not e.alive:
                continue
            job = e.placed.job
            if e.placed.at != now:  # blocked: it fits no host now (condition 4)
                return None if p.fits_now_somewhere(job) else 0
            if not p.start_first_fit(job) or p.started[-1][0] != e.placed.host:
                return None
            self._drop(e)
        n = 0
        for job in arrivals:
            if not p.start_first_fit(job):
                break
            n += 1
        return n

    def _backfill_due(self, p: BackfillPass, e: Entry) -> bool:
        """Start the due reservation ``e`` (behind a blocked job) on its host, as the fresh
        pass's backfill would: it fits its host's free resources and no other host's."""
        job, host = e.placed.job, e.placed.host
        spec = job.spec
        assert host is not None
        for name, f in p.free.items():
            fits = f.procs >= spec.procs and f.mem >= spec.mem
            if fits != (name == host):
                return False
        p.free[host].book(spec)
        p.start_backfilled(job, host, None)  # the profile holds it already (its reservation)
        self._drop(e)
        return True

    def _repair(self, p: BackfillPass, deferred: list[Entry]) -> bool:
        """Condition 5: re-decide the reservations at a (host, time) where a job started
        since ends, and what their changes and the deferrals of the reservations started
        now (the fresh pass defers nothing for them) reach (:mod:`.plan_repair`);
        ``False``: the repair declined, run the fresh pass."""
        assert self.profiles is not None
        if self.together:  # no release is deferred: the profiles are the fresh pass's
            return True
        now = p.now
        changed = self.backfill_ends + [(host, end) for host, end, _p, _m in p.started]
        touched = [
            e for host, t in changed if t > now for e in self.at.get((host, t), ()) if e.alive
        ]
        gains = []
        for e in deferred:
            host = e.placed.host
            assert host is not None
            sp, sm = e.placed.spare
            later = math.nextafter(now, math.inf)
            self.profiles[host].give_back(now, sp, sm, later - now)
            gains.append((e.seq, Region(host, now, later)))
        try:
            changes = PlanRepair(self, p).run(touched, gains)
        except Declined:
            return False
        if changes or gains:
            self.counts["repaired"] += 1
        return True

    def start_now(self, p: BackfillPass, e: Entry) -> bool:
        """The repair found that the fresh pass backfills ``e``'s job now (one host can
        hold it): start it if it is behind a job that did not start and fits the
        resources free now (then it fitted them at its turn too)."""
        job, host = e.placed.job, e.placed.host
        spec = job.spec
        assert host is not None
        first = next(x for x in self.order[self.head :] if x.alive)
        free = p.free[host]
        if first.seq >= e.seq or free.procs < spec.procs or free.mem < spec.mem:
            return False
        free.book(spec)
        p.start_backfilled(job, host, None)  # the repair moves it in the profile
        self._drop(e)
        self.due_now.insert(bisect.bisect_left(self.due_now, e.seq, key=_seq), e)
        return True

    def move(self, e: Entry, placed: Placed) -> None:
        """The repair moved ``e``'s reservation (same host) to ``placed``."""
        host = placed.host
        assert host is not None
        old = self.at[(host, e.placed.at)]
        old.remove(e)
        if not any(x.alive for x in old):
            del self.at[(host, e.placed.at)]
        e.placed = placed
        entries = self.at.setdefault((host, placed.at), [])
        entries.insert(bisect.bisect_left(entries, e.seq, key=_seq), e)
        heapq.heappush(self.due, (placed.at, e.seq, e))

    # -- the plan's book-keeping -------------------------------------------------------
    def _drop(self, e: Entry) -> None:
        """``e``'s job started, or its reservation is undone."""
        e.alive = False
        self.alive -= 1
        self.by_job.pop(e.placed.job.id, None)
        self.tied -= _fragile(e.placed)
        host = e.placed.host
        if host is None:
            return
        self.held[host] -= 1
        entries = self.at.get((host, e.placed.at))
        if entries is not None and all(not x.alive for x in entries):
            del self.at[(host, e.placed.at)]

    def _add(self, placed: Placed) -> None:
        e = Entry(placed, self.seq)
        self.seq += 1
        self.by_job[placed.job.id] = e
        self.longest = max(self.longest, placed.job.spec.req_time)
        self.order.append(e)
        self.alive += 1
        self.tied += _fragile(placed)
        if placed.host is not None:
            self.held[placed.host] = self.held.get(placed.host, 0) + 1
            self.at.setdefault((placed.host, placed.at), []).append(e)
            heapq.heappush(self.due, (placed.at, e.seq, e))

    def _keep(self, p: BackfillPass, releases: dict[str, list[Release]]) -> None:
        """After a pass: its new reservations join the plan; what the next pass predicts."""
        assert p.plan is not None
        for placed in p.plan:
            self._add(placed)
        order = self.order
        while self.head < len(order) and not order[self.head].alive:
            self.head += 1
        if self.head > 1024 and 2 * self.head > len(order):
            del order[: self.head]
            self.head = 0
        starts: dict[str, list[Release]] = {}
        for host, end, procs, mem in (*p.started, *p.backfilled):
            starts.setdefault(host, []).append((end, procs, mem))
        for h in p.snap.hosts:
            rel = releases[h.name]
            self.total[h.name] = (
                h.free_procs + sum(r[1] for r in rel),
                h.free_mem + sum(r[2] for r in rel),
            )
            predicted = sorted(rel + starts.get(h.name, []))
            self.base[h.name] = ([r[0] for r in predicted], predicted)
        self.backfill_ends = [(host, end) for host, end, _p, _m in p.backfilled]
        self.arrivals = []

    def record(self, p: BackfillPass) -> None:
        """After a fresh pass (``p.plan`` recorded): its plan becomes the one carried.

        A lazy pass that never needed its reservations places them now, as it would
        have (same order, same profiles): the decisions are already made.
        """
        self.counts["fresh"] += 1
        counts = self.counts
        self.forget()
        self.counts = counts
        if p.profiles is None:
            p.build_profiles()
            p.place(p.pending)
        if p.guarded is not None or p.plan is None:
            return  # the pass reduced its profiles: nothing to carry
        releases: dict[str, list[Release]] = {}
        for h in p.snap.hosts:
            releases[h.name] = sorted(
                (release_time(j, p.now), j.alloc_procs, j.alloc_mem) for j in running_jobs(h)
            )
        self.profiles = p.profiles
        self._keep(p, releases)


def _fragile(placed: Placed) -> bool:
    """A reservation the next pass may not keep: tied with another host (condition 4), or
    of a job requesting no time, which holds nothing in the profile, so a job backfilled
    behind it may take what it was placed on (the fresh pass then places it later)."""
    return placed.tied or placed.job.spec.req_time <= 0


def _job_id(d: Decision) -> int:
    assert isinstance(d, Start)
    return d.job.id


def _seq(e: Entry) -> int:
    return e.seq


def _by_time(
    running: list[Release], started: Iterable[tuple[str, float, int, float]], host: str, now: float
) -> dict[float, list[tuple[int, float]]]:
    """A host's releases by time as a fresh profile holds them: its running jobs and the
    jobs started in step 1 of this pass, due ones at ``now``, each time's smallest first."""
    rel = [(max(t, now), p, m) for t, p, m in running]
    rel.extend((max(end, now), procs, mem) for h, end, procs, mem in started if h == host)
    at: dict[float, list[tuple[int, float]]] = {}
    for t, p, m in sorted(rel):
        at.setdefault(t, []).append((p, m))
    return at
