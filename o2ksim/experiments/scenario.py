"""Scenarios: one validated TOML file naming a whole experiment.

A scenario names the machine, the workload (a trace, a model with parameters,
or a few jobs written inline, plus the transformations: load scaling and
runtime estimates), one or more policies with their options, the measurement
protocol (analysis window, warm-up, replication seeds) and where the outputs
go.  It can also list *factors*: every combination of the factor levels, for
every policy and every seed, is one run (desmod's factorial sweep).  The
``[reduced]`` table holds overrides that shrink the experiment for CI.

>>> from o2ksim.experiments.scenario import parse_scenario
>>> sc = parse_scenario('''
... name = "demo"
... machine = "o2k"
... policies = ["fcfs", "fcfs-backfill"]
... [workload]
... model = "o2k"
... span = "10d"
... [protocol]
... seeds = [1, 2]
... [factors]
... workload.estimates = ["requested", "actual"]
... ''')
>>> len(sc.plan())
8
>>> sc.plan()[0].factors
{'policy': 'fcfs', 'workload.estimates': 'requested', 'seed': 1}

Every run is a :class:`RunSpec`: a plain, JSON-able configuration (paths made
absolute) that :func:`o2ksim.experiments.sweep.execute_run` reads into a validated
:class:`~o2ksim.run.config.RunConfig` (:meth:`~o2ksim.run.config.RunConfig.from_dict`)
and runs with :func:`~o2ksim.run.api.run_config`, in this process, in a worker
process or on a Dask worker.  The machines a scenario names are parsed once,
when it is loaded (:attr:`Scenario.machines`, handed to its runs by
:meth:`Scenario.run_config`).  A run's identity (``run_id``) is derived from its
configuration, so a changed scenario never reuses stale results.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from o2ksim import paths
from o2ksim.availability import load_availability, outages_from_rows
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.experiments.plan_checks import check_runs
from o2ksim.experiments.tables import (
    TOP_KEYS,
    PolicyEntry,
    as_written,
    factors_section,
    find_trace,
    flatten,
    machine_key,
    machine_value,
    outputs_section,
    parse_machines,
    policies_section,
    protocol_section,
    reduced_overrides,
    set_path,
    show_value,
    workload_section,
)
from o2ksim.files import parse_toml, read_small_text
from o2ksim.machine import MachineSpec
from o2ksim.plugins import resolve_spec
from o2ksim.run.api import Result, run_config
from o2ksim.run.config import RunConfig
from o2ksim.run.workload import build_workload, inline_jobs_frame, workload_label
from o2ksim.toml_lines import located
from o2ksim.validation import (
    MAX_RUNS,
    check_flags,
    check_keys,
    check_path,
    check_str,
    shown,
)


@dataclass(frozen=True)
class RunSpec:
    """One run of a scenario: its factor levels and its complete configuration.

    ``config`` has four sections, all JSON values: ``machine`` (a name, an
    absolute path or an inline table), ``workload``, ``policy`` (``name``,
    ``label``, ``params``) and ``protocol`` (``window``, ``warmup``, ``seed``,
    ``interval``, ``kill_overrun``, ``overrun_grace``).
    """

    run_id: str
    index: int
    factors: dict[str, Any]
    config: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "index": self.index,
            "factors": self.factors,
            "config": self.config,
        }


@dataclass(frozen=True)
class Scenario:
    """A validated scenario (see the module docstring and ``docs/guides/scenarios.md``)."""

    name: str
    description: str
    source: str
    machine: Any
    workload: dict[str, Any]
    policies: tuple[PolicyEntry, ...]
    protocol: dict[str, Any]
    factors: dict[str, tuple[Any, ...]]
    outputs: dict[str, Any]
    path: str | None = None
    text: str = ""
    reduced: bool = False
    has_reduced: bool = False
    machines: dict[str, MachineSpec] = field(default_factory=dict, repr=False)
    """Every machine the runs use, parsed once, by the JSON of its ``machine`` value."""

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(self.protocol["seeds"])

    def default_out_dir(self) -> Path:
        """Where results go unless told otherwise: ``[outputs] dir`` or ``results/<name>``.

        A reduced scenario adds ``-reduced``, so it never mixes with the full results.
        """
        base = self.outputs.get("dir") or f"results/{self.name}"
        return Path(base.rstrip("/") + ("-reduced" if self.reduced else ""))

    def plan(self) -> list[RunSpec]:
        """Every run: seeds x factor combinations x policies (policies vary fastest).

        Consecutive runs share a workload, so a worker process reuses the
        generated or parsed workload from its cache.
        """
        keys = list(self.factors)
        levels = [self.factors[k] for k in keys]
        planned = len(self.seeds) * len(self.policies) * math.prod(len(v) for v in levels)
        if planned > MAX_RUNS:
            raise ConfigError(
                self.path or "<scenario>",
                f"the scenario plans {planned:,} runs, more than the limit of {MAX_RUNS:,} "
                "(each run stores a results directory); use fewer seeds, policies or factor levels",
                field="factors",
            )
        runs: list[RunSpec] = []
        for seed in self.seeds:
            for combo in itertools.product(*levels):
                for pol in self.policies:
                    config = self._config(pol, dict(zip(keys, combo, strict=True)), seed)
                    factors: dict[str, Any] = {"policy": pol.label}
                    factors.update(zip(keys, combo, strict=True))
                    factors["seed"] = seed
                    runs.append(RunSpec(_run_id(factors, config), len(runs), factors, config))
        ids = [r.run_id for r in runs]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ConfigError(
                self.path,
                f"two runs have the same configuration ({dup}); "
                "give the policies distinct names or parameters",
            )
        return runs

    def _config(self, pol: PolicyEntry, levels: dict[str, Any], seed: int) -> dict[str, Any]:
        machine = copy.deepcopy(self.machine)
        workload = copy.deepcopy(self.workload)
        protocol = {k: copy.deepcopy(v) for k, v in self.protocol.items() if k != "seeds"}
        params = copy.deepcopy(pol.params)
        for key, value in levels.items():
            section, _, rest = key.partition(".")
            if section == "machine":
                machine = value
            elif section == "workload":
                set_path(workload, rest, value)
            elif section == "policy":
                set_path(params, rest, value)
            else:
                protocol[rest] = value
        if workload.get("seed") is None and workload.get("model"):
            workload["seed"] = seed
        if workload.get("estimates") == "requested":
            workload["estimates"] = None  # the same run as no estimates at all
        protocol["seed"] = seed
        # user code ("module:Name") next to the scenario or in the working directory
        # becomes an absolute file, found by every worker
        search = [Path(self.path).parent] if self.path else []
        name = resolve_spec(pol.name, search)
        if isinstance(params.get("priority"), str):
            params["priority"] = resolve_spec(params["priority"], search)
        return {
            "machine": machine,
            "workload": workload,
            "policy": {"name": name, "label": pol.label, "params": params},
            "protocol": protocol,
        }

    def run_config(
        self, run: RunSpec, *, explain: bool = False, progress: bool = False
    ) -> RunConfig:
        """The validated :class:`~o2ksim.run.config.RunConfig` of one of :meth:`plan`'s runs.

        Its machine is the one this scenario parsed when it was loaded (the same object).
        """
        machine = self.machines.get(machine_key(run.config["machine"]))
        return RunConfig.from_dict(
            run.config, machine=machine, explain=explain, progress=progress, where=self.path or "<scenario>"
        )

    def describe(self) -> str:
        """A few lines: what the scenario runs."""
        runs = self.plan()
        pols = ", ".join(p.label for p in self.policies)
        lines = [
            f"scenario {self.name}"
            + (" (reduced)" if self.reduced else "")
            + (f": {self.description}" if self.description else ""),
            "  machine   "
            + (
                show_value(self.machine)
                if self.machine is not None
                else "one host from the trace header"
            ),
            f"  workload  {workload_label(self.workload)}",
            f"  policies  {pols}",
            f"  seeds     {', '.join(map(str, self.seeds))}",
        ]
        for k, v in self.factors.items():
            lines.append(f"  factor    {k} = {', '.join(map(show_value, v))}")
        lines.append(f"  {len(runs)} run(s)")
        return "\n".join(lines)


# ------------------------------------------------------------------------------------ loading
def scenario_dirs() -> list[Path]:
    """Directories holding shipped scenarios (``scenarios/`` of the checkout or install)."""
    return paths.data_dirs("scenarios")


def available_scenarios() -> dict[str, Path]:
    """Shipped scenarios by name (file stem)."""
    return paths.available("scenarios")


def resolve_scenario(name_or_path: str | os.PathLike[str]) -> Path:
    """A scenario path from a path or the name of a shipped scenario."""
    return paths.resolve("scenarios", name_or_path)


def load_scenario(name_or_path: str | os.PathLike[str], *, reduced: bool = False) -> Scenario:
    """Read and validate a scenario file (or a shipped scenario by name)."""
    if not isinstance(name_or_path, str | os.PathLike):
        raise ConfigError(
            "load_scenario", f"expected a scenario name or a TOML path, got {name_or_path!r}"
        )
    path = resolve_scenario(name_or_path)
    text = read_small_text(path, "scenario file")
    with located(text):  # the line of the field a refusal names
        return parse_scenario(text, path=str(path), reduced=reduced)


def parse_scenario(text: str, *, path: str | None = None, reduced: bool = False) -> Scenario:
    """Validate scenario TOML ``text``; relative paths are taken from ``path``'s directory.

    With ``reduced`` (``--reduced``) a refused value that the ``[reduced]`` table sets is named
    as written there (``reduced.protocol.windw``, so that its line is that table's), not as the
    key it overrides."""
    try:
        return _parse_scenario(text, path=path, reduced=reduced)
    except ConfigError as exc:
        overridden = reduced_overrides(text) if reduced else {}
        if not overridden:
            raise
        raise ConfigError(exc.path, exc.reason, line=exc.line, field=as_written(exc.field, overridden)) from None


def _parse_scenario(text: str, *, path: str | None, reduced: bool) -> Scenario:
    if not isinstance(text, str):
        raise O2KSimError(f"parse_scenario: text must be the scenario's TOML (a str), got {shown(text)}")
    if path is not None:
        check_path(path, "parse_scenario", "path")
    check_flags("parse_scenario", reduced=reduced)
    where = path or "<scenario>"
    data = parse_toml(text, where, "scenario file")
    base = Path(path).resolve().parent if path else Path.cwd()
    overrides = data.pop("reduced", None)
    has_reduced = overrides is not None
    if overrides is not None and not isinstance(overrides, dict):
        raise ConfigError(where, "must be a table of overrides", field="reduced")
    if reduced:
        if overrides is None:
            raise ConfigError(where, "the scenario has no [reduced] table")
        for key, value in flatten(overrides).items():
            section = key.split(".", 1)[0]
            if section not in TOP_KEYS - {"reduced"}:
                raise ConfigError(
                    where, f"unknown scenario key '{section}'", field=f"reduced.{key}"
                )
            set_path(data, key, value)
    check_keys(data, TOP_KEYS, where, "")
    name = data.get("name") or (Path(path).stem if path else "scenario")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise ConfigError(where, "must be a simple name (letters, digits, - _ .)", field="name")
    machine = machine_value(data.get("machine"), where, base)
    workload = workload_section(data.get("workload"), where, base)
    policies = policies_section(data, where, base)
    protocol = protocol_section(data.get("protocol", {}), workload, where)
    factors = factors_section(data.get("factors", {}), where, base, workload)
    for key in factors:
        section, _, param = key.partition(".")
        clash = [
            p.label for p in policies if section == "policy" and param.split(".")[0] in p.params
        ]
        if clash:
            raise ConfigError(
                where,
                f"the factor sets '{param}', which policy {clash[0]} already fixes in its params",
                field=f"factors.{key}",
            )
    outputs = outputs_section(data.get("outputs", {}), where)
    machines = parse_machines([machine, *factors.get("machine", ())], where)
    raw = data.get("protocol", {}).get("availability")
    if raw is not None:
        protocol["availability"] = _availability(raw, machines, base, where)
    sc = Scenario(
        name=name,
        description=check_str(data.get("description", ""), where, "description", empty=True),
        source=check_str(data.get("source", ""), where, "source", empty=True),
        machine=machine,
        workload=workload,
        policies=policies,
        protocol=protocol,
        factors=factors,
        outputs=outputs,
        path=str(Path(path).resolve()) if path else None,
        text=text,
        reduced=reduced,
        has_reduced=has_reduced,
        machines=machines,
    )
    check_runs(sc, where)
    if has_reduced and not reduced:
        _check_reduced(text, path, where)
    return sc


def _check_reduced(text: str, path: str | None, where: str) -> None:
    """Validate the scenario as ``--reduced`` would run it, on every load: a typo in the
    ``[reduced]`` table (``protocol.windw``) is refused by ``scenario run`` and ``scenario
    show``, not only once someone asks for the reduced runs.  The field is named as written
    (``reduced.protocol.windw``) when the error is in an overridden key."""
    try:
        parse_scenario(text, path=path, reduced=True)  # names an overridden field as written
    except ConfigError as exc:
        raise ConfigError(
            exc.path or where, f"{exc.reason} (with the [reduced] overrides applied, as --reduced runs it)",
            line=exc.line, field=exc.field,
        ) from None


def _availability(
    value: Any, machines: dict[str, MachineSpec], base: Path, where: str
) -> list[dict[str, Any]]:
    """``[protocol] availability``: an availability file (relative to the scenario) or a list of
    ``{host, from, to, procs}`` tables, checked now against every machine of the scenario.

    The runs get the periods written out as tables, so a run's identity (the hash of its
    configuration) changes when the file's content does, not only when its name does.
    """
    fld = "protocol.availability"
    if not machines:
        raise ConfigError(where, "needs a machine (the hosts the periods name)", field=fld)
    rows: list[dict[str, Any]] = []
    for mach in machines.values():
        if isinstance(value, str):
            p = Path(value) if Path(value).is_absolute() else base / value
            if not p.is_file():
                raise ConfigError(
                    where, f"{value}: no such availability file (looked in {base})", field=fld
                )
            outages = load_availability(p, mach)
        elif isinstance(value, list) and all(isinstance(r, dict) for r in value):
            for r in value:
                check_keys(r, ("host", "from", "to", "procs"), where, f"{fld}.")
            outages = outages_from_rows(((None, r) for r in value), mach, f"{where}: {fld}")
        else:
            raise ConfigError(
                where,
                "must be an availability file or a list of {host, from, to, procs} tables",
                field=fld,
            )
        rows = [o.row() for o in outages]
    return rows


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+=-]+", "_", text).strip("_")[:40]


def config_hash(config: dict[str, Any]) -> str:
    """Ten hex digits identifying what a run simulates (the policy's label is left out)."""
    pol = {k: v for k, v in config["policy"].items() if k != "label"}
    what = {**config, "policy": pol}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:10]


def _run_id(factors: dict[str, Any], config: dict[str, Any]) -> str:
    """Readable and unique: the factor levels, then the configuration's hash.

    Only the hash identifies the run: a sweep finds a finished run by it even
    when the scenario's factors or labels changed (see :mod:`o2ksim.experiments.sweep`).
    """
    parts = []
    for k, v in factors.items():
        short = k.rsplit(".", 1)[-1]
        parts.append(_slug(show_value(v)) if k == "policy" else f"{short}{_slug(show_value(v))}")
    return "-".join(parts) + "-" + config_hash(config)


# ---------------------------------------------------------------------------- building a run
def simulate_run(
    config: dict[str, Any],
    *,
    explain: bool = False,
    observers: Iterable[Any] = (),
    progress: bool = False,
) -> Result:
    """Run one configuration (a :attr:`RunSpec.config`): a :class:`~o2ksim.run.config.RunConfig`
    read with :meth:`~o2ksim.run.config.RunConfig.from_dict`, run by
    :func:`~o2ksim.run.api.run_config`."""
    cfg = RunConfig.from_dict(config, explain=explain, progress=progress)
    return run_config(cfg, observers=tuple(observers))


__all__ = [
    "PolicyEntry",
    "RunSpec",
    "Scenario",
    "available_scenarios",
    "build_workload",
    "config_hash",
    "find_trace",
    "inline_jobs_frame",
    "load_scenario",
    "parse_scenario",
    "simulate_run",
    "workload_label",
]
