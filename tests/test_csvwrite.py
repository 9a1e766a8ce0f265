"""``o2ksim.table.write_csv`` writes a ColumnTable as pandas' ``to_csv(index=False)`` writes its frame.

pandas is the independent implementation: every test builds a
:class:`~o2ksim.table.ColumnTable`, writes it with ``write_csv`` and through
``to_frame().to_csv(index=False)``, and compares the files byte for byte.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import table as table_module
from o2ksim.table import ColumnTable, write_csv

TRICKY_TEXT = ["", "plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", "crlf\r\n", " lead", "tab\tx",
               "é ü 中", ",", '"', "None", "nan"]  # fmt: skip
TRICKY_FLOATS = [0.0, -0.0, 1.0, -1.5, 0.1, 1e-4, 1e-5, 123456.789, 1e15, 1e16, 9999999999999998.0,
                 1.7976931348623157e308, 5e-324, math.inf, -math.inf, math.nan, 2.0**53 + 2]  # fmt: skip

MIXED = [None, math.nan, 1, 2.5, True, "x,y", np.float64(0.1), np.int64(3), -0.0, ""]


def _same_bytes(columns: dict[str, np.ndarray], tmp_path) -> None:
    table = ColumnTable(columns)
    expected, got = tmp_path / "pandas.csv", tmp_path / "o2ksim.csv"
    table.to_frame().to_csv(expected, index=False)
    write_csv(table, got)
    assert got.read_bytes() == expected.read_bytes()


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def test_every_column_kind(tmp_path):
    n = 3 * len(TRICKY_TEXT)
    rng = np.random.default_rng(7)
    text = [TRICKY_TEXT[i % len(TRICKY_TEXT)] for i in range(n)]
    columns = {
        "int": rng.integers(-(2**62), 2**62, n),
        "uint": rng.integers(0, 2**63, n).astype(np.uint64),
        "int32": rng.integers(-100, 100, n).astype(np.int32),
        "float": np.array([TRICKY_FLOATS[i % len(TRICKY_FLOATS)] for i in range(n)]),
        "bool": rng.random(n) < 0.5,
        "text": _objects(text),
        "text_none": _objects([None if i % 4 == 0 else t for i, t in enumerate(text)]),
        "text_nan": _objects([math.nan if i % 5 == 0 else t for i, t in enumerate(text)]),
        "mixed": _objects([MIXED[i % len(MIXED)] for i in range(n)]),
    }
    _same_bytes(columns, tmp_path)


def test_chunks(tmp_path, monkeypatch):
    """Several chunks of rows are written one after the other."""
    monkeypatch.setattr(table_module, "CSV_CHUNK_ROWS", 700)
    n = 2_000
    rng = np.random.default_rng(3)
    columns = {
        "few": rng.choice([0.0, 1.0, 60.0, 0.5, math.nan, 1e16], n),
        "signed_zero": rng.choice([0.0, -0.0, 2.0], n),
        "many": rng.random(n) * 1e6,
        "ints": rng.integers(0, 5, n),
        "flags": rng.random(n) < 0.1,
        "status": rng.choice(np.array(["completed", "killed", "not_started"], dtype=object), n),
    }
    _same_bytes(columns, tmp_path)


def test_shapes(tmp_path):
    _same_bytes({"a": np.zeros(0), "b": np.zeros(0, dtype=np.int64)}, tmp_path)  # header only
    _same_bytes({"only": _objects(["", "x", None])}, tmp_path)  # a lone empty field is quoted
    _same_bytes({"a,b": np.array([1]), 'q"': np.array([2.0])}, tmp_path)  # labels that need quoting


@pytest.mark.parametrize(
    "values",
    [
        np.array([0.1, 1e-5, math.nan], dtype=np.float32),
        np.array(["2000-01-01", "NaT", "2001-05-06"], dtype="datetime64[s]"),
        np.array([1 + 2j, 0j, -1j]),
    ],
    ids=["float32", "datetime", "complex"],
)
def test_other_kinds_go_through_pandas(values, tmp_path):
    _same_bytes({"x": values, "y": np.array([1.0, 2.0, 3.0])}, tmp_path)


def test_a_data_frame_is_written_by_pandas(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": pd.Series(["x", None], dtype="str")})
    write_csv(frame, tmp_path / "got.csv")
    frame.to_csv(tmp_path / "expected.csv", index=False)
    assert (tmp_path / "got.csv").read_bytes() == (tmp_path / "expected.csv").read_bytes()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    floats=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=80),
    texts=st.lists(st.one_of(st.none(), st.text(max_size=6)), min_size=1, max_size=80),
)
def test_random_floats_and_text(tmp_path, floats, texts):
    n = min(len(floats), len(texts))
    _same_bytes({"f": np.array(floats[:n], dtype=np.float64), "t": _objects(texts[:n])}, tmp_path)


def test_result_save_writes_what_pandas_writes(tmp_path):
    """``Result.save`` on a real run: jobs.csv is to_csv's file (text columns marked, for both)."""
    from o2ksim import simulate
    from o2ksim.table import with_text_markers

    result = simulate("traces/kth-sp2-sample.swf", policy="sjf-backfill", kill_overrun=True)
    result.save(tmp_path / "run")
    with_text_markers(result.jobs).to_csv(tmp_path / "pandas.csv", index=False)
    assert (tmp_path / "run" / "jobs.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()


WHOLE_EDGES = [0.0, -0.0, 1.0, -1.0, 1e15, -1e15, 9999999999999998.0, -9999999999999998.0, 1e16, -1e16,
               2.0**53, 2.0**63, -(2.0**63), 1e300, math.inf, -math.inf, math.nan]  # fmt: skip

job_like_floats = st.one_of(
    st.integers(-(2**60), 2**60).map(float),
    st.sampled_from(WHOLE_EDGES),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, 40).map(lambda k: k / 8),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(job_like_floats, st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-3, 3)), st.booleans()),
        min_size=1,
        max_size=300,
    )
)
def test_job_like_columns(tmp_path, rows):
    """Whole-number floats, wide integers, signed zeros, 1e16 and booleans: the bytes of ``to_csv``."""
    floats, ints, flags = (np.array(c) for c in zip(*rows, strict=True))
    columns = {
        "f": floats.astype(np.float64),
        "i": ints.astype(np.int64),
        "b": flags.astype(bool),
        "w": np.trunc(np.nan_to_num(floats.astype(np.float64), posinf=0.0, neginf=0.0) % 1e6),
        "slowdown": (ints.astype(np.int64) % 9) / 4 + 1,
    }
    _same_bytes(columns, tmp_path)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
def test_narrow_integer_types(dtype, tmp_path):
    info = np.iinfo(dtype)
    values = np.arange(max(info.min, -20_000), min(info.max, 20_000) + 1, dtype=np.int64).astype(dtype)
    _same_bytes({"id": np.arange(len(values)), "v": values}, tmp_path)
