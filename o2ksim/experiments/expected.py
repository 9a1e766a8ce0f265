"""Expected summaries: the measures of a scenario's reduced runs, pinned in ``scenarios/expected/<name>.csv``.

``o2ksim scenario check`` runs a scenario's ``[reduced]`` form and compares
its summary table with the pinned one (:func:`compare_expected`); ``--update``
writes it again (:func:`write_expected`).  CI runs the check on every shipped
scenario, so a change of schedule shows up as a named difference.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.experiments.scenario import Scenario

EXPECTED_METRICS = (
    "jobs", "completed", "rejected", "mean_wait", "p95_wait", "max_wait", "mean_slowdown",
    "max_bounded_slowdown", "utilisation",
)  # fmt: skip
"""Measures pinned in ``scenarios/expected/<name>.csv`` (the reduced runs CI checks)."""


def expected_path(scenario: Scenario) -> Path:
    """``expected/<name>.csv`` next to the scenario file."""
    if scenario.path is None:
        raise O2KSimError("a scenario given as text has no expected-summary file")
    return Path(scenario.path).parent / "expected" / f"{scenario.name}.csv"


def expected_table(table: pd.DataFrame, factors: Sequence[str]) -> pd.DataFrame:
    """The pinned part of a summary table: factor levels (as text), status and measures."""
    out = pd.DataFrame({f: [_level_text(v) for v in table[f]] for f in factors})
    out["status"] = table["status"].to_numpy()
    for k in EXPECTED_METRICS:
        out[k] = table[k].to_numpy(dtype=float, na_value=math.nan)
    return out.sort_values(list(factors), ignore_index=True)


def _level_text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True)


def write_expected(path: Path, table: pd.DataFrame, factors: Sequence[str]) -> None:
    """Write the pinned summary (``%.9g``: deterministic runs reproduce it exactly)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    expected_table(table, factors).to_csv(path, index=False, float_format="%.9g")


def compare_expected(
    table: pd.DataFrame, factors: Sequence[str], path: Path, *, rtol: float = 1e-6
) -> list[str]:
    """Differences between a fresh summary table and the pinned one (empty = same)."""
    if not path.exists():
        return [f"{path}: no expected summary (create it with `o2ksim scenario check --update`)"]
    want = pd.read_csv(path, dtype={f: str for f in factors}, keep_default_na=False, na_values=[""])
    got = expected_table(table, factors)
    problems: list[str] = []
    missing = [c for c in (*factors, "status", *EXPECTED_METRICS) if c not in want]
    if missing:
        return [f"{path}: missing column(s) {', '.join(missing)}"]
    keys_want = [tuple(r) for r in want[list(factors)].astype(str).itertuples(index=False)]
    keys_got = [tuple(r) for r in got[list(factors)].astype(str).itertuples(index=False)]
    if keys_want != keys_got:
        only_got = sorted(set(keys_got) - set(keys_want))
        only_want = sorted(set(keys_want) - set(keys_got))
        return [f"runs differ: new {only_got or 'none'}, gone {only_want or 'none'}"]
    for i, key in enumerate(keys_got):
        label = ", ".join(f"{f}={v}" for f, v in zip(factors, key, strict=True))
        if str(want["status"].iloc[i]) != str(got["status"].iloc[i]):
            problems.append(
                f"{label}: status {got['status'].iloc[i]} (expected {want['status'].iloc[i]})"
            )
            continue
        for k in EXPECTED_METRICS:
            a, b = float(got[k].iloc[i]), float(want[k].iloc[i])
            same = (math.isnan(a) and math.isnan(b)) or math.isclose(
                a, b, rel_tol=rtol, abs_tol=1e-9
            )
            if not same:
                problems.append(f"{label}: {k} = {a:.9g} (expected {b:.9g})")
    return problems


__all__ = ["EXPECTED_METRICS", "compare_expected", "expected_path", "expected_table", "write_expected"]
