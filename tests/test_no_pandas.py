"""``o2ksim run`` without pandas: the run path works on numpy columns, and the
DataFrames of the public API are built from them only when asked for.

* the command line (in a fresh interpreter) runs a trace and the default
  generated O2K month without importing pandas or pyarrow, and does import
  them for what needs them (``--parquet``, ``--check``);
* every table the run path produces without pandas is checked against pandas
  itself: ``jobs.csv`` against ``DataFrame.to_csv``, the summary against
  :func:`o2ksim.metrics.summary` of the DataFrames, the grouped sum behind
  ``proc_seconds`` against ``Series.groupby().sum()``, the cool-down tail
  against ``pd.concat``, a policy's extra columns against ``Series.map``,
  and a read trace's lazy ``jobs`` frame against a frame built by hand from
  the file's numbers.
"""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim import metrics, simulate
from o2ksim.table import ColumnTable, column, grouped_sum, is_frame, with_text_markers, write_csv
from o2ksim.workloads.swf import SWF_FIELDS, Trace, read_swf

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "traces" / "kth-sp2-sample.swf"
TINY = REPO / "traces" / "tiny.swf"

_CHILD = (
    "import sys\n"
    "from o2ksim.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "heavy = sorted(m for m in ('pandas', 'pyarrow') if m in sys.modules)\n"
    "print('EXIT', code, 'LOADED', heavy, file=sys.stderr)\n"
)


def _cli_loads(args: list[str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, check=True, cwd=REPO
    )
    return proc.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "args",
    [
        ["--trace", str(SAMPLE), "-q"],
        ["--trace", str(SAMPLE), "--policy", "lxfw-backfill", "--out", "{out}"],
        ["--trace", str(SAMPLE), "--window", "10d", "20d", "--estimates", "scenario-b", "-q"],
        ["--policy", "lxfw-backfill", "-q", "--out", "{out}"],  # the default month, T§3.4's protocol
        ["--span", "2d", "--warmup", "1", "--policy", "eqspatial-5m-50hr", "-q"],
    ],
    ids=["trace", "trace-out", "trace-window-estimates", "o2k-month", "o2k-eqspatial"],
)
def test_run_imports_no_pandas(args, tmp_path):
    args = [a.replace("{out}", str(tmp_path / "out")) for a in args]
    assert _cli_loads(["run", *args]) == "EXIT 0 LOADED []"
    if "--out" in args:
        assert (tmp_path / "out" / "jobs.csv").stat().st_size > 0


@pytest.mark.parametrize("option", ["--parquet", "--check"])
def test_options_that_need_pandas_import_it(option, tmp_path):
    line = _cli_loads(["run", "--trace", str(TINY), "-q", "--out", str(tmp_path), option])
    assert line.startswith("EXIT 0 LOADED ['pandas'"), line


def test_result_tables_are_the_frames_of_their_columns(tmp_path):
    """What a run writes and summarises from columns is what the DataFrames give."""
    result = simulate(SAMPLE, policy="lxfw-backfill", window=("10d", "20d"), estimates="scenario-a:10")
    assert isinstance(result.job_table, ColumnTable)
    result.save(tmp_path)
    frame, segments = result.jobs, result.segments
    assert is_frame(frame) and is_frame(segments)
    assert result.job_table is frame  # built once, then kept
    # the file's text columns mark "no value" with '-' (table.NO_VALUE), the frame keeps its own
    assert (tmp_path / "jobs.csv").read_text() == with_text_markers(frame).to_csv(index=False)
    again = metrics.summary(frame, segments, result.machine.total_procs, (10 * 86400.0, 20 * 86400.0))
    for key, value in again.items():
        assert result.summary[key] == value or (math.isnan(value) and math.isnan(result.summary[key]))
    expected = segments.assign(w=segments["procs"] * (segments["end"] - segments["start"]))
    received = expected.groupby("job_id")["w"].sum()
    got = frame.set_index("job_id")["proc_seconds"]
    assert (got.loc[received.index] == received).all()


def test_read_trace_builds_its_frame_when_asked():
    trace = read_swf(SAMPLE)
    numbers = [
        [int(x) for x in line.split()]
        for line in SAMPLE.read_text().splitlines()
        if line.strip() and not line.startswith(";")
    ]
    by_hand = pd.DataFrame(numbers, columns=list(SWF_FIELDS)).sort_values("submit", kind="stable")
    table = trace.table
    assert isinstance(table, ColumnTable) and len(table) == len(trace) == len(numbers)
    for name in SWF_FIELDS:
        assert column(table, name).tolist() == by_hand[name].tolist()
    frame = trace.jobs
    pd.testing.assert_frame_equal(frame, by_hand.reset_index(drop=True))
    assert trace.table is frame
    trace.jobs = frame.iloc[:10].reset_index(drop=True)
    assert len(trace) == 10 and len(trace.table) == 10


@settings(max_examples=80, deadline=None)
@given(
    keys=st.lists(st.integers(0, 12), min_size=0, max_size=200),
    scale=st.sampled_from([1e-6, 1.0, 1e3, 1e9]),
    seed=st.integers(0, 2**32 - 1),
)
def test_grouped_sum_is_the_exact_sum_rounded_once(keys, scale, seed):
    """Each group's sum is the exact rational sum of its rows, rounded once to a float."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(len(keys)) * scale * 10.0 ** rng.integers(-3, 4, len(keys))
    ids, sums = grouped_sum(np.array(keys, dtype=np.int64), values)
    exact: dict[int, Fraction] = {}
    for key, value in zip(keys, values.tolist(), strict=True):
        exact[key] = exact.get(key, Fraction(0)) + Fraction(value)
    assert ids.tolist() == sorted(exact)
    assert sums.tolist() == [float(exact[k]) for k in sorted(exact)]  # bit for bit
    # and what pandas' grouped sum (used before) gives, up to its own rounding
    expected = pd.Series(values, dtype=float).groupby(np.array(keys, dtype=np.int64)).sum()
    np.testing.assert_allclose(sums, expected.to_numpy(), rtol=1e-12, atol=0.0)


_TEXT = st.one_of(st.none(), st.just(math.nan), st.text(alphabet='ab,"\n\r x1', max_size=5))


@settings(max_examples=80, deadline=None)
@given(
    rows=st.integers(0, 30),
    seed=st.integers(0, 2**32 - 1),
    texts=st.lists(_TEXT, min_size=30, max_size=30),
)
def test_write_csv_of_columns_is_to_csv_of_their_frame(rows, seed, texts, tmp_path_factory):
    rng = np.random.default_rng(seed)
    floats = rng.standard_normal(rows) * 10.0 ** rng.integers(-6, 18, rows)
    floats[rng.random(rows) < 0.2] = np.nan
    host = np.empty(rows, dtype=object)
    host[:] = texts[:rows]
    table = ColumnTable(
        {
            "job_id": np.arange(rows, dtype=np.int64),
            "wait": floats,
            "host": host,
            "analysed": rng.random(rows) < 0.5,
            "status": np.array(["completed"] * rows, dtype=object),
        },
        rows,
    )
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    write_csv(table, path)
    assert path.read_bytes() == table.to_frame().to_csv(index=False).encode()


def test_policy_columns_map_as_pandas_does():
    from o2ksim.run.api import _mapped

    ids = np.array([5, 1, 9, 3], dtype=np.int64)
    for values in ({1: 2.5, 9: math.nan}, {5: 1, 1: 1, 9: 1, 3: 1}, {5: 1}, {}):
        expected = pd.Series(ids).map(values).fillna(0.0)
        got = _mapped(ids, values)
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist()


def test_cooldown_tail_is_the_concatenation_of_the_chunks():
    from o2ksim.workloads.cooldown import append_tail, tail_seed
    from o2ksim.workloads.models import generate

    month = generate("o2k", span="2d", seed=4)
    tail = append_tail(month, "o2k", after=2 * 86400, seed=4, chunks=2, chunk_length=86400.0)
    assert isinstance(tail.table, ColumnTable)  # no DataFrame was built
    parts = [month.jobs]
    next_id = int(month.jobs["job_id"].max()) + 1
    for k in range(2):
        start = 2 * 86400 + k * 86400
        unix = month.header.unix_start_time + start
        extra = generate("o2k", span=86400.0, seed=tail_seed(4, k), start_time=unix).jobs.copy()
        extra["submit"] += start
        extra["job_id"] = np.arange(next_id, next_id + len(extra))
        next_id += len(extra)
        parts.append(extra)
    pd.testing.assert_frame_equal(tail.jobs, pd.concat(parts, ignore_index=True))


def test_trace_needs_exactly_one_form_of_jobs():
    with pytest.raises(TypeError):
        Trace()
    with pytest.raises(TypeError):
        Trace(pd.DataFrame(), block=np.zeros((18, 0), np.int64))
