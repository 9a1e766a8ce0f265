"""What ``o2ksim run`` tells the user about its input and choices (issue 27: never silently).

Warnings about the trace as read (reordered or skipped lines, jobs left out by
``--window``, jobs without a requested runtime planned with perfect
estimates), the machine chosen when ``--machine`` is not given, and the rejected
jobs counted per reason.  (A window is read, and refused when it selects nothing, by
:func:`o2ksim.workloads.transforms.read_window`.)
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from o2ksim.errors import O2KSimError, PerfectEstimatesWarning, UnusedAvailabilityWarning
from o2ksim.machine import (
    Admission,
    MachineSpec,
    header_size_gap,
    load_machine,
    machine_from_header,
)
from o2ksim.run.checks import (
    MACHINE_LABEL,
    group_text,
    header_machine,
    perfect_estimates_note,
    reason_groups,
)
from o2ksim.table import column
from o2ksim.units import TraceClock
from o2ksim.workloads.convert import specs_from_frame
from o2ksim.workloads.transforms import Window, format_duration

SECONDS = TraceClock()  # times as durations since the trace start


def warn_about_estimates(trace, args: argparse.Namespace) -> None:
    """Say when jobs without a requested runtime (SWF field 9 = -1) are planned with their
    actual runtime: perfect estimates, which make backfilling look better than it is."""
    if args.estimates not in (None, "", "requested"):
        return
    note = perfect_estimates_note(trace.table, args.trace)
    if note:
        print(f"o2ksim: warning: {note}", file=sys.stderr)


@contextmanager
def perfect_estimates_said(
    quiet: bool = False, *, availability: tuple[str, str] | None = None
) -> Iterator[None]:
    """Print the :class:`~o2ksim.errors.PerfectEstimatesWarning` the API issued inside the
    block (``validate``, ``predict``), once each, in ``o2ksim run``'s one line; with
    ``availability`` (the API's name of the periods, ``availability='a.csv'``, and the option
    as typed, ``--availability a.csv``) the :class:`~o2ksim.errors.UnusedAvailabilityWarning`
    too, naming the option, as ``o2ksim run`` says it.

    :func:`o2ksim.cli.main` ignores these warnings so that no command prints one as a Python
    warning with a source line; a command whose API call issues one says it here, after the
    call succeeded (a refusal stays one line).  Other warnings are shown as they would be.
    """
    kinds: tuple[type[Warning], ...] = (PerfectEstimatesWarning,)
    if availability is not None:
        kinds += (UnusedAvailabilityWarning,)
    with warnings.catch_warnings(record=True) as caught:
        for kind in kinds:
            warnings.simplefilter("always", kind)
        yield
    said = []
    for w in caught:
        text = str(w.message)
        if not issubclass(w.category, kinds):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            continue
        if availability is not None and issubclass(w.category, UnusedAvailabilityWarning):
            text = text.replace(availability[0], availability[1], 1)
        if text not in said:
            said.append(text)
    for text in [] if quiet else said:
        print(f"o2ksim: warning: {text}", file=sys.stderr)


def say_machine(trace, machine: str | None) -> None:
    """Which machine a trace runs on when ``--machine`` was not given (never silently)."""
    if machine is not None:
        print(
            f"o2ksim: note: machine {machine}, named by the trace header ({MACHINE_LABEL}); "
            "--machine to choose another",
            file=sys.stderr,
        )
        return
    procs = trace.header.max_procs or trace.header.max_nodes
    if procs:
        print(
            f"o2ksim: note: machine: one host of {procs} processors from the trace header's "
            f"{'MaxProcs' if trace.header.max_procs else 'MaxNodes'} (--machine to give the real "
            "hosts, e.g. --machine o2k)",
            file=sys.stderr,
        )


def run_machine(trace, name: str | None, source: str) -> tuple[MachineSpec | None, str]:
    """The machine ``o2ksim run --trace`` would use (``--machine``, else the one the header
    names, else one host of the header's MaxProcs) and how it was chosen; ``None`` when there
    is none (no MaxProcs and no ``--machine``)."""
    named = name or header_machine(trace.header, source)
    if named:
        mach = load_machine(named)
        return mach, f"{mach.describe()} ({'--machine' if name else 'named by the trace header'})"
    try:
        mach = machine_from_header(trace.header, source)
    except O2KSimError:
        return None, f"no machine: {header_size_gap(trace.header)} (give --machine)"
    return mach, f"{mach.describe()} (from the trace header; --machine for another)"


def would_reject(trace, machine: MachineSpec) -> list[tuple[int, str, list[int]]]:
    """The jobs of ``trace`` a run on ``machine`` rejects on arrival, grouped by reason
    (:func:`reason_groups`), by the run's own rules (:class:`~o2ksim.machine.Admission`).
    A policy may reject more (its ``admit``, e.g. a queue's limits)."""
    admission = Admission(machine)
    found = [(s.job_id, r) for s in specs_from_frame(trace.table) if (r := admission.reason(s))]
    return reason_groups([r for _, r in found], [j for j, _ in found])


def rejection_lines(groups: list[tuple[int, str, list[int]]], label: str, shown: int = 5) -> list[str]:
    """``would_reject``'s groups as lines: the count, then one line per reason with its first
    job numbers (the pointer: ``grep`` them in the trace, or see jobs.csv's ``reason``)."""
    total = sum(n for n, _, _ in groups)
    lines = [f"a run would reject {total} job(s) on {label}" + (":" if total else "")]
    for n, text, jobs in groups:
        more = f" (and {n - shown} more)" if n > shown else ""
        lines.append(f"  {group_text(n, text)}: job {', '.join(map(str, jobs[:shown]))}{more}")
    return lines


def warn_about_window(
    trace, window: Window, args: argparse.Namespace, clock: TraceClock = SECONDS
) -> None:
    """Say the time zone ``--window`` dates were read in, and how many jobs the window leaves
    out of the simulation (never silently), at a time shown as the user wrote the window (a
    date, else days since the trace start)."""
    if clock.unix_start is not None and not args.quiet:
        print(
            f"o2ksim: note: --window dates read in {clock.read_in}: "
            f"[{clock.show(window.start)}, {clock.show(window.end)})",
            file=sys.stderr,
        )
    first = window.start - window.warmup
    before = int((column(trace.table, "submit") < first).sum())
    if before and not args.quiet:
        when = clock.show(first) + ("" if clock.unix_start is not None else " after the trace start")
        print(
            f"o2ksim: warning: --window: {before} job(s) submitted before {when} "
            f"(window start - warm-up of {format_duration(window.warmup)}) are not simulated "
            "and not in the outputs",
            file=sys.stderr,
        )
    submit = column(trace.table, "submit")
    slack = max(86400.0, 0.05 * (window.end - window.start))  # more than arrivals' usual gaps
    since = "" if clock.unix_start is not None else " after the trace start"
    for gap, text in (
        (float(submit.min()) - window.start, f"first job is submitted at {clock.show(float(submit.min()))}{since}, {{gap}} after the window's start"),
        (window.end - float(submit.max()), f"last job is submitted at {clock.show(float(submit.max()))}{since}, {{gap}} before the window's end"),
    ):  # fmt: skip
        if gap > slack and not args.quiet:  # found by the issue-27 audit: utilisation 0.024
            print(
                f"o2ksim: warning: --window: the trace's {text.format(gap=format_duration(gap))}; "
                "the window's measures (utilisation) count that stretch without arrivals",
                file=sys.stderr,
            )


def warn_about_reading(trace, args: argparse.Namespace) -> None:
    """Tell the user about reordered or skipped trace lines (never silently)."""
    report = getattr(trace, "report", None)
    if report is None or args.quiet:
        return
    if report.reordered:
        print(
            f"o2ksim: warning: {args.trace}: {report.reordered} job line(s) have submit times "
            "earlier than a previous line; jobs were sorted by submit time (use --strict-order to refuse)",
            file=sys.stderr,
        )
    if sum(report.skipped.values()):
        print(f"o2ksim: warning: {report.summary()}", file=sys.stderr)


def say_cancelled(trace, args: argparse.Namespace) -> None:
    """Say how many jobs were cancelled without running (status 5, run time 0) and how they
    are simulated (never silently: CEA-Curie has 14,730)."""
    cancelled, unallocated = cancelled_unrun(trace.table)
    if cancelled and not args.quiet:
        print(
            f"o2ksim: note: {args.trace}: {cancelled} of {len(trace)} jobs were cancelled "
            f"without running (status 5, run time 0; {unallocated} of them never got a "
            "processor); they are simulated as jobs of 0 seconds, which start when the policy "
            "reaches them and end at once (counted as completed; their waits are in the measures)",
            file=sys.stderr,
        )


CANCELLED = 5
"""SWF field 11, ``status``: the job was cancelled (the Parallel Workloads Archive's
definition; 1 completed, 0 failed)."""


def cancelled_unrun(table) -> tuple[int, int]:
    """Jobs of an SWF job table cancelled without running -- status 5, run time 0 or
    unknown -- and how many of those were never allocated a processor (field 5 0 or
    unknown: cancelled before they started).  A job cancelled while running has its run
    time; these run as jobs of 0 seconds."""
    if len(table) == 0:
        return 0, 0
    gone = (column(table, "status") == CANCELLED) & (column(table, "run_time") <= 0)
    return int(gone.sum()), int((gone & (column(table, "alloc_procs") <= 0)).sum())


__all__ = [
    "CANCELLED",
    "cancelled_unrun",
    "perfect_estimates_said",
    "rejection_lines",
    "run_machine",
    "say_cancelled",
    "say_machine",
    "warn_about_estimates",
    "warn_about_reading",
    "warn_about_window",
    "would_reject",
]
