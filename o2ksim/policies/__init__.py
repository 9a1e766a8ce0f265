"""Scheduling policies: pure decision objects registered by name.

Importing this package imports every policy module in it, and each module
registers its kinds in :data:`POLICIES` (``POLICIES.register(MyPolicy)``), so a
new policy is one new module.  Presets (TOML files in ``policies/``) configure
a kind under a new name.
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

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_") and _info.name not in ("base", "priority"):
        importlib.import_module(f"{__name__}.{_info.name}")

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
