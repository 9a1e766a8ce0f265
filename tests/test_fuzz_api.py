"""A generated fuzz suite of every argument of the Python API's entry points (issue 27).

``tests/test_fuzz_commands.py`` fuzzes :func:`o2ksim.simulate`'s keywords; here every
argument of every other entry point -- the package's own names (``o2ksim.__all__``) and the
documented functions of scenarios, results, reports and workload characterisation -- is
given every hostile value of every type (None, numbers huge, negative, NaN and infinite,
strings empty and not, bytes, lists, dicts, an object, a bool), the other arguments being
valid.  The property: the call works, or raises :class:`~o2ksim.errors.O2KSimError` with a
one-line message; never another exception (the same one-line errors as the CLI).  And a
flag (an argument annotated ``bool``) takes only True or False: ``lenient="no"`` or ``0``
read as a wish would be a silently wrong run.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import o2ksim
from o2ksim.errors import O2KSimError
from o2ksim.experiments.scenario import load_scenario, parse_scenario
from o2ksim.experiments.store import load_results
from o2ksim.experiments.sweep import run_sweep
from o2ksim.report.html import write_report, write_result_report
from o2ksim.report.player_run import run_folder_data
from o2ksim.report.replay import StoredRun
from o2ksim.workloads.characterize import characterize

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
KTH = ROOT / "traces" / "kth-sp2-sample.swf"

HOSTILE: list[Any] = [None, 5, -1, 2**70, 1.5, math.nan, math.inf, "", "x", b"x", [], [1], {},
                      {"a": 1}, object(), True]  # fmt: skip
NOT_FLAGS: list[Any] = ["no", "False", 0, 1, None, 1.0]

SCENARIO_TEXT = (ROOT / "scenarios" / "explain-backfill.toml").read_text()
SWEEP = f"""
name = "fuzz"
machine = "kth-sp2"
policies = ["fcfs"]
[workload]
trace = "{TINY}"
[outputs]
report = false
"""


@pytest.fixture(scope="module")
def short_trace(tmp_path_factory: pytest.TempPathFactory) -> str:
    """KTH-SP2's first 300 jobs: long enough for a prediction, quick to simulate."""
    lines = KTH.read_text().splitlines(keepends=True)
    header = [line for line in lines if line.startswith(";")]
    jobs = [line for line in lines if line.strip() and not line.startswith(";")][:300]
    path = tmp_path_factory.mktemp("fuzz-api") / "short.swf"
    path.write_text("".join(header + jobs))
    return str(path)


def entry_points(short: str) -> dict[str, tuple[Callable[..., Any], dict[str, Any]]]:
    """Each entry point and valid arguments for the ones it requires (paths relative to the
    test's own folder)."""
    simple = o2ksim.simulate(TINY)
    config = o2ksim.RunConfig.create(TINY)
    Path("sweep.toml").write_text(SWEEP)
    points: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
        "run_config": (o2ksim.run_config, {"config": config}),
        "predict": (o2ksim.predict, {"trace": short}),
        "validate": (o2ksim.validate, {"trace": TINY}),
        "read_swf": (o2ksim.read_swf, {"path": TINY}),
        "compare": (o2ksim.compare, {"results": [simple]}),
        "timeline": (o2ksim.timeline, {"result": simple}),
        "make_policy": (o2ksim.make_policy, {"name": "fcfs"}),
        "load_machine": (o2ksim.load_machine, {"name_or_path": "o2k"}),
        "load_scenario": (load_scenario, {"name_or_path": "explain-backfill"}),
        "parse_scenario": (parse_scenario, {"text": SCENARIO_TEXT}),
        "load_results": (load_results, {"out_dir": "no-such-results"}),
        "write_report": (write_report, {"results_dir": "no-such-results"}),
        "characterize": (characterize, {"trace": TINY, "fits": False}),
        "Characterization.save": (
            characterize(o2ksim.read_swf(TINY), fits=False).save, {"out_dir": "chars"}
        ),
        "Result.save": (simple.save, {"out_dir": "saved"}),
        "write_result_report": (write_result_report, {"result": simple, "out_dir": "page"}),
        "StoredRun.open": (StoredRun.open, {"folder": "no-such-run"}),
        "run_folder_data": (run_folder_data, {"folder": "no-such-run", "start": 0}),
        "run_sweep": (
            run_sweep, {"scenario": load_scenario("sweep.toml"), "out_dir": "sweep", "progress": False}
        ),
    }
    return points


def parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    return [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def call(fn: Callable[..., Any], kwargs: dict[str, Any]) -> O2KSimError | None:
    """Call quietly; the refusal raised, if any (anything but O2KSimError propagates)."""
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        warnings.simplefilter("ignore")
        try:
            fn(**kwargs)
        except O2KSimError as exc:
            return exc
    return None


def test_the_entry_points_cover_the_package_names(
    short_trace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every function of ``o2ksim.__all__`` but ``simulate`` (fuzzed in
    test_fuzz_commands.py) and ``write_swf`` (test_fuzz_hostile.py) is here."""
    monkeypatch.chdir(tmp_path)
    names = {n for n in o2ksim.__all__ if inspect.isfunction(getattr(o2ksim, n))}
    assert names - {"simulate", "write_swf"} <= set(entry_points(short_trace))


ENTRY_POINTS = (
    "run_config", "predict", "validate", "read_swf", "compare", "timeline", "make_policy",
    "load_machine", "load_scenario", "parse_scenario", "load_results", "write_report",
    "characterize", "Characterization.save", "Result.save", "write_result_report",
    "StoredRun.open", "run_folder_data", "run_sweep",
)  # fmt: skip


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_every_argument_takes_every_hostile_value_or_refuses_it_in_one_line(
    name: str, short_trace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a value taken as a path writes nothing in the tree
    fn, base = entry_points(short_trace)[name]
    broken = []
    for param in parameters(fn):
        for value in HOSTILE:
            try:
                refusal = call(fn, {**base, param.name: value})
            except Exception as exc:  # the property under test: nothing but O2KSimError
                broken.append(f"{name}({param.name}={value!r}): {type(exc).__name__}: {exc}")
                continue
            if refusal is not None and "\n" in str(refusal).strip():
                broken.append(f"{name}({param.name}={value!r}): more than one line: {refusal}")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize(
    "name",
    ["predict", "validate", "read_swf", "parse_scenario", "characterize", "load_scenario",
     "Result.save", "run_sweep"],
)
def test_a_flag_takes_only_true_or_false(
    name: str, short_trace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fn, base = entry_points(short_trace)[name]
    flags = {p.name: p.annotation for p in parameters(fn) if p.annotation in ("bool", bool, "bool | None")}
    assert flags, name
    for flag, annotation in flags.items():
        for value in NOT_FLAGS:
            if value is None and annotation == "bool | None":  # None: the default behaviour
                continue
            refusal = call(fn, {**base, flag: value})
            assert refusal is not None, f"{name}({flag}={value!r}) was accepted"
            assert flag in str(refusal), str(refusal)
