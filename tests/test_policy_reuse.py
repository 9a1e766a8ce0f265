"""One policy object simulated twice gives the same run as a fresh object each time.

``bind`` is called before every run; whatever a policy keeps between passes
(held reservations, wake-ups, trial bookkeeping, per-host caches keyed by
host versions and job ids, which every run restarts) must not leak into the
next run.  A first run cut short by a window leaves state behind on purpose.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from o2ksim.policies import make_policy
from o2ksim.run.api import simulate
from o2ksim.workloads.swf import jobs_from_columns


def _jobs(seed: int, n: int) -> pd.DataFrame:
    """``n`` jobs in SWF columns: exponential gaps, power-of-two sizes, over-estimated runtimes."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(120.0, n) // 1).astype(int)
    procs = np.minimum(100, 2 ** rng.integers(0, 7, n))
    run = rng.integers(1, 5000, n)
    req = (run * rng.choice([1, 1.5, 3, 10], n) // 1).astype(int)
    return jobs_from_columns(
        n, submit=submit, run_time=run, req_time=req, req_procs=procs, alloc_procs=procs,
        user=rng.integers(1, 5, n),
    )


CASES = [
    ("fcfs-backfill", {"reservation_kind": "fixed"}),
    ("fcfs-backfill", {"sliding": False}),
    ("lxfw-backfill", {}),
    ("lxfw-backfill-immediate", {}),
    ("lxfw-backfill-soon", {}),
    ("fcfs-backfill", {"reservations": 2}),
    ("eqspatial-5m", {}),
    ("fcfs", {}),
    ("tradeoff-tw-avgx", {"limit": 50}),
    ("lexical-tw-avgx", {"limit": 50}),
]


@pytest.mark.parametrize(("preset", "params"), CASES)
def test_a_reused_policy_runs_like_a_fresh_one(preset, params):
    first, second = _jobs(1, 250), _jobs(2, 250)
    reused = make_policy(preset, **params)
    simulate(first, "kth-sp2", reused, window=(0, 3600, 0))  # cut short: state is left behind
    again = simulate(second, "kth-sp2", reused)
    fresh = simulate(second, "kth-sp2", make_policy(preset, **params))
    cols = ["job_id", "start", "end", "host", "status"]
    assert again.jobs[cols].equals(fresh.jobs[cols])
    counts = [{k: v for k, v in r.stats.extra.items() if "seconds" not in k} for r in (again, fresh)]
    assert counts[0] == counts[1]  # the policy's counters too (timings aside)
