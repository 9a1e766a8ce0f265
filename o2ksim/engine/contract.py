"""The engine–policy contract: what a policy must offer and what a run is configured with.

A policy is any object with the six methods of :class:`PolicyProtocol` and a
``name``; the engine and the run call each of them directly, at fixed moments,
and never probe a policy for optional methods:

* ``bind(machine, rng)`` — once, before the run, with the machine and the
  run's random generator;
* ``admit(job) -> str | None`` — at each arrival: the reason the policy can
  never run the job (it is then rejected at once), or ``None``;
* ``schedule(snapshot) -> Sequence[Decision]`` — at each scheduling pass:
  the decisions to apply, in order (the only method a policy really has to
  write);
* ``quiet_until(snapshot) -> float`` — with a fixed interval, after a pass
  that decided nothing: until when every later pass on the same state
  (nothing has happened but time) decides nothing too; ``snapshot.now``
  promises nothing, and the engine then passes at every tick;
* ``stats() -> Mapping[str, float]`` — once, after the run: the policy's own
  counters, stored with the run's statistics (``run.json``);
* ``summary_counts(ids) -> Mapping[str, int]`` — once, after the run: the
  policy's counters over the analysed jobs, added to ``summary.json`` and
  printed in ``o2ksim run``'s summary.

:class:`o2ksim.policies.base.Policy` implements ``bind``, ``admit``,
``quiet_until``, ``stats`` and ``summary_counts`` with do-nothing defaults, so a
subclass writes only ``schedule``.

When passes happen is the engine's business alone (:mod:`o2ksim.engine.scheduler`):
one pass at every instant where a job arrived, a job ended, a ``WakeAt``
timer came due or the fixed interval ticked, after everything else at that
instant.  A policy gets every such pass; one that has nothing to do returns
no decisions (cheaply, if it can tell so cheaply).

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
from o2ksim.jobs import OVERRUN_RULES, Job
from o2ksim.machine import MachineSpec

#: The methods of :class:`PolicyProtocol`, named when one is missing (a policy object given
#: to ``simulate``, a user's class named ``"file.py:Name"``).
PROTOCOL_METHODS = ("schedule", "bind", "admit", "quiet_until", "stats", "summary_counts")


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

    def quiet_until(self, snap: Snapshot) -> float:
        """After a pass on ``snap`` that decided nothing: until when a pass on the same
        state decides nothing too (``snap.now``: no promise)."""

    def stats(self) -> Mapping[str, float]:
        """The policy's own counters after the run (e.g. drains given)."""

    def summary_counts(self, ids: AbstractSet[int] | None = None) -> Mapping[str, int]:
        """The policy's counters over the jobs in ``ids`` (the analysed jobs; ``None``: all),
        added to ``summary.json`` and printed by ``o2ksim run``."""


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How the engine runs, independent of policy and workload.

    ``interval`` (seconds): a scheduling pass every ``interval`` instead of at
    every arrival and departure (T§3.7's 5-minute NCSA-MS* cycle); ``None`` =
    event-driven.  ``kill_overrun``: start every job with a time limit of its
    requested runtime + ``overrun_grace`` seconds and kill it there (SPEC §2;
    off by default; :attr:`~o2ksim.jobs.JobSpec.kill_after`).  ``explain``:
    policies also emit information-only decisions (``Reserve``) for the
    decision log.  ``overrun``: what the scheduler predicts for a running
    job past its runtime estimate (:data:`~o2ksim.jobs.OVERRUN_RULES`): ``now``, its end
    is *now* until it ends (SPEC §2, the default); ``requested``, its
    prediction is raised to the user's requested runtime ``R`` when an
    estimate replaced it (Tsafrir, Etsion & Feitelson 2007), and is *now*
    once ``R`` too is passed.
    """

    interval: float | None = None
    kill_overrun: bool = False
    overrun_grace: float = 0.0
    explain: bool = False
    overrun: str = "now"

    def __post_init__(self) -> None:
        if self.interval is not None and not (self.interval > 0 and math.isfinite(self.interval)):
            raise ValueError(
                f"interval must be a positive number of seconds, got {self.interval!r}"
            )
        if not (self.overrun_grace >= 0):
            raise ValueError(f"overrun_grace must be >= 0 seconds, got {self.overrun_grace!r}")
        if self.overrun not in OVERRUN_RULES:
            raise ValueError(
                f"overrun must be one of {', '.join(OVERRUN_RULES)}, got {self.overrun!r}"
            )
