"""A table of named numpy columns, turned into a pandas DataFrame only when asked.

A run of ``o2ksim run --trace T --out DIR`` reads the trace, simulates it,
tabulates the jobs, writes ``jobs.csv`` and prints a summary: every step works
on whole numpy columns, so the run never imports pandas.  That is kept for a
measured reason (issue 22's rule: a speed device stays only if it buys at
least 10% of a realistic run): importing pandas (with pyarrow) and writing
``jobs.csv`` through ``DataFrame.to_csv`` cost a run 0.28 CPU s more on the
default O2K month (23% of its 1.22 s), 0.35 s on KTH-SP2 whole (23%) and 1.6 s
on HPC2N whole (18%); see docs/guides/performance.md.  The public API still
hands out DataFrames (``Trace.jobs``, ``Result.jobs``, ``Result.segments``):
they are built from a :class:`ColumnTable` on first access
(:meth:`ColumnTable.to_frame`) and then kept.

Functions that accept "a job table" read it through :func:`column`, which
takes a DataFrame and a :class:`ColumnTable` alike, so the same code serves a
user's frame and the command line's columns; :func:`write_csv` writes either.
"""

from __future__ import annotations

import csv
import math
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from o2ksim.machine import NO_HOST


class ColumnTable:
    """Named numpy columns of equal length, in order (the shape of a DataFrame, without pandas).

    ``table[name]`` is the column's numpy array; ``name in table``, ``len(table)``
    (rows) and ``table.columns`` (names) read as they do on a DataFrame.  The
    arrays are shared, never copied: treat them as read-only.
    """

    __slots__ = ("_columns", "_rows")

    def __init__(self, columns: Mapping[str, np.ndarray], rows: int | None = None) -> None:
        self._columns = dict(columns)
        if rows is None:
            rows = len(next(iter(self._columns.values()))) if self._columns else 0
        self._rows = rows

    def __len__(self) -> int:
        return self._rows

    def __contains__(self, name: object) -> bool:
        return name in self._columns

    def __getitem__(self, name: str) -> np.ndarray:
        return self._columns[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    @property
    def columns(self) -> list[str]:
        """The column names, in order."""
        return list(self._columns)

    def items(self) -> Iterator[tuple[str, np.ndarray]]:
        """``(name, array)`` pairs, in column order."""
        return iter(self._columns.items())

    def with_column(self, name: str, values: np.ndarray) -> ColumnTable:
        """A new table with ``name`` set to ``values`` (replaced in place of order, or appended)."""
        return ColumnTable({**self._columns, name: values}, self._rows)

    def take(self, rows: np.ndarray) -> ColumnTable:
        """The rows selected by a boolean mask or an index array (new arrays)."""
        picked = {name: values[rows] for name, values in self._columns.items()}
        n = int(np.count_nonzero(rows)) if rows.dtype == bool else len(rows)
        return ColumnTable(picked, n)

    def to_frame(self) -> Any:
        """The table as a :class:`pandas.DataFrame` (imports pandas)."""
        import pandas as pd

        return pd.DataFrame(self._columns, copy=False)  # fresh arrays: no consolidating copy


NO_VALUE = NO_HOST  # "-", defined with the machine, which refuses it as a host name
"""What ``jobs.csv`` writes in a text column (``host``, ``reason``) for a job that has no value
there: a job that ran on no host, a job with no reason to report.  An empty cell would be read
by ``pandas.read_csv`` as NaN, a float, and a long file whose first rows are all empty in a column
then warns about mixed types (``DtypeWarning``); ``-`` is not one of pandas' missing-value
markers, so the column reads as text throughout.  No host may be named ``-``
(:data:`o2ksim.machine.NO_HOST`)."""

TEXT_COLUMNS = ("host", "reason")
"""The per-job text columns that are empty for some jobs (see :data:`NO_VALUE`)."""


def with_text_markers(table: Any, names: tuple[str, ...] = TEXT_COLUMNS) -> Any:
    """``table`` (a DataFrame or a :class:`ColumnTable`) with missing values (``None``, NaN,
    ``""``, all written as an empty cell) of the text columns ``names`` replaced by :data:`NO_VALUE`, for writing a file (a new table; the
    columns are not changed in place)."""
    present = [n for n in names if n in table]
    if isinstance(table, ColumnTable):
        for name in present:
            cells = table[name].tolist()
            cells = [NO_VALUE if v is None or v == "" or (isinstance(v, float) and v != v) else v for v in cells]
            table = table.with_column(name, np.array(cells, dtype=object))
        return table
    if not present:
        return table
    def marked(values: Any) -> Any:
        return values.astype(object).where(values.notna() & (values != ""), NO_VALUE)

    return table.assign(**{n: marked(table[n]) for n in present})


CSV_CHUNK_ROWS = 10_000
"""Rows turned into Python values and written at a time by :func:`write_csv`: bounds the
memory of a long table (RICC's 448k rows x 22 columns would otherwise be ten million objects)."""


def write_csv(table: Any, path: str | os.PathLike[str]) -> None:
    """Write a DataFrame or a :class:`ColumnTable` as ``DataFrame.to_csv(path, index=False)`` does.

    A DataFrame is written by pandas.  A :class:`ColumnTable` is written with
    the standard :mod:`csv` module in pandas' dialect (comma, ``"`` quoting
    where needed, ``os.linesep``), without importing pandas: integers and
    booleans as ``str()``, float64 as Python's ``repr`` (what pandas writes
    too), missing values (NaN, ``None``) as empty cells.  A table with any
    other kind of column (float32, dates, ...) is written through
    :meth:`ColumnTable.to_frame`.  ``tests/test_csvwrite.py`` compares the
    bytes with pandas'.
    """
    if not isinstance(table, ColumnTable):
        table.to_csv(path, index=False)
        return
    names = table.columns
    if not all(_plain_kind(table[name]) for name in names):
        table.to_frame().to_csv(path, index=False)
        return
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator=os.linesep)
        writer.writerow(names)
        for lo in range(0, len(table), CSV_CHUNK_ROWS):
            cells = [_cells(table[name][lo : lo + CSV_CHUNK_ROWS]) for name in names]
            writer.writerows(zip(*cells, strict=True))


def _plain_kind(values: np.ndarray) -> bool:
    """Whether :func:`write_csv` writes this column itself: 1-d integers, booleans, float64 or objects."""
    kind = values.dtype.kind
    return values.ndim == 1 and (kind in "iubO" or (kind == "f" and values.dtype.itemsize == 8))


def _cells(values: np.ndarray) -> list[Any]:
    """The column's values for the csv writer, missing ones (NaN, ``None``) as ``""``."""
    cells = values.tolist()
    if values.dtype.kind == "f":
        if np.isnan(values).any():
            cells = ["" if v != v else v for v in cells]
    elif values.dtype.kind == "O":
        cells = ["" if v is None or (isinstance(v, float) and v != v) else v for v in cells]
    return cells


def column(table: Any, name: str, dtype: Any = None) -> np.ndarray:
    """Column ``name`` of a DataFrame or a :class:`ColumnTable` as a numpy array.

    A DataFrame's column goes through ``Series.to_numpy(dtype)`` exactly as
    before (nullable and extension columns keep pandas' conversion rules); a
    :class:`ColumnTable` column is converted with ``numpy.asarray``.
    """
    values = table[name]
    if isinstance(values, np.ndarray):
        return values if dtype is None else np.asarray(values, dtype=dtype)
    return values.to_numpy() if dtype is None else values.to_numpy(dtype)


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame, without importing pandas (none exists before it is)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


def grouped_sum(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ``keys`` and the sum of ``values`` per key.

    Each group's sum is correctly rounded (:func:`math.fsum`), so it does not
    depend on the order of the rows or on a library's summation algorithm
    (pandas' grouped sum, used before, differs between pandas versions in the
    last bit).  A group of one row is ``0.0 + value``; only groups of several
    rows go through :func:`math.fsum`, in Python.
    """
    keys = np.asarray(keys)
    values = np.asarray(values, dtype=np.float64)
    if len(keys) == 0:
        return keys[:0], values[:0]
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    first = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    distinct = sorted_keys[first]
    sizes = np.diff(np.r_[first, len(keys)])
    sums = 0.0 + values[order[first]]
    ordered = values[order]
    for g in np.flatnonzero(sizes > 1).tolist():
        lo = int(first[g])
        sums[g] = math.fsum(ordered[lo : lo + int(sizes[g])].tolist())
    return distinct, sums
