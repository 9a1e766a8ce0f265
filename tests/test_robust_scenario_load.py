"""A scenario is checked whole when it is loaded (issue 27, D27 D28).

* ``workload.load = 200`` (or a factor level of it) was accepted by ``scenario
  show``; ``scenario run`` made the results folder, stored a failed run and
  exited 1 with ``target load must be from 0.001 to 100``.  Load scaling takes
  0.001 to 100 (``generate --load``), so the file is refused on load, exit 2,
  before any folder exists.
* a typo in ``[reduced]`` (``protocol.windw``) passed ``scenario run`` and
  ``scenario show`` and was refused only with ``--reduced``; the overrides are now
  validated on every load.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.errors import ConfigError
from o2ksim.experiments.scenario import parse_scenario
from tests.conftest import one_line

TRACE = Path(__file__).resolve().parents[1] / "traces" / "kth-sp2-sample.swf"
HEAD = f'name = "s"\nmachine = "kth-sp2"\npolicies = ["fcfs"]\n[workload]\ntrace = "{TRACE}"\n'


def _refused(tmp_path: Path, capsys, body: str) -> tuple[str, str]:
    """``scenario show`` and ``scenario run`` of HEAD + body: their one error line each."""
    path = tmp_path / "s.toml"
    path.write_text(HEAD + body)
    out = tmp_path / "out"
    assert main(["scenario", "show", str(path)]) == 2
    shown = one_line(capsys.readouterr().err)
    assert main(["scenario", "run", str(path), "--out", str(out), "-j", "1", "-q"]) == 2
    ran = one_line(capsys.readouterr().err)
    assert not out.exists()  # refused before any folder was made
    return shown, ran


@pytest.mark.parametrize("load", ["200", "1e300", "0.0001", "100.5"])
def test_a_load_beyond_what_scaling_takes_is_refused_on_load(tmp_path, capsys, load):
    for body in (f"load = {load}\n", f"[factors]\nworkload.load = [0.5, {load}]\n"):
        shown, ran = _refused(tmp_path, capsys, body)
        field = "factors.workload.load" if "factors" in body else "workload.load"
        assert shown == ran
        assert shown.startswith(f"o2ksim: error: {tmp_path / 's.toml'}:"), shown  # and its line
        assert f": field {field}: must be " in shown
        assert "(offered load)" in shown


@pytest.mark.parametrize("load", ["0.001", "100", "0.86"])
def test_the_loads_scaling_takes_are_accepted(load):
    assert parse_scenario(HEAD + f"load = {load}\n").workload["load"] == float(load)


def test_a_typo_in_reduced_is_refused_on_every_load(tmp_path, capsys):
    shown, ran = _refused(tmp_path, capsys, '[reduced]\nprotocol.windw = ["0", "1d"]\n')
    assert shown == ran
    # HEAD's five lines, then [reduced] on line 6 and the typo on line 7 (counted by hand)
    assert shown.startswith(f"o2ksim: error: {tmp_path / 's.toml'}:7: field reduced.protocol.windw: unknown key")
    assert "did you mean 'window'?" in shown


def test_a_bad_reduced_value_is_refused_on_load():
    with pytest.raises(ConfigError, match=r"field reduced\.workload\.load: must be at most 100"):
        parse_scenario(HEAD + "[reduced]\nworkload.load = 500\n")


def test_valid_overrides_load_both_ways():
    text = HEAD + '[reduced]\nprotocol.window = ["0", "2d"]\n'
    assert parse_scenario(text).protocol.get("window") is None
    assert parse_scenario(text, reduced=True).protocol["window"] is not None


@pytest.mark.parametrize(
    ("body", "field", "line"),
    [  # HEAD's five lines, then the base key on line 6 and 7, [reduced] on 8 (counted by hand)
        ('[protocol]\nseeds = [1]\n[reduced]\nprotocol.seedz = [2]\n', "reduced.protocol.seedz", 9),
        ('load = 0.5\n\n[reduced]\nworkload.load = 500\n', "reduced.workload.load", 9),
    ],
)
def test_with_reduced_a_refused_override_is_named_as_written(tmp_path, capsys, body, field, line):
    """``scenario show --reduced`` named the key the override replaces (``protocol.seedz``,
    ``workload.load``), with no line or the line of the base value it replaced (issue 27, L3):
    the field as written in ``[reduced]`` and its line, as without ``--reduced``."""
    path = tmp_path / "s.toml"
    path.write_text(HEAD + body)
    for extra in (["--reduced"], []):
        assert main(["scenario", "show", str(path), *extra]) == 2
        err = one_line(capsys.readouterr().err)
        assert err.startswith(f"o2ksim: error: {path}:{line}: field {field}: "), err
