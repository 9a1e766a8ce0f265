"""A flood under immediate service without the two per-pass scans (issue 27, D29).

* The engine's queue (:class:`~o2ksim.engine.arrival_queue.ArrivalQueue`): a
  requeued job goes back to its arrival place without sorting the queue.
  Against a plain sorted list, along random insertions (arrivals and
  requeues) and removals, with chunks of two jobs so that small cases split
  and drop many chunks; and by hand.
* The jobs awaiting a trial (:class:`~o2ksim.policies.immediate.awaiting.Awaiting`):
  the first one at or after a place asking at most ``room`` processors,
  against a scan of every awaiting job, along random additions and removals
  (with a capacity of two, so that compactions are many); and by hand.
* :meth:`ImmediateService.schedule
  <o2ksim.policies.immediate.service.ImmediateService.schedule>` against the
  plain version it replaced (``ScanningService`` below, kept here as the
  oracle: the awaiting jobs a dict, cleaned by a scan at every pass and walked
  whole by the trial loop): run side by side on every pass of a simulation,
  they must return the same decisions, leave the same awaiting jobs in the
  same order and give the same quiet bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from o2ksim.engine import arrival_queue
from o2ksim.engine.arrival_queue import ArrivalQueue
from o2ksim.engine.core import Simulation
from o2ksim.engine.decisions import Start
from o2ksim.engine.snapshot import HostView, Snapshot
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies import make_policy
from o2ksim.policies.immediate import awaiting as awaiting_module
from o2ksim.policies.immediate import service as service_module
from o2ksim.policies.immediate.awaiting import Awaiting
from o2ksim.policies.immediate.book import borrowed_view
from o2ksim.policies.immediate.eligibility import VictimLists
from o2ksim.policies.immediate.service import ImmediateService
from o2ksim.policies.immediate.trials import plan_trial, trial_decisions

GB = KB_PER_GB


def jobs_asking(procs: Sequence[int]) -> list[Job]:
    return [Job(JobSpec(i, 0.0, p, 0, 10.0, 10.0)) for i, p in enumerate(procs)]


# ------------------------------------------------------------------ the engine's queue
def check_queue(queue: ArrivalQueue, expected: list[Job], every: list[Job]) -> None:
    """``queue`` holds exactly ``expected`` (in row order), and its invariant holds."""
    assert list(queue) == expected
    assert len(queue) == len(expected) and bool(queue) == bool(expected)
    for job in every:
        assert (job in queue) == (job in expected)
    rows = [r for chunk in queue._rows for r in chunk]
    assert rows == sorted(rows) and len(set(rows)) == len(rows)
    assert all(queue._rows) and queue._firsts == [c[0] for c in queue._rows]
    assert all(len(c) < 2 * arrival_queue.CHUNK for c in queue._rows)
    assert [len(c) for c in queue._rows] == [len(c) for c in queue._jobs]


def test_a_requeued_job_goes_back_to_its_arrival_place(monkeypatch):
    monkeypatch.setattr(arrival_queue, "CHUNK", 2)  # a chunk splits at 4 jobs
    jobs = jobs_asking([1] * 8)
    queue = ArrivalQueue({j.id: j.id for j in jobs})  # row = id
    for j in jobs[:6]:
        queue.add(j)
    # six arrivals: [0, 1, 2, 3] splits in two at row 3, [2, 3, 4, 5] again at row 5
    assert queue._rows == [[0, 1], [2, 3], [4, 5]]
    for r in (0, 3, 4):  # rows 0, 3 and 4 start
        queue.remove(jobs[r])
    assert queue._rows == [[1], [2], [5]] and queue._firsts == [1, 2, 5]
    queue.add(jobs[3])  # 3's trial ends: back between 2 and 5
    queue.add(jobs[0])  # 0's trial ends: back at the head, before 1
    queue.add(jobs[7])  # an arrival: last
    check_queue(queue, [jobs[r] for r in (0, 1, 2, 3, 5, 7)], jobs)
    assert queue._rows == [[0, 1], [2, 3], [5, 7]] and queue._firsts == [0, 2, 5]
    for r in (0, 1):  # the head chunk empties: dropped
        queue.remove(jobs[r])
    assert queue._rows == [[2, 3], [5, 7]]
    check_queue(queue, [jobs[r] for r in (2, 3, 5, 7)], jobs)
    with pytest.raises(KeyError):
        queue.remove(jobs[0])
    with pytest.raises(ValueError):
        queue.add(jobs[3])


OPS = st.lists(st.tuples(st.booleans(), st.integers(0, 59)), max_size=300)


@settings(max_examples=300, deadline=None)
@given(OPS, st.sampled_from([1, 2, 3]))
def test_the_queue_is_a_sorted_list(ops, chunk):
    # each op: True adds job r (if it waits already, removes it), False removes the
    # first waiting job at or after r; the oracle is a plain list sorted by row
    saved = arrival_queue.CHUNK
    arrival_queue.CHUNK = chunk
    try:
        jobs = jobs_asking([1] * 60)
        rows = {j.id: 59 - j.id for j in jobs}  # rows not in id order
        queue = ArrivalQueue(rows)
        waiting: list[Job] = []
        for add, r in ops:
            job = jobs[r]
            if add and job not in waiting:
                queue.add(job)
                waiting.append(job)
            else:
                later = [j for j in waiting if rows[j.id] >= rows[job.id]]
                if not later:
                    continue
                gone = min(later, key=lambda j: rows[j.id])
                queue.remove(gone)
                waiting.remove(gone)
            waiting.sort(key=lambda j: rows[j.id])
            check_queue(queue, waiting, jobs)
    finally:
        arrival_queue.CHUNK = saved


# ------------------------------------------------------------------ the awaiting jobs
def test_the_first_awaiting_job_that_fits_by_hand(monkeypatch):
    monkeypatch.setattr(awaiting_module, "_MIN_SIZE", 2)
    jobs = jobs_asking([4, 1, 3, 1, 2, 8])
    aw = Awaiting()
    for j in jobs:
        aw.add(j)  # places 0..5 (compacted at 2 and 4: capacity 8)
    assert aw.smallest == 1
    aw.remove(jobs[1])
    aw.remove(jobs[3])
    # awaiting: 4, 3, 2, 8 processors at places 0, 2, 4, 5
    assert aw.first(0, 2) == 4 and aw.first(0, 3) == 2 and aw.first(3, 3) == 4
    assert aw.first(5, 3) == -1 and aw.first(0, 1) == -1 and aw.first(0, math.inf) == 0
    assert aw.first(6, math.inf) == -1 and aw.first(1, math.inf) == 2
    assert aw.job_at(5) is jobs[5] and aw.smallest == 2
    aw.remove(jobs[4])
    assert aw.first(0, 2) == -1 and aw.smallest == 3
    assert list(aw) == [jobs[0], jobs[2], jobs[5]] and len(aw) == 3
    with pytest.raises(KeyError):
        aw.job_at(4)
    with pytest.raises(ValueError):
        aw.add(jobs[0])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 9)), max_size=200))
def test_the_first_awaiting_job_that_fits_is_the_scans(ops):
    # op 0 adds a job asking p processors, op 1 removes the p-th awaiting job (mod), op 2
    # asks every place for the first job asking at most p (and inf) against a scan
    saved = awaiting_module._MIN_SIZE
    awaiting_module._MIN_SIZE = 2
    try:
        aw = Awaiting()
        order: list[Job] = []
        made = 0
        for op, p in ops:
            if op == 0:
                job = Job(JobSpec(made, 0.0, p, 0, 10.0, 10.0))
                made += 1
                aw.add(job)
                order.append(job)
            elif op == 1 and order:
                aw.remove(order.pop(p % len(order)))
            places = {j.id: aw._place[j.id] for j in order}
            assert list(aw) == order and len(aw) == len(order)
            assert [places[j.id] for j in order] == sorted(places.values())
            assert aw.smallest == min((j.spec.procs for j in order), default=math.inf)
            for start in range(aw._end + 2):
                for room in (p, math.inf, 0.5):
                    scan = [places[j.id] for j in order
                            if places[j.id] >= start and j.spec.procs <= room]  # fmt: skip
                    assert aw.first(start, room) == (scan[0] if scan else -1)
    finally:
        awaiting_module._MIN_SIZE = saved


# ------------------------------------------------------------------ the pass, side by side
TRIED = {"scan": 0, "index": 0}  # trials planned by each version (the same jobs are offered one)


def counted_plan_trial(*args: Any, **kwargs: Any) -> Any:
    TRIED["index"] += 1
    return plan_trial(*args, **kwargs)


class ScanningService(ImmediateService):
    """The pass as it was before the index (the oracle): the awaiting jobs a dict in
    arrival order, cleaned by a scan of all of them, and walked whole by the trial loop."""

    def __init__(self, settings_: Any) -> None:
        super().__init__(settings_)
        self._awaiting = {}  # type: ignore[assignment]

    def schedule(self, snap: Snapshot, inner: Callable[[Snapshot], Sequence[Any]]) -> list[Any]:
        now = snap.now
        book = self.book
        awaiting: dict[int, Job] = self._awaiting  # type: ignore[assignment]
        owed: dict[str, int] = {}
        view = snap
        if book.running or book.to_resume:
            book.ended(snap.departed)
            decisions: list[Any] = []
            resumed: list[Job] = []
            if book.to_resume:
                decisions, resumed = book.resume(
                    {h.name: [h.free_procs, h.free_mem] for h in snap.hosts}
                )
            borrowed = book.borrowed(now, resumed)
            if borrowed:
                view = borrowed_view(snap, borrowed)
                owed = {host: sum(b.alloc_procs for b in items) for host, items in borrowed.items()}
            inner_decisions = inner(view)
            decisions.extend(inner_decisions)
        else:
            inner_decisions = decisions = list(inner(view))
        for job in snap.arrived:
            if job.state is JobState.QUEUED:
                awaiting[job.id] = job
        if not awaiting:
            return decisions
        preemptive = self.settings.preemptive
        if not preemptive:
            most = max(h.free_procs for h in snap.hosts)
            if all(j.spec.procs > most for j in awaiting.values()):
                return decisions
        started: set[int] = set()
        for d in inner_decisions:
            if isinstance(d, Start):
                started.add(d.job.id)
        queued = JobState.QUEUED
        for job_id in [i for i, j in awaiting.items() if i in started or j.state is not queued]:
            del awaiting[job_id]
        if not awaiting:
            return decisions
        free = {h.spec.name: [h.free_procs, h.free_mem] for h in snap.hosts}
        for host, procs in owed.items():
            free[host][0] -= procs
        for d in inner_decisions:
            if isinstance(d, Start):
                f = free[d.host]
                f[0] -= d.job.spec.procs if d.procs is None else d.procs
                f[1] -= d.job.spec.mem if d.mem is None else d.mem
        if decisions is inner_decisions:
            decisions = list(decisions)
        protected = set(book.running)
        victims = VictimLists(now, self.settings.eligible_after, protected, self._eligibility)
        room = math.inf
        for job_id, job in list(awaiting.items()):
            if job.spec.procs > room:
                continue
            TRIED["scan"] += 1
            plan = plan_trial(
                job, snap.hosts, free, now, self.settings, preempt=preemptive, victims=victims
            )
            if plan is None:
                if preemptive:
                    room = max(free[h.spec.name][0] + victims.total(h) for h in snap.hosts)
                else:
                    room = max(f[0] for f in free.values())
                continue
            del awaiting[job_id]
            f = free[plan.host]
            f[0] += sum(v.alloc_procs for v in plan.victims) - job.spec.procs
            f[1] -= plan.mem
            book.start(plan)
            protected.add(job_id)
            victims.remove(plan.victims)
            room = math.inf
            decisions.extend(trial_decisions(plan, self.settings, now))
        if awaiting and self.settings.preemptive:
            fresh = [d.job for d in inner_decisions if isinstance(d, Start)]
            decisions.extend(self._next_eligibility(snap, protected, fresh))
        return decisions


class SideBySide(ImmediateService):
    """The service with the scanning oracle run on the same snapshots, compared at every
    pass (decisions, awaiting jobs in order, quiet bound)."""

    def __init__(self, settings_: Any) -> None:
        super().__init__(settings_)
        self.oracle = ScanningService(settings_)
        self.passes = 0
        self.tried = 0  # passes where some job awaited after the inner pass

    def schedule(self, snap: Snapshot, inner: Callable[[Snapshot], Sequence[Any]]) -> list[Any]:
        TRIED["scan"] = TRIED["index"] = 0
        expected = self.oracle.schedule(snap, inner)
        got = super().schedule(snap, inner)
        assert got == expected, snap.now
        assert TRIED["index"] == TRIED["scan"], snap.now  # no job too wide for `room` tried
        assert list(self._awaiting) == list(self.oracle._awaiting.values()), snap.now
        self.passes += 1
        self.tried += bool(self._awaiting)
        return got

    def quiet_until(self, snap: Snapshot) -> float:
        got = super().quiet_until(snap)
        assert got == self.oracle.quiet_until(snap)
        return got


def side_by_side(machine, jobs, mode, interval=None, **params):
    policy = make_policy("fcfs-backfill", immediate_service=mode, **params)
    policy.immediate = SideBySide(policy.immediate.settings)
    sim = Simulation(machine, jobs, policy, interval=interval)
    saved = service_module.plan_trial
    service_module.plan_trial = counted_plan_trial
    try:
        sim.run()
    finally:
        service_module.plan_trial = saved
    return policy.immediate, sim


TWO_HOSTS = MachineSpec("two", (HostSpec("a", 8, 4 * GB), HostSpec("b", 4, 2 * GB)))
JOBS = st.lists(
    st.tuples(
        st.integers(0, 300),  # submit
        st.sampled_from([0, 0, 0, 1, 5]),  # a burst: many at one instant
        st.integers(1, 8),  # procs
        st.sampled_from([0.25, 0.5, 1, 3]),  # GB
        st.integers(1, 120),  # requested runtime
        st.integers(0, 120),  # actual runtime (may exceed the request)
        st.sampled_from([0.1, 0.5, 2]),  # peak memory (GB): above 0.5 GB the trial fails
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(
    JOBS,
    st.sampled_from(["preemptive", "soon"]),
    st.sampled_from(["fcfs", "lxfw"]),
    st.sampled_from([None, 7.0]),
)
def test_the_indexed_pass_decides_as_the_scanning_one(draw_jobs, mode, priority, interval):
    jobs, t = [], 0
    for i, (s, gap, p, m, req, rt, u) in enumerate(draw_jobs):
        t = s if gap else t  # gap 0: the same instant as the job before
        jobs.append(
            JobSpec(
                i + 1, float(t), p, round(m * GB), float(req), float(rt), used_mem=round(u * GB)
            )
        )
    params = {"quantum": 5, "eligible_after": 20, "initial_memory": "512MB",
              "priority": {"w": 0.02, "x": 1} if priority == "lxfw" else priority}  # fmt: skip
    service, sim = side_by_side(TWO_HOSTS, jobs, mode, interval, **params)
    assert service.passes > 0
    event(f"passes with jobs awaiting a trial: {'some' if service.tried else 'none'}")
    event(
        f"trials put back in the queue: {'some' if any(j.restarts for j in sim.jobs.values()) else 'none'}"
    )


@pytest.mark.parametrize("mode", ["preemptive", "soon"])
def test_a_small_flood_decides_as_the_scanning_pass(mode):
    # 400 jobs at one instant on one 32-processor host (the benchmark's flood, smaller):
    # jobs started by the pass, trials given, refused and put back in the queue
    import numpy as np

    rng = np.random.default_rng(7)
    jobs = []
    for i in range(400):
        run = int(rng.integers(1, 500))
        procs = int(rng.integers(1, 20)) if i % 5 else int(rng.integers(1, 3))
        jobs.append(JobSpec(i + 1, 1.0, procs, 0, float(run + rng.integers(0, 700)), float(run)))
    machine = MachineSpec("one", (HostSpec("h", 32, math.inf),))
    service, sim = side_by_side(machine, jobs, mode, quantum=60)
    assert service.tried > 100
    assert sum(j.restarts for j in sim.jobs.values()) > 50  # many requeues


def test_a_job_that_left_the_queue_behind_an_early_return_is_dropped_at_the_next_pass():
    # "soon" returns before its clean-up when every awaiting job asks more processors
    # than any host has free.  A holding pass that starts a job on fewer processors than
    # it asks (a reduced start) can leave such a job awaiting behind that early return:
    # A and B (8 processors each) arrive on a host with 4 free; the pass starts A on 4.
    # At the next pass (4 more free: 8), A runs: it must be dropped (it left the queue:
    # snapshot.left) and B, not A, gets the trial on the 8 free processors.
    host = HostSpec("h", 16, math.inf)
    machine = MachineSpec("m", (host,))
    a, b = (Job(JobSpec(i, 0.0, 8, 0, 100.0, 100.0)) for i in (1, 2))
    for j in (a, b):
        j.move(JobState.QUEUED, 0.0)

    def snap(now, free, queue, **kw):
        view = HostView(host, free, math.inf, (), ())
        return Snapshot(now, queue, (view,), {"h": view}, machine, **kw)

    params = {"immediate_service": "soon", "quantum": 5}
    for kind in (ImmediateService, ScanningService):
        service = kind(ImmediateService.from_params(params).settings)
        first = service.schedule(
            snap(0.0, 4, (a, b), arrived=(a, b)), lambda s: [Start(a, "h", procs=4)]
        )
        assert first == [Start(a, "h", procs=4)]  # the early return: no trial
        a.move(JobState.RUNNING, 0.0)
        second = service.schedule(snap(10.0, 8, (b,), left=(a,)), lambda s: [])
        assert [(d.job, d.host) for d in second if isinstance(d, Start)] == [(b, "h")]
        assert list(service._awaiting) == []
        a.state = JobState.QUEUED  # for the next kind (a hand-made state, not a move)
