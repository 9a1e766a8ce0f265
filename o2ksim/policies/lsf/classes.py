"""NCSA-LSF* job classes and limits: the ``[lsf]`` / ``[host.lsf]`` tables of a machine file.

The policy's view of the O2K job classes (T§3.1, Tables 3-4; labels and the
classifying rule are shared with the workload model in
:mod:`o2ksim.o2k_classes`): time classes by requested runtime, size classes by processors and
memory, per-host priorities and limits, system-wide limits, drain waits.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from o2ksim.errors import ConfigError
from o2ksim.machine import KB_PER_GB, MachineSpec
from o2ksim.o2k_classes import UNCLASSIFIED as UNCLASSIFIED  # re-exported
from o2ksim.o2k_classes import label

HOUR = 3600.0
DOC = "docs/background/policies/ncsa-lsf.md"


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

    def limit_keys(self, cls: tuple[str, str]) -> tuple[str, ...]:
        """The limit keys that count a job of class ``cls``: time, size, both, ``all``."""
        keys = self._keys.get(cls)
        if keys is None:
            keys = (cls[0], cls[1], label(*cls), "all")
            self._keys[cls] = keys
        return keys


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
        unknown = [x for x in prio if x not in s_names]
        if unknown or len(set(prio)) != len(prio):
            what = (
                f"unknown size class(es) {', '.join(unknown)}" if unknown else "a size class twice"
            )
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
