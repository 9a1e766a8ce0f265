"""How long a pass that decided nothing stays true: the policies' quiet guarantees.

With a fixed ``--interval`` the engine asks for a pass at every tick.  When
a pass starts, preempts, resizes, kills and asks for nothing, and nothing
happens afterwards (no arrival, departure, timer, request or change of a
host's resources), the next pass sees the same snapshot but for its time.
:meth:`Policy.quiet_until <o2ksim.policies.base.Policy.quiet_until>` says
until when such passes decide nothing too; the engine then skips their ticks
(:meth:`Scheduler.tick <o2ksim.engine.scheduler.Scheduler.tick>`), and
anything that happens meanwhile ends the skip at the next tick.  The default
is the pass's own time: no guarantee, a pass at every tick.

Which policies declare one, and why it holds (the pass at ``t0`` decided
nothing; ``t`` is a later pass on the same state, ``t0 < t < H``):

* **Strict FCFS** (:class:`~o2ksim.policies.backfill.FCFS`): it starts the
  queue in submission order while the head fits the free processors and
  memory of some host.  Neither the order nor the free resources change
  without an arrival, a departure or a change of capacity, so ``H = inf``.
* **Priority backfill with a static order and dynamic sliding
  reservations** (:class:`~o2ksim.policies.backfill.Backfill` with priority
  ``fcfs``, ``sjf``, weights without ``w`` and ``x``, or a priority function
  declared static, whose scores are checked to read no time; any number of
  reservations, ``all`` included with its carried plan; either
  ``backfill_host``; no immediate service): ``H`` is the first predicted
  release of a running job (:func:`first_release`).  Over ``[t0, H)`` every
  host's availability profile, as a function of absolute time, is the same at
  ``t0`` and at ``t``: the free resources until ``H``, then the same releases
  at the same times (none is clamped to *now*, none moves with *now*).  The
  queue order does not depend on time.  Job by job in that order:

  - a job that did not fit at ``t0`` does not fit at ``t``: its window
    ``[t0, t0 + est)`` met a point ``p`` with too little room on every host
    (processors or memory, the reservations made before it included).  If
    ``p < t``, the profile at ``p`` is the free resources, as at ``t``;
    otherwise ``p`` lies in ``[t, t + est)`` (rounding of ``t + est`` is
    monotone).  The window only grows into the later profile;
  - its reservation is the earliest time from which its window fits: no time
    in ``[t0, H)`` fits (the same argument from each such time), so the
    earliest at or after ``t`` is the earliest at or after ``t0``, at or after
    ``H``, on the same host (ties go to the fewest free processors *now*,
    which have not changed).  The reservations, and so the profiles the next
    jobs meet, are the same;
  - a backfill candidate is tested against those same profiles and
    reservations, so it is refused again.

  The carried plan of ``--reservations all`` gives the fresh pass's
  decisions (:mod:`~o2ksim.policies.carried_plan`), so the argument covers
  it; its reservations lie at or after ``H`` and none comes due before ``H``.

* **Priority backfill with a weighted order that grows with the wait** (LXF,
  LXF&W, any weights: :class:`~o2ksim.policies.priority.WeightedPriority`),
  otherwise as above: ``H`` is the earlier of the first predicted release and
  the first time the order of the waiting jobs may change
  (:func:`order_holds_until`).  Until then the order at ``t`` is the order at
  ``t0``, and the argument above holds as it stands.  Each score is
  ``base + slope * (t - submit)``, linear in ``t``, so the order first changes
  where two neighbours in it meet (kinetic sorting): for neighbours ``i``
  ahead of ``j`` whose exact scores differ by ``D`` at ``t0`` and whose slopes
  differ by ``slope_j - slope_i > 0``, not before ``t0 + D / (slope_j -
  slope_i)``.  The scores are floats: each is within 4 units in the last
  place of ``|base| + |slope| * wait`` of its exact value (two roundings of
  the product and sum, one of ``t - submit``), so the bound keeps a margin
  of four such errors, computed at ``H``'s cap where the waits are longest;
  neighbours closer than that margin now give no guarantee, unless both have
  the same base, slope and submission time (the same floats at every ``t``:
  tied for ever, in queue order).

* **Fixed-job or non-sliding reservations** (``reservation_kind = "fixed"``,
  ``sliding = false`` or both, as NCSA-MS* and ``--no-sliding``; a static or
  weighted order as above): the policy carries ``held``, the reservations of
  the last pass (job -> host, time, in granted order), into the next, where
  they change the pass -- under fixed-job the held jobs come first in the
  order, and a non-sliding reservation is kept at its time while that is in
  the future and still possible, else recomputed from it, never earlier.  So a
  pass on the same state behaves as the quiet one only if it starts from the
  same ``held``: the guarantee is given only after a quiet pass that was a
  *fixed point*, leaving ``held`` exactly as it found it (the same jobs, hosts
  and times in the same order; :class:`LastPass`, recorded by the pass).  A
  pass that granted, dropped or moved a reservation promises nothing; the next
  tick's pass then starts from the new ``held``, and is usually the fixed
  point (one pass more per change).  After a fixed point, ``H`` is the earliest
  of the first predicted release, for a weighted order the first time it may
  change, and the earliest held time ``K`` (:func:`held_holds_until`; no
  guarantee if ``K <= t0``).  Every reservation of the quiet pass is in
  ``held``, so all lie at or after ``K``, hence ``H``; the profiles are the same on
  ``[t, inf)`` at ``t0`` and at ``t``, and on ``[t0, t)`` they are the free
  resources at ``t0``.  Job by job in the same order (the held prefix is the
  same list, the rest the same order until ``H``): a job that could not start
  or be backfilled at ``t0`` cannot at ``t``, as above; a reservation computed
  afresh (fixed-job slides; a job not held before) is the earliest fit from
  ``t``, which is the one from ``t0``: each host's earliest fit from ``t0`` is
  either ``t0`` itself (then ``K <= t0``, excluded) or at or after ``H``,
  since on ``[t0, H)`` the profile is constant; a kept time ``k`` (``k >= K >
  t``) is kept at ``t`` exactly when it was at ``t0``, its window lying where
  the profiles agree, and when it was not, the earliest fit from ``k`` is the
  same.  So the pass at ``t`` decides nothing and leaves ``held`` as it was,
  and the next tick's pass starts from the same state again.  At ``t = K`` a
  kept time is no longer in the future: the pass recomputes it and may move it
  (another host, the same time), so passes at or after ``K`` are not
  covered; the scheduler runs the pass at the first tick at or after ``H``.
  With ``backfill_host = "delays-none"`` a fixed point's ``K`` is never
  before the first predicted release (a window that fits the profile at
  ``K`` with no step of it in ``(t0, K]`` fits at ``t0`` too, and the job
  would have been backfilled); with ``"fewest-free"`` it can be: a job refused
  on the host picked by its free resources keeps a time on another host where
  nothing ends any more, and from ``K`` on it is reserved afresh at *now*, at
  every pass (``tests/test_interval_quiet_held.py``).  With a kept time and
  no interval, the policy asks for a pass at that time (``WakeAt``); with an
  interval it does not, and this bound takes its place.

  The pass that returns at once (sliding fixed-job reservations, ``N`` held,
  and no processor free, or every holder still waiting and no job fitting
  any host: ``Backfill._decides_nothing``) reads neither time nor order and
  touches nothing, so a pass on the same state returns at once too: ``H =
  inf``.

* **Nothing fits** (priority backfill with dynamic reservations and any
  order, priority functions included; the goal-oriented policies): ``H =
  inf`` (until an event) when no waiting job fits the free processors and
  memory of any host.  Backfill's pass then returns at once
  (``Backfill._decides_nothing``): with dynamic reservations nothing is kept
  between passes, so whatever order the jobs would have had, it decides
  nothing and changes nothing; the free resources, and with them the test,
  do not change without an event.  The goal-oriented pass skips its search
  in the same case (``_any_fits_now``) and keeps nothing either (its warm
  start and random kicks are read and drawn only by a search).  When
  something fits, a priority function or a search may hold it back for a
  reason that moves with time: no promise.
* **Priority backfill with immediate service** (``immediate_service`` ``soon``
  or ``preemptive``, T§3.2.2), otherwise as above: ``H`` is also at most the
  first time a refused trial may be granted
  (:meth:`ImmediateService.quiet_until
  <o2ksim.policies.immediate.service.ImmediateService.quiet_until>`).  A pass
  with immediate service runs the backfill pass, then offers a trial to each
  job awaiting one; quiet, it started nothing and every such job was refused.
  With no trial's victim preempted or owed (else a host's ``preempted`` is not
  empty: ``H = now``), the backfill pass sees the plain snapshot, and the
  argument above holds for it.  A refused ``soon`` trial needs free processors
  and memory on one host, which do not change.  A refused ``preemptive`` trial
  needs, on one host with the memory, the free processors plus those of the
  eligible running jobs to reach its request (victims are chosen in order
  until they do, so order does not matter); the eligible set only loses jobs
  until a running job completes ``t`` of uninterrupted run with more than
  ``t`` still predicted (:func:`~o2ksim.policies.immediate.service.victims_may_grow_at`,
  a few ulps early for the rounding of that test).  The WakeAt the pass asks
  for at that time also ends a skip; the bound does not rely on it.  With
  fixed-job or non-sliding reservations the backfill pass inside is the one
  above, on the plain snapshot, and it alone reads and writes ``held`` (a
  trial starts nothing in a quiet pass, and refused trials change no
  reservation), so ``H`` is the earlier of the held reservations' bound
  (after a fixed point) and the trials'.

* **EQspatial-MinInterval** (:class:`~o2ksim.policies.eqspatial.EQSpatial`, every
  parameter variant: MinInterval 0 or not, ``/>50hr`` with either clock, grant
  and placement, ``new_job_service``, the immediate service of jobs waiting for
  memory): ``H`` is the earliest of its live deadlines (a catch-up end, a
  long-job mark) and of the times MinInterval lets a dirty host repartition,
  each less ``TIME_EPS`` (both are checked within it); ``inf`` without either.
  Its shares do not read the predicted releases, and trials end by departures.
  The catch-up credit of jobs waiting for memory is booked once per pass: the
  pass after a skip books the skipped ticks one by one, in closed form
  (:mod:`~o2ksim.policies.tick_sums`), the floats of ticking through.  No
  guarantee after a pass that ended a trial (its host is held for that pass
  only).  The argument, step by step through the pass:
  :mod:`~o2ksim.policies.eqspatial_quiet`.

* **NCSA-LSF*** (:class:`~o2ksim.policies.lsf.policy.NCSALSF`, every
  parameter variant): ``H`` is the next drain deadline (``inf`` without one or
  without draining); no guarantee while a drained host has idle processors.
  A pass reads time in three places only: the drain deadlines that have come
  due (none before ``H``; the deadline's own timer would also end a skip
  there); the idle processor-seconds of drained hosts, added pass by pass
  (a float sum that one long step would not reproduce, hence no promise while
  one is not zero); and the timers already past (none fire without an event).
  The rest reads the free resources, the filed queue and the running counts,
  which only events change.  A quiet pass makes one round of the pass's loop:
  drains dropped (a limit reached, priority lost), drains given, nothing
  nominated.  Drains it gives pass the checks that drop drains (the same
  limits and class priority), and the drain search ends with no candidate, so
  a second round on that state changes nothing and draws no random number:
  the pass at ``t`` repeats the end of the pass at ``t0``.

No guarantee (the default), and why:

* priority functions not declared static and the goal-oriented policies
  while something fits:
  the order at ``t`` may differ from the order at ``t0``, and with it the
  reservations; a search reads time otherwise than through the releases;
* preemption (a trial's victims), in backfill: the trial they wait for may
  overrun;
* a running job whose prediction moves with *now* (it has overrun its
  estimate, or will be raised by the overrun rule ``requested``), or any
  preempted job: ``H = now``.  A job resized, reduced or resumed is
  predicted from the work owed at its current rate, a time fixed through
  each segment (:meth:`~o2ksim.jobs.Job.rate_end`): its release counts as
  any other;
* user policies, and subclasses that change how a pass decides
  (:func:`proved_for`), until they declare their own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job
from o2ksim.policies.priority import WeightedPriority
from o2ksim.policies.running_releases import release_time

UNIT_ROUNDOFF = 2.0**-53
SCORE_ERROR = 4 * UNIT_ROUNDOFF  # of a score, relative to |base| + |slope| * wait


def first_release(snap: Snapshot) -> float:
    """The earliest predicted release of a running job: ``inf`` when nothing runs, and
    ``snap.now`` (no guarantee) when a prediction moves with time.

    A prediction is a fixed time while it is after now: the engine's regular
    releases (:class:`~o2ksim.engine.releases.ReleaseIndex`: a job on its full
    request, never resized or preempted, ``last_start + req_time``) and the
    others it lists apart, predicted from the work owed at their current rate
    (:meth:`~o2ksim.jobs.Job.rate_end`, fixed through each segment; a resize,
    preemption or resumption is an event).  Not a fixed time: a prediction at
    or before now (the scheduler predicts *now*, which moves), one the overrun
    rule ``requested`` will raise (``overrun_time``), and a preempted job (the
    trial it waits for may overrun).  A snapshot without the engine's release
    index (built by hand) gets no guarantee either.
    """
    now = snap.now
    first = math.inf
    for h in snap.hosts:
        index = h.releases
        if h.preempted or index is None:
            return now
        times, _procs, _mem = index.arrays()
        if len(times):
            first = min(first, float(times[0]))
        for job in index.irregular.values():
            if job.overrun_time:
                return now
            first = min(first, release_time(job, now))
    return now if first <= now else first


def order_holds_until(prio: WeightedPriority, index: QueueIndex, now: float, cap: float) -> float:
    """The first time, at most ``cap``, at which the weighted order of the waiting jobs
    (``index``: the engine's columns of the queue) may differ from the order at ``now``;
    ``now`` when two neighbours in it are too close to tell (module docstring).

    From the same ``base`` and ``slope`` floats as the order itself
    (:meth:`~o2ksim.policies.priority.WeightedPriority.term_lists`).  O(q log q) in
    plain Python: it is asked after a quiet pass, where the queue is short.
    """
    rows = index.rows().tolist()
    if len(rows) < 2:
        return cap
    if not math.isfinite(cap):
        return now
    b, m, t = prio.term_lists(index)
    ranked = sorted(rows, key=lambda r: -(b[r] + m[r] * (now - t[r])))  # the order now
    holds = cap
    ahead = ranked[0]
    ahead_score = b[ahead] + m[ahead] * (now - t[ahead])
    for r in ranked[1:]:
        score = b[r] + m[r] * (now - t[r])
        if b[r] != b[ahead] or m[r] != m[ahead] or t[r] != t[ahead]:  # else tied for ever
            gap = ahead_score - score  # >= 0
            size = abs(b[ahead]) + abs(m[ahead]) * (cap - t[ahead])  # errors grow to cap
            size += abs(b[r]) + abs(m[r]) * (cap - t[r])
            margin = 4 * SCORE_ERROR * size + 4 * UNIT_ROUNDOFF * gap
            if gap <= margin:
                return now
            closing = m[r] - m[ahead]  # > 0: the one behind catches up
            if closing > 0:
                holds = min(holds, now + (gap - margin) / closing * (1 - 1e-9))
        ahead, ahead_score = r, score
    return holds


def proved_for(policy: object, cls: type, *methods: str) -> bool:
    """Whether ``policy`` decides with ``cls``'s own ``methods``: a guarantee proved for
    ``cls``'s passes does not extend to a subclass that changes them."""
    kind = type(policy)
    return all(getattr(kind, m) is getattr(cls, m) for m in methods)


class LastPass(NamedTuple):
    """What a backfill pass with fixed-job or non-sliding reservations did to the
    reservations it carries (:attr:`~o2ksim.policies.backfill.Backfill.held`)."""

    at: float = -math.inf  # the pass's time
    early: bool = False  # it returned at once (Backfill._decides_nothing): held untouched
    moved: bool = True  # it granted, dropped or moved a reservation, or reordered them


def held_holds_until(last: LastPass, held: Mapping[Job, tuple[str, float]], now: float) -> float:
    """How long the reservations carried out of the pass at ``now`` keep the next pass on
    the same state quiet (module docstring): ``now`` (no promise) unless that pass left
    them exactly as it found them; ``inf`` after the early exit; else the earliest of
    their times, ``now`` if one is not after ``now``."""
    if last.at != now or last.moved:
        return now
    if last.early:
        return math.inf
    first = min((at for _host, at in held.values()), default=math.inf)
    return first if first > now else now
