"""The fast paths of a run outside the simulation (work package 9k) against the
implementations they replace: numpy's percentile, the full command-line parser."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from o2ksim.metrics import percentile

finite = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.integers(-(10**6), 10**6).map(float),  # ties and whole waits, as a job table has
)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(finite, min_size=1, max_size=60),
    q=st.one_of(st.sampled_from([0.0, 50.0, 95.0, 99.0, 100.0]), st.floats(0.0, 100.0)),
)
def test_percentile_is_numpys_linear_percentile(values, q):
    got = percentile(np.array(values), q)
    expected = float(np.percentile(np.array(values), q))
    assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_percentile_with_nan_is_nan():
    assert math.isnan(percentile(np.array([1.0, math.nan, 3.0]), 95.0))
    assert math.isnan(float(np.percentile(np.array([1.0, math.nan, 3.0]), 95.0)))


def test_percentile_by_hand():
    # rank (5 - 1) * 0.95 = 3.8 between 40 and 50: 50 - 10 * 0.2 = 48
    assert percentile(np.array([30.0, 10.0, 50.0, 20.0, 40.0]), 95.0) == 48.0
    assert percentile(np.array([7.0]), 95.0) == 7.0


def _subparsers(parser):
    import argparse

    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


def test_one_command_parser_is_the_full_parsers_command():
    """``main`` builds only the named command's parser: it must read arguments and
    print help exactly as that command's parser in the full one does."""
    from o2ksim.cli import _command_module, build_parser

    full = _subparsers(build_parser())
    for name, sub in full.items():
        module = _command_module([name, "--help"])
        assert module == name.replace("-", "_")
        (alone,) = _subparsers(build_parser(module)).values()
        assert alone.format_help() == sub.format_help()
    assert _command_module(["--help"]) is None
    assert _command_module(["no-such-command"]) is None
    assert _command_module(["_private"]) is None
    assert _command_module([]) is None
    argv = ["run", "--trace", "t.swf", "--window", "0", "7d", "--set", "a=1", "--set", "b=x", "--no-sliding", "-q"]
    assert vars(build_parser("run").parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_run_through_main_with_one_command_parser(tmp_path, capsys):
    from o2ksim.cli import main

    assert main(["run", "--trace", "traces/kth-sp2-sample.swf", "-q", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "jobs.csv").exists()
    assert main(["run", "--bogus"]) == 2
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err



def test_installed_version_is_importlib_metadatas():
    from importlib.metadata import version

    from o2ksim._startup import installed_version

    for name in ("simpy", "numpy", "pandas", "SimPy", "hypothesis"):
        assert installed_version(name) == version(name)
    assert installed_version("no-such-distribution-o2ksim") is None


_RUN_CHILD = (
    "import sys\n"
    "from o2ksim.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "loaded = 'importlib.metadata' in sys.modules\n"
    "import importlib.metadata, simpy\n"
    "print(code, loaded, simpy.__version__ == importlib.metadata.version('simpy'))\n"
)


def test_a_run_never_imports_importlib_metadata(tmp_path):
    """SimPy's import and run.json's versions go without importlib.metadata (o2ksim._startup),
    SimPy's version is still the installed one, and the real module works afterwards."""
    import json
    import subprocess
    import sys
    from importlib.metadata import version
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    args = ["run", "--trace", "traces/kth-sp2-sample.swf", "-q", "--out", str(tmp_path)]
    proc = subprocess.run([sys.executable, "-c", _RUN_CHILD, *args], capture_output=True, text=True, check=True, cwd=repo)
    assert proc.stdout.split() == ["0", "False", "True"]
    versions = json.loads((tmp_path / "run.json").read_text())["versions"]
    assert versions["simpy"] == version("simpy") and versions["pandas"] == version("pandas")


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(1, 10**9), st.integers(0, 10**9), st.integers(-1, 4096), st.integers(-1, 4096),
            st.integers(-1, 10**7), st.integers(-1, 10**7), st.integers(-1, 10**8), st.integers(-1, 10**8),
            st.integers(-1, 10**6), st.integers(-1, 500),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_specs_filled_slot_by_slot_equal_constructed_specs(rows):
    """specs_from_frame's direct slot filling gives the objects JobSpec(...) gives."""
    import o2ksim.workloads.convert as convert
    from o2ksim.jobs import JobSpec
    from o2ksim.table import ColumnTable

    names = ("job_id", "submit", "req_procs", "alloc_procs", "run_time", "req_time", "req_mem", "used_mem", "user", "queue")
    table = ColumnTable({name: np.array(values, dtype=np.int64) for name, values in zip(names, zip(*rows, strict=True), strict=True)})
    fast = convert.specs_from_frame(table)
    constructed = list(
        map(
            JobSpec,
            *(
                [getattr(s, f) for s in fast]
                for f in ("job_id", "submit", "procs", "mem", "req_time", "run_time", "used_mem", "user", "queue")
            ),
        )
    )
    setters, convert._slot_setters = convert._slot_setters, lambda: None
    try:
        slow = convert.specs_from_frame(table)
    finally:
        convert._slot_setters = setters
    assert fast == slow == constructed
    assert [hash(s) for s in fast] == [hash(s) for s in slow]
    assert [tuple(map(type, (s.job_id, s.submit, s.procs, s.mem, s.req_time))) for s in fast] == [
        tuple(map(type, (s.job_id, s.submit, s.procs, s.mem, s.req_time))) for s in slow
    ]
    assert all(type(s) is JobSpec for s in fast)


def test_a_run_leaves_the_garbage_collector_as_it_found_it(monkeypatch):
    """simulate() freezes what is alive for the simulation (simulate.freeze_alive) and
    unfreezes it after, on success and on error; objects someone else froze stay frozen."""
    import gc
    import sys

    import pytest

    from o2ksim import simulate

    assert gc.get_freeze_count() == 0
    simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")
    assert gc.get_freeze_count() == 0 and gc.isenabled()

    def fail(self):
        assert gc.get_freeze_count() > 0  # the simulation runs with the set-up frozen
        raise RuntimeError("boom")

    with monkeypatch.context() as m:
        m.setattr(sys.modules["o2ksim.run.api"].Simulation, "run", fail)
        with pytest.raises(RuntimeError, match="boom"):
            simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    gc.freeze()
    try:
        simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")
        assert gc.get_freeze_count() > 0  # someone else's frozen objects: not unfrozen by the run
    finally:
        gc.unfreeze()


_FAILING_SIMPY_CHILD = (
    "import importlib.abc, sys\n"
    "class Finder(importlib.abc.MetaPathFinder):\n"  # a SimPy whose __init__ needs more than version()
    "    def find_spec(self, name, path, target=None):\n"
    "        if name == 'simpy' and not getattr(self, 'done', False):\n"
    "            self.done = True\n"
    "            from importlib.metadata import PackageNotFoundError  # the stand-in has no such name\n"
    "        return None\n"
    "sys.meta_path.insert(0, Finder())\n"
    "import o2ksim.engine.core, simpy, importlib.metadata\n"
    "print(simpy.__version__ == importlib.metadata.version('simpy'), 'simpy' in sys.modules)\n"
)


def test_simpy_imports_as_usual_when_the_stand_in_is_not_enough():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _FAILING_SIMPY_CHILD], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["True", "True"]
