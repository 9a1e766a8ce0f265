"""Build hook: an optional compiled build of the simulation's hot modules (mypyc).

``setup.cfg`` holds the package metadata; this file only adds the compiled
extensions, and only when asked for with ``O2KSIM_COMPILE=1``::

    O2KSIM_COMPILE=1 pip install --no-build-isolation .    # mypy (mypyc) and a C compiler needed

(``make install-fast`` does this into ``.venv-fast``.)  Without the variable,
``pip install .`` / ``pip install -e .`` build the pure-Python package exactly
as before: mypyc is not imported and no compiler is needed.  The compiled
build runs the same code, so it gives the same schedules; see "Compiled core"
in docs/guides/performance.md for what is compiled, why the rest is not, and
the caveats (install it non-editable: an extension module next to an edited
``.py`` file would silently shadow it).
"""

from __future__ import annotations

import os

from setuptools import setup

# The modules a run spends its time in (the engine's event loop and the backfill family's
# passes); o2ksim/build.py lists them too, for ``o2ksim --version`` (a test checks they agree).
# Not compiled: engine/simpy_parts.py and engine/errors.py (subclasses of SimPy's
# and of built-in classes, which compiled classes cannot be), engine/snapshot.py (builds its
# frozen dataclasses through slot descriptors), engine/contract.py (a runtime-checkable
# Protocol), policies/profile.py (ArrayProfile keeps numpy arrays where Profile keeps lists),
# policies/base.py (the Policy base class that user policies subclass) and policies/priority.py
# (user priority functions and classes, registered and pickled for worker processes).
COMPILED_MODULES = [
    "o2ksim/engine/core.py",
    "o2ksim/engine/decisions.py",
    "o2ksim/engine/queue_index.py",
    "o2ksim/engine/releases.py",
    "o2ksim/jobs.py",
    "o2ksim/policies/backfill.py",
    "o2ksim/policies/shadow.py",
]


def _compile_requested() -> bool:
    return os.environ.get("O2KSIM_COMPILE", "").strip().lower() in ("1", "yes", "true")


def _extensions() -> list:
    if not _compile_requested():
        return []
    try:
        from mypyc.build import mypycify  # only for the compiled build: mypy is a build need then
    except ImportError as exc:
        raise SystemExit(
            "O2KSIM_COMPILE=1 needs mypy (mypyc) where o2ksim is built: pip install mypy, then "
            "O2KSIM_COMPILE=1 pip install --no-build-isolation . (or: make install-fast)"
        ) from exc
    return mypycify(COMPILED_MODULES, opt_level="3")


setup(ext_modules=_extensions())
