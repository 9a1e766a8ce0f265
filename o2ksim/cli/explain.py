"""``o2ksim explain``: run a tiny scenario and print every scheduling decision with its reason."""

from __future__ import annotations

import argparse

HELP = "print every scheduling decision of a tiny scenario with its reason (teaching view)"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario", nargs="?", default="explain-backfill", metavar="FILE|NAME",
        help="scenario file or shipped scenario (default: explain-backfill, T§3.2.1 Figure 1); "
        "its first run is explained",
    )  # fmt: skip
    parser.add_argument(
        "--policy", metavar="NAME", help="use this policy instead of the scenario's first"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a policy parameter (TOML value), repeatable, e.g. reservations=2",
    )
    parser.add_argument(
        "--no-queue", action="store_true", help="leave out the 'waiting' line after each pass"
    )
    parser.add_argument(
        "--all-reservations",
        action="store_true",
        help="print every recomputed reservation, not only new or moved ones",
    )
    parser.add_argument("--gantt", metavar="PNG", help="also draw the schedule as a Gantt chart")
    parser.add_argument(
        "--max-jobs",
        type=int,
        default=200,
        metavar="N",
        help="refuse workloads with more jobs than this (default 200)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from o2ksim.cli.run import parse_overrides
    from o2ksim.explain import explain

    result, log = explain(
        args.scenario,
        policy=args.policy,
        params=parse_overrides(args.set),
        queue=not args.no_queue,
        all_reservations=args.all_reservations,
        max_jobs=args.max_jobs,
    )
    print(f"# {result.policy['name']} on {result.machine.describe()}; {result.config['workload']}")
    print(log.text())
    s = result.summary
    print(
        f"# mean wait {s['mean_wait'] / 60:.1f} min, max wait {s['max_wait'] / 60:.1f} min, "
        f"utilisation {s.get('utilisation', float('nan')):.2f}"
    )
    if args.gantt:
        from o2ksim.report.gantt import write_gantt

        write_gantt(
            result.segments,
            {h.name: h.procs for h in result.machine.hosts},
            args.gantt,
            title=f"{result.policy['name']}: {result.config['workload']}",
        )
        print(f"# Gantt chart: {args.gantt}")
    return 0
