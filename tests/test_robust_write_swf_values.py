"""``write_swf`` refuses what ``simulate(frame)`` refuses, with the value as given (issue 27, D12).

It wrote ``req_procs = 2.5`` as ``3`` and a NaN or infinite ``run_time`` as
``-1`` (unknown), showed ``user = 1e30`` as its int64 wrap-around
(``-9223372036854775808``) and raised a pandas ``ValueError`` traceback for
``req_time = 'x'``.  Both now call the one check,
:func:`o2ksim.workloads.swf_values.check_jobs_frame`; the file is not written.
"""

from __future__ import annotations

import pandas as pd
import pytest

from o2ksim import simulate
from o2ksim.errors import O2KSimError
from o2ksim.machine import MachineSpec
from o2ksim.workloads.swf import read_swf, write_swf
from tests.conftest import one_host


def _frame(column: str | None = None, value: object = None) -> pd.DataFrame:
    """Two jobs with the columns ``simulate`` needs; job 2's ``column`` set to ``value``."""
    data: dict[str, list[object]] = {
        "job_id": [1, 2], "submit": [0.0, 10.0], "run_time": [100.0, 50.0], "alloc_procs": [-1, -1],
        "used_mem": [-1, -1], "req_procs": [2.0, 1.0], "req_time": [200.0, 100.0], "req_mem": [-1, -1],
        "user": [1.0, 2.0], "queue": [1, 1],
    }  # fmt: skip
    if column is not None:
        data[column][1] = value
    return pd.DataFrame(data)


MACHINE: MachineSpec = one_host(4)


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("req_procs", 2.5, "field req_procs: 2.5 is not a whole number (job 2)"),
        ("run_time", float("nan"), "field run_time: nan is not a finite number (job 2)"),
        ("run_time", float("inf"), "field run_time: inf is not a finite number (job 2)"),
        ("user", 1e30, "field user: 1e+30 is beyond the largest SWF value (9223372036854775807) (job 2)"),
        ("req_time", "x", "field req_time: 'x' is not a number (job 2)"),
        ("req_mem", -5, "field req_mem: -5 is negative (only -1 means unknown) (job 2)"),
        ("job_id", 1, "field job_id: job id 1 appears more than once"),
    ],
)
def test_write_swf_refuses_what_simulate_refuses(tmp_path, column, value, said):
    frame = _frame(column, value)
    out = tmp_path / "t.swf"
    with pytest.raises(O2KSimError) as written:
        write_swf(frame, out)
    assert str(written.value) == f"write_swf: {said}"
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary file
    with pytest.raises(O2KSimError) as simulated:
        simulate(frame, machine=MACHINE)
    assert str(simulated.value).endswith(said)  # the same check, the same words


def test_a_checked_table_is_written_and_read_back(tmp_path):
    frame = _frame()
    frame["submit"] = [0.4, 10.6]  # times are SWF's whole seconds: rounded to the nearest
    write_swf(frame, tmp_path / "t.swf")
    back = read_swf(tmp_path / "t.swf").jobs
    assert back["submit"].tolist() == [0, 11]
    assert back["req_procs"].tolist() == [2, 1]
    assert back["run_time"].tolist() == [100, 50]


def test_the_largest_swf_value_passes_the_table_check():
    """2**63 - 1 is an SWF value (the reader takes it); as a float it rounds up to 2**63, so
    an int64 column must be checked as integers (found by test_fuzz_hostile's hypothesis)."""
    import numpy as np
    import pandas as pd

    from o2ksim.workloads.swf_values import check_frame_values

    check_frame_values(pd.DataFrame({"group": np.array([2**63 - 1], dtype=np.int64)}), "t")
    with pytest.raises(O2KSimError, match="9223372036854775808 is beyond"):
        check_frame_values(pd.DataFrame({"group": np.array([2**63], dtype=np.uint64)}), "t")
