"""Scheduling policies: pure decision objects registered by name.

Every policy module in this package registers its kinds in :data:`POLICIES`
(``POLICIES.register(MyPolicy)``, the shared :class:`o2ksim.registry.Registry`),
so a new built-in policy is its module, its preset (``policies/*.toml``), its
test and its doc page: nothing lists the built-ins.  The modules are imported
when a kind is first asked for, not with the package: a lookup imports this
package's modules in name order until the kind is registered (``backfill``
first, so FCFS and the backfill family import nothing else); a listing
(:meth:`~o2ksim.registry.Registry.entries`) or an unknown kind imports them
all.  A user's class registered under a built-in kind's name replaces the
built-in for good, whether the built-in module was imported before or is
imported later.  Presets (TOML files in ``policies/``) configure a kind under
a new name.
"""

import importlib
import pkgutil

from o2ksim.policies.base import (
    POLICIES,
    Param,
    Policy,
    Preset,
    load_preset,
    make_policy,
    presets,
)
from o2ksim.registry import Registry


def _load(kind: str | None) -> None:
    """Import this package's policy modules, in name order, until ``kind`` is
    registered (``None``: all of them)."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        importlib.import_module(f"{__name__}.{info.name}")
        if kind is not None and POLICIES.is_registered(kind):
            return


POLICIES.set_loader(_load)

__all__ = [
    "POLICIES",
    "Param",
    "Policy",
    "Preset",
    "Registry",
    "load_preset",
    "make_policy",
    "presets",
]
