"""The synthetic workload models by name: ``generate``, ``fit`` and their parameter files.

Three models from the papers (SPEC §4), each one module holding its
parameter validation, generator and (where the paper gives a method) fit:

* ``o2k`` -- the NCSA Origin 2000 model built from thesis ch. 4 (:mod:`o2ksim.workloads.o2k`);
* ``cirne-berman`` -- Cirne & Berman's supercomputer model, with the parameter
  sets of its four sites ANL, CTC, KTH and SDSC (:mod:`o2ksim.workloads.cirne_berman`);
* ``downey`` -- Downey's uniform-log lifetimes and cluster sizes (:mod:`o2ksim.workloads.downey`).

Parameters live in TOML files shipped in ``o2ksim/data/models/`` (one comment
per value naming the table or section it comes from).  Everywhere a model
takes parameters it accepts ``None`` (the model's default set), the name of a
shipped set (``"kth"``), a path to a TOML file, or a mapping.  Files and
mappings are deep-merged over the model's default set, so a file only needs
the values it changes; a file may name another shipped set to start from with
``base = "sdsc"``.

The package's dependencies point one way: :mod:`~o2ksim.workloads.swf` (the
trace data model) and :mod:`~o2ksim.workloads.clock`;
:mod:`~o2ksim.workloads.distributions` (distributions and their estimators);
:mod:`~o2ksim.workloads.params` (parameter files) and
:mod:`~o2ksim.workloads.synthetic` (the trace helper of every generator);
the model modules; this registry on top, with
:mod:`~o2ksim.workloads.characterize` beside it.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast

import numpy as np

from o2ksim import __version__
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.o2k_classes import TABLE6_MONTHS
from o2ksim.registry import Registry
from o2ksim.validation import (
    MAX_GENERATED_JOBS,
    MAX_UNIX_TIME,
    check_number,
    check_seed,
    check_span_option,
    nearest,
)
from o2ksim.workloads.params import (
    DEFAULT_START_TIME,
    Checker,
    ParamSource,
    ReadKeys,
    deep_merge,
    dump_toml,
    parse_span,
    read_toml,
    write_params,
)
from o2ksim.workloads.swf import SWFHeader, Trace

__all__ = [
    "DEFAULT_START_TIME",
    "MODELS",
    "PARAM_SETS",
    "Checker",
    "Model",
    "ParamSource",
    "dump_toml",
    "fit",
    "generate",
    "load_params",
    "model_module",
    "param_file",
    "parse_span",
    "write_params",
]


class ModelModule(Protocol):
    """What a model module provides: ``validate`` and ``generate`` (and ``fit`` when it can be fitted)."""

    def validate(self, raw: Mapping[str, Any], source: str | Path = ...) -> dict[str, Any]: ...

    def generate(
        self, params: Mapping[str, Any], *, span: float, seed: int, start_time: int
    ) -> Trace: ...


@dataclass(frozen=True)
class Model:
    """A workload model: its module (imported on first use) and its shipped parameter sets.

    ``module`` has ``validate(params, source)`` and ``generate(params, *,
    span, seed, start_time)``, and ``fit(trace, **options)`` when the model
    can be fitted.  ``sets`` are the shipped parameter sets, the model's
    default first; set ``S`` of model ``M`` is the file
    ``o2ksim/data/models/M-S.toml`` (``M.toml`` when ``S`` is ``M``).
    ``aliases`` are other names users may write.
    """

    name: str
    module: str
    sets: tuple[str, ...]
    aliases: tuple[str, ...] = ()

    def load(self) -> ModuleType:
        """The model's module (imported now if it was not: Cirne-Berman and Downey need
        pandas and the prediction package, which a run of the O2K model does not)."""
        return importlib.import_module(self.module)


MODELS: Registry[Model] = Registry(
    "workload model",
    {
        m.name: m
        for m in (
            Model("o2k", "o2ksim.workloads.o2k", ("o2k", *TABLE6_MONTHS)),
            Model(
                "cirne-berman",
                "o2ksim.workloads.cirne_berman",
                ("kth", "anl", "ctc", "sdsc"),
                aliases=("cb", "cirne", "cirneberman"),
            ),
            Model("downey", "o2ksim.workloads.downey", ("downey",)),
        )
    },
)
"""The workload models by name (the shared :class:`o2ksim.registry.Registry`):
``MODELS.register(Model(...))`` adds one.

The O2K model's month sets (``"2000-02"``...) are its default set with that
month's Table 6 column (:func:`o2ksim.workloads.o2k.month_params`)."""


def _param_sets() -> dict[str, tuple[str, ...]]:
    return {name: m.sets for name, m in MODELS.entries().items()}


PARAM_SETS: Mapping[str, tuple[str, ...]] = _param_sets()
"""The shipped parameter sets of each built-in model, the default first."""


# ----------------------------------------------------------------------------
# names, spans
# ----------------------------------------------------------------------------


def _model(model: str) -> Model:
    """The registered model ``model`` names (case, ``_`` for ``-`` and aliases forgiven)."""
    name = str(model).strip().lower().replace("_", "-")
    entries = MODELS.entries()
    found = entries.get(name) or next((m for m in entries.values() if name in m.aliases), None)
    if found is None:
        raise O2KSimError(f"unknown workload model '{model}' (known: {', '.join(entries)})")
    return found


def _canonical(model: str) -> str:
    return _model(model).name


def model_module(model: str) -> ModuleType:
    """The module implementing *model*."""
    return _model(model).load()


# ----------------------------------------------------------------------------
# parameter files
# ----------------------------------------------------------------------------


def param_file(model: str, name: str | None = None) -> Path:
    """The path of a shipped parameter set (``name=None``: the model's default)."""
    m = _model(model)
    set_name = (name or m.sets[0]).lower().removeprefix(f"{m.name}-")
    if m.name == "o2k" and set_name in TABLE6_MONTHS:
        set_name = "o2k"  # a month is the default set with that month's Table 6 column
    if set_name not in m.sets:
        raise O2KSimError(
            f"unknown parameter set '{name}' for model {m.name} (known: {', '.join(m.sets)})"
        )
    file = f"{m.name}.toml" if set_name == m.name else f"{m.name}-{set_name}.toml"
    return Path(str(resources.files("o2ksim") / "data" / "models" / file))


def load_params(
    model: str, params: ParamSource = None, *, overrides: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], str]:
    """The validated parameters of *model* and a short description of where they came from.

    *params* is ``None`` (the default set), a shipped set name (``"kth"``), a
    TOML path, or a mapping; files and mappings are deep-merged over the
    default set (or over the set named by their ``base`` key).  Validation is
    the model module's ``validate(params, source)``, which raises
    :class:`~o2ksim.errors.ConfigError` naming the file and the field.
    """
    m = _canonical(model)
    module = model_module(m)
    default_path = param_file(m)
    if params is None:
        raw, source, path = read_toml(default_path), default_path.name, default_path
    elif isinstance(params, Mapping):
        over = dict(params)
        base_path = param_file(m, over.pop("base")) if "base" in over else default_path
        raw, source, path = deep_merge(read_toml(base_path), over), "<mapping>", None
    else:
        text = os.fspath(params)
        p = Path(text)
        if p.suffix.lower() != ".toml" and os.sep not in text and not p.exists():
            path = param_file(m, text)
            raw, source = read_toml(path), path.name
            if m == "o2k" and text in TABLE6_MONTHS:
                base = module.validate({**raw, "model": m}, path)
                raw = deep_merge(raw, module.month_params(text, base, DEFAULT_START_TIME))
                source = f"{path.name} ({text}, Table 6)"
        else:
            path = p
            over = read_toml(p)
            fmodel = over.get("model")
            if fmodel is not None and _canonical(str(fmodel)) != m:
                raise ConfigError(p, f"this file is for model '{fmodel}', not '{m}'", field="model")
            base_name = over.pop("base", None)
            base_path = param_file(m, base_name) if base_name else default_path
            raw, source = deep_merge(read_toml(base_path), over), str(p)
    if overrides:
        raw = deep_merge(raw, overrides)
    raw["model"] = m
    where = path if path is not None else source
    read = ReadKeys(raw)
    params_ok = module.validate(read, where)
    refuse_unread(read, where)
    return params_ok, source


INFORMATIONAL = ("fit", "model")
"""Tables and keys of a parameter file that no generator reads: ``[fit]`` (the diagnostics
``o2ksim fit`` writes for the reader) and ``model`` (checked against the model asked for)."""


def refuse_unread(read: ReadKeys, where: str | Path) -> None:
    """Refuse a key the model's ``validate`` never read: a misspelling (``jobs_per_dy``)
    would leave the default in force without a word."""
    unread = read.unread(INFORMATIONAL)
    if not unread:
        return
    field = unread[0]
    parent, _, key = field.rpartition(".")
    siblings = [p.rpartition(".")[2] for p in read.seen if p.rpartition(".")[0] == parent]
    guess = nearest(key.split("[")[0], siblings)
    hint = f"did you mean '{guess}'? " if guess else ""
    more = (
        f" ({len(unread) - 1} more: {', '.join(unread[1:4])}{'...' if len(unread) > 4 else ''})"
        if len(unread) > 1
        else ""
    )
    raise Checker(where).fail(
        field,
        f"unknown key: no generator reads it ({hint}keys here: {', '.join(sorted(siblings)) or 'none'}){more}",
    )


# ----------------------------------------------------------------------------
# generate / fit
# ----------------------------------------------------------------------------


def generate(
    model: str,
    *,
    span: float | str,
    seed: int,
    params: ParamSource = None,
    start_time: int | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Trace:
    """A synthetic :class:`~o2ksim.workloads.swf.Trace` of *model* covering *span* seconds.

    The same (model, parameters, span, seed, start_time) always gives the same
    jobs: every random draw comes from ``numpy.random.default_rng(seed)``
    (split into one stream per model component).  *start_time* is the trace's
    ``UnixStartTime`` (default :data:`DEFAULT_START_TIME`, a Monday 00:00
    UTC); submit times are seconds after it.  *overrides* are deep-merged over
    the loaded parameters (``{"dedicated": {"include": True}}``).  The header records the model,
    seed, span and the full parameters (``extra["O2KSimParams"]``, JSON).
    """
    m = _canonical(model)
    span_s = check_span_option(parse_span(span), "span", warmup=False)
    try:
        seed_i = int(seed)
    except (TypeError, ValueError, OverflowError):
        raise O2KSimError(f"seed must be an integer, got '{seed}'") from None
    if seed_i < 0:
        raise O2KSimError(f"seed must be non-negative, got {seed_i}")
    check_seed(seed_i, "generate")
    p, source = load_params(m, params, overrides=overrides)
    start = DEFAULT_START_TIME if start_time is None else check_start_time(start_time, "start_time")
    module = model_module(m)
    _check_job_count(module, p, source, span_s, start)
    trace = module.generate(p, span=span_s, seed=seed_i, start_time=start)
    _stamp_header(trace.header, model=m, params=p, source=source, seed=seed_i, span=span_s)
    trace.source = f"{m}:{source}:seed={seed_i}"
    return trace


def check_start_time(value: Any, option: str) -> int:
    """A generated trace's ``UnixStartTime``: whole seconds within what o2ksim's own SWF
    reader takes back (:data:`~o2ksim.validation.MAX_UNIX_TIME`, 9999-12-31 23:59:59 UTC)."""
    return int(
        check_number(
            value, "generate", option, minimum=-MAX_UNIX_TIME, maximum=MAX_UNIX_TIME, integer=True
        )
    )


def _check_job_count(
    module: ModuleType, params: Mapping[str, Any], source: str, span: float, start: int
) -> None:
    """Refuse parameters whose span would need more than
    :data:`~o2ksim.validation.MAX_GENERATED_JOBS` jobs (before one is drawn, not when the
    memory runs out); a model module without ``expected_jobs`` is not checked."""
    expected_jobs = getattr(module, "expected_jobs", None)
    if expected_jobs is None:
        return
    expected = float(expected_jobs(params, span, start))
    if not expected <= MAX_GENERATED_JOBS:
        where = Path(source) if Path(source).is_file() else source  # a file: its line too
        raise Checker(where).fail(
            getattr(module, "RATE_FIELD", "arrival"),
            f"{expected:.3g} jobs expected over {span / 86400:g} days, more than the "
            f"{MAX_GENERATED_JOBS:,} a generated workload may hold; lower the rate or the span",
        )


def _stamp_header(
    header: SWFHeader, *, model: str, params: Mapping[str, Any], source: str, seed: int, span: float
) -> None:
    header.notes.insert(
        0,
        f"synthetic workload generated by o2ksim {__version__}: model {model}, "
        f"parameters {source}, seed {seed}, span {span:.12g} s",
    )
    header.extra["O2KSimModel"] = model
    header.extra["O2KSimSeed"] = str(seed)
    header.extra["O2KSimSpan"] = f"{span:.12g}"
    header.extra["O2KSimParamSource"] = str(source)
    header.extra["O2KSimParams"] = json.dumps(params, separators=(",", ":"), default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def fit(model: str, trace: Trace, **options: Any) -> dict[str, Any]:
    """Estimate *model*'s parameters from *trace* with the papers' methods.

    Returns a parameter mapping that :func:`load_params`/:func:`generate`
    accept (write it with :func:`write_params`).  Only ``cirne-berman``
    (:func:`o2ksim.workloads.cirne_berman.fit`) and ``downey``
    (:func:`o2ksim.workloads.downey.fit`) can be fitted.
    """
    m = _canonical(model)
    module = model_module(m)
    if hasattr(module, "fit"):
        return cast(dict[str, Any], module.fit(trace, **options))
    if m == "o2k":
        raise O2KSimError(
            "the o2k model has no automatic fit (its conditional distributions come from thesis "
            "ch. 4); use `o2ksim characterize` to compare a trace with it"
        )
    raise O2KSimError(f"the {m} model has no automatic fit")
