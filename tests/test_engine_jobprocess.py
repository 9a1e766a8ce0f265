"""The job's SimPy process (:class:`o2ksim.engine.core.JobProcess`) and the engine's event economy.

A job process takes its first step when it is created and, when nobody waits
for it, ends without scheduling an end event; otherwise it behaves as a
:class:`simpy.Process`.  The event counts below are worked out by hand from
the events the engine needs (see the module docstring of ``o2ksim.engine.core``).
"""

from __future__ import annotations

import pytest
import simpy
from conftest import job, one_host
from simpy.core import EmptySchedule, StopSimulation

from o2ksim.engine.core import JobProcess, Simulation
from o2ksim.policies import make_policy


def _counting(env: simpy.Environment) -> list[int]:
    """Count the events ``env`` processes (its ``step`` calls)."""
    steps = [0]
    step = env.step

    def counted() -> None:
        try:
            step()
        except EmptySchedule:  # no event was left: nothing processed
            raise
        except StopSimulation:  # the run's done event, processed
            steps[0] += 1
            raise
        steps[0] += 1

    env.step = counted  # type: ignore[method-assign]
    return steps


def _returns_after(env: simpy.Environment, delay: float, value: object, log: list):
    log.append(("first step", env.now))
    yield env.timeout(delay)
    log.append(("second step", env.now))
    return value


def test_the_first_step_runs_at_creation_and_the_end_needs_no_event():
    env = simpy.Environment()
    steps = _counting(env)
    log: list = []
    proc = JobProcess(env, _returns_after(env, 3, "done", log))
    assert log == [("first step", 0)]  # before any event was processed
    assert proc.is_alive
    env.run()
    assert log == [("first step", 0), ("second step", 3)]
    assert steps[0] == 1  # the timeout only: no Initialize, no end event
    assert not proc.is_alive and proc.processed and proc.ok and proc.value == "done"


def test_a_process_waited_for_still_triggers_its_waiters():
    env = simpy.Environment()
    steps = _counting(env)
    log: list = []
    got = []
    proc = JobProcess(env, _returns_after(env, 5, 42, log))

    def waiter():
        value = yield proc
        got.append((env.now, value))

    env.process(waiter())
    env.run()
    assert got == [(5, 42)]
    # the waiter's Initialize, the timeout, the job process's end event, the waiter's end
    assert steps[0] == 4


def test_an_interrupt_reaches_the_generator_with_its_cause():
    env = simpy.Environment()
    seen = []

    def body():
        try:
            yield env.timeout(10)
        except simpy.Interrupt as interrupt:
            seen.append((env.now, interrupt.cause))
        yield env.timeout(1)
        seen.append(("end", env.now))

    proc = JobProcess(env, body())

    def interrupter():
        yield env.timeout(4)
        proc.interrupt("changed")

    env.process(interrupter())
    env.run()
    assert seen == [(4, "changed"), ("end", 5)]
    assert not proc.is_alive


def test_an_error_in_the_generator_crashes_the_run():
    env = simpy.Environment()

    def body():
        yield env.timeout(2)
        raise ValueError("engine bug")

    JobProcess(env, body())
    with pytest.raises(ValueError, match="engine bug"):
        env.run()


def test_a_job_that_never_waits_costs_three_events():
    # n jobs, 10 s apart, each runs 5 s on a host large enough for all: each arrival
    # but the first (at t=0) is a timeout, each arrival asks for a pass that starts the
    # job, each job is one runtime timeout; its departure leaves an empty queue, so no
    # pass.  Add the arrival and scheduler processes' Initialize events, the arrival
    # process's end and the run's done event: 3n + 3.
    n = 20
    jobs = [job(i + 1, 10.0 * i, 1, 5) for i in range(n)]
    sim = Simulation(one_host(4), jobs, make_policy("fcfs-backfill"))
    steps = _counting(sim.env)
    stats = sim.run()
    assert steps[0] == 3 * n + 3
    assert stats.passes == n and stats.skipped_passes == n  # every departure
    assert sim._processes == {}  # finished jobs' processes are let go


def test_the_engines_fast_constructors_build_what_the_dataclass_constructors_build():
    """engine_host_view / engine_snapshot against HostView(...) / Snapshot(...), field by field,
    with values of one type in neighbouring fields (a swapped setter would go unnoticed otherwise)."""
    from o2ksim.engine.snapshot import HostView, Snapshot, engine_host_view, engine_snapshot
    from o2ksim.machine import HostSpec, MachineSpec

    spec = HostSpec("h", 64, 1000)
    running, preempted = ("r",), ("p",)
    args = (spec, 7, 9.5, running, preempted, 3, None, "h")
    view = engine_host_view(*args)
    assert view == HostView(*args)
    assert (view.free_procs, view.free_mem, view.running, view.preempted, view.version) == (7, 9.5, running, preempted, 3)
    machine = MachineSpec("m", (spec,))
    sargs = (5.0, ("q",), (view,), {"h": view}, machine, ("t",), ("a",), ("d",), True, 60.0, None)
    snap = engine_snapshot(*sargs)
    assert snap == Snapshot(*sargs)
    assert (snap.now, snap.queue, snap.timers, snap.arrived, snap.departed, snap.interval) == (
        5.0, ("q",), ("t",), ("a",), ("d",), 60.0,
    )
