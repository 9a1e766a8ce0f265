"""The engine–policy contract: what a policy must offer and what a run is configured with.

A policy is any object with the seven methods of :class:`PolicyProtocol`:

* ``schedule(snapshot) -> Sequence[Decision]`` — the decisions for this pass
  (the only method a policy really has to write);
* ``bind(machine, rng)`` — called once before the run, with the machine and
  the run's random generator;
* ``admit(job) -> str | None`` — the reason the policy can never run a job
  (it is then rejected on arrival), or ``None``;
* ``stats() -> Mapping[str, float]`` — the policy's own counters, stored with
  the run's statistics (``run.json``);
* ``summary_counts(ids) -> Mapping[str, int]`` — the policy's counters over the
  analysed jobs, added to ``summary.json`` and printed in ``o2ksim run``'s summary;
* ``idle_when_nothing_fits() -> bool`` — an opt-in promise that lets the
  engine skip passes that cannot start anything (below);
* ``has_pending_work(arrived) -> bool`` — asked, for a policy that opted in,
  at each pass the engine is about to skip: ``True`` keeps the pass (below).

:class:`o2ksim.policies.base.Policy` implements ``bind``, ``admit``,
``stats``, ``summary_counts``, ``idle_when_nothing_fits`` and ``has_pending_work``
with do-nothing defaults (the last two answer ``False``), so a subclass writes only
``schedule``; the engine and the run call all seven directly, never probing for them.

Skipping passes that cannot start anything
------------------------------------------

On a busy machine most arrivals change nothing: the new job does not fit,
and neither does any other.  A policy whose ``idle_when_nothing_fits()``
returns ``True`` (asked once, after ``bind``) promises that a pass in which
**no waiting job fits the free processors and free memory of any host** returns
no decisions and changes nothing the policy carries to later passes.  The
engine then skips such a pass without building a snapshot: it checks, in
O(hosts), that every host has fewer free processors than the smallest
processor request in the queue or less free memory than the smallest memory
request (the two minima are kept by
:class:`~o2ksim.engine.queue_index.QueueIndex`; an empty queue counts as
"nothing fits").  A skipped pass is not a pass: observers' ``on_pass`` is not
called, and the jobs that arrived or departed meanwhile are handed to the next
pass that runs (``Snapshot.arrived``/``departed`` cover everything since the
previous pass that ran).  The engine never skips a pass at which one of the
policy's ``WakeAt`` timers is due, or any pass of an ``explain`` run (its
information-only decisions are the point of it).  ``RunStats.skipped_passes``
counts the skipped passes.

Work that does not need a full job to fit
-----------------------------------------

Some policies can act in a pass where no waiting job fits as a full job:
immediate service (:mod:`o2ksim.policies.immediate`) gives a new job a trial
on the initial memory or by preempting running jobs, and resumes the victims
of a trial the engine could not resume itself.  Such a policy still opts in,
and answers the per-pass question ``has_pending_work(arrived)``: the engine
asks it (only for a policy that opted in, only when no timer is due, before
the O(hosts) fit check) with ``arrived`` = whether any job arrived since the
last pass that ran, and skips the pass only when the answer is ``False`` and
nothing fits.  The promise then reads: *a pass in which nothing fits and
``has_pending_work`` answers* ``False`` *decides and changes nothing*.  The
answer must be cheap (the engine may ask at every arrival and departure) and
may only err towards ``True``; what makes it ``True`` may change only in a
pass, at an arrival, at a departure, or when the engine leaves a preempted job
of a ``Start.resumes`` run to the policy (its processors are not free when the
run ends), since at those the engine asks again.
Policies with no such work keep the default ``False``.

The promise holds for a policy whose passes only start jobs that fit now and
keep no state from pass to pass: strict FCFS and backfill with dynamic,
sliding reservations and no immediate service (whose reservations are
recomputed at every pass anyway).  It does **not** hold for fixed or
non-sliding reservations (a reservation is granted or kept at every pass),
immediate service (trial runs preempt), NCSA-LSF* and EQspatial (they keep
per-pass bookkeeping of arrivals and departures, timers and partitions) or
goal-oriented scheduling; those answer ``False`` and get every pass.  A
priority function used by an opted-in policy must be pure (it already is
recomputed at every pass).

:class:`RunSettings` holds the settings that belong to the run, not to a
policy or a machine: the scheduling interval and the overrun kill.  Each has
one place: ``simulate(...)``, ``o2ksim run`` options or a scenario's
``[protocol]`` table; a machine file's ``[options]`` give the defaults of the
last two for runs on that machine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from o2ksim.engine.decisions import Decision
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job
from o2ksim.machine import MachineSpec


@runtime_checkable
class PolicyProtocol(Protocol):
    """The Policy protocol: what :class:`~o2ksim.engine.core.Simulation` calls on a policy."""

    name: str

    def bind(self, machine: MachineSpec, rng: np.random.Generator) -> None:
        """Called once before the run: the machine and this run's random generator."""

    def admit(self, job: Job) -> str | None:
        """Reason this policy can never run ``job`` (it is then rejected), or ``None``."""

    def schedule(self, snap: Snapshot) -> Sequence[Decision]:
        """The decisions of one scheduling pass, applied in order."""

    def stats(self) -> Mapping[str, float]:
        """The policy's own counters after the run (e.g. drains given)."""

    def summary_counts(self, ids: AbstractSet[int] | None = None) -> Mapping[str, int]:
        """The policy's counters over the jobs in ``ids`` (the analysed jobs; ``None``: all),
        added to ``summary.json`` and printed by ``o2ksim run``."""

    def idle_when_nothing_fits(self) -> bool:
        """``True``: a pass where no waiting job fits any host now decides and changes nothing.

        The engine then skips such passes (module docstring); ``False`` gets every pass.
        """

    def has_pending_work(self, arrived: bool) -> bool:
        """``True``: this pass may decide something even if no waiting job fits (keep it).

        Asked only of a policy whose ``idle_when_nothing_fits()`` is ``True``, at a
        pass the engine would otherwise skip; ``arrived``: some job arrived since
        the last pass that ran.  Cheap, and errs only towards ``True`` (module docstring).
        """


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How the engine runs, independent of policy and workload.

    ``interval`` (seconds): a scheduling pass every ``interval`` instead of at
    every arrival and departure (T§3.7's 5-minute NCSA-MS* cycle); ``None`` =
    event-driven.  ``kill_overrun``: start every job with a time limit of its
    requested runtime + ``overrun_grace`` seconds and kill it there (SPEC §2;
    off by default).  ``explain``: policies also emit information-only
    decisions (``Reserve``) for the decision log.
    """

    interval: float | None = None
    kill_overrun: bool = False
    overrun_grace: float = 0.0
    explain: bool = False

    def __post_init__(self) -> None:
        if self.interval is not None and not (self.interval > 0 and math.isfinite(self.interval)):
            raise ValueError(f"interval must be a positive number of seconds, got {self.interval!r}")
        if not (self.overrun_grace >= 0):
            raise ValueError(f"overrun_grace must be >= 0 seconds, got {self.overrun_grace!r}")
