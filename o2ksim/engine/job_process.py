"""A job's SimPy process, and the causes of the interrupts the scheduler sends it.

Each run of a job is a plain :class:`simpy.Process` (``env.process(job_process(...))``)
created when the scheduler starts the job.  The process

1. ``get`` s from its host's Containers the processors and memory the
   scheduler granted (:meth:`~o2ksim.engine.hosts.Host.get`);
2. waits, with a :func:`simpy.Environment.timeout`, for the end of its work
   at its current rate (or for its time limit);
3. when the scheduler changes the job, receives a :class:`simpy.Interrupt`
   whose ``cause`` says what happened, and acts on it:

   Whatever the cause, it first settles the work done so far at its old rate.

   * :class:`Preempted` -- puts its processors back, keeps its memory, and
     waits (an event nothing triggers) until it is resumed or killed;
   * :class:`Resumed` -- gets ``procs`` processors and waits for its new end;
   * :class:`Resized` -- gets or puts the difference to ``procs`` processors
     and waits for its new end;
   * :class:`Killed` -- puts everything back and ends;

4. when its timeout fires, hands the end to the scheduler's books
   (:meth:`~o2ksim.engine.core.Simulation.segment_over`: completed, killed
   past its time limit, or a trial run put back in the queue) and, if the job
   no longer runs, puts everything back and ends (a requeued trial gets a
   new process when it starts again).

Who does what: the scheduler keeps the books at the moment it decides -- the
job's state (:class:`~o2ksim.jobs.JobState`, whose illegal moves raise), its
allocation, the hosts' job lists and the observers' events -- so that the
next decision of the same pass sees them.  The process holds the resources
and owns the passage of time: it settles the work done (:func:`settle`, at
the rate of the processors it held) whenever its rate is about to change or
its timeout fires.  The interrupt reaches the process at the same instant,
right after the pass (SimPy processes interrupts before the events of that
instant), so no time passes between a decision and its effect.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import simpy

from o2ksim.engine.errors import PolicyError
from o2ksim.jobs import Job, JobState

if TYPE_CHECKING:
    from o2ksim.engine.core import Simulation
    from o2ksim.engine.hosts import Host


@dataclass(frozen=True, slots=True)
class Preempted:
    """The scheduler took the job's processors away; it keeps its memory and its work."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Resumed:
    """The scheduler gave a preempted job ``procs`` processors again."""

    procs: int


@dataclass(frozen=True, slots=True)
class Resized:
    """The scheduler changed a running job's processors to ``procs``."""

    procs: int


@dataclass(frozen=True, slots=True)
class Killed:
    """The scheduler stopped the job for good."""

    reason: str = ""


Cause = Preempted | Resumed | Resized | Killed


def job_process(
    sim: Simulation, job: Job, host: Host, procs: int, mem: float
) -> Generator[simpy.Event, Any, None]:
    """One run of ``job`` on ``host``, started with ``procs`` processors and ``mem`` KB."""
    env = sim.env
    host.get(procs, mem)  # granted by the scheduler's Start: there at once
    held = procs  # the processors this process holds (it holds ``mem`` until it ends)
    while True:
        try:
            if held:
                yield env.timeout(_time_left(job, env.now))
            else:
                yield env.event()  # preempted: only an interrupt (resume, kill) wakes it
        except simpy.Interrupt as interrupt:
            settle(job, held, env.now)  # the work done at the rate it had until now
            match interrupt.cause:
                case Preempted():
                    host.put(held, 0)
                    held = 0
                case Resumed(procs=new) | Resized(procs=new):
                    if new > held:
                        host.get(new - held, 0)
                    else:
                        host.put(held - new, 0)
                    held = new
                case Killed():
                    host.put(held, mem)
                    return
                case cause:
                    raise PolicyError(f"job {job.id}: unknown interrupt cause {cause!r}") from None
            continue
        settle(job, held, env.now)
        sim.segment_over(job)  # the books: completed, killed, requeued, or runs on
        if job.state is not JobState.RUNNING:
            host.put(held, mem)
            return


def settle(job: Job, held: int, now: float) -> None:
    """Book the work done on ``held`` processors since the job's rate last changed."""
    job.remaining_work -= (now - job.segment_start) * held
    if job.remaining_work < 1e-9 * max(1.0, job.spec.work):
        job.remaining_work = 0.0
    job.segment_start = now


def _time_left(job: Job, now: float) -> float:
    """Seconds until the job's work is done at its current rate, or its time limit if earlier."""
    until = job.time_limit
    if job.can_finish:
        finish = job.segment_start + job.remaining_work / job.alloc_procs
        if not until < finish:  # the earlier of the two (as ``min``)
            until = finish
    delay = until - now
    return delay if delay > 0.0 else 0.0
