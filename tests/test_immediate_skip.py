"""Immediate service and the engine's skipping of passes where nothing fits.

Backfill with immediate service opts in to skipping (``idle_when_nothing_fits``)
and keeps, through ``has_pending_work`` (:mod:`o2ksim.engine.contract`), the
passes in which it may act although no waiting job fits as a full job: a new
job or one still waiting for a trial, a trial that has left, a victim to
resume (the engine asks for a pass when it leaves one to the policy).  The
pass times and counts below are worked out by hand; ``Forgetful``
(the same policy answering "no pending work") shows that each example fails
if such a pass is skipped, and ``EveryPass`` (the promise withdrawn) and
``EveryPassFullInner`` (also the backfill pass run where nothing fits, which
immediate service otherwise leaves out) that the skipping changes no schedule.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim.engine.core import Simulation
from o2ksim.engine.decisions import Preempt, Start
from o2ksim.jobs import Job, JobSpec, JobState
from o2ksim.machine import KB_PER_GB, KB_PER_MB, HostSpec, MachineSpec
from o2ksim.policies import make_policy
from o2ksim.policies.base import Policy
from o2ksim.policies.immediate import ImmediateService, TrialSettings

GB, MB = KB_PER_GB, KB_PER_MB


def job(i, submit, procs, run, req, mem, used=0):
    return JobSpec(i, float(submit), procs, mem, float(req), float(run), used_mem=used)


class Recording:
    """A policy as it is, recording the time of every pass it gets."""

    def __init__(self, policy) -> None:
        self._policy = policy
        self.name = policy.name
        self.passes: list[float] = []

    def __getattr__(self, name):
        return getattr(self._policy, name)

    def schedule(self, snap):
        self.passes.append(snap.now)
        return self._policy.schedule(snap)


class Forgetful(Recording):
    """The same policy claiming it never has pending work: passes where nothing fits are lost."""

    def has_pending_work(self, arrived: bool) -> bool:
        return False


class EveryPass(Recording):
    """The same policy with its promise withdrawn: the engine runs every pass."""

    def idle_when_nothing_fits(self) -> bool:
        return False


class EveryPassFullInner(EveryPass):
    """Every pass, and the backfill pass run even where nothing fits (no shortcut at all)."""

    def schedule(self, snap):
        self.passes.append(snap.now)
        return self._policy.immediate.schedule(snap, self._policy._schedule, False)


def immediate(mode: str = "preemptive", **params):
    return make_policy("fcfs-backfill", immediate_service=mode, **params)


def run(machine, jobs, policy):
    sim = Simulation(machine, jobs, policy)
    stats = sim.run()
    table = {j.id: (j.state, j.host, j.first_start, j.last_start, j.end, j.restarts)
             for j in sim.jobs.values()}  # fmt: skip
    return sim, stats, table


def test_immediate_service_opts_in_and_asks_for_the_passes_it_needs():
    assert immediate().idle_when_nothing_fits()
    assert immediate("soon").idle_when_nothing_fits()
    assert not immediate(reservation_kind="fixed").idle_when_nothing_fits()
    assert not make_policy("fcfs-backfill").has_pending_work(True)  # no immediate service
    service = ImmediateService(TrialSettings())
    assert not service.has_pending_work(False)
    assert service.has_pending_work(True)  # a new job may want a trial


def test_a_waiting_job_gets_its_trial_at_a_departure_where_nothing_fits_in_full():
    # one host, 4 procs, 4 GB.  J1 (1p, 3 GB, 0-100) and J2 (2p, 0.25 GB, 0-50) run;
    # W (3p, 2 GB, 30 s, peak 0.5 GB) arrives at 10: one processor free, no victim
    # eligible (t = 600 s), so it waits for a trial.  At 50 J2 leaves: 3 procs and
    # 1 GB free, W does not fit in full (2 GB), but its trial (3p, 1 GB) does: it
    # runs 50-80 and finishes in it.  At 80 (the trial left, nobody to resume) and
    # 100 (J1 leaves) the queue is empty.
    machine = MachineSpec("one", (HostSpec("h", 4, 4 * GB),))
    jobs = [
        job(1, 0, 1, 100, 100, 3 * GB),
        job(2, 0, 2, 50, 50, GB // 4),
        job(3, 10, 3, 30, 30, 2 * GB, used=512 * MB),
    ]
    pol = Recording(immediate())
    _, stats, table = run(machine, jobs, pol)
    # passes: 0 (arrivals), 10 (W arrives), 50 (W waits for a trial); the requests at
    # 80 and 100 are dropped (queue empty, no work); the trial still counts as completed
    assert pol.passes == [0.0, 10.0, 50.0]
    assert stats.skipped_passes == 2
    assert table[3][2:5] == (50.0, 50.0, 80.0)
    assert pol.stats()["immediate_service_completed"] == 1
    # without the pending work, the pass at 50 is skipped: W starts in full at 100
    lost = Forgetful(immediate())
    _, _, lost_table = run(machine, jobs, lost)
    assert lost_table[3][2] == 100.0 and 50.0 not in lost.passes


def test_passes_where_nothing_fits_and_nothing_is_pending_are_skipped():
    # one host, 4 procs, 4 GB, FCFS-backfill + preemptive immediate service.
    # J1 (1p, 2 GB, 0-1000), J2 (1p, 1 GB, 0-200) run; 2 procs and 1 GB are free.
    # W (2p, 2 GB, 500 s) arrives at 10: it does not fit in full, its trial (2p,
    # 1 GB) runs 10-70 and is killed at the quantum; W waits, reserved at 200 (J2's
    # end frees the memory).  At 70 (the trial left, it preempted nobody) nothing
    # fits and nothing is pending: skipped.  J4 (1p, 1 GB, 50 s) arrives at 100 and
    # is backfilled 100-150.  At 150 J4 leaves: W still does not fit and no trial is
    # in progress or wanted -- skipped.  W runs 200-700; J1 ends at 1000.
    machine = MachineSpec("one", (HostSpec("h", 4, 4 * GB),))
    jobs = [
        job(1, 0, 1, 1000, 1000, 2 * GB),
        job(2, 0, 1, 200, 200, GB),
        job(3, 10, 2, 500, 500, 2 * GB),
        job(4, 100, 1, 50, 50, GB),
    ]
    pol = Recording(immediate())
    _, stats, table = run(machine, jobs, pol)
    assert pol.passes == [0.0, 10.0, 100.0, 200.0]
    # skipped requests: 70 (nothing fits, nothing pending: the one made as the trial
    # released and the one made once W was back in the queue), 150 (likewise), 700 and
    # 1000 (queue empty)
    assert stats.skipped_passes == 5
    assert table[3] == (JobState.COMPLETED, "h", 10.0, 200.0, 700.0, 1)
    assert table[4][2:5] == (100.0, 100.0, 150.0)
    every = EveryPass(immediate())
    _, every_stats, every_table = run(machine, jobs, every)
    assert every.passes == [0.0, 10.0, 70.0, 100.0, 150.0, 200.0, 700.0]
    assert every_stats.skipped_passes == 0
    assert every_table == table


def test_a_victim_left_to_the_policy_keeps_the_pass():
    # the engine resumes a trial's victims itself when their processors are free
    # (Start.resumes); one it could not resume is the policy's to resume (TrialBook)
    service = ImmediateService(TrialSettings())
    victim = Job(JobSpec(1, 0.0, 2, GB, 100.0, 100.0))
    victim.state, victim.host = JobState.PREEMPTED, "h"
    service.book.to_resume["h"] = [victim]
    assert service.has_pending_work(False)
    service.book.to_resume.clear()
    trial = Job(JobSpec(2, 0.0, 2, GB, 30.0, 30.0))
    trial.state = JobState.RUNNING
    service.book.running[trial.id] = (trial, (victim,))
    assert not service.has_pending_work(False)  # the trial still runs
    for ended in (JobState.COMPLETED, JobState.QUEUED, JobState.KILLED):
        trial.state = ended  # it has left; the victim is still preempted
        assert service.has_pending_work(False)
    victim.state = JobState.RUNNING  # the engine resumed it
    assert not service.has_pending_work(False)
    trial.state = JobState.COMPLETED  # noted by the next pass, counted already
    assert service.summary_counts()["immediate_service_completed"] == 1


# --------------------------------------------------------------------- same schedules
JOBS = st.lists(
    st.tuples(
        st.integers(0, 300),  # submit
        st.integers(1, 8),  # procs
        st.sampled_from([0.25, 0.5, 1, 3]),  # GB
        st.integers(1, 120),  # requested runtime
        st.integers(0, 120),  # actual runtime (may exceed the request)
        st.sampled_from([0.1, 0.5, 2]),  # peak memory (GB): above 0.5 GB the trial fails
    ),
    min_size=1,
    max_size=40,
)
LXFW = {"w": 0.02, "x": 1}  # LXF&W-backfill's weights (policies/lxfw-backfill.toml)
TWO_HOSTS = MachineSpec("two", (HostSpec("a", 8, 4 * GB), HostSpec("b", 4, 2 * GB)))


@settings(max_examples=60, deadline=None)
@given(JOBS, st.sampled_from(["preemptive", "soon"]), st.sampled_from(["fcfs", "lxfw"]))
def test_skipping_changes_no_immediate_service_schedule(draw_jobs, mode, priority):
    # a short quantum and eligibility time so that trials preempt and fail often
    jobs = [
        JobSpec(i + 1, float(s), p, round(m * GB), float(req), float(rt), used_mem=round(u * GB))
        for i, (s, p, m, req, rt, u) in enumerate(draw_jobs)
    ]
    params = {"quantum": 5, "eligible_after": 20, "initial_memory": "512MB",
              "priority": LXFW if priority == "lxfw" else priority}  # fmt: skip
    results = []
    for kind in (Recording, EveryPass, EveryPassFullInner):
        pol = kind(immediate(mode, **params))
        table = run(TWO_HOSTS, jobs, pol)[2]
        results.append((table, pol.stats()))
    assert results[0] == results[1] == results[2]


def test_a_trial_put_back_in_the_queue_gets_the_pass_it_fits_in():
    # one host, 4 procs, 4 GB.  J1 (2p, 3 GB, 0-40) runs; W (2p, 2 GB, 500 s) arrives
    # at 10 with 2 procs and 1 GB free: its trial (2p, 1 GB) runs 10-70 and is put
    # back in the queue at the quantum.  J1 has left at 40 (queue empty: skipped),
    # so at 70 W fits in full: the engine must ask for the pass once W is back in
    # the queue (asked as the trial released, the queue was still empty).
    machine = MachineSpec("one", (HostSpec("h", 4, 4 * GB),))
    jobs = [job(1, 0, 2, 40, 40, 3 * GB), job(2, 10, 2, 500, 500, 2 * GB)]
    pol = Recording(immediate())
    _, stats, table = run(machine, jobs, pol)
    assert pol.passes == [0.0, 10.0, 70.0]
    assert table[2] == (JobState.COMPLETED, "h", 10.0, 70.0, 570.0, 1)
    # skipped requests: at 40, at 70 as the trial released (W not yet back), at 570
    assert stats.skipped_passes == 3


class LendsAndTakes(Policy):
    """A hand-scripted policy that leaves a ``Start.resumes`` victim to itself.

    At 0 it starts V (4p, the whole host); at 10 it preempts V, starts T (2p,
    5 s, within its 10 s limit) with ``resumes=(V,)`` and X (2p, 100 s) on
    V's other two processors.  When T completes at 15 only 2
    processors are free, so the engine cannot resume V and leaves it to the
    policy.  It opts in to skipping and has pending work while V is preempted
    and T no longer runs; it records its passes and resumes nothing.
    """

    kind = "test-lends-and-takes"

    def __init__(self) -> None:
        super().__init__()
        self.passes: list[float] = []
        self.jobs: dict[int, Job] = {}

    def idle_when_nothing_fits(self) -> bool:
        return True

    def has_pending_work(self, arrived: bool) -> bool:
        v, t = self.jobs.get(1), self.jobs.get(2)
        return arrived or (
            v is not None and t is not None
            and v.state is JobState.PREEMPTED and t.state is not JobState.RUNNING
        )  # fmt: skip

    def schedule(self, snap):
        self.passes.append(snap.now)
        for j in snap.arrived:
            self.jobs[j.id] = j
        if snap.now == 0.0:
            return [Start(self.jobs[1], "h")]
        if snap.now == 10.0:
            v, t, x = self.jobs[1], self.jobs[2], self.jobs[3]
            return [
                Preempt(v),
                Start(t, "h", time_limit=10.0, on_limit="requeue", resumes=(v,)),
                Start(x, "h"),
            ]
        return []


def test_the_engine_asks_for_a_pass_when_it_leaves_a_victim_to_the_policy():
    machine = MachineSpec("one", (HostSpec("h", 4, 4 * GB),))
    jobs = [job(1, 0, 4, 50, 50, GB), job(2, 10, 2, 5, 5, GB), job(3, 10, 2, 100, 100, GB)]
    pol = LendsAndTakes()
    sim = Simulation(machine, jobs, pol)
    stats = sim.run()
    # at 15 T has completed and V is still preempted: the request made as T released
    # (T still running then, the queue empty) is dropped; the one the engine makes
    # once it has left V to the policy is kept.  At 110 X leaves (queue empty: the
    # request is kept only because V still waits); V is never resumed: the run stalls.
    assert pol.passes == [0.0, 10.0, 15.0, 110.0]
    assert sim.jobs[2].state is JobState.COMPLETED and sim.jobs[2].end == 15.0
    assert sim.jobs[1].state is JobState.PREEMPTED and stats.stalled == 1
