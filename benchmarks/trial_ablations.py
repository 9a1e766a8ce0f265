"""Compare ``arrival_state.py --out`` results of several ablations, month by month (issue 23).

Usage::

    python benchmarks/arrival_state.py --months 1999-10 ... 2000-03 --out /tmp/base.json
    python benchmarks/arrival_state.py ... --policy-param reservations=2 --out /tmp/res2.json
    python benchmarks/trial_ablations.py base=/tmp/base.json res2=/tmp/res2.json

One Markdown row per ablation and month, each figure the mean over the seeds
(min-max in brackets where it matters): trials in % of the analysed arrivals,
the share of the trials that preempted, the share done in the quantum, and
for the arrivals that could not start as full jobs the share that found a
host with the processors and 1 GB free before the arrival's pass ("procs +
1 GB"), the share whose full request fitted some host (held out by a
reservation), the share that found no host with the processors, and the
share that got a trial on free processors at their own instant ("trial on
free"; "procs + 1 GB" minus it is what the backfill pass at the same instant
took from them first, the most a trial-before-the-pass order could add).
A last row per ablation gives the same over all months and seeds.

A second table checks the claims that hold today and must keep holding
(issue 23, T§5.5): trials for "at least 15% of all job arrivals" in the
loaded months -- here the thesis's two high-load months, December 1999 and
February 2000 (T§5.3), and every month-seed with P x T of at least 85 % --
and "about 10-15%" of the trials done in their quantum.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

HEADER = (
    "| ablation | month | P x T % | trials % arr. | % preempting | % done in quantum "
    "| not started: procs + 1 GB % | trial on free % | full fits, held out % | processors bound % "
    "| mean wait h |"
)


def figures(o: dict) -> dict[str, float]:
    """The figures of one case (one month and seed)."""
    ns, oc = o["not_started"], o["outcome"]
    n, t, miss = max(o["arrivals"], 1), max(o["trials"], 1), max(ns["arrivals"], 1)
    return {
        "pxt": 100 * o["pxt"],
        "trials": 100 * o["trials"] / n,
        "preempting": 100 * o["trials_preempting"] / t,
        "done": 100 * o["trials_completed"] / t,
        "both": 100 * ns["both"],
        "trial_free": 100 * oc["trial_free"] * o["arrivals"] / miss,
        "full_fits": 100 * ns["full_fits"],
        "procs_bound": 100 * ns["processors_binding"],
        "wait": o["mean_wait_h"],
    }


def cell(values: list[float], spread: bool, digits: int = 1) -> str:
    m = f"{np.mean(values):.{digits}f}"
    if spread and len(values) > 1:
        m += f" ({min(values):.{digits}f}-{max(values):.{digits}f})"
    return m


def table(cases: dict[str, list[dict]]) -> str:
    """The Markdown table of :data:`HEADER` over ``cases`` (ablation name -> results)."""
    lines = [HEADER, "|" + "---|" * (HEADER.count("|") - 1)]
    keys = ["pxt", "trials", "preempting", "done", "both", "trial_free", "full_fits", "procs_bound"]
    for name, results in cases.items():
        months = sorted({o["month"] for o in results})
        groups = [(m, [o for o in results if o["month"] == m]) for m in months]
        groups.append(("all", results))
        for month, rows in groups:
            f = [figures(o) for o in rows]
            spread = month == "all"
            cells = [cell([x[k] for x in f], spread or k == "preempting") for k in keys]
            cells.append(cell([x["wait"] for x in f], False, 2))
            lines.append(f"| {name} | {month} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


HIGH_LOAD = ("1999-12", "2000-02")  # the thesis's two high-load months (T§5.3)


def kept_claims(cases: dict[str, list[dict]]) -> str:
    """The Markdown table of the kept claims per ablation (module docstring)."""
    lines = [
        "| ablation | trials % arr., Dec 1999 / Feb 2000 (min-max) | month-seeds with P x T >= 85 %: "
        "trials >= 15 % | % done in quantum (min-max) |",
        "|---|---|---|---|",
    ]
    for name, results in cases.items():
        f = [figures(o) for o in results]
        high = [
            cell([x["trials"] for o, x in zip(results, f, strict=True) if o["month"] == m], True)
            for m in HIGH_LOAD
        ]
        loaded = [x for x in f if x["pxt"] >= 85]
        ok = sum(x["trials"] >= 15 for x in loaded)
        lines.append(
            f"| {name} | {' / '.join(high)} | {ok} of {len(loaded)} "
            f"| {cell([x['done'] for x in f], True)} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+", metavar="NAME=FILE", help="an ablation's arrival_state.py --out")
    args = ap.parse_args()
    cases = {}
    for item in args.cases:
        name, _, path = item.partition("=")
        with open(path) as f:
            cases[name] = json.load(f)
    print(table(cases))
    print()
    print(kept_claims(cases))


if __name__ == "__main__":
    main()
