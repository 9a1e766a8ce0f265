"""The run's result tables, built on whole columns, against row-by-row references written here.

* ``metrics.summary`` (numpy) against the pandas formulation of SPEC §5's
  measures, on random job tables with NaN slowdowns, every status and a
  partial ``analysed`` column: equal bit for bit;
* the per-job table of a run with preemptions (immediate service) against
  each job's measures computed from its ``Job`` object, and ``proc_seconds``
  against a sum over its allocation segments;
* start-up: ``o2ksim --help`` and friends load no numpy, pandas or SimPy.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim import metrics

STATUSES = ["completed", "killed", "rejected", "unfinished", "not_started"]


def _pandas_summary(jobs: pd.DataFrame) -> dict[str, float]:
    """SPEC §5's overall measures with pandas, row selections and skip-NaN reductions."""
    analysed = jobs.loc[jobs["analysed"]]
    ran = analysed.loc[analysed["status"].isin(("completed", "killed"))]
    done = ran.loc[ran["status"] == "completed"]
    wait = ran["wait"]
    return {
        "jobs": len(analysed),
        "completed": int((analysed["status"] == "completed").sum()),
        "killed": int((analysed["status"] == "killed").sum()),
        "rejected": int((analysed["status"] == "rejected").sum()),
        "unfinished": int(analysed["status"].isin(("unfinished", "not_started")).sum()),
        "mean_wait": float(wait.mean()),
        "p95_wait": float(np.percentile(wait, 95)) if len(wait) else math.nan,
        "max_wait": float(wait.max()),
        "mean_slowdown": float(done["slowdown"].mean()),
        "mean_bounded_slowdown": float(done["bounded_slowdown"].mean()),
        "max_bounded_slowdown": float(done["bounded_slowdown"].max()),
        "total_excessive_wait_50h": float((wait - 50 * 3600.0).clip(lower=0).sum()),
        "preemptions": int(analysed["preemptions"].sum()),
    }


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 2**32 - 1))
def test_summary_matches_the_pandas_formulation(n, seed):
    rng = np.random.default_rng(seed)
    status = rng.choice(STATUSES, n, p=[0.6, 0.1, 0.1, 0.1, 0.1])
    wait = rng.exponential(3600.0, n) * rng.choice([0.01, 1.0, 100.0], n)
    run_time = rng.exponential(600.0, n).round()
    slowdown = (wait + run_time) / np.where(run_time > 0, run_time, np.nan)
    slowdown[rng.random(n) < 0.1] = np.nan
    jobs = pd.DataFrame(
        {
            "submit": rng.random(n) * 1e6,
            "end": rng.random(n) * 2e6,
            "wait": wait,
            "status": pd.Series(status, dtype="str"),
            "slowdown": slowdown,
            "bounded_slowdown": np.where(rng.random(n) < 0.05, np.nan, slowdown + 1.0),
            "preemptions": rng.integers(0, 3, n),
            "analysed": rng.random(n) < 0.8,
        }
    )
    got = metrics.summary(jobs)
    expected = _pandas_summary(jobs)
    for key, value in expected.items():
        assert (math.isnan(got[key]) and math.isnan(value)) or got[key] == value, key


def test_job_table_of_a_run_row_by_row():
    """Each row from its Job object; proc_seconds from the job's segments."""
    import o2ksim
    from o2ksim.engine.core import Simulation
    from o2ksim.policies import make_policy
    from o2ksim.run.results import result_table
    from o2ksim.workloads.convert import specs_from_frame
    from o2ksim.workloads.models import generate

    trace = generate("o2k", span=4 * 86400, seed=5)
    machine = o2ksim.load_machine("o2k")
    policy = make_policy("lxfw-backfill-immediate")
    sim = Simulation(machine, specs_from_frame(trace.jobs), policy, rng=np.random.default_rng(0))
    sim.run()
    segments = sim.monitor.segments()
    table = result_table(list(sim.jobs.values()), segments)
    assert list(table["job_id"]) == [
        j.id for j in sorted(sim.jobs.values(), key=lambda j: (j.spec.submit, j.id))
    ]
    assert (table["preemptions"] > 0).any()  # the interesting rows exist
    by_job = segments.groupby("job_id")
    received = {jid: sum(p * (e - s) for p, e, s in zip(g["procs"], g["end"], g["start"], strict=True))
                for jid, g in by_job}  # fmt: skip
    for row in table.itertuples(index=False):
        job = sim.jobs[row.job_id]
        completed = job.state.value == "completed"
        assert row.status == (job.state.value if job.state.terminal else row.status)
        response = job.end - job.spec.submit
        interrupted = job.preemptions or job.restarts or job.resizes or job.reduced
        wait = response - job.spec.run_time if interrupted and completed else job.first_start - job.spec.submit
        assert _same(row.wait, wait)
        assert _same(row.response, response)
        if completed:
            floor = max(job.spec.run_time, 60.0)
            assert row.bounded_slowdown == (wait + floor) / floor
            assert _same(row.slowdown, response / job.spec.run_time if job.spec.run_time > 0 else math.nan)
        else:
            assert math.isnan(row.slowdown) and math.isnan(row.bounded_slowdown)
        assert row.mem == job.spec.mem / 1024
        assert row.host == job.host or (row.host != row.host and job.host is None)
        assert row.proc_seconds == pytest.approx(received.get(row.job_id, 0.0), rel=1e-12)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize(
    ("argv", "allowed"),
    [(["--help"], ()), (["--version"], ()), (["run", "--help"], ("numpy", "simpy")), (["machines"], ())],
)
def test_startup_loads_no_numerics(argv, allowed):
    """The command line parses and answers these without numpy, pandas or SimPy (start-up time).

    ``run --help`` builds the run command's parser, whose module imports the
    run path (the engine, the policies, numpy tables) at its top; pandas and
    scipy stay out."""
    code = (
        "import sys\n"
        "from o2ksim.cli import main\n"
        f"main({argv!r})\n"
        f"heavy = sorted(m for m in ('numpy', 'pandas', 'simpy', 'scipy', 'pyarrow') if m in sys.modules and m not in {allowed!r})\n"
        "print('LOADED', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED []" in proc.stderr, proc.stderr
