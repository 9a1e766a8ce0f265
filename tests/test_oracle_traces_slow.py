"""Whole traces against the independent EASY oracle (slow: ``make bench`` / ``pytest -m slow``).

``../shared/checks/easy_oracle.py`` is a small, separate EASY implementation
(one host, processors only, the tie rule of SPEC §3.1).  FCFS-backfill must
give every job the same start time:

* HPC2N (202,876 jobs) on ``hosts/hpc2n.toml``, *with* its memory limit of
  512 MB per processor: memory never binds before processors for these jobs,
  so the oracle's processor-only schedule is still the exact answer, and the
  memory bookkeeping (fast path included) must not perturb it;
* RICC (447,794 jobs, 8,192 processors) from the trace header — the deep-queue
  case the indexed fast path exists for.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import starts

from o2ksim import simulate

SHARED = Path(__file__).resolve().parents[2] / "shared"
TRACES = SHARED / "traces"

pytestmark = [pytest.mark.slow, pytest.mark.traces]


def _oracle():
    path = SHARED / "checks" / "easy_oracle.py"
    if not path.exists():
        pytest.skip("../shared/checks/easy_oracle.py not available")
    spec = importlib.util.spec_from_file_location("easy_oracle", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["easy_oracle"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("trace", "procs", "machine"),
    [
        ("HPC2N-2002-2.1-cln.swf.gz", 240, "hpc2n"),
        ("RICC-2010-2.swf.gz", 8192, None),
    ],
)
def test_fcfs_backfill_equals_the_oracle_on_a_whole_trace(trace, procs, machine):
    path = TRACES / trace
    if not path.exists():
        pytest.skip(f"{path} not available")
    oracle = _oracle()
    jobs, _ = oracle.read_swf(str(path))
    expected = oracle.simulate(jobs, procs, "easy")
    got = starts(simulate(path, machine=machine, policy="fcfs-backfill"))
    differ = [jid for jid, (_s, st, _e, _p) in expected.items() if got.get(jid) != st]
    assert not differ, f"{len(differ)} of {len(expected)} jobs start elsewhere, e.g. {differ[:5]}"
