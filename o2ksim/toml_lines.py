"""Where a field of a TOML configuration file is written: the line a refusal names
(``m.toml:9: field host[1].procs: ...``).

Python's ``tomllib`` keeps no positions, so the line is found in the file's text by the
field's path: :func:`toml_field_line` for a field, and :func:`located` around the code that
validates a parsed file, giving a :class:`~o2ksim.errors.ConfigError` raised there the line
of its field.  One rule for machine, policy preset, scenario and workload-model files.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence

from o2ksim.errors import ConfigError


def toml_field_line(lines: Sequence[str], field: str, *, anywhere: bool = False) -> int | None:
    """The 1-based line of the key ``field`` (``a.b[2].c``) in a TOML file's ``lines``:
    the deepest table written as a header (``[a.b]``, ``[[a]]`` counted to its index) whose
    own lines hold the rest of the field as a key (``c``, or the dotted ``b.c`` under
    ``[a]``).  ``None`` when no such line is found (an inline table); with ``anywhere``,
    the first line with that last key instead (the model parameter files' rule)."""
    parts = field.split(".")
    for k in range(len(parts) - 1, -1, -1):
        start = _table_start(lines, parts[:k])
        if start is None:
            continue
        key = ".".join(part.split("[", 1)[0] for part in parts[k:])
        for i in range(start, len(lines)):
            text = lines[i].strip()
            if text.startswith("["):
                break
            if "=" in text and text.split("=", 1)[0].strip() == key:
                return i + 1
    if anywhere:
        last = parts[-1].split("[", 1)[0]
        for i, text in enumerate(lines):
            if "=" in text and text.strip().split("=", 1)[0].strip() == last:
                return i + 1
    return None


def _table_start(lines: Sequence[str], tables: Sequence[str]) -> int | None:
    """The index of the first line of the table ``tables`` (``["a", "b[2]"]``: the third
    ``[[a.b]]`` under ``[a]``), 0 for the top level; ``None`` when a header is not there."""
    start = 0
    prefix: list[str] = []
    for part in tables:
        m = re.fullmatch(r"(\w[\w-]*)\[(\d+)\]", part)
        name, idx = (m.group(1), int(m.group(2))) if m else (part, None)
        prefix.append(name)
        full = ".".join(prefix)
        header = f"[[{full}]]" if idx is not None else f"[{full}]"
        seen = -1
        for i in range(start, len(lines)):
            if lines[i].strip().split("#", 1)[0].strip() == header:
                seen += 1
                if idx is None or seen == idx:
                    start = i + 1
                    break
        else:
            return None
    return start


@contextlib.contextmanager
def located(text: str, within: str = "") -> Iterator[None]:
    """Give a :class:`ConfigError` raised in the block about a field of the TOML ``text``
    (of its table ``within``, when the field is named from there) the line of that field,
    when it has none: ``m.toml:7: field host[1].procs: ...``."""
    try:
        yield
    except ConfigError as exc:
        if exc.line is not None or not exc.field:
            raise
        line = toml_field_line(text.splitlines(), f"{within}.{exc.field}" if within else exc.field)
        if line is None:
            raise
        raise ConfigError(exc.path, exc.reason, line=line, field=exc.field) from None


# ------------------------------------------------------------------------------- value checks


__all__ = ["located", "toml_field_line"]
