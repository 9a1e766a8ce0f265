"""User code named in a configuration: ``"module:Name"`` and ``"path/to/file.py:Name"``.

Policies and priorities can live in the user's own code.  A configuration
names them as ``"module:Name"`` (an importable module, e.g. ``mysched:MyPolicy``)
or ``"file.py:Name"`` (a Python file).  The module is looked for, in order, on
``sys.path``, in the current working directory and in the extra directories
given (the scenario file's directory): the ``o2ksim`` command's own
``sys.path`` does not hold the working directory, but users expect a
``mysched.py`` next to their scenario or in their shell's directory to be
found.  When the import fails the error names the real cause (the
``ImportError`` raised inside the user's module, not "unknown name").

User code can also be *registered* in the running process
(:func:`~o2ksim.policies.priority.register_priority`, ``POLICIES.register``),
e.g. in a notebook; a sweep ships those registrations to its workers
(:mod:`o2ksim.experiments.workers`).  This module is part of the core: it
imports nothing but the errors, so the policies can use it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from o2ksim.errors import O2KSimError


class PluginError(O2KSimError):
    """User code named in a configuration cannot be loaded (the message says why)."""


def is_object_spec(text: Any) -> bool:
    """Whether ``text`` looks like ``"module:Name"`` (and not a Windows drive or URL)."""
    if not isinstance(text, str) or ":" not in text:
        return False
    module, _, attr = text.rpartition(":")
    return bool(module) and attr.isidentifier() and len(module) > 1


@contextmanager
def _on_path(dirs: Iterable[str]) -> Iterator[None]:
    added = [d for d in dict.fromkeys(dirs) if d not in sys.path]
    sys.path[len(sys.path) :] = added  # after the user's own path: theirs wins
    try:
        yield
    finally:
        for d in added:
            with suppress(ValueError):
                sys.path.remove(d)


def _search_dirs(search: Iterable[str | os.PathLike[str]]) -> list[str]:
    return [os.getcwd(), *(str(Path(s).resolve()) for s in search)]


def _module_file(module: str, dirs: Iterable[str]) -> Path | None:
    """``module``'s file in one of ``dirs`` (``a.b`` -> ``a/b.py`` or ``a/b/__init__.py``)."""
    if module.endswith(".py") or "/" in module or os.sep in module:
        p = Path(module)
        candidates = [p] if p.is_absolute() else [Path(d) / p for d in dirs]
        return next((c.resolve() for c in candidates if c.is_file()), None)
    rel = Path(*module.split("."))
    for d in dirs:
        for c in (Path(d) / rel.with_suffix(".py"), Path(d) / rel / "__init__.py"):
            if c.is_file():
                return c.resolve()
    return None


def resolve_spec(text: str, search: Iterable[str | os.PathLike[str]] = ()) -> str:
    """``text`` with a module found in the working directory or ``search`` made an absolute file.

    Used when a scenario is read, so that its runs (a JSON configuration)
    find the module in any worker process, whatever that worker's directory.
    Importable modules (installed packages) and unknown ones are left as they are.
    """
    if not is_object_spec(text):
        return text
    module, _, attr = text.rpartition(":")
    if not (module.endswith(".py") or "/" in module):
        try:
            if importlib.util.find_spec(module.split(".")[0]) is not None:
                return text
        except (ImportError, ValueError):
            return text
    found = _module_file(module, _search_dirs(search))
    return f"{found}:{attr}" if found is not None else text


def load_object(text: str, *, what: str, search: Iterable[str | os.PathLike[str]] = ()) -> Any:
    """The object ``"module:Name"`` or ``"file.py:Name"`` names (see the module docstring).

    ``what`` (e.g. ``"policy"``) is used in error messages.  Raises
    :class:`PluginError` with the real cause when the module
    cannot be imported or has no such name.
    """
    module, _, attr = text.rpartition(":")
    if not module or not attr:
        raise PluginError(f"'{text}' is not 'module:Name'")
    dirs = _search_dirs(search)
    path = None
    if module.endswith(".py") or "/" in module or os.sep in module:
        path = _module_file(module, dirs)
        if path is None:
            raise PluginError(f"cannot load {what} '{text}': no file {module} "
                f"(looked in {', '.join(dirs)})")  # fmt: skip
    try:
        if path is not None:
            mod = _import_file(path)
        else:
            with _on_path(dirs):
                mod = importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if path is None and missing == module.split(".")[0] and module.split(".")[0] == module:
            reason = f"no module named '{module}' (looked on sys.path and in {', '.join(dirs)})"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        raise PluginError(f"cannot import {what} '{text}': {reason}") from None
    except Exception as exc:  # the user's module itself failed while importing
        raise PluginError(
            f"cannot import {what} '{text}': the module raised {type(exc).__name__}: {exc}"
        ) from None
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise PluginError(f"cannot import {what} '{text}': module '{mod.__name__}' has no '{attr}'") from None  # fmt: skip


def _import_file(path: Path) -> Any:
    """Import a Python file once per process (its directory is on the path while it runs)."""
    name = f"o2ksim_user_{path.stem}_{abs(hash(str(path))):x}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        with _on_path([str(path.parent)]):
            spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    return mod


__all__ = [
    "PluginError",
    "is_object_spec",
    "load_object",
    "resolve_spec",
]
