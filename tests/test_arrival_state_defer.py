"""``benchmarks/arrival_state.py --defer-departures``: the engine-order ablation of issue 23, hand-computed.

One host of 4 processors, FCFS-backfill:

  J1 t=0:   4 procs, 100 s -> starts at 0, leaves at 100
  J2 t=50:  4 procs, 10 s  -> waits for J1
  J3 t=200: 1 proc, 10 s   -> the last arrival

Scheduling at departures (the thesis's simulator, T§3.4): J2 starts at J1's
departure, 100, and ends at 110; J3 finds the host free at 200.
Departure passes deferred: nothing starts at 100; the next pass is J3's
arrival at 200, where J2 (first in FCFS order) takes all 4 processors; J3
waits for J2's departure at 210 (after the last submit time departures are
scheduled again, or the queue would never drain).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from conftest import job, one_host, starts

from o2ksim import simulate
from o2ksim.policies import make_policy

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "arrival_state.py"
JOBS = [job(1, 0, 4, 100), job(2, 50, 4, 10), job(3, 200, 1, 10)]


def _arrival_state():
    spec = importlib.util.spec_from_file_location("arrival_state", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_departure_passes_scheduled_by_default():
    r = simulate(JOBS, machine=one_host(4), policy="fcfs-backfill")
    assert starts(r) == {1: 0, 2: 100, 3: 200}


def test_deferred_departure_passes_wait_for_the_next_arrival():
    policy = _arrival_state().defer_departures(make_policy("fcfs-backfill"), last_submit=200)
    r = simulate(JOBS, machine=one_host(4), policy=policy)
    assert starts(r) == {1: 0, 2: 200, 3: 210}
