"""The header of an SWF file: its ``; Label: value`` comment lines, parsed and written.

The archive's files open with comment lines such as ``; MaxProcs: 100`` or
``; UnixStartTime: 826842537``; :class:`SWFHeader` holds them as typed fields
(numbers as ints, ``AllowOveruse`` as a bool, free text verbatim), and
:meth:`SWFHeader.to_lines` writes them back so that reading the lines again
gives an equal header.  :func:`parse_header` is the reader's half: it turns the
comment lines of a file into an :class:`SWFHeader`, reporting a bad numeric
value or binary data as a :class:`~o2ksim.workloads.swf_fields.Problem` with
its line number.  Both halves share one table of labels
(:data:`HEADER_LABELS`), so a label is added in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from o2ksim import paths
from o2ksim.units import utc_offset_problem, zone_named
from o2ksim.validation import MAX_PROCS, MAX_UNIX_TIME
from o2ksim.workloads.swf_fields import CONTROL_BYTES, INT64_MAX, Problem

__all__ = ["HEADER_LABELS", "MACHINE_LABEL", "SWFHeader", "machine_name_problem", "parse_header"]

MACHINE_LABEL = "O2KSimMachine"
"""The header label naming the machine a trace was made for (``; O2KSimMachine: o2k``,
written by ``o2ksim generate``): a shipped machine's name, never a path."""

# ----------------------------------------------------------------------------
# header labels: (attribute, canonical spelling, kind), in the order written
# ----------------------------------------------------------------------------

HEADER_LABELS: tuple[tuple[str, str, str], ...] = (
    ("version", "Version", "text"),
    ("computer", "Computer", "text"),
    ("installation", "Installation", "text"),
    ("acknowledge", "Acknowledge", "text"),
    ("information", "Information", "text"),
    ("conversion", "Conversion", "text"),
    ("max_jobs", "MaxJobs", "int"),
    ("max_records", "MaxRecords", "int"),
    ("preemption", "Preemption", "text"),
    ("unix_start_time", "UnixStartTime", "int"),
    ("time_zone", "TimeZone", "int"),
    ("time_zone_string", "TimeZoneString", "text"),
    ("start_time", "StartTime", "text"),
    ("end_time", "EndTime", "text"),
    ("max_nodes", "MaxNodes", "int"),
    ("max_procs", "MaxProcs", "int"),
    ("max_runtime", "MaxRuntime", "int"),
    ("max_memory", "MaxMemory", "int"),
    ("allow_overuse", "AllowOveruse", "bool"),
    ("queues", "Queues", "text"),
    ("partitions", "Partitions", "text"),
)
_LABELS_BY_KEY = MappingProxyType(
    {label.lower(): (attr, label, kind) for attr, label, kind in HEADER_LABELS}
)
_NOTE_KEY = "note"
_BOOL_WORDS = MappingProxyType(
    {
        "yes": True,
        "y": True,
        "true": True,
        "1": True,
        "no": False,
        "n": False,
        "false": False,
        "0": False,
    }
)

# '; Label: value' -- the colon must be followed by whitespace or the end, so that
# a continuation line holding a URL ('http://...') is not taken for a label.
_LABEL_RE = re.compile(r";([ \t]*)([A-Za-z][A-Za-z0-9_]*)[ \t]*:([ \t]*)(.*)$")
# numeric header value: an integer, optionally followed by a description in
# parentheses, as the standard suggests for MaxNodes ('400 (48 interactive, ...)').
_INT_VALUE_RE = re.compile(r"([+-]?[0-9]+)(?:[ \t]*(\(.*\)))?")


@dataclass
class SWFHeader:
    """The header of an SWF file, parsed from its ``; Label: value`` comment lines.

    Every field is optional (``None`` = not given).  Labels are matched without
    regard to case.  A label that appears several times (``Information`` in
    SDSC-BLUE) or has continuation lines keeps all its text, joined by
    newlines.  Each ``Note:`` is one element of :attr:`notes`.  Labels this
    class does not name (``MaxQueues``, ``Queue``, ``Partition`` ...) go to
    :attr:`extra` verbatim under their first spelling; the special key ``""``
    holds free comment lines that carry no label (a title line, say).  When a
    numeric label is followed by a description in parentheses, e.g.
    ``MaxNodes: 400 (48 interactive, 352 batch)``, the number goes to the field
    and the whole text to ``extra["MaxNodes"]`` so that writing keeps it.
    """

    version: str | None = None
    computer: str | None = None
    installation: str | None = None
    acknowledge: str | None = None
    information: str | None = None
    conversion: str | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    preemption: str | None = None
    unix_start_time: int | None = None
    time_zone: int | None = None
    time_zone_string: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    max_runtime: int | None = None
    max_memory: int | None = None
    allow_overuse: bool | None = None
    queues: str | None = None
    partitions: str | None = None
    notes: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)

    def to_lines(self) -> list[str]:
        """The header as SWF comment lines (``; Label: value``), without newlines.

        Reading the lines back with :func:`read_swf` gives an equal header.
        Free text (``extra[""]``) comes first, then the standard labels in the
        order the archive uses, the other labels, and the notes last.
        """
        lines: list[str] = []
        extra_by_key = {k.lower(): (k, v) for k, v in self.extra.items()}
        used: set[str] = set()
        if "" in self.extra:
            lines.extend(f"; {text}".rstrip() for text in self.extra[""].split("\n"))
            lines.append(";")
            used.add("")
        for attr, label, kind in HEADER_LABELS:
            value = getattr(self, attr)
            if value is None:
                continue
            if kind == "int":
                text = str(int(value))
                described = extra_by_key.get(label.lower())
                if described is not None:
                    used.add(described[0])
                    m = _INT_VALUE_RE.fullmatch(described[1].strip())
                    if m and m.group(2) and int(m.group(1)) == int(value):
                        text = described[1]
                lines.append(f"; {label}: {text}")
            elif kind == "bool":
                lines.append(f"; {label}: {'Yes' if value else 'No'}")
            else:
                lines.extend(_label_lines(label, str(value)))
        for key, value in self.extra.items():
            if key not in used:
                lines.extend(_label_lines(key, value))
        for note in self.notes:
            lines.extend(_label_lines("Note", note, repeat=False))
        return lines


def _label_lines(label: str, value: str, *, repeat: bool = True) -> list[str]:
    """``; Label: value`` for a value holding newlines.

    Parts that start with blanks (indented continuation text) become
    continuation lines starting in the value column; other parts repeat the
    label, unless *repeat* is false (notes), where every part is a
    continuation.  Either way :func:`read_swf` joins them back into *value*.
    """
    first, *rest = value.split("\n")
    head = f"; {label}: "
    pad = ";" + " " * (len(head) - 1)
    lines = [(head + first).rstrip()]
    for part in rest:
        if repeat and part[:1] not in (" ", "\t"):
            lines.append((head + part).rstrip())
        else:
            lines.append((pad + part).rstrip())
    return lines


def _decode_comment(raw: bytes) -> str | None:
    """Text of a comment line, or None if it is binary data.

    UTF-8 is tried first, then Latin-1 (old logs); bytes that are control
    characters in both mean binary data.
    """
    raw = raw.rstrip(b"\r")
    if len(raw.translate(None, CONTROL_BYTES)) != len(raw) or b"\r" in raw:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        if any(0x80 <= b <= 0x9F for b in raw):
            return None
        return raw.decode("latin-1")


_SINGLE_TEXT = frozenset({"time_zone_string"})
"""Text labels that hold one value: a repeated line is not more text but a second value."""


def machine_name_problem(name: str) -> str | None:
    """Why ``name``, the value of a trace header's ``O2KSimMachine``, names no machine, or
    ``None``.  A header names a shipped machine (``hosts/``) by name only: a path in a trace
    is never opened (``../../etc/passwd``), nor a file of that name in the working directory."""
    known = paths.available("hosts")
    if name in known:
        return None
    if not name:
        return "empty (a shipped machine's name, e.g. o2k)"
    return f"unknown machine {name!r}: a trace header names a shipped machine ({', '.join(sorted(known)) or 'none found'})"


_SIGNED_LABELS = frozenset({"unix_start_time", "time_zone"})
"""Integer header labels that may be negative (a start before 1970, a zone west of UTC);
the others are counts or sizes, -1 meaning unknown."""


class _Open(NamedTuple):
    """The header entry that continuation lines extend."""

    target: str  # "note", "attr" or "extra"
    key: str  # note index (as str), attribute name or extra key
    value_col: int  # column where the label's value starts


def parse_header(comments: list[tuple[int, bytes]], problems: list[Problem]) -> SWFHeader:
    """Build the header from comment lines (line number, raw bytes) in file order.

    A line ``; Label: value`` starts an entry.  A following comment line that
    is indented (two or more blanks after ``;``) and has no label of its own
    continues the entry; so does an indented line that looks like an unknown
    label but starts at or after the entry's value column (``;\\tsee: http://``
    under a Note).  A bare ``;`` ends the entry.  Other lines without a label
    are free text (``extra[""]``).  Problems (bad numeric value, binary data)
    are appended to *problems*.
    """
    header = SWFHeader()
    texts: dict[str, list[str]] = {}  # attribute -> occurrences
    extras: dict[str, tuple[str, list[str]]] = {}  # lower label -> (first spelling, occurrences)
    free: list[str] = []
    current: _Open | None = None
    first_at: dict[str, tuple[int, object]] = {}  # single-valued label -> (line, value) first given

    def repeated(number: int, label: str, value: object) -> bool:
        """Whether *label* was given before; a different value is a problem naming both lines
        (two values for one field: the reader cannot know which is meant)."""
        seen = first_at.setdefault(label.lower(), (number, value))
        if seen[0] == number:
            return False
        if seen[1] != value:
            problems.append(
                Problem(
                    number,
                    "bad header value",
                    f"header {label}: {value!r} here, but {seen[1]!r} on line {seen[0]} "
                    "(one value per header label)",
                    None,
                )
            )
        return True

    def append_to(entry: _Open, text: str) -> None:
        """Add a continuation line to *entry*."""
        if entry.target == "note":
            idx = int(entry.key)
            header.notes[idx] = f"{header.notes[idx]}\n{text}"
        elif entry.target == "attr":
            texts[entry.key][-1] += f"\n{text}"
        else:
            extras[entry.key][1][-1] += f"\n{text}"

    for number, raw in comments:
        decoded = _decode_comment(raw)
        if decoded is None:
            problems.append(Problem(number, "binary data", "binary data, not SWF text", None))
            current = None
            continue
        line = decoded.strip().expandtabs(8)  # starts with ';'
        rest = line[1:]
        content = rest.strip()
        if not content:
            current = None
            continue
        indent = len(rest) - len(rest.lstrip())
        m = _LABEL_RE.match(line)
        key = m.group(2).lower() if m else None
        known = key is not None and (key == _NOTE_KEY or key in _LABELS_BY_KEY)
        if m is not None and not known and not m.group(3) and m.group(4):
            m = key = None  # a colon inside text ('http://...'), not an unknown label
        if (
            not known
            and current is not None
            and indent >= 2
            and (m is None or 1 + indent >= current.value_col)
        ):
            # keep indentation beyond the value column (the archive's filter lists)
            at_value = 1 + indent >= current.value_col
            append_to(current, line[current.value_col :].rstrip() if at_value else content)
            continue
        if m is None or key is None:
            free.append(content)
            current = None
            continue
        value = m.group(4).strip()
        value_col = max(m.start(4), m.start(3) + 1)  # at least one blank after the colon
        if key == _NOTE_KEY:
            header.notes.append(value)
            current = _Open("note", str(len(header.notes) - 1), value_col)
        elif key in _LABELS_BY_KEY:
            attr, label, kind = _LABELS_BY_KEY[key]
            current = None
            if kind == "text":
                if attr in _SINGLE_TEXT:
                    if repeated(number, label, value):
                        continue
                    if value and zone_named(value) is None:
                        problems.append(
                            Problem(
                                number,
                                "bad header value",
                                f"header {label}: {value!r} is not a time zone Python knows "
                                "(an IANA name such as Europe/Stockholm)",
                                None,
                            )
                        )
                        continue
                texts.setdefault(attr, []).append(value)
                current = None if attr in _SINGLE_TEXT else _Open("attr", attr, value_col)
            elif kind == "int":
                im = _INT_VALUE_RE.fullmatch(value)
                if im is None:
                    problems.append(
                        Problem(
                            number,
                            "bad header value",
                            f"header {label}: {value!r} is not an integer",
                            None,
                        )
                    )
                    continue
                value_int = int(im.group(1))
                limit = {"unix_start_time": MAX_UNIX_TIME, "max_procs": MAX_PROCS,
                         "max_nodes": MAX_PROCS}.get(attr, INT64_MAX)  # fmt: skip
                if not -limit <= value_int <= limit:
                    problems.append(
                        Problem(
                            number,
                            "bad header value",
                            f"header {label}: {value_int} is out of range (at most {limit})",
                            None,
                        )
                    )
                    continue
                if value_int < -1 and attr not in _SIGNED_LABELS:
                    problems.append(
                        Problem(
                            number,
                            "bad header value",
                            f"header {label}: negative value {value_int} (only -1 means unknown)",
                            None,
                        )
                    )
                    continue
                offset_problem = utc_offset_problem(value_int) if attr == "time_zone" else None
                if offset_problem:
                    problems.append(
                        Problem(number, "bad header value", f"header {label}: {offset_problem}", None)
                    )
                    continue
                if repeated(number, label, value_int):
                    continue
                setattr(header, attr, value_int)
                if im.group(2):
                    extras[label.lower()] = (label, [value])
                else:
                    extras.pop(label.lower(), None)
            else:
                flag = _BOOL_WORDS.get(value.lower())
                if flag is None:
                    problems.append(
                        Problem(
                            number,
                            "bad header value",
                            f"header {label}: {value!r} is not Yes or No",
                            None,
                        )
                    )
                    continue
                if repeated(number, label, flag):
                    continue
                setattr(header, attr, flag)
        elif key == MACHINE_LABEL.lower():
            current = None
            machine_problem = machine_name_problem(value)
            if machine_problem:
                problems.append(Problem(number, "bad header value", machine_problem, MACHINE_LABEL))
            elif not repeated(number, MACHINE_LABEL, value):
                extras[key] = (MACHINE_LABEL, [value])
        else:
            label = m.group(2)
            extras.setdefault(key, (label, []))[1].append(value)
            current = _Open("extra", key, value_col)

    for attr, occurrences in texts.items():
        setattr(header, attr, "\n".join(occurrences))
    if free:
        header.extra[""] = "\n".join(free)
    for label, occurrences in extras.values():
        header.extra[label] = "\n".join(occurrences)
    return header
