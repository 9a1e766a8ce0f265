"""Queue-time prediction (Downey, IPPS 1997): the conditional lifetime model, predictors A and B,
and their evaluation against o2ksim's simulated schedules.

>>> from o2ksim.prediction import predict            # doctest: +SKIP
>>> r = predict("SDSC-Par-1996-3.1-cln.swf.gz", partition="batch", classes="sdsc-paragon")  # doctest: +SKIP
>>> r.summary                                       # doctest: +SKIP

Modules: :mod:`~o2ksim.prediction.model` (CLM algebra and fit),
:mod:`~o2ksim.prediction.classes` (job classes: queues, rules, partitions),
:mod:`~o2ksim.prediction.predictors` (A, B, combined, whole-queue),
:mod:`~o2ksim.prediction.replay` (the events of a schedule),
:mod:`~o2ksim.prediction.scoring` (predictions and their accuracy),
:mod:`~o2ksim.prediction.evaluate` (the whole trace-driven evaluation),
:mod:`~o2ksim.prediction.plot` (D Fig. 4), :mod:`~o2ksim.prediction.page` (the HTML page).

The model and the predictors are plain algebra that a workload generator uses
too (:mod:`o2ksim.workloads.downey` fits the CLM), while the evaluation runs
the simulator and writes the report (a higher layer).  So that importing the
algebra loads neither, this package imports nothing itself: the names below
are imported from their modules on first use (PEP 562); type checkers see
them as ``Any`` here, with their real types in the defining modules.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "CLM": "model",
    "ClassFit": "model",
    "PredictionResult": "evaluate",
    "accuracy": "scoring",
    "combined": "predictors",
    "fit_class": "model",
    "fit_clm": "model",
    "load_clm": "model",
    "parse_class_rule": "model",
    "predict": "evaluate",
    "predict_a": "predictors",
    "predict_b": "predictors",
    "whole_queue": "predictors",
}
"""Public name -> the module of this package that defines it."""

__all__ = [
    "CLM",
    "ClassFit",
    "PredictionResult",
    "accuracy",
    "combined",
    "fit_class",
    "fit_clm",
    "load_clm",
    "parse_class_rule",
    "predict",
    "predict_a",
    "predict_b",
    "whole_queue",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (a lazy registry, see above)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
