"""NCSA-LSF* invariants on random workloads and random LSF configurations (hypothesis).

The checker below re-derives everything from the machine tables, independently
of the policy's code: a job's class, which limit keys count it, how many jobs
of each key run on each host and in the machine.  At every start it checks:

* no host runs more jobs of a limit key than its ``[host.lsf].limits`` allow;
* the machine never runs more jobs of a key than ``[lsf].system_limits`` allow,
  and no user more than the user limit;
* a job starts only on a host that serves its size class;
* a drained host starts nothing but its drained job; a host is drained for at
  most one job and a job drains at most one host (replaying the policy's log);

and after every pass: a host that is empty and not drained leaves no waiting
job it could run within the limits (it would fit, so nothing can block it);
more generally no host could start anything more under the rules (a walk of
the host's classes written here from the thesis's description), and a drained
host's job does not fit it.  Every job ends completed, or rejected with a reason.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim.engine.core import Simulation
from o2ksim.engine.monitor import Observer, jobs_table
from o2ksim.jobs import JobSpec, JobState
from o2ksim.machine import KB_PER_GB, load_machine, parse_machine
from o2ksim.policies.lsf import NCSALSF

H = 3600.0
TIME = {"vst": 1, "st": 4, "mt": 8, "lt": 16}
SIZE = {"sj": [2, 1], "mj": [4, 2], "lj": [8, 4]}


def classify(spec, time_classes, size_classes):
    """(time, size) class of a job, straight from the tables (hours, [procs, GB])."""
    t = next(
        (n for n, b in sorted(time_classes.items(), key=lambda x: x[1]) if spec.req_time <= b * H),
        None,
    )
    s = next(
        (
            n
            for n, (p, g) in sorted(size_classes.items(), key=lambda x: tuple(x[1]))
            if spec.procs <= p and spec.mem <= g * KB_PER_GB
        ),
        None,
    )
    return None if t is None or s is None else (t, s)


def keys_of(cls):
    return {cls[0], cls[1], f"{cls[0]}_{cls[1]}", "all"}


class Checker(Observer):
    """Checks the invariants of the module docstring while the run goes."""

    def __init__(self, machine, policy, user_limit, vst_blocking="same-time-class"):
        lsf = machine.params["lsf"]
        self.first = set(lsf.get("priority_time_classes", ["vst"]))
        self.vst_blocks_vst = vst_blocking == "same-time-class"
        self.sim = None  # set once the Simulation exists
        self._cls = {}
        self.tc, self.sc = lsf["time_classes"], lsf["size_classes"]
        self.sys_limits = lsf.get("system_limits", {})
        self.user_limit = user_limit
        self.hosts = {h.name: h.params["lsf"] for h in machine.hosts if "lsf" in h.params}
        self.host_cap = {h.name: h for h in machine.hosts}
        self.policy = policy
        self.running_host = {h: Counter() for h in self.hosts}
        self.running_sys = Counter()
        self.running_user = Counter()
        self.waiting = {}
        self.running = {h: set() for h in self.host_cap}
        self.log_seen = 0
        self.drained = {}  # host -> job id, replayed from the policy's log
        self.violations = []
        self.starts = 0

    def cls(self, job):
        c = self._cls.get(job.id, False)
        if c is False:
            c = self._cls[job.id] = classify(job.spec, self.tc, self.sc)
        return c

    def on_arrival(self, job, now):
        self.waiting[job.id] = job

    def on_allocation(self, job, now):
        self.waiting.pop(job.id, None)
        h = job.host
        self.running[h].add(job.id)
        self.starts += 1
        cls = self.cls(job)
        if cls is None or h not in self.hosts:
            self.violations.append(f"job {job.id} ({cls}) started on {h}")
            return
        if cls[1] not in self.hosts[h]["priority"]:
            self.violations.append(f"job {job.id} {cls} on {h}, which does not serve {cls[1]}")
        self._replay(now, job)
        if h in self.drained and self.drained[h] != job.id:
            self.violations.append(f"t={now}: {h} drained for {self.drained[h]} started {job.id}")
        self._check_choice(job, now)
        for k in keys_of(cls):
            self.running_host[h][k] += 1
            self.running_sys[k] += 1
            lim = self.hosts[h].get("limits", {}).get(k)
            if lim is not None and self.running_host[h][k] > lim:
                self.violations.append(f"t={now}: {h} runs {self.running_host[h][k]} {k} > {lim}")
            lim = self.sys_limits.get(k)
            if lim is not None and self.running_sys[k] > lim:
                self.violations.append(f"t={now}: machine runs {self.running_sys[k]} {k} > {lim}")
        user = job.spec.user
        self.running_user[user] += 1
        if self.user_limit and user >= 0 and self.running_user[user] > self.user_limit:
            self.violations.append(f"t={now}: user {user} runs {self.running_user[user]} jobs")
        if job.submit > now:
            self.violations.append(f"job {job.id} started before it arrived")

    def _check_choice(self, job, now):
        """The started job is its host's nominee, the earliest-submitted nominee of all hosts,
        and no other host nominating it has more free processors."""
        h = job.host
        noms = {x: self.would_start(x, back=job) for x in self.hosts}
        if noms[h] is not job:
            got = noms[h].id if noms[h] is not None else None
            self.violations.append(f"t={now}: {h} started {job.id}, the rules choose {got}")
        for x, n in noms.items():
            if n is not None and (n.submit, n.id) < (job.submit, job.id):
                self.violations.append(f"t={now}: {job.id} started before {n.id} (on {x})")
            free = self.sim.hosts[x].free_procs + (job.spec.procs if x == h else 0)
            mine = self.sim.hosts[h].free_procs + job.spec.procs
            if n is job and free > mine:
                self.violations.append(f"t={now}: {job.id} on {h}, {x} had more free processors")

    def on_release(self, job, now):
        self.running[job.host].discard(job.id)
        cls = self.cls(job)
        for k in keys_of(cls):
            self.running_host[job.host][k] -= 1
            self.running_sys[k] -= 1
        self.running_user[job.spec.user] -= 1

    def on_end(self, job, now):
        self.waiting.pop(job.id, None)

    def _replay(self, now, job=None):
        """Apply the policy's drain log up to the start of ``job`` (which must be next)."""
        log = self.policy.log
        while self.log_seen < len(log):
            t, event, host, jid = log[self.log_seen]
            self.log_seen += 1
            if event == "drain":
                if host in self.drained:
                    self.violations.append(f"t={t}: {host} drained twice")
                if jid in self.drained.values():
                    self.violations.append(f"t={t}: job {jid} drains two hosts")
                self.drained[host] = jid
            elif event.startswith("undrain"):
                if self.drained.get(host) != jid:
                    self.violations.append(f"t={t}: undrain of {host} by {jid} not drained")
                self.drained.pop(host, None)
            elif event == "start":
                if job is None or (host, jid) != (job.host, job.id):
                    self.violations.append(f"t={t}: log start {jid} on {host} is not {job}")
                return

    def on_pass(self, now, n):
        self._replay(now)
        for h, lsf in self.hosts.items():
            if self.running[h] or h in self.policy.drains:
                continue
            cap = self.host_cap[h]
            for job in self.waiting.values():
                if job.state is not JobState.QUEUED:
                    continue
                cls = self.cls(job)
                if cls is None or cls[1] not in lsf["priority"]:
                    continue
                if job.spec.procs > cap.procs or job.spec.mem > cap.memory:
                    continue
                keys = keys_of(cls)
                if any(lsf.get("limits", {}).get(k) == 0 for k in keys):
                    continue
                if any(
                    self.sys_limits.get(k) is not None and self.running_sys[k] >= self.sys_limits[k]
                    for k in keys
                ):
                    continue
                u = job.spec.user
                if self.user_limit and u >= 0 and self.running_user[u] >= self.user_limit:
                    continue
                self.violations.append(f"t={now}: {h} is empty but job {job.id} {cls} waits")
                return
        for h in self.hosts:
            job = self.would_start(h)
            if job is not None:
                self.violations.append(f"t={now}: {h} could still start job {job.id}")

    def eligible(self, job, h):
        cls = self.cls(job)
        lsf, cap = self.hosts[h], self.host_cap[h]
        if cls is None or job.spec.procs > cap.procs or job.spec.mem > cap.memory:
            return False
        for k in keys_of(cls):
            lim = lsf.get("limits", {}).get(k)
            if lim is not None and self.running_host[h][k] >= lim:
                return False
            lim = self.sys_limits.get(k)
            if lim is not None and self.running_sys[k] >= lim:
                return False
        u = job.spec.user
        return not (self.user_limit and u >= 0 and self.running_user[u] >= self.user_limit)

    def would_start(self, h, back=None):
        """The job host ``h`` could start now by T§3.1's rules, or None.

        ``back``: a job that has just started, put back in the queue with its
        resources, to ask what the rules allowed at the moment of its start.
        """
        free_p, free_m = self.sim.hosts[h].free_procs, self.sim.hosts[h].free_mem
        queue = list(self.sim.queue)  # submission order
        if back is not None:
            queue = sorted([*queue, back], key=lambda j: (j.submit, j.id))
            if back.host == h:
                free_p, free_m = free_p + back.spec.procs, free_m + back.spec.mem
        drained = self.drained.get(h)
        if free_p <= 0:
            return None
        if drained is not None:
            job = self.sim.jobs[drained]
            fits = job.spec.procs <= free_p and job.spec.mem <= free_m
            return job if fits and self.eligible(job, h) else None
        blocked_vst = False
        for s in self.hosts[h]["priority"]:
            mine = [j for j in queue if self.cls(j) and self.cls(j)[1] == s]
            ordered = [j for j in mine if self.cls(j)[0] in self.first]
            ordered += [j for j in mine if self.cls(j)[0] not in self.first]
            block_all = block_vst = False
            for j in ordered:
                is_vst = self.cls(j)[0] in self.first
                if (is_vst and blocked_vst) or not self.eligible(j, h):
                    continue
                if j.spec.procs <= free_p and j.spec.mem <= free_m:
                    return j
                if not is_vst:
                    block_all = True
                elif self.vst_blocks_vst:
                    block_vst = True
            if block_all:
                return None
            blocked_vst = blocked_vst or block_vst
        return None


def check_run(machine, specs, seed=0, user_limit=None, **params):
    policy = NCSALSF(user_limit=user_limit, **params)
    policy.log = []
    ul = machine.params["lsf"].get("user_limit", 0) if user_limit is None else user_limit
    checker = Checker(machine, policy, ul, params.get("vst_blocking", "same-time-class"))
    sim = Simulation(machine, specs, policy, observers=[checker], rng=np.random.default_rng(seed))
    checker.sim = sim
    sim.run()
    table = jobs_table(list(sim.jobs.values()))
    assert checker.violations == [], checker.violations[:5]
    assert set(table["status"]) <= {"completed", "rejected"}
    rejected = table.loc[table["status"] == "rejected"]
    assert (rejected["reason"].str.len() > 0).all()
    assert len(table) == len(specs)
    assert sum(1 for e in policy.log if e[1] == "start") == checker.starts
    return table, policy


# ------------------------------------------------------------------------------- strategies
SIZES = ("lj", "mj", "sj")
LIMIT_KEYS = ("lj", "mj", "sj", "all", "mt", "st_sj", "vst_lj")


@st.composite
def machines(draw):
    n = draw(st.integers(2, 3))
    hosts = []
    for i in range(n):
        prio = draw(st.permutations(SIZES))[: draw(st.integers(1, 3))]
        keys = draw(st.lists(st.sampled_from(LIMIT_KEYS), max_size=3, unique=True))
        limits = {k: draw(st.integers(1, 3)) for k in keys}
        hosts.append(
            {
                "name": f"h{i}",
                "procs": draw(st.sampled_from([4, 8])),
                "memory_gb": draw(st.sampled_from([2, 4, 8])),
                "lsf": {"priority": list(prio), "limits": limits},
            }
        )
    sys_keys = draw(
        st.lists(st.sampled_from(("mt", "lt", "lj", "vst_sj")), max_size=2, unique=True)
    )
    lsf = {
        "time_classes": TIME,
        "size_classes": SIZE,
        "drain_wait": {t: draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, math.inf])) for t in TIME},
        "system_limits": {k: draw(st.integers(1, 3)) for k in sys_keys},
        "user_limit": draw(st.integers(0, 2)),
    }
    return parse_machine({"name": "random", "lsf": lsf, "host": hosts}, "random.toml")


@st.composite
def workloads(draw):
    n = draw(st.integers(5, 40))
    t = 0.0
    specs = []
    for i in range(n):
        t += draw(st.floats(0, 0.5))
        req = draw(st.sampled_from([0.2, 0.9, 1.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 17.0]))
        run = req * draw(st.floats(0.05, 1.2))
        specs.append(
            JobSpec(
                i,
                round(t * H),
                draw(st.integers(1, 8)),
                int(draw(st.sampled_from([0, 0.5, 1, 1.5, 2, 3, 4])) * KB_PER_GB),
                req * H,
                round(run * H) + 1,
                user=draw(st.integers(-1, 3)),
            )
        )
    return specs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    machines(),
    workloads(),
    st.integers(0, 2**16),
    st.sampled_from([None, 0, 1, 2]),
    st.sampled_from(["same-time-class", "never"]),
)
def test_invariants_on_random_configurations(machine, specs, seed, user_limit, vst_blocking):
    check_run(machine, specs, seed=seed, user_limit=user_limit, vst_blocking=vst_blocking)


@settings(max_examples=12, deadline=None)
@given(machines(), workloads(), st.integers(0, 2**16))
def test_same_seed_same_schedule(machine, specs, seed):
    a, _ = check_run(machine, specs, seed=seed)
    b, _ = check_run(machine, specs, seed=seed)
    assert a[["job_id", "start", "host"]].equals(b[["job_id", "start", "host"]])


def heavy_workload(rng, n, max_procs, max_gb, scale_h=1.0, gap_h=0.15):
    """A seeded overloaded workload with many long waits, so that hosts get drained."""
    t = 0.0
    specs = []
    for i in range(n):
        t += rng.exponential(gap_h)
        req = float(rng.choice([0.5, 1, 3, 4, 6, 8, 12, 16])) * scale_h
        specs.append(
            JobSpec(
                i,
                t * H,
                int(rng.choice([1, 1, 2, 4, 8, max_procs])),
                int(rng.choice([0, 0.5, 1, 2, 4, max_gb]) * KB_PER_GB),
                req * H,
                max(1.0, req * rng.uniform(0.1, 1.0) * H),
                user=int(rng.integers(0, 5)),
            )
        )
    return specs


def test_invariants_with_frequent_draining():
    lsf = {
        "time_classes": TIME,
        "size_classes": SIZE,
        "drain_wait": {"vst": 0.5, "st": 1, "mt": 2, "lt": 3},
        "system_limits": {"mt": 2, "lt": 1},
        "user_limit": 0,
    }
    hosts = [
        {
            "name": "a",
            "procs": 8,
            "memory_gb": 8,
            "lsf": {"priority": ["lj", "mj", "sj"], "limits": {"lj": 1, "mj": 2}},
        },
        {
            "name": "b",
            "procs": 8,
            "memory_gb": 4,
            "lsf": {"priority": ["lj", "mj", "sj"], "limits": {"lj": 2}},
        },
        {"name": "c", "procs": 4, "memory_gb": 4, "lsf": {"priority": ["sj"]}},
    ]
    machine = parse_machine({"name": "t", "lsf": lsf, "host": hosts}, "t.toml")
    specs = heavy_workload(np.random.default_rng(3), 400, 8, 4)
    table, policy = check_run(machine, specs, seed=1)
    c = policy.counters
    assert c["drains"] > 20
    assert c["drains_lost"] > 0 and c["drains_moved"] > 0 and c["drains_started"] > 0
    assert (table["status"] == "completed").sum() > 350


def test_invariants_on_the_o2k_machine():
    machine = load_machine("o2k")
    specs = heavy_workload(np.random.default_rng(11), 600, 64, 16, scale_h=12, gap_h=0.3)
    table, policy = check_run(machine, specs, seed=5)
    assert policy.counters["drains"] > 0
    assert (table["status"] == "completed").sum() > 500
