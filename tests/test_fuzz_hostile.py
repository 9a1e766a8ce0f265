"""Fuzz suites: about a thousand generated hostile inputs per category, seeded.

SWF text through the real reader and ``o2ksim run --check``; machine TOML
through ``o2ksim machines``; scenario TOML through ``o2ksim scenario show``.
The property and the generators are in ``tests/hostile_inputs.py``; the large
version runs in ``make bench`` (``benchmarks/test_bench_hostile.py``).  Each
test has a time limit, so a hang fails fast instead of stalling CI.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hostile_inputs import (
    ROOT,
    check_machine,
    check_scenario,
    check_swf,
    machine_bytes,
    scenario_doc,
    scenario_text,
    swf_bytes,
)
from hypothesis import HealthCheck, given, settings

N_EXAMPLES = 1000


def fuzz(n: int = N_EXAMPLES) -> settings:
    """Seeded (the same inputs on every run), no example database, no per-example deadline."""
    return settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


@pytest.mark.timeout(240)
@fuzz()
@given(data=swf_bytes())
def test_generated_swf_files_run_or_are_refused_in_one_line(data: bytes) -> None:
    check_swf(data)


@pytest.mark.timeout(120)
@fuzz()
@given(case=machine_bytes())
def test_generated_machine_files_load_as_written_or_are_refused_in_one_line(case: Any) -> None:
    check_machine(*case)


@pytest.mark.timeout(120)
@fuzz()
@given(doc=scenario_doc())
def test_generated_scenarios_plan_as_written_or_are_refused_in_one_line(doc: dict) -> None:
    check_scenario(doc, scenario_text(doc))


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "data",
    [
        b"; MaxProcs: 4\n1 0 -1 9007199254740992 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1\n",
        b"; MaxProcs: 4\r1 0 -1 60 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1\r",
        b"\x00\x01\x02 garbage\n",
    ],
)
def test_a_few_cases_as_a_separate_process(tmp_path, data: bytes) -> None:
    """The same contract through the installed entry point (no in-process shortcut)."""
    p = tmp_path / "t.swf"
    p.write_bytes(data)
    res = subprocess.run(
        [sys.executable, "-m", "o2ksim", "run", "--trace", str(p), "-q"],
        capture_output=True, text=True, cwd=ROOT, timeout=100,
    )  # fmt: skip
    assert "Traceback" not in res.stderr
    assert res.returncode in (0, 2), res.stderr
    if res.returncode == 2:
        assert len(res.stderr.strip().splitlines()) == 1 and "t.swf" in res.stderr


def test_zz_the_generators_stay_hostile_and_plausible() -> None:
    """Runs after the suites above (file order): each category had both accepted
    and refused inputs, so the generators neither only break nor only pass."""
    from hostile_inputs import OUTCOMES

    print("\nfuzz outcomes:", dict(sorted(OUTCOMES.items())))
    for category in ("swf", "machine", "scenario"):
        ok, refused = OUTCOMES[f"{category}/ok"], OUTCOMES[f"{category}/refused"]
        if ok + refused < N_EXAMPLES:
            pytest.skip(f"the {category} suite did not run in this session")
        assert ok >= 0.1 * (ok + refused) and refused >= 0.1 * (ok + refused), (category, ok, refused)
