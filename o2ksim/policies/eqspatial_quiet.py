"""EQspatial-MinInterval's quiet guarantee: until when a pass on the same state decides nothing.

With a fixed ``--interval`` the engine skips the ticks of a quiet stretch up
to :meth:`Policy.quiet_until <o2ksim.policies.base.Policy.quiet_until>`
(:mod:`o2ksim.policies.quiet`).  For :class:`~o2ksim.policies.eqspatial.EQSpatial`
that time is :func:`quiet_bound`.  The argument, for every parameter variant
(MinInterval 0 or not, the ``/>50hr`` threshold with either clock, grant and
placement, ``new_job_service``, the immediate service of waiting jobs):

The pass at ``t0`` decided nothing, and nothing has happened since: no
arrival, no departure (a trial that ends, completed or killed at its quantum,
is a departure), no ``WakeAt`` timer (repartitioning, catch-up, long-running,
eligibility for preemption: each fires as an engine event, which ends a
skip), no change of a host's resources.  A later pass at ``t`` sees the same
snapshot but for ``now``, with no ``arrived``, ``departed`` or ``timers``.
Step by step (:meth:`~o2ksim.policies.eqspatial.EQSpatial.schedule`):

1. the credit ledger books ``min(P, L) * (t - since)`` for every job waiting
   for memory (:class:`~o2ksim.policies.equipartition.CreditLedger`).  This
   decides nothing, but it changes state: ticking through adds one step per
   tick, and the float sum of those steps is not the float of one long step
   (a catch-up that starts later would end a rounding error apart).  So the
   ledger, given the interval, books the ticks a skip passed over one by one
   as ticking through would (:mod:`o2ksim.policies.tick_sums`: the first
   partial step, ``n`` equal steps in closed form, the last partial step),
   and the level ``L`` is the one every skipped pass would have set (the jobs
   in the system have not changed).  Nothing reads the credit of a waiting
   job before it is placed, which takes a departure.  Without an interval
   (never asked then) no promise while a job waits;
2. no job arrived or departed: nothing to forget, place or retry; the trial
   book has nothing to end (its trials end by departures), and its victims
   still owed processors did not fit at ``t0`` and fit no better at ``t``
   (the free processors are the same): no ``Resume``, and the same
   ``to_resume`` lists.  The hosts where a trial runs or victims are owed
   stay *blocked*, so whatever their state they are left alone, as at ``t0``.
   A host whose trial ended at ``t0`` with no victim owed is blocked for that
   pass only (its processors came back after the snapshot): a job placed
   there at ``t0`` starts at the next pass, so **no promise after a pass that
   ended a trial** (found by the property test against ticking through);
3. deadlines: a catch-up end or a ``/>50hr`` mark is handled by the first
   pass at or after its time (within ``TIME_EPS``), whether or not its timer
   fired (a catch-up re-checked too early is set anew without a timer).  So
   ``H`` is at most every live deadline, minus that slack
   (:func:`before`); before it no deadline is due;
4. hosts: a host neither dirty nor with a placed job waiting to start is not
   touched.  A dirty host that could repartition at ``t0`` (and is not
   blocked) did, and its shares needed no change (the pass decided
   nothing), so it is clean from then on; its pending jobs are all in their
   trials (any other would have started, every placed job gets a
   processor), which ``_start_on_free`` leaves alone.  A dirty host that
   could not repartition yet had no free processor for its pending jobs
   (else some would have started on them) and already had its timer (else
   the pass would have asked for one); at ``t`` the same holds until
   MinInterval allows a repartitioning
   (:meth:`~o2ksim.policies.equipartition.RepartitionClock.can`, within
   ``TIME_EPS``), so ``H`` is at most that time too (:func:`before`; the
   timer fires at it, but a tick just before it would already repartition).

Nothing else in the pass reads the time: placement ratios, shares, victims'
eligibility and slowdowns are computed only for arrivals, departures and
timers.  So a pass at any ``t`` in ``[t0, H)`` decides nothing and leaves the
state as the pass at ``t0`` left it (the deadline heap may drop stale
entries, which are never read), and skipping those passes changes nothing.
A subclass that changes how a pass decides gets no promise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from o2ksim.policies.equipartition import (
    TIME_EPS,
    CreditLedger,
    Deadlines,
    HostState,
    RepartitionClock,
)
from o2ksim.policies.immediate.hosts import HostTrials

#: The methods of :class:`~o2ksim.policies.eqspatial.EQSpatial` the argument is about: a
#: subclass that overrides one of them gets no promise (:func:`~o2ksim.policies.quiet.proved_for`).
DECIDES = ("schedule", "_deadlines", "_place", "_resolve", "_repartition", "_start_on_free",
           "_end_trials", "_forget", "_serve_new_jobs", "_start", "_load", "_host_jobs")  # fmt: skip


def before(when: float) -> float:
    """A time ``h`` such that every float ``t < h`` has ``t + TIME_EPS < when`` in floats.

    ``when - TIME_EPS - 4 ulp(when)``: the two roundings of this expression and the one of
    ``t + TIME_EPS`` each cost at most half an ulp of ``when``.
    """
    return when - TIME_EPS - 4 * math.ulp(when)


def quiet_bound(
    now: float,
    ledger: CreditLedger,
    deadlines: Iterable[Deadlines],
    clock: RepartitionClock,
    hosts: Iterable[HostState],
    interval: float | None,
    trials: HostTrials,
) -> float:
    """The time before which an EQspatial pass on the state of a quiet pass at ``now``
    decides nothing too (module docstring): the earliest live deadline and time a dirty
    host may repartition (each :func:`before`), ``inf`` without either; ``now`` after a
    pass that ended a trial, and while a job waits for memory without an ``interval``."""
    if ledger.waiting and interval is None:
        return now  # the ledger books skipped ticks one by one only on a grid
    if trials.settling.difference(trials.book.to_resume):
        return now  # a trial ended in this pass: its host, held for the pass, is free at the next
    h = math.inf
    for d in deadlines:
        h = min(h, before(d.first()))
    for host in hosts:
        if host.dirty and not clock.can(host.name, now):
            h = min(h, before(clock.next_allowed(host.name)))
    return max(h, now)
