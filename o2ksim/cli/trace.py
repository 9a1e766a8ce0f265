"""``o2ksim trace``: inspect, validate and convert SWF workload traces.

Three actions::

    o2ksim trace info FILE [--lenient] [--machine M]    # header, job count, span, fields present
    o2ksim trace check FILE [--lenient] [--strict-order] [--machine M]  # validate; exit 0 ok, 2 on the first error
    o2ksim trace convert IN OUT [--limit N] [--lenient]   # rewrite (to/from .gz, first N jobs)

Malformed input raises :class:`o2ksim.errors.InputError`, which the CLI main
prints as one ``o2ksim: error: FILE:LINE: ...`` line with exit code 2.
Warnings (jobs reordered by submit time, lines skipped in lenient mode, an
empty trace) go to stderr as ``o2ksim: warning: ...``.

``info`` and ``check`` also count the jobs that a run would reject on arrival
(on the machine ``o2ksim run --trace`` would pick, or ``--machine``), by the
run's own rules (:class:`o2ksim.machine.Admission`); ``check`` lists them per
reason with their job numbers.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from o2ksim.cli._run_notes import rejection_lines, run_machine, would_reject
from o2ksim.files import parent_folder
from o2ksim.machine import load_machine
from o2ksim.workloads.swf import Trace, read_swf, write_swf

HELP = "inspect, check or convert an SWF workload trace (plain or .gz)"
MACHINE_HELP = (
    "machine to check the jobs against (name or file); default the one `o2ksim run --trace` "
    "picks: the header's O2KSimMachine, else one host of its MaxProcs"
)


def register(parser: argparse.ArgumentParser) -> None:
    """Add the ``info``, ``check`` and ``convert`` actions to *parser*."""
    actions = parser.add_subparsers(dest="trace_action", metavar="ACTION", required=True)

    info = actions.add_parser(
        "info",
        help="summarise a trace: header, jobs, time span",
        description="Summarise an SWF trace: machine size from the "
        "header, job count, time span and which request fields are known.",
    )
    info.add_argument("file", metavar="FILE", help="SWF file, plain or gzip")
    info.add_argument(
        "--lenient", action="store_true", help="skip malformed lines (counted) instead of failing"
    )
    info.add_argument("--machine", metavar="NAME", help=MACHINE_HELP)
    info.set_defaults(func=_info)

    check = actions.add_parser(
        "check",
        help="validate a trace (exit 0 if valid, 2 if not)",
        description="Validate an SWF trace. The first malformed line "
        "is reported with its line and field, exit code 2.",
    )
    check.add_argument("file", metavar="FILE", help="SWF file, plain or gzip")
    check.add_argument(
        "--lenient",
        action="store_true",
        help="skip malformed lines and report how many, instead of failing",
    )
    check.add_argument(
        "--strict-order",
        action="store_true",
        help="a submit time smaller than an earlier line's is an error "
        "(by default such jobs are sorted into place with a warning)",
    )
    check.add_argument("--machine", metavar="NAME", help=MACHINE_HELP)
    check.set_defaults(func=_check)

    convert = actions.add_parser(
        "convert",
        help="rewrite a trace (to/from .gz, first N jobs)",
        description="Read IN and write it to OUT in SWF, gzip-compressed "
        "when OUT ends with .gz. The header is kept.",
    )
    convert.add_argument("input", metavar="IN", help="SWF file to read, plain or gzip")
    convert.add_argument("output", metavar="OUT", help="SWF file to write (.gz: compressed)")
    convert.add_argument(
        "--limit", type=_count, metavar="N", help="keep only the first N job lines (like head)"
    )
    convert.add_argument(
        "--lenient", action="store_true", help="drop malformed lines (counted) instead of failing"
    )
    convert.set_defaults(func=_convert)


def _count(text: str) -> int:
    """argparse type: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"must be from 0 to 2**63-1, got {text}")
    return value


def _warn(message: str) -> None:
    print(f"o2ksim: warning: {message}", file=sys.stderr)


def _warn_about(trace: Trace) -> None:
    """Warn on stderr about what reading changed: skipped or reordered lines, no jobs."""
    report = trace.report
    if report is None:
        return
    if report.skipped:
        details = ", ".join(f"{count} {reason}" for reason, count in report.skipped.items())
        n = report.n_skipped
        _warn(f"{report.path}: skipped {n} malformed line{'s' if n != 1 else ''} ({details})")
    if report.reordered:
        n = report.reordered
        unknown = int((trace.jobs["submit"] == -1).sum())
        why = f" ({unknown} with unknown submit time -1)" if unknown else ""
        _warn(
            f"{report.path}: {n} job line{'s' if n != 1 else ''} submitted earlier than a "
            f"previous line{why}; jobs sorted by submit time"
        )
    if report.n_jobs == 0:
        _warn(f"{report.path}: no jobs")


def _duration(seconds: int) -> str:
    """A span in the unit a reader expects: seconds, hours or days."""
    if seconds < 3600:
        return f"{seconds} s"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 86400:.1f} days"


def _percent(part: int, whole: int) -> str:
    return f"{part} ({100.0 * part / whole:.1f}%)" if whole else "0"


def _info(args: argparse.Namespace) -> int:
    if args.machine:  # an unknown machine is refused before anything is printed
        load_machine(args.machine)
    trace = read_swf(args.file, lenient=args.lenient)
    _warn_about(trace)
    print(_describe(trace, args.file))
    machine, label = run_machine(trace, args.machine, args.file)
    if machine is None:
        print(f"rejected:      unknown, {label}")
    else:
        n = sum(count for count, _, _ in would_reject(trace, machine))
        given = f" --machine {args.machine}" if args.machine else ""
        pointer = f" (`o2ksim trace check {args.file}{given}` lists them)" if n else ""
        print(f"rejected:      {n} by a run on {label}{pointer}")
    return 0


def _say_rejections(trace: Trace, args: argparse.Namespace) -> None:
    """The jobs a run would reject, per reason, with their job numbers (``trace check``)."""
    machine, label = run_machine(trace, args.machine, args.file)
    if machine is None:
        print(f"which jobs a run would reject: unknown, {label}")
        return
    print("\n".join(rejection_lines(would_reject(trace, machine), label)))


def _describe(trace: Trace, name: str) -> str:
    """The text ``o2ksim trace info`` prints."""
    h = trace.header
    jobs = trace.jobs
    rows: list[tuple[str, str]] = [("file", name)]
    machine = h.computer or "-"
    if h.installation:
        machine += f" at {h.installation.splitlines()[0]}"
    rows.append(("computer", machine))
    rows.append(("MaxProcs", "-" if h.max_procs is None else str(h.max_procs)))
    rows.append(("MaxNodes", "-" if h.max_nodes is None else str(h.max_nodes)))
    if h.unix_start_time is None:
        rows.append(("UnixStartTime", "-"))
    else:
        try:
            start = f"{datetime.fromtimestamp(h.unix_start_time, tz=UTC):%Y-%m-%d %H:%M:%S} UTC"
        except (OverflowError, OSError, ValueError):
            start = "not a representable date"
        rows.append(("UnixStartTime", f"{h.unix_start_time} ({start})"))
    rows.append(("notes", str(len(h.notes))))
    n = len(jobs)
    rows.append(("jobs", str(n)))
    if n:
        submit = jobs["submit"]
        known = submit[submit >= 0]
        if len(known):
            first, last = int(known.min()), int(known.max())
            span = last - first
            rows.append(("time span", f"{_duration(span)} (submits {first} .. {last})"))
        else:
            rows.append(("time span", "unknown (no submit times)"))
        rows.append(("req. time", _percent(int((jobs["req_time"] >= 0).sum()), n)))
        rows.append(("req. memory", _percent(int((jobs["req_mem"] >= 0).sum()), n)))
        rows.append(("req. procs", _percent(int((jobs["req_procs"] >= 0).sum()), n)))
    report = trace.report
    rows.append(("reordered", str(report.reordered if report else 0)))
    if report is not None and report.skipped:
        rows.append(("skipped", str(report.n_skipped)))
    width = max(len(k) for k, _ in rows) + 1
    return "\n".join(f"{k + ':':<{width}} {v}" for k, v in rows)


def _check(args: argparse.Namespace) -> int:
    if args.machine:
        load_machine(args.machine)
    trace = read_swf(args.file, lenient=args.lenient, strict_order=args.strict_order)
    report = trace.report
    assert report is not None
    _warn_about(trace)
    print(report.summary())
    for line, reason in report.examples:
        print(f"  line {line}: {reason}")
    _say_rejections(trace, args)
    return 0


def _convert(args: argparse.Namespace) -> int:
    # refused before reading IN (a trace may be large); OUT = IN would destroy IN
    parent_folder(args.output, "OUT", inputs=(args.input,))
    trace = read_swf(args.input, lenient=args.lenient, limit=args.limit)
    _warn_about(trace)
    source = Path(args.input).name
    for suffix in (".gz", ".swf"):
        source = source.removesuffix(suffix)
    if args.limit is not None:
        trace.header.notes.append(
            f"first {args.limit} job lines of {source} (o2ksim trace convert --limit)"
        )
    report = trace.report
    if report is not None and report.skipped:
        trace.header.notes.append(
            f"{report.n_skipped} malformed lines of {source} skipped "
            "(o2ksim trace convert --lenient)"
        )
    write_swf(trace, args.output)
    print(f"wrote {len(trace)} jobs to {args.output}")
    return 0
