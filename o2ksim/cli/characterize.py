"""``o2ksim characterize``: the thesis ch. 4 characterisation of a trace (tables and figures)."""

from __future__ import annotations

import argparse

from o2ksim.errors import O2KSimError
from o2ksim.validation import output_folder
from o2ksim.workloads.characterize import characterize
from o2ksim.workloads.swf import read_swf

HELP = "characterise a trace like thesis ch. 4: arrivals, periods, requests, runtimes, load"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="SWF trace (plain or .gz)")
    parser.add_argument(
        "--out", metavar="DIR", help="write every table as CSV and the figures as PNG here"
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
    if args.procs is not None and args.procs < 1:
        raise O2KSimError(f"--procs must be positive, got {args.procs}")
    if not args.out:
        return _run(args)
    with output_folder(args.out, "--out"):  # checked before the work; removed if it fails
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    trace = read_swf(args.trace, lenient=args.lenient)
    char = characterize(trace, procs=args.procs, fits=not args.no_fits)
    print(f"characterisation of {args.trace}")
    print(char.to_text())
    if args.out:
        written = char.save(args.out)
        if not args.no_figures:
            # matplotlib and seaborn are heavy: imported only when figures are drawn
            from o2ksim.report.workload_figures import write_figures

            written += write_figures(char, args.out)
        print(f"\n{len(written)} files written to {args.out}/")
    return 0
