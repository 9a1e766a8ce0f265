"""The simulation: one SimPy environment, its hosts, its job processes and its scheduler.

The design card, module by module:

* each host is a pair of :class:`simpy.Container` s, processors and memory
  (:mod:`o2ksim.engine.hosts`), with a ledger of what the scheduler has
  granted or taken back that the job processes have not yet taken or put back;
* each run of a job is a plain :class:`simpy.Process`
  (:mod:`o2ksim.engine.job_process`) that ``get`` s its processors and memory
  from the Containers, waits for its end with a timeout, ``put`` s them back,
  and learns of preemption, resizing, resuming and kills through a
  :class:`simpy.Interrupt` whose cause is a small frozen object;
* one scheduler process (:mod:`o2ksim.engine.scheduler`) wakes on arrivals,
  departures, policy timers (``WakeAt``: SimPy timeouts) or a fixed
  interval, waits until the instant is quiet (the tie rule of SPEC §3.1),
  hands the policy a :class:`~o2ksim.engine.snapshot.Snapshot` and applies
  the decisions it returns;
* one arrivals process (:meth:`Simulation.arrivals`) submits the jobs at
  their submit times;
* one process per period of processors down (an availability file's
  :class:`~o2ksim.availability.Outage`, :meth:`Host.outage
  <o2ksim.engine.hosts.Host.outage>`) drains them from their host's
  Container at its start and puts them back at its end;
* observers (:mod:`o2ksim.engine.monitor`) listen to the engine's events; the
  :class:`~o2ksim.engine.monitor.Monitor` records per-job timestamps and
  allocation segments and builds the tables at the end.

This module holds :class:`Simulation`, which builds and runs all of it, and
the books every process shares: the queue, and what happens when a job
arrives, ends, is requeued or rejected.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy
from simpy.core import StopSimulation

from o2ksim.availability import Outage
from o2ksim.engine.arrival_queue import ArrivalQueue
from o2ksim.engine.contract import PolicyProtocol, RunSettings
from o2ksim.engine.decisions import PolicyError
from o2ksim.engine.hosts import Host, OutageRecord
from o2ksim.engine.monitor import Monitor, Observer
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.scheduler import Scheduler
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import Admission, MachineSpec


@dataclass
class RunStats:
    """Counters and timings of one run."""

    passes: int = 0
    decisions: int = 0
    wall_seconds: float = 0.0
    sim_end: float = 0.0
    stalled: int = 0  # analysed jobs left unfinished because nothing more could happen
    extra: dict[str, Any] = field(default_factory=dict)


class Hooks:
    """The observers' hooks, each list holding only the observers that override it.

    Most observers implement one or two of :class:`~o2ksim.engine.monitor.Observer`'s
    hooks; looking them up once spares the engine a call of a no-op per event.
    """

    def __init__(self, observers: Sequence[Observer]) -> None:
        def overriding(name: str) -> list[Callable[..., None]]:
            default = getattr(Observer, name)
            return [
                getattr(obs, name)
                for obs in observers
                if getattr(type(obs), name, default) is not default
            ]

        self.on_arrival = overriding("on_arrival")
        self.on_allocation = overriding("on_allocation")
        self.on_release = overriding("on_release")
        self.on_end = overriding("on_end")
        self.on_decision = overriding("on_decision")
        self.on_pass = overriding("on_pass")


class Simulation:
    """One run of one policy over one workload on one machine.

    ``jobs`` are the submitted jobs (any order; they are released in submit
    order, ties in the given order).  ``policy`` follows the
    :class:`~o2ksim.engine.contract.PolicyProtocol`.  ``settings`` (a
    :class:`~o2ksim.engine.contract.RunSettings`) holds the scheduling
    interval, the overrun kill and the explain switch; the keyword arguments
    ``interval``, ``kill_overrun``, ``overrun_grace``, ``explain`` and ``overrun`` build one
    when ``settings`` is not given.  ``watch`` is the set of job ids the run
    must finish (the analysis window); ``None`` = all.  ``rng`` is the run's
    only source of randomness, handed to the policy.  ``availability``: periods
    of processors down (:class:`~o2ksim.availability.Outage`); what became of
    each is in :attr:`outages` (:class:`~o2ksim.engine.hosts.OutageRecord`).
    """

    def __init__(
        self,
        machine: MachineSpec,
        jobs: Sequence[JobSpec],
        policy: PolicyProtocol,
        *,
        settings: RunSettings | None = None,
        interval: float | None = None,
        kill_overrun: bool = False,
        overrun_grace: float = 0.0,
        watch: Iterable[int] | None = None,
        observers: Sequence[Observer] = (),
        explain: bool = False,
        rng: np.random.Generator | None = None,
        availability: Sequence[Outage] = (),
        overrun: str = "now",
    ) -> None:
        if settings is None:
            settings = RunSettings(interval, kill_overrun, float(overrun_grace), explain, overrun)
        self.settings = settings
        self.env = simpy.Environment()
        self.machine = machine
        self.policy = policy
        self.interval = settings.interval
        self.kill_overrun = settings.kill_overrun
        self.overrun_grace = settings.overrun_grace
        self.raise_to_request = settings.overrun == "requested"
        self.explain = settings.explain
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.changes = [0]  # allocation changes on any host (the hosts bump it)
        self.hosts = {h.name: Host(self.env, h, self.changes) for h in machine.hosts}
        self.host_list = list(self.hosts.values())
        self._admission = Admission(machine)  # the machine's rules, shared with `o2ksim trace check`
        unknown = sorted({o.host for o in availability} - set(self.hosts))
        if unknown:
            raise ValueError(f"availability names host(s) the machine lacks: {', '.join(unknown)}")
        self.outages = [OutageRecord(o) for o in availability]
        self.monitor = Monitor()
        self.observers: list[Observer] = [self.monitor, *observers]
        self.hooks = Hooks(self.observers)
        order = sorted(range(len(jobs)), key=lambda i: jobs[i].submit)
        self.jobs: dict[int, Job] = {}
        self._arrival_order: list[Job] = []
        for i in order:
            job = Job(jobs[i])
            if job.id in self.jobs:
                raise ValueError(f"duplicate job id {job.id}")
            self.jobs[job.id] = job
            self._arrival_order.append(job)
        # QUEUED jobs in arrival order (rows of the queue index), a job put back anywhere
        # in it by a requeue (arrival_queue.py: no sort, no dict holes)
        self.queue_index = QueueIndex(self._arrival_order)
        self.queue = ArrivalQueue(self.queue_index.row_of)
        self.arrived: list[Job] = []  # since the last pass
        self.departed: list[Job] = []  # since the last pass
        self.left: list[Job] = []  # left the queue since the last pass (started, killed, rejected)
        watched = set(self.jobs) if watch is None else set(watch) & set(self.jobs)
        self._watched = watched
        self._outstanding = len(watched)
        self._done = self.env.event()
        self.scheduler = Scheduler(self)
        self.stats = RunStats()

    # ----------------------------------------------------------------------------- running
    def run(self) -> RunStats:
        """Simulate until every watched job has finished (or been rejected)."""
        self.policy.bind(self.machine, self.rng)
        self.hooks = Hooks(self.observers)  # observers may have been added after __init__
        t0 = time.perf_counter()
        self.env.process(self.arrivals())
        self.env.process(self.scheduler.process())
        if self.interval is not None:
            self.scheduler.ticker = self.env.process(self.ticker(self.interval))
        for record in self.outages:
            host = self.hosts[record.outage.host]
            self.env.process(host.outage(self.env, record, self.scheduler.stir, self.capacity_back))
        if self._outstanding == 0:
            self._done.succeed()
        # Stop when _done is processed; when no event is left first, env.run returns and the
        # run has stalled (env.run(until=_done) would raise instead).
        self._done.callbacks.append(StopSimulation.callback)
        self.env.run()
        self.scheduler.close()
        if not self._done.triggered:  # nothing more can happen, yet watched jobs remain
            self.stats.stalled = self._outstanding
        if self.scheduler.error is not None:
            raise self.scheduler.error
        self.monitor.close_all(self.env.now, self.jobs)
        self.stats.passes = self.monitor.passes
        self.stats.decisions = self.monitor.decisions
        self.stats.wall_seconds = time.perf_counter() - t0
        self.stats.sim_end = self.env.now
        self.stats.extra.update(self.policy.stats())
        return self.stats

    def stop(self) -> None:
        """End the run at the current instant (every watched job is done, or a policy failed)."""
        if not self._done.triggered:
            self._done.succeed()

    def request_pass(self) -> None:
        """Ask for one scheduling pass at the current instant (requests before it are one pass)."""
        self.scheduler.request()

    def capacity_back(self) -> None:
        """Processors came back at the end of a period down: a pass may start jobs on them."""
        if self.interval is None:
            self.request_pass()
        else:  # with a fixed interval, the next tick sees them (cut a quiet skip short)
            self.scheduler.stir()

    # ----------------------------------------------------------------------------- processes
    def arrivals(self) -> Generator[simpy.Event, Any, None]:
        """The arrivals process: submits the jobs at their submit times (one timeout per time)."""
        env = self.env
        for job in self._arrival_order:
            submit = job.spec.submit
            if submit > env.now:
                yield env.timeout(submit - env.now)
            self.arrive(job)

    def ticker(self, interval: float) -> Generator[simpy.Event, Any, None]:
        """A pass every ``interval`` seconds (the fixed scheduling cycle), until the run ends
        (:meth:`~o2ksim.engine.scheduler.Scheduler.tick`)."""
        scheduler = self.scheduler
        while not self._done.triggered:  # the scheduler skips the ticks of idle and quiet stretches
            try:
                yield self.env.timeout(scheduler.tick(interval))
            except simpy.Interrupt:  # something happened during a quiet skip: back on the grid
                yield self.env.timeout(scheduler.back_on_grid())

    # ----------------------------------------------------------------------------- the books
    def arrive(self, job: Job) -> None:
        """``job`` is submitted: queue it and ask for a pass, or reject it at once."""
        now = self.env.now
        job.move(JobState.QUEUED, now)
        for hook in self.hooks.on_arrival:
            hook(job, now)
        reason = self._never_fits(job)
        if reason:
            self.reject(job, reason)
            return
        self.queue.add(job)
        self.queue_index.add(job)
        self.arrived.append(job)
        if self.interval is None:
            self.request_pass()

    def _never_fits(self, job: Job) -> str:
        return self._admission.reason(job.spec) or self.policy.admit(job) or ""

    def dequeue(self, job: Job) -> None:
        """Take a job out of the queue (it starts, or is rejected or killed)."""
        self.queue.remove(job)
        self.queue_index.remove(job)
        self.left.append(job)

    def host_of(self, job: Job) -> Host:
        """The host ``job`` holds resources on."""
        if job.host is None:
            raise PolicyError(f"job {job.id} holds no host")
        return self.hosts[job.host]

    def segment_over(self, job: Job) -> None:
        """The job process's timeout fired (its work settled): done, or its time limit reached?"""
        now = self.env.now
        scheduler = self.scheduler
        if job.remaining_work <= 0.0 and job.can_finish:
            self.release(job, now)
            self.finish(job, JobState.COMPLETED, now)
            if scheduler.lent:
                scheduler.give_back(job, now)
            return
        if now >= job.time_limit:
            if job.limit_action == "requeue":
                job.move(JobState.QUEUED, now, "trial run over")  # observers see it requeued
                self.release(job, now)
                job.restarts += 1
                job.remaining_work = job.spec.work
                job.time_limit = math.inf
                job.can_finish = True
                job.alloc_procs = 0
                job.host = None
                self._requeue(job)
            else:
                self.release(job, now)
                job.reason = "ran past its requested time (+ grace)"
                self.finish(job, JobState.KILLED, now)
        # else: the end was a hair early (rounding); the process waits for the rest
        if scheduler.lent and job.state is not JobState.RUNNING:
            scheduler.give_back(job, now)

    def release(self, job: Job, now: float) -> None:
        """The books of a job that gives back everything it holds (its process puts it back)."""
        host = self.host_of(job)
        job_id = job.id
        if host.running.pop(job_id, None) is not None:
            host.releases.remove(job)
        else:
            host.preempted.pop(job_id, None)
        host.reclaim(job.alloc_procs, job.alloc_mem)
        job.alloc_mem = 0
        for hook in self.hooks.on_release:
            hook(job, now)
        self.departed.append(job)  # a pass is asked for when the job's process ends

    def _requeue(self, job: Job) -> None:
        """Put a job back in the queue at its arrival-order place."""
        self.queue.add(job)
        self.queue_index.add(job)

    def reject(self, job: Job, reason: str) -> None:
        """``job`` can never run: it ends as rejected."""
        job.reason = reason
        self.finish(job, JobState.REJECTED, self.env.now)

    def finish(self, job: Job, state: JobState, now: float) -> None:
        """``job`` reaches a terminal state; the run stops once every watched job has."""
        if job.state is JobState.RUNNING or job.state is JobState.PREEMPTED:
            job.alloc_procs = 0
        job.move(state, now, job.reason)
        if state is not JobState.REJECTED:
            job.end = now
        for hook in self.hooks.on_end:
            hook(job, now)
        self.scheduler.processes.pop(job.id, None)  # a finished job is never interrupted again
        if job.id in self._watched:
            self._outstanding -= 1
            if self._outstanding == 0:
                self.stop()
