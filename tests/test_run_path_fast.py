"""The fast paths of a run outside the simulation against the implementations they
replace: the one-command parser against the full command-line parser."""

from __future__ import annotations


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
