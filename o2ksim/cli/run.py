"""``o2ksim run``: simulate one policy over one workload and write the results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from o2ksim.errors import O2KSimError
from o2ksim.workloads.transforms import ESTIMATES_HELP, Window, parse_duration, parse_time

HELP = "simulate one policy over a trace or the built-in workload"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trace", metavar="PATH", help="SWF trace (plain or .gz); default: the built-in workload"
    )
    parser.add_argument(
        "--machine",
        metavar="NAME|PATH",
        help="machine file or name in hosts/ (e.g. o2k); default: one host sized from the trace header's MaxProcs",
    )
    parser.add_argument(
        "--policy",
        default="fcfs-backfill",
        metavar="NAME",
        help="policy preset or kind (see `o2ksim policies`); default fcfs-backfill",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="write jobs.csv, summary.json and run.json here"
    )
    parser.add_argument(
        "--parquet", action="store_true", help="write jobs.parquet instead of jobs.csv"
    )
    parser.add_argument(
        "--window",
        nargs=2,
        metavar=("START", "END"),
        help="analyse only jobs submitted in [START, END): seconds, durations (7d) or dates (2000-01-01, needs UnixStartTime)",
    )
    parser.add_argument(
        "--warmup",
        metavar="DAYS",
        default=None,
        help="simulated warm-up before the window: days (7) or a duration (12h); default 7 days with --window",
    )
    parser.add_argument("--estimates", metavar="SCENARIO", help=ESTIMATES_HELP)
    parser.add_argument(
        "--interval",
        metavar="DURATION",
        help="scheduling pass every DURATION (e.g. 5m) instead of at every event",
    )
    parser.add_argument(
        "--kill-overrun",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="kill jobs at requested runtime + grace (default: machine file, else off)",
    )
    parser.add_argument(
        "--grace",
        metavar="DURATION",
        help="grace after the requested runtime before a kill (default: machine file)",
    )
    parser.add_argument(
        "--reservations", type=int, metavar="N", help="override the policy's number of reservations"
    )
    parser.add_argument(
        "--reservation-kind",
        choices=("dynamic", "fixed"),
        help="dynamic-job (current top N) or fixed-job (kept until started) reservations",
    )
    parser.add_argument(
        "--sliding",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="reservations move earlier when jobs end early (default) or not (--no-sliding)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override any policy parameter (TOML value), repeatable",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the run's random generator (default 0)"
    )
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="skip malformed trace lines (and report how many) instead of stopping",
    )
    parser.add_argument(
        "--strict-order",
        action="store_true",
        help="treat submit times that go backwards as an error",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: when stderr is a terminal)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    parser.set_defaults(func=run)


def parse_overrides(items: list[str]) -> dict[str, object]:
    """``KEY=VALUE`` pairs whose values are TOML literals (bare words become strings)."""
    import tomllib

    out: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise O2KSimError(f"--set expects KEY=VALUE, got '{item}'")
        try:
            out[key.strip()] = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            out[key.strip()] = value
    return out


def run(args: argparse.Namespace) -> int:
    from o2ksim.simulate import default_trace_path, load_workload, simulate

    trace_path = Path(args.trace) if args.trace else default_trace_path()
    trace = load_workload(trace_path, lenient=args.lenient, strict_order=args.strict_order)
    report = getattr(trace, "report", None)
    if report is not None and not args.quiet:
        if report.reordered:
            print(
                f"o2ksim: warning: {trace_path}: {report.reordered} job line(s) have submit times "
                "earlier than a previous line; jobs were sorted by submit time (use --strict-order to refuse)",
                file=sys.stderr,
            )
        if sum(report.skipped.values()):
            print(f"o2ksim: warning: {report.summary()}", file=sys.stderr)
    if len(trace) == 0:
        raise O2KSimError(f"{trace_path}: the trace has no jobs")
    window = None
    if args.window:
        unix = getattr(trace.header, "unix_start_time", None)
        start, end = (parse_time(t, unix) for t in args.window)
        warmup = parse_warmup(args.warmup) if args.warmup is not None else 7 * 86400.0
        window = Window(start, end, warmup)
    elif args.warmup is not None:
        raise O2KSimError("--warmup needs --window")
    params = parse_overrides(args.set)
    if args.reservations is not None:
        params["reservations"] = args.reservations
    if args.reservation_kind is not None:
        params["reservation_kind"] = args.reservation_kind
    if args.sliding is not None:
        params["sliding"] = args.sliding
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    result = simulate(
        trace,
        machine=args.machine,
        policy=args.policy,
        policy_params=params,
        window=window,
        estimates=args.estimates,
        interval=parse_duration(args.interval) if args.interval else None,
        kill_overrun=args.kill_overrun,
        overrun_grace=parse_duration(args.grace) if args.grace else None,
        seed=args.seed,
        progress=progress and not args.quiet,
    )
    result.config["workload"] = str(trace_path)
    if args.out:
        result.save(args.out, parquet=args.parquet)
    if not args.quiet:
        print(format_summary(result))
        if args.out:
            print(f"results written to {args.out}/")
    return 0


def parse_warmup(text: str) -> float:
    """Warm-up: a bare number is days; otherwise a duration."""
    try:
        return float(text) * 86400.0
    except ValueError:
        return parse_duration(text)


def format_summary(result) -> str:
    s = result.summary
    h = 3600.0
    lines = [
        f"policy {result.policy['name']} on {result.machine.describe()}",
        f"jobs {s['jobs']}: completed {s['completed']}, killed {s['killed']}, rejected {s['rejected']}, unfinished {s['unfinished']}",
        f"wait (h): mean {s['mean_wait'] / h:.2f}  95th {s['p95_wait'] / h:.2f}  max {s['max_wait'] / h:.2f}",
        f"slowdown: mean {s['mean_slowdown']:.2f}  bounded mean {s['mean_bounded_slowdown']:.2f}  bounded max {s['max_bounded_slowdown']:.1f}",
        f"utilisation {s.get('utilisation', float('nan')):.3f}   simulated in {s['sim_seconds']:.2f} s ({result.stats.passes} passes)",
    ]
    return "\n".join(lines)
