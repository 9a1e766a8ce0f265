"""Every TOML configuration file is read by one rule (``files.read_toml``): not TOML is one
line naming the file and the line where the parser stopped, and an SWF trace given where a
configuration file goes is named as such (the likely mix-up: ``o2ksim explain trace.swf``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from o2ksim.errors import ConfigError
from o2ksim.experiments.claims import load_claims
from o2ksim.experiments.scenario import load_scenario
from o2ksim.machine import load_machine
from o2ksim.policies.base import load_preset
from o2ksim.prediction.model import load_clm
from o2ksim.workloads import models

ROOT = Path(__file__).resolve().parents[1]

READERS = {
    "machine file": load_machine,
    "policy preset": load_preset,
    "scenario file": load_scenario,
    "fitted model file": load_clm,
    "claims file": load_claims,
    "parameter file": lambda p: models.load_params("cirne-berman", p),
}


@pytest.mark.parametrize("what", sorted(READERS))
def test_an_swf_trace_is_named_as_one(tmp_path: Path, what: str) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text("; Version: 2.2\n; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n")
    with pytest.raises(ConfigError) as err:
        READERS[what](trace)
    text = str(err.value)
    assert text.startswith(f"{trace}:1: ") and "\n" not in text
    assert f"is an SWF trace, not a {what} (TOML)" in text and "o2ksim run --trace" in text


@pytest.mark.parametrize("what", sorted(READERS))
def test_job_records_without_a_header_are_a_trace_too(tmp_path: Path, what: str) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text("\n  1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n2 5 0 10.5 1 -1\n")
    with pytest.raises(ConfigError, match=f"is an SWF trace, not a {what}"):
        READERS[what](trace)


@pytest.mark.parametrize("what", sorted(READERS))
def test_broken_toml_names_the_line_where_it_stops(tmp_path: Path, what: str) -> None:
    f = tmp_path / "c.toml"
    f.write_text('# a comment\nname = "x"\n\nvalue = \n')  # the value is missing on line 4
    with pytest.raises(ConfigError) as err:
        READERS[what](f)
    assert str(err.value).startswith(f"{f}:4: not valid TOML: ")
    assert err.value.line == 4


def test_a_few_numbers_are_not_taken_for_a_trace(tmp_path: Path) -> None:
    """Five numbers are no SWF record (it has 18 fields; six or more count): plain TOML error."""
    f = tmp_path / "c.toml"
    f.write_text("1 2 3 4 5\n")
    with pytest.raises(ConfigError, match=r"c\.toml:1: not valid TOML"):
        load_machine(f)


def test_explain_given_a_trace_says_so_in_one_line() -> None:
    trace = ROOT / "traces" / "tiny.swf"
    done = subprocess.run(
        [sys.executable, "-m", "o2ksim", "explain", str(trace)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is an SWF trace, not a scenario file" in lines[0], done.stderr
