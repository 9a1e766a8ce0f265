"""``o2ksim report``: the HTML report of a results directory."""

from __future__ import annotations

import argparse

from o2ksim.report.html import write_report

HELP = "write the HTML report (figures, tables, scenario, versions) of a results directory"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        metavar="RESULTS_DIR",
        help="directory written by `o2ksim scenario run` (or by `o2ksim predict`: its prediction page)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where to write report.html, figures/ and tables/ (default RESULTS_DIR/report)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    page = write_report(args.results, args.out)
    if not args.quiet:
        print(f"report: {page}")
    return 0
