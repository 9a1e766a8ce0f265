"""How much of the distance to the recorded waits each step closes (docs/guides/validation.md).

Usage::

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/validation_gap.py [TRACES_DIR] [TRACE ...]

For each shared trace whose scheduler the header names, the steps of issue 24,
each on top of the one before:

1. the plain policy (``fcfs-backfill``) on the whole machine;
2. with the inferred availability replayed (``availability="inferred"``: each
   suspected outage takes its ``down_at_least`` processors, the fewest the
   record allows), and, as the other bound, ``"inferred-idle"`` (each takes
   every processor the record shows idle when it began, the most it allows);
3. the site preset (``kth-sp2-easy``, ``hpc2n-maui``, ``sdsc-blue-queues``)
   with the inferred availability.

Prints a Markdown table: waits in hours; "gap" = (simulated - recorded mean) /
recorded mean; "closed" = the share of the plain replay's mean gap (|gap|) and
KS distance that the step removes against the plain replay.  ``TRACE``
arguments (name prefixes, e.g. ``KTH``) keep only those traces.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import o2ksim
from o2ksim.analysis.validate import ValidationResult

CASES = [
    ("KTH-SP2-1996-2.1-cln", "kth-sp2", "kth-sp2-easy"),
    ("SDSC-Par-1996-3.1-cln", "sdsc-par", None),
    ("SDSC-BLUE-2000-4.2-cln", "sdsc-blue", "sdsc-blue-queues"),
    ("HPC2N-2002-2.1-cln", "hpc2n", "hpc2n-maui"),
]
H = 3600.0


def row(name: str, step: str, v: ValidationResult, plain: ValidationResult | None) -> str:
    o = v.overall
    gap = o["sim_mean"] / o["rec_mean"] - 1
    closed = ""
    if plain is not None:
        p = plain.overall
        gap0 = abs(p["sim_mean"] / p["rec_mean"] - 1)
        closed = f"{(gap0 - abs(gap)) / gap0:+.0%} / {(p['ks'] - o['ks']) / p['ks']:+.0%}"
    med = o["sim_median"] / o["rec_median"] - 1 if o["rec_median"] > 0 else float("nan")
    return (
        f"| {name} | {step} | {o['rec_mean'] / H:.2f} / {o['sim_mean'] / H:.2f} | {gap:+.0%} | "
        f"{o['rec_median'] / H:.3f} / {o['sim_median'] / H:.3f} ({med:+.0%}) | {o['ks']:.3f} | "
        f"{o['pearson']:.2f} ({o['pearson_log']:.2f}) | {closed} |"
    )


def main() -> None:
    args = sys.argv[1:]
    traces = Path(args.pop(0) if args and Path(args[0]).is_dir() else "../shared/traces")
    print("| trace | step | mean rec / sim | gap | median rec / sim | KS | Pearson (log) | closed: mean gap / KS |")
    print("|---|---|---|---|---|---|---|---|")
    for name, machine, site in CASES:
        path = traces / f"{name}.swf.gz"
        if not path.exists() or (args and not any(name.startswith(a) for a in args)):
            continue
        t0 = time.perf_counter()
        plain = o2ksim.validate(path, machine, "fcfs-backfill", lenient=True)
        a = plain.availability
        print(row(name, "plain: fcfs-backfill", plain, None), flush=True)
        for how in ("inferred", "inferred-idle"):
            v = o2ksim.validate(path, machine, "fcfs-backfill", lenient=True, availability=how)
            step = f"+ {how} availability ({a['periods']} periods, {a['hours']:.0f} h)"
            print(row(name, step, v, plain), flush=True)
        if site is not None:
            v = o2ksim.validate(path, machine, site, lenient=True, availability="inferred")
            print(row(name, f"site: {site} + inferred availability", v, plain), flush=True)
        print(f"<!-- {name}: {time.perf_counter() - t0:.0f} s -->", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
