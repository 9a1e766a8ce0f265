"""Report section for goal-oriented policies: the comparison measures of G§4 and Fig. 12.

Shown when a scenario runs at least one goal-oriented policy (kind ``goal``)
next to ``fcfs-backfill``: for every panel, each policy's total normalised
excessive wait over FCFS-backfill's maximum and 98th-percentile wait of the
same panel (E^maxW_FCFS-bf, E^98%W_FCFS-bf; :mod:`o2ksim.goal_metrics`), and
the average wait of each N x T job class per policy (G Fig. 12).
"""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd

from o2ksim.goal_metrics import class_wait_matrix, comparison
from o2ksim.policies import make_policy

FCFS_BACKFILL = "fcfs-backfill"


def _is_goal(policy: str) -> bool:
    try:
        return make_policy(policy).kind == "goal"
    except Exception:  # an unknown name or a module:Class the report cannot build
        return False


def _policy_name(policy: Any) -> str:
    """A run's policy name: scenario runs store ``{"name", "label", "params"}``, one-run results a name."""
    return str(policy["name"]) if isinstance(policy, dict) else str(policy)


def goal_section(results: Any, g: Any) -> list[str]:
    """HTML parts of the section (empty when the scenario has no goal-oriented policy)."""
    ok = g.table
    names = {r["factors"]["policy"]: _policy_name(r["config"]["policy"]) for r in results.runs}
    if len(ok) == 0 or not any(_is_goal(names.get(p, p)) for p in g.policies):
        return []
    esc = html.escape
    parts = ["<h2 id='goal'>Goal-oriented policies</h2>"]
    base_label = next((lab for lab, n in names.items() if n == FCFS_BACKFILL), None)
    if base_label is None or base_label not in set(ok["policy"]):
        parts.append(f"<p class='note'>Add {FCFS_BACKFILL} to the policies to get E^maxW_FCFS-bf "
                     "and E^98%W_FCFS-bf (G§4).</p>")  # fmt: skip
        return parts
    rows = []
    matrices: dict[str, pd.DataFrame] = {}
    for panel in g.panels:
        runs = ok.loc[ok["panel"] == panel]
        jobs_of = {
            pol: pd.concat([results.jobs(r) for r in grp["run_id"]], ignore_index=True)
            for pol, grp in runs.groupby("policy", sort=False)
        }
        base = jobs_of.get(base_label)
        if base is None:
            continue
        for pol, jobs in jobs_of.items():
            rows.append({"panel": panel, "policy": pol, **comparison(jobs, base)})
            if panel == g.panels[0]:
                matrices[pol] = class_wait_matrix(jobs, n_bounds=_n_bounds(jobs))
    parts.append(
        "<p>Total normalised excessive wait: each job's wait above FCFS-backfill's maximum "
        "(E^maxW) or 98th-percentile (E^98%W) wait of the same panel, divided by that "
        "threshold, summed over the jobs (G§4); and how many jobs exceed it.</p>"
    )
    parts.append(pd.DataFrame(rows).to_html(index=False, float_format=lambda v: f"{v:.3g}"))
    if matrices:
        parts.append(f"<p>Average wait (hours) per job class, {esc(g.panels[0] or 'all runs')}: "
                     "rows by actual runtime T, columns by requested processors N (G Fig. 12).</p>")  # fmt: skip
        for pol, m in matrices.items():
            parts.append(f"<h3>{esc(pol)}</h3>")
            parts.append(m.to_html(float_format=lambda v: f"{v:.2f}", na_rep="–"))
    return parts


def _n_bounds(jobs: pd.DataFrame) -> tuple[float, ...]:
    """The paper's five N ranges scaled to the machine: 1/16, 1/8, 1/4, 1/2 of the widest job."""
    widest = float(jobs["procs"].max()) if len(jobs) else 128.0
    top = 2 ** math.ceil(math.log2(max(widest, 16.0)))
    return (top / 16, top / 8, top / 4, top / 2, math.inf)


__all__ = ["goal_section"]
