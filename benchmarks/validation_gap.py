"""How much of the distance to the recorded waits each step closes (docs/guides/validation.md).

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/validation_gap.py [TRACES_DIR]   # ~2 minutes

For each shared trace whose scheduler the header names, the steps of issue 24:
the plain policy (``fcfs-backfill``), the inferred availability (o2ksim cannot
replay capacity over time yet, so this row gives the share of the recorded
waiting time inside the suspected outages: the most that step could close),
and the site preset (``kth-sp2-easy``, ``hpc2n-maui``, ``sdsc-blue-queues``).
Prints a Markdown table: waits in hours, "gap" = (simulated - recorded mean) /
recorded mean.
"""

from __future__ import annotations

import sys
from pathlib import Path

import o2ksim
from o2ksim.analysis.validate import ValidationResult

CASES = [
    ("KTH-SP2-1996-2.1-cln", "kth-sp2", "kth-sp2-easy"),
    ("SDSC-BLUE-2000-4.2-cln", "sdsc-blue", "sdsc-blue-queues"),
    ("HPC2N-2002-2.1-cln", "hpc2n", "hpc2n-maui"),
    ("SDSC-Par-1996-3.1-cln", "sdsc-par", None),
]
H = 3600.0


def row(name: str, step: str, v: ValidationResult) -> str:
    o = v.overall
    gap = o["sim_mean"] / o["rec_mean"] - 1
    return (
        f"| {name} | {step} | {o['rec_mean'] / H:.2f} / {o['sim_mean'] / H:.2f} | {gap:+.0%} | "
        f"{o['rec_median'] / H:.3f} / {o['sim_median'] / H:.3f} | {o['ks']:.3f} | {o['pearson']:.2f} "
        f"({o['pearson_log']:.2f}) |"
    )


def main() -> None:
    traces = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/traces")
    print("| trace | step | mean rec / sim | gap | median rec / sim | KS | Pearson (log) |")
    print("|---|---|---|---|---|---|---|")
    for name, machine, site in CASES:
        path = traces / f"{name}.swf.gz"
        if not path.exists():
            continue
        plain = o2ksim.validate(path, machine, "fcfs-backfill", lenient=True)
        print(row(name, "plain: fcfs-backfill", plain), flush=True)
        a = plain.availability
        print(
            f"| {name} | inferred availability (not replayed) | {a['periods']} suspected outages, "
            f"{a['hours']:.0f} h ({a['span_share']:.0%} of the trace) | holds {a['wait_share']:.0%} of the "
            "recorded waiting time | | | |",
            flush=True,
        )
        if site is not None:
            print(row(name, f"site: {site}", o2ksim.validate(path, machine, site, lenient=True)), flush=True)


if __name__ == "__main__":
    main()
