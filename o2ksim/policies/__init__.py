"""Scheduling policies: pure decision objects registered by name.

Every policy module in this package registers its kinds in :data:`POLICIES`
(``POLICIES.register(MyPolicy)``), so a new policy is one new module.  The
modules are imported when a kind is first asked for, not with the package: a
run imports the one module its policy needs (the built-in kinds are listed in
:data:`BUILTIN_KINDS`; any other kind, and :meth:`Registry.kinds
<o2ksim.policies.base.Registry.kinds>`, import every module of the package).
A user's class registered under a built-in kind's name replaces the built-in
for good, whether the built-in module was imported before or is imported
later (:meth:`Registry.register <o2ksim.policies.base.Registry.register>`).
Presets (TOML files in ``policies/``) configure a kind under a new name.
"""

import importlib
import pkgutil

from o2ksim.policies.base import (
    POLICIES,
    Param,
    Policy,
    Preset,
    Registry,
    load_preset,
    make_policy,
    presets,
)

BUILTIN_KINDS = {
    "fcfs": "backfill",
    "backfill": "backfill",
    "eqspatial": "eqspatial",
    "ncsa-lsf": "lsf",
    "goal": "goal",
}
"""Module (in this package) of each built-in policy kind, imported on first use."""


def _load(kind: str | None) -> None:
    """Import the module registering ``kind``; every policy module when ``kind`` is
    ``None`` or not built in."""
    if kind in BUILTIN_KINDS:
        importlib.import_module(f"{__name__}.{BUILTIN_KINDS[kind]}")
        return
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name not in ("base", "priority"):
            importlib.import_module(f"{__name__}.{info.name}")


POLICIES.set_loader(_load)

__all__ = [
    "BUILTIN_KINDS",
    "POLICIES",
    "Param",
    "Policy",
    "Preset",
    "Registry",
    "load_preset",
    "make_policy",
    "presets",
]
