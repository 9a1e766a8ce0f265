"""``o2ksim validate``: replay a trace and compare each job's simulated wait with its recorded wait."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from o2ksim.cli._policy_options import add_policy_options, refuse_foreign_options
from o2ksim.cli._run_notes import perfect_estimates_said, say_cancelled
from o2ksim.cli.run import parse_overrides, parse_warmup, warn_about_reading
from o2ksim.errors import O2KSimError
from o2ksim.outfiles import command_into_folder
from o2ksim.run.workload import load_workload
from o2ksim.table import column
from o2ksim.validation import check_interval_option, option_duration, shown
from o2ksim.workloads.transforms import read_window

HELP = "replay a trace under a policy and compare each job's simulated wait with its recorded one"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="SWF trace (plain or .gz) with recorded waits (field 3)")
    parser.add_argument(
        "--machine", metavar="NAME|PATH",
        help="machine file or name in hosts/ (e.g. kth-sp2); default: one host sized from the header's MaxProcs",
    )  # fmt: skip
    parser.add_argument(
        "--policy", default="fcfs-backfill", metavar="NAME",
        help="policy preset or kind to replay under (see `o2ksim policies`); default fcfs-backfill",
    )  # fmt: skip
    parser.add_argument(
        "--window", nargs=2, metavar=("START", "END"),
        help="compare only jobs submitted in [START, END): seconds, durations (7d) or dates (1997-01-01, "
        "read in the trace header's time zone)",
    )  # fmt: skip
    parser.add_argument(
        "--warmup", metavar="DAYS", default=None,
        help="simulated warm-up before the window: days (7) or a duration (12h); default 7 days with --window",
    )  # fmt: skip
    parser.add_argument(
        "--out", metavar="DIR",
        help="write validation.csv/.json, compared.csv, excluded.csv, utilisation.csv, outages.csv, the simulated "
        "run's jobs.csv/summary.json/run.json and the page validation.html here",
    )  # fmt: skip
    parser.add_argument(
        "--outage-min", metavar="DURATION", default="1h",
        help="shortest suspected outage or drain to report (default 1h): a period where the oldest "
        "waiting job fit the recorded free processors and no job started",
    )  # fmt: skip
    parser.add_argument(
        "--availability", metavar="FILE|inferred|inferred-idle",
        help="replay with processors down between times: an availability file (host,from,to,procs; "
        "docs/reference/machines.md), 'inferred' (the suspected outages below, each taking its "
        "down_at_least processors: the fewest the record allows) or 'inferred-idle' (each taking "
        "every processor recorded idle when it began: the most); drained at the start, back at "
        "the end; needs --machine",
    )
    parser.add_argument("--estimates", metavar="SCENARIO", help="runtime-estimate scenario (as `o2ksim run`)")
    parser.add_argument("--interval", metavar="DURATION", help="scheduling pass every DURATION (e.g. 5m)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE",
        help="override any policy parameter (TOML value), repeatable",
    )  # fmt: skip
    parser.add_argument("--lenient", action="store_true", help="skip malformed trace lines instead of stopping")
    parser.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="progress bar (default: when stderr is a terminal)",
    )  # fmt: skip
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    parser.set_defaults(func=run, policy_options=add_policy_options(parser))


def _availability_option(value: str | None, machine: str | None, inferred: tuple[str, ...]) -> str | None:
    """``--availability``: ``inferred`` or an existing file, with ``--machine``; else one line."""
    if value is None:
        return None
    if not machine:
        raise O2KSimError("--availability needs --machine (the hosts the periods take processors from)")
    if value not in inferred and not Path(value).is_file():
        raise O2KSimError(f"--availability {value}: no such file (give a file, 'inferred' or 'inferred-idle')")
    return value


def run(args: argparse.Namespace) -> int:
    """``o2ksim validate``: with ``--out`` the folder is claimed before any work (a second
    writer, or a folder holding another command's result, is refused at once) and held to
    the end; the tables, the replayed run's files, the figures and the page are committed
    together (``run.json`` last), so SIGINT/SIGTERM or a full disk leave the earlier
    validation or nothing (:mod:`o2ksim.outfiles`)."""
    args.saved = False
    return command_into_folder(
        args.out, "validation", "the results were", "an earlier validation's files there are",
        lambda: args.saved, lambda: _run(args),
    )  # fmt: skip


@contextmanager
def estimates_option() -> Iterator[None]:
    """The API's refusal of its ``estimates`` argument, naming the option typed."""
    try:
        yield
    except O2KSimError as exc:
        text = str(exc)
        if text.startswith(("estimates ", "estimates:")):
            raise O2KSimError("--" + text) from None
        raise


def _run(args: argparse.Namespace) -> int:
    # pandas, matplotlib and seaborn (a second and a half) load once the folder is claimed:
    # a second validate into it, or a folder holding another result, is refused at once
    from o2ksim.analysis.validate import INFERRED, validate
    from o2ksim.report.validation import write_validation_page

    interval = (
        check_interval_option(option_duration("--interval", args.interval, positive=True))
        if args.interval
        else None
    )
    trace = load_workload(Path(args.trace), lenient=args.lenient)
    warn_about_reading(trace, args)
    window, said = None, None
    if args.window:
        warmup = parse_warmup(args.warmup) if args.warmup is not None else 7 * 86400.0
        try:  # dates in the header's time zone, refused in those dates, as `o2ksim run`
            window, said = read_window(args.window, trace.header, warmup, column(trace.table, "submit"))
        except O2KSimError as exc:
            raise O2KSimError(f"--window {' '.join(args.window)}: {exc}") from None
    elif args.warmup is not None:
        raise O2KSimError("--warmup needs --window")
    params = parse_overrides(args.set)
    params.update(refuse_foreign_options(args, args.policy_options, params))
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    availability = _availability_option(args.availability, args.machine, INFERRED)
    named = (f"availability={shown(availability)}", f"--availability {availability}")
    with perfect_estimates_said(args.quiet, availability=named), estimates_option():  # as `run` says them
        v = validate(
            trace,
            args.machine,
            args.policy,
            policy_params=params,
            window=window,
            estimates=args.estimates,
            interval=interval,
            progress=progress and not args.quiet,
            outage_min=option_duration("--outage-min", args.outage_min),
            availability=availability,
        )
        if not len(v.compared):  # a refusal: one line, no warning before it
            raise O2KSimError(f"{args.trace}: {v.message()}")
    if window is not None and said is not None and said.unix_start is not None and not args.quiet:
        print(f"o2ksim: note: --window dates read in {said.read_in}: "  # the zone, never silently
              f"[{said.show(window.start)}, {said.show(window.end)})", file=sys.stderr)  # fmt: skip
    say_cancelled(trace, args)  # after the run: a refusal stays one line
    if len(v.excluded) and not args.quiet:
        print(f"o2ksim: note: {args.trace}: {v.message()}", file=sys.stderr)
    replaced = ""
    if args.out:
        staged = v.save(
            args.out, extra=lambda s: write_validation_page(v, args.out, path_of=s.path)
        )
        args.saved = True
        replaced = staged.replaced_text()
    if not args.quiet:
        print(f"{args.trace} under {v.config['policy']} on {v.config['machine']}")
        print(v.text())
        if args.out:
            page = Path(args.out) / "validation.html"
            print(f"results written to {args.out}/" + (f", {replaced}" if replaced else "")
                  + f"; page: {page}")  # fmt: skip
    return 0
