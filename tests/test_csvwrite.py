"""``o2ksim.csvwrite.write_csv`` writes the bytes pandas' ``to_csv(index=False)`` writes.

pandas is the independent implementation: every test builds a frame, writes
it both ways and compares the files byte for byte.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import csvwrite
from o2ksim.csvwrite import write_csv

TRICKY_TEXT = ["", "plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", "crlf\r\n", " lead", "tab\tx",
               "é ü 中", ",", '"', "None", "nan"]  # fmt: skip
TRICKY_FLOATS = [0.0, -0.0, 1.0, -1.5, 0.1, 1e-4, 1e-5, 123456.789, 1e15, 1e16, 9999999999999998.0,
                 1.7976931348623157e308, 5e-324, math.inf, -math.inf, math.nan, 2.0**53 + 2]  # fmt: skip

MIXED = [None, math.nan, 1, 2.5, True, "x,y", np.float64(0.1), np.int64(3), -0.0, "", pd.NA]


def _same_bytes(frame: pd.DataFrame, tmp_path) -> None:
    expected, got = tmp_path / "pandas.csv", tmp_path / "o2ksim.csv"
    frame.to_csv(expected, index=False)
    write_csv(frame, got)
    assert got.read_bytes() == expected.read_bytes()


def test_every_column_kind(tmp_path):
    n = 3 * len(TRICKY_TEXT)
    rng = np.random.default_rng(7)
    text = [TRICKY_TEXT[i % len(TRICKY_TEXT)] for i in range(n)]
    frame = pd.DataFrame(
        {
            "int": rng.integers(-(2**62), 2**62, n),
            "uint": rng.integers(0, 2**63, n).astype(np.uint64),
            "int32": rng.integers(-100, 100, n).astype(np.int32),
            "float": [TRICKY_FLOATS[i % len(TRICKY_FLOATS)] for i in range(n)],
            "float32": rng.random(n).astype(np.float32),
            "bool": rng.random(n) < 0.5,
            "text": pd.Series(text, dtype="str"),
            "text_na": pd.Series([None if i % 4 == 0 else t for i, t in enumerate(text)], dtype="str"),
            "object_text": pd.Series([None if i % 5 == 0 else t for i, t in enumerate(text)], dtype=object),
            "mixed": pd.Series([MIXED[i % len(MIXED)] for i in range(n)], dtype=object),
        }
    )
    _same_bytes(frame, tmp_path)


def test_repeated_values_and_chunks(tmp_path, monkeypatch):
    """Long columns with few distinct values take the convert-each-value-once path;
    several chunks are written one after the other."""
    monkeypatch.setattr(csvwrite, "CHUNK_ROWS", 700)
    n = 2_000
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "few": rng.choice([0.0, 1.0, 60.0, 0.5, math.nan, 1e16], n),
            "signed_zero": rng.choice([0.0, -0.0, 2.0], n),
            "many": rng.random(n) * 1e6,
            "ints": rng.integers(0, 5, n),
            "flags": rng.random(n) < 0.1,
            "status": pd.Series(rng.choice(["completed", "killed", "not_started"], n), dtype="str"),
        }
    )
    _same_bytes(frame, tmp_path)


def test_shapes(tmp_path):
    _same_bytes(pd.DataFrame({"a": [], "b": []}), tmp_path)  # header only
    _same_bytes(pd.DataFrame({"only": ["", "x", None]}, dtype=object), tmp_path)  # lone empty field
    _same_bytes(pd.DataFrame({"a,b": [1], 'q"': [2.0]}), tmp_path)  # labels that need quoting


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(pd.to_datetime(["2000-01-01", None, "2001-05-06"])),
        pd.Series(["a", "b", None], dtype="category"),
        pd.Series([1, None, 3], dtype="Int64"),
        pd.Series([True, None, False], dtype="boolean"),
        pd.Series([1 + 2j, 0j, -1j]),
    ],
    ids=["datetime", "category", "Int64", "boolean", "complex"],
)
def test_other_kinds_fall_back_to_pandas(column, tmp_path):
    _same_bytes(pd.DataFrame({"x": column, "y": [1.0, 2.0, 3.0]}), tmp_path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    floats=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=80),
    texts=st.lists(st.one_of(st.none(), st.text(max_size=6)), min_size=1, max_size=80),
)
def test_random_floats_and_text(tmp_path, floats, texts):
    n = min(len(floats), len(texts))
    frame = pd.DataFrame(
        {
            "f": floats[:n],
            "t": pd.Series(texts[:n], dtype=object),
            "s": pd.Series(texts[:n], dtype="str"),
        }
    )
    _same_bytes(frame, tmp_path)


def test_result_save_writes_what_pandas_writes(tmp_path):
    """``Result.save`` on a real run: jobs.csv is to_csv's file."""
    from o2ksim import simulate

    result = simulate("traces/kth-sp2-sample.swf", policy="sjf-backfill", kill_overrun=True)
    result.save(tmp_path / "run")
    result.jobs.to_csv(tmp_path / "pandas.csv", index=False)
    assert (tmp_path / "run" / "jobs.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()


WHOLE_EDGES = [0.0, -0.0, 1.0, -1.0, 1e15, -1e15, 9999999999999998.0, -9999999999999998.0, 1e16, -1e16,
               2.0**53, 2.0**63, -(2.0**63), 1e300, math.inf, -math.inf, math.nan]  # fmt: skip

job_like_floats = st.one_of(
    st.integers(-(2**60), 2**60).map(float),  # whole numbers: written as their integer's text + ".0"
    st.integers(-50, 50).map(float),  # narrow ranges: converted through a table
    st.sampled_from(WHOLE_EDGES),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, 40).map(lambda k: k / 8),  # repeated fractions: each distinct value converted once
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(job_like_floats, st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-3, 3)), st.booleans()),
        min_size=65,
        max_size=300,
    )
)
def test_job_like_columns_as_frame_and_column_table(tmp_path, rows):
    """Whole-number floats, narrow and wide integer ranges, signed zeros, 1e16 and
    booleans, long enough for the table and distinct-value paths: the bytes of
    ``to_csv``, from a DataFrame and from a ColumnTable alike."""
    from o2ksim.table import ColumnTable

    floats, ints, flags = (np.array(c) for c in zip(*rows, strict=True))
    columns = {
        "f": floats.astype(np.float64),
        "i": ints.astype(np.int64),
        "b": flags.astype(bool),
        "w": np.trunc(np.nan_to_num(floats, posinf=0.0, neginf=0.0) % 1e6),
        "sizes": ints.astype(np.int64) % 64 + 1,  # like procs: a narrow positive range
        "mean_procs": (ints.astype(np.int64) % 64 + 1).astype(np.float64),
        "slowdown": (ints.astype(np.int64) % 9) / 4 + 1,  # few distinct fractions: each converted once
        "req_time": (ints.astype(np.int64) % 7 * 360_000).astype(np.float64),  # few, far apart
        "wide_repeats": ints.astype(np.int64) % 5 * 10**12 - 2 * 10**12,
    }
    frame = pd.DataFrame(columns)
    _same_bytes(frame, tmp_path)
    write_csv(ColumnTable(columns), tmp_path / "table.csv")
    assert (tmp_path / "table.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
def test_narrow_integer_types_over_a_wide_part_of_their_range(dtype, tmp_path):
    """A narrow integer type whose values span more than half its range (int8: -100..100),
    long enough for the table of texts: the table is indexed without wrapping around
    (``values - lo`` in int8 once printed -26 for 29)."""
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -100 if info.bits == 8 else -20_000), min(info.max, 20_000)
    values = np.arange(lo, hi + 1, dtype=np.int64)
    from o2ksim.table import ColumnTable

    column = np.resize(values, 2 * len(values) + 2).astype(dtype)
    columns = {"id": np.arange(len(column)), "v": column}  # two columns: one goes through pandas
    _same_bytes(pd.DataFrame(columns), tmp_path)
    write_csv(ColumnTable(columns), tmp_path / "table.csv")  # numpy columns as they are
    assert (tmp_path / "table.csv").read_bytes() == (tmp_path / "pandas.csv").read_bytes()
