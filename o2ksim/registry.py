"""Named things users choose by name: one registry mechanism for policies, priorities and workload models.

A :class:`Registry` maps a name to an object (a policy class, a priority
factory, a workload model module).  The same three rules hold for all of them:

* **Built-ins load on first use.**  A registry may be given a *loader*:
  ``loader(name)`` imports the module(s) that register ``name`` when it is
  asked for and not registered yet (``loader(None)``: every built-in, for a
  listing).  So a run imports the one policy module it needs, and a new
  built-in is one new module, found by its package's module listing or its
  preset -- no central table to edit.
* **Users may add and replace.**  :meth:`Registry.register` (or
  ``registry[name] = obj``) adds a user's entry.  A user's entry under a
  built-in name wins for good: a built-in module imported *later* leaves it in
  place, as if every built-in had been registered first.
* **The user's entries can travel.**  :meth:`Registry.user_entries` lists what
  was registered from outside o2ksim (a notebook's priority function, a
  script's policy class), which a sweep ships to its worker processes
  (:mod:`o2ksim.experiments.workers`).

An entry is *built-in* when it was given to the constructor, or registered
with ``builtin=True``, or (by default) when the registered object is defined
in o2ksim itself (its ``__module__`` is ``o2ksim`` or ``o2ksim.*``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar, overload

from o2ksim.errors import O2KSimError

T = TypeVar("T")


class UnknownName(O2KSimError, KeyError):
    """A name no entry of the registry has (the message lists the known ones)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def defined_in_o2ksim(obj: Any) -> bool:
    """Whether ``obj`` is defined in o2ksim itself (not in a user's script, notebook or package)."""
    module = getattr(obj, "__module__", None) or ""
    return module == "o2ksim" or module.startswith("o2ksim.")


class Registry(Generic[T]):
    """Name -> object, with lazily loaded built-ins and user entries that take precedence.

    ``what`` names the kind of thing in error messages (``"policy kind"``);
    ``builtins`` are entries known from the start; ``key(obj)`` gives the name
    an object registers under when none is given (a policy class's ``kind``);
    ``loader`` is described in the module docstring.

    It reads like a dictionary (``name in reg``, ``reg[name]``, ``len``,
    iteration over names, ``del reg[name]``, ``reg.update(...)``);
    :meth:`get` raises :class:`UnknownName` (an :class:`~o2ksim.errors.O2KSimError`)
    with the known names instead of returning ``None``.
    """

    def __init__(
        self,
        what: str,
        builtins: Mapping[str, T] | None = None,
        *,
        key: Callable[[T], str] | None = None,
        loader: Callable[[str | None], None] | None = None,
    ) -> None:
        self.what = what
        self._entries: dict[str, T] = dict(builtins or {})
        self._builtin: set[str] = set(self._entries)
        self._key = key
        self._loader = loader
        self._loaded_all = False

    # ------------------------------------------------------------------------------ loading
    def set_loader(self, loader: Callable[[str | None], None]) -> None:
        """Set the function that imports built-in modules on first use (see the module docstring)."""
        self._loader = loader
        self._loaded_all = False

    def _load(self, name: str | None) -> None:
        if self._loader is None or (name is None and self._loaded_all):
            return
        self._loader(name)
        if name is None:
            self._loaded_all = True

    # --------------------------------------------------------------------------- registering
    @overload
    def register(self, obj: T, name: str | None = None, *, builtin: bool | None = None) -> T: ...

    @overload
    def register(
        self, obj: None = None, name: str | None = None, *, builtin: bool | None = None
    ) -> Callable[[T], T]: ...

    def register(
        self, obj: T | None = None, name: str | None = None, *, builtin: bool | None = None
    ) -> T | Callable[[T], T]:
        """Register ``obj`` under ``name`` (default ``key(obj)``); usable as a decorator.

        ``builtin`` defaults to whether ``obj`` is defined in o2ksim.  A
        built-in never replaces a user's entry of the same name (built-in
        modules load lazily, possibly after the user registered).
        """
        if obj is None:
            return lambda o: self.register(o, name, builtin=builtin)
        if name is None:
            if self._key is None:
                raise ValueError(f"a {self.what} needs a name")
            name = self._key(obj)
        if not name:
            raise ValueError(f"{obj!r} has no {self.what} name")
        is_builtin = defined_in_o2ksim(obj) if builtin is None else builtin
        if is_builtin and name in self._entries and name not in self._builtin:
            return obj  # the user's entry stays
        self._entries[name] = obj
        if is_builtin:
            self._builtin.add(name)
        else:
            self._builtin.discard(name)
        return obj

    def __setitem__(self, name: str, obj: T) -> None:
        """A user's entry (``registry[name] = obj``)."""
        self.register(obj, name, builtin=False)

    def __delitem__(self, name: str) -> None:
        del self._entries[name]
        self._builtin.discard(name)

    def update(self, entries: Mapping[str, T]) -> None:
        """Add the user's ``entries`` (as ``registry[name] = obj`` for each)."""
        for name, obj in entries.items():
            self[name] = obj

    # -------------------------------------------------------------------------------- reading
    def get(self, name: str) -> T:
        """The entry ``name`` (importing its built-in module first if needed).

        Raises :class:`UnknownName` listing the known names.
        """
        if name not in self._entries:
            self._load(name)
        try:
            return self._entries[name]
        except KeyError:
            self._load(None)
            raise UnknownName(
                f"unknown {self.what} '{name}' (known: {', '.join(sorted(self._entries))})"
            ) from None

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name not in self._entries:
            self._load(name)
        return name in self._entries

    def is_registered(self, name: str) -> bool:
        """Whether ``name`` has an entry now (without loading anything): for loaders."""
        return name in self._entries

    def entries(self) -> dict[str, T]:
        """Every entry, built-ins loaded, by name (a copy)."""
        self._load(None)
        return dict(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self.entries())

    def names(self) -> list[str]:
        """Every name, sorted."""
        return sorted(self.entries())

    def builtin_names(self) -> frozenset[str]:
        """The names whose current entry is a built-in."""
        self._load(None)
        return frozenset(self._builtin)

    def user_entries(self) -> dict[str, T]:
        """The entries registered from outside o2ksim (what a sweep ships to its workers)."""
        return {n: obj for n, obj in self._entries.items() if n not in self._builtin}

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {sorted(self._entries)})"


__all__ = ["Registry", "UnknownName", "defined_in_o2ksim"]
