"""Where o2ksim finds its shipped data: machine files (``hosts/``) and policy presets (``policies/``).

Search order for a kind of data (``"hosts"`` or ``"policies"``):

1. ``$O2KSIM_DATA/<kind>`` when the environment variable is set;
2. ``<kind>/`` at the root of a source checkout (editable installs, running from git);
3. ``<sys.prefix>/share/o2ksim/<kind>`` where ``pip install .`` puts them.

A name given on the command line (``--machine o2k``) is looked up as
``<name>.toml`` in these directories; anything containing a path separator or
ending in ``.toml`` is taken as a path.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from o2ksim.errors import O2KSimError

PACKAGE_DIR = Path(__file__).resolve().parent


def data_dirs(kind: str) -> list[Path]:
    """Existing directories holding data of ``kind``, most specific first."""
    candidates = []
    env = os.environ.get("O2KSIM_DATA")
    if env:
        candidates.append(Path(env) / kind)
    candidates.append(PACKAGE_DIR.parent / kind)
    candidates.append(Path(sys.prefix) / "share" / "o2ksim" / kind)
    seen: list[Path] = []
    for c in candidates:
        if c.is_dir() and c not in seen:
            seen.append(c)
    return seen


def available(kind: str) -> dict[str, Path]:
    """Every ``<name>.toml`` of ``kind`` by name (the first directory wins)."""
    found: dict[str, Path] = {}
    for d in data_dirs(kind):
        for f in sorted(d.glob("*.toml")):
            found.setdefault(f.stem, f)
    return found


def resolve(kind: str, name_or_path: str | os.PathLike[str]) -> Path:
    """Turn a name (``o2k``) or a path (``hosts/o2k.toml``) into an existing file path."""
    if not isinstance(name_or_path, str | os.PathLike):
        what = {"hosts": "machine", "policies": "policy"}.get(kind, kind)
        raise O2KSimError(f"expected a {what} name or a TOML path, got {name_or_path!r}")
    text = os.fspath(name_or_path)
    path = Path(text)
    if path.suffix == ".toml" or os.sep in text or (os.altsep and os.altsep in text):
        if not path.exists():
            raise O2KSimError(f"{text}: no such file")
        if path.is_dir():
            raise O2KSimError(f"{text}: is a directory, not a {kind[:-1]} file")
        return path
    # a bare name is a shipped name first: a file or directory of that name in
    # the working directory (say a results folder o2k/) must not shadow hosts/o2k.toml
    known = available(kind)
    if text in known:
        return known[text]
    if path.is_file():
        return path
    names = ", ".join(sorted(known)) or "none found"
    what = {"hosts": "machine", "policies": "policy", "scenarios": "scenario"}.get(kind, kind)
    raise O2KSimError(f"unknown {what} '{text}' (known: {names})")
