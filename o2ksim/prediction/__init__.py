"""Queue-time prediction (Downey, IPPS 1997): the conditional lifetime model, predictors A and B,
and their evaluation against o2ksim's simulated schedules.

>>> from o2ksim.prediction import predict            # doctest: +SKIP
>>> r = predict("SDSC-Par-1996-3.1-cln.swf.gz", partition="batch", classes="sdsc-paragon")  # doctest: +SKIP
>>> r.summary                                       # doctest: +SKIP

Modules: :mod:`~o2ksim.prediction.model` (CLM algebra and fit),
:mod:`~o2ksim.prediction.predictors` (A, B, combined, whole-queue),
:mod:`~o2ksim.prediction.evaluate` (trace-driven evaluation),
:mod:`~o2ksim.prediction.plot` (D Fig. 4).
"""

from __future__ import annotations

from o2ksim.prediction.evaluate import PredictionResult, accuracy, predict
from o2ksim.prediction.model import CLM, ClassFit, fit_class, fit_clm, load_clm, parse_class_rule
from o2ksim.prediction.predictors import combined, predict_a, predict_b, whole_queue

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
