"""NCSA-LSF*: the static multi-class priority scheduler of the NCSA Origin 2000 (T§3.1).

The thesis's baseline (T§3.1, Tables 3-4; SPEC §3.2).  Every job is put in a
*time class* by its requested runtime (``vst`` <= 5 h, ``st`` <= 50 h,
``mt`` <= 200 h, ``lt`` <= 400 h) and a *size class* by its requested
processors and memory (``sj`` <= 8 and 2 GB, ``mj`` <= 16 and 4 GB, ``lj`` <= 64
and 16 GB).  The class definitions, the per-host priorities and limits and the
system-wide limits are data: the ``[lsf]`` and ``[host.lsf]`` tables of the
machine file (``hosts/o2k.toml``), so a site retunes them without code.

One scheduling pass repeats, until nothing more starts:

1. *draining* (T§3.1, last paragraphs): a job that has waited its time class's
   drain wait gets draining priority on a random host (the run's generator)
   that is drained for no other job and where its size class has scheduling
   priority; a drained host starts nothing but that job.  The job loses
   draining when a system-wide (or user) limit that applies to it is reached,
   and moves to another host when its size class loses priority on the drained
   host (a higher size class has an eligible waiting job there);
2. *nomination*: each host walks its size classes in priority order (eir:
   ``lj > mj > sj``), inside each class the priority time classes (``vst``)
   first and then first-come first-served, skipping jobs that are over a
   limit; the first job that fits now is the host's candidate.  A job of the
   class with priority that does not fit *blocks* the lower size classes
   (other jobs of its own size class may still start); a ``vst`` job blocks
   only ``vst`` jobs of lower size classes (``vst_blocking``);
3. *start*: the earliest submitted candidate starts, on the host with the most
   free processors among those that nominated it (the arrival rule).

``docs/background/policies/ncsa-lsf.md`` gives the rules with a worked example
and every interpretation made where the thesis is silent.
:func:`lsf_class_table` gives the per-class average and maximum wait of the
thesis's Figures 5-6 for any run.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from o2ksim.engine.decisions import Reserve, Start, WakeAt
from o2ksim.engine.snapshot import Snapshot
from o2ksim.errors import ConfigError
from o2ksim.jobs import Job, JobState
from o2ksim.machine import KB_PER_GB, KB_PER_MB, MachineSpec, load_machine
from o2ksim.policies.base import POLICIES, Param, Policy

HOUR = 3600.0
DOC = "docs/background/policies/ncsa-lsf.md"
UNCLASSIFIED = "unclassified"
WAKE_TAG = "lsf-drain-wait"


# ------------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class LSFHost:
    """One host's LSF configuration (a ``[host.lsf]`` table).

    ``priority``: the size classes the host serves, highest priority first.
    ``limits``: most running jobs per limit key (``"lj"``, ``"mt"``, ``"st_sj"``
    or ``"all"``) on this host; a key not given is unlimited.
    """

    name: str
    procs: int
    memory: float
    priority: tuple[str, ...]
    limits: Mapping[str, int]


@dataclass(frozen=True)
class LSFConfig:
    """The validated LSF tables of a machine (thesis Tables 3 and 4).

    ``time_classes``: ``(name, longest requested runtime in seconds)``,
    shortest first.  ``size_classes``: ``(name, most processors, most memory
    KB)``, smallest first.  ``drain_wait``: seconds per time class (``inf`` =
    never drains).  ``system_limits``: most running jobs in the whole machine
    per limit key.  ``user_limit``: most running jobs per user (0 =
    unlimited).  ``first``: the time classes served first inside each size
    class (``vst``).  ``hosts``: the hosts LSF dispatches to, machine order.
    """

    time_classes: tuple[tuple[str, float], ...]
    size_classes: tuple[tuple[str, int, float], ...]
    drain_wait: Mapping[str, float]
    system_limits: Mapping[str, int]
    user_limit: int
    first: frozenset[str]
    hosts: tuple[LSFHost, ...]
    source: str = ""
    _keys: dict[tuple[str, str], tuple[str, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def time_class(self, req_time: float) -> str | None:
        """The time class of a requested runtime (seconds), or ``None`` if longer than all."""
        for name, bound in self.time_classes:
            if req_time <= bound:
                return name
        return None

    def size_class(self, procs: int, mem_kb: float) -> str | None:
        """The smallest size class holding ``procs`` processors and ``mem_kb`` KB, or ``None``."""
        for name, p, m in self.size_classes:
            if procs <= p and mem_kb <= m:
                return name
        return None

    def classify(self, procs: int, mem_kb: float, req_time: float) -> tuple[str, str] | None:
        """``(time class, size class)`` of a request, or ``None`` when it fits no class."""
        t = self.time_class(req_time)
        s = self.size_class(procs, mem_kb)
        return None if t is None or s is None else (t, s)

    def class_names(self) -> list[str]:
        """Every class label (``vst_sj``...), size-major as in thesis Table 6."""
        return [label(t, s) for s, _p, _m in self.size_classes for t, _b in self.time_classes]

    def limit_keys(self, cls: tuple[str, str]) -> tuple[str, ...]:
        """The limit keys that count a job of class ``cls``: time, size, both, ``all``."""
        keys = self._keys.get(cls)
        if keys is None:
            keys = (cls[0], cls[1], label(*cls), "all")
            self._keys[cls] = keys
        return keys


def label(time_class: str, size_class: str) -> str:
    """The class label of thesis Table 6, e.g. ``vst_sj``."""
    return f"{time_class}_{size_class}"


def lsf_config(machine: MachineSpec) -> LSFConfig:
    """Read and validate a machine's ``[lsf]`` and ``[host.lsf]`` tables.

    Raises :class:`ConfigError` naming the machine file and the key.  A
    machine without an ``[lsf]`` table (e.g. one host derived from a trace
    header) is an error: NCSA-LSF* has no meaning without its classes.  Hosts
    without a ``[host.lsf]`` table (the dedicated hosts of ``o2k-full``) are
    not used by NCSA-LSF*.
    """
    path = machine.source or machine.name
    table = machine.params.get("lsf")
    if table is None:
        raise ConfigError(
            path,
            f"machine '{machine.name}' has no [lsf] table; NCSA-LSF* needs the job classes "
            f"and limits (see hosts/o2k.toml and {DOC})",
            field="lsf",
        )
    lsf = _table(table, path, "lsf")
    known = {
        "time_classes",
        "size_classes",
        "drain_wait",
        "system_limits",
        "user_limit",
        "priority_time_classes",
    }
    _no_unknown(lsf, known, path, "lsf")
    for key in ("time_classes", "size_classes", "drain_wait"):
        if key not in lsf:
            raise ConfigError(path, "missing (see hosts/o2k.toml)", field=f"lsf.{key}")

    tc = _table(lsf["time_classes"], path, "lsf.time_classes")
    if not tc:
        raise ConfigError(path, "needs at least one time class", field="lsf.time_classes")
    time_classes = sorted(
        ((str(k), _hours(v, path, f"lsf.time_classes.{k}") * HOUR) for k, v in tc.items()),
        key=lambda x: x[1],
    )
    if len({b for _n, b in time_classes}) != len(time_classes):
        raise ConfigError(path, "two time classes have the same bound", field="lsf.time_classes")

    sc = _table(lsf["size_classes"], path, "lsf.size_classes")
    if not sc:
        raise ConfigError(path, "needs at least one size class", field="lsf.size_classes")
    size_classes = []
    for k, v in sc.items():
        where = f"lsf.size_classes.{k}"
        if not (isinstance(v, list) and len(v) == 2):
            raise ConfigError(path, f"must be [processors, GB], got {v!r}", field=where)
        procs = _count(v[0], path, where, positive=True)
        gb = _hours(v[1], path, where)  # a positive number; same check
        size_classes.append((str(k), procs, gb * KB_PER_GB))
    size_classes.sort(key=lambda x: (x[1], x[2]))
    for (a, pa, ma), (b, pb, mb) in itertools.pairwise(size_classes):
        if pb < pa or mb < ma:
            raise ConfigError(
                path,
                f"size class '{b}' must allow at least the processors and memory of '{a}'",
                field="lsf.size_classes",
            )

    t_names = [n for n, _ in time_classes]
    s_names = [n for n, _p, _m in size_classes]
    clash = set(t_names) & set(s_names) | ({"all"} & (set(t_names) | set(s_names)))
    if clash:
        raise ConfigError(
            path,
            f"class name(s) {', '.join(sorted(clash))} used twice (time, size, 'all')",
            field="lsf",
        )
    keys = {"all", *t_names, *s_names, *(label(t, s) for t in t_names for s in s_names)}

    dw = _table(lsf["drain_wait"], path, "lsf.drain_wait")
    _no_unknown(dw, set(t_names), path, "lsf.drain_wait")
    drain_wait = {}
    for t in t_names:
        if t not in dw:
            raise ConfigError(
                path,
                f"no drain wait for time class '{t}' (use inf for never)",
                field="lsf.drain_wait",
            )
        value = dw[t]
        if not _is_number(value) or value < 0 or math.isnan(value):
            raise ConfigError(
                path,
                f"must be hours >= 0 (inf = never), got {value!r}",
                field=f"lsf.drain_wait.{t}",
            )
        drain_wait[t] = float(value) * HOUR

    system_limits = _limits(lsf.get("system_limits", {}), keys, path, "lsf.system_limits")
    user_limit = _count(lsf.get("user_limit", 0), path, "lsf.user_limit")

    if "priority_time_classes" in lsf:
        first_list = lsf["priority_time_classes"]
        if not isinstance(first_list, list) or not all(isinstance(x, str) for x in first_list):
            raise ConfigError(
                path, "must be a list of time classes", field="lsf.priority_time_classes"
            )
        bad = set(first_list) - set(t_names)
        if bad:
            raise ConfigError(
                path,
                f"unknown time class(es) {', '.join(sorted(bad))} (known: {', '.join(t_names)})",
                field="lsf.priority_time_classes",
            )
        first = frozenset(first_list)
    else:
        first = frozenset({"vst"} & set(t_names))

    hosts = []
    for i, h in enumerate(machine.hosts):
        if "lsf" not in h.params:
            continue
        where = f"host[{i}].lsf"
        ht = _table(h.params["lsf"], path, where)
        _no_unknown(ht, {"priority", "limits"}, path, where)
        prio = ht.get("priority")
        if not isinstance(prio, list) or not prio or not all(isinstance(x, str) for x in prio):
            raise ConfigError(
                path,
                f"host '{h.name}': must be a non-empty list of size classes, highest first",
                field=f"{where}.priority",
            )
        bad = [x for x in prio if x not in s_names]
        if bad or len(set(prio)) != len(prio):
            what = f"unknown size class(es) {', '.join(bad)}" if bad else "a size class twice"
            raise ConfigError(
                path,
                f"host '{h.name}': {what} (known: {', '.join(s_names)})",
                field=f"{where}.priority",
            )
        limits = _limits(ht.get("limits", {}), keys, path, f"{where}.limits")
        hosts.append(LSFHost(h.name, h.procs, h.memory, tuple(prio), limits))
    if not hosts:
        raise ConfigError(
            path,
            f"machine '{machine.name}' has no host with a [host.lsf] table; NCSA-LSF* has nowhere to run jobs",
            field="host",
        )
    return LSFConfig(
        time_classes=tuple(time_classes),
        size_classes=tuple(size_classes),
        drain_wait=drain_wait,
        system_limits=system_limits,
        user_limit=user_limit,
        first=first,
        hosts=tuple(hosts),
        source=path,
    )


def _table(value: Any, path: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(path, f"must be a table, got {value!r}", field=where)
    return value


def _no_unknown(table: Mapping[str, Any], known: Iterable[str], path: str, where: str) -> None:
    unknown = set(table) - set(known)
    if unknown:
        raise ConfigError(
            path,
            f"unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(known))})",
            field=where,
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _hours(value: Any, path: str, where: str) -> float:
    if not _is_number(value) or not (0 < value < math.inf):
        raise ConfigError(path, f"must be a positive number, got {value!r}", field=where)
    return float(value)


def _count(value: Any, path: str, where: str, positive: bool = False) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < (1 if positive else 0):
        need = "a positive integer" if positive else "an integer >= 0"
        raise ConfigError(path, f"must be {need}, got {value!r}", field=where)
    return value


def _limits(value: Any, keys: set[str], path: str, where: str) -> dict[str, int]:
    table = _table(value, path, where)
    out = {}
    for k, v in table.items():
        key = str(k).replace("-", "_")
        if key not in keys:
            raise ConfigError(
                path,
                f"'{k}' is not a limit key (a time class, a size class, a class such as st_sj, or all)",
                field=where,
            )
        out[key] = _count(v, path, f"{where}.{k}")
    return out


# ------------------------------------------------------------------------------- the policy
class _Entry:
    """A queued job as the policy files it: its class and request, read once."""

    __slots__ = ("cls", "deadline", "first", "id", "job", "mem", "procs", "submit", "user")

    def __init__(self, job: Job, cls: tuple[str, str], first: bool, deadline: float) -> None:
        spec = job.spec
        self.job = job
        self.id = spec.job_id
        self.procs = spec.procs
        self.mem = spec.mem
        self.user = spec.user
        self.submit = spec.submit
        self.cls = cls
        self.first = first
        self.deadline = deadline


class _Part:
    """Queued jobs of one size class and one rank (priority time class or not), FCFS.

    ``min_procs``/``min_mem`` are lower bounds of the requests inside (they are
    not raised when a job leaves), so ``free < min`` proves that nothing fits.
    """

    __slots__ = ("classes", "jobs", "min_mem", "min_procs")

    def __init__(self) -> None:
        self.jobs: dict[int, _Entry] = {}
        self.classes: Counter[tuple[str, str]] = Counter()  # jobs inside per class
        self.min_procs: float = math.inf
        self.min_mem: float = math.inf

    def add(self, e: _Entry) -> None:
        self.jobs[e.id] = e
        self.classes[e.cls] += 1
        self.min_procs = min(self.min_procs, e.procs)
        self.min_mem = min(self.min_mem, e.mem)

    def remove(self, e: _Entry) -> None:
        del self.jobs[e.id]
        self.classes[e.cls] -= 1
        if not self.jobs:
            self.min_procs = self.min_mem = math.inf
            self.classes.clear()


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
    }

    def __init__(self, name: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        self.config: LSFConfig | None = None
        self.user_limit = 0
        self.counters: Counter[str] = Counter()
        self.log: list[tuple[float, str, str, int]] | None = None
        """Set to a list before a run to record ``(time, event, host, job id)``: every start
        and every drain event (``drain``, ``undrain-started``, ``undrain-lost``,
        ``undrain-moved``).  Tests replay it to check the draining invariants."""
        self._reset()

    def _reset(self) -> None:
        self._class: dict[int, tuple[str, str]] = {}
        self._entries: dict[int, _Entry] = {}
        sizes = [s for s, _p, _m in self.config.size_classes] if self.config else []
        self._parts: dict[str, tuple[_Part, _Part]] = {s: (_Part(), _Part()) for s in sizes}
        self._pending: list[tuple[float, float, int]] = []  # heap of future drain deadlines
        self._overdue: dict[tuple[str, str], dict[int, _Entry]] = {}  # deadline order
        self._drain_host: dict[int, str] = {}  # job id -> drained host
        self._drained: dict[str, _Entry] = {}  # host -> the job it is drained for
        self._wakes: list[float] = []
        self._idle_since: dict[str, tuple[float, int]] = {}
        self.counters = Counter()
        # running jobs per limit key, per host and in the machine, and per user
        self._running: dict[int, tuple[str, tuple[str, str], int]] = {}
        hosts = [h.name for h in self.config.hosts] if self.config else []
        self._host_counts: dict[str, Counter[str]] = {h: Counter() for h in hosts}
        self._sys_counts: Counter[str] = Counter()
        self._user_counts: Counter[int] = Counter()

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
        return {h: e.id for h, e in self._drained.items()}

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
        e = _Entry(job, cls, cls[0] in cfg.first, deadline)
        self._entries[e.id] = e
        self._parts[cls[1]][0 if e.first else 1].add(e)
        if self.params["draining"] and math.isfinite(deadline):
            heapq.heappush(self._pending, (deadline, e.submit, e.id))

    def _unfile(self, e: _Entry) -> None:
        del self._entries[e.id]
        self._parts[e.cls[1]][0 if e.first else 1].remove(e)
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
            for pair in self._parts.values():
                for part in pair:
                    part.jobs = dict(sorted(part.jobs.items(), key=lambda kv: order[kv[0]]))
        due = self._due(snap)
        pending = self._pending
        while pending and pending[0][0] <= due:
            _d, _s, job_id = heapq.heappop(pending)
            e = self._entries.get(job_id)
            if e is not None:
                self._overdue.setdefault(e.cls, {})[job_id] = e

    def _count(self, host: str, cls: tuple[str, str], user: int, n: int) -> None:
        hc = self._host_counts.get(host)
        for k in self._cfg().limit_keys(cls):
            self._sys_counts[k] += n
            if hc is not None:
                hc[k] += n
        self._user_counts[user] += n

    def _sync_running(self, snap: Snapshot) -> None:
        """Keep the running counts: drop departed jobs; recount if they disagree with the hosts."""
        for job in snap.departed:
            run = self._running.pop(job.id, None)
            if run is not None:
                self._count(*run, -1)
        if len(self._running) != sum(len(hv.running) for hv in snap.hosts):
            self._running.clear()
            for counts in self._host_counts.values():
                counts.clear()
            self._sys_counts.clear()
            self._user_counts.clear()
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
        p = _Pass(self, snap)
        decisions: list[Any] = []
        draining = self.params["draining"]
        while True:
            if draining:
                self._refresh_drains(p, now)
                if self._overdue and len(self._drained) < len(cfg.hosts):
                    self._assign_drains(p, now, decisions)
            nominated: dict[int, tuple[_Entry, list[LSFHost]]] = {}
            for h in cfg.hosts:
                e = p.nominate(h)
                if e is not None:
                    nominated.setdefault(e.id, (e, []))[1].append(h)
            if not nominated:
                break
            e, hosts = min(nominated.values(), key=lambda x: (x[0].submit, x[0].id))
            host = max(hosts, key=lambda h: p.free[h.name][0])
            decisions.append(Start(e.job, host.name, note=self._note(e, host)))
            p.start(e, host)
            self._unfile(e)
            self._running[e.id] = (host.name, e.cls, e.user)
            self._count(host.name, e.cls, e.user, 1)
            if self.log is not None:
                self.log.append((now, "start", host.name, e.id))
            if e.id in self._drain_host:
                self._undrain(e, now, "started")
        if draining:
            self._remember_idle(p, now)
            wake = self._next_deadline()
            if wake is not None and (not self._wakes or wake < min(self._wakes)):
                self._wakes.append(wake)
                decisions.append(WakeAt(wake, tag=WAKE_TAG))
        return decisions

    def _note(self, e: _Entry, host: LSFHost) -> str:
        if self._drained.get(host.name) is e:
            return f"{label(*e.cls)}: draining priority on {host.name}"
        return (
            f"{label(*e.cls)}: first eligible job of the size class with priority on {host.name} "
            f"({' > '.join(host.priority)}); host with the most free processors"
        )

    # --------------------------------------------------------------------------- draining
    def _refresh_drains(self, p: _Pass, now: float) -> None:
        """Drop drains whose job hit a limit or lost its size class's priority on the host."""
        hosts = {h.name: h for h in self._cfg().hosts}
        for hname, e in list(self._drained.items()):
            if not p.system_ok(e):
                self._undrain(e, now, "lost")  # a system-wide (or user) limit is reached
            elif not p.has_priority(e, hosts[hname]):
                self._undrain(e, now, "moved")  # _assign_drains drains another host for it

    def _assign_drains(self, p: _Pass, now: float, decisions: list[Any]) -> None:
        """Give draining priority to overdue jobs, earliest drain deadline first.

        Each gets a random host among those drained for no job where its size
        class has priority, its class is within the host's limits, and it fits
        the host at all.  A job with no such host tries again at later passes.
        """
        cfg = self._cfg()
        free_hosts = [h for h in cfg.hosts if h.name not in self._drained]
        while free_hosts:
            best: tuple[_Entry, list[LSFHost]] | None = None
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
            self._drained[host.name] = e
            self._drain_host[e.id] = host.name
            self.counters["drains"] += 1
            if self.log is not None:
                self.log.append((now, "drain", host.name, e.id))
            if p.snap.explain:
                decisions.append(
                    Reserve(e.job, host.name, now, note=f"{label(*e.cls)}: draining priority")
                )

    def _undrain(self, e: _Entry, now: float, why: str) -> None:
        host = self._drain_host.pop(e.id)
        del self._drained[host]
        self.counters[f"drains_{why}"] += 1
        if self.log is not None:
            self.log.append((now, f"undrain-{why}", host, e.id))

    def _account_idle(self, snap: Snapshot) -> None:
        """Add the processor-time left idle on drained hosts since the previous pass."""
        for since, idle in self._idle_since.values():
            self.counters["drain_idle_proc_seconds"] += idle * (snap.now - since)
        self._idle_since = {}

    def _remember_idle(self, p: _Pass, now: float) -> None:
        self._idle_since = {h: (now, p.free[h][0]) for h in self._drained}


class _Pass:
    """Working state of one scheduling pass: running counts, free resources, eligibility caches.

    The caches (``_host_ok``, ``_sys_ok``, ``_active``) hold per-class answers
    and are cleared after every start, when the counts change.
    """

    def __init__(self, policy: NCSALSF, snap: Snapshot) -> None:
        cfg = policy._cfg()
        self.policy = policy
        self.cfg = cfg
        self.snap = snap
        self.parts = policy._parts
        self.user_limit = policy.user_limit
        self.block_first = policy.params["vst_blocking"] == "same-time-class"
        self.free = {h.name: [h.free_procs, h.free_mem] for h in snap.hosts}
        self.host_counts = policy._host_counts  # the policy updates them on every start
        self.sys_counts = policy._sys_counts
        self.user_counts = policy._user_counts
        self._host_ok: dict[tuple[str, tuple[str, str]], bool] = {}
        self._sys_ok: dict[tuple[str, str], bool] = {}
        self._active: dict[tuple[str, str], bool] = {}

    # ---- eligibility: limits of the machine, the user and the host
    def class_ok(self, cls: tuple[str, str]) -> bool:
        """No system-wide limit that counts class ``cls`` is reached."""
        ok = self._sys_ok.get(cls)
        if ok is None:
            limits = self.cfg.system_limits
            counts = self.sys_counts
            ok = True
            for k in self.cfg.limit_keys(cls):
                lim = limits.get(k)
                if lim is not None and counts[k] >= lim:
                    ok = False
                    break
            self._sys_ok[cls] = ok
        return ok

    def user_ok(self, e: _Entry) -> bool:
        limit = self.user_limit
        return not (limit and e.user >= 0 and self.user_counts[e.user] >= limit)

    def system_ok(self, e: _Entry) -> bool:
        """No system-wide limit applying to the job, nor its user's limit, is reached."""
        return self.class_ok(e.cls) and self.user_ok(e)

    def host_ok(self, cls: tuple[str, str], h: LSFHost) -> bool:
        """The host's limits allow one more job of class ``cls``."""
        if not h.limits:
            return True
        key = (h.name, cls)
        ok = self._host_ok.get(key)
        if ok is None:
            counts = self.host_counts[h.name]
            ok = True
            for k in self.cfg.limit_keys(cls):
                lim = h.limits.get(k)
                if lim is not None and counts[k] >= lim:
                    ok = False
                    break
            self._host_ok[key] = ok
        return ok

    def eligible(self, e: _Entry, h: LSFHost) -> bool:
        """Host ``h`` may start the job as far as size and limits go (not free resources)."""
        return (
            e.procs <= h.procs
            and e.mem <= h.memory
            and self.host_ok(e.cls, h)
            and self.class_ok(e.cls)
            and self.user_ok(e)
        )

    # ---- the host's choice
    def nominate(self, h: LSFHost) -> _Entry | None:
        """The job host ``h`` would start now under its priority, limits, blocking and drain."""
        free_p, free_m = self.free[h.name]
        drained = self.policy._drained.get(h.name)
        if drained is not None:
            if drained.procs <= free_p and drained.mem <= free_m and self.eligible(drained, h):
                return drained
            return None
        if free_p <= 0:
            return None
        blocked_first = False
        block_first_mode = self.block_first
        for s in h.priority:
            block_all = block_first = False
            for part, is_first in zip(self.parts[s], (True, False), strict=True):
                if not part.jobs or (is_first and blocked_first):
                    continue
                ok = self._ok_classes(part, h)
                if not ok:
                    continue
                if free_p < part.min_procs or free_m < part.min_mem:
                    # nothing here fits now: only whether something eligible waits matters
                    if (not is_first or block_first_mode) and self._any_eligible(part, ok, h):
                        if is_first:
                            block_first = True
                        else:
                            block_all = True
                    continue
                hp, hm = h.procs, h.memory
                for e in part.jobs.values():
                    if e.cls not in ok or e.procs > hp or e.mem > hm or not self.user_ok(e):
                        continue
                    if e.procs <= free_p and e.mem <= free_m:
                        return e
                    if not is_first:
                        block_all = True
                    elif block_first_mode:
                        block_first = True
            if block_all:
                return None
            blocked_first = blocked_first or block_first
        return None

    def _ok_classes(self, part: _Part, h: LSFHost) -> set[tuple[str, str]]:
        """The classes present in ``part`` that the machine's and the host's limits allow."""
        return {c for c, n in part.classes.items() if n and self.class_ok(c) and self.host_ok(c, h)}

    def _any_eligible(self, part: _Part, ok: set[tuple[str, str]], h: LSFHost) -> bool:
        hp, hm = h.procs, h.memory
        return any(
            e.cls in ok and e.procs <= hp and e.mem <= hm and self.user_ok(e)
            for e in part.jobs.values()
        )

    def active(self, h: LSFHost, s: str) -> bool:
        """Size class ``s`` has an eligible waiting job for host ``h``."""
        key = (h.name, s)
        hit = self._active.get(key)
        if hit is None:
            hit = False
            for part in self.parts[s]:
                ok = self._ok_classes(part, h) if part.jobs else None
                if ok and self._any_eligible(part, ok, h):
                    hit = True
                    break
            self._active[key] = hit
        return hit

    def class_has_priority(self, h: LSFHost, cls: tuple[str, str]) -> bool:
        """Class ``cls`` has scheduling priority on ``h``.

        Its size class is served there, the host's limits allow the class, and
        no higher size class of the host has an eligible waiting job (T§3.1: a
        class has priority unless a higher one is at its limit or has no job).
        """
        s = cls[1]
        if s not in h.priority or not self.host_ok(cls, h):
            return False
        for higher in h.priority:
            if higher == s:
                return True
            if self.active(h, higher):
                return False
        return True

    def has_priority(self, e: _Entry, h: LSFHost) -> bool:
        """The job fits host ``h`` at all and its class has scheduling priority there."""
        return e.procs <= h.procs and e.mem <= h.memory and self.class_has_priority(h, e.cls)

    def start(self, e: _Entry, h: LSFHost) -> None:
        """Book a start's resources and clear the caches (the policy counts the job)."""
        f = self.free[h.name]
        f[0] -= e.procs
        f[1] -= e.mem
        self._host_ok.clear()
        self._sys_ok.clear()
        self._active.clear()


# ------------------------------------------------------------------------------- per-class metrics
def _config_of(machine: MachineSpec | LSFConfig | str | None) -> LSFConfig:
    if isinstance(machine, LSFConfig):
        return machine
    if machine is None:
        machine = "o2k"
    if not isinstance(machine, MachineSpec):
        machine = load_machine(machine)
    return lsf_config(machine)


def job_classes(
    jobs: pd.DataFrame, machine: MachineSpec | LSFConfig | str | None = None
) -> pd.Series:
    """The LSF class label (``vst_sj``...) of every row of a per-job table.

    Uses the columns ``req_time`` (s), ``procs`` and ``mem`` (MB, as in
    :func:`~o2ksim.engine.monitor.jobs_table`) and the classes of ``machine``
    (default ``o2k``); rows that fit no class get ``"unclassified"``.
    """
    cfg = _config_of(machine)
    req = jobs["req_time"].to_numpy(float)
    procs = jobs["procs"].to_numpy(float)
    mem_kb = jobs["mem"].to_numpy(float) * KB_PER_MB
    t_bounds = np.array([b for _n, b in cfg.time_classes])
    t_idx = np.searchsorted(t_bounds, req, side="left")
    t_names = np.array([n for n, _b in cfg.time_classes] + [""], dtype=object)
    s_names = np.full(len(jobs), "", dtype=object)
    for name, p, m in reversed(cfg.size_classes):
        s_names[(procs <= p) & (mem_kb <= m + 0.5)] = name
    t_lab = t_names[np.minimum(t_idx, len(t_names) - 1)]
    out = np.where(
        (t_lab != "") & (s_names != ""),
        t_lab.astype(str) + "_" + s_names.astype(str),
        UNCLASSIFIED,
    )
    return pd.Series(out, index=jobs.index, name="lsf_class")


def lsf_class_table(
    jobs: pd.DataFrame, machine: MachineSpec | LSFConfig | str | None = None
) -> pd.DataFrame:
    """Average and maximum wait per LSF job class (thesis Figures 5-6).

    ``jobs`` is a per-job table (``Result.jobs``); only jobs that ran (and,
    when the table has an ``analysed`` column, were analysed) count.  Works for
    any policy's run, so backfill policies can be compared class by class.
    Columns: class, time_class, size_class, jobs, mean_wait, p95_wait,
    max_wait (seconds); one row per class in thesis Table 6 order (size-major),
    plus an ``unclassified`` row when some job fits no class.
    """
    cfg = _config_of(machine)
    mask = jobs["status"].isin(("completed", "killed"))
    if "analysed" in jobs:
        mask &= jobs["analysed"].astype(bool)
    ran = jobs.loc[mask]
    classes = job_classes(ran, cfg)
    rows = []
    names = [(label(t, s), t, s) for s, _p, _m in cfg.size_classes for t, _b in cfg.time_classes]
    if (classes == UNCLASSIFIED).any():
        names.append((UNCLASSIFIED, "", ""))
    for name, t, s in names:
        wait = ran.loc[classes == name, "wait"].to_numpy(float)
        rows.append(
            {
                "class": name,
                "time_class": t,
                "size_class": s,
                "jobs": len(wait),
                "mean_wait": float(wait.mean()) if len(wait) else math.nan,
                "p95_wait": float(np.percentile(wait, 95)) if len(wait) else math.nan,
                "max_wait": float(wait.max()) if len(wait) else math.nan,
            }
        )
    return pd.DataFrame(rows)


POLICIES.register(NCSALSF)
