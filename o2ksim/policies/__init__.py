"""Scheduling policies: pure decision objects registered by name.

Importing this package registers the built-in kinds in :data:`POLICIES`.
Presets (TOML files in ``policies/``) configure a kind under a new name.
"""

from o2ksim.policies import backfill as _backfill  # noqa: F401  (registers fcfs, backfill)
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
