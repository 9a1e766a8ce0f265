"""``o2ksim play``: write the step-through player of a small scenario (one HTML file)."""

from __future__ import annotations

import argparse

from o2ksim.cli.run import parse_overrides
from o2ksim.report.player import write_player

HELP = "write a step-through player of a scenario's schedule: one self-contained HTML page"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source", metavar="SOURCE",
        help="a shipped scenario (explain-backfill, explain-immediate, explain-eqspatial, ...) "
        "or a scenario file; its first run is played event by event",
    )  # fmt: skip
    parser.add_argument(
        "-o", "--out", metavar="FILE.html", default="player.html",
        help="the page to write (default player.html); it needs no server and no network",
    )  # fmt: skip
    parser.add_argument(
        "--policy", metavar="NAME", help="use this policy instead of the scenario's first"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE",
        help="override a policy parameter (TOML value), repeatable, e.g. reservations=2",
    )  # fmt: skip
    parser.add_argument(
        "--versus", action="append", default=[], metavar="KEY=VALUE",
        help="play a second run beside the first, with these overrides on top, stepped "
        "together, e.g. --versus reservations=2 (T§3.2.1 Fig. 1b vs 1c); "
        "--versus policy=NAME plays another policy",
    )  # fmt: skip
    parser.add_argument(
        "--max-jobs", type=int, default=5000, metavar="N",
        help="refuse workloads with more jobs than this (default 5000)",
    )  # fmt: skip
    parser.add_argument("--title", help="page title (default: policy, overrides and workload)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = write_player(
        args.out, args.source, policy=args.policy, params=parse_overrides(args.set),
        max_jobs=args.max_jobs, title=args.title,
        versus=parse_overrides(args.versus) if args.versus else None,
    )  # fmt: skip
    print(f"player: {path} (open it in a browser; Space plays, arrows step)")
    return 0
