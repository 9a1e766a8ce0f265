"""Capacity over time: processors or whole hosts down between two times (an availability file).

A machine file gives each host's processors for the whole run.  Real machines
lose some for a while -- outages, drained or dedicated nodes, maintenance --
and an archive trace never records it.  An *availability file* says when and
how many, one period per line, as CSV with a header line::

    host,from,to,procs
    kth-sp2,86400,93600,20        # 20 processors down from day 1 for 2 hours
    kth-sp2,30d,732h,all          # the whole host down for 12 hours

* ``host`` -- a host of the machine; may be empty when the machine has one host;
* ``from``, ``to`` -- trace times, seconds since the trace's start (the SWF
  time axis) or durations (``7d``, ``36h``, ``90m``), ``from < to``;
* ``procs`` -- processors down, ``1`` to the host's size, or ``all`` (or empty)
  for the whole host.

Blank lines and lines starting with ``#`` are skipped; a ``#`` after the
fields starts a comment.  Periods on one host may overlap as long as the
processors down at any moment never exceed the host's.  Every mistake is
refused with the file, the line and the field.

The engine (:mod:`o2ksim.engine.hosts`) *drains*: at ``from`` the processors
stop taking new jobs, the jobs running on them finish, and the processors
are down until ``to``.  This module only reads and checks the periods.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from o2ksim.errors import InputError, O2KSimError
from o2ksim.files import read_small_text, write_atomically
from o2ksim.machine import MachineSpec
from o2ksim.units import format_duration, parse_duration
from o2ksim.validation import MAX_TIME

__all__ = [
    "COLUMNS",
    "Outage",
    "check_outages",
    "late_periods",
    "load_availability",
    "outages_from_rows",
    "unused_periods_note",
    "write_availability",
]

COLUMNS = ("host", "from", "to", "procs")
"""The availability file's header, in order."""


@dataclass(frozen=True, slots=True)
class Outage:
    """``procs`` processors of ``host`` down from ``start`` to ``end`` (trace seconds)."""

    host: str
    start: float
    end: float
    procs: int

    def row(self) -> dict[str, Any]:
        """The period as a line of the file (and of ``run.json``)."""
        return {"host": self.host, "from": self.start, "to": self.end, "procs": self.procs}


def load_availability(path: str | os.PathLike[str], machine: MachineSpec) -> tuple[Outage, ...]:
    """The periods of the availability file ``path``, checked against ``machine``, by start time."""
    p = Path(path)
    text = read_small_text(p, "availability file")
    numbered = []
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if content:
            numbered.append((number, content))
    if not numbered:
        raise InputError(p, f"empty: the first line must be the header {','.join(COLUMNS)}")
    number, head = numbered[0]
    header = [c.strip().lower() for c in next(csv.reader(io.StringIO(head)))]
    if header != list(COLUMNS):
        raise InputError(p, f"the header must be {','.join(COLUMNS)}, got {head!r}", line=number)
    rows = []
    for number, content in numbered[1:]:
        cells = [c.strip() for c in next(csv.reader(io.StringIO(content)))]
        if len(cells) != len(COLUMNS):
            raise InputError(
                p,
                f"{len(cells)} fields, expected {len(COLUMNS)} ({','.join(COLUMNS)})",
                line=number,
            )
        rows.append((number, dict(zip(COLUMNS, cells, strict=True))))
    if not rows:  # a file that takes nothing down would change nothing: said, not ignored
        raise InputError(
            p, "no periods, only the header line: it would change nothing (give a period "
            "per line, or leave out the availability file)", line=number,
        )
    return outages_from_rows(rows, machine, str(p))


def outages_from_rows(
    rows: Iterable[tuple[int | None, Mapping[str, Any]]], machine: MachineSpec, where: str
) -> tuple[Outage, ...]:
    """Periods from ``(line, {host, from, to, procs})`` pairs (a file's lines, or a
    configuration's list with ``line`` ``None``), each field checked; by start time."""
    out = []
    for line, row in rows:
        out.append(_outage(row, machine, where, line))
    outages = tuple(sorted(out, key=lambda o: (o.start, o.end, o.host)))
    check_outages(outages, machine, where)
    return outages


def _outage(row: Mapping[str, Any], machine: MachineSpec, where: str, line: int | None) -> Outage:
    def bad(field: str, message: str) -> InputError:
        return InputError(where, message, line=line, field=field)

    names = [h.name for h in machine.hosts]
    host = row.get("host")
    host = "" if host is None else str(host).strip()
    if not host:
        if len(names) != 1:
            raise bad("host", f"must name a host of machine {machine.name} ({', '.join(names)})")
        host = names[0]
    elif host not in names:
        raise bad("host", f"{host!r} is not a host of machine {machine.name} ({', '.join(names)})")
    times = []
    for field in ("from", "to"):
        value = row.get(field)
        if (
            value is None
            or (isinstance(value, str) and not value.strip())
            or isinstance(value, bool)
        ):
            raise bad(field, "missing: give seconds since the trace start or a duration (7d, 36h)")
        try:
            seconds = parse_duration(value)
        except O2KSimError as exc:
            raise bad(field, str(exc)) from None
        if not 0 <= seconds < MAX_TIME:
            raise bad(field, f"must be a time from 0 to {MAX_TIME:g} s, got {value!r}")
        times.append(seconds)
    start, end = times
    if end <= start:
        raise bad(
            "to", f"must be after from ({format_duration(start)}), got {format_duration(end)}"
        )
    size = machine.host(host).procs
    procs = row.get("procs")
    if procs is None or (isinstance(procs, str) and procs.strip().lower() in ("", "all")):
        count = size
    else:
        if isinstance(procs, float) and procs.is_integer():
            procs = int(procs)  # a TOML or JSON table's 4.0
        try:
            count = -1 if isinstance(procs, bool | float) else int(str(procs).strip())
        except ValueError:
            raise bad("procs", f"must be a processor count or 'all', got {procs!r}") from None
        if not 1 <= count <= size:
            raise bad(
                "procs",
                f"must be from 1 to {size} (host {host}'s processors) or 'all', got {procs!r}",
            )
    return Outage(host, start, end, count)


def check_outages(outages: Sequence[Outage], machine: MachineSpec, where: str) -> None:
    """Refuse periods on one host that together take more processors than it has."""
    for h in machine.hosts:
        events = sorted(
            [(o.end, -o.procs) for o in outages if o.host == h.name]
            + [(o.start, o.procs) for o in outages if o.host == h.name]
        )  # at one instant the ends come first (negative deltas sort first)
        down = 0
        for t, delta in events:
            down += delta
            if down > h.procs:
                raise O2KSimError(
                    f"{where}: host {h.name}: {down} processors down at {format_duration(t)} "
                    f"(overlapping periods), more than its {h.procs}"
                )


def late_periods(outages: Sequence[Outage], run_end: float) -> tuple[int, ...]:
    """The indices of the periods of ``outages`` that start at or after ``run_end``, the run's
    last event: they changed nothing."""
    return tuple(i for i, o in enumerate(outages) if o.start >= run_end)


def unused_periods_note(
    outages: Sequence[Outage], run_end: float, unix_start: int | None, given: str, *, runs: str = ""
) -> str:
    """The note for the periods of ``given`` (``--availability a.csv``) that start at or after
    ``run_end``, the run's last event: they changed nothing (``""`` when every period started
    within the run).  Known only after the run, which they do not shorten.  A start that reads
    as a Unix time of the trace (at or after its ``UnixStartTime``) gets a hint: the file's
    times are seconds since the trace start.  ``runs`` (``"3 of the 20 runs (a, b, c)"``):
    the runs of a sweep the note is about, each with the same periods late; ``run_end`` is
    then the latest of their last events."""
    late = [outages[i] for i in late_periods(outages, run_end)]
    if not late:
        return ""
    first = late[0]
    where = f"host {first.host} from {_seconds(first.start)} s ({format_duration(first.start)})"
    if len(late) == 1:
        which = f"its period {where} starts" if len(outages) == 1 else f"1 of its {len(outages)} periods, {where}, starts"
        changed = "it changed nothing"
    else:
        which = "all its periods" if len(late) == len(outages) else f"{len(late)} of its {len(outages)} periods"
        which += f" (the first: {where}) start"
        changed = "they changed nothing"
    event = f"the last event of {runs}, the latest at" if runs else "the run's last event at"
    note = (
        f"{given}: {which} at or after {event} {_seconds(run_end)} s "
        f"({format_duration(run_end)}): {changed}"
    )
    if unix_start is not None and unix_start > 0 and first.start >= unix_start:
        note += (
            f"; times are seconds since the trace start, and {_seconds(first.start)} looks like a "
            f"Unix time: the trace's UnixStartTime is {unix_start}, so it may be meant as "
            f"{_seconds(first.start - unix_start)}"
        )
    return note


def write_availability(outages: Iterable[Outage], path: str | os.PathLike[str]) -> Path:
    """Write ``outages`` as an availability file (what :func:`load_availability` reads), under
    a temporary name renamed over ``path`` (:func:`~o2ksim.files.write_atomically`)."""
    out = Path(path)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for o in outages:
        writer.writerow([o.host, _seconds(o.start), _seconds(o.end), o.procs])
    write_atomically(out, buf.getvalue().encode("utf-8"))  # whole or not at all
    return out


def _seconds(t: float) -> str:
    """A time as the file writes it: whole seconds without a decimal point, else exactly."""
    return str(int(t)) if float(t).is_integer() else repr(float(t))
