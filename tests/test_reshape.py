"""Load scaling, shifting and merging (o2ksim.workloads.reshape)."""

from __future__ import annotations

import numpy as np
import pytest

from o2ksim.errors import O2KSimError
from o2ksim.workloads import models, reshape
from o2ksim.workloads.swf import SWFHeader, Trace, jobs_frame


def tiny(submits, runs, procs, start=1000, max_procs=10):
    rows = [
        [i + 1, s, -1, r, p, -1, -1, p, r, -1, 1, 1, 1, -1, -1, -1, -1, -1]
        for i, (s, r, p) in enumerate(zip(submits, runs, procs, strict=True))
    ]
    return Trace(
        jobs=jobs_frame(rows),
        header=SWFHeader(unix_start_time=start, max_procs=max_procs),
        source="tiny",
    )


def test_offered_load_of_a_tiny_trace():
    t = tiny([0, 100, 200, 300], [100, 100, 100, 100], [5, 5, 5, 5])
    # work 2000 proc-s over 4 jobs x 100 s mean interarrival on 10 procs
    assert reshape.offered_load(t) == pytest.approx(0.5)
    assert reshape.offered_load(t, procs=20, span=1000) == pytest.approx(0.1)


@pytest.mark.parametrize("rho", [0.5, 0.9, 1.2])
def test_scale_load_hits_the_target(rho):
    t = models.generate("o2k", span="7d", seed=2)
    before = reshape.offered_load(t)
    s = reshape.scale_load(t, rho)
    assert reshape.offered_load(s) == pytest.approx(rho, rel=1e-3)
    # jobs unchanged except their submit times; order kept; original untouched
    assert s.jobs.drop(columns="submit").equals(t.jobs.drop(columns="submit"))
    assert np.all(np.diff(s.jobs["submit"].to_numpy()) >= 0)
    assert reshape.offered_load(t) == pytest.approx(before)
    assert "load scaled" in s.header.notes[-1]


def test_scale_load_on_a_trace_without_recorded_span():
    t = tiny([0, 100, 200, 300], [100, 100, 100, 100], [5, 5, 5, 5])
    s = reshape.scale_load(t, 0.25)
    assert s.jobs["submit"].tolist() == [0, 200, 400, 600]
    assert reshape.offered_load(s) == pytest.approx(0.25)
    with pytest.raises(O2KSimError):
        reshape.scale_load(t, 0)


def test_shift():
    t = tiny([0, 10], [1, 1], [1, 1])
    assert reshape.shift(t, 5).jobs["submit"].tolist() == [5, 15]
    with pytest.raises(O2KSimError):
        reshape.shift(t, -1)


def test_merge_on_unix_clock_renumbers_and_keeps_references():
    a = tiny([0, 50], [10, 10], [1, 2], start=1000)
    b = tiny([0, 20], [10, 10], [3, 4], start=1030)
    b.jobs.loc[1, "prev_job"] = 1  # job 2 of b follows job 1 of b
    m = reshape.merge([a, b])
    assert m.header.unix_start_time == 1000
    assert m.jobs["submit"].tolist() == [0, 30, 50, 50]
    assert m.jobs["job_id"].tolist() == [1, 2, 3, 4]
    assert m.jobs["alloc_procs"].tolist() == [1, 3, 2, 4]
    # b's job 2 (now id 3 or 4 with 4 procs) points at b's job 1 (now id 2)
    row = m.jobs[m.jobs["alloc_procs"] == 4].iloc[0]
    assert row["prev_job"] == 2
    assert sorted(set(m.jobs["user"])) == [
        1,
        3,
    ]  # distinct users per source (offset by the previous maximum + 1)
    s = reshape.merge([a, b], align="start")
    assert s.jobs["submit"].tolist() == [0, 0, 20, 50]


def test_merge_errors():
    with pytest.raises(O2KSimError):
        reshape.merge([])
    a = tiny([0], [1], [1])
    a.header.unix_start_time = None
    with pytest.raises(O2KSimError, match="UnixStartTime"):
        reshape.merge([a, tiny([0], [1], [1])])
