"""Scenarios: one validated TOML file naming a whole experiment.

A scenario names the machine, the workload (a trace, a model with parameters,
or a few jobs written inline, plus the transformations: load scaling and
runtime estimates), one or more policies with their options, the measurement
protocol (analysis window, warm-up, replication seeds) and where the outputs
go.  It can also list *factors*: every combination of the factor levels, for
every policy and every seed, is one run (desmod's factorial sweep).  The
``[reduced]`` table holds overrides that shrink the experiment for CI.

>>> from o2ksim.scenario import parse_scenario
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
absolute) that :func:`o2ksim.sweep.execute_run` reads into a validated
:class:`~o2ksim.runconfig.RunConfig` (:meth:`~o2ksim.runconfig.RunConfig.from_dict`)
and runs with :func:`~o2ksim.simulate.run_config`, in this process, in a worker
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
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from o2ksim import paths
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.machine import MachineSpec
from o2ksim.plugins import is_object_spec, resolve_spec
from o2ksim.validation import (
    MAX_JOB_MEMORY_KB,
    MAX_RUNS,
    check_bool,
    check_count,
    check_duration,
    check_interval,
    check_keys,
    check_number,
    check_seed,
    check_span,
    check_str,
    require_table,
)

if TYPE_CHECKING:
    from o2ksim.runconfig import RunConfig

TOP_KEYS = {
    "name", "description", "source", "machine", "workload", "policy", "policies",
    "protocol", "factors", "outputs", "reduced",
}  # fmt: skip
WORKLOAD_KEYS = {
    "trace", "model", "params", "span", "seed", "job", "load", "estimates",
    "window", "warmup", "lenient",
}  # fmt: skip
PROTOCOL_KEYS = {"window", "warmup", "seeds", "interval", "kill_overrun", "overrun_grace"}
OUTPUT_KEYS = {"dir", "report", "segments"}
POLICY_KEYS = {"name", "label", "params"}
JOB_KEYS = {"id", "submit", "procs", "runtime", "requested", "mem_mb", "mem_gb", "used_mb", "user"}
DEFAULT_WARMUP = 7 * 86400.0
FACTOR_SECTIONS = ("workload", "policy", "protocol", "machine")
"""A factor key starts with one of these: ``workload.load``, ``workload.params.X``,
``policy.X`` (a policy parameter), ``protocol.interval``, ``machine``."""


@dataclass(frozen=True)
class PolicyEntry:
    """One policy of a scenario: a preset or kind name (or preset path), a label and overrides."""

    name: str
    label: str
    params: dict[str, Any] = field(default_factory=dict)


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
                    factors = {"policy": pol.label}
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
                _set_path(workload, rest, value)
            elif section == "policy":
                _set_path(params, rest, value)
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
        """The validated :class:`~o2ksim.runconfig.RunConfig` of one of :meth:`plan`'s runs.

        Its machine is the one this scenario parsed when it was loaded (the same object).
        """
        from o2ksim.runconfig import RunConfig

        machine = self.machines.get(_machine_key(run.config["machine"]))
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
                _show(self.machine)
                if self.machine is not None
                else "one host from the trace header"
            ),
            f"  workload  {workload_label(self.workload)}",
            f"  policies  {pols}",
            f"  seeds     {', '.join(map(str, self.seeds))}",
        ]
        for k, v in self.factors.items():
            lines.append(f"  factor    {k} = {', '.join(map(_show, v))}")
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
    path = resolve_scenario(name_or_path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(path, f"cannot read: {exc.strerror}") from None
    return parse_scenario(text, path=str(path), reduced=reduced)


def parse_scenario(text: str, *, path: str | None = None, reduced: bool = False) -> Scenario:
    """Validate scenario TOML ``text``; relative paths are taken from ``path``'s directory."""
    where = path or "<scenario>"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _toml_error_line(exc)
        raise ConfigError(where, f"not valid TOML: {exc}", line=line) from None
    base = Path(path).resolve().parent if path else Path.cwd()
    overrides = data.pop("reduced", None)
    has_reduced = overrides is not None
    if overrides is not None and not isinstance(overrides, dict):
        raise ConfigError(where, "must be a table of overrides", field="reduced")
    if reduced:
        if overrides is None:
            raise ConfigError(where, "the scenario has no [reduced] table")
        for key, value in _flatten(overrides).items():
            section = key.split(".", 1)[0]
            if section not in TOP_KEYS - {"reduced"}:
                raise ConfigError(
                    where, f"unknown scenario key '{section}'", field=f"reduced.{key}"
                )
            _set_path(data, key, value)
    check_keys(data, TOP_KEYS, where, "")
    name = data.get("name") or (Path(path).stem if path else "scenario")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise ConfigError(where, "must be a simple name (letters, digits, - _ .)", field="name")
    machine = _machine(data.get("machine"), where, base)
    workload = _workload(data.get("workload"), where, base)
    policies = _policies(data, where, base)
    protocol = _protocol(data.get("protocol", {}), workload, where)
    factors = _factors(data.get("factors", {}), where, base, workload)
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
    outputs = _outputs(data.get("outputs", {}), where)
    machines = _parse_machines([machine, *factors.get("machine", ())], where)
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
    _check_runs(sc, where)
    return sc


def _toml_error_line(exc: tomllib.TOMLDecodeError) -> int | None:
    m = re.search(r"line (\d+)", str(exc))
    return int(m.group(1)) if m else None


def _machine(value: Any, where: str, base: Path, fld: str = "machine") -> Any:
    """The machine as the run configuration names it: ``None``, a table, a name or an absolute path."""
    if value is None or isinstance(value, dict):
        return value
    if not isinstance(value, str):
        raise ConfigError(where, "must be a machine name, a TOML path or a table", field=fld)
    return _data_path(value, base, "hosts", where, fld)


def _machine_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _parse_machines(
    values: Iterable[Any], where: str
) -> dict[str, MachineSpec]:
    """Each machine the scenario names (its ``machine`` and factor levels), parsed once.

    The runs get these very objects (:meth:`Scenario.run_config`); a worker
    process rebuilds a machine from the run's configuration, once per run.
    """
    from o2ksim.machine import load_machine, parse_machine

    out: dict[str, MachineSpec] = {}
    for value in values:
        key = _machine_key(value)
        if value is None or key in out:
            continue
        out[key] = parse_machine(value, where) if isinstance(value, dict) else load_machine(value)
    return out


def _data_path(value: str, base: Path, kind: str, where: str, fld: str) -> str:
    """A name stays a name; a path (``x.toml``, ``a/b``) becomes absolute (relative to ``base``)."""
    if value.endswith(".toml") or "/" in value or os.sep in value:
        p = Path(value)
        if not p.is_absolute():
            p = base / p
        if not p.exists():
            raise ConfigError(where, f"{value}: no such file (looked in {base})", field=fld)
        return str(p.resolve())
    try:
        paths.resolve(kind, value)
    except O2KSimError as exc:
        raise ConfigError(where, str(exc), field=fld) from None
    return value


def find_trace(value: str, base: Path) -> Path | None:
    """Where a trace named in a scenario lives.

    Tried in order: an absolute path; relative to the scenario's directory;
    relative to the current directory; relative to the repository root; a
    file of that name in the ``traces/`` data directories.
    """
    p = Path(value).expanduser()
    candidates = (
        [p] if p.is_absolute() else [base / p, Path.cwd() / p, paths.PACKAGE_DIR.parent / p]
    )
    candidates += [d / p.name for d in paths.data_dirs("traces")]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    return None


def _workload(value: Any, where: str, base: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(where, "a scenario needs a [workload] table", field="workload")
    check_keys(value, WORKLOAD_KEYS, where, "workload.")
    sources = [k for k in ("trace", "model", "job") if k in value]
    if len(sources) != 1:
        raise ConfigError(
            where,
            "give exactly one of trace = PATH, model = NAME or [[workload.job]] tables",
            field="workload",
        )
    out: dict[str, Any] = {
        "trace": None, "model": None, "params": {}, "span": None, "seed": None, "jobs": None,
        "load": None, "estimates": None, "lenient": False,
    }  # fmt: skip
    if "trace" in value:
        if not isinstance(value["trace"], str):
            raise ConfigError(where, "must be a path", field="workload.trace")
        found = find_trace(value["trace"], base)
        if found is None:
            raise ConfigError(
                where,
                f"{value['trace']}: trace not found (relative to the scenario, the current "
                "directory, the repository and traces/)",
                field="workload.trace",
            )
        out["trace"] = str(found)
        for k in ("span", "params", "seed"):
            if k in value:
                raise ConfigError(where, "only a model workload takes this", field=f"workload.{k}")
    elif "model" in value:
        if not isinstance(value["model"], str):
            raise ConfigError(where, "must be a model name", field="workload.model")
        out["model"] = value["model"]
        if "span" not in value:
            raise ConfigError(
                where, "a model workload needs span (e.g. '37d')", field="workload.span"
            )
        out["span"] = check_span(value["span"], where, "workload.span")
        params = value.get("params", {})
        if isinstance(params, str) and params.endswith(".toml"):
            p = Path(params) if Path(params).is_absolute() else base / params
            if not p.exists():
                raise ConfigError(
                    where, f"{params}: no such parameter file", field="workload.params"
                )
            params = str(p.resolve())
        if not isinstance(params, dict | str):
            raise ConfigError(
                where,
                "must be a table of parameters, a parameter-set name or a TOML file",
                field="workload.params",
            )
        out["params"] = params
        seed = value.get("seed")
        out["seed"] = None if seed is None else check_seed(seed, where, "workload.seed")
    else:
        out["jobs"] = _inline_jobs(value["job"], where)
    if "load" in value:
        load = value["load"]
        out["load"] = None if load is None else float(
            check_number(load, where, "workload.load", minimum=0, exclusive_minimum=True,
                         unit=" (offered load)")
        )  # fmt: skip
    if "estimates" in value:
        out["estimates"] = _estimates(value["estimates"], where, "workload.estimates")
    if "lenient" in value:
        out["lenient"] = check_bool(value["lenient"], where, "workload.lenient")
    # window/warm-up may be given here or in [protocol]; _protocol moves them there
    for k in ("window", "warmup"):
        if k in value:
            out["_" + k] = value[k]
    return out


def _estimates(value: Any, where: str, fld: str) -> str | None:
    from o2ksim.workloads.transforms import Estimates

    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(where, "must be a runtime-estimate scenario name", field=fld)
    try:
        return Estimates.parse(value).text
    except O2KSimError as exc:
        raise ConfigError(where, str(exc), field=fld) from None


def _inline_jobs(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise ConfigError(where, "must be a list of [[workload.job]] tables", field="workload.job")
    jobs = []
    for i, j in enumerate(value, 1):
        fld = f"workload.job[{i}]"
        require_table(j, where, fld)
        check_keys(j, JOB_KEYS, where, fld + ".")
        for k in ("submit", "procs", "runtime"):
            if k not in j:
                raise ConfigError(where, f"needs {k}", field=fld)
        procs = check_count(j["procs"], where, f"{fld}.procs")
        run = check_duration(j["runtime"], where, f"{fld}.runtime", allow_none=False)
        req = check_duration(j.get("requested", j["runtime"]), where, f"{fld}.requested")
        mem_mb = j.get("mem_mb")
        max_mb = MAX_JOB_MEMORY_KB / 1024
        if "mem_gb" in j:
            if mem_mb is not None:
                raise ConfigError(where, "give mem_mb or mem_gb, not both", field=fld)
            mem_mb = 1024 * check_number(
                j["mem_gb"], where, f"{fld}.mem_gb", minimum=0, maximum=max_mb / 1024, unit=" (GB)"
            )
        elif mem_mb is not None:
            check_number(mem_mb, where, f"{fld}.mem_mb", minimum=0, maximum=max_mb, unit=" (MB)")
        used_mb = j.get("used_mb")  # peak memory used (judges immediate-service trials)
        if used_mb is not None:
            check_number(used_mb, where, f"{fld}.used_mb", minimum=0, maximum=max_mb, unit=" (MB)")
        job_id = check_number(
            j.get("id", i), where, f"{fld}.id", minimum=0, maximum=2**63 - 1, integer=True
        )
        user = check_number(
            j.get("user", -1), where, f"{fld}.user", minimum=-1, maximum=2**63 - 1, integer=True
        )
        jobs.append(
            {
                "id": job_id,
                "submit": check_duration(j["submit"], where, f"{fld}.submit", allow_none=False),
                "procs": procs,
                "runtime": run,
                "requested": req,
                "mem_mb": None if mem_mb is None else float(mem_mb),
                **({} if used_mb is None else {"used_mb": float(used_mb)}),
                "user": user,
            }
        )
    ids = [j["id"] for j in jobs]
    if len(set(ids)) != len(ids):
        raise ConfigError(where, "job ids must be unique", field="workload.job")
    return jobs


def _policies(data: dict[str, Any], where: str, base: Path) -> tuple[PolicyEntry, ...]:
    entries: list[Any] = []
    if "policies" in data:
        names = data["policies"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(where, "must be a list of policy names", field="policies")
        entries += [{"name": n} for n in names]
    if "policy" in data:
        tables = data["policy"]
        if isinstance(tables, dict):
            tables = [tables]
        if not isinstance(tables, list):
            raise ConfigError(where, "use [[policy]] tables", field="policy")
        entries += tables
    if not entries:
        raise ConfigError(
            where, "a scenario needs policies = [...] or [[policy]] tables", field="policy"
        )
    out = []
    for i, e in enumerate(entries, 1):
        fld = f"policy[{i}]"
        require_table(e, where, fld)
        check_keys(e, POLICY_KEYS, where, fld + ".")
        name = e.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(where, "needs name = PRESET | KIND | PATH", field=f"{fld}.name")
        if (name.endswith(".toml") or "/" in name) and not is_object_spec(name):
            p = Path(name) if Path(name).is_absolute() else base / name
            if not p.exists():
                raise ConfigError(where, f"{name}: no such preset file", field=f"{fld}.name")
            name = str(p.resolve())
        params = e.get("params", {})
        require_table(params, where, f"{fld}.params")
        label = e.get("label")
        if label is None:
            label = Path(name).stem if name.endswith(".toml") else name
            if params:
                label += "(" + ",".join(f"{k}={_show(v)}" for k, v in params.items()) + ")"
        if not isinstance(label, str) or not label:
            raise ConfigError(where, "must be a non-empty string", field=f"{fld}.label")
        out.append(PolicyEntry(name, label, params))
    labels = [p.label for p in out]
    if len(set(labels)) != len(labels):
        raise ConfigError(where, "policy labels must be unique (add label = ...)", field="policy")
    return tuple(out)


def _protocol(value: Any, workload: dict[str, Any], where: str) -> dict[str, Any]:
    require_table(value, where, "protocol")
    check_keys(value, PROTOCOL_KEYS, where, "protocol.")
    value = dict(value)
    for k in ("window", "warmup"):
        if "_" + k in workload:
            if k in value:
                raise ConfigError(
                    where, f"give {k} in [protocol] or [workload], not both", field=f"protocol.{k}"
                )
            value[k] = workload.pop("_" + k)
    out: dict[str, Any] = {}
    window = value.get("window")
    if window is not None:
        if (
            not isinstance(window, list)
            or len(window) != 2
            or not all(isinstance(w, int | float | str) and not isinstance(w, bool) for w in window)
        ):
            raise ConfigError(
                where, "must be [START, END] (seconds, durations or dates)", field="protocol.window"
            )
        for w in window:
            if isinstance(w, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ].*)?", w.strip()):
                check_duration(w, where, "protocol.window")
    out["window"] = window
    if "warmup" in value and window is None:
        raise ConfigError(where, "a warm-up needs a window", field="protocol.warmup")
    out["warmup"] = (
        check_duration(value.get("warmup"), where, "protocol.warmup")
        if "warmup" in value
        else (DEFAULT_WARMUP if window is not None else None)
    )
    seeds = value.get("seeds", [0])
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = [seeds]
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
        or len(set(seeds)) != len(seeds)
    ):
        raise ConfigError(
            where, "must be a list of distinct non-negative integers", field="protocol.seeds"
        )
    out["seeds"] = seeds
    out["interval"] = check_interval(value.get("interval"), where, "protocol.interval")
    kill = value.get("kill_overrun")
    out["kill_overrun"] = None if kill is None else check_bool(kill, where, "protocol.kill_overrun")
    out["overrun_grace"] = check_duration(value.get("overrun_grace"), where, "protocol.overrun_grace")
    return out


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"workload": {"load": [..]}}`` -> ``{"workload.load": [..]}`` (params stay leaf tables)."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v and not key.endswith(".params"):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _factors(
    value: Any, where: str, base: Path, workload: dict[str, Any]
) -> dict[str, tuple[Any, ...]]:
    if not isinstance(value, dict):
        raise ConfigError(where, "must be a table of lists", field="factors")
    out: dict[str, tuple[Any, ...]] = {}
    for key, levels in _flatten(value).items():
        fld = f"factors.{key}"
        section, _, rest = key.partition(".")
        if section not in FACTOR_SECTIONS or (section != "machine" and not rest):
            raise ConfigError(
                where,
                "a factor is workload.KEY, workload.params.KEY, policy.PARAM, protocol.KEY or machine",
                field=fld,
            )
        if section == "workload" and rest.split(".")[0] not in (
            WORKLOAD_KEYS - {"job", "window", "warmup"}
        ):
            raise ConfigError(where, f"workload has no key '{rest}'", field=fld)
        if key.startswith("workload.params.") and isinstance(workload.get("params"), str):
            raise ConfigError(
                where, "workload.params is a parameter-set name, not a table", field=fld
            )
        if section == "protocol" and rest not in PROTOCOL_KEYS - {"seeds"}:
            raise ConfigError(
                where, f"protocol has no factor '{rest}' (seeds: use protocol.seeds)", field=fld
            )
        if not isinstance(levels, list) or not levels:
            raise ConfigError(where, "must be a non-empty list of levels", field=fld)
        if len({json.dumps(v, sort_keys=True) for v in levels}) != len(levels):
            raise ConfigError(where, "levels must be distinct", field=fld)
        normalised = []
        for v in levels:
            if key == "workload.span":
                v = check_span(v, where, fld)
            elif key == "protocol.interval":
                v = check_interval(v, where, fld)
            elif key == "protocol.kill_overrun" and v is not None:
                check_bool(v, where, fld)
            elif key == "workload.estimates":
                v = _estimates(v, where, fld)
            elif key == "workload.trace":
                found = find_trace(v, base) if isinstance(v, str) else None
                if found is None:
                    raise ConfigError(where, f"{v}: trace not found", field=fld)
                v = str(found)
            elif key in ("protocol.warmup", "protocol.overrun_grace"):
                v = check_duration(v, where, fld)
            elif key == "machine":
                v = _machine(v, where, base, fld)
            normalised.append(v)
        out[key] = tuple(normalised)
    return out


def _outputs(value: Any, where: str) -> dict[str, Any]:
    require_table(value, where, "outputs")
    check_keys(value, OUTPUT_KEYS, where, "outputs.")
    out = {"dir": None, "report": True, "segments": True}
    if "dir" in value:
        if not isinstance(value["dir"], str) or not value["dir"]:
            raise ConfigError(where, "must be a directory path", field="outputs.dir")
        out["dir"] = value["dir"]
    for k in ("report", "segments"):
        if k in value:
            out[k] = check_bool(value[k], where, f"outputs.{k}")
    return out


def _check_runs(sc: Scenario, where: str) -> None:
    """Fail now, not in the middle of a sweep: build every policy variant once."""
    from o2ksim.policies import make_policy

    seen: set[str] = set()
    for run in sc.plan():
        pol = run.config["policy"]
        key = json.dumps(pol, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        try:
            make_policy(pol["name"], **pol["params"])
        except O2KSimError as exc:
            raise ConfigError(where, f"policy '{pol['label']}': {exc}", field="policy") from None


def _set_path(target: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for p in parts[:-1]:
        nxt = target.get(p)
        if not isinstance(nxt, dict):
            nxt = {}
            target[p] = nxt
        target = nxt
    target[parts[-1]] = value


def _show(v: Any) -> str:
    if isinstance(v, dict):
        return v.get("name", "inline machine") if "host" in v else json.dumps(v, sort_keys=True)
    if isinstance(v, str) and os.sep in v:
        return Path(v).name
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


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
    when the scenario's factors or labels changed (see :mod:`o2ksim.sweep`).
    """
    parts = []
    for k, v in factors.items():
        short = k.rsplit(".", 1)[-1]
        parts.append(_slug(_show(v)) if k == "policy" else f"{short}{_slug(_show(v))}")
    return "-".join(parts) + "-" + config_hash(config)


def workload_label(w: dict[str, Any]) -> str:
    """A short human description of a workload section."""
    if w.get("trace"):
        text = f"trace {Path(w['trace']).name}"
    elif w.get("model"):
        text = f"model {w['model']} over {w['span'] / 86400:g} days"
        if w.get("params"):
            text += " " + json.dumps(w["params"], sort_keys=True)
    else:
        text = f"{len(w['jobs'])} inline job(s)"
    if w.get("load") is not None:
        text += f", load scaled to {w['load']:g}"
    if w.get("estimates"):
        text += f", estimates {w['estimates']}"
    return text


# ---------------------------------------------------------------------------- building a run
@lru_cache(maxsize=4)
def _cached_workload(key: str, procs: int | None, _stamp: tuple[int, int] | None) -> Any:
    return _build_workload(json.loads(key), procs)


def _file_stamp(path: str | None) -> tuple[int, int] | None:
    """A trace file's modification time and size: an edited file is read again."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # reading it says what is wrong
    return st.st_mtime_ns, st.st_size


def build_workload(w: dict[str, Any], machine_procs: int | None = None) -> Any:
    """The :class:`~o2ksim.workloads.swf.Trace` a run's ``workload`` section describes.

    Reads the trace, generates the model (with ``w["seed"]``) or builds the
    inline jobs, then scales the load (``w["load"]``, the offered load on
    ``machine_procs`` processors; default: the trace header's ``MaxProcs``).
    Runtime estimates and the window are applied by
    :func:`~o2ksim.simulate.simulate`.  Results are cached per process (a few
    entries), because consecutive runs share their workload.
    """
    procs = machine_procs if w.get("load") is not None else None  # only load scaling uses it
    return _cached_workload(json.dumps(w, sort_keys=True), procs, _file_stamp(w.get("trace")))


def _build_workload(w: dict[str, Any], procs: int | None) -> Any:
    from o2ksim.workloads.swf import Trace, read_swf

    if w.get("trace"):
        trace = read_swf(w["trace"], lenient=bool(w.get("lenient")))
    elif w.get("model") and w.get("cooldown_chunks"):  # the month without its tail: often cached
        month = {k: v for k, v in w.items() if k not in ("cooldown_chunks", "cooldown_chunk")}
        trace = build_workload({**month, "load": None})
    elif w.get("model"):
        try:
            from o2ksim.workloads.models import generate
        except ImportError:
            raise O2KSimError("workload models are not available in this o2ksim") from None
        trace = generate(
            w["model"], span=w["span"], seed=int(w["seed"] or 0), params=w["params"] or None
        )
    else:
        trace = Trace(inline_jobs_frame(w["jobs"]), _inline_header(w["jobs"]), "inline jobs")
    main = trace
    if w.get("model") and w.get("cooldown_chunks"):  # arrivals after the span (T§3.4)
        from o2ksim.workloads.cooldown import COOLDOWN_CHUNK, append_tail

        trace = append_tail(
            trace, w["model"], after=w["span"], seed=int(w["seed"] or 0),
            params=w["params"] or None, chunks=int(w["cooldown_chunks"]),
            chunk_length=float(w.get("cooldown_chunk") or COOLDOWN_CHUNK),
        )  # fmt: skip
    if w.get("load") is not None:
        from o2ksim.workloads.reshape import offered_load, scale_load, trace_span

        rho = float(w["load"])
        if trace is not main:  # scale the tail by the same factor as the month
            span = trace_span(main)
            factor = offered_load(main, procs, span) / rho
            rho = offered_load(trace, procs, span) / factor
            trace = scale_load(trace, rho, procs=procs, span=span)
        else:
            trace = scale_load(trace, rho, procs=procs)
    return trace


def simulate_run(
    config: dict[str, Any],
    *,
    explain: bool = False,
    observers: Iterable[Any] = (),
    progress: bool = False,
) -> Any:
    """Run one configuration (a :attr:`RunSpec.config`): a :class:`~o2ksim.runconfig.RunConfig`
    read with :meth:`~o2ksim.runconfig.RunConfig.from_dict`, run by
    :func:`~o2ksim.simulate.run_config`."""
    from o2ksim.runconfig import RunConfig
    from o2ksim.simulate import run_config

    cfg = RunConfig.from_dict(config, explain=explain, progress=progress)
    return run_config(cfg, observers=tuple(observers))


def inline_jobs_frame(jobs: Iterable[dict[str, Any]]) -> Any:
    """SWF columns for jobs written inline in a scenario (memory: KB per processor, as SWF)."""
    from o2ksim.workloads.swf import jobs_frame

    rows = []
    for j in sorted(jobs, key=lambda j: (j["submit"], j["id"])):
        procs = j["procs"]
        mem_kb = -1 if j["mem_mb"] is None else math.ceil(j["mem_mb"] * 1024 / procs)
        used_kb = -1 if j.get("used_mb") is None else math.ceil(j["used_mb"] * 1024 / procs)
        run = math.ceil(j["runtime"])
        req = math.ceil(j["requested"])
        rows.append(
            [j["id"], math.floor(j["submit"]), -1, run, procs, -1, used_kb, procs, req, mem_kb,
             1, j["user"], -1, -1, -1, -1, -1, -1]
        )  # fmt: skip
    return jobs_frame(rows)


def _inline_header(jobs: list[dict[str, Any]]) -> Any:
    from o2ksim.workloads.swf import SWFHeader

    return SWFHeader(max_procs=max(j["procs"] for j in jobs), computer="inline")


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
