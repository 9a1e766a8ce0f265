"""A refusal of a machine, scenario or policy preset file names the line of the field it
refuses, as the SWF reader and the model parameter files do (issue 27, the fourth audit:
machine files named the field but not the line).  The expected lines are counted by hand
in the files written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from o2ksim.errors import ConfigError
from o2ksim.experiments.scenario import load_scenario
from o2ksim.machine import load_machine
from o2ksim.policies.base import load_preset
from o2ksim.toml_lines import toml_field_line

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "traces" / "tiny.swf"


def test_a_machine_file_refusal_names_the_line(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('name = "m"\n\n[[host]]\nname = "a"\nprocs = 4\n\n[[host]]\nname = "b"\nprocs = -3\n')
    with pytest.raises(ConfigError) as caught:
        load_machine(str(path))
    assert str(caught.value).startswith(f"{path}:9: field host[1].procs:")  # the second host's


def test_a_scenario_refusal_names_the_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        f'name = "s"\npolicies = ["fcfs"]\n[workload]\ntrace = "{TINY}"\n\n[protocol]\nseeds = "a"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_scenario(str(path))
    assert str(caught.value).startswith(f"{path}:7: field protocol.seeds:")


def test_a_policy_preset_refusal_names_the_line(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('name = "p"\nkind = "backfill"\n\n[params]\nreservations = -2\n')
    with pytest.raises(ConfigError) as caught:
        load_preset(path)
    assert str(caught.value).startswith(f"{path}:5: ")
    assert "reservations" in str(caught.value)


@pytest.mark.parametrize(
    ("field", "line"),
    [("name", 1), ("host[0].procs", 5), ("host[1].name", 8), ("options.kill_overrun", 11),
     ("factors.workload.load", 13), ("workload.load", None), ("nothing", None)],
)  # fmt: skip
def test_toml_field_line_follows_tables_and_arrays_of_tables(field, line):
    lines = ['name = "m"', "", "[[host]]", 'name = "a"', "procs = 4", "", "[[host]]",
             'name = "b"', "procs = 8", "[options]", "kill_overrun = true",
             "[factors]", "workload.load = [0.5, 200]"]  # fmt: skip  (no [workload] table: None)
    assert toml_field_line(lines, field) == line
