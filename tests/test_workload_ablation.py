"""The workload knobs of ``benchmarks/workload_knobs.py`` (issue 23's workload ablations), by hand.

Each knob must change exactly one property of a generated month and keep the
job's LSF class (T Table 3: vst/st/mt/lt <= 5/50/200/400 h; sj/mj/lj <= 2/4/16
GB), so that Table 6's class mix is untouched.  Expected values are computed
by hand from those limits.
"""

from __future__ import annotations

import gzip
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "workload_knobs.py"


@pytest.fixture(scope="module")
def wa():
    spec = importlib.util.spec_from_file_location("workload_knobs", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["workload_knobs"] = mod
    spec.loader.exec_module(mod)
    return mod


def _jobs(**cols: list[int]) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v, dtype=np.int64) for k, v in cols.items()})


def test_class_limit_requests_are_the_class_time_limits(wa):
    # queue 1 vst_sj (5 h), 7 mt_mj (200 h), 4 lt_sj (400 h), 6 st_mj (50 h) -- Table 6's order
    jobs = _jobs(queue=[1, 7, 4, 6], req_time=[3600, 300000, 1440000, 180000], run_time=[60] * 4)
    got = wa.class_limit_requests(jobs, "2000-02", 1)
    assert got["req_time"].tolist() == [18000, 720000, 1440000, 180000]
    assert got["run_time"].tolist() == [60] * 4  # T unchanged


def test_memory_scaled_and_capped_at_the_size_class(wa):
    # P = 2, 512 MB per processor (1 GB job) in sj (queue 1: <= 2 GB), mj (queue 5: <= 4 GB)
    kb = 512 * 1024
    jobs = _jobs(queue=[1, 1, 1, 5], req_procs=[2, 2, 2, 2], req_mem=[kb] * 4)
    assert wa.scale_memory(jobs, 1.5)["req_mem"].tolist() == [768 * 1024] * 4
    # x3 = 3 GB: sj capped at its 2 GB (1 GB per processor), mj keeps 3 GB (1.5 GB per processor)
    assert wa.scale_memory(jobs, 3.0)["req_mem"].tolist() == [1024 * 1024] * 3 + [1536 * 1024]
    # a factor under 1 never lowers a request
    assert wa.scale_memory(jobs, 0.5)["req_mem"].tolist() == [kb] * 4
    # per class: vst_sj (queue 1) x3 -> capped at 2 GB; vst_mj (queue 5) x1.25 -> 1.25 GB
    f = np.ones(12)
    f[0], f[4] = 3.0, 1.25
    got = wa.scale_memory_by_class(jobs, f)["req_mem"].tolist()
    assert got == [1024 * 1024] * 3 + [640 * 1024]


def test_batches_read_and_replayed(wa, tmp_path):
    lines = [";Version: 2.2"] + [
        f"{i + 1} {t} -1 10 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1"
        for i, t in enumerate([0, 0, 0, 5, 7, 7])
    ]
    with gzip.open(tmp_path / "Toy-1.swf.gz", "wt") as f:
        f.write("\n".join(lines) + "\n")
    sizes = wa.batch_sizes("Toy", tmp_path)
    assert sizes.tolist() == [3, 1, 2]
    jobs = _jobs(submit=[10, 20, 30, 40, 50, 60, 70, 80])
    # sizes from index 1, cycled: 1, 2, 3, 1, ... -> groups [10], [20, 30], [40, 50, 60], [70], [80]
    got = wa.replay_batches(jobs, sizes, 1)["submit"].tolist()
    assert got == [10, 20, 20, 40, 40, 40, 70, 80]
