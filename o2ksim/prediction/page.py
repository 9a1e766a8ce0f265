"""The queue-time prediction page (D Fig. 4, the summary and the fitted model) as one HTML file.

Written next to the tables by :meth:`o2ksim.prediction.PredictionResult.save`
(``prediction.html``); the figure is embedded as base64 so the page stands alone.
It lives with the prediction code, not in :mod:`o2ksim.report`, because
``PredictionResult.save`` writes it: the report layer (``o2ksim report`` on a
prediction directory, :mod:`o2ksim.report.prediction`) uses it from here.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["prediction_page", "write_prediction_page"]

_COLUMNS = [
    "kind",
    "predictor",
    "events",
    "no_prediction",
    "cc",
    "cc_log",
    "median_abs_error",
    "median_actual",
]


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, float_format=lambda v: f"{v:.3g}", border=0, classes="t")


def prediction_page(result: Any, figure_png: Path | None = None) -> str:
    """The HTML text of the page for a :class:`~o2ksim.prediction.PredictionResult`."""
    c = result.config
    parts = [
        "<!doctype html><meta charset='utf-8'><title>o2ksim queue-time prediction</title>",
        "<style>body{font-family:sans-serif;max-width:70em;margin:1em auto}"
        "table.t{border-collapse:collapse}table.t td,table.t th{padding:2px 8px;border-bottom:1px solid #ddd}</style>",
        "<h1>Queue-time prediction (Downey, IPPS 1997)</h1>",
        f"<p>{html.escape(str(c['trace']))}: {c['jobs']} jobs"
        f"{' of partition ' + html.escape(str(c['partition'])) if c.get('partition') else ''} on "
        f"{c['procs']} processors under {html.escape(c['policy'])}; classes {html.escape(c['classes'])}; "
        f"{c['head_events']} waits at the head of the queue; combined predictor: A below n' = {c['threshold']:g}.</p>",
        "<h2>Accuracy</h2>",
        _table(result.summary[[k for k in _COLUMNS if k in result.summary]]),
    ]
    if figure_png is not None and figure_png.exists():
        data = base64.b64encode(figure_png.read_bytes()).decode()
        parts += [
            "<h2>Predicted against actual (D Fig. 4)</h2>",
            "<p>Grey: identity; solid: mean of the actual times per column; dashed: median.</p>",
            f"<img alt='scatter of predicted and actual queue times' src='data:image/png;base64,{data}' style='max-width:100%'>",
        ]
    parts += ["<h2>CC per range of n' (D§5.3)</h2>", _table(result.by_need)]
    parts += ["<h2>Conditional lifetime model (D Table 1)</h2>", _table(result.clm.table())]
    if result.medians is not None:
        parts += [
            "<h2>Model medians per period (D Table 5), seconds</h2>",
            result.medians.to_html(float_format=lambda v: f"{v:.0f}", border=0, classes="t"),
        ]
    if result.another_time is not None:
        pooled = result.another_time[result.another_time["interval"] == "pooled"]
        parts += [
            "<h2>Another time (D§6.1): same-interval against previous-interval parameters</h2>",
            _table(pooled),
        ]
    return "\n".join(parts) + "\n"


def write_prediction_page(result: Any, out_dir: Path) -> Path:
    """Write ``prediction.html`` into ``out_dir`` (which holds ``fig4.png`` when drawn)."""
    path = Path(out_dir) / "prediction.html"
    path.write_text(prediction_page(result, Path(out_dir) / "fig4.png"))
    return path
