"""Runtime-estimate scenarios (T§6.2.1, Table 15), computed by hand.

With T the actual and R the requested runtime:

* requested = actual;
* Scenario A ``min((1 + k) T, R)`` for every job;
* Scenario B: as A with k = 20%, except that a job with T <= 10 min and
  T <= 10% of R (one that probably aborted) keeps R.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.machine import single_host
from o2ksim.workloads.transforms import apply_estimates

H = 3600
M = 60

# (T, R): the thesis's example first (asks 50 h, runs 10 h -> 12 h under T+20%)
CASES = [
    (10 * H, 50 * H),  # long job, big overestimate
    (5 * M, 5 * H),  # aborted early: T <= 10 min and T <= 10% R
    (5 * M, 40 * M),  # short but T > 10% R (4 min)
    (20 * M, 5 * H),  # T > 10 min
    (10 * M, 100 * M),  # exactly 10 min and exactly 10% of R: still "aborted"
    (7 * H, 6 * H),  # overran its request
    (100, 110),  # (1 + k) T above R for k = 20%: R
    (10, -1),  # R unknown
    (-1, 3 * H),  # T unknown
    (0, 60),  # T = 0
]
# Scenario A, k = 20:   12 h, 6 min, 6 min, 24 min, 12 min, 6 h, 110, 12, keep, 0
# Scenario B:           12 h, 5 h (kept), 6 min, 24 min, 100 min (kept), 6 h, 110, 12, keep, 60
EXPECTED = {
    "requested": [50 * H, 5 * H, 40 * M, 5 * H, 100 * M, 6 * H, 110, -1, 3 * H, 60],
    "actual": [10 * H, 5 * M, 5 * M, 20 * M, 10 * M, 7 * H, 100, 10, 3 * H, 0],
    "scenario-a": [12 * H, 6 * M, 6 * M, 24 * M, 12 * M, 6 * H, 110, 12, 3 * H, 0],
    "scenario-a:20": [12 * H, 6 * M, 6 * M, 24 * M, 12 * M, 6 * H, 110, 12, 3 * H, 0],
    "scenario-a:50": [15 * H, 450, 450, 30 * M, 15 * M, 6 * H, 110, 15, 3 * H, 0],
    "scenario-a:100": [20 * H, 10 * M, 10 * M, 40 * M, 20 * M, 6 * H, 110, 20, 3 * H, 0],
    "scenario-b": [12 * H, 5 * H, 6 * M, 24 * M, 100 * M, 6 * H, 110, 12, 3 * H, 60],
}


TINY = Path(__file__).resolve().parents[1] / "traces" / "tiny.swf"


def frame(cases=CASES):
    return pd.DataFrame(
        {
            "job_id": range(1, len(cases) + 1),
            "submit": 0,
            "run_time": [t for t, _ in cases],
            "req_time": [r for _, r in cases],
        }
    )


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_table_15_by_hand(scenario):
    src = frame()
    out = apply_estimates(src, scenario)
    assert out["req_time"].tolist() == EXPECTED[scenario]
    assert out["run_time"].tolist() == src["run_time"].tolist()  # only the estimate changes
    assert src["req_time"].tolist() == [r for _, r in CASES]  # the input is not modified


def test_estimates_are_whole_seconds_rounded_up_without_float_noise():
    # 110% of 10 s is 11 s (1.1 * 10 = 11.000000000000002 in binary floating point);
    # 120% of 7 s is 8.4 s -> 9 s; 133.3% of 3 s is 3.999 -> 4 s
    out = apply_estimates(frame([(10, 1000), (7, 1000), (3, 1000)]), "scenario-a:10")
    assert out["req_time"].tolist() == [11, 8, 4]
    out = apply_estimates(frame([(10, 1000), (7, 1000)]), "scenario-a:20%")
    assert out["req_time"].tolist() == [12, 9]
    out = apply_estimates(frame([(3, 1000)]), "scenario-a:33.3")
    assert out["req_time"].tolist() == [4]


def test_zero_percent_is_min_of_actual_and_requested():
    out = apply_estimates(frame(), "scenario-a:0")
    expected = [min(t, r) if r > 0 else t for t, r in CASES]
    expected[8] = 3 * H  # T unknown: keeps R
    assert out["req_time"].tolist() == expected


@pytest.mark.parametrize(
    "bad", ["scenario-c", "scenario-a:x", "scenario-a:-5", "scenario-b:30", "actual:1", "guess"]
)
def test_bad_scenarios_are_user_errors(bad):
    with pytest.raises(O2KSimError):
        apply_estimates(frame(), bad)


def test_the_scheduler_sees_the_estimate_and_the_job_runs_its_actual_time():
    # one host of 4: J1 (2 procs) asks 300 s, runs 100 s.  J2 (4 procs, 10 s) is reserved
    # at J1's predicted end.  J3 (2 procs, asks 500 s, runs 50 s) arrives at 1 and may be
    # backfilled only if its estimate ends before that reservation.
    #   requested:     reservation at 300; J3 would end at 501 -> waits: J2 runs at 100
    #                  (J1 really ends then), J3 after it at 110.
    #   scenario-a:20: J1 120 s, J2 min(12, 10) = 10 s, J3 60 s -> ends 61 <= 120:
    #                  backfilled at 1; J2 still starts at 100.
    jobs = pd.DataFrame(
        {
            "job_id": [1, 2, 3],
            "submit": [0, 0, 1],
            "run_time": [100, 10, 50],
            "req_time": [300, 10, 500],
            "alloc_procs": [2, 4, 2],
            "req_procs": [2, 4, 2],
            "req_mem": -1,
            "used_mem": -1,
            "status": 1,
            "user": 1,
            "queue": 1,
        }
    )
    plain = simulate(jobs, machine=single_host(4), policy="fcfs-backfill").jobs.set_index("job_id")
    assert plain["start"].tolist() == [0, 100, 110]
    r = simulate(jobs, machine=single_host(4), policy="fcfs-backfill", estimates="scenario-a:20")
    t = r.jobs.set_index("job_id")
    assert t["req_time"].tolist() == [120, 10, 60]
    assert t["start"].tolist() == [0, 100, 1]
    assert (t["end"] - t["start"]).tolist() == [100, 10, 50]
    assert np.isclose(r.summary["mean_wait"], (0 + 100 + 0) / 3)


# Issue 27, D14: a huge Scenario A percentage made every estimate the requested runtime
# (``scenario-a:1e12`` was ``requested`` under another name; 1e20 and 1e300 overflowed with
# numpy RuntimeWarnings).  The thesis simulates K = 20, 50, 100 and cites the literature's
# estimates up to (1 + 30,000%) T (T§6.2.1): K is refused beyond 30,000.
@pytest.mark.parametrize("k", ["30001", "1e12", "1e20", "1e300", "inf", "nan"])
def test_a_scenario_a_percentage_beyond_the_literature_is_refused_naming_estimates(k, recwarn):
    with pytest.raises(O2KSimError, match=r"^estimates: .*from 0 to 30,000") as info:
        simulate(TINY, policy="sjf-backfill", estimates=f"scenario-a:{k}")
    assert "\n" not in str(info.value)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_the_largest_scenario_a_percentage_is_applied():
    # K = 30,000: (1 + 300) T, below R for a job of T = 10 s asking 1 h
    out = apply_estimates(frame([(10, 3600)]), "scenario-a:30000")
    assert out["req_time"].tolist() == [3010]


def test_the_command_line_names_estimates_in_one_line(capsys):
    assert main(["run", "--trace", str(TINY), "--estimates", "scenario-a:1e12", "-q"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("o2ksim: error: --estimates: ")
