"""The simulation core: SimPy environment, hosts, job processes, the scheduler process.

Shape (the design card):

* each host holds a :class:`simpy.Container` of processors and one of memory
  (:class:`Host`);
* each job is a SimPy process (:meth:`Simulation._job_process`): it holds the
  processors and memory the scheduler dispatched it with and gives them back
  when it ends.  Preemption, resizing, resuming and kills are applied by the
  engine to the job (state, allocation, work done) and then reach the process
  as a plain :class:`simpy.Interrupt` meaning "your job changed": the process
  re-reads the job and waits for its new completion time, for a resume, or
  ends.  A preemption alone needs no interrupt (it only delays the job's end,
  and the resume interrupts the process anyway), which saves a SimPy event
  per preemption.  The process is a :class:`JobProcess`: its first step runs
  when the job starts and its end schedules no event nobody waits for, so a
  job that keeps its processors costs one event, its runtime timeout;
* one scheduler process (:meth:`Simulation._scheduler`) wakes on arrivals,
  departures, policy timers or a fixed interval, hands the policy a
  :class:`~o2ksim.engine.snapshot.Snapshot` and applies the decisions it returns;
* observers (:mod:`o2ksim.engine.monitor`) record what happens.

Per-event economy: about three SimPy events per job (its arrival's timeout,
shared with jobs submitted at the same instant; the pass the arrival asks
for; its runtime timeout).  A pass request that finds nothing fitting
schedules nothing; one that finds something is not checked again when the
pass runs (:meth:`Simulation.request_pass`).  The hosts share a
:class:`ChangeCounter`, so a pass rebuilds the host views only after an
allocation changed, and the snapshot and views are built by
:func:`~o2ksim.engine.snapshot.engine_snapshot` and
:func:`~o2ksim.engine.snapshot.engine_host_view`.

Ties (SPEC §3.1): at one instant every departure and every arrival is handled
before the single scheduling pass, which runs at a priority below SimPy's
normal events.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

import numpy as np
import simpy
from simpy.core import StopSimulation

from o2ksim.engine.contract import PolicyProtocol, RunSettings
from o2ksim.engine.decisions import (
    Decision,
    Kill,
    PolicyError,
    Preempt,
    Reject,
    Reserve,
    Resize,
    Resume,
    Start,
    WakeAt,
)
from o2ksim.engine.monitor import Monitor, Observer
from o2ksim.engine.queue_index import QueueIndex
from o2ksim.engine.releases import ReleaseIndex
from o2ksim.engine.simpy_parts import JobProcess, PassSignal, Pool
from o2ksim.engine.snapshot import HostView, Timer, engine_host_view, engine_snapshot
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import HostSpec, MachineSpec


class ChangeCounter:
    """How many allocation changes the hosts of one machine have seen (the hosts bump it)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class Host:
    """A host: a processor pool and a memory pool (SimPy Containers), and the jobs on it.

    ``changes`` is the machine's :class:`ChangeCounter`, bumped with the host's
    own ``version``: the engine rebuilds the hosts' views for a pass only when
    it moved.
    """

    def __init__(
        self, env: simpy.Environment, spec: HostSpec, changes: ChangeCounter | None = None
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.procs = Pool(env, capacity=spec.procs, init=spec.procs)
        self.memory = Pool(env, capacity=spec.memory, init=spec.memory)
        self.running: dict[int, Job] = {}
        self.preempted: dict[int, Job] = {}
        self.releases = ReleaseIndex()  # running jobs by expected release, for profiles
        self.version = 0  # bumped whenever an allocation on the host changes
        self.changes = changes if changes is not None else ChangeCounter()
        self._view: HostView | None = None  # the last view, valid while ``version`` is unchanged

    @property
    def free_procs(self) -> int:
        return cast(int, self.procs.level)

    @property
    def free_mem(self) -> float:
        return self.memory.level

    def take(self, procs: int, mem: int) -> None:
        """Take resources for a job; the caller has checked they are free."""
        self.version += 1
        self.changes.value += 1
        if procs > self.procs._level:
            raise PolicyError(f"host {self.name}: processors over-committed")
        if mem and not self.memory.take(mem):
            raise PolicyError(f"host {self.name}: memory over-committed")
        self.procs._level -= procs

    def give(self, procs: int, mem: int) -> None:
        """Give a job's resources back."""
        self.version += 1
        self.changes.value += 1
        self.procs.give(procs)
        if mem:
            self.memory.give(mem)

    def view(self) -> HostView:
        """The host as a policy sees it; the same object while no allocation changed.

        Every change of the running or preempted jobs goes with a change of the
        free processors or memory (:meth:`take`/:meth:`give`), which bumps
        ``version``; the job collections in the view are live.
        """
        view = self._view
        if view is None or view.version != self.version:
            view = self._view = engine_host_view(
                self.spec,
                cast(int, self.procs._level),
                self.memory._level,
                self.running.values(),
                self.preempted.values(),
                self.version,
                self.releases,
                self.name,
            )
        return view


@dataclass
class RunStats:
    """Counters and timings of one run."""

    passes: int = 0
    decisions: int = 0
    wall_seconds: float = 0.0
    sim_end: float = 0.0
    stalled: int = 0  # analysed jobs left unfinished because nothing more could happen
    skipped_passes: int = 0  # passes skipped because no waiting job fitted (contract.py)
    extra: dict[str, Any] = field(default_factory=dict)


class Simulation:
    """One run of one policy over one workload on one machine.

    ``jobs`` are the submitted jobs (any order; they are released in submit
    order, ties in the given order).  ``policy`` follows the
    :class:`~o2ksim.engine.contract.PolicyProtocol`.  ``settings`` (a
    :class:`~o2ksim.engine.contract.RunSettings`) holds the scheduling
    interval, the overrun kill and the explain switch; the keyword arguments
    ``interval``, ``kill_overrun``, ``overrun_grace`` and ``explain`` build one
    when ``settings`` is not given.  ``watch`` is the set of job ids the run
    must finish (the analysis window); ``None`` = all.  ``rng`` is the run's
    only source of randomness, handed to the policy.
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
    ) -> None:
        if settings is None:
            settings = RunSettings(interval, kill_overrun, float(overrun_grace), explain)
        self.settings = settings
        self.env = simpy.Environment()
        self.machine = machine
        self.policy = policy
        self.interval = settings.interval
        self.kill_overrun = settings.kill_overrun
        self.overrun_grace = settings.overrun_grace
        self.explain = settings.explain
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self._changes = ChangeCounter()  # allocation changes on any host
        self.hosts = {h.name: Host(self.env, h, self._changes) for h in machine.hosts}
        self._host_list = list(self.hosts.values())
        self._max_procs = max(h.procs for h in machine.hosts)
        self.monitor = Monitor()
        self.observers: list[Observer] = [self.monitor, *observers]
        self._on_arrival: list[Any] = []  # filled by run(): see _hooks
        self._on_allocation: list[Any] = []
        self._on_release: list[Any] = []
        self._on_end: list[Any] = []
        self._on_decision: list[Any] = []
        self._on_pass: list[Any] = []
        self._fits_a_host: dict[tuple[int, int], bool] = {}  # (procs, mem) -> some host holds it
        order = sorted(range(len(jobs)), key=lambda i: jobs[i].submit)
        self.jobs: dict[int, Job] = {}
        self._arrival_order: list[Job] = []
        for i in order:
            job = Job(jobs[i])
            if job.id in self.jobs:
                raise ValueError(f"duplicate job id {job.id}")
            self.jobs[job.id] = job
            self._arrival_order.append(job)
        self.queue: dict[int, Job] = {}  # QUEUED jobs in arrival order
        self.queue_index = QueueIndex(self._arrival_order)
        self._processes: dict[int, simpy.Process] = {}
        self._lent: dict[int, tuple[Job, ...]] = {}  # run -> jobs it preempted (Start.resumes)
        watched = set(self.jobs) if watch is None else set(watch) & set(self.jobs)
        self._watched = watched
        self._outstanding = len(watched)
        self._done = self.env.event()
        self._signal = PassSignal(self.env)
        self._pass_pending = False
        self._pass_checked = False  # the pending pass was requested with something fitting
        self._skip_idle = False  # the policy lets the engine skip passes where nothing fits
        self._skip_early = False  # ... and drop such requests at once (event-driven runs)
        self._has_pending_work: Callable[[bool], bool] = _no_pending_work
        self._in_pass = False
        self._views: tuple[HostView, ...] = ()  # the hosts as the last pass saw them
        self._views_by_name: Mapping[str, HostView] = MappingProxyType({})
        self._views_changes = -1  # the machine's change count they were built at
        self._due: list[Timer] = []
        self._arrived: list[Job] = []
        self._departed: list[Job] = []
        self.stats = RunStats()
        self._error: BaseException | None = None

    # ----------------------------------------------------------------------------- running
    def run(self) -> RunStats:
        """Simulate until every watched job has finished (or been rejected)."""
        self.policy.bind(self.machine, self.rng)
        # the hooks some observer really implements, looked up once (most are no-ops)
        self._on_arrival = _hooks(self.observers, "on_arrival")
        self._on_allocation = _hooks(self.observers, "on_allocation")
        self._on_release = _hooks(self.observers, "on_release")
        self._on_end = _hooks(self.observers, "on_end")
        self._on_decision = _hooks(self.observers, "on_decision")
        self._on_pass = _hooks(self.observers, "on_pass")
        self._skip_idle = not self.explain and self.policy.idle_when_nothing_fits()
        self._skip_early = self._skip_idle and self.interval is None
        if self._skip_idle:
            self._has_pending_work = self.policy.has_pending_work
        t0 = time.perf_counter()
        self.env.process(self._arrivals())
        self.env.process(self._scheduler())
        if self.interval is not None:
            self.env.process(self._ticker())
        if self._outstanding == 0:
            self._done.succeed()
        self._done.callbacks.append(StopSimulation.callback)
        self.env.run()  # returns when _done fires, or when no event is left
        if not self._done.triggered:  # nothing more can happen, yet watched jobs remain
            self.stats.stalled = self._outstanding
        if self._error is not None:
            raise self._error
        self.monitor.close_all(self.env.now, self.jobs)
        self.stats.passes = self.monitor.passes
        self.stats.decisions = self.monitor.decisions
        self.stats.wall_seconds = time.perf_counter() - t0
        self.stats.sim_end = self.env.now
        self.stats.extra["skipped_passes"] = self.stats.skipped_passes
        self.stats.extra.update(self.policy.stats())
        return self.stats

    def request_pass(self) -> None:
        """Ask for one scheduling pass at the current instant (coalesced).

        Outside a pass and without a fixed interval, a request for a policy
        that may be skipped when nothing fits (:mod:`~o2ksim.engine.contract`)
        is dropped at once if nothing fits now and the policy has no pending
        work: until the pass would run, only arrivals, departures, a job put
        back in the queue or a preempted job left to the policy at this
        instant can make something fit or give the policy work, and each of
        them asks again.  Conversely, once a request found that something fits,
        only more can fit until the pass runs (arrivals, departures and timers
        free processors or add jobs), so the scheduler does not check again;
        the one exception, a resume outside a pass (:meth:`_give_back`), takes
        processors and makes it check.
        """
        if self._pass_pending:
            return
        if self._skip_early and not self._in_pass and not self._due:
            if not self._nothing_fits():
                # Until the pass only more can fit (the events above), except where a
                # resume outside a pass takes processors (_give_back clears this): the
                # scheduler need not check again.
                self._pass_checked = True
            elif not self._has_pending_work(bool(self._arrived)):
                self.stats.skipped_passes += 1
                return
        self._pass_pending = True
        self._signal.fire()

    # ----------------------------------------------------------------------------- processes
    def _arrivals(self):
        """Release the jobs at their submit times: one timeout per distinct submit time."""
        env = self.env
        arrive = self._arrive
        for job in self._arrival_order:
            submit = job.spec.submit
            if submit > env.now:
                yield env.timeout(submit - env.now)
            arrive(job)

    def _arrive(self, job: Job) -> None:
        now = self.env.now
        job.move(JobState.QUEUED, now)
        for hook in self._on_arrival:
            hook(job, now)
        reason = self._never_fits(job)
        if reason:
            self._reject(job, reason)
            return
        self.queue[job.id] = job
        self.queue_index.add(job)
        self._arrived.append(job)
        if self.interval is None and not self._pass_pending:
            self.request_pass()

    def _never_fits(self, job: Job) -> str:
        spec = job.spec
        if spec.submit < 0:
            return "submit time unknown"
        if spec.procs <= 0:
            return "requested processors unknown or not positive"
        if not (spec.run_time >= 0):
            return "actual runtime unknown"
        if spec.procs > self._max_procs:
            return f"requests {spec.procs} processors; the largest host has {self._max_procs}"
        key = (spec.procs, spec.mem)
        fits = self._fits_a_host.get(key)
        if fits is None:
            fits = any(spec.procs <= h.procs and spec.mem <= h.memory for h in self.machine.hosts)
            self._fits_a_host[key] = fits
        if not fits:
            return f"requests {spec.mem / 1024:.0f} MB; no host with {spec.procs} processors has that much memory"
        return self.policy.admit(job) or ""

    def _scheduler(self):
        while True:
            yield self._signal
            self._signal = PassSignal(self.env)
            self._pass_pending = False
            checked, self._pass_checked = self._pass_checked, False
            if (
                self._skip_idle and not checked and not self._due
                and not self._has_pending_work(bool(self._arrived))
                and self._nothing_fits()
            ):  # fmt: skip
                self.stats.skipped_passes += 1
                continue
            self._in_pass = True
            try:
                self._run_pass()
            except Exception as exc:  # re-raised unchanged by run(), not rebuilt by SimPy
                self._error = exc
                if not self._done.triggered:
                    self._done.succeed()
                return
            self._in_pass = False

    def _nothing_fits(self) -> bool:
        """No waiting job fits the free processors and memory of any host now (O(hosts)).

        Conservative: it compares each host with the smallest processor request
        and the smallest memory request in the queue, which may belong to two
        different jobs, so it can answer "something may fit" when nothing does,
        never the other way round.
        """
        index = self.queue_index
        procs = index.smallest_procs()
        mem = None  # looked up only for a host with enough processors
        for host in self._host_list:
            if host.procs._level >= procs:
                if mem is None:
                    mem = index.smallest_mem()
                if host.memory._level >= mem:
                    return False
        return True

    def _ticker(self):
        env = self.env
        while not self._done.triggered:
            self.request_pass()
            yield env.timeout(self.interval)

    def _job_process(self, job: Job):
        """Run ``job`` until it ends; an interrupt means the engine changed the job (re-read it)."""
        env = self.env
        running, preempted = JobState.RUNNING, JobState.PREEMPTED
        while True:
            state = job.state
            if state is running:
                until = job.time_limit
                if job.can_finish:
                    finish = job.segment_start + job.remaining_work / job.alloc_procs
                    if not until < finish:  # the earlier of the two (as ``min``)
                        until = finish
                delay = until - env.now
                try:
                    yield env.timeout(delay if delay > 0.0 else 0.0)
                except simpy.Interrupt:
                    continue
                if job.state is preempted:
                    continue  # preempted (without an interrupt) before this segment's end came
                self._segment_over(job)
            elif state is preempted:
                try:
                    yield env.event()  # only an interrupt (resume or kill) wakes it
                except simpy.Interrupt:
                    continue
            else:
                return

    # ----------------------------------------------------------------------------- a pass
    def _run_pass(self) -> None:
        now = self.env.now
        timers: tuple[Timer, ...] = ()
        arrived: tuple[Job, ...] = ()
        departed: tuple[Job, ...] = ()
        if self._due:
            timers, self._due = tuple(self._due), []
        if self._arrived:
            arrived, self._arrived = tuple(self._arrived), []
        if self._departed:
            departed, self._departed = tuple(self._departed), []
        changes = self._changes.value
        if changes != self._views_changes:
            views = tuple([h.view() for h in self._host_list])
            self._views = views
            self._views_by_name = MappingProxyType({v.name: v for v in views})
            self._views_changes = changes
        snap = engine_snapshot(
            now,
            self.queue.values(),
            self._views,
            self._views_by_name,
            self.machine,
            timers,
            arrived,
            departed,
            self.explain,
            self.interval,
            self.queue_index,
        )
        decisions = self.policy.schedule(snap)
        n = 0
        start = None if self._on_decision else self._start  # Start needs no _apply dispatch
        for decision in decisions:
            if start is not None and type(decision) is Start:
                start(decision, now)
            else:
                self._apply(decision, now)
            n += 1
        for hook in self._on_pass:
            hook(now, n)

    def _apply(self, d: Decision, now: float) -> None:
        for hook in self._on_decision:
            hook(now, d)
        if isinstance(d, Start):
            self._start(d, now)
        elif isinstance(d, Preempt):
            self._preempt(d.job, now)
        elif isinstance(d, Resume):
            self._resume(d.job, d.procs, now)
        elif isinstance(d, Resize):
            self._resize(d.job, d.procs, now)
        elif isinstance(d, Kill):
            self._kill(d.job, d.reason or "killed by the policy", now)
        elif isinstance(d, Reject):
            if d.job.state is not JobState.QUEUED:
                raise PolicyError(f"job {d.job.id}: only a queued job can be rejected")
            del self.queue[d.job.id]
            self.queue_index.remove(d.job)
            self._reject(d.job, d.reason or "rejected by the policy")
        elif isinstance(d, WakeAt):
            self._wake_at(d)
        elif isinstance(d, Reserve):
            pass
        else:
            raise PolicyError(f"unknown decision {d!r}")

    # ----------------------------------------------------------------------------- actions
    def _start(self, d: Start, now: float) -> None:
        job = d.job
        if job.state is not JobState.QUEUED:
            raise PolicyError(f"job {job.id}: cannot start a job that is {job.state.value}")
        host = self.hosts.get(d.host)
        if host is None:
            raise PolicyError(f"job {job.id}: unknown host {d.host!r}")
        spec = job.spec
        job_id = spec.job_id
        procs = spec.procs if d.procs is None else d.procs
        mem = spec.mem if d.mem is None else d.mem
        if procs > spec.procs:
            self._check_cap(job, procs, now, "start")
        if procs <= 0 or procs > host.procs._level or mem > host.memory._level:
            raise PolicyError(
                f"job {job_id} at t={now:g}: needs {procs} procs / {mem} KB on {host.name}, "
                f"free {host.free_procs} procs / {host.free_mem} KB"
            )
        host.take(procs, mem)
        del self.queue[job_id]
        self.queue_index.remove(job)
        job.host = host.name
        job.alloc_procs = procs
        job.alloc_mem = mem
        if procs < spec.procs:
            job.reduced = True
        if job.first_start != job.first_start:  # NaN: the first start
            job.first_start = now
        job.last_start = now
        job.segment_start = now
        if d.time_limit is not None:
            job.time_limit = now + d.time_limit
            job.limit_action = d.on_limit
            # a trial run (T§3.2.2) succeeds only if the job's peak memory fits what it was given
            job.can_finish = not (d.on_limit == "requeue" and job.spec.used_mem > mem)
        elif self.kill_overrun:
            job.time_limit = now + spec.req_time + self.overrun_grace
            job.limit_action = "kill"
        else:
            job.time_limit = math.inf
        job.state = JobState.RUNNING  # QUEUED -> RUNNING (checked above)
        host.running[job_id] = job
        host.releases.add(job)
        for hook in self._on_allocation:
            hook(job, now)
        self._processes[job_id] = JobProcess(self.env, self._job_process(job))
        if d.resumes:
            for v in d.resumes:
                if v.state is not JobState.PREEMPTED or v.host != host.name:
                    raise PolicyError(
                        f"job {job_id}: Start.resumes lists job {v.id}, which is not "
                        f"preempted on {host.name}"
                    )
            self._lent[job_id] = tuple(d.resumes)

    @staticmethod
    def _check_cap(job: Job, procs: int, now: float, action: str) -> None:
        """A job never holds more processors than it requested (it would finish early)."""
        if procs > job.spec.procs:
            raise PolicyError(
                f"job {job.id} at t={now:g}: {action} on {procs} processors, "
                f"but it requested only {job.spec.procs}"
            )

    def _host_of(self, job: Job) -> Host:
        """The host ``job`` holds resources on."""
        if job.host is None:
            raise PolicyError(f"job {job.id} holds no host")
        return self.hosts[job.host]

    def _settle(self, job: Job, now: float) -> None:
        """Book the work done in the current segment."""
        job.remaining_work -= (now - job.segment_start) * job.alloc_procs
        if job.remaining_work < 1e-9 * max(1.0, job.spec.work):
            job.remaining_work = 0.0
        job.segment_start = now

    def _preempt(self, job: Job, now: float) -> None:
        if job.state is not JobState.RUNNING:
            raise PolicyError(f"job {job.id}: cannot preempt a job that is {job.state.value}")
        host = self._host_of(job)
        self._settle(job, now)
        host.releases.remove(job)
        host.give(job.alloc_procs, 0)
        job.resume_procs = job.alloc_procs
        job.alloc_procs = 0
        job.preemptions += 1
        job.move(JobState.PREEMPTED, now)
        del host.running[job.id]
        host.preempted[job.id] = job
        for hook in self._on_allocation:
            hook(job, now)
        # No interrupt: the job's process keeps waiting for the end of the segment it was in
        # (its pending timeout, never earlier than the job's new end) and the resume
        # interrupts it; should that timeout come first, the process sees PREEMPTED and parks.

    def _resume(self, job: Job, procs: int | None, now: float) -> None:
        if job.state is not JobState.PREEMPTED:
            raise PolicyError(f"job {job.id}: cannot resume a job that is {job.state.value}")
        host = self._host_of(job)
        procs = job.resume_procs if procs is None else procs
        self._check_cap(job, procs, now, "resume")
        if procs <= 0:
            raise PolicyError(f"job {job.id} at t={now:g}: resume on {procs} processors")
        if procs > host.free_procs:
            raise PolicyError(f"job {job.id}: resume needs {procs} procs, {host.free_procs} free")
        host.take(procs, 0)
        job.alloc_procs = procs
        job.resume_procs = 0
        if procs < job.spec.procs:
            job.reduced = True
        job.segment_start = now
        job.last_start = now
        job.move(JobState.RUNNING, now)
        del host.preempted[job.id]
        host.running[job.id] = job
        host.releases.add(job)
        for hook in self._on_allocation:
            hook(job, now)
        self._processes[job.id].interrupt()

    def _resize(self, job: Job, procs: int, now: float) -> None:
        if job.state is not JobState.RUNNING:
            raise PolicyError(f"job {job.id}: cannot resize a job that is {job.state.value}")
        if procs <= 0:
            raise PolicyError(f"job {job.id}: resize to {procs} processors")
        self._check_cap(job, procs, now, "resize")
        if procs == job.alloc_procs:
            return
        host = self._host_of(job)
        delta = procs - job.alloc_procs
        if delta > host.free_procs:
            raise PolicyError(
                f"job {job.id}: resize needs {delta} more procs, {host.free_procs} free"
            )
        self._settle(job, now)
        host.releases.remove(job)
        if delta > 0:
            host.take(delta, 0)
        else:
            host.give(-delta, 0)
        job.alloc_procs = procs
        job.resizes += 1
        host.releases.add(job)
        for hook in self._on_allocation:
            hook(job, now)
        self._processes[job.id].interrupt()

    def _kill(self, job: Job, reason: str, now: float) -> None:
        if job.state is JobState.QUEUED:
            del self.queue[job.id]
            self.queue_index.remove(job)
        elif job.state in (JobState.RUNNING, JobState.PREEMPTED):
            if job.state is JobState.RUNNING:
                self._settle(job, now)
            self._release(job, now)
            self._processes[job.id].interrupt()
        else:
            raise PolicyError(f"job {job.id}: cannot kill a job that is {job.state.value}")
        job.reason = reason
        self._finish(job, JobState.KILLED, now)
        if self._lent:
            self._give_back(job, now)

    def _reject(self, job: Job, reason: str) -> None:
        job.reason = reason
        self._finish(job, JobState.REJECTED, self.env.now)

    def _wake_at(self, d: WakeAt) -> None:
        now = self.env.now
        timer = Timer(max(d.time, now), d.host, d.tag)

        def due(_event: simpy.Event) -> None:
            self._due.append(timer)
            self.request_pass()

        self.env.timeout(timer.time - now).callbacks.append(due)

    # ----------------------------------------------------------------------------- endings
    def _segment_over(self, job: Job) -> None:
        now = self.env.now
        self._settle(job, now)
        if job.remaining_work <= 0.0 and job.can_finish:
            self._release(job, now)
            self._finish(job, JobState.COMPLETED, now)
            if self._lent:
                self._give_back(job, now)
            return
        if now >= job.time_limit:
            if job.limit_action == "requeue":
                job.move(JobState.QUEUED, now, "trial run over")  # observers see it requeued
                self._release(job, now)
                job.restarts += 1
                job.remaining_work = job.spec.work
                job.time_limit = math.inf
                job.can_finish = True
                job.alloc_procs = 0
                job.host = None
                self._requeue(job)
            else:
                self._release(job, now)
                job.reason = "ran past its requested time (+ grace)"
                self._finish(job, JobState.KILLED, now)
        # else: the segment ended early because the rate changed; the process loops
        if self._lent and job.state is not JobState.RUNNING:
            self._give_back(job, now)

    def _give_back(self, run: Job, now: float) -> None:
        """Resume the jobs ``run`` preempted (``Start.resumes``) now that it has ended."""
        lent = self._lent.pop(run.id, None)
        if lent is None:
            return
        what = "trial" if run.limit_action == "requeue" else "run"
        for v in lent:
            host = self.hosts[v.host or ""]
            if v.state is not JobState.PREEMPTED:
                continue  # gone
            if v.resume_procs > host.free_procs:  # not free: the policy decides, in a pass
                if self.interval is None:
                    self.request_pass()
                continue
            d = Resume(v, note=f"the {what} that preempted it has ended (J{run.id}); "
                               f"back on its {v.resume_procs} processors")  # fmt: skip
            for obs in self.observers[1:]:
                obs.on_decision(now, d)
            self._pass_checked = False  # it takes processors outside a pass (request_pass)
            self._resume(v, None, now)

    def _release(self, job: Job, now: float) -> None:
        host = self.hosts[job.host] if job.host is not None else self._host_of(job)
        job_id = job.id
        if host.running.pop(job_id, None) is not None:
            host.releases.remove(job)
        else:
            host.preempted.pop(job_id, None)
        host.give(job.alloc_procs, job.alloc_mem)
        job.alloc_mem = 0
        for hook in self._on_release:
            hook(job, now)
        self._departed.append(job)
        if self.interval is None and not self._pass_pending:
            self.request_pass()

    def _requeue(self, job: Job) -> None:
        """Put a job back in the queue at its arrival-order place."""
        self.queue[job.id] = job
        self.queue_index.add(job)
        if len(self.queue) > 1:
            row = self.queue_index.row_of
            ordered = sorted(self.queue.values(), key=lambda j: row[j.id])
            self.queue = {j.id: j for j in ordered}
        if self.interval is None:  # the request made as it released may have been skipped
            self.request_pass()  # (it was not in the queue yet): ask again now that it is

    def _finish(self, job: Job, state: JobState, now: float) -> None:
        if job.state is JobState.RUNNING or job.state is JobState.PREEMPTED:
            job.alloc_procs = 0
        job.move(state, now, job.reason)
        if state is not JobState.REJECTED:
            job.end = now
        for hook in self._on_end:
            hook(job, now)
        self._processes.pop(job.id, None)  # a finished job is never interrupted again
        if job.id in self._watched:
            self._outstanding -= 1
            if self._outstanding == 0 and not self._done.triggered:
                self._done.succeed()


def _no_pending_work(arrived: bool) -> bool:
    """The pending-work answer of a policy that gets every pass (never consulted)."""
    return False


def _hooks(observers: Sequence[Observer], name: str) -> list[Any]:
    """The bound ``name`` hooks of the observers that override :class:`Observer`'s no-op."""
    default = getattr(Observer, name)
    return [getattr(obs, name) for obs in observers if getattr(type(obs), name, default) is not default]
