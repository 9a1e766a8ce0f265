"""Command-line interface: ``o2ksim COMMAND ...``.

Each sub-command lives in its own module of this package and exposes two
names::

    HELP: str                                   # one line for ``o2ksim --help``
    def register(parser: argparse.ArgumentParser) -> None: ...
        # adds the command's arguments and sets ``parser.set_defaults(func=...)``
        # where ``func(args) -> int`` returns the exit code

Modules are discovered automatically, so a new command never edits this file.
User mistakes raise :class:`o2ksim.errors.O2KSimError`; they are printed as one
line and give exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from typing import NoReturn

from o2ksim import __version__
from o2ksim.errors import O2KSimError
from o2ksim.validation import join_negative_values

VALUE_OPTIONS = (
    "--interval", "--span", "--warmup", "--grace", "--seed", "--workers", "-j",
    "--reservations", "--limit", "--jobs", "--procs",
)  # fmt: skip
"""Options whose value may start with ``-``: ``--interval -5m`` reaches the
option's parser (which refuses it with the reason) instead of argparse's
"expected one argument"."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"o2ksim: error: {self.prog.removeprefix('o2ksim ')}: {message} "
                     f"(see {self.prog} --help)\n")  # fmt: skip


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full argument parser with every discovered sub-command.

    ``only``: the module name of one sub-command: the parser then holds that
    command alone (what :func:`main` uses to run it, without importing and
    registering the eleven others: about 0.02 s of every run's start-up).
    """
    parser = _Parser(
        prog="o2ksim",
        description="Simulate parallel-job scheduling policies (Chiang's O2K study and beyond).",
    )
    parser.add_argument("--version", action="version", version=f"o2ksim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or (only is not None and info.name != only):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        name = getattr(module, "COMMAND", info.name.replace("_", "-"))
        help_text = getattr(module, "HELP", None)
        cmd_parser = sub.add_parser(name, help=help_text, description=help_text)
        module.register(cmd_parser)
    return parser


@functools.cache
def _shared_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser :func:`main` uses, built once per process (building it takes
    longer than parsing; tests and scripts call ``main`` many times)."""
    return build_parser(only)


def _command_module(argv: Sequence[str]) -> str | None:
    """The module of the sub-command ``argv`` starts with, when it names one
    (``None`` for an option such as ``--help`` or an unknown word: the full
    parser answers those, listing the commands)."""
    if not argv or argv[0].startswith("-") or "_" in argv[0]:
        return None
    name = argv[0].replace("-", "_")
    if name.startswith("_") or name not in {info.name for info in pkgutil.iter_modules(__path__)}:
        return None
    module = importlib.import_module(f"{__name__}.{name}")
    return name if getattr(module, "COMMAND", argv[0]) == argv[0] else None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``o2ksim`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _shared_parser(_command_module(argv))
    try:
        args = parser.parse_args(join_negative_values(argv, VALUE_OPTIONS))
    except SystemExit as exc:  # --help, --version, a usage error: return the code, don't exit
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except O2KSimError as exc:
        print(f"o2ksim: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("o2ksim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
