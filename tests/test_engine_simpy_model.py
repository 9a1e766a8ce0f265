"""The engine's SimPy model, event by event, on tiny scenarios worked out by hand.

In SimPy's own style: probes append ``(time, what)`` to a log and the test
asserts the whole log.  The probes listen and change nothing:

* each host Container's ``get``/``put`` is wrapped to log the amount and the
  level right after the call (a Container changes its level when a request
  it can satisfy is made);
* the scheduler's ``interrupt`` is wrapped to log the cause object it sends;
* the policy logs each pass it is given (arrived and departed jobs, free
  processors), an observer logs arrivals and ends.

Ordering rules used in the hand computations (SimPy's): events at one time
are processed urgent ones (process starts, interrupts) first, then in the
order they were scheduled; a Container's ``get``/``put`` is granted when
made; the scheduler's pass waits until nothing else is left at its instant.
"""

from __future__ import annotations

import copy
import math
import pickle

import pytest
import simpy
from simpy.core import EmptySchedule, StopSimulation

from o2ksim.engine.core import Simulation
from o2ksim.engine.decisions import Kill, PolicyError, Preempt, Resize, Resume, Start, WakeAt
from o2ksim.engine.job_process import Killed, Preempted, Resized, Resumed
from o2ksim.engine.monitor import Observer
from o2ksim.jobs import IllegalTransition, Job, JobSpec, JobState
from o2ksim.machine import HostSpec, MachineSpec
from o2ksim.policies.base import Policy

HOST = MachineSpec("m", (HostSpec("h", 4, 1000),))  # 4 processors, 1000 KB


def spec(job_id: int, submit: float, procs: int, run: float, mem: int = 0) -> JobSpec:
    return JobSpec(job_id, float(submit), procs, mem, float(run), float(run))


class Script(Policy):
    """Logs each pass and returns ``script(snap)``'s decisions."""

    kind = "script"

    def __init__(self, log: list, script) -> None:
        super().__init__()
        self.log = log
        self.script = script

    def schedule(self, snap):
        arrived = [j.id for j in snap.arrived]
        departed = [j.id for j in snap.departed]
        self.log.append((snap.now, f"pass arrived={arrived} departed={departed} "
                                   f"free={snap.hosts[0].free_procs}"))  # fmt: skip
        return self.script(snap)


class Lifecycle(Observer):
    def __init__(self, log: list) -> None:
        self.log = log

    def on_arrival(self, job, now) -> None:
        self.log.append((now, f"arrive J{job.id}"))

    def on_end(self, job, now) -> None:
        self.log.append((now, f"end J{job.id} {job.state.value}"))


def run_logged(jobs, script) -> tuple[Simulation, list]:
    """Run ``jobs`` on :data:`HOST` under ``script`` with every probe attached."""
    log: list = []
    sim = Simulation(HOST, jobs, Script(log, script), observers=[Lifecycle(log)])
    env = sim.env
    host = sim.hosts["h"]

    def probe(container: simpy.Container, op: str, what: str) -> None:
        call = getattr(container, op)

        def logged(amount):
            event = call(amount)
            log.append((env.now, f"{op} {what} {amount} -> {container.level:g}"))
            assert container.level >= 0
            return event

        setattr(container, op, logged)

    for what, container in (("procs", host.procs), ("mem", host.memory)):
        assert container is not None
        probe(container, "get", what)
        probe(container, "put", what)
    send = sim.scheduler.interrupt

    def interrupt(job, cause) -> None:
        log.append((env.now, f"interrupt J{job.id} {cause!r}"))
        send(job, cause)

    sim.scheduler.interrupt = interrupt  # type: ignore[method-assign]
    sim.run()
    return sim, log


def fcfs(snap):
    """Start queued jobs in order while they fit (memory and processors)."""
    free, mem = snap.hosts[0].free_procs, snap.hosts[0].free_mem
    out = []
    for job in snap.queue:
        if job.procs > free or job.mem > mem:
            break
        out.append(Start(job, "h"))
        free, mem = free - job.procs, mem - job.mem
    return out


def test_a_job_gets_its_processors_and_memory_and_puts_them_back():
    _, log = run_logged([spec(1, 0, 2, 10, mem=300)], fcfs)
    assert log == [
        (0, "arrive J1"),
        (0, "pass arrived=[1] departed=[] free=4"),
        (0, "get procs 2 -> 2"),  # J1's process starts after the pass and takes its grant
        (0, "get mem 300 -> 700"),
        (10, "end J1 completed"),  # its timeout: the books close, then it puts back
        (10, "put procs 2 -> 4"),
        (10, "put mem 300 -> 1000"),
    ]


def test_tie_rule_an_end_and_an_arrival_then_one_pass():
    # J1 holds the whole host until 10; J2 is submitted at 10.  The arrivals process
    # scheduled J2's arrival at 0, before J1's process scheduled its runtime timeout,
    # so J2 arrives first; J1 ends and puts back; only then the one pass, which sees
    # both and starts J2 on the processors J1 put back.
    _, log = run_logged([spec(1, 0, 4, 10), spec(2, 10, 2, 5), spec(3, 10, 1, 5)], fcfs)
    assert log == [
        (0, "arrive J1"),
        (0, "pass arrived=[1] departed=[] free=4"),
        (0, "get procs 4 -> 0"),
        (10, "arrive J2"),
        (10, "arrive J3"),
        (10, "end J1 completed"),
        (10, "put procs 4 -> 4"),
        (10, "pass arrived=[2, 3] departed=[1] free=4"),
        (10, "get procs 2 -> 2"),
        (10, "get procs 1 -> 1"),
        (15, "end J2 completed"),
        (15, "put procs 2 -> 3"),
        (15, "end J3 completed"),
        (15, "put procs 1 -> 4"),
    ]


def test_preemption_and_resume_reach_the_process_as_interrupts_with_their_cause():
    # J1 (4 procs, 100 s of work at full size, 200 KB) runs from 0; at 20 the policy
    # preempts it for J2 (2 procs, 10 s, 100 KB) in the same pass, and resumes it when J2
    # leaves at 30.  J1 did 20 s of its 100 by 20; it ends 80 s after its resume: 110.
    def script(snap):
        queue = list(snap.queue)
        if snap.now == 0:
            return [Start(queue[0], "h")]
        if snap.now == 20:
            (j1,) = snap.hosts[0].running
            return [Preempt(j1), Start(queue[0], "h")]
        return [Resume(j) for j in snap.hosts[0].preempted]

    sim, log = run_logged([spec(1, 0, 4, 100, mem=200), spec(2, 20, 2, 10, mem=100)], script)
    assert log == [
        (0, "arrive J1"),
        (0, "pass arrived=[1] departed=[] free=4"),
        (0, "get procs 4 -> 0"),
        (0, "get mem 200 -> 800"),
        (20, "arrive J2"),
        (20, "pass arrived=[2] departed=[] free=0"),
        (20, "interrupt J1 Preempted(reason='')"),
        # after the pass: J1's interrupt was scheduled before J2's process start
        (20, "put procs 4 -> 4"),  # J1 keeps its memory
        (20, "get procs 2 -> 2"),
        (20, "get mem 100 -> 700"),
        (30, "end J2 completed"),
        (30, "put procs 2 -> 4"),
        (30, "put mem 100 -> 800"),
        (30, "pass arrived=[] departed=[2] free=4"),
        (30, "interrupt J1 Resumed(procs=4)"),
        (30, "get procs 4 -> 0"),
        (110, "end J1 completed"),
        (110, "put procs 4 -> 4"),
        (110, "put mem 200 -> 1000"),
    ]
    assert sim.jobs[1].preemptions == 1


def test_resize_grows_and_shrinks_through_the_containers():
    # J1 asks 4 procs for 100 s (400 processor-seconds) and starts on 2; timers at 50
    # and 75.  0-50 on 2: 100 done; grown to 4 at 50: 75-50 on 4 = 100 more, 200 left;
    # shrunk to 2 at 75: 200 / 2 = 100 s, ends at 175.
    def script(snap):
        if snap.now == 0:
            (j1,) = snap.queue
            return [Start(j1, "h", procs=2), WakeAt(50), WakeAt(75)]
        (j1,) = snap.hosts[0].running
        return [Resize(j1, 4 if snap.now == 50 else 2)]

    sim, log = run_logged([spec(1, 0, 4, 100)], script)
    assert log == [
        (0, "arrive J1"),
        (0, "pass arrived=[1] departed=[] free=4"),
        (0, "get procs 2 -> 2"),
        (50, "pass arrived=[] departed=[] free=2"),
        (50, "interrupt J1 Resized(procs=4)"),
        (50, "get procs 2 -> 0"),
        (75, "pass arrived=[] departed=[] free=0"),
        (75, "interrupt J1 Resized(procs=2)"),
        (75, "put procs 2 -> 2"),
        (175, "end J1 completed"),
        (175, "put procs 2 -> 4"),
    ]
    assert sim.jobs[1].resizes == 2


def test_kills_of_a_running_and_of_a_preempted_job():
    # J1 and J2 (2 procs, 100 KB each) start at 0; at 40 J1 is killed and J2 preempted
    # (it puts back its processors, keeps its memory); at 60 J2 is killed (it puts back
    # its memory only).
    def script(snap):
        if snap.now == 0:
            return [*fcfs(snap), WakeAt(40), WakeAt(60)]
        if not snap.timers:  # the pass J1's departure asks for
            return []
        if snap.now == 40:
            j1, j2 = sorted(snap.hosts[0].running, key=lambda j: j.id)
            return [Kill(j1, "test"), Preempt(j2)]
        return [Kill(j, "again") for j in snap.hosts[0].preempted]

    _, log = run_logged([spec(1, 0, 2, 100, mem=100), spec(2, 0, 2, 100, mem=100)], script)
    assert log == [
        (0, "arrive J1"),
        (0, "arrive J2"),
        (0, "pass arrived=[1, 2] departed=[] free=4"),
        (0, "get procs 2 -> 2"),
        (0, "get mem 100 -> 900"),
        (0, "get procs 2 -> 0"),
        (0, "get mem 100 -> 800"),
        (40, "pass arrived=[] departed=[] free=0"),
        (40, "interrupt J1 Killed(reason='test')"),
        (40, "end J1 killed"),
        (40, "interrupt J2 Preempted(reason='')"),
        (40, "put procs 2 -> 2"),
        (40, "put mem 100 -> 900"),
        (40, "put procs 2 -> 4"),
        # J1's process ended: its departure asks for a pass at 40
        (40, "pass arrived=[] departed=[1] free=4"),
        (60, "pass arrived=[] departed=[] free=4"),
        (60, "interrupt J2 Killed(reason='again')"),
        (60, "end J2 killed"),
        (60, "put mem 100 -> 1000"),
    ]


def test_no_over_commit_but_preempted_processors_count_as_free_in_the_same_pass():
    # one pass may start J1 on all 4 processors, not J1 and J2
    with pytest.raises(PolicyError, match="over-commit"):
        run_logged(
            [spec(1, 0, 4, 10), spec(2, 0, 1, 10)], lambda s: [Start(j, "h") for j in s.queue]
        )
    # memory too: 600 + 600 KB of 1000
    with pytest.raises(PolicyError, match="over-commit"):
        run_logged(
            [spec(1, 0, 1, 10, mem=600), spec(2, 0, 1, 10, mem=600)],
            lambda s: [Start(j, "h") for j in s.queue],
        )

    # J1's 4 processors, preempted earlier in the pass, are free for J2 in the same pass,
    # though J1's process puts them back only after the pass; no Container goes negative
    def script(snap):
        if snap.now == 0:
            return [Start(next(iter(snap.queue)), "h")]
        if snap.hosts[0].running:
            (j1,) = snap.hosts[0].running
            return [Preempt(j1), Start(next(iter(snap.queue)), "h")]
        return [Resume(j) for j in snap.hosts[0].preempted]

    sim, log = run_logged([spec(1, 0, 4, 10), spec(2, 5, 4, 10)], script)
    assert [entry for entry in log if entry[0] == 5] == [
        (5, "arrive J2"),
        (5, "pass arrived=[2] departed=[] free=0"),
        (5, "interrupt J1 Preempted(reason='')"),
        (5, "put procs 4 -> 4"),
        (5, "get procs 4 -> 0"),
    ]
    assert (sim.jobs[1].end, sim.jobs[2].end) == (20.0, 15.0)  # J1: 5 s left after J2 leaves at 15

    # a growing resize larger than what is free is refused as well
    def grow(snap):
        if snap.now == 0:
            return [Start(j, "h", procs=2) for j in snap.queue]
        return [Resize(j, 3) for j in snap.hosts[0].running if j.id == 1]

    with pytest.raises(PolicyError, match="over-commit"):
        run_logged([spec(1, 0, 3, 10), spec(2, 0, 2, 10), spec(3, 1, 1, 1)], grow)


def test_a_job_costs_eight_simpy_events():
    # n jobs, 10 s apart, 1 proc for 5 s each, on a host without a memory limit.  Per job:
    # its arrival timeout (none for the first, submitted at 0), the arrival's pass
    # request, its process's start, its get, its runtime timeout, its put, its
    # process's end, the departure's pass request: 8.  The last job's finish ends the
    # run: its put, its process's end and the last pass request are never processed
    # (-3).  Add the arrivals and scheduler processes' starts, the arrivals process's
    # end and the run's done event (+4), and one timeout(0) of the tie rule: the
    # arrivals process ends at the last arrival's instant, after that arrival asked for
    # its pass, so the pass waits once for the instant to be quiet (+1): 8n + 1.
    n = 20
    machine = MachineSpec("m", (HostSpec("h", 4, math.inf),))
    jobs = [spec(i + 1, 10 * i, 1, 5) for i in range(n)]
    sim = Simulation(machine, jobs, Script([], fcfs))
    steps = [0]
    step = sim.env.step

    def counted() -> None:
        try:
            step()
        except EmptySchedule:
            raise
        except StopSimulation:
            steps[0] += 1
            raise
        steps[0] += 1

    sim.env.step = counted  # type: ignore[method-assign]
    sim.run()
    assert steps[0] == 8 * n + 1
    assert sim.hosts["h"].memory is None  # no memory Container: no memory get or put


def test_the_job_process_is_a_plain_simpy_process():
    seen = {}

    def script(snap):
        if snap.now == 0:
            return [*(Start(j, "h") for j in snap.queue), WakeAt(5)]
        seen["process"] = sim.scheduler.processes[1]
        return []

    sim = Simulation(HOST, [spec(1, 0, 1, 10)], Script([], script))
    sim.run()
    assert type(seen["process"]) is simpy.Process
    assert not seen["process"].is_alive  # it ended with the job, at 10


def test_illegal_transitions_raise():
    job = Job(spec(1, 0, 1, 1))
    with pytest.raises(IllegalTransition):
        job.move(JobState.RUNNING, 0.0)  # pending -> running skips the queue
    job.move(JobState.QUEUED, 0.0)
    job.move(JobState.RUNNING, 0.0)
    job.move(JobState.COMPLETED, 1.0)
    with pytest.raises(IllegalTransition):
        job.move(JobState.RUNNING, 2.0)


def test_jobspec_pickles_and_copies_as_a_plain_dataclass():
    s = JobSpec(7, 1.5, 4, 2048, 60.0, 30.0, used_mem=1024, user=3, queue=2)
    assert pickle.loads(pickle.dumps(s)) == s
    assert copy.deepcopy(s) == s and copy.copy(s) == s
    assert "__reduce__" not in vars(JobSpec)  # the dataclass's own means


def test_the_causes_are_small_frozen_values():
    assert Resumed(4) == Resumed(4) and Resized(2) != Resumed(2)
    with pytest.raises(AttributeError):
        Killed("x").reason = "y"  # type: ignore[misc]
    assert Preempted().reason == ""
