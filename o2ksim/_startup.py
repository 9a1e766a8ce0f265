"""Start-up of a run: SimPy imported without :mod:`importlib.metadata`, and library
versions read from their installed metadata files directly.

SimPy's ``__init__`` imports :mod:`importlib.metadata` for one call,
``importlib.metadata.version("simpy")``.  That module pulls in :mod:`email`,
:mod:`zipfile`, :mod:`socket`, :mod:`tempfile` and more: about 0.025 CPU
seconds, a sixth of what a run spends importing before it reads its trace
(``benchmarks/phases.py``).  :func:`import_simpy` imports SimPy with a
stand-in for :mod:`importlib.metadata` whose ``version`` is
:func:`installed_version` -- the same answer, read from the
``simpy-X.dist-info/METADATA`` file that :mod:`importlib.metadata` would read
-- and removes the stand-in right after, so that anyone importing
:mod:`importlib.metadata` later gets the real module.  When the answer is not
certain (SimPy not installed as a ``.dist-info`` directory on ``sys.path``, or
:mod:`importlib.metadata` already imported) SimPy is imported as usual.

``o2ksim run`` calls it before it imports anything that imports SimPy;
other commands and the Python API import SimPy as usual (see
:func:`import_simpy` for why).  ``run.json``'s
library versions use :func:`installed_version` in both
(``tests/test_run_path_fast.py`` checks both against :mod:`importlib.metadata`).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import types

_NAME_SEPARATORS = re.compile(r"[-_.]+")


def installed_version(name: str) -> str | None:
    """The version of distribution ``name`` that :func:`importlib.metadata.version`
    reports, or ``None`` when this cannot tell it for certain.

    Like :mod:`importlib.metadata`, looks along ``sys.path`` for the first
    ``<name>-<version>.dist-info`` directory (names compared normalised:
    case, ``-``, ``_`` and ``.`` alike) and reads the ``Version:`` field of its
    ``METADATA``.  Anything else it meets first -- an ``.egg-info``, a
    ``.egg``, a zip file on the path -- gives ``None``.
    """
    wanted = _NAME_SEPARATORS.sub("_", name).lower()
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):  # a zip archive: leave it to importlib.metadata
                return None
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for item in names:
            stem, dot, kind = item.rpartition(".")
            if not dot or kind.lower() not in ("dist-info", "egg-info", "egg"):
                continue
            dist = _NAME_SEPARATORS.sub("_", stem.partition("-")[0]).lower()
            if dist != wanted:
                continue
            if kind.lower() != "dist-info":
                return None
            return _metadata_version(os.path.join(folder, item, "METADATA"))
    return None


def _metadata_version(path: str) -> str | None:
    """The ``Version:`` header of a core-metadata file (the headers end at the first blank line)."""
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    break
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() == "version":
                    return value.strip()
    except OSError:
        return None
    return None


def import_simpy() -> None:
    """Import SimPy with a stand-in for :mod:`importlib.metadata` (see the module docstring).

    Only ``o2ksim run`` calls it, before it imports anything that imports SimPy: the
    stand-in is in :data:`sys.modules` while SimPy imports, and in a process
    that already runs other threads one of them could import
    :mod:`importlib.metadata` in that moment and keep the stand-in.  A command
    line process has no other thread yet; the Python API imports SimPy as usual.
    """
    if "simpy" in sys.modules or "importlib.metadata" in sys.modules:
        return
    version = installed_version("simpy")
    if version is None:
        return  # the engine imports SimPy as usual

    def simpy_version(name: str) -> str:
        if _NAME_SEPARATORS.sub("_", name).lower() != "simpy":
            raise LookupError(f"o2ksim's stand-in for importlib.metadata knows only simpy, not {name}")
        return version

    stand_in = types.ModuleType("importlib.metadata", "o2ksim's stand-in while SimPy is imported")
    stand_in.version = simpy_version  # type: ignore[attr-defined]
    sys.modules["importlib.metadata"] = stand_in
    importlib.metadata = stand_in  # what `import importlib.metadata` binds
    try:
        import simpy  # noqa: F401
    except Exception:  # e.g. a SimPy that wants more of importlib.metadata than its version
        sys.modules.pop("simpy", None)  # the engine's own `import simpy` then runs as usual
    finally:
        del sys.modules["importlib.metadata"]
        del importlib.metadata

