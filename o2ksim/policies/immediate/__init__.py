"""Immediate service: a quantum trial run for new jobs, with limited preemption (T§3.2.2, T§5.5).

The thesis's definition (T§3.2.2):

    "With the preemptive immediate service, if a new job can't be started as a
    full job, the job is given a preemptive priority to start on as many
    processors as requested and an initial memory for a very short quantum.
    [...] If a host has enough free (i.e., unoccupied) processors and the
    initial memory to give an immediate service to the new job, the job
    receives an immediate service on the host without preemption.  If more
    than one such hosts are found, the host that has the smallest number of
    free processors is chosen.  Otherwise, the currently executing jobs are
    chosen to be preempted as follows.  To avoid memory overhead, only the
    processors (but not the memory) of the currently executing jobs can be
    preempted [...].  An executing job is eligible to be preempted if (1) it
    has been running without interruption for longer than t, and (2) its
    expected remaining runtime is longer than t.  For each host that has at
    least an amount of the initial memory, each job eligible for preemption is
    considered in the order of increasing estimated current job slowdown,
    which is the ratio of the elapsed time since the job arrived divided by
    the time it has actually run so far [...].  As many such jobs on the host
    as required are selected, until the sum of the total number of processors
    occupied by these jobs plus the currently free processors on the host is
    at least as large as requested by the new job.  Note that if the number of
    these processors is greater than requested, some of the selected jobs may
    be de-selected to avoid unnecessary preemption.  The host that will have
    the fewest number of idle processors due to preemption is chosen [...].
    If the new job completes in the initial quantum and the initial memory, it
    leaves the system.  Otherwise, it is killed and waits in the queue to be
    scheduled as a full job."

The component and its pieces (one module each):

* :mod:`.settings` -- :data:`PARAMS`, the declaration of the four parameters
  (mode ``preemptive``/``soon``/``off``, quantum ``q``, initial memory,
  eligibility ``t``, default ``10 q``), and :class:`TrialSettings`, their parsed
  form (``soon`` is the non-preemptive test run of [PK00] evaluated in T§5.5);
* :mod:`.trials` -- :func:`plan_trial`, where a job's trial runs and whom it
  preempts (the rules quoted above), and :func:`trial_decisions`, which turns
  a plan into engine decisions (``Preempt`` the victims, ``Start`` the job
  with ``time_limit=q, on_limit="requeue"``, the initial memory and
  ``resumes`` = the victims, which the engine resumes on the processors they
  had the moment the trial ends);
* :mod:`.eligibility` -- :class:`EligibilityCache` and :class:`VictimLists`:
  per host, the running jobs eligible for preemption in preemption order,
  kept between passes so that a pass does not rescan every running job;
* :mod:`.book` -- :class:`TrialBook`: trials in progress, their victims (any
  the engine could not resume at the trial's end are resumed by the next
  pass), the processors those victims are owed per host, and the counters;
* :mod:`.awaiting` -- :class:`Awaiting`: the jobs awaiting a trial in arrival
  order, with a min-tree of their processor requests, so that a pass finds
  the next job a trial could fit in O(log q) (a flood: issue 27, D29);
* :mod:`.service` -- :class:`ImmediateService`, the component a backfill
  policy holds (``Backfill.immediate``): it runs the backfill pass on a view
  in which the victims still hold their processors (so the availability
  profile never promises them twice), then gives a trial to every new job
  the pass did not start; it answers the engine's pending-work question and
  gives the policy's counters;
* :mod:`.hosts` -- :class:`HostTrials`: the same service for a policy that
  partitions hosts (EQspatial, T§3.2.3), for the jobs no host has the memory
  for: one trial per host at a time, the hosts it blocks.

A policy composes it in six lines (what :class:`~o2ksim.policies.backfill.Backfill`
does; ``my_pass`` returns the policy's own decisions)::

    PARAMS = {..., **ImmediateService.PARAMS}             # declared as the policy's own
    self.immediate = ImmediateService.from_params(self.params)   # None when "off"
    # bind():            self.immediate = self.immediate.fresh()  (a new run)
    # schedule(snap):    return self.immediate.schedule(snap, self.my_pass)
    # summary_counts(ids): return self.immediate.summary_counts(ids)
    # stats():           return self.immediate.stats()

Choices where the thesis is silent (each tested in ``tests/test_immediate.py``):

* A trial on free processors does **not** respect backfill reservations: it
  has the "preemptive priority" of T§3.2.2 and lasts at most ``q``, so it can
  delay a reserved start by at most ``q`` — the same bound by which a
  preemptive trial delays the jobs it preempts.
* A victim's remaining runtime is judged from its *requested* runtime (the
  only thing the scheduler knows), so a job that will really end within the
  trial may still be preempted; eligibility boundaries are "run uninterrupted
  for at least ``t``" and "predicted to need more than ``t``".
* De-selection tries the selected jobs in reverse selection order (highest
  current slowdown first) and drops each one the others can do without.
* Ties: slowdown ties go to the lower job id, host ties to machine order.
* While a preempting trial runs, its victims' processors stay theirs: no other
  job may start on the spare part of them, and the backfill profile shows them
  coming back when the trial ends (predicted from the trial's time limit or
  requested runtime, whichever is earlier) and held until the victim's
  requested runtime is served.
* A trial gets ``min(initial memory, requested memory)`` (the initial memory
  when the request is unknown); it fails when the job's peak memory (the
  trace's used-memory field) exceeds that, and then runs the whole quantum
  before it is killed (the issue's rule: "killed at the end of the quantum").
  A trace without the used-memory field judges trials on time only.
* A job that cannot get a trial when it arrives waits for one; the policy asks
  for a pass when the next running job becomes eligible for preemption (the
  thesis simulator's extra event, T§3.4).  Waiting jobs are served in arrival
  order.
* Passes: the component gets every pass its holding policy gets (the engine
  runs one at every arrival, departure and timer); the holding policy's own
  backfill pass returns at once when it can decide nothing.
"""

from o2ksim.policies.immediate.book import Borrowed, TrialBook, borrowed_view
from o2ksim.policies.immediate.eligibility import EligibilityCache, VictimLists
from o2ksim.policies.immediate.hosts import HostTrials
from o2ksim.policies.immediate.service import ImmediateService
from o2ksim.policies.immediate.settings import (
    DEFAULT_INITIAL_MEMORY,
    DEFAULT_QUANTUM,
    ELIGIBLE_FACTOR,
    MODES,
    PARAMS,
    TrialSettings,
    parse_memory,
)
from o2ksim.policies.immediate.trials import (
    TrialPlan,
    choose_victims,
    current_slowdown,
    is_eligible_victim,
    plan_trial,
    trial_decisions,
)

__all__ = [
    "DEFAULT_INITIAL_MEMORY",
    "DEFAULT_QUANTUM",
    "ELIGIBLE_FACTOR",
    "MODES",
    "PARAMS",
    "Borrowed",
    "EligibilityCache",
    "HostTrials",
    "ImmediateService",
    "TrialBook",
    "TrialPlan",
    "TrialSettings",
    "VictimLists",
    "borrowed_view",
    "choose_victims",
    "current_slowdown",
    "is_eligible_victim",
    "parse_memory",
    "plan_trial",
    "trial_decisions",
]
