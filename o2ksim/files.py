"""Output files written whole or not at all, and their folders checked before the work.

The one single-file writer of o2ksim (what ``git`` does with ``index.lock``):
a file is written under a temporary name next to its target, then renamed
over it, so that a reader never sees half a file -- after a full disk, a
kill, or a write into a place that cannot hold it.  SWF traces
(:func:`o2ksim.workloads.swf.write_swf`), the tables of ``o2ksim
characterize --out`` and the PNG of ``o2ksim gantt`` go through it.  A run's
results folder, whose files must change together, is
:mod:`o2ksim.outfiles`' business (a lock and a journal on top of the same
idea); an output folder is checked up front by
:func:`o2ksim.validation.writable_dir`.

Every failure is one :class:`~o2ksim.errors.O2KSimError` line that names the
path and the cause (``afile/x.swf: cannot write there (Not a directory)``).

The input side: :func:`read_small_text`, the one reader of the small text files users
give (machine and policy TOML, scenarios, parameter files, claims, a fitted CLM, an
availability CSV), with a size bound (:data:`MAX_INPUT_BYTES`), so that ``--machine
/dev/zero`` is one line, not a memory exhausted.  SWF traces, which may be gigabytes, have
their own guarded reader (:mod:`o2ksim.workloads.swf`).
"""

from __future__ import annotations

import contextlib
import os
import re
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from o2ksim.errors import ConfigError, InputError, O2KSimError
from o2ksim.outkinds import refuse_result_file

FIGURE_FORMATS = ("png", "svg", "pdf")
"""What a figure file may be (its extension names it): the formats matplotlib writes itself."""


def _cause(exc: OSError) -> str:
    return exc.strerror or str(exc)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path next to ``target`` for the block to write; renamed over ``target`` when
    the block ends normally, removed when it does not.

    The writer (``open``, ``DataFrame.to_csv``, ``Figure.savefig``) creates the file.  An
    ``OSError`` in the block or in the rename becomes a one-line
    :class:`~o2ksim.errors.InputError` naming ``target``; ``target`` is then as it was before.
    A ``target`` that exists and is neither a file nor a folder (``/dev/null``, a named
    pipe) is yielded itself: it is written into, not replaced.
    """
    path = Path(target)
    if path.is_dir():
        raise O2KSimError(f"{path}: is a folder; give a file name")
    if path.exists() and not path.is_file():
        # a device or a pipe (/dev/null, /dev/stdout, a FIFO): written into, never renamed
        # over -- a rename would put a regular file in place of /dev/null
        try:
            yield path
        except OSError as exc:
            raise InputError(path, f"cannot write there ({_cause(exc)})") from None
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(path, f"cannot write there ({_cause(exc)}); nothing was written") from None
    finally:
        with contextlib.suppress(OSError):  # the rename moved it, or it was never made
            tmp.unlink()


def write_atomically(target: str | os.PathLike[str], payload: bytes) -> None:
    """Write ``payload`` to ``target`` whole or not at all (:func:`atomic_path`)."""
    with atomic_path(target) as tmp:
        # os.open applies the umask to 0o666, as a plain open() would; a device is opened as is
        new = os.O_CREAT | os.O_EXCL if tmp != Path(target) else 0
        fd = os.open(tmp, os.O_WRONLY | new, 0o666)
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)


def parent_folder(
    target: str | os.PathLike[str],
    option: str,
    *,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    figure: bool = False,
) -> Path:
    """Refuse, before any work, an output file that cannot or must not be written; returns
    ``target``.

    Refused: a folder that does not exist, is not a folder or cannot be written
    (``gantt -o missing/x.png``, ``trace convert IN afile/x.swf``, a read-only place); the
    same file as one of ``inputs``, also through a symbolic or a hard link (``trace
    convert same.swf same.swf`` destroyed its input: issue-27 audit, D6); a file of a stored
    result (``gantt RUN -o RUN/run.json``, D25); with ``figure``, a name whose extension is
    not one of :data:`FIGURE_FORMATS` (:func:`figure_format`)."""
    path = Path(target)
    parent = path.parent
    if not parent.exists():
        raise O2KSimError(f"{option} {path}: the folder {parent} does not exist")
    if not parent.is_dir():
        raise O2KSimError(f"{option} {path}: {parent} is not a folder")
    if path.is_dir():
        raise O2KSimError(f"{option} {path}: is a folder; give a file name")
    for source in inputs:
        if source is not None and _same_file(path, Path(source)):
            raise O2KSimError(
                f"{option} {path}: is the input {source}; writing there would destroy it: "
                "give another file name"
            )
    refuse_result_file(path, option)
    if figure:
        figure_format(path, option)
    special = path.exists() and not path.is_file()  # a device or a pipe is written into
    if not special and not os.access(parent, os.W_OK | os.X_OK):
        cause = "Read-only file system" if _read_only(parent) else "Permission denied"
        raise O2KSimError(f"{option} {path}: cannot write in {parent} ({cause})")
    return path


MAX_INPUT_BYTES = 16 * 1024 * 1024
"""The largest configuration file read (16 MiB): the shipped ones are under 20 KiB, and a
larger one (``/dev/zero``, a trace given as a machine) is not a configuration file."""


def read_small_text(path: str | os.PathLike[str], what: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of the configuration file ``path`` (``what`` names it in messages:
    ``machine file``), read at most ``limit`` bytes: a longer file or an endless device is
    refused after ``limit`` bytes, as are a missing file, a folder and bytes that are not
    UTF-8 -- each one :class:`~o2ksim.errors.InputError` line naming the file."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(limit + 1)
    except FileNotFoundError:
        raise InputError(p, f"cannot read the {what} (no such file)") from None
    except IsADirectoryError:
        raise InputError(p, f"is a folder, not a {what}") from None
    except OSError as exc:
        raise InputError(p, f"cannot read the {what} ({_cause(exc)})") from None
    if len(raw) > limit:
        size = f"{limit // 1024**2} MiB" if limit % 1024**2 == 0 else f"{limit} bytes"
        article = "an" if what[:1] in "aeiou" else "a"
        raise InputError(p, f"larger than {size}: not {article} {what} (o2ksim reads {what}s of at most {size})")
    try:
        # a byte-order mark (Windows editors write one) is not part of the text; the SWF
        # reader skips it too
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(p, f"not UTF-8 text (a {what} is UTF-8 text)", line=line) from None


_SWF_ROW = re.compile(r"\s*-?\d+(\.\d+)?(\s+-?\d+(\.\d+)?){5,}\s*$")
"""A line of six or more numbers: an SWF job record (never valid TOML)."""


def parse_toml(text: str, where: str | os.PathLike[str], what: str) -> dict[str, Any]:
    """The TOML ``text`` of the ``what`` at ``where`` (a path, or a name such as
    ``<scenario>``) as a table.  Text that is not TOML is one :class:`ConfigError` line
    naming the file and the line where the parser stopped; when the text is an SWF trace
    (a ``;`` header line or a job record first), the line says so and where a trace goes,
    since a trace given for a scenario or a machine is the likely mistake."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        reason = f"not valid TOML: {exc}"
        first = next((line for line in text.splitlines() if line.strip()), "")
        if first.lstrip().startswith(";") or _SWF_ROW.match(first):
            reason = (
                f"is an SWF trace, not a {what} (TOML); run a trace with "
                "`o2ksim run --trace FILE`, or name it in a scenario's [workload] as trace = \"FILE\""
            )
        m = re.search(r"line (\d+)", str(exc))
        raise ConfigError(where, reason, line=int(m.group(1)) if m else None) from None


def read_toml(path: str | os.PathLike[str], what: str) -> tuple[str, dict[str, Any]]:
    """The text of the configuration file ``path`` (:func:`read_small_text`) and its TOML
    (:func:`parse_toml`); the text is kept for the line numbers of later refusals
    (:func:`~o2ksim.toml_lines.located`)."""
    text = read_small_text(path, what)
    return text, parse_toml(text, path, what)


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file (the operating system's word: device and inode,
    through symbolic and hard links); ``False`` when either does not exist."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # pragma: no cover - no statvfs
        return False


def figure_format(target: str | os.PathLike[str], option: str) -> str:
    """The format a figure is written in: its name's extension, one of
    :data:`FIGURE_FORMATS` (``-o g.svg`` is SVG; ``-o g.toml``, ``-o noext`` are refused,
    in one line naming ``option``).  A device or a pipe (``/dev/stdout``) takes PNG."""
    path = Path(target)
    if path.exists() and not path.is_file() and not path.is_dir():
        return "png"
    fmt = path.suffix.lower().removeprefix(".")
    if fmt not in FIGURE_FORMATS:
        said = f"a .{fmt} file" if fmt else "a name without an extension"
        raise O2KSimError(
            f"{option} {path}: cannot draw a figure as {said}; give a name ending in "
            + ", ".join(f".{f}" for f in FIGURE_FORMATS[:-1])
            + f" or .{FIGURE_FORMATS[-1]}"
        )
    return fmt


__all__ = [
    "FIGURE_FORMATS",
    "MAX_INPUT_BYTES",
    "atomic_path",
    "figure_format",
    "parent_folder",
    "parse_toml",
    "read_small_text",
    "read_toml",
    "write_atomically",
]
