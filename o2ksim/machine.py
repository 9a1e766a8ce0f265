"""Machines: a set of space-shared hosts, each with processors and memory.

Machines are TOML files in ``hosts/`` (see ``docs/reference/machines.md``)::

    name = "o2k"
    description = "..."
    [[host]]
    name = "eir"
    procs = 128
    memory_gb = 64            # or memory_mb / memory_per_proc_mb; omit = not constrained
    [host.lsf]                # free-form parameters for policies that need them
    limits = { lj = 3, mj = 4 }

A machine can also be derived from a trace header (``MaxProcs``/``MaxNodes``):
one host of that many processors with unconstrained memory (SPEC §1).
Memory is held in kilobytes, the SWF unit, as integers so that a host's free
memory is exact.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from o2ksim import paths
from o2ksim.errors import ConfigError
from o2ksim.files import read_toml
from o2ksim.toml_lines import located
from o2ksim.validation import (
    MAX_PROCS,
    MAX_TIME,
    check_bool,
    check_count,
    check_keys,
    check_number,
    check_str,
    require_table,
)

KB_PER_MB = 1024
KB_PER_GB = 1024 * 1024
UNLIMITED = math.inf
NO_HOST = "-"
"""What ``jobs.csv`` writes in the ``host`` column of a job that ran on no host
(:data:`o2ksim.table.NO_VALUE`); no host may be named so."""


@dataclass(frozen=True)
class HostSpec:
    """One host: ``procs`` processors and ``memory`` KB (``inf`` = not constrained)."""

    name: str
    procs: int
    memory: float = UNLIMITED
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def memory_gb(self) -> float:
        return self.memory / KB_PER_GB


@dataclass(frozen=True)
class MachineSpec:
    """A machine: its hosts (in file order) plus machine-wide parameters.

    ``params`` carries data for policies (e.g. NCSA-LSF*'s system-wide class
    limits); ``options`` carries run options such as ``kill_overrun`` and
    ``overrun_grace`` (seconds).
    """

    name: str
    hosts: tuple[HostSpec, ...]
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    source: str | None = field(default=None, compare=False)
    """Where the machine was read from (not part of what the machine is)."""

    @property
    def total_procs(self) -> int:
        return sum(h.procs for h in self.hosts)

    @property
    def total_memory(self) -> float:
        return sum(h.memory for h in self.hosts)

    @property
    def max_procs(self) -> int:
        return max(h.procs for h in self.hosts)

    def host(self, name: str) -> HostSpec:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def to_table(self) -> dict[str, Any]:
        """The machine as the TOML table :func:`parse_machine` reads back into an equal machine.

        Lets a run configuration carry its machine as data (a sweep stores
        it, a worker process rebuilds it) without the file it came from.
        """
        hosts = []
        for h in self.hosts:
            host: dict[str, Any] = {"name": h.name, "procs": h.procs}
            if not math.isinf(h.memory):
                host["memory_mb"] = h.memory / KB_PER_MB  # exact: memory is whole KB
            host.update(h.params)
            hosts.append(host)
        table: dict[str, Any] = {"name": self.name, "description": self.description}
        table.update(self.params)
        table["host"] = hosts
        if self.options:
            table["options"] = dict(self.options)
        return table

    def describe(self) -> str:
        mem = (
            "memory not constrained"
            if math.isinf(self.total_memory)
            else f"{self.total_memory / KB_PER_GB:g} GB"
        )
        return f"{self.name}: {len(self.hosts)} host(s), {self.total_procs} processors, {mem}"


def single_host(procs: int, name: str = "machine", memory_kb: float = UNLIMITED) -> MachineSpec:
    """A one-host machine of ``procs`` processors (the usual model of a PWA trace's machine)."""
    if procs <= 0:
        raise ConfigError(None, f"a machine needs at least one processor, got {procs}")
    return MachineSpec(name=name, hosts=(HostSpec(name=name, procs=procs, memory=memory_kb),))


class Admission:
    """The machine's rules by which a run rejects a job on arrival: the one implementation,
    used by the engine (:meth:`Simulation.arrive <o2ksim.engine.core.Simulation.arrive>`,
    before the policy's own ``admit``) and by ``o2ksim trace check`` / ``trace info``, which
    flag the jobs a run would reject.

    A job is rejected when its submit time is unknown (negative), its processor request is
    not positive, its actual runtime is unknown, it asks for more processors than the
    largest host has, or no host with that many processors has its memory.
    """

    def __init__(self, machine: MachineSpec) -> None:
        self.hosts = machine.hosts
        self.max_procs = max(h.procs for h in machine.hosts)
        self._fits: dict[tuple[int, int], bool] = {}  # (procs, mem) -> some host holds it

    def reason(self, spec: Any) -> str:
        """Why ``spec`` (a :class:`~o2ksim.jobs.JobSpec`: ``submit``, ``procs``, ``run_time``,
        ``mem`` in KB) can never run on this machine, or ``""``."""
        if spec.submit < 0:
            return "submit time unknown"
        if spec.procs <= 0:
            return "requested processors unknown or not positive"
        if not (spec.run_time >= 0):
            return "actual runtime unknown"
        if spec.procs > self.max_procs:
            return f"requests {spec.procs} processors; the largest host has {self.max_procs}"
        key = (spec.procs, spec.mem)
        fits = self._fits.get(key)
        if fits is None:
            fits = any(spec.procs <= h.procs and spec.mem <= h.memory for h in self.hosts)
            self._fits[key] = fits
        if not fits:
            return f"requests {spec.mem / 1024:.0f} MB; no host with {spec.procs} processors has that much memory"
        return ""


def header_size_gap(header: Any) -> str:
    """Why an SWF header sizes no machine: its MaxProcs and MaxNodes are absent, or 0."""
    given = [
        f"{label} 0"
        for attr, label in (("max_procs", "MaxProcs"), ("max_nodes", "MaxNodes"))
        if getattr(header, attr, None) == 0
    ]
    if given:
        return f"the trace header gives {' and '.join(given)} (no processors) and no other size"
    return "the trace header has no MaxProcs or MaxNodes"


def machine_from_header(header: Any, source: str | None = None) -> MachineSpec:
    """One host sized from an SWF header's ``MaxProcs`` (else ``MaxNodes``)."""
    procs = getattr(header, "max_procs", None) or getattr(header, "max_nodes", None)
    if not procs or procs <= 0:
        raise ConfigError(source, f"{header_size_gap(header)}; give the machine with --machine")
    computer = getattr(header, "computer", None) or "trace"
    return single_host(int(procs), name=computer.replace(" ", "-"))


MACHINE_KEYS = {"name", "description", "host", "options"}
HOST_KEYS = {"name", "procs", "memory_gb", "memory_mb", "memory_per_proc_mb", "dedicated"}
OPTION_KEYS = {"kill_overrun", "overrun_grace"}
MAX_MEMORY_KB = 2**53
"""Largest host memory (8 EB): keeps free-memory arithmetic exact."""
POLICY_TABLES: set[str] = {"lsf"}
"""Names of the tables of policy data a machine file may hold (``[lsf]``,
``[host.lsf]``); see :func:`register_machine_table`."""


def register_machine_table(name: str) -> None:
    """Let machine files hold a ``[name]`` / ``[host.name]`` table of data for a policy.

    Any other table is an error naming the nearest known key, so that a typo
    (``[option]`` for ``[options]``) is never silently kept as policy data.
    """
    POLICY_TABLES.add(name)


def _memory_kb(table: dict[str, Any], procs: int, where: str, path: str) -> float:
    keys = [k for k in ("memory_gb", "memory_mb", "memory_per_proc_mb") if k in table]
    if len(keys) > 1:
        raise ConfigError(path, f"give only one of {', '.join(keys)}", field=where)
    if not keys:
        return UNLIMITED
    key = keys[0]
    value = check_number(table[key], path, f"{where}.{key}", minimum=0, exclusive_minimum=True)
    scale = {"memory_gb": KB_PER_GB, "memory_mb": KB_PER_MB}.get(key, KB_PER_MB * procs)
    kb = value * scale
    if kb < 1 or kb > MAX_MEMORY_KB:
        raise ConfigError(
            path,
            f"{value:g} is {kb:g} KB; a host's memory must be from 1 KB to {MAX_MEMORY_KB:g} KB",
            field=f"{where}.{key}",
        )
    return round(kb)


def parse_machine(data: dict[str, Any], path: str = "<machine>") -> MachineSpec:
    """Build and validate a machine from parsed TOML ``data``.

    Keys are checked: a key that is neither a machine setting nor a registered
    table of policy data (:data:`POLICY_TABLES`: ``[lsf]``, ``[host.lsf]``,
    kept as free-form data for policies) is an error naming the nearest known
    key, so a typo (``memory_gbs``, ``[option]``) never silently drops a
    constraint.
    """
    require_table(data, path, "machine")
    check_keys(data, MACHINE_KEYS | POLICY_TABLES, path)
    hosts_data = data.get("host")
    if not isinstance(hosts_data, list) or not hosts_data:
        raise ConfigError(path, "a machine needs at least one [[host]] table", field="host")
    hosts: list[HostSpec] = []
    names: set[str] = set()
    for i, h in enumerate(hosts_data):
        where = f"host[{i}]"
        require_table(h, path, where)
        check_keys(h, HOST_KEYS | POLICY_TABLES, path, where + ".")
        name = check_str(h.get("name"), path, f"{where}.name")
        if name in names:
            raise ConfigError(path, f"duplicate host name '{name}'", field=f"{where}.name")
        if name == NO_HOST:
            raise ConfigError(
                path, f"'{NO_HOST}' is not a host name: jobs.csv writes it for a job that ran on no host",
                field=f"{where}.name",
            )
        names.add(name)
        procs = check_count(h.get("procs"), path, f"{where}.procs", maximum=MAX_PROCS)
        if "dedicated" in h:
            check_bool(h["dedicated"], path, f"{where}.dedicated")
        params = {k: v for k, v in h.items() if k not in HOST_KEYS}
        hosts.append(HostSpec(name, procs, _memory_kb(h, procs, where, path), params))
    options = dict(require_table(data.get("options", {}), path, "options"))
    check_keys(options, OPTION_KEYS, path, "options.")
    if "kill_overrun" in options:
        check_bool(options["kill_overrun"], path, "options.kill_overrun")
    if "overrun_grace" in options:
        check_number(
            options["overrun_grace"], path, "options.overrun_grace", minimum=0,
            maximum=MAX_TIME, unit=" (seconds)",
        )  # fmt: skip
    for key in POLICY_TABLES:
        if key in data:
            require_table(data[key], path, key)
    for key in ("name", "description"):
        if key in data:
            check_str(data[key], path, key, empty=key == "description")
    params = {k: v for k, v in data.items() if k not in MACHINE_KEYS}
    name = data.get("name") or Path(path).stem
    return MachineSpec(
        name=str(name),
        hosts=tuple(hosts),
        description=str(data.get("description", "")),
        params=params,
        options=options,
        source=path,
    )


def load_machine(name_or_path: str | os.PathLike[str]) -> MachineSpec:
    """Load a machine by name (``o2k``, looked up in ``hosts/``) or from a TOML path."""
    path = paths.resolve("hosts", name_or_path)
    text, data = read_toml(path, "machine file")
    with located(text):  # the line of the field a refusal names
        return parse_machine(data, str(path))
