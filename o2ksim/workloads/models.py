"""The synthetic workload models by name: ``generate``, ``fit`` and their parameter files.

Three models from the papers (SPEC §4), each a module of this package:

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

Why a registry: the CLI (``o2ksim generate/fit``), the simulator's default
workload and the tests all reach the models through :func:`generate` and
:func:`fit`, so a model is added in one place.  The model modules are imported
lazily, which keeps ``o2ksim generate`` fast to start.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import tomllib
from collections.abc import Mapping
from importlib import import_module, resources
from pathlib import Path
from typing import Any

import numpy as np

from o2ksim.errors import ConfigError, O2KSimError

__all__ = [
    "DEFAULT_START_TIME",
    "MODELS",
    "PARAM_SETS",
    "Checker",
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

MODELS: tuple[str, ...] = ("o2k", "cirne-berman", "downey")
"""The model names :func:`generate` and :func:`fit` accept."""

_MODULES = {"o2k": "o2k", "cirne-berman": "cirne_berman", "downey": "downey"}

PARAM_SETS: dict[str, tuple[str, ...]] = {
    "o2k": ("o2k",),
    "cirne-berman": ("kth", "anl", "ctc", "sdsc"),
    "downey": ("downey",),
}
"""Shipped parameter sets per model; the first one is the model's default."""

_SET_FILES = {
    ("o2k", "o2k"): "o2k.toml",
    ("downey", "downey"): "downey.toml",
    **{("cirne-berman", s): f"cirne-berman-{s}.toml" for s in ("anl", "ctc", "kth", "sdsc")},
}

DEFAULT_START_TIME = 946857600
"""2000-01-03 00:00:00 UTC, a Monday: the default ``UnixStartTime`` of generated traces.

Starting on a Monday at midnight makes the weekday/weekend and hour-of-day
periods of the models exact in trace time."""

ParamSource = str | os.PathLike[str] | Mapping[str, Any] | None


# ----------------------------------------------------------------------------
# names, spans
# ----------------------------------------------------------------------------


def _canonical(model: str) -> str:
    name = str(model).strip().lower().replace("_", "-")
    if name in ("cb", "cirne", "cirneberman"):
        name = "cirne-berman"
    if name not in _MODULES:
        raise O2KSimError(f"unknown workload model '{model}' (known: {', '.join(MODELS)})")
    return name


def model_module(model: str) -> Any:
    """The module implementing *model* (imported on first use)."""
    return import_module(f"o2ksim.workloads.{_MODULES[_canonical(model)]}")


_SPAN_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_span(text: str | float | int) -> float:
    """Seconds from ``30d``, ``12h``, ``90m``, ``3600s``, ``3600``, ``2w`` (also ``1.5d``).

    Raises :class:`O2KSimError` for anything else or a span that is not positive.
    """
    if isinstance(text, int | float) and not isinstance(text, bool):
        value = float(text)
    else:
        s = str(text).strip().lower()
        unit = ""
        num = s
        for u in sorted(_SPAN_UNITS, key=len, reverse=True):
            if s.endswith(u):
                unit, num = u, s[: -len(u)].strip()
                break
        try:
            value = float(num) * _SPAN_UNITS.get(unit, 1.0)
        except ValueError:
            raise O2KSimError(f"'{text}' is not a span (examples: 30d, 12h, 3600s, 2w)") from None
    if not math.isfinite(value) or value <= 0:
        raise O2KSimError(f"span must be positive, got '{text}'")
    return value


# ----------------------------------------------------------------------------
# parameter files
# ----------------------------------------------------------------------------


def param_file(model: str, name: str | None = None) -> Path:
    """The path of a shipped parameter set (``name=None``: the model's default)."""
    m = _canonical(model)
    set_name = (name or PARAM_SETS[m][0]).lower()
    set_name = set_name.removeprefix("cirne-berman-")
    key = (m, set_name)
    if key not in _SET_FILES:
        raise O2KSimError(
            f"unknown parameter set '{name}' for model {m} (known: {', '.join(PARAM_SETS[m])})"
        )
    return Path(str(resources.files("o2ksim") / "data" / "models" / _SET_FILES[key]))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise O2KSimError(f"{path}: no such parameter file") from None
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise ConfigError(path, f"not valid TOML: {exc}", line=line) from None


def _deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_params(model: str, params: ParamSource = None) -> tuple[dict[str, Any], str]:
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
        raw, source, path = _read_toml(default_path), default_path.name, default_path
    elif isinstance(params, Mapping):
        over = dict(params)
        base_path = param_file(m, over.pop("base")) if "base" in over else default_path
        raw, source, path = _deep_merge(_read_toml(base_path), over), "<mapping>", None
    else:
        text = os.fspath(params)
        p = Path(text)
        if p.suffix.lower() != ".toml" and os.sep not in text and not p.exists():
            path = param_file(m, text)
            raw, source = _read_toml(path), path.name
        else:
            path = p
            over = _read_toml(p)
            fmodel = over.get("model")
            if fmodel is not None and _canonical(str(fmodel)) != m:
                raise ConfigError(p, f"this file is for model '{fmodel}', not '{m}'", field="model")
            base_name = over.pop("base", None)
            base_path = param_file(m, base_name) if base_name else default_path
            raw, source = _deep_merge(_read_toml(base_path), over), str(p)
    raw["model"] = m
    return module.validate(raw, path if path is not None else source), source


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        v = float(value)
        if not math.isfinite(v):
            return "inf" if v > 0 else ("-inf" if v < 0 else "nan")
        text = repr(v)
        return text if ("." in text or "e" in text or "n" in text) else text + ".0"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple | np.ndarray):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return (
            "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
        )
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _toml_key(key: str) -> str:
    k = str(key)
    return k if k and all(c.isalnum() or c in "-_" for c in k) else json.dumps(k)


def _is_table_array(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) > 0
        and all(isinstance(v, Mapping) for v in value)
    )


def dump_toml(
    data: Mapping[str, Any], comments: Mapping[str, str] | None = None, header: str = ""
) -> str:
    """A TOML document for nested mappings (tables, arrays of tables, scalars, arrays).

    *comments* maps dotted key paths (``"partition.chi"``) to a trailing
    comment; *header* is written first as ``#`` lines.  Python's ``tomllib``
    reads but does not write, and the parameter files are small, so this
    writer is enough.
    """
    comments = comments or {}
    out: list[str] = [f"# {line}".rstrip() for line in header.splitlines()]
    if out:
        out.append("")

    def emit(table: Mapping[str, Any], prefix: str) -> None:
        scalars = [
            (k, v)
            for k, v in table.items()
            if not isinstance(v, Mapping) and not _is_table_array(v)
        ]
        for k, v in scalars:
            path = f"{prefix}{k}"
            note = comments.get(path)
            out.append(f"{_toml_key(k)} = {_toml_value(v)}" + (f"  # {note}" if note else ""))
        for k, v in table.items():
            path = f"{prefix}{k}"
            if isinstance(v, Mapping):
                out.append("")
                if path in comments:
                    out.append(f"# {comments[path]}")
                out.append(f"[{'.'.join(_toml_key(p) for p in path.split('.'))}]")
                emit(v, path + ".")
            elif _is_table_array(v):
                for item in v:
                    out.append("")
                    out.append(f"[[{'.'.join(_toml_key(p) for p in path.split('.'))}]]")
                    emit(item, path + ".")

    emit(data, "")
    return "\n".join(out).rstrip() + "\n"


def write_params(
    params: Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    header: str = "",
    comments: Mapping[str, str] | None = None,
) -> None:
    """Write a parameter mapping as a TOML file :func:`load_params` reads back."""
    Path(path).write_text(dump_toml(params, comments, header), encoding="utf-8")


class Checker:
    """Validation helpers for parameter files: each failure is a :class:`ConfigError` naming
    the file, the dotted field path and, when the file is at hand, the line of that key."""

    def __init__(self, source: str | Path) -> None:
        self.source = source
        self._lines: list[str] | None = None
        if isinstance(source, Path) and source.exists():
            try:
                self._lines = source.read_text(encoding="utf-8").splitlines()
            except OSError:
                self._lines = None

    def fail(self, field: str, message: str) -> ConfigError:
        return ConfigError(self.source, message, line=self._line_of(field), field=field)

    def _line_of(self, field: str) -> int | None:
        """The line of *field* (``a.b[2].c``) in the file: follows tables and arrays of tables."""
        if self._lines is None:
            return None
        parts = field.split(".")
        start = 0
        prefix: list[str] = []
        for part in parts[:-1]:
            m = re.fullmatch(r"(\w[\w-]*)\[(\d+)\]", part)
            name, idx = (m.group(1), int(m.group(2))) if m else (part, None)
            prefix.append(name)
            full = ".".join(prefix)
            header = f"[[{full}]]" if idx is not None else f"[{full}]"
            seen = -1
            for i in range(start, len(self._lines)):
                if self._lines[i].strip().startswith(header):
                    seen += 1
                    if idx is None or seen == idx:
                        start = i + 1
                        break
        key = parts[-1].split("[", 1)[0]
        for i in range(start, len(self._lines)):
            text = self._lines[i].strip()
            if text.startswith("[") and i > start and not text.startswith("[" + ".".join(prefix)):
                break
            if text.split("=", 1)[0].strip() == key and "=" in text:
                return i + 1
        for i, text in enumerate(self._lines):  # fall back to the first line with that key
            if text.strip().split("=", 1)[0].strip() == key and "=" in text:
                return i + 1
        return None

    def get(self, table: Mapping[str, Any], key: str, field: str) -> Any:
        if not isinstance(table, Mapping) or key not in table:
            raise self.fail(field, "missing")
        return table[key]

    def number(
        self,
        table: Mapping[str, Any],
        key: str,
        field: str,
        *,
        lo: float = -math.inf,
        hi: float = math.inf,
        lo_open: bool = False,
    ) -> float:
        v = self.get(table, key, field)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(float(v)):
            raise self.fail(field, f"must be a number, got {v!r}")
        v = float(v)
        if v < lo or v > hi or (lo_open and v == lo):
            bound = f"> {lo:g}" if lo_open else f">= {lo:g}"
            raise self.fail(field, f"must be {bound} and <= {hi:g}, got {v:g}")
        return v

    def numbers(
        self,
        table: Mapping[str, Any],
        key: str,
        field: str,
        *,
        n: int | None = None,
        lo: float = -math.inf,
    ) -> list[float]:
        v = self.get(table, key, field)
        if not isinstance(v, list) or not v:
            raise self.fail(field, "must be a non-empty list of numbers")
        out = []
        for x in v:
            if (
                isinstance(x, bool)
                or not isinstance(x, int | float)
                or not math.isfinite(float(x))
                or x < lo
            ):
                raise self.fail(field, f"must hold numbers >= {lo:g}, got {x!r}")
            out.append(float(x))
        if n is not None and len(out) != n:
            raise self.fail(field, f"must have {n} values, got {len(out)}")
        return out

    def probabilities(
        self, table: Mapping[str, Any], key: str, field: str, n: int | None = None
    ) -> list[float]:
        p = self.numbers(table, key, field, n=n, lo=0.0)
        total = sum(p)
        if abs(total - 1.0) > 1e-3:
            raise self.fail(field, f"probabilities must sum to 1, they sum to {total:.6g}")
        return [x / total for x in p]

    def ranges(self, table: Mapping[str, Any], key: str, field: str) -> list[list[float]] | None:
        """An optional list of inclusive ``[lo, hi]`` ranges (a single ``[lo, hi]`` is accepted)."""
        if key not in table:
            return None
        v = table[key]
        if (
            isinstance(v, list)
            and len(v) == 2
            and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)
        ):
            v = [v]
        if not isinstance(v, list) or not v:
            raise self.fail(field, "must be [lo, hi] or a list of [lo, hi] ranges")
        out = []
        for r in v:
            if (
                not isinstance(r, list)
                or len(r) != 2
                or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in r)
                or r[0] > r[1]
            ):
                raise self.fail(field, f"bad range {r!r}: expected [lo, hi] with lo <= hi")
            out.append([float(r[0]), float(r[1])])
        return out


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
) -> Any:
    """A synthetic :class:`~o2ksim.workloads.swf.Trace` of *model* covering *span* seconds.

    The same (model, parameters, span, seed, start_time) always gives the same
    jobs: every random draw comes from ``numpy.random.default_rng(seed)``
    (split into one stream per model component).  *start_time* is the trace's
    ``UnixStartTime`` (default :data:`DEFAULT_START_TIME`, a Monday 00:00
    UTC); submit times are seconds after it.  The header records the model,
    seed, span and the full parameters (``extra["O2KSimParams"]``, JSON).
    """
    m = _canonical(model)
    span_s = parse_span(span)
    try:
        seed_i = int(seed)
    except (TypeError, ValueError):
        raise O2KSimError(f"seed must be an integer, got '{seed}'") from None
    if seed_i < 0:
        raise O2KSimError(f"seed must be non-negative, got {seed_i}")
    p, source = load_params(m, params)
    start = DEFAULT_START_TIME if start_time is None else int(start_time)
    trace = model_module(m).generate(p, span=span_s, seed=seed_i, start_time=start)
    _stamp_header(trace.header, model=m, params=p, source=source, seed=seed_i, span=span_s)
    trace.source = f"{m}:{source}:seed={seed_i}"
    return trace


def _stamp_header(
    header: Any, *, model: str, params: Mapping[str, Any], source: str, seed: int, span: float
) -> None:
    from o2ksim import __version__

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


def fit(model: str, trace: Any, **options: Any) -> dict[str, Any]:
    """Estimate *model*'s parameters from *trace* with the papers' methods.

    Returns a parameter mapping that :func:`load_params`/:func:`generate`
    accept (write it with :func:`write_params`).  Only ``cirne-berman`` and
    ``downey`` can be fitted; see :mod:`o2ksim.workloads.fitting`.
    """
    m = _canonical(model)
    from o2ksim.workloads import fitting

    if m == "cirne-berman":
        return fitting.fit_cirne_berman(trace, **options)
    if m == "downey":
        return fitting.fit_downey(trace, **options)
    raise O2KSimError(
        "the o2k model has no automatic fit (its conditional distributions come from thesis ch. 4); "
        "use `o2ksim characterize` to compare a trace with it"
    )
