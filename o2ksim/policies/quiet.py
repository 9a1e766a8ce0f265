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
  ``fcfs``, ``sjf`` or weights without ``w`` and ``x``; any number of
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

* fixed-job or non-sliding reservations: a kept reservation time that passes
  changes the next pass (and with an interval no timer marks it);
* priority functions: the order at ``t`` may differ from the order at ``t0``,
  and with it the reservations;
* immediate service (trials, quanta) in backfill, preemption and the
  goal-oriented policies: their passes read time otherwise than through the
  releases;
* a running job whose prediction moves with *now* (it has overrun its
  estimate, or was resized, reduced, preempted or raised by the overrun
  rule ``requested``), or any preempted job: ``H = now``;
* user policies, and subclasses that change how a pass decides
  (:func:`proved_for`), until they declare their own.
"""

from __future__ import annotations

import math

from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.snapshot import Snapshot
from o2ksim.policies.priority import WeightedPriority

UNIT_ROUNDOFF = 2.0**-53
SCORE_ERROR = 4 * UNIT_ROUNDOFF  # of a score, relative to |base| + |slope| * wait


def first_release(snap: Snapshot) -> float:
    """The earliest predicted release of a running job: ``inf`` when nothing runs, and
    ``snap.now`` (no guarantee) when a prediction moves with time.

    A prediction is a fixed time when the job runs on its full request and was
    never resized or preempted (the engine's regular releases,
    :class:`~o2ksim.engine.releases.ReleaseIndex`) and that time is after now;
    at or before now the scheduler predicts it *now*, which moves.  A
    snapshot without the engine's release index (built by hand) gets no
    guarantee either.
    """
    now = snap.now
    first = math.inf
    for h in snap.hosts:
        index = h.releases
        if h.preempted or index is None or index.irregular:
            return now
        if len(index):
            times, _procs, _mem = index.arrays()
            t = float(times[0])
            if t <= now:
                return now
            first = min(first, t)
    return first


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
