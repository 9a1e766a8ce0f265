"""Command-line interface: ``o2ksim COMMAND ...``.

Each sub-command lives in its own module of this package and exposes::

    def register(parser: argparse.ArgumentParser) -> None: ...
        # adds the command's arguments and sets ``parser.set_defaults(func=...)``
        # where ``func(args) -> int`` returns the exit code

:data:`COMMANDS` names each command's module and its one-line help: the
command line imports the chosen command's module alone (``o2ksim --help``
lists the commands without importing any), so a command module may import
what it needs at its top.  A new command is its module and one line in
:data:`COMMANDS`.  User mistakes raise :class:`o2ksim.errors.O2KSimError`;
they are printed as one line and give exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

from o2ksim import __version__
from o2ksim.errors import (
    O2KSimError,
    PerfectEstimatesWarning,
    RejectedJobsWarning,
    UnusedAvailabilityWarning,
    UnusedSeedWarning,
)
from o2ksim.outfiles import interrupts_end
from o2ksim.validation import join_negative_values

VALUE_OPTIONS = (
    "--interval", "--span", "--warmup", "--grace", "--seed", "--workers", "-j",
    "--reservations", "--limit", "--jobs", "--procs", "--outage-min", "--load", "--start",
    "--size-segments", "--threshold", "--trim", "--whole-queue-sample", "--max-events",
    "--max-jobs",
)  # fmt: skip
"""Options whose value may start with ``-``: ``--interval -5m`` reaches the
option's parser (which refuses it with the reason) instead of argparse's
"expected one argument"."""


def one_line(message: str) -> str:
    """An error message on one line: a value the user typed with a line break in it
    (``--interval $'a\\nb'``) is shown with ``\\n``, as Python would write it."""
    return message.replace("\r", "\\r").replace("\n", "\\n")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other error."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("o2ksim").strip()  # "" for o2ksim itself: no prefix twice
        self.exit(2, f"o2ksim: error: {command + ': ' if command else ''}{one_line(message)} "
                     f"(see {self.prog} --help)\n")  # fmt: skip


COMMANDS: dict[str, tuple[str, str]] = {
    "characterize": ("characterize", "characterise a trace like thesis ch. 4: arrivals, periods, requests, runtimes, load"),
    "explain": ("explain", "print every scheduling decision of a tiny scenario with its reason (teaching view)"),
    "fit": ("fit", "fit the cirne-berman or downey model to an SWF trace and write a parameter file"),
    "gantt": ("gantt", "draw a Gantt chart (processors per host over time) of a run, as PNG"),
    "generate": ("generate", "generate a synthetic workload (o2k, cirne-berman, downey) as an SWF file"),
    "machines": ("machines", "list machine files (hosts/*.toml) or show one"),
    "play": ("play", "write a step-through player of a scenario's schedule: one self-contained HTML page"),
    "policies": ("policies", "list policy presets and kinds with their parameters"),
    "predict": ("predict", "evaluate Downey's queue-time predictors A, B and combined (IPPS 1997) on a trace"),
    "report": ("report", "write the HTML report (figures, tables, scenario, versions) of a results directory"),
    "run": ("run", "simulate one policy over a trace or a generated workload (default: a synthetic O2K month)"),
    "scenario": ("scenario", "run a scenario file (an experiment or a sweep), list, show or check scenarios"),
    "trace": ("trace", "inspect, check or convert an SWF workload trace (plain or .gz)"),
    "validate": ("validate", "replay a trace under a policy and compare each job's simulated wait with its recorded one"),
}  # fmt: skip
"""Command name -> (module in this package, one-line help for ``o2ksim --help``)."""


def build_parser(only: str | None = None, *, arguments: bool = True) -> argparse.ArgumentParser:
    """The argument parser: every command of :data:`COMMANDS`, or the one module ``only``.

    ``arguments=False`` lists the commands without importing their modules
    (what ``o2ksim --help`` prints); otherwise each command's module is
    imported and registers its arguments.
    """
    parser = _Parser(
        prog="o2ksim",
        description="Simulate parallel-job scheduling policies (Chiang's O2K study and beyond).",
    )
    parser.add_argument("--version", action="version", version=f"o2ksim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        if only is not None and module_name != only:
            continue
        cmd_parser = sub.add_parser(name, help=help_text, description=help_text)
        if arguments:
            # the one lazy mechanism of the command line: only the chosen command's module
            module = importlib.import_module(f"{__name__}.{module_name}")
            module.register(cmd_parser)
    return parser


@functools.cache
def _shared_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser :func:`main` uses, built once per process (building it takes
    longer than parsing; tests and scripts call ``main`` many times).  Without
    a command it only lists the commands."""
    return build_parser(only, arguments=only is not None)


def _command_module(argv: Sequence[str]) -> str | None:
    """The module of the sub-command ``argv`` starts with, when it names one
    (``None`` for an option such as ``--help`` or an unknown word: the listing
    parser answers those)."""
    if not argv or argv[0] not in COMMANDS:
        return None
    return COMMANDS[argv[0]][0]


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
    # the API's PerfectEstimatesWarning and UnusedSeedWarning: `run` and `scenario run` print
    # them once, in one line
    warnings.filterwarnings("ignore", category=PerfectEstimatesWarning)
    warnings.filterwarnings("ignore", category=UnusedSeedWarning)
    warnings.filterwarnings("ignore", category=RejectedJobsWarning)  # run prints its own line
    warnings.filterwarnings("ignore", category=UnusedAvailabilityWarning)
    try:
        # SIGTERM as SIGINT: the command's cleanups run (temporary files, staged folders) and
        # it ends in one line, exit 128 + signal; a command that writes says what it kept
        with interrupts_end(lambda signalled: f"interrupted by {signalled}"):
            return int(args.func(args) or 0)
    except O2KSimError as exc:
        print(f"o2ksim: error: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("o2ksim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
