"""The scheduler process: when passes happen, and how a pass's decisions are applied.

One SimPy process (:meth:`Scheduler.process`) sleeps until something asks for
a pass (:meth:`~o2ksim.engine.core.Simulation.request_pass`: an arrival, a
departure, a policy timer, the fixed interval), hands the policy a
:class:`~o2ksim.engine.snapshot.Snapshot` and applies the decisions it
returns, in order (:meth:`Scheduler.apply`):

* ``Start`` grants the job its resources on the host's ledger
  (:meth:`~o2ksim.engine.hosts.Host.grant`, which refuses an over-commit) and
  creates its SimPy process (:func:`~o2ksim.engine.job_process.job_process`),
  which takes them from the Containers;
* ``Preempt``, ``Resume``, ``Resize`` and ``Kill`` update the books and
  interrupt the job's process with a :class:`~o2ksim.engine.job_process.Preempted`,
  :class:`~o2ksim.engine.job_process.Resumed`,
  :class:`~o2ksim.engine.job_process.Resized` or
  :class:`~o2ksim.engine.job_process.Killed` cause;
* ``WakeAt`` is a :func:`simpy.Environment.timeout` that asks for a pass when
  it fires; ``Reject`` and ``Reserve`` touch only the books.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import simpy

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
from o2ksim.engine.job_process import Cause, Killed, Preempted, Resized, Resumed, job_process
from o2ksim.engine.snapshot import HostView, Snapshot, Timer
from o2ksim.engine.ticks import exact_tick, last_exact_tick, ticks_to
from o2ksim.jobs import Job, JobState

ASK_TICKS = 2  # ticks a skip must be able to pass before the policy is asked (the cost of asking)

if TYPE_CHECKING:
    from o2ksim.engine.core import Simulation
    from o2ksim.engine.hosts import Host


class Scheduler:
    """The scheduler of one :class:`~o2ksim.engine.core.Simulation`: its process and its actions."""

    #: Skip the ticks of idle and quiet stretches (:meth:`tick`).  Switched off only by
    #: tests, whose oracle is the same run ticking through every interval.
    skip_ticks: bool = True

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.env = sim.env
        self.wakeup = sim.env.event()  # succeeded by the first request for the next pass
        self.pending = False  # a pass has been asked for and has not run yet
        self.processes: dict[int, simpy.Process] = {}  # job id -> the process of its current run
        self.lent: dict[int, tuple[Job, ...]] = {}  # run -> the jobs it preempted (Start.resumes)
        self.due: list[Timer] = []  # WakeAt timers that fired since the last pass
        self.error: BaseException | None = None  # a policy's error, re-raised by Simulation.run
        self._views: tuple[HostView, ...] = ()  # the hosts as the last pass saw them
        self._views_by_name: Mapping[str, HostView] = MappingProxyType({})
        self._views_changes = -1  # the machine's change count they were built at
        self._next_arrival = 0  # arrival-order position of the first job not yet submitted
        self.skipped_ticks = 0  # interval ticks skipped while idle or quiet (:meth:`tick`)
        self.ticker: simpy.Process | None = None  # the interval's ticker (Simulation.ticker)
        self.quiet_until = -math.inf  # the last pass decided nothing; the policy's guarantee
        self._quiet_snap: Snapshot | None = None  # that pass's snapshot, until it is asked
        self._quiet_changes = -1  # the machine's change count at that pass
        self._skip: tuple[float, int, float] | None = None  # a quiet skip: first tick, ticks, interval
        self._skip_cut: tuple[float, int, float] = (0.0, 0, 1.0)  # the skip :meth:`stir` cut short

    def request(self) -> None:
        """Ask for one pass at the current instant; requests before it runs are one pass."""
        if not self.pending:
            self.pending = True
            self.wakeup.succeed()
        self.stir()

    def tick(self, interval: float) -> float:
        """One tick of the fixed interval: ask for a pass; return the delay to the next tick.

        A pass is skipped, with the ticks after it up to a *horizon*, when it
        would see the same snapshot as the last pass (but for the time) and
        the policy has said that such a pass decides nothing
        (:meth:`_horizon`); the delay returned is then to the first tick at or
        after the horizon.  Two cases:

        * the machine is idle -- nothing waits, runs or is preempted, and no
          arrival, departure, timer or request is pending for a pass: every
          pass until the next arrival sees an empty snapshot;
        * the last pass was *quiet* -- it decided nothing, and nothing has
          happened since (no arrival, departure, timer, request or change of
          any host's resources): every pass on that state decides nothing
          until the policy's :meth:`~o2ksim.policies.base.Policy.quiet_until`
          or the next arrival, whichever comes first.  Anything that happens
          before then (a job ending early, a timer, a period of processors
          down) cuts the skip short (:meth:`stir`): the ticker goes back on the
          grid at the first tick at or after that instant, where a pass runs.

        Either way a quiet or idle stretch costs one timeout instead of one
        pass per interval.  The ticks stay on the grid ``k * interval`` of
        ticking through, exactly: a skip is taken only while every tick up to
        its end is exactly representable (:func:`exact_tick`), where adding
        ``interval`` k times and adding ``k * interval`` once give the same
        float.  :attr:`skip_ticks` switched off (tests only) ticks through.
        """
        now = self.env.now
        self._skip = None  # the last skip, if any, has run its course
        horizon = now if self.pending or not self.skip_ticks else self._horizon(now, interval)
        k = ticks_to(now, horizon, interval)
        if k == 0 or not exact_tick(now + k * interval, interval):
            self.request()
            return interval
        self.skipped_ticks += k  # this tick and the k - 1 before the next one
        if not self._idle():  # a quiet skip: what happens before its end cuts it short
            self._skip = (now, k, interval)
        return k * interval

    def _horizon(self, now: float, interval: float) -> float:
        """The time before which every tick's pass would decide nothing (``now``: none).

        Idle machine: the next submit time.  Quiet last pass with nothing
        happened since: the earlier of the next submit time and the policy's
        guarantee (capped at the last exactly representable tick).  The policy
        is asked once, on that pass's snapshot (the state has not changed), and
        only when the next submit leaves :data:`ASK_TICKS` ticks or more to
        skip: a weighted order's guarantee costs a ranking of the queue, more
        than the few early-exit passes before an imminent arrival.
        """
        if self._idle():
            nxt = self._next_submit()
            return now if math.isinf(nxt) else nxt
        sim = self.sim
        if (
            self.quiet_until <= now or sim.arrived or sim.departed or self.due
            or sim.changes[0] != self._quiet_changes
        ):  # fmt: skip
            return now
        cap = min(self._next_submit(), last_exact_tick(interval))
        if self._quiet_snap is not None:
            if cap < now + ASK_TICKS * interval:
                return now
            self.quiet_until = sim.policy.quiet_until(self._quiet_snap)
            self._quiet_snap = None
        return min(cap, self.quiet_until)

    def stir(self) -> None:
        """Something happened that a pass must see: cut a quiet skip short (:meth:`tick`).

        Called at a departure, a policy timer or any request for a pass, and at
        the start and end of a period of processors down.  The ticker is
        interrupted; it then waits for :meth:`back_on_grid`.  A ticker that has
        stopped (the run ended at this instant: the last departures stir after
        it) has nothing left to cut short.
        """
        if self._skip is not None:
            self._skip_cut = self._skip
            self._skip = None
            if self.ticker is not None and self.ticker.is_alive:
                self.ticker.interrupt("stirred")

    def back_on_grid(self) -> float:
        """After :meth:`stir`: the delay to the first tick of the grid at or after now.

        The ticks from the skip's first one up to that one are the ones skipped;
        the others are given back to :attr:`skipped_ticks`.  The delay ``g -
        now`` is exact and lands on ``g`` exactly: the skip began at a tick
        ``t0 >= interval`` (a quiet skip follows a pass at an earlier tick), so
        ``t0 <= now <= g < now + interval <= 2 * now``, where the subtraction
        of two floats within a factor of two is exact (Sterbenz).
        """
        t0, k, interval = self._skip_cut
        now = self.env.now
        j = ticks_to(t0, now, interval)
        self.skipped_ticks -= k - j
        return (t0 + j * interval) - now

    def close(self) -> None:
        """The run has ended: a quiet skip still under way skipped only the ticks before now."""
        if self._skip is not None:
            t0, k, interval = self._skip
            self.skipped_ticks -= k - ticks_to(t0, self.env.now, interval)
            self._skip = None

    def _idle(self) -> bool:
        """Nothing waits, runs or is preempted, and no event is waiting for a pass."""
        sim = self.sim
        if sim.queue or sim.arrived or sim.departed or self.due:
            return False
        return not any(h.running or h.preempted for h in sim.host_list)

    def _next_submit(self) -> float:
        """Submit time of the next job not yet submitted (``inf`` when every job has been)."""
        jobs = self.sim.queue_index.jobs  # every job of the run, in arrival order
        i = self._next_arrival
        while i < len(jobs) and jobs[i].state is not JobState.PENDING:
            i += 1
        self._next_arrival = i
        return jobs[i].spec.submit if i < len(jobs) else math.inf

    def departure(self, _process: simpy.Event) -> None:
        """A job's process has ended (completed, killed, or a trial put back in the queue).

        The request is made here, when the process's end event is processed,
        rather than when the job's books close a moment earlier: by then the
        processors the process put back are in the Container and the instant is
        usually quiet, so the pass needs no extra wait (:meth:`process`).  With
        a fixed interval no pass is asked for (the next tick sees the
        departure), but a quiet skip is cut short (:meth:`stir`).
        """
        if self.sim.interval is None:
            self.request()
        else:
            self.stir()

    def process(self) -> Generator[simpy.Event, Any, None]:
        """The scheduler's SimPy process: one pass per wake-up, after the instant is quiet.

        The tie rule (SPEC §3.1): at one instant, every job that ends and every
        arrival is handled before the single pass.  A request wakes this
        process at once, but the pass waits while anything else is scheduled
        at this instant (``env.peek() == env.now``): each ``timeout(0)`` puts
        the scheduler behind every event scheduled so far at this instant,
        including those the ones before it schedule in turn (a job's end, the
        resources its process puts back, an arrival, a timer).  Only public
        SimPy calls are used; a Timeout at the instant is the one extra event
        the rule costs, and only when the instant is not already quiet.
        """
        env = self.env
        sim = self.sim
        while True:
            yield self.wakeup
            while env.peek() == env.now:
                yield env.timeout(0)
            self.wakeup = env.event()
            self.pending = False  # a request from now on asks for another pass
            try:
                self.run_pass()
            except Exception as exc:  # re-raised unchanged by Simulation.run
                self.error = exc
                sim.stop()
                return

    # ----------------------------------------------------------------------------- a pass
    def run_pass(self) -> None:
        """Build the snapshot, ask the policy, apply its decisions in order."""
        sim = self.sim
        now = self.env.now
        timers, self.due = tuple(self.due), []
        arrived, sim.arrived = tuple(sim.arrived), []
        departed, sim.departed = tuple(sim.departed), []
        left, sim.left = tuple(sim.left), []
        changes = sim.changes[0]
        if changes != self._views_changes:  # the views are rebuilt only after an allocation changed
            views = tuple([h.view() for h in sim.host_list])
            self._views = views
            self._views_by_name = MappingProxyType({v.name: v for v in views})
            self._views_changes = changes
        snap = Snapshot(
            now=now,
            queue=sim.queue,
            hosts=self._views,
            host_by_name=self._views_by_name,
            machine=sim.machine,
            timers=timers,
            arrived=arrived,
            departed=departed,
            left=left,
            explain=sim.explain,
            interval=sim.interval,
            queue_index=sim.queue_index,
        )
        n = 0
        for decision in sim.policy.schedule(snap):
            self.apply(decision, now)
            n += 1
        if n == 0 and sim.interval is not None and not sim.explain and self.skip_ticks:
            # a quiet pass: until when would a pass on the same state decide nothing too?
            # (asked at the next tick that could skip: _horizon)
            self.quiet_until, self._quiet_snap = math.inf, snap
            self._quiet_changes = sim.changes[0]
        else:
            self.quiet_until, self._quiet_snap = -math.inf, None
        for hook in sim.hooks.on_pass:
            hook(now, n)

    def apply(self, d: Decision, now: float) -> None:
        """Apply one decision (validated: an impossible one raises :class:`PolicyError`)."""
        for hook in self.sim.hooks.on_decision:
            hook(now, d)
        if isinstance(d, Start):
            self.start(d, now)
        elif isinstance(d, Preempt):
            self.preempt(d.job, now)
        elif isinstance(d, Resume):
            self.resume(d.job, d.procs, now)
        elif isinstance(d, Resize):
            self.resize(d.job, d.procs, now)
        elif isinstance(d, Kill):
            self.kill(d.job, d.reason or "killed by the policy", now)
        elif isinstance(d, Reject):
            if d.job.state is not JobState.QUEUED:
                raise PolicyError(f"job {d.job.id}: only a queued job can be rejected")
            self.sim.dequeue(d.job)
            self.sim.reject(d.job, d.reason or "rejected by the policy")
        elif isinstance(d, WakeAt):
            self.wake_at(d, now)
        elif isinstance(d, Reserve):
            pass
        else:
            raise PolicyError(f"unknown decision {d!r}")

    # ----------------------------------------------------------------------------- actions
    def start(self, d: Start, now: float) -> None:
        """Grant the job its resources and create its process, which takes them."""
        sim = self.sim
        job = d.job
        if job.state is not JobState.QUEUED:
            raise PolicyError(f"job {job.id}: cannot start a job that is {job.state.value}")
        host = sim.hosts.get(d.host)
        if host is None:
            raise PolicyError(f"job {job.id}: unknown host {d.host!r}")
        spec = job.spec
        procs = spec.procs if d.procs is None else d.procs
        mem = spec.mem if d.mem is None else d.mem
        check_cap(job, procs, now, "start")
        if procs <= 0:
            raise PolicyError(f"job {job.id} at t={now:g}: start on {procs} processors")
        if d.resumes:
            for v in d.resumes:
                if v.state is not JobState.PREEMPTED or v.host != host.name:
                    raise PolicyError(
                        f"job {job.id}: Start.resumes lists job {v.id}, which is not "
                        f"preempted on {host.name}"
                    )
        host.grant(procs, mem, job)
        sim.dequeue(job)
        job.host = host.name
        job.alloc_procs = procs
        job.alloc_mem = mem
        if procs < spec.procs:
            job.reduced = True
        if math.isnan(job.first_start):
            job.first_start = now
        job.last_start = now
        job.segment_start = now
        if d.time_limit is not None:
            job.time_limit = now + d.time_limit
            job.limit_action = d.on_limit
            # a trial run (T§3.2.2) succeeds only if the job's peak memory fits what it was given
            job.can_finish = not (d.on_limit == "requeue" and spec.used_mem > mem)
        elif sim.kill_overrun:
            job.time_limit = now + spec.kill_after + sim.overrun_grace
            job.limit_action = "kill"
        else:
            job.time_limit = math.inf
        if sim.raise_to_request:  # overrun rule "requested": a passed estimate is raised to R
            r = spec.user_request
            job.overrun_time = r if spec.req_time < r < math.inf else 0.0
        job.move(JobState.RUNNING, now)
        host.running[job.id] = job
        host.releases.add(job)
        for hook in sim.hooks.on_allocation:
            hook(job, now)
        process = self.env.process(job_process(sim, job, host, procs, mem))
        process.callbacks.append(self.departure)
        self.processes[job.id] = process
        if d.resumes:
            self.lent[job.id] = tuple(d.resumes)

    def preempt(self, job: Job, now: float) -> None:
        """Take a running job's processors back; its process settles its work, puts them back, waits."""
        if job.state is not JobState.RUNNING:
            raise PolicyError(f"job {job.id}: cannot preempt a job that is {job.state.value}")
        host = self.sim.host_of(job)
        host.releases.remove(job)
        host.reclaim(job.alloc_procs, 0)
        job.resume_procs = job.alloc_procs
        job.alloc_procs = 0
        job.preemptions += 1
        job.move(JobState.PREEMPTED, now)
        del host.running[job.id]
        host.preempted[job.id] = job
        for hook in self.sim.hooks.on_allocation:
            hook(job, now)
        self.interrupt(job, Preempted())

    def resume(self, job: Job, procs: int | None, now: float) -> None:
        """Give a preempted job processors again; its process takes them."""
        if job.state is not JobState.PREEMPTED:
            raise PolicyError(f"job {job.id}: cannot resume a job that is {job.state.value}")
        host = self.sim.host_of(job)
        procs = job.resume_procs if procs is None else procs
        check_cap(job, procs, now, "resume")
        if procs <= 0:
            raise PolicyError(f"job {job.id} at t={now:g}: resume on {procs} processors")
        host.grant(procs, 0, job)
        job.alloc_procs = procs
        job.resume_procs = 0
        if procs < job.spec.procs:
            job.reduced = True
        job.last_start = now
        job.move(JobState.RUNNING, now)
        del host.preempted[job.id]
        host.running[job.id] = job
        host.releases.add(job)
        for hook in self.sim.hooks.on_allocation:
            hook(job, now)
        self.interrupt(job, Resumed(procs))

    def resize(self, job: Job, procs: int, now: float) -> None:
        """Change a running job's processors; its process gets or puts the difference."""
        if job.state is not JobState.RUNNING:
            raise PolicyError(f"job {job.id}: cannot resize a job that is {job.state.value}")
        if procs <= 0:
            raise PolicyError(f"job {job.id}: resize to {procs} processors")
        check_cap(job, procs, now, "resize")
        if procs == job.alloc_procs:
            return
        host = self.sim.host_of(job)
        delta = procs - job.alloc_procs
        if delta > 0:
            host.grant(delta, 0, job)
        host.releases.remove(job)
        if delta < 0:
            host.reclaim(-delta, 0)
        job.alloc_procs = procs
        job.resizes += 1
        host.releases.add(job)
        for hook in self.sim.hooks.on_allocation:
            hook(job, now)
        self.interrupt(job, Resized(procs))

    def kill(self, job: Job, reason: str, now: float) -> None:
        """Stop a job for good; a running or preempted job's process puts everything back."""
        sim = self.sim
        if job.state is JobState.QUEUED:
            sim.dequeue(job)
        elif job.state is JobState.RUNNING or job.state is JobState.PREEMPTED:
            sim.release(job, now)
            self.interrupt(job, Killed(reason))
        else:
            raise PolicyError(f"job {job.id}: cannot kill a job that is {job.state.value}")
        job.reason = reason
        sim.finish(job, JobState.KILLED, now)
        if self.lent:
            self.give_back(job, now)

    def wake_at(self, d: WakeAt, now: float) -> None:
        """A SimPy timeout that asks for a pass at ``d.time`` (the timer comes back in the snapshot)."""
        timer = Timer(max(d.time, now), d.host, d.tag)

        def due(_event: simpy.Event) -> None:
            self.due.append(timer)
            self.sim.request_pass()

        self.env.timeout(timer.time - now).callbacks.append(due)

    def interrupt(self, job: Job, cause: Cause) -> None:
        """Tell the job's process what the scheduler did to it."""
        self.processes[job.id].interrupt(cause)

    def give_back(self, run: Job, now: float) -> None:
        """Resume the jobs ``run`` preempted (``Start.resumes``) now that it has ended."""
        lent = self.lent.pop(run.id, None)
        if lent is None:
            return
        sim = self.sim
        what = "trial" if run.limit_action == "requeue" else "run"
        for v in lent:
            if v.state is not JobState.PREEMPTED:
                continue  # gone
            host: Host = sim.hosts[v.host or ""]
            if v.resume_procs > host.free_procs:  # not free: the policy decides, in a pass
                if sim.interval is None:
                    sim.request_pass()
                continue
            d = Resume(v, note=f"the {what} that preempted it has ended (J{run.id}); "
                               f"back on its {v.resume_procs} processors")  # fmt: skip
            for obs in sim.observers[1:]:
                obs.on_decision(now, d)
            self.resume(v, None, now)


def check_cap(job: Job, procs: int, now: float, action: str) -> None:
    """A job never holds more processors than it requested (it would finish early)."""
    if procs > job.spec.procs:
        raise PolicyError(
            f"job {job.id} at t={now:g}: {action} on {procs} processors, "
            f"but it requested only {job.spec.procs}"
        )
