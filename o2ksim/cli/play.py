"""``o2ksim play``: write the step-through player of a schedule (one HTML file)."""

from __future__ import annotations

import argparse
from pathlib import Path

from o2ksim.cli.run import parse_overrides
from o2ksim.errors import O2KSimError
from o2ksim.files import write_atomically
from o2ksim.report.player import page_path, render_player, write_player
from o2ksim.report.player_data import MAX_JOBS
from o2ksim.report.player_run import MAX_EVENTS, is_run_folder, run_folder_data

HELP = "write a step-through player of a scenario's schedule: one self-contained HTML page"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source", metavar="SOURCE",
        help="a shipped scenario (explain-backfill, explain-immediate, explain-eqspatial, ...) "
        "or a scenario file (its first run is played event by event), or an `o2ksim run --out "
        "DIR` folder with --start/--end (the run is simulated again and that window played)",
    )  # fmt: skip
    parser.add_argument(
        "-o", "--out", metavar="FILE.html", default="player.html",
        help="the page to write (default player.html); it needs no server and no network",
    )  # fmt: skip
    parser.add_argument(
        "--start", metavar="TIME",
        help="with a run folder: start of the window to play, since the trace start (14d, "
        "14.5d, seconds) or an ISO date (1996-10-07, needs the trace's UnixStartTime; read in "
        "its header's time zone, as run --window)",
    )  # fmt: skip
    parser.add_argument(
        "--end", metavar="TIME", help="with a run folder: end of the window (default: a day later)"
    )
    parser.add_argument(
        "--max-events", type=int, default=None, metavar="N",
        help=f"with a run folder: refuse windows with more log lines than this (default {MAX_EVENTS})",
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
        "--max-jobs", type=int, default=None, metavar="N",
        help=f"with a scenario: refuse workloads with more jobs than this (default {MAX_JOBS})",
    )  # fmt: skip
    parser.add_argument("--title", help="page title (default: policy, overrides and workload)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # a missing folder, a file in the way or the input itself: refused before the work
    page_path(args.out, "-o", inputs=(args.source,))
    if is_run_folder(args.source) or Path(args.source).is_dir():  # a folder: a stored run
        extra = [f for f, v in (("--policy", args.policy), ("--set", args.set),
                                ("--versus", args.versus)) if v]  # fmt: skip
        if extra:
            raise O2KSimError(
                f"{', '.join(extra)}: a run folder is played as it was run; simulate the "
                "other setting with `o2ksim run ... --out OTHER` and play that folder"
            )
        max_events = _limit(args, "max_events", "max_jobs")
        if not args.start:
            raise O2KSimError(
                f"{args.source} is a run folder: give the window to play with --start "
                "(e.g. --start 14d --end 15d, or an ISO date)"
            )
        data = run_folder_data(args.source, args.start, args.end, max_events=max_events,
                               title=args.title)  # fmt: skip
        write_atomically(args.out, render_player(data).encode("utf-8"))
        print(f"player: {args.out} ({len(data['log'])} events; open it in a browser; "
              "Space plays, arrows step)")  # fmt: skip
        return 0
    if args.start or args.end:
        raise O2KSimError(
            "--start/--end choose the window of a run folder (`o2ksim run --out DIR`); "
            f"{args.source} is a scenario, played whole"
        )
    max_jobs = _limit(args, "max_jobs", "max_events")
    path = write_player(
        args.out, args.source, policy=args.policy, params=parse_overrides(args.set),
        max_jobs=max_jobs, title=args.title,
        versus=parse_overrides(args.versus, "--versus") if args.versus else None,
    )  # fmt: skip
    print(f"player: {path} (open it in a browser; Space plays, arrows step)")
    return 0


LIMITS = {
    "max_events": (MAX_EVENTS, "a run folder's window (its log lines)"),
    "max_jobs": (MAX_JOBS, "a scenario's workload"),
}
"""Each size limit of ``play``: its default and what it bounds."""


def _limit(args: argparse.Namespace, acting: str, other: str) -> int:
    """The limit that acts on this source (``acting``), its default if not given; the
    ``other`` one, which would change nothing here, is refused."""
    flag = "--" + acting.replace("_", "-")
    if getattr(args, other) is not None:
        raise O2KSimError(
            f"--{other.replace('_', '-')}: bounds {LIMITS[other][1]}; {LIMITS[acting][1]} is "
            f"bounded by {flag}"
        )
    value = getattr(args, acting)
    value = LIMITS[acting][0] if value is None else value
    if not 1 <= value < 2**63:
        raise O2KSimError(f"{flag} {value}: must be at least 1")
    return int(value)
