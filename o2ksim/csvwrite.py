"""Write a DataFrame as CSV, column by column: the bytes of ``frame.to_csv(path, index=False)``, faster.

``jobs.csv`` is written at the end of every run, and pandas' ``to_csv``
converts and writes it row by row through several layers (on the whole
KTH-SP2 trace it took longer than reading the trace and building the result
table together).  Here each column is turned into text at once (each
distinct value once, when values repeat), and the rows are joined; the few
text cells that need quoting go through the standard :mod:`csv` module with
the dialect pandas uses (comma, ``"`` quoting only where needed,
``os.linesep``), so quoting is by construction the same.

The conversions are pandas' own choices for ``to_csv`` with its defaults
(``na_rep=""``, no ``float_format``):

* float64 columns: ``numpy``'s ``astype(str)``, which is Python's ``repr``
  (shortest round-trip digits, ``1e+16`` style); NaN is empty;
* integer and boolean columns: ``str()`` of each value (``True``/``False``);
* text and object columns: the value as the csv module writes it, missing
  values (``None``, NaN, ``pd.NA``, ``NaT``) empty.

Any other column kind (dates, categories, nullable integers, float32, whose
digits differ), duplicate or non-text labels and one-column frames fall back
to ``to_csv`` for the whole frame: never a silently different file.
``tests/test_csvwrite.py`` compares the bytes with pandas' on frames with
every column kind.
"""

from __future__ import annotations

import csv
import io
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

CHUNK_ROWS = 10_000
"""Rows converted and written at a time: bounds the memory of the text columns
(RICC's 448k rows would otherwise hold ~10 million small strings at once)."""


def write_csv(frame: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write ``frame`` to ``path`` exactly as ``frame.to_csv(path, index=False)`` would."""
    labels = list(frame.columns)
    if (
        len(labels) < 2  # a lone empty field is quoted: let the csv module see whole rows
        or not frame.columns.is_unique
        or not all(isinstance(c, str) for c in labels)
        or not all(_supported(frame[c]) for c in labels)
    ):
        frame.to_csv(path, index=False)
        return
    columns = [frame[c] for c in labels]
    cell = _CellQuoter()
    with open(path, "w", newline="", encoding="utf-8") as handle:
        handle.write(",".join(_quoted(labels, cell)) + cell.end)
        n = len(frame)
        for lo in range(0, n, CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, n)
            texts = [_column_text(col, lo, hi, cell) for col in columns]
            handle.write(cell.end.join(map(",".join, zip(*texts, strict=True))) + cell.end)


class _CellQuoter:
    """One cell as the :mod:`csv` module writes it in pandas' dialect (quoting, ``str()``)."""

    def __init__(self) -> None:
        self.end = os.linesep
        self._buffer = io.StringIO()
        self._writer = csv.writer(
            self._buffer, lineterminator=self.end, quoting=csv.QUOTE_MINIMAL
        )

    def __call__(self, value: Any) -> str:
        self._buffer.seek(0)
        self._buffer.truncate()
        self._writer.writerow([value, ""])  # two fields: a lone empty field would be quoted
        return self._buffer.getvalue()[: -len(self.end) - 1]


def _plain(text: str) -> bool:
    """True when the csv module writes ``text`` as it is (no quoting can apply)."""
    return "," not in text and '"' not in text and "\n" not in text and "\r" not in text


def _quoted(cells: list[Any], cell: _CellQuoter) -> list[str]:
    """Cells of a text or object column: plain strings as they are, the rest through csv."""
    if set(map(type, cells)) <= {str} and _plain("".join(cells)):
        return cells
    return [v if type(v) is str and _plain(v) else cell(v) for v in cells]


def _supported(col: pd.Series) -> bool:
    """Columns whose text this module produces exactly as pandas does."""
    import pandas as pd

    dtype = col.dtype
    if isinstance(dtype, pd.StringDtype):
        return True
    kind = getattr(dtype, "kind", None)
    if not type(dtype).__module__.startswith("numpy"):
        return False
    # float32 prints its own shortest digits: not Python's float repr
    return kind in ("i", "u", "b", "O") or (kind == "f" and dtype.itemsize == 8)


def _column_text(col: pd.Series, lo: int, hi: int, cell: _CellQuoter) -> list[str]:
    """The cells of rows ``lo:hi`` of ``col`` as ``to_csv`` writes them."""
    import numpy as np
    import pandas as pd

    if isinstance(col.dtype, pd.StringDtype):
        return _quoted(col.iloc[lo:hi].to_numpy(dtype=object, na_value="").tolist(), cell)
    values = col.to_numpy()[lo:hi]
    kind = values.dtype.kind
    if kind == "f":
        # Python's repr of a float is the text numpy's astype(str) gives (shortest
        # round-trip digits, exponent from 1e16 and below 1e-4), 2-3x faster.
        # np.unique would merge -0.0 into 0.0: such a column is converted value by value.
        signed_zero = bool((np.signbit(values) & (values == 0)).any())
        return _texts(values, float.__repr__, by_value=not signed_zero)
    if kind in ("i", "u", "b"):
        return _texts(values, str, by_value=True)
    # object: the values as the csv module writes them, missing ones empty
    out = values.copy()
    mask = pd.isna(out)
    if mask.any():
        out[mask] = ""
    return _quoted(out.tolist(), cell)


def _texts(values: Any, to_text: Any, *, by_value: bool) -> list[str]:
    """``to_text`` of every value (NaN empty); each distinct value converted once when
    values repeat (times, sizes and slowdowns of a job table often do)."""
    import numpy as np

    if by_value and len(values) > 64:
        distinct, where = np.unique(values, return_inverse=True)
        if len(distinct) * 2 <= len(values):
            text = np.array(_texts(distinct, to_text, by_value=False), dtype=object)
            return text[where].tolist()
    text = list(map(to_text, values.tolist()))
    if values.dtype.kind == "f":
        for i in np.flatnonzero(np.isnan(values)).tolist():
            text[i] = ""
    return text
