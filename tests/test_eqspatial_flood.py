"""EQspatial on a same-instant flood (issue 27, D29): the same decisions as the plain scans,
at a cost that does not grow with the queue at every pass.

The plain versions of the three walks the fix replaced are kept here as the oracle
(:class:`PlainEQSpatial`, :class:`PlainTrials`, :class:`PlainLedger`: main's code as of
7162768): every waiting job sorted and offered a host at every departure pass, every job
awaiting a trial tried again (and the stale ones dropped by the walk), every waiting job's
credit booked one by one.  Schedules, segments, credits and counters must be the same.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.engine.ticks import last_exact_tick
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies import equipartition as eq
from o2ksim.policies.eqspatial import EQSpatial
from o2ksim.policies.equipartition import CreditLedger
from o2ksim.policies.immediate.hosts import HostTrials
from o2ksim.policies.tick_sums import grid_between, repeat_add

MACHINE = MachineSpec(
    "three",
    (HostSpec("a", 16, 8 * KB_PER_GB), HostSpec("b", 16, 4 * KB_PER_GB), HostSpec("c", 8, 8 * KB_PER_GB)),
)


class PlainLedger:
    """The per-job ledger the groups replace (main's ``CreditLedger``)."""

    def __init__(self) -> None:
        self.credit: dict[int, float] = {}
        self.waiting: dict[int, int] = {}
        self.level = math.inf
        self.since = 0.0

    def wait(self, job_id: int, procs: int) -> None:
        self.waiting[job_id] = procs
        self.credit.setdefault(job_id, 0.0)

    def stop(self, job_id: int) -> float:
        self.waiting.pop(job_id, None)
        return self.credit.get(job_id, 0.0)

    def forget(self, job_id: int) -> None:
        self.credit.pop(job_id, None)

    def accrue(self, now: float, interval: float | None = None) -> None:
        dt = now - self.since
        if dt > 0 and self.waiting:
            ticks = None
            if interval is not None and now <= last_exact_tick(interval):
                ticks = grid_between(self.since, now, interval)
            if ticks is None or interval is None:
                for job_id, procs in self.waiting.items():
                    self.credit[job_id] += min(procs, self.level) * dt
            else:
                k1, k2 = ticks
                first, last = k1 * interval - self.since, now - k2 * interval
                for job_id, procs in self.waiting.items():
                    rate = min(procs, self.level)
                    c = self.credit[job_id] + rate * first
                    c = repeat_add(c, rate * interval, k2 - k1)
                    self.credit[job_id] = c + rate * last
        self.since = now

    def set_level(self, now: float, total_procs: float, requests: dict[int, int]) -> None:
        self.since = now
        self.level = eq.equi_level_counts(total_procs, requests) if self.waiting else math.inf


class PlainTrials(HostTrials):
    """The retry that tries every awaiting job at every pass and drops stale ones by the walk."""

    waiting: Collection[int] = ()

    def retry(self, snap: Any, out: list[Any]) -> None:
        for job_id, job in list(self.awaiting.items()):
            if job.state is not JobState.QUEUED or job_id not in self.waiting or self._try(job, snap, out):
                del self.awaiting[job_id]
        if self.awaiting and self.settings.preemptive:
            self._next_eligibility(snap, out)


class PlainEQSpatial(EQSpatial):
    """EQspatial with main's placement walk (every waiting job, sorted at every pass)."""

    kind = "eqspatial-plain-oracle"

    def _reset(self) -> None:
        super()._reset()
        self._ledger = PlainLedger()  # type: ignore[assignment]
        self._trials = PlainTrials(self.trial_settings, lambda name: self._hosts[name].pending_mem)
        self._trials.waiting = self._waiting

    def _place(self, snap: Any, out: list[Any]) -> None:
        self._trials.waiting = self._waiting  # type: ignore[attr-defined]
        new = [j for j in snap.arrived if j.state is JobState.QUEUED]
        new.extend(j for j in snap.departed if j.state is JobState.QUEUED and j.id not in self._where)
        retry = bool(snap.departed) and bool(self._waiting)
        if not new and not retry:
            return
        candidates = [j for j in self._waiting.values() if j.state is JobState.QUEUED] if retry else []
        candidates.extend(j for j in new if j.id not in self._waiting)
        candidates.sort(key=lambda j: (j.spec.submit, j.id))
        loads = [self._load(h, snap.host_by_name[h.name]) for h in self._hosts.values()]
        most_mem = max(x.free_mem for x in loads)
        for job in candidates:
            best = None if job.mem > most_mem else eq.choose_host(loads, job.procs, job.mem)
            if best is None:
                if job.id not in self._waiting:
                    self._no_host(job, snap, out)
                    self._waiting[job.id] = job
                continue
            self._trials.awaiting.pop(job.id, None)
            self._put(job, self._hosts[best.name], snap, loads, waited=job.id in self._waiting)
            self._waiting.pop(job.id, None)
            best.free_mem -= job.mem
            best.jobs += 1
            if job.id in self._credit:
                best.procs -= job.procs
            else:
                best.requested += job.procs
            most_mem = max(x.free_mem for x in loads)


@st.composite
def bursts(draw, max_jobs=40):
    """Jobs in a few bursts (many at one instant: queues of jobs waiting for a host)."""
    n = draw(st.integers(1, max_jobs))
    t = 0
    jobs = []
    for i in range(n):
        t += draw(st.sampled_from([0, 0, 0, 0, 1, 30, 200]))
        procs = draw(st.sampled_from([1, 1, 2, 4, 8, 16]))
        run = draw(st.integers(1, 900))
        mem = draw(st.sampled_from([0, 256, 1024, 3072, 6000])) * 1024
        req = draw(st.sampled_from([run, run, 2 * run, 5000]))
        jobs.append(JobSpec(i + 1, float(t), procs, mem, float(req), float(run)))
    return jobs


def outputs(r: Any) -> tuple[Any, ...]:
    cols = ["job_id", "start", "end", "host", "status", "catchup_credit", "immediate_service", "preemptions"]
    return (r.jobs[cols].to_dict("list"), r.segments.to_dict("list"), r.stats.passes, r.counters, r.stats.extra)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    jobs=bursts(),
    min_interval=st.sampled_from([0, 0, 30]),
    long=st.sampled_from([None, 300]),
    service=st.sampled_from(["preemptive", "preemptive", "soon", "off"]),
    new_job_service=st.sampled_from(["immediate", "wait"]),
    one_host=st.booleans(),
    interval=st.sampled_from([None, None, 10.0]),
)
def test_the_same_decisions_as_the_plain_walks(jobs, min_interval, long, service, new_job_service, one_host, interval):
    machine = MachineSpec("one", (HostSpec("a", 16, 8 * KB_PER_GB),)) if one_host else MACHINE
    params = {
        "min_interval": min_interval, "long_job_threshold": long, "immediate_service": service,
        "new_job_service": new_job_service, "quantum": 20, "eligible_after": 60,
    }  # fmt: skip
    got = simulate(jobs, machine=machine, policy=EQSpatial(**params), interval=interval)
    want = simulate(jobs, machine=machine, policy=PlainEQSpatial(**params), interval=interval)
    if interval is None:
        assert outputs(got) == outputs(want)
    else:  # the oracle overrides _place: no quiet promise, it ticks through (more passes)
        assert outputs(got)[:2] + outputs(got)[3:] == outputs(want)[:2] + outputs(want)[3:]


def flood(n: int) -> list[JobSpec]:
    """``n`` jobs at one instant on a 16-processor host: 16 placed, the rest wait for a host."""
    return [JobSpec(i, 0.0, 1 + (i * 7) % 16, 0, 3000.0, float(100 + (i * 37) % 900)) for i in range(1, n + 1)]


def test_a_flood_costs_a_bounded_number_of_tries_and_placements_a_job(monkeypatch):
    """A flood of n jobs: every job placed, finished in its trial, or tried when its host
    frees; once the host is blocked no other job is tried, and once it is full no other
    job is offered a host.  Main's walks made one try and one offer per waiting job at
    every pass: about n^2 / 4 each (400 jobs: over 30,000)."""
    counts = {"try": 0, "offer": 0}
    real_try, real_choose = HostTrials._try, eq.choose_host

    def counted_try(self, *a, **k):
        counts["try"] += 1
        return real_try(self, *a, **k)

    def counted_choose(*a, **k):
        counts["offer"] += 1
        return real_choose(*a, **k)

    monkeypatch.setattr(HostTrials, "_try", counted_try)
    monkeypatch.setattr("o2ksim.policies.eqspatial.choose_host", counted_choose)
    machine = MachineSpec("one", (HostSpec("a", 16, 8 * KB_PER_GB),))
    n = 400
    r = simulate(flood(n), machine=machine, policy="eqspatial-0m")
    assert (r.jobs.status == "completed").all()
    passes = r.stats.passes
    assert counts["try"] <= n + passes  # one try a job on arrival, at most one more a pass
    assert counts["offer"] <= n + passes  # each arrival once, at most one waiting job a pass


def test_a_retry_on_a_blocked_machine_tries_nobody():
    """Every host blocked by a trial: the retry returns at once, every job still awaiting."""
    trials = HostTrials.__new__(HostTrials)
    tried: list[int] = []

    class Host:
        def __init__(self, name: str) -> None:
            self.name = name

    class Snap:
        hosts = (Host("a"), Host("b"))

    HostTrials.__init__(trials, _settings("preemptive"), lambda name: 0)
    trials.host_of = {1: "a", 2: "b"}  # a trial runs on each host
    trials._try = lambda job, snap, out, *a: tried.append(job) or True  # type: ignore[method-assign]
    trials._next_eligibility = lambda snap, out: None  # type: ignore[method-assign]
    trials.awaiting.update({3: "job3", 4: "job4"})  # type: ignore[dict-item]
    trials.retry(Snap(), [])  # type: ignore[arg-type]
    assert tried == [] and list(trials.awaiting) == [3, 4]
    trials.host_of = {1: "a"}  # b is free: the first awaiting job is tried, gets b, the rest are not
    trials.book.running = {}
    trials._try = lambda job, snap, out, *a: tried.append(job) or trials.host_of.update({9: "b"}) or True  # type: ignore[method-assign]
    trials.retry(Snap(), [])  # type: ignore[arg-type]
    assert tried == ["job3"] and list(trials.awaiting) == [4]


def _settings(mode: str) -> Any:
    from o2ksim.policies.immediate.settings import TrialSettings

    return TrialSettings.from_params({"immediate_service": mode, "quantum": 60, "initial_memory": "1GB",
                                      "eligible_after": 600})  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("wait"), st.integers(1, 12), st.sampled_from([1, 2, 3, 64])),
            st.tuples(st.just("stop"), st.integers(1, 12), st.just(0)),
            st.tuples(st.just("accrue"), st.sampled_from([0.0, 0.3, 1.0, 7.7, 60.0]), st.sampled_from([0, 1])),
            st.tuples(st.just("level"), st.integers(0, 40), st.just(0)),
        ),
        max_size=60,
    )
)
def test_the_grouped_ledger_books_the_same_floats_as_one_credit_a_job(ops):
    grouped, plain = CreditLedger(), PlainLedger()
    now = 0.0
    in_system: dict[int, int] = {}
    for op, a, b in ops:
        expected = plain.credit.get(a, 0.0)
        for ledger in (grouped, plain):
            if op == "wait" and a not in ledger.waiting:
                ledger.wait(a, b)
            elif op == "stop":
                assert ledger.stop(a) == expected
                if a % 2:
                    ledger.forget(a)
            elif op == "accrue":
                ledger.accrue(now + a, 1.0 if b else None)
            elif op == "level":
                ledger.set_level(now, 64, {1: a, 64: 1})
        if op == "accrue":
            now += a
        if op == "level":
            in_system[1] = a
        assert grouped.credit == plain.credit  # the same floats, bit for bit
        assert grouped.waiting == plain.waiting


def test_a_flood_is_booked_once_per_request():
    """1,000 jobs joining at one instant, three sizes: three credits booked a pass; a job of a
    size already waiting that joins after a booking gets its own (its sums differ)."""
    ledger = CreditLedger()
    for i in range(1000):
        ledger.wait(i, (1, 2, 64)[i % 3])
    ledger.set_level(0.0, 128, {1: 334, 2: 333, 64: 333})  # level (128 - 334 - 666) < 1: 128 / 1000
    assert ledger.groups == 3
    ledger.accrue(10.0)
    ledger.wait(1000, 1)
    assert ledger.groups == 4
    ledger.accrue(10.5)
    c = ledger.credit
    assert c[0] == 0.128 * 10.0 + 0.128 * 0.5 and c[1000] == 0.128 * 0.5
    assert c[2] == c[0] and c[1] == c[0]  # every job gets the level: less than any request
    for i in range(1000):
        ledger.stop(i)
    assert ledger.groups == 1


def test_the_waiting_order_is_submission_then_id_and_its_search_skips_only_jobs_no_host_takes():
    """By hand: five jobs given out of order; loads of two hosts with room (a: 8 processors
    and 2 GB free; b: 16 processors, catching-up jobs holding 12 more than it has, 8 GB free:
    its ratio is negative, which ranks it last but does not rule it out)."""
    from o2ksim.policies.eqspatial_waiting import WaitingOrder

    def job(i: int, submit: float, procs: int, mem_gb: float) -> Job:
        return Job(JobSpec(i, submit, procs, int(mem_gb * KB_PER_GB), 10.0, 10.0))

    jobs = [job(9, 5.0, 1, 4), job(3, 5.0, 16, 0), job(1, 5.0, 2, 3), job(20, 6.0, 8, 1), job(4, 0.0, 12, 3)]
    order = WaitingOrder(jobs)
    assert [j.id for j in order.jobs] == [4, 1, 3, 9, 20]  # (submit, id)
    for j in jobs:
        order.add(j)
    a = eq.HostLoad("a", 8, 8, 0, 2 * KB_PER_GB, 0)
    b = eq.HostLoad("b", 16, -8, 4, 8 * KB_PER_GB, 5)
    assert order.first(0, [a, b]) == 0  # 4: 12 procs > a's 8; b takes it
    assert order.first(1, [a, b]) == 1  # 1: 3 GB > a's 2; b takes it
    b.jobs = 16  # b full: 4 (12 > 8), 1 (3 GB), 3 (16 > 8) and 9 (4 GB) fail on a; 20 fits a
    assert order.first(0, [a, b]) == 4
    order.remove(jobs[3])
    assert order.first(0, [a, b]) == -1
    a.jobs = 8  # no host has room
    assert order.first(0, [a, b]) == -1


def test_a_lone_candidate_is_chosen_whatever_its_ratio():
    """T§3.2.3: "Only the hosts with enough free memory ... are considered.  If more than one
    such hosts are found, the job is scheduled on the host that has the largest ratio."  The
    heuristic started from a best ratio of -1, so a host whose catching-up jobs hold more than
    its processors (ratio -4 / (0 + 2) = -2) was never chosen, even alone, and the job waited."""
    lone = eq.HostLoad("a", 16, -4, 0, KB_PER_GB, 3)
    assert eq.choose_host([lone], 2, 0) is lone
    other = eq.HostLoad("b", 16, -1, 0, KB_PER_GB, 3)  # ratio -0.5: the larger
    assert eq.choose_host([lone, other], 2, 0) is other
    assert eq.choose_host([lone, other], 2, 2 * KB_PER_GB) is None  # no memory: none


def test_a_host_with_a_negative_ratio_takes_waiting_and_new_jobs():
    """By hand.  Catching-up jobs hold 20 of host a's 16 processors (``procs`` = -4); X (2
    processors) waits; at a departure N (8, new) arrives and Y (2) waits behind it in (submit,
    id).  a is the only host with memory and room: all three are placed there (their ratios
    -4 / (0 + 2), -4 / (2 + 8), -4 / (10 + 2) only rank hosts), as the plain walk does."""
    from types import SimpleNamespace

    def job(i: int, submit: float, procs: int) -> Job:
        j = Job(JobSpec(i, submit, procs, 0, 100.0, 100.0))
        j.state = JobState.QUEUED
        return j

    placed = []
    for cls in (EQSpatial, PlainEQSpatial):
        pol = cls(min_interval=0)
        pol.bind(MachineSpec("one", (HostSpec("a", 16, KB_PER_GB),)))
        x, n, y = job(1, 0.0, 2), job(3, 10.0, 8), job(4, 10.0, 2)
        h = pol._hosts["a"]
        h.catchup_procs = 20
        h.jobs = {100 + k: job(100 + k, 0.0, 1) for k in range(3)}
        for j in (x, y):
            pol._waiting[j.id] = j
        if cls is EQSpatial:
            from o2ksim.policies.eqspatial_waiting import WaitingOrder

            pol._order = WaitingOrder([x, n, y])
            pol._order.add(x)
            pol._order.add(y)
        gone = job(200, 0.0, 1)
        gone.state = JobState.COMPLETED
        view = SimpleNamespace(free_mem=KB_PER_GB)
        snap = SimpleNamespace(arrived=(n,), departed=(gone,), host_by_name={"a": view}, queue_index=None,
                               explain=False, now=10.0)  # fmt: skip
        pol._place(snap, [])  # type: ignore[arg-type]
        placed.append(sorted(pol._where))
    assert placed[0] == placed[1] == [1, 3, 4]
