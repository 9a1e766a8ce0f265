"""The NCSA-LSF* policy object: filing jobs, draining, the pass loop (rules in ``rules``)."""

from __future__ import annotations

import heapq
import math
from collections import Counter, defaultdict
from typing import Any, ClassVar

import numpy as np

from o2ksim.engine.decisions import Reserve, Start, WakeAt
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.machine import KB_PER_GB, MachineSpec
from o2ksim.policies.base import POLICIES, Param, Policy
from o2ksim.policies.lsf.classes import HOUR, LSFConfig, LSFHost, label, lsf_config
from o2ksim.policies.lsf.rules import PassRules, QueuedJob, QueuePart, QueueState
from o2ksim.policies.quiet import proved_for

WAKE_TAG = "lsf-drain-wait"
#: The methods a pass decides with; a subclass that overrides one gets no quiet promise.
_DECIDES = ("schedule", "_sync", "_sync_running", "_refresh_drains", "_assign_drains",
            "_start_arrivals", "_account_idle", "_remember_idle")  # fmt: skip


class NCSALSF(Policy):
    """NCSA-LSF*: static job classes, per-host class priority and limits, draining."""

    kind = "ncsa-lsf"
    description = (
        "NCSA-LSF*: job classes by runtime and size, per-host priority lj > mj > sj with class "
        "limits, blocking, and draining after a per-class wait"
    )
    source = "T§3.1, T Tables 3-4"
    PARAMS: ClassVar[dict[str, Param]] = {
        "user_limit": Param(
            int,
            None,
            "most running jobs per user; 0 = unlimited; unset = the machine's [lsf].user_limit",
            check=lambda v: v >= 0,
            check_help="must be >= 0",
        ),
        "draining": Param(bool, True, "give long-waiting jobs draining priority on a host"),
        "vst_blocking": Param(
            str,
            "same-time-class",
            "what a vst job that cannot start blocks: only vst jobs of lower size classes "
            "(same-time-class) or nothing (never)",
            choices=("same-time-class", "never"),
        ),
        "size_blocking": Param(
            str,
            "lower-classes",
            "what a non-vst job of the size class with priority that cannot start blocks: the "
            "lower size classes on that host (lower-classes, T§3.1) or nothing (never: a "
            "diagnostic ablation, not a reading of the text; docs/background/fidelity/priorities.md)",
            choices=("lower-classes", "never"),
        ),
        "arrival_blocking": Param(
            str,
            "obey",
            "whether a job starts at its arrival on a host where a waiting job of a higher size "
            "class blocks its class (obey: it waits, the default) or not (ignore: the arrival rule "
            "checks only free resources, the host's size classes and the limits; an ablation, "
            "docs/background/fidelity/priorities.md)",
            choices=("obey", "ignore"),
        ),
    }

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        self.config: LSFConfig | None = None
        self.user_limit = 0
        # drain counts, and idle processor-seconds (a float)
        self.counters: defaultdict[str, float] = defaultdict(int)
        self.log: list[tuple[float, str, str, int]] | None = None
        """Set to a list before a run to record ``(time, event, host, job id)``: every start
        and every drain event (``drain``, ``undrain-started``, ``undrain-lost``,
        ``undrain-moved``).  Tests replay it to check the draining invariants."""
        self._reset()

    def _reset(self) -> None:
        self._class: dict[int, tuple[str, str]] = {}
        self._entries: dict[int, QueuedJob] = {}
        sizes = [s for s, _p, _m in self.config.size_classes] if self.config else []

        self._pending: list[tuple[float, float, int]] = []  # heap of future drain deadlines
        self._overdue: dict[tuple[str, str], dict[int, QueuedJob]] = {}  # deadline order
        self._drain_host: dict[int, str] = {}  # job id -> drained host
        self._wakes: list[float] = []
        self._idle_since: dict[str, tuple[float, float]] = {}
        self.counters = defaultdict(int)
        # running jobs per limit key, per host and in the machine, and per user
        self._running: dict[int, tuple[str, tuple[str, str], int]] = {}
        hosts = [h.name for h in self.config.hosts] if self.config else []
        # what the pass rules read (rules.QueueState): filed jobs, drains, running counts
        self.state = QueueState(
            parts={s: (QueuePart(), QueuePart()) for s in sizes},
            host_counts={h: Counter() for h in hosts},
        )

    def bind(self, machine: MachineSpec, rng: np.random.Generator | None = None) -> None:
        """Read the machine's LSF tables (a clear ConfigError when absent) and reset run state."""
        super().bind(machine, rng)
        self.config = lsf_config(machine)
        limit = self.params["user_limit"]
        self.user_limit = self.config.user_limit if limit is None else limit
        self._reset()

    def stats(self) -> dict[str, float]:
        """Drain counters of the run (T§3.1): drains given, started, lost, idle processor-seconds."""
        return dict(self.counters)

    @property
    def drains(self) -> dict[str, int]:
        """The hosts drained right now: host name -> job id."""
        return {h: e.id for h, e in self.state.drained.items()}

    def _cfg(self) -> LSFConfig:
        if self.config is None:
            raise RuntimeError("NCSA-LSF* policy used before bind(machine)")
        return self.config

    def job_class(self, job: Job) -> tuple[str, str] | None:
        """``(time class, size class)`` of ``job`` (cached), or ``None`` if it fits no class."""
        cls = self._class.get(job.id)
        if cls is None:
            spec = job.spec
            cls = self._cfg().classify(spec.procs, spec.mem, spec.req_time)
            if cls is not None:
                self._class[job.id] = cls
        return cls

    def admit(self, job: Job) -> str | None:
        """Why LSF can never run ``job``: no class fits it, or no host or limit allows its class."""
        cfg = self._cfg()
        spec = job.spec
        if cfg.time_class(spec.req_time) is None:
            name, bound = cfg.time_classes[-1]
            return (
                f"requested runtime {spec.req_time / HOUR:.4g} h is longer than the longest "
                f"LSF time class ({name} <= {bound / HOUR:g} h)"
            )
        if cfg.size_class(spec.procs, spec.mem) is None:
            name, p, m = cfg.size_classes[-1]
            return (
                f"requests {spec.procs} processors and {spec.mem / KB_PER_GB:.3g} GB; the largest "
                f"LSF size class ({name}) allows {p} processors and {m / KB_PER_GB:g} GB"
            )
        cls = self.job_class(job)
        assert cls is not None
        keys = cfg.limit_keys(cls)
        zero = [k for k in keys if cfg.system_limits.get(k) == 0]
        if zero:
            return f"the system-wide LSF limit for {zero[0]} is 0"
        for h in cfg.hosts:
            if (
                cls[1] in h.priority
                and spec.procs <= h.procs
                and spec.mem <= h.memory
                and all(h.limits.get(k) != 0 for k in keys)
            ):
                return None
        return (
            f"no LSF host serves {label(*cls)} jobs of {spec.procs} processors and "
            f"{spec.mem / KB_PER_GB:.3g} GB"
        )

    # --------------------------------------------------------------------------- the queue
    def _file(self, job: Job) -> None:
        """Add a newly queued job to its class's part and its drain deadline to the heap."""
        cls = self.job_class(job)
        if cls is None:  # admit() rejects these, so only a misused policy gets here
            raise RuntimeError(f"job {job.id} fits no LSF class but was admitted")
        cfg = self._cfg()
        deadline = job.spec.submit + cfg.drain_wait[cls[0]]
        e = QueuedJob(job, cls, cls[0] in cfg.first, deadline)
        self._entries[e.id] = e
        self.state.parts[cls[1]][0 if e.first else 1].add(e)
        if self.params["draining"] and math.isfinite(deadline):
            heapq.heappush(self._pending, (deadline, e.submit, e.id))

    def _unfile(self, e: QueuedJob) -> None:
        del self._entries[e.id]
        self.state.parts[e.cls[1]][0 if e.first else 1].remove(e)
        group = self._overdue.get(e.cls)
        if group is not None:
            group.pop(e.id, None)

    def _sync(self, snap: Snapshot) -> None:
        """Bring the filed queue up to date with the snapshot (arrivals; a rebuild if needed)."""
        for job in snap.arrived:
            if job.state is JobState.QUEUED and job.id not in self._entries:
                self._file(job)
        if len(self._entries) != len(snap.queue):  # something left the queue behind our back
            queued = {j.id for j in snap.queue}
            for e in [e for e in self._entries.values() if e.id not in queued]:
                self._unfile(e)
                if e.id in self._drain_host:
                    self._undrain(e, snap.now, "gone")
            for job in snap.queue:
                if job.id not in self._entries:
                    self._file(job)
            order = {j.id: i for i, j in enumerate(snap.queue)}
            for pair in self.state.parts.values():
                for part in pair:
                    part.jobs = dict(sorted(part.jobs.items(), key=lambda kv: order[kv[0]]))
        due = self._due(snap)
        pending = self._pending
        while pending and pending[0][0] <= due:
            _d, _s, job_id = heapq.heappop(pending)
            overdue = self._entries.get(job_id)
            if overdue is not None:
                self._overdue.setdefault(overdue.cls, {})[job_id] = overdue

    def _count(self, host: str, cls: tuple[str, str], user: int, n: int) -> None:
        hc = self.state.host_counts.get(host)
        for k in self._cfg().limit_keys(cls):
            self.state.sys_counts[k] += n
            if hc is not None:
                hc[k] += n
        self.state.user_counts[user] += n

    def _sync_running(self, snap: Snapshot) -> None:
        """Keep the running counts: drop departed jobs; recount if they disagree with the hosts."""
        for job in snap.departed:
            run = self._running.pop(job.id, None)
            if run is not None:
                self._count(*run, -1)
        if len(self._running) != sum(len(hv.running) for hv in snap.hosts):
            self._running.clear()
            for counts in self.state.host_counts.values():
                counts.clear()
            self.state.sys_counts.clear()
            self.state.user_counts.clear()
            for hv in snap.hosts:
                for job in hv.running:
                    cls = self.job_class(job)
                    if cls is not None:
                        self._running[job.id] = (hv.name, cls, job.spec.user)
                        self._count(hv.name, cls, job.spec.user, 1)

    @staticmethod
    def _due(snap: Snapshot) -> float:
        """Drain deadlines up to this time have passed: now, or the exact time of our timer.

        (The engine reaches a timer at ``now + (time - now)``, which floating point
        may put one ulp before ``time``.)
        """
        return max([snap.now, *(t.time for t in snap.timers if t.tag == WAKE_TAG)])

    def _next_deadline(self) -> float | None:
        pending = self._pending
        while pending and pending[0][2] not in self._entries:
            heapq.heappop(pending)
        return pending[0][0] if pending else None

    # --------------------------------------------------------------------------- a pass
    def schedule(self, snap: Snapshot) -> list[Any]:
        cfg = self._cfg()
        now = snap.now
        due = self._due(snap)
        self._wakes = [w for w in self._wakes if w > due]
        self._account_idle(snap)
        self._sync(snap)
        self._sync_running(snap)
        p = PassRules(self._cfg(), self.state, snap, self.user_limit,
                      self.params["vst_blocking"] == "same-time-class",
                      self.params["size_blocking"] == "lower-classes")  # fmt: skip
        decisions: list[Any] = []
        draining = self.params["draining"]
        if self.params["arrival_blocking"] == "ignore":
            self._start_arrivals(p, snap, decisions)
        while True:
            if draining:
                self._refresh_drains(p, now)
                if self._overdue and len(self.state.drained) < len(cfg.hosts):
                    self._assign_drains(p, now, decisions)
            nominated: dict[int, tuple[QueuedJob, list[LSFHost]]] = {}
            for h in cfg.hosts:
                e = p.nominate(h)
                if e is not None:
                    nominated.setdefault(e.id, (e, []))[1].append(h)
            if not nominated:
                break
            e, hosts = min(nominated.values(), key=lambda x: (x[0].submit, x[0].id))
            host = max(hosts, key=lambda h: p.free[h.name][0])
            self._start(p, e, host, now, self._note(e, host), decisions)
        if draining:
            self._remember_idle(p, now)
            wake = self._next_deadline()
            if wake is not None and (not self._wakes or wake < min(self._wakes)):
                self._wakes.append(wake)
                decisions.append(WakeAt(wake, tag=WAKE_TAG))
        return decisions

    def quiet_until(self, snap: Snapshot) -> float:
        """The next drain deadline (``inf`` without draining), while no drained host has idle
        processors; ``snap.now`` (no promise) otherwise (:mod:`o2ksim.policies.quiet`)."""
        if snap.explain or not proved_for(self, NCSALSF, *_DECIDES):
            return snap.now
        if any(idle for _since, idle in self._idle_since.values()):
            return snap.now  # their idle processor-seconds are summed pass by pass
        wake = self._next_deadline() if self.params["draining"] else None
        return math.inf if wake is None else max(wake, snap.now)

    def _start(
        self,
        p: PassRules,
        e: QueuedJob,
        host: LSFHost,
        now: float,
        note: str,
        decisions: list[Any],
    ) -> None:
        """Start ``e`` on ``host``: the decision, the pass's free resources and the counts."""
        decisions.append(Start(e.job, host.name, note=note))
        p.start(e, host)
        self._unfile(e)
        self._running[e.id] = (host.name, e.cls, e.user)
        self._count(host.name, e.cls, e.user, 1)
        if self.log is not None:
            self.log.append((now, "start", host.name, e.id))
        if e.id in self._drain_host:
            self._undrain(e, now, "started")

    def _start_arrivals(self, p: PassRules, snap: Snapshot, decisions: list[Any]) -> None:
        """``arrival_blocking = "ignore"``: each job that has just arrived starts, in arrival
        order, on the undrained host with the most free processors among those that serve its
        size class, whose limits allow it and that have its processors and memory free now --
        whether or not a higher size class waits there (T§3.1 read literally: "When a job
        arrives, if more than one host has enough free processors and memory (and the required
        priority and quota) to start the job, the job is started on the host with the largest
        number of free processors"; the blocking sentence belongs to the departure rule)."""
        drained = self.state.drained
        for job in sorted(snap.arrived, key=lambda j: (j.spec.submit, j.id)):
            e = self._entries.get(job.id)
            if e is None:
                continue
            hosts = [
                h for h in self._cfg().hosts
                if h.name not in drained and e.cls[1] in h.priority and p.eligible(e, h)
                and e.procs <= p.free[h.name][0] and e.mem <= p.free[h.name][1]
            ]  # fmt: skip
            if hosts:
                host = max(hosts, key=lambda h: p.free[h.name][0])
                note = f"{label(*e.cls)}: started at its arrival (arrival_blocking = ignore)"
                self._start(p, e, host, snap.now, note, decisions)

    def _note(self, e: QueuedJob, host: LSFHost) -> str:
        if self.state.drained.get(host.name) is e:
            return f"{label(*e.cls)}: draining priority on {host.name}"
        return (
            f"{label(*e.cls)}: first eligible job of the size class with priority on {host.name} "
            f"({' > '.join(host.priority)}); host with the most free processors"
        )

    # --------------------------------------------------------------------------- draining
    def _refresh_drains(self, p: PassRules, now: float) -> None:
        """Drop drains whose job hit a limit or lost its size class's priority on the host."""
        hosts = {h.name: h for h in self._cfg().hosts}
        for hname, e in list(self.state.drained.items()):
            if not p.system_ok(e):
                self._undrain(e, now, "lost")  # a system-wide (or user) limit is reached
            elif not p.has_priority(e, hosts[hname]):
                self._undrain(e, now, "moved")  # _assign_drains drains another host for it

    def _assign_drains(self, p: PassRules, now: float, decisions: list[Any]) -> None:
        """Give draining priority to overdue jobs, earliest drain deadline first.

        Each gets a random host among those drained for no job where its size
        class has priority, its class is within the host's limits, and it fits
        the host at all.  A job with no such host tries again at later passes.
        """
        cfg = self._cfg()
        free_hosts = [h for h in cfg.hosts if h.name not in self.state.drained]
        while free_hosts:
            best: tuple[QueuedJob, list[LSFHost]] | None = None
            for cls, group in self._overdue.items():
                if not group or not p.class_ok(cls):
                    continue
                hosts = [h for h in free_hosts if p.class_has_priority(h, cls)]
                if not hosts:
                    continue
                for e in group.values():
                    if e.id in self._drain_host or not p.user_ok(e):
                        continue
                    valid = [h for h in hosts if e.procs <= h.procs and e.mem <= h.memory]
                    if valid:
                        if best is None or (e.deadline, e.submit, e.id) < (
                            best[0].deadline,
                            best[0].submit,
                            best[0].id,
                        ):
                            best = (e, valid)
                        break
            if best is None:
                return
            e, valid = best
            host = valid[int(self.rng.integers(len(valid)))]
            free_hosts.remove(host)
            self.state.drained[host.name] = e
            self._drain_host[e.id] = host.name
            self.counters["drains"] += 1
            if self.log is not None:
                self.log.append((now, "drain", host.name, e.id))
            if p.snap.explain:
                decisions.append(
                    Reserve(e.job, host.name, now, note=f"{label(*e.cls)}: draining priority")
                )

    def _undrain(self, e: QueuedJob, now: float, why: str) -> None:
        host = self._drain_host.pop(e.id)
        del self.state.drained[host]
        self.counters[f"drains_{why}"] += 1
        if self.log is not None:
            self.log.append((now, f"undrain-{why}", host, e.id))

    def _account_idle(self, snap: Snapshot) -> None:
        """Add the processor-time left idle on drained hosts since the previous pass."""
        for since, idle in self._idle_since.values():
            self.counters["drain_idle_proc_seconds"] += idle * (snap.now - since)
        self._idle_since = {}

    def _remember_idle(self, p: PassRules, now: float) -> None:
        self._idle_since = {h: (now, p.free[h][0]) for h in self.state.drained}


POLICIES.register(NCSALSF)
