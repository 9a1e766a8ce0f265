"""o2ksim: a SimPy simulator of parallel-job scheduling on the NCSA Origin 2000 and beyond.

The API in one call::

    from o2ksim import simulate
    result = simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")
    result.jobs        # one row per job (pandas DataFrame)
    result.summary     # overall measures (dict)

The names below live in the package's upper layers (``o2ksim.run.api``,
``o2ksim.report.compare``, ...); each is imported on first use, so ``import
o2ksim`` (which every submodule does, for ``__version__``) loads none of
them, nor numpy, pandas or SimPy.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "simulate": "o2ksim.run.api",
    "run_config": "o2ksim.run.api",
    "Result": "o2ksim.run.results",
    "RunConfig": "o2ksim.run.config",
    "load_machine": "o2ksim.machine",
    "make_policy": "o2ksim.policies",
    "predict": "o2ksim.prediction",
    "read_swf": "o2ksim.workloads.swf",
    "write_swf": "o2ksim.workloads.swf",
    "Window": "o2ksim.workloads.transforms",
    "compare": "o2ksim.report.compare",
    "timeline": "o2ksim.report.compare",
    "validate": "o2ksim.analysis.validate",
}
"""Public name -> the module defining it (a lazy registry: imported on first use)."""

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use (PEP 562)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'o2ksim' has no attribute {name!r}")
