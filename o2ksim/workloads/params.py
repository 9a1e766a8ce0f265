"""Parameter files of the workload models: reading, merging, validating, writing TOML.

Everything here is model-independent: each model module validates its own
mapping with a :class:`Checker` (so an error names the file, the line and the
dotted field), and :mod:`o2ksim.workloads.models` finds, merges and loads the
files.  Also here: :func:`parse_span` and the default start of generated
traces, which every generator shares.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from o2ksim import files
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.files import read_small_text, write_atomically
from o2ksim.toml_lines import toml_field_line
from o2ksim.validation import MAX_PROCS, shown, shown_number

MAX_SLOPE = 1e6
"""Steepest uniform-log line of a parameter file (cdf per unit of log x): from 0 to 1
within a factor of 1.000001 in x.  The papers' lines have slopes of 0.06 to 0.3."""


__all__ = [
    "DEFAULT_START_TIME",
    "MAX_SLOPE",
    "Checker",
    "ParamSource",
    "deep_merge",
    "dump_toml",
    "parse_span",
    "read_toml",
    "write_params",
]

DEFAULT_START_TIME = 946857600
"""2000-01-03 00:00:00 UTC, a Monday: the default ``UnixStartTime`` of generated traces.

Starting on a Monday at midnight makes the weekday/weekend and hour-of-day
periods of the models exact in trace time."""

ParamSource = str | os.PathLike[str] | Mapping[str, Any] | None
"""``None`` (a model's default set), a shipped set name, a TOML path, or a mapping."""


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
    if not math.isfinite(value):
        raise O2KSimError(f"'{text}' is not a finite length of time")
    if value <= 0:
        raise O2KSimError(f"span must be positive, got '{text}'")
    return value


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML file at *path*; a missing, oversized or malformed file is a one-line user error
    (:func:`~o2ksim.files.read_toml`)."""
    return files.read_toml(path, "parameter file")[1]


def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of *base* with *over* merged in (tables recursively, everything else replaced)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


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
    """Write a parameter mapping as a TOML file :func:`load_params` reads back (whole or
    not at all: :func:`o2ksim.files.write_atomically`)."""
    write_atomically(path, dump_toml(params, comments, header).encode("utf-8"))


class Checker:
    """Validation helpers for parameter files: each failure is a :class:`ConfigError` naming
    the file, the dotted field path and, when the file is at hand, the line of that key."""

    def __init__(self, source: str | Path) -> None:
        self.source = source
        self._lines: list[str] | None = None
        if isinstance(source, Path) and source.exists():
            try:
                self._lines = read_small_text(source, "parameter file").splitlines()
            except O2KSimError:  # lines are a courtesy: the message names the field without one
                self._lines = None

    def fail(self, field: str, message: str) -> ConfigError:
        return ConfigError(self.source, message, line=self._line_of(field), field=field)

    def _line_of(self, field: str) -> int | None:
        """The line of *field* (``a.b[2].c``) in the file (:func:`~o2ksim.toml_lines.toml_field_line`)."""
        return None if self._lines is None else toml_field_line(self._lines, field, anywhere=True)

    def get(self, table: Mapping[str, Any], key: str, field: str) -> Any:
        if not isinstance(table, Mapping) or key not in table:
            raise self.fail(field, "missing")
        return table[key]

    def table(self, table: Mapping[str, Any], key: str, field: str) -> Mapping[str, Any]:
        """The sub-table ``key`` (``[machine]``), which must be there and be a table."""
        v = self.get(table, key, field)
        if not isinstance(v, Mapping):
            raise self.fail(field, f"must be a table [{field}], got {shown(v)}")
        return v

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
        """A finite number (not a boolean, not a string) in ``[lo, hi]`` (``(lo, hi]`` when ``lo_open``)."""
        return self._in_range(self.get(table, key, field), field, lo=lo, hi=hi, lo_open=lo_open)

    def _in_range(
        self, v: Any, field: str, *, lo: float, hi: float, lo_open: bool = False
    ) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.fail(field, f"must be a number, got {shown(v)}")
        try:
            x = float(v)
        except OverflowError:  # an integer beyond any float (10**400)
            raise self.fail(field, f"must be a finite number, got {shown(v)}") from None
        if not math.isfinite(x):
            raise self.fail(field, f"must be a finite number, got {v!r}")
        if x < lo or (lo_open and x == lo):
            rel = ">" if lo_open else ">="
            raise self.fail(field, f"must be {rel} {shown_number(lo)}, got {shown_number(v)}")
        if x > hi:
            raise self.fail(field, f"must be at most {shown_number(hi)}, got {shown_number(v)}")
        return x

    def count(
        self, table: Mapping[str, Any], key: str, field: str, *, lo: int = 1, hi: int = MAX_PROCS
    ) -> int:
        """A whole number (``16`` or ``16.0``) in ``[lo, hi]``: a processor count, a size."""
        x = self.number(table, key, field, lo=lo, hi=hi)
        if x != int(x):
            raise self.fail(field, f"must be a whole number, got {x:g}")
        return int(x)

    def uniform_log(
        self,
        table: Mapping[str, Any],
        field: str,
        slope: str,
        intercept: str,
        *,
        base: float,
        top: float,
        unit: str,
    ) -> tuple[float, float]:
        """The line ``cdf(x) = intercept + slope * log_base(x)`` of a uniform-log distribution.

        The slope is in ``(0, MAX_SLOPE]``, the intercept (the cdf at ``x = 1``) at most 1, and
        the line must reach 1 at an ``x`` of at most ``top`` (:data:`~o2ksim.validation.MAX_TIME`
        seconds for times, :data:`~o2ksim.validation.MAX_PROCS` for sizes): every draw is
        then a value a trace can hold, and no ``base ** big`` overflows.
        """
        s = self.number(table, slope, f"{field}.{slope}", lo=0.0, lo_open=True, hi=MAX_SLOPE)
        b = self.number(table, intercept, f"{field}.{intercept}", lo=-math.inf, hi=1.0)
        reach = (1.0 - b) / s  # log_base of the x where the cdf reaches 1
        if reach > math.log(top, base):
            raise self.fail(
                f"{field}.{intercept}",
                f"the line {b:g} + {s:g} log{'2' if base == 2 else ''}(x) reaches 1 only at "
                f"x = {base:g}**{reach:.6g}, beyond {top:g} {unit}",
            )
        return s, b

    def numbers(
        self,
        table: Mapping[str, Any],
        key: str,
        field: str,
        *,
        n: int | None = None,
        lo: float = -math.inf,
        hi: float = math.inf,
    ) -> list[float]:
        v = self.get(table, key, field)
        if not isinstance(v, list) or not v:
            raise self.fail(field, "must be a non-empty list of numbers")
        out = []
        for i, x in enumerate(v):
            out.append(self._in_range(x, f"{field}[{i}]", lo=lo, hi=hi))
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
                or any(math.isnan(float(x)) for x in r)
                or r[0] > r[1]
            ):
                raise self.fail(field, f"bad range {r!r}: expected [lo, hi] with lo <= hi")
            out.append([float(r[0]), float(r[1])])
        return out


class ReadKeys(Mapping[str, Any]):
    """A parameter table that records which of its keys a validator looked at.

    The models' ``validate`` functions read the keys they know, with ``[]``, ``get`` or
    ``in``; whatever is left unread is a key no generator uses -- a misspelling such as
    ``jobs_per_dy`` would otherwise leave the default in force without a word.  Nested
    tables and arrays of tables are wrapped as they are read, each with its dotted path.
    """

    def __init__(self, data: Mapping[str, Any], path: str = "", seen: set[str] | None = None):
        self._data = data
        self._path = path
        self.seen: set[str] = set() if seen is None else seen

    def _wrap(self, value: Any, path: str) -> Any:
        if isinstance(value, Mapping):
            return ReadKeys(value, path, self.seen)
        if isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
            return [self._wrap(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return value

    def __getitem__(self, key: str) -> Any:
        path = f"{self._path}.{key}" if self._path else key
        self.seen.add(path)
        return self._wrap(self._data[key], path)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def unread(self, informational: tuple[str, ...] = ()) -> list[str]:
        """The dotted paths of the keys never read, except those under ``informational``
        (tables kept for the reader, such as ``fit``)."""
        out: list[str] = []

        def walk(value: Any, path: str) -> None:  # ``value`` was read (or is the whole file)
            if isinstance(value, Mapping):
                for k, v in value.items():
                    key = f"{path}.{k}" if path else str(k)
                    if key in self.seen:
                        walk(v, key)
                    else:
                        out.append(key)
            elif isinstance(value, list):  # an array of tables: each element's keys
                for i, v in enumerate(value):
                    walk(v, f"{path}[{i}]")

        walk(self._data, "")
        return [p for p in out if p.split(".")[0].split("[")[0] not in informational]
