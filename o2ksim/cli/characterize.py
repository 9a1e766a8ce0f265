"""``o2ksim characterize``: the thesis ch. 4 characterisation of a trace (tables and figures)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from o2ksim.errors import O2KSimError
from o2ksim.outfiles import command_into_folder
from o2ksim.validation import MAX_PROCS
from o2ksim.workloads.swf import read_swf

HELP = "characterise a trace like thesis ch. 4: arrivals, periods, requests, runtimes, load"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="SWF trace (plain or .gz)")
    parser.add_argument(
        "--out", metavar="DIR",
        help="write every table as CSV and the figures as PNG here, replacing every file of an "
        "earlier characterisation in DIR; one command at a time per DIR; written whole or not "
        "at all (interrupts included)",
    )
    parser.add_argument(
        "--procs",
        type=int,
        metavar="N",
        help="machine size for the load (default: header MaxProcs)",
    )
    parser.add_argument(
        "--no-fits", action="store_true", help="skip the interarrival distribution fits (faster)"
    )
    parser.add_argument(
        "--no-figures", action="store_true", help="with --out: write the tables only"
    )
    parser.add_argument(
        "--lenient", action="store_true", help="skip malformed trace lines instead of stopping"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``o2ksim characterize``: with ``--out`` the folder is claimed for the whole command (a
    second one into it is refused at once), the tables and figures are staged and committed
    together, replacing every file of an earlier characterisation there
    (:mod:`o2ksim.outfiles`); a failure or SIGINT/SIGTERM leaves nothing new."""
    if args.procs is not None and not 1 <= args.procs <= MAX_PROCS:
        raise O2KSimError(f"--procs {args.procs}: must be from 1 to {MAX_PROCS}")
    if args.out == "":  # it read as no --out: the tables printed, nothing written
        raise O2KSimError("--out: an empty path (leave --out out to print the tables only)")
    if args.no_figures and not args.out:  # without --out nothing is drawn anyway
        raise O2KSimError("--no-figures: acts only with --out (without it nothing is drawn)")
    args.saved = False
    return command_into_folder(
        args.out, "characterisation", "the characterisation was",
        "an earlier characterisation's files there are", lambda: args.saved, lambda: _run(args),
    )  # fmt: skip


def _run(args: argparse.Namespace) -> int:
    # pandas and scipy load once the folder is claimed: a second characterize into it, or a
    # folder holding another result, is refused at once
    from o2ksim.workloads.characterize import characterize

    trace = read_swf(args.trace, lenient=args.lenient)
    char = characterize(trace, procs=args.procs, fits=not args.no_fits)
    print(f"characterisation of {args.trace}")
    print(char.to_text())
    if args.out:
        draw: Callable[[Callable[[str], Path]], object] | None = None
        if not args.no_figures:
            # matplotlib and seaborn are heavy: imported only when figures are drawn
            from o2ksim.report.workload_figures import write_figures

            def draw(path_of: Callable[[str], Path]) -> object:
                return write_figures(char, args.out, path_of=path_of)

        staged = char.save(args.out, figures=draw, option="--out")
        args.saved = True
        replaced = staged.replaced_text()
        print(f"\n{len(staged.written)} files written to {args.out}/" + (f", {replaced}" if replaced else ""))
    return 0
