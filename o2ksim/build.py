"""Which build of o2ksim is installed: plain Python, or the optional compiled core.

The compiled build (``make install-fast``; setup.py, docs/guides/performance.md,
"Compiled core") compiles :data:`COMPILED_MODULES` with mypyc into extension
modules installed next to their ``.py`` files, which Python then imports
instead.  Found by looking for those files (nothing is imported), so it is
cheap enough for ``o2ksim --version``, which reports it.
"""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

# The modules setup.py compiles (a test checks the two lists agree).
COMPILED_MODULES = (
    "o2ksim.engine.core",
    "o2ksim.engine.decisions",
    "o2ksim.engine.queue_index",
    "o2ksim.engine.releases",
    "o2ksim.jobs",
    "o2ksim.policies.backfill",
    "o2ksim.policies.shadow",
)

_PACKAGE_DIR = Path(__file__).resolve().parent


def compiled_modules() -> list[str]:
    """The modules of :data:`COMPILED_MODULES` that this installation imports compiled."""
    found = []
    for name in COMPILED_MODULES:
        stem = _PACKAGE_DIR.parent.joinpath(*name.split("."))
        if any(stem.with_name(stem.name + suffix).is_file() for suffix in EXTENSION_SUFFIXES):
            found.append(name)
    return found


def build_name() -> str:
    """``"compiled"``, ``"pure Python"``, or ``"partly compiled (k of n modules)"``."""
    k, n = len(compiled_modules()), len(COMPILED_MODULES)
    if k == 0:
        return "pure Python"
    if k == n:
        return "compiled"
    return f"partly compiled ({k} of {n} modules)"
