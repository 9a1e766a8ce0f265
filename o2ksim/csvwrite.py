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

from o2ksim.table import ColumnTable

if TYPE_CHECKING:
    import pandas as pd

CHUNK_ROWS = 10_000
"""Rows converted and written at a time: bounds the memory of the text columns
(RICC's 448k rows would otherwise hold ~10 million small strings at once)."""


def write_csv(frame: pd.DataFrame | ColumnTable, path: str | os.PathLike[str]) -> None:
    """Write ``frame`` to ``path`` exactly as ``frame.to_csv(path, index=False)`` would.

    ``frame`` may also be a :class:`~o2ksim.table.ColumnTable`: the file is then
    what its :meth:`~o2ksim.table.ColumnTable.to_frame` would write, without
    importing pandas (a table this module cannot write exactly is written
    through the DataFrame).
    """
    if isinstance(frame, ColumnTable):
        if _table_supported(frame):
            _write(frame, list(frame.columns), [frame[c] for c in frame.columns], path)
        else:
            write_csv(frame.to_frame(), path)
        return
    labels = list(frame.columns)
    if (
        len(labels) < 2  # a lone empty field is quoted: let the csv module see whole rows
        or not frame.columns.is_unique
        or not all(isinstance(c, str) for c in labels)
        or not all(_supported(frame[c]) for c in labels)
    ):
        frame.to_csv(path, index=False)
        return
    _write(frame, labels, [frame[c] for c in labels], path)


def _table_supported(table: ColumnTable) -> bool:
    """A :class:`ColumnTable` whose frame this module writes exactly: text labels, at
    least two columns, each a 1-d integer, boolean, float64 or object array whose
    objects are text or missing (``None``, NaN).

    Object columns of text become pandas' ``str`` columns in the frame; anything
    else in them could become another kind, so it goes through pandas.
    """
    labels = table.columns
    if len(labels) < 2 or not all(isinstance(c, str) for c in labels):
        return False
    for c in labels:
        values = table[c]
        kind = values.dtype.kind
        if values.ndim != 1 or not (kind in "iub" or (kind == "f" and values.dtype.itemsize == 8)
                                    or kind == "O"):  # fmt: skip
            return False
        if kind == "O" and not all(
            type(v) is str or v is None or (type(v) is float and v != v) for v in set(values.tolist())
        ):
            return False
    return True


def _write(frame: Any, labels: list[str], columns: list[Any], path: str | os.PathLike[str]) -> None:
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


def _column_text(col: Any, lo: int, hi: int, cell: _CellQuoter) -> list[str]:
    """The cells of rows ``lo:hi`` of ``col`` (a Series or a numpy array) as ``to_csv`` writes them."""
    import numpy as np

    if isinstance(col, np.ndarray):  # a ColumnTable's column (see _table_supported)
        values = col[lo:hi]
        if values.dtype.kind == "O":
            cells = values.tolist()
            if set(map(type, cells)) - {str}:  # missing values (None, NaN) are empty
                cells = [_text_or_empty(v) for v in cells]
            return _quoted(cells, cell)
        return _array_text(values)
    import pandas as pd

    if isinstance(col.dtype, pd.StringDtype):
        return _quoted(col.iloc[lo:hi].to_numpy(dtype=object, na_value="").tolist(), cell)
    values = col.to_numpy()[lo:hi]
    if values.dtype.kind in "fiub":
        return _array_text(values)
    # object: the values as the csv module writes them, missing ones empty
    out = values.copy()
    mask = pd.isna(out)
    if mask.any():
        out[mask] = ""
    return _quoted(out.tolist(), cell)


def _text_or_empty(value: Any) -> Any:
    """A text cell's value; missing (``None``, NaN) as the empty string."""
    return "" if value is None or (type(value) is float and value != value) else value


def _array_text(values: Any) -> list[str]:
    """The cells of a float64, integer or boolean numpy array."""
    import numpy as np

    kind = values.dtype.kind
    if kind == "b":
        return np.array(["False", "True"], dtype=object)[values.view(np.uint8)].tolist()
    if kind != "f":
        return _int_text(values, "")
    # Python's repr of a float is the text numpy's astype(str) gives (shortest
    # round-trip digits, exponent from 1e16 and below 1e-4).  A whole number
    # below 1e16 in magnitude is written "<integer>.0": its integer's text, which
    # is cheaper than repr (times, sizes and many measures of a job table are whole).
    whole = (np.abs(values) < 1e16) & (values == np.trunc(values))  # NaN and inf: False
    whole &= ~((values == 0) & np.signbit(values))  # -0.0 is repr'd as "-0.0"
    if whole.all():
        return _int_text(values.astype(np.int64), ".0")
    text = np.empty(len(values), dtype=object)
    if whole.any():
        text[whole] = _int_text(values[whole].astype(np.int64), ".0")
    nan = np.isnan(values)
    text[nan] = ""
    other = ~(whole | nan)
    text[other] = _float_repr(values[other])
    return text.tolist()


def _int_text(values: Any, suffix: str) -> list[str]:
    """``str(v) + suffix`` of every value of an integer array: through a table of each
    value's text when the values lie in a narrow range (sizes, counts, ids), each
    distinct value converted once when a wider range repeats (requested times)."""
    import numpy as np

    n = len(values)
    if n == 0:
        return []
    lo, hi = int(values.min()), int(values.max())
    if hi - lo < n // 2:
        table = np.array([f"{v}{suffix}" for v in range(lo, hi + 1)], dtype=object)
        # the offsets in 64 bits: in a narrow signed type (int8, int16) ``values - lo`` wraps
        offsets = values - lo if values.dtype.kind == "u" else values.astype(np.int64) - lo
        return table[offsets].tolist()
    if suffix:
        convert: Any = f"{{}}{suffix}".format
    else:
        convert = str
    text = _by_distinct(values, convert)
    return text if text is not None else list(map(convert, values.tolist()))


def _float_repr(values: Any) -> list[str]:
    """``repr`` of every value of a float array without NaN; each distinct value
    converted once when values repeat (slowdowns of a job table often do)."""
    import numpy as np

    # sorting would merge -0.0 into 0.0: such a column is converted value by value
    if not ((values == 0) & np.signbit(values)).any():
        text = _by_distinct(values, float.__repr__)
        if text is not None:
            return text
    return list(map(float.__repr__, values.tolist()))


def _by_distinct(values: Any, convert: Any) -> list[str] | None:
    """``convert`` of every value, applied once per distinct value; ``None`` (do it
    value by value) when fewer than half the values repeat.

    A sample of about 256 values decides first whether sorting is worth it: a
    column of distinct values (ids, submit times) is not sorted for nothing.
    Equal values must have equal text (not so for -0.0 and 0.0: the caller
    keeps those away).
    """
    import numpy as np

    n = len(values)
    if n <= 64:
        return None
    sample = np.sort(values[:: max(1, n // 256)])
    if np.count_nonzero(sample[1:] != sample[:-1]) >= 0.9 * (len(sample) - 1):
        return None
    order = np.argsort(values)
    ordered = values[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    if len(starts) * 2 > n:
        return None
    distinct = np.array(list(map(convert, ordered[starts].tolist())), dtype=object)
    where = np.empty(n, dtype=np.intp)
    where[order] = np.cumsum(new) - 1
    return distinct[where].tolist()
