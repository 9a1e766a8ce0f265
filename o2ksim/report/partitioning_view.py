"""HTML report view for dynamically partitioned runs (EQspatial, T§3.2.3, T§6.1).

When some policy of a scenario resized jobs, the report gets a section with,
per policy (seeds pooled): how many analysed jobs were resized and how often,
each job's processor-time share over its life (``mean_procs / procs`` from
``jobs.csv``: 1 = always on its full request), and the jobs that waited for
memory, caught up and had an immediate-service trial.  Runs that never resize
(backfill, NCSA-LSF*) add nothing.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
import pandas as pd


def partitioning_table(by_policy: dict[str, list[pd.DataFrame]]) -> pd.DataFrame:
    """One row per policy whose analysed jobs were resized (empty if none were)."""
    rows = []
    for policy, frames in by_policy.items():
        jobs = pd.concat(frames, ignore_index=True)
        if "analysed" in jobs:
            jobs = jobs.loc[jobs["analysed"]]
        done = jobs.loc[jobs["status"] == "completed"]
        if done.empty or "resizes" not in done or done["resizes"].sum() == 0:
            continue
        share = (done["mean_procs"] / done["procs"]).to_numpy(float) if "mean_procs" in done else None
        row = {
            "policy": policy,
            "jobs": len(done),
            "resized jobs (%)": 100.0 * float((done["resizes"] > 0).mean()),
            "resizes per resized job": float(done.loc[done["resizes"] > 0, "resizes"].mean()),
            "mean share of request": float(np.nanmean(share)) if share is not None else np.nan,
            "jobs below half their request (%)": (
                100.0 * float(np.nanmean(share < 0.5)) if share is not None else np.nan
            ),
        }
        if "catchup_credit" in done:
            row["caught up"] = int((done["catchup_credit"] > 0).sum())
        if "immediate_service" in done:
            row["immediate service"] = int((done["immediate_service"] > 0).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def section(table: pd.DataFrame | None, render: Callable[[pd.DataFrame], str]) -> str:
    """The report section (``render`` formats a DataFrame as an HTML table); '' when empty."""
    if table is None or len(table) == 0:
        return ""
    return (
        "<h2 id='partitioning'>Dynamic partitioning</h2>"
        "<p>Analysed completed jobs, seeds pooled. <i>Share of request</i> is the "
        "processors a job held on average over its life divided by the processors it "
        "requested (1 = always its full request; T§3.2.3's equal partitioning lowers it "
        "when hosts are crowded). <i>Caught up</i>: jobs that waited for memory and then "
        "ran on their full request until they had received the processor time an equal "
        "share of the machine would have given them.</p>"
        + render(table)
        + f"<p class='meta'>{html.escape('Columns: ' + ', '.join(table.columns))}</p>"
    )
