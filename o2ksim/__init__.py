"""o2ksim: a SimPy simulator of parallel-job scheduling on the NCSA Origin 2000 and beyond.

The API in one call::

    from o2ksim import simulate
    result = simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")
    result.jobs        # one row per job (pandas DataFrame)
    result.summary     # overall measures (dict)

Every name, ``simulate`` included, is imported on first use, so ``import
o2ksim`` (and the command line) starts without numpy, pandas or SimPy.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Result": ("o2ksim.simulate", "Result"),
    "RunConfig": ("o2ksim.runconfig", "RunConfig"),
    "run_config": ("o2ksim.simulate", "run_config"),
    "load_machine": ("o2ksim.machine", "load_machine"),
    "make_policy": ("o2ksim.policies", "make_policy"),
    "predict": ("o2ksim.prediction", "predict"),
    "read_swf": ("o2ksim.workloads.swf", "read_swf"),
    "write_swf": ("o2ksim.workloads.swf", "write_swf"),
    "Window": ("o2ksim.workloads.transforms", "Window"),
    "compare": ("o2ksim.report.compare", "compare"),
    "timeline": ("o2ksim.report.compare", "timeline"),
}

__all__ = ["__version__", "simulate", *_LAZY]


def __getattr__(name: str) -> Any:
    import importlib

    if name == "simulate":
        importlib.import_module("o2ksim.simulate")  # binds the function (see _Package)
        return sys.modules[__name__].__dict__["simulate"]
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'o2ksim' has no attribute {name!r}")


class _Package(types.ModuleType):
    """The ``o2ksim`` package: ``o2ksim.simulate`` is the function, never the submodule.

    Importing the submodule ``o2ksim.simulate`` makes Python bind it as an
    attribute of the package; this binds the function of that name instead.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "simulate" and isinstance(value, types.ModuleType):
            value = value.simulate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
