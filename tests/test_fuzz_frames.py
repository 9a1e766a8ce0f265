"""Fuzz suite: generated job tables given to ``simulate()`` (the API's DataFrame input), seeded.

The input kind the SWF, TOML and CLI suites do not reach: a DataFrame with the
SWF columns built in Python, whose cells may be text, None, True, NaN,
infinity, a fraction or a negative number (the issue-27 audit found a frame
with a text cell failing deep in the engine with a numpy ``ValueError``).

The property, with an oracle written from the SWF rules (SPEC §SWF, Chapin et
al. §2.3), not from o2ksim: a table with a cell that is not a finite number, a
fraction in a count or id field, or a value below -1 (SWF's "unknown") outside
the submit time is refused with one :class:`O2KSimError` line naming that
field; any other table runs, and every job of it is in ``result.jobs`` once.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim import simulate
from o2ksim.errors import O2KSimError, PerfectEstimatesWarning
from o2ksim.workloads.swf_fields import SWF_FIELDS

TIMES = {"avg_cpu", "submit", "wait", "run_time", "req_time", "think_time"}
"""Fields a table built in Python may give as fractions."""

HOSTILE = ["a", "", None, True, False, math.nan, math.inf, -math.inf, -5, -1.5, 1.5, 2.5]


def is_refused(field: str, value: Any) -> bool:
    """Whether SWF's rules refuse ``value`` in ``field`` (the oracle)."""
    if value is None or isinstance(value, bool | str):
        return True
    if not math.isfinite(value):
        return True
    if field not in TIMES and value != math.floor(value):
        return True
    return field != "submit" and value < -1


@st.composite
def job_frame(draw: Any) -> tuple[pd.DataFrame, list[tuple[str, Any]]]:
    """A plausible 2-6 job table (one host of 8 processors fits every job) and the hostile
    cells put into it (none in about a third of the tables)."""
    n = draw(st.integers(2, 6))
    rows = []
    for i in range(n):
        procs = draw(st.integers(1, 8))
        run = draw(st.integers(0, 5000))
        rows.append({
            "job_id": i + 1, "submit": draw(st.integers(0, 10_000)), "wait": -1, "run_time": run,
            "alloc_procs": procs, "avg_cpu": -1, "used_mem": -1, "req_procs": procs,
            "req_time": run + draw(st.integers(0, 600)), "req_mem": -1, "status": 1,
            "user": draw(st.integers(1, 3)), "group": -1, "app": -1, "queue": 1, "partition": -1,
            "prev_job": -1, "think_time": -1,
        })  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(SWF_FIELDS))
    cells = draw(
        st.lists(
            st.tuples(st.sampled_from(SWF_FIELDS), st.integers(0, n - 1), st.sampled_from(HOSTILE)),
            max_size=2,
        )
    )
    hostile = []
    for field, row, value in cells:
        frame[field] = frame[field].astype(object)
        frame.at[row, field] = value
        hostile.append((field, value))
    return frame, hostile


@pytest.mark.timeout(240)
@settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(case=job_frame())
def test_generated_job_tables_run_or_are_refused_in_one_line(case: Any) -> None:
    frame, hostile = case
    refused_fields = {f for f, v in hostile if is_refused(f, v)}
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            result = simulate(frame, machine={"name": "m", "host": [{"name": "h", "procs": 8}]})
        # the only warning a table may draw: jobs without a requested runtime, said in one line
        for w in said:
            assert issubclass(w.category, PerfectEstimatesWarning), w.message
            assert "\n" not in str(w.message)
    except O2KSimError as exc:
        message = str(exc)
        assert refused_fields, f"a table SWF's rules accept was refused: {message}"
        assert "\n" not in message
        assert any(f"field {f}" in message for f in refused_fields), message
        return
    assert not refused_fields, f"accepted {hostile}"
    assert sorted(result.jobs["job_id"].tolist()) == sorted(frame["job_id"].tolist())
