"""Immediate service gets a pass at every instant where something happened.

The engine runs one scheduling pass at every arrival, departure and timer
(:mod:`o2ksim.engine.scheduler`); immediate service acts in the passes where
no waiting job fits as a full job (a trial on the initial memory, a victim to
resume), and the holding backfill pass returns at once there when it can
decide nothing.  The pass times and schedules below are worked out by hand;
``NoEarlyExit`` (the backfill pass run in full at every pass) shows that the
early exit changes no schedule.
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


class NoEarlyExit(Recording):
    """The same policy with the backfill pass's early exit switched off (a full pass always)."""

    def __init__(self, policy) -> None:
        super().__init__(policy)
        policy._decides_nothing = lambda snap: False


def immediate(mode: str = "preemptive", **params):
    return make_policy("fcfs-backfill", immediate_service=mode, **params)


def run(machine, jobs, policy):
    sim = Simulation(machine, jobs, policy)
    stats = sim.run()
    table = {j.id: (j.state, j.host, j.first_start, j.last_start, j.end, j.restarts)
             for j in sim.jobs.values()}  # fmt: skip
    return sim, stats, table


def test_a_waiting_job_gets_its_trial_at_a_departure_where_nothing_fits_in_full():
    # one host, 4 procs, 4 GB.  J1 (1p, 3 GB, 0-100) and J2 (2p, 0.25 GB, 0-50) run;
    # W (3p, 2 GB, 30 s, peak 0.5 GB) arrives at 10: one processor free, no victim
    # eligible (t = 600 s), so it waits for a trial.  At 50 J2 leaves: 3 procs and
    # 1 GB free, W does not fit in full (2 GB), but its trial (3p, 1 GB) does: it
    # runs 50-80 and finishes in it.  At 80 (the trial left, nobody to resume) and
    # 100 (J1 leaves) the queue is empty.  The run is over when J1 leaves.
    machine = MachineSpec("one", (HostSpec("h", 4, 4 * GB),))
    jobs = [
        job(1, 0, 1, 100, 100, 3 * GB),
        job(2, 0, 2, 50, 50, GB // 4),
        job(3, 10, 3, 30, 30, 2 * GB, used=512 * MB),
    ]
    pol = Recording(immediate())
    _, _, table = run(machine, jobs, pol)
    # passes: 0 (arrivals), 10 (W arrives), 50 (J2 leaves: W's trial), 80 (the trial
    # leaves); the run ends with J1's departure at 100
    assert pol.passes == [0.0, 10.0, 50.0, 80.0]
    assert table[3][2:5] == (50.0, 50.0, 80.0)
    assert pol.stats()["immediate_service_completed"] == 1


def test_a_trial_killed_at_the_quantum_waits_for_its_reservation():
    # one host, 4 procs, 4 GB, FCFS-backfill + preemptive immediate service.
    # J1 (1p, 2 GB, 0-1000), J2 (1p, 1 GB, 0-200) run; 2 procs and 1 GB are free.
    # W (2p, 2 GB, 500 s) arrives at 10: it does not fit in full, its trial (2p,
    # 1 GB) runs 10-70 and is killed at the quantum; W waits, reserved at 200 (J2's
    # end frees the memory).  At 70 (the trial left, it preempted nobody) nothing
    # fits.  J4 (1p, 1 GB, 50 s) arrives at 100 and is backfilled 100-150.  At 150
    # J4 leaves: W still does not fit.  W runs 200-700; J1 ends at 1000 (the run's end).
    machine = MachineSpec("one", (HostSpec("h", 4, 4 * GB),))
    jobs = [
        job(1, 0, 1, 1000, 1000, 2 * GB),
        job(2, 0, 1, 200, 200, GB),
        job(3, 10, 2, 500, 500, 2 * GB),
        job(4, 100, 1, 50, 50, GB),
    ]
    pol = Recording(immediate())
    _, _, table = run(machine, jobs, pol)
    assert pol.passes == [0.0, 10.0, 70.0, 100.0, 150.0, 200.0, 700.0]
    assert table[3] == (JobState.COMPLETED, "h", 10.0, 200.0, 700.0, 1)
    assert table[4][2:5] == (100.0, 100.0, 150.0)
    full = NoEarlyExit(immediate())
    _, _, full_table = run(machine, jobs, full)
    assert full.passes == pol.passes and full_table == table


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
def test_the_early_exit_changes_no_immediate_service_schedule(draw_jobs, mode, priority):
    # a short quantum and eligibility time so that trials preempt and fail often
    jobs = [
        JobSpec(i + 1, float(s), p, round(m * GB), float(req), float(rt), used_mem=round(u * GB))
        for i, (s, p, m, req, rt, u) in enumerate(draw_jobs)
    ]
    params = {"quantum": 5, "eligible_after": 20, "initial_memory": "512MB",
              "priority": LXFW if priority == "lxfw" else priority}  # fmt: skip
    results = []
    for kind in (Recording, NoEarlyExit):
        pol = kind(immediate(mode, **params))
        table = run(TWO_HOSTS, jobs, pol)[2]
        results.append((table, pol.stats(), pol.passes))
    assert results[0] == results[1]


def test_a_trial_put_back_in_the_queue_gets_the_pass_it_fits_in():
    # one host, 4 procs, 4 GB.  J1 (2p, 3 GB, 0-40) runs; W (2p, 2 GB, 500 s) arrives
    # at 10 with 2 procs and 1 GB free: its trial (2p, 1 GB) runs 10-70 and is put
    # back in the queue at the quantum.  J1 has left at 40, so at 70 W fits in full:
    # the pass at 70 must come after W is back in the queue.  W's end at 570 ends the run.
    machine = MachineSpec("one", (HostSpec("h", 4, 4 * GB),))
    jobs = [job(1, 0, 2, 40, 40, 3 * GB), job(2, 10, 2, 500, 500, 2 * GB)]
    pol = Recording(immediate())
    _, _, table = run(machine, jobs, pol)
    assert pol.passes == [0.0, 10.0, 40.0, 70.0]
    assert table[2] == (JobState.COMPLETED, "h", 10.0, 70.0, 570.0, 1)


class LendsAndTakes(Policy):
    """A hand-scripted policy that leaves a ``Start.resumes`` victim to itself.

    At 0 it starts V (4p, the whole host); at 10 it preempts V, starts T (2p,
    5 s, within its 10 s limit) with ``resumes=(V,)`` and X (2p, 100 s) on
    V's other two processors.  When T completes at 15 only 2
    processors are free, so the engine cannot resume V and leaves it to the
    policy, which gets a pass at 15 (T's departure); it records its passes and
    resumes nothing.
    """

    kind = "test-lends-and-takes"

    def __init__(self) -> None:
        super().__init__()
        self.passes: list[float] = []
        self.jobs: dict[int, Job] = {}

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
    # at 15 T has completed and V is still preempted (2 processors free of its 4): the
    # pass at 15 is the policy's chance to resume it.  At 110 X leaves; V is never
    # resumed: the run stalls.
    assert pol.passes == [0.0, 10.0, 15.0, 110.0]
    assert sim.jobs[2].state is JobState.COMPLETED and sim.jobs[2].end == 15.0
    assert sim.jobs[1].state is JobState.PREEMPTED and stats.stalled == 1
