"""``o2ksim explain``: run a tiny scenario and print every scheduling decision with its reason."""

from __future__ import annotations

import argparse
from typing import Any

from o2ksim.cli.run import parse_overrides
from o2ksim.errors import O2KSimError
from o2ksim.experiments.scenario import load_scenario
from o2ksim.explain import explain, rejected_lines, run_header, run_title
from o2ksim.files import atomic_path, figure_format, parent_folder
from o2ksim.report.gantt import EmptyWindow, GanttRecorder, gantt_compare

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
    parser.add_argument(
        "--gantt", metavar="PNG",
        help="also draw the schedule as a teaching Gantt chart (arrivals, reservations, "
        "requested runtimes, backfilled jobs) into this file, in the format its extension names "
        "(.png, .svg or .pdf)",
    )  # fmt: skip
    parser.add_argument(
        "--versus", action="append", default=[], metavar="KEY=VALUE",
        help="with --gantt: draw a second run beside the first with these overrides on top, "
        "e.g. --versus reservations=2 (T§3.2.1 Fig. 1b vs 1c)",
    )  # fmt: skip
    parser.add_argument(
        "--max-jobs",
        type=int,
        default=200,
        metavar="N",
        help="refuse workloads with more jobs than this (default 200)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    overrides = parse_overrides(args.set)
    if not 1 <= args.max_jobs < 2**63:  # 0 or -1 made every workload "too large", saying -1
        raise O2KSimError(f"--max-jobs {args.max_jobs}: must be at least 1")
    if args.versus and not args.gantt:
        raise O2KSimError("--versus draws a second Gantt chart: give --gantt PNG too")
    if args.gantt:  # before the run: a missing or unwritable folder, the scenario itself,
        # a stored result's file, an extension that names no figure format (issue-27, D5)
        parent_folder(args.gantt, "--gantt", inputs=(args.scenario,), figure=True)
    recorders = []
    if args.gantt:
        recorders.append(GanttRecorder())
    result, log = explain(
        args.scenario,
        policy=args.policy,
        params=overrides,
        queue=not args.no_queue,
        all_reservations=args.all_reservations,
        max_jobs=args.max_jobs,
        observers=tuple(recorders),
    )
    print(f"# {run_header(result, overrides)}")
    print(log.text())
    s = result.summary
    print(
        f"# mean wait {s['mean_wait'] / 60:.1f} min, max wait {s['max_wait'] / 60:.1f} min, "
        f"utilisation {s.get('utilisation', float('nan')):.2f}"
    )
    if args.all_reservations and not any(e.event == "reserved" for e in log.entries):
        print(  # the option asks for every reservation's line: say there was none to print
            f"# --all-reservations: this run made no reservation ({result.policy['name']}), "
            "so there was nothing more to print"
        )
    rejected = rejected_lines(result)
    if rejected:
        print(f"# {len(rejected)} job(s) rejected:")
        for line in rejected:
            print(f"#   {line}")
    if args.gantt:
        hosts = {h.name: h.procs for h in result.machine.hosts}
        shown = {**overrides, **parse_overrides(args.versus, "--versus")}  # every setting that differs
        sc = load_scenario(args.scenario)

        def title(res: Any) -> str:
            """The run's title naming the scenario, not "6 inline job(s)"."""
            text, workload = run_title(res, shown), str(res.config.get("workload", ""))
            if "inline job" in workload:
                text = text.replace(workload, sc.name)
            return text

        suptitle = sc.description or ""
        columns = [(result.segments, title(result), recorders[0].teaching)]
        if args.versus:
            other_params = {**overrides, **parse_overrides(args.versus, "--versus")}
            rec = GanttRecorder()
            other, _ = explain(
                args.scenario, policy=args.policy, params=other_params, max_jobs=args.max_jobs,
                observers=(rec,),
            )  # fmt: skip
            columns.append((other.segments, title(other), rec.teaching))
        try:
            fig = gantt_compare(columns, hosts, suptitle=suptitle)
        except EmptyWindow as exc:
            print(f"o2ksim: warning: {exc}; no Gantt chart written")
            return 0
        with atomic_path(args.gantt) as tmp:  # whole or not at all (a full disk)
            fig.savefig(tmp, dpi=120, format=figure_format(args.gantt, "--gantt"))
        print(f"# Gantt chart: {args.gantt}")
    return 0
