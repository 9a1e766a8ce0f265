"""The tables of a scenario file, each read and validated: machine, workload, policies, protocol, factors, outputs.

:func:`o2ksim.experiments.scenario.parse_scenario` calls one function per
table (the ``[workload]`` table is :mod:`o2ksim.experiments.workload_table`); each returns plain JSON values (paths made absolute, durations in
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

from o2ksim.errors import ConfigError
from o2ksim.experiments.workload_table import (
    JOB_KEYS,
    WORKLOAD_KEYS,
    data_path,
    estimates_value,
    find_trace,
    load_value,
    workload_section,
)
from o2ksim.machine import MachineSpec, load_machine, parse_machine
from o2ksim.plugins import is_object_spec
from o2ksim.validation import (
    check_bool,
    check_duration,
    check_interval,
    check_keys,
    check_overrun,
    check_span,
    require_table,
)

TOP_KEYS = {
    "name", "description", "source", "machine", "workload", "policy", "policies",
    "protocol", "factors", "outputs", "reduced",
}  # fmt: skip
PROTOCOL_KEYS = {
    "window", "warmup", "seeds", "interval", "kill_overrun", "overrun_grace", "overrun", "availability",
}  # fmt: skip
OUTPUT_KEYS = {"dir", "report", "segments"}
POLICY_KEYS = {"name", "label", "params"}
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


def machine_value(value: Any, where: str, base: Path, fld: str = "machine") -> Any:
    """The machine as the run configuration names it: ``None``, a table, a name or an absolute path."""
    if value is None or isinstance(value, dict):
        return value
    if not isinstance(value, str):
        raise ConfigError(where, "must be a machine name, a TOML path or a table", field=fld)
    return data_path(value, base, "hosts", where, fld)


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


def reduced_overrides(text: str) -> dict[str, Any]:
    """The keys the ``[reduced]`` table of the scenario TOML ``text`` sets (``protocol.window``)."""
    try:
        overrides = tomllib.loads(text).get("reduced")
    except tomllib.TOMLDecodeError:
        return {}
    return flatten(overrides) if isinstance(overrides, dict) else {}


def as_written(fld: str | None, overridden: dict[str, Any]) -> str | None:
    """A refused field as the user wrote it: ``reduced.KEY`` when the ``[reduced]`` table sets it
    (or a table above or below it), else as it is."""
    if fld and not fld.startswith("reduced.") and any(
        fld == k or fld.startswith(k + ".") or k.startswith(fld + ".") for k in overridden
    ):
        return f"reduced.{fld}"
    return fld


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
                v = estimates_value(v, where, fld)
            elif key == "workload.load":
                v = load_value(v, where, fld)
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
    "as_written",
    "factors_section",
    "find_trace",
    "flatten",
    "machine_key",
    "machine_value",
    "outputs_section",
    "parse_machines",
    "policies_section",
    "protocol_section",
    "reduced_overrides",
    "set_path",
    "show_value",
    "workload_section",
]
