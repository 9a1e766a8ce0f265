"""The report's immediate-service section (thesis §5.5, Figs. 66-67).

Figures 66-67 compare LXF&W-backfill with and without 1-minute immediate
service: overall waits and slowdown, and 95th-percentile wait, maximum wait
and average slowdown versus actual runtime.  The report's general figures
already draw those views for every policy of a sweep; this section adds what
only immediate service has -- how many arrivals got a trial, how many
finished in it, how many trials preempted someone -- and splits the measures
at the quantum (jobs that ran at most one minute vs longer), because the
thesis's claim is exactly that the first group gains dramatically and the
second is not hurt.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

SHORT = 60.0  # seconds: the thesis's 1-minute quantum splits the jobs


def _split(jobs: pd.DataFrame) -> dict[str, float]:
    done = jobs.loc[jobs["status"] == "completed"]
    if "analysed" in done:
        done = done.loc[done["analysed"]]
    out: dict[str, float] = {}
    for label, part in (("≤1 min", done.loc[done["run_time"] <= SHORT]),
                        (">1 min", done.loc[done["run_time"] > SHORT])):  # fmt: skip
        w = part["wait"].to_numpy(float) / 3600.0
        out[f"mean wait {label} (h)"] = float(w.mean()) if len(w) else np.nan
        out[f"95th wait {label} (h)"] = float(np.percentile(w, 95)) if len(w) else np.nan
        out[f"max wait {label} (h)"] = float(w.max()) if len(w) else np.nan
        out[f"mean slowdown {label}"] = float(part["slowdown"].mean()) if len(part) else np.nan
    return out


def immediate_table(results: object) -> pd.DataFrame:
    """Per policy (mean over its finished runs): trial counters and the ≤1 min / >1 min split.

    Empty when no run of the sweep used immediate service.
    """
    ok = results.ok  # type: ignore[attr-defined]
    rows = []
    any_trials = False
    for run_id, policy in zip(ok["run_id"], ok["policy"], strict=True):
        summ = results.run_summary(run_id)  # type: ignore[attr-defined]
        s = summ.get("summary", summ)
        any_trials |= "immediate_service_jobs" in s
        arrivals = max(int(s.get("jobs", 0)), 1)
        trials = s.get("immediate_service_jobs", 0)
        row = {
            "policy": policy,
            "trials (% of arrivals)": 100.0 * trials / arrivals,
            "finished in trial (% of trials)": (
                100.0 * s.get("immediate_service_completed", 0) / trials if trials else np.nan
            ),
            "preempting trials": s.get("immediate_service_preempting", 0),
            "preemptions": s.get("preemptions", 0),
        }
        row.update(_split(results.jobs(run_id)))  # type: ignore[attr-defined]
        rows.append(row)
    if not any_trials or not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows)
    return table.groupby("policy", sort=False).mean(numeric_only=True).reset_index()


def _cell(v: float) -> str:
    """A table value: counts in full with thousands separators (1,701, not 1.7e+03), measures to 3 digits."""
    if pd.isna(v):
        return "–"
    if float(v).is_integer() or abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def section(results: object) -> str:
    """The HTML of the section ("" when no run used immediate service)."""
    table = immediate_table(results)
    if table.empty:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = []
    for _, r in table.iterrows():
        cells = [f"<td>{html.escape(str(r['policy']))}</td>"]
        for c in table.columns[1:]:
            v = r[c]
            cells.append(f"<td>{_cell(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        "<h2 id='immediate'>Immediate service (thesis §5.5, Figs. 66-67)</h2>"
        "<p>Trials given, finished within the quantum and memory, and preempting; waits and "
        "slowdown of the jobs that ran at most one minute and of the others (the thesis: the "
        "first gain dramatically, the second are not hurt). Mean over each policy's runs.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


__all__ = ["immediate_table", "section"]
