"""The fast paths of a run outside the simulation against the implementations they
replace: the one-command parser against the full command-line parser."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st


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
        m.setattr(sys.modules["o2ksim.simulate"].Simulation, "run", fail)
        with pytest.raises(RuntimeError, match="boom"):
            simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    gc.freeze()
    try:
        simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")
        assert gc.get_freeze_count() > 0  # someone else's frozen objects: not unfrozen by the run
    finally:
        gc.unfreeze()
