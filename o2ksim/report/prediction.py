"""``o2ksim report`` on an ``o2ksim predict`` directory: the prediction page rebuilt from its files.

The page itself is :mod:`o2ksim.prediction.page` (``PredictionResult.save``
writes it too); its names are importable from here.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.files import atomic_path
from o2ksim.outfiles import claim
from o2ksim.outkinds import is_prediction_dir, report_place
from o2ksim.prediction.model import load_clm
from o2ksim.prediction.page import prediction_page, write_prediction_page

__all__ = [
    "is_prediction_dir",
    "prediction_page",
    "write_prediction_page",
    "write_prediction_report",
]


def write_prediction_report(
    results_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None
) -> Path:
    """``o2ksim report`` on an ``o2ksim predict`` directory: the page rebuilt from its files."""
    src = Path(results_dir)
    out, _ = report_place(src, out_dir)
    # the page goes into the prediction's folder or one holding no other command's result
    with claim(out, option="", kind="prediction"):
        return _write_prediction_report(src, out)


def _write_prediction_report(src: Path, out: Path) -> Path:
    summary = json.loads((src / "summary.json").read_text())
    if not isinstance(summary, dict) or not isinstance(summary.get("config"), dict):
        # a run's summary.json beside a prediction's tables (a folder an earlier o2ksim let
        # two commands write): one line, not a KeyError
        raise O2KSimError(
            f"{src / 'summary.json'}: not a prediction's summary (no config): the folder mixes "
            "the files of two commands; run `o2ksim predict` again into an empty folder"
        )

    def csv(name: str) -> pd.DataFrame | None:
        return pd.read_csv(src / name) if (src / name).exists() else None

    medians = csv("medians.csv")
    result = SimpleNamespace(
        config=summary["config"],
        summary=csv("summary.csv"),
        by_need=csv("by_need.csv"),
        clm=load_clm(src / "clm.toml"),
        medians=None if medians is None else medians.set_index(medians.columns[0]),
        another_time=csv("another_time.csv"),
    )
    fig = src / "fig4.png"
    if fig.exists() and out.resolve() != src.resolve():
        with atomic_path(out / "fig4.png") as tmp:  # each file whole or not at all
            shutil.copyfile(fig, tmp)
    path = out / "prediction.html"
    with atomic_path(path) as tmp:
        tmp.write_text(prediction_page(result, out / "fig4.png"))
    return path
