"""Hosts: each a pair of SimPy Containers (processors, memory) and the scheduler's ledger.

A host's processors and memory are :class:`simpy.Container` s.  Job
processes (:mod:`o2ksim.engine.job_process`) really ``get`` from them when
they start or are resumed or grown, and ``put`` back to them when they are
preempted, shrunk, killed or end.  The scheduler decides *who may ask*: in a
pass it grants resources (a ``Start``, ``Resume`` or growing ``Resize``) or
takes them back (a ``Preempt``, a shrinking ``Resize``, a ``Kill``) long before
the job processes concerned run -- they run only after the pass, at the same
instant.  So that every decision of a pass sees what the previous ones did,
the host keeps a :class:`Ledger` of

* what the scheduler has granted that no process has taken yet, and
* what the scheduler has taken back that no process has put back yet,

and the free counts a pass sees are the Containers' levels corrected by the
ledger (:attr:`Host.free_procs`, :attr:`Host.free_mem`).  A grant larger than
that is refused with :class:`~o2ksim.engine.errors.PolicyError` (no
over-commit); since a process only gets what was granted, every ``get`` is
satisfied the moment it is made and a Container never goes negative.

A host without a memory limit (``HostSpec.memory`` is ``inf``) has no memory
Container: its jobs' memory requests need no ``get`` (a Container of infinite
capacity could not take a ``put`` back: ``inf - inf`` is not a number).

Processors down for a while (an :class:`~o2ksim.availability.Outage`: an
outage, a drained or dedicated node) are one more process per period
(:meth:`Host.outage`), which takes them from the same Container: at the
period's start it ``get`` s them, at its end it ``put`` s them back.  Like a
site draining a node, it does not stop running jobs: while its ``get`` waits
for them to end, the processors it waits for are left out of
:attr:`Host.free_procs` (which may then be negative: what the running jobs
owe the drain), so no job starts on them and a backfill profile built from
the running jobs' releases counts them as down -- for good, since the
scheduler is not told when the period ends; at its end a pass is asked for.
A drain that has not finished by the period's end is called off.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import simpy
from simpy.resources.container import ContainerGet

from o2ksim.availability import Outage
from o2ksim.engine.errors import PolicyError
from o2ksim.engine.releases import ReleaseIndex
from o2ksim.engine.snapshot import HostView
from o2ksim.jobs import Job
from o2ksim.machine import HostSpec


@dataclass(slots=True)
class OutageRecord:
    """What became of one :class:`~o2ksim.availability.Outage` in the run.

    ``held_from``: when its processors were all drained and taken (``None``
    while draining, and for good when the drain was called off at the end).
    """

    outage: Outage
    held_from: float | None = None


@dataclass(slots=True)
class Ledger:
    """What the scheduler has decided on a host but the job processes have not yet done.

    ``to_take_*``: granted by the scheduler, not yet taken (``get``) by the
    job processes.  ``to_return_*``: taken back by the scheduler, not yet
    returned (``put``) by the job processes.  Both are zero whenever no
    decision is waiting for its process (between passes, as a rule).
    """

    to_take_procs: int = 0
    to_take_mem: float = 0
    to_return_procs: int = 0
    to_return_mem: float = 0


class Host:
    """One host: a processor Container, a memory Container, the ledger and the scheduler's books.

    The books -- the jobs running and preempted here, and the running jobs'
    expected releases (:class:`~o2ksim.engine.releases.ReleaseIndex`) -- are
    what policies read through :meth:`view`.  ``version`` counts allocation
    changes on the host and ``changes`` (a one-element list shared by the
    machine's hosts) counts them on the whole machine, so that a pass
    rebuilds the host views only after an allocation changed.
    """

    def __init__(self, env: simpy.Environment, spec: HostSpec, changes: list[int]) -> None:
        self.spec = spec
        self.name = spec.name
        self.procs = simpy.Container(env, capacity=spec.procs, init=spec.procs)
        self.memory: simpy.Container | None = (
            None if math.isinf(spec.memory) else simpy.Container(env, spec.memory, init=spec.memory)
        )
        self.ledger = Ledger()
        self.running: dict[int, Job] = {}
        self.preempted: dict[int, Job] = {}
        self.releases = ReleaseIndex()
        self.version = 0
        self.changes = changes
        self._view: HostView | None = None
        self.down = 0  # processors that outages hold or are draining
        self.drains: list[ContainerGet] = []  # outages' gets waiting for running jobs to end

    # -- what a pass sees ----------------------------------------------------------------------
    @property
    def free_procs(self) -> int:
        """Processors free once every decision so far has reached its process."""
        ledger = self.ledger
        free = int(self.procs.level) - ledger.to_take_procs + ledger.to_return_procs
        if self.drains:  # processors a drain waits for are not free, however idle
            free -= sum(int(g.amount) for g in self.drains if not g.triggered)
        return free

    @property
    def free_mem(self) -> float:
        """Memory (KB) free once every decision so far has reached its process (``inf``: no limit)."""
        if self.memory is None:
            return math.inf
        ledger = self.ledger
        return self.memory.level - ledger.to_take_mem + ledger.to_return_mem

    def view(self) -> HostView:
        """The host as a policy sees it; the same object while no allocation changed."""
        view = self._view
        if view is None or view.version != self.version:
            view = self._view = HostView(
                spec=self.spec,
                free_procs=self.free_procs,
                free_mem=self.free_mem,
                running=self.running.values(),
                preempted=self.preempted.values(),
                version=self.version,
                releases=self.releases,
                name=self.name,
                down_procs=self.down,
            )
        return view

    # -- the scheduler's side ------------------------------------------------------------------
    def grant(self, procs: int, mem: float, job: Job) -> None:
        """Let ``job``'s process take ``procs`` processors and ``mem`` KB; refuse an over-commit."""
        if procs > self.free_procs or mem > self.free_mem:
            raise PolicyError(
                f"host {self.name}: job {job.id} needs {procs} procs / {mem} KB, "
                f"free {self.free_procs} procs / {self.free_mem} KB (over-commit)"
            )
        self.ledger.to_take_procs += procs
        if self.memory is not None:
            self.ledger.to_take_mem += mem
        self._changed()

    def reclaim(self, procs: int, mem: float) -> None:
        """Count ``procs`` processors and ``mem`` KB free: a job's process will put them back."""
        self.ledger.to_return_procs += procs
        if self.memory is not None:
            self.ledger.to_return_mem += mem
        self._changed()

    def _changed(self) -> None:
        self.version += 1
        self.changes[0] += 1

    # -- the job process's side ----------------------------------------------------------------
    def get(self, procs: int, mem: float) -> None:
        """Take granted resources from the Containers (called by the job process)."""
        if procs:
            self.ledger.to_take_procs -= procs
            _granted_at_once(self.procs.get(procs), self.name)
        if mem and self.memory is not None:
            self.ledger.to_take_mem -= mem
            _granted_at_once(self.memory.get(mem), self.name)

    def put(self, procs: int, mem: float) -> None:
        """Give resources back to the Containers (called by the job process)."""
        if procs:
            self.ledger.to_return_procs -= procs
            self.procs.put(procs)
        if mem and self.memory is not None:
            self.ledger.to_return_mem -= mem
            self.memory.put(mem)

    # -- capacity over time --------------------------------------------------------------------
    def outage(
        self,
        env: simpy.Environment,
        record: OutageRecord,
        gone: Callable[[], None],
        back: Callable[[], None],
    ) -> Generator[simpy.Event, Any, None]:
        """The process of one period of processors down: drain and take them, give them back.

        At the period's start it asks the processor Container for them; the
        ``get`` waits (ahead of any later one: a Container serves its gets in
        order) until the running jobs have put enough back, and meanwhile
        :attr:`free_procs` leaves them out.  It holds them until the period's
        end, puts them back and calls ``back`` (which asks for a pass).  ``gone``
        is called when the period starts (a pass at a later tick sees fewer
        processors: it cuts a quiet skip of the scheduler short).
        """
        down = record.outage
        if down.start > env.now:
            yield env.timeout(down.start - env.now)
        self.down += down.procs
        request = self.procs.get(down.procs)
        self.drains.append(request)
        self._changed()
        gone()
        if not request.triggered:
            yield request | env.timeout(down.end - env.now)
        self.drains.remove(request)
        if request.triggered:
            record.held_from = env.now
            if down.end > env.now:
                yield env.timeout(down.end - env.now)
            self.procs.put(down.procs)
        else:  # the running jobs outlasted the period: the drain is called off
            request.cancel()
        self.down -= down.procs
        self._changed()
        back()


def _granted_at_once(request: simpy.Event, host: str) -> None:
    """A ``get`` the scheduler granted is satisfied when it is made; anything else is a bug."""
    if not request.triggered:
        raise PolicyError(f"host {host}: a job asked for resources the scheduler had not granted")
