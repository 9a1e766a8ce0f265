"""The tables of a scenario file, each read and validated: machine, workload, policies, protocol, factors, outputs.

:func:`o2ksim.experiments.scenario.parse_scenario` calls one function per
table; each returns plain JSON values (paths made absolute, durations in
seconds) or raises :class:`~o2ksim.errors.ConfigError` naming the field.
``docs/guides/scenarios.md`` describes every key.
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from o2ksim import paths
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.machine import MachineSpec, load_machine, parse_machine
from o2ksim.plugins import is_object_spec
from o2ksim.validation import (
    MAX_JOB_MEMORY_KB,
    check_bool,
    check_count,
    check_duration,
    check_interval,
    check_keys,
    check_number,
    check_overrun,
    check_seed,
    check_span,
    require_table,
)
from o2ksim.workloads.transforms import Estimates

TOP_KEYS = {
    "name", "description", "source", "machine", "workload", "policy", "policies",
    "protocol", "factors", "outputs", "reduced",
}  # fmt: skip
WORKLOAD_KEYS = {
    "trace", "model", "params", "span", "seed", "job", "load", "estimates",
    "window", "warmup", "lenient",
}  # fmt: skip
PROTOCOL_KEYS = {
    "window", "warmup", "seeds", "interval", "kill_overrun", "overrun_grace", "overrun", "availability",
}  # fmt: skip
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


def toml_error_line(exc: tomllib.TOMLDecodeError) -> int | None:
    m = re.search(r"line (\d+)", str(exc))
    return int(m.group(1)) if m else None


def machine_value(value: Any, where: str, base: Path, fld: str = "machine") -> Any:
    """The machine as the run configuration names it: ``None``, a table, a name or an absolute path."""
    if value is None or isinstance(value, dict):
        return value
    if not isinstance(value, str):
        raise ConfigError(where, "must be a machine name, a TOML path or a table", field=fld)
    return _data_path(value, base, "hosts", where, fld)


def machine_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def parse_machines(
    values: Iterable[Any], where: str
) -> dict[str, MachineSpec]:
    """Each machine the scenario names (its ``machine`` and factor levels), parsed once.

    The runs get these very objects (:meth:`Scenario.run_config`); a worker
    process rebuilds a machine from the run's configuration, once per run.
    """
    out: dict[str, MachineSpec] = {}
    for value in values:
        key = machine_key(value)
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


def workload_section(value: Any, where: str, base: Path) -> dict[str, Any]:
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


def policies_section(data: dict[str, Any], where: str, base: Path) -> tuple[PolicyEntry, ...]:
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
                label += "(" + ",".join(f"{k}={show_value(v)}" for k, v in params.items()) + ")"
        if not isinstance(label, str) or not label:
            raise ConfigError(where, "must be a non-empty string", field=f"{fld}.label")
        out.append(PolicyEntry(name, label, params))
    labels = [p.label for p in out]
    if len(set(labels)) != len(labels):
        raise ConfigError(where, "policy labels must be unique (add label = ...)", field="policy")
    return tuple(out)


def protocol_section(value: Any, workload: dict[str, Any], where: str) -> dict[str, Any]:
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
        seconds: list[float] = []
        for w in window:
            if isinstance(w, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ].*)?", w.strip()):
                continue  # a date: read against the trace's UnixStartTime when the run starts
            if isinstance(w, float) and not math.isfinite(w):
                raise ConfigError(
                    where, f"must be finite, got {w}: NaN selects nothing", field="protocol.window"
                )
            bound = check_duration(w, where, "protocol.window", allow_none=False)
            assert bound is not None
            seconds.append(bound)
        if len(seconds) == 2 and not seconds[1] > seconds[0]:
            raise ConfigError(
                where,
                f"the window's end ({window[1]}) must be after its start ({window[0]})",
                field="protocol.window",
            )
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
    if "overrun" in value:  # only when given: the plans of earlier scenarios stay as they were
        out["overrun"] = check_overrun(value["overrun"], where, "protocol.overrun")
    return out


def flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"workload": {"load": [..]}}`` -> ``{"workload.load": [..]}`` (params stay leaf tables)."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v and not key.endswith(".params"):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def factors_section(
    value: Any, where: str, base: Path, workload: dict[str, Any]
) -> dict[str, tuple[Any, ...]]:
    if not isinstance(value, dict):
        raise ConfigError(where, "must be a table of lists", field="factors")
    out: dict[str, tuple[Any, ...]] = {}
    for key, levels in flatten(value).items():
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
        if section == "protocol" and rest not in PROTOCOL_KEYS - {"seeds", "availability"}:
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
            elif key == "protocol.overrun":
                check_overrun(v, where, fld)
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
                v = machine_value(v, where, base, fld)
            normalised.append(v)
        out[key] = tuple(normalised)
    return out


def outputs_section(value: Any, where: str) -> dict[str, Any]:
    require_table(value, where, "outputs")
    check_keys(value, OUTPUT_KEYS, where, "outputs.")
    out: dict[str, Any] = {"dir": None, "report": True, "segments": True}
    if "dir" in value:
        if not isinstance(value["dir"], str) or not value["dir"]:
            raise ConfigError(where, "must be a directory path", field="outputs.dir")
        out["dir"] = value["dir"]
    for k in ("report", "segments"):
        if k in value:
            out[k] = check_bool(value[k], where, f"outputs.{k}")
    return out


def set_path(target: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for p in parts[:-1]:
        nxt = target.get(p)
        if not isinstance(nxt, dict):
            nxt = {}
            target[p] = nxt
        target = nxt
    target[parts[-1]] = value


def show_value(v: Any) -> str:
    if isinstance(v, dict):
        return v.get("name", "inline machine") if "host" in v else json.dumps(v, sort_keys=True)
    if isinstance(v, str) and os.sep in v:
        return Path(v).name
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


__all__ = [
    "DEFAULT_WARMUP",
    "FACTOR_SECTIONS",
    "JOB_KEYS",
    "OUTPUT_KEYS",
    "POLICY_KEYS",
    "PROTOCOL_KEYS",
    "TOP_KEYS",
    "WORKLOAD_KEYS",
    "PolicyEntry",
    "factors_section",
    "find_trace",
    "flatten",
    "machine_key",
    "machine_value",
    "outputs_section",
    "parse_machines",
    "policies_section",
    "protocol_section",
    "set_path",
    "show_value",
    "toml_error_line",
    "workload_section",
]
