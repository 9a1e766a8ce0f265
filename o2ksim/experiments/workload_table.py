"""The ``[workload]`` table of a scenario file: a trace, a model or inline jobs, read and validated.

Split from :mod:`o2ksim.experiments.tables` (which re-exports what it needs):
the largest table, with its own rules for trace paths, inline ``[[workload.job]]``
rows and runtime estimates.  Each function returns plain JSON values (paths
made absolute, durations in seconds) or raises
:class:`~o2ksim.errors.ConfigError` naming the field.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from o2ksim import paths
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.validation import (
    MAX_JOB_MEMORY_KB,
    MAX_LOAD,
    MIN_LOAD,
    check_bool,
    check_count,
    check_duration,
    check_keys,
    check_number,
    check_seed,
    check_span,
    require_table,
)
from o2ksim.workloads.transforms import Estimates

WORKLOAD_KEYS = {
    "trace", "model", "params", "span", "seed", "job", "load", "estimates",
    "window", "warmup", "lenient",
}  # fmt: skip
JOB_KEYS = {"id", "submit", "procs", "runtime", "requested", "mem_mb", "mem_gb", "used_mb", "user"}


def data_path(value: str, base: Path, kind: str, where: str, fld: str) -> str:
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
        out["jobs"] = inline_jobs(value["job"], where)
    if "load" in value:
        out["load"] = load_value(value["load"], where, "workload.load")
    if "estimates" in value:
        out["estimates"] = estimates_value(value["estimates"], where, "workload.estimates")
    if "lenient" in value:
        out["lenient"] = check_bool(value["lenient"], where, "workload.lenient")
    # window/warm-up may be given here or in [protocol]; _protocol moves them there
    for k in ("window", "warmup"):
        if k in value:
            out["_" + k] = value[k]
    return out


def load_value(value: Any, where: str, fld: str) -> float | None:
    """A target offered load (``workload.load``, or a level of the factor), checked when the
    scenario is loaded against the range load scaling takes (:data:`MIN_LOAD` to
    :data:`MAX_LOAD`, as ``generate --load``), so that ``load = 200`` is refused before any
    results folder exists rather than failing every run."""
    if value is None:
        return None
    return float(
        check_number(value, where, fld, minimum=MIN_LOAD, maximum=MAX_LOAD, unit=" (offered load)")
    )


def estimates_value(value: Any, where: str, fld: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(where, "must be a runtime-estimate scenario name", field=fld)
    try:
        return Estimates.parse(value).text
    except O2KSimError as exc:
        raise ConfigError(where, str(exc), field=fld) from None


def inline_jobs(value: Any, where: str) -> list[dict[str, Any]]:
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
