"""o2ksim: a SimPy simulator of parallel-job scheduling on the NCSA Origin 2000 and beyond.

The API in one call::

    from o2ksim import simulate
    result = simulate("traces/kth-sp2-sample.swf", policy="fcfs-backfill")
    result.jobs        # one row per job (pandas DataFrame)
    result.summary     # overall measures (dict)

Other names are imported on first use so that the command line starts fast.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Result": ("o2ksim.simulate", "Result"),
    "load_machine": ("o2ksim.machine", "load_machine"),
    "make_policy": ("o2ksim.policies", "make_policy"),
    "predict": ("o2ksim.prediction", "predict"),
    "read_swf": ("o2ksim.workloads.swf", "read_swf"),
    "write_swf": ("o2ksim.workloads.swf", "write_swf"),
    "Window": ("o2ksim.workloads.transforms", "Window"),
}

__all__ = ["__version__", "simulate", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'o2ksim' has no attribute {name!r}")


# Imported eagerly: the function must shadow the submodule of the same name.
from o2ksim.simulate import simulate  # noqa: E402
