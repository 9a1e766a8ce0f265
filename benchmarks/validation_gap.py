"""How much of the distance to the recorded waits each step closes (docs/guides/validation.md).

Usage::

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/validation_gap.py [TRACES_DIR] [TRACE ...]
    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/validation_gap.py --all [--inferred] [TRACES_DIR] [TRACE ...]

``--all``: one row per shared trace (``ALL``) under the plain policy, the
table of docs/guides/validation.md's "Measured: every shared trace": the
machine file where hosts/ has one, else the header's ``MaxProcs`` (what
``o2ksim validate`` does without ``--machine``); the big traces over a stated
window (one month after a 7-day warm-up); a trace that cannot be compared
gets the one-line message ``o2ksim validate`` answers.  ``--inferred`` adds
a row with the inferred availability replayed under each compared trace.

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
from typing import Any

import o2ksim
from o2ksim.analysis.validate import ValidationResult
from o2ksim.errors import O2KSimError
from o2ksim.machine import MachineSpec, machine_from_header, single_host
from o2ksim.run.workload import load_workload

CASES = [
    ("KTH-SP2-1996-2.1-cln", "kth-sp2", "kth-sp2-easy"),
    ("SDSC-Par-1996-3.1-cln", "sdsc-par", None),
    ("SDSC-BLUE-2000-4.2-cln", "sdsc-blue", "sdsc-blue-queues"),
    ("HPC2N-2002-2.1-cln", "hpc2n", "hpc2n-maui"),
]
H = 3600.0

ALL: list[tuple[str, Any, tuple[str, str] | None, str]] = [
    # (trace, machine: a hosts/ name, a processor count or None = header MaxProcs, window, why);
    # CEA-Curie: the header starts in Feb 2011, the jobs in Feb 2012
    ("KTH-SP2-1996-2.1-cln", "kth-sp2", None, ""),
    ("SDSC-Par-1996-3.1-cln", "sdsc-par", None, ""),
    ("SDSC-BLUE-2000-4.2-cln", "sdsc-blue", None, ""),
    ("HPC2N-2002-2.1-cln", "hpc2n", None, ""),
    ("NASA-iPSC-1993-3.1-cln", "nasa-ipsc", None, ""),
    ("LLNL-Atlas-2006-2.1-cln", None, None, ""),
    ("LLNL-Thunder-2007-1.1-cln", None, None, ""),
    ("OSC-Clust-2000-3.1-cln", None, None, ""),
    ("UniLu-Gaia-2014-2", None, None, ""),
    ("CEA-Curie-2011-2.1-cln", None, ("2012-03-01", "2012-04-01"), "one month"),
    ("RICC-2010-2", None, ("2010-06-01", "2010-07-01"), "one month"),
    # header stripped upstream: no MaxProcs, no UnixStartTime (days from the first
    # submit); 806 processors in 14 clusters per the PWA's page of the log
    ("METACENTRUM-2009-2", 806, ("30d", "60d"), "days 30-60"),
    ("lublin_256", None, None, "synthetic"),
]
"""Every shared trace for ``--all``."""


def _machine(path: Path, machine: Any) -> tuple[MachineSpec | str | None, str]:
    """The machine to replay on and how it was chosen (for the table)."""
    if isinstance(machine, str):
        return machine, f"`{machine}`"
    if isinstance(machine, int):
        return single_host(machine, name=path.name.split("-")[0]), f"{machine} procs (PWA page)"
    header = load_workload(path, lenient=True).header
    try:
        spec = machine_from_header(header, str(path))
    except O2KSimError as exc:
        return None, str(exc)
    return spec, f"header: {spec.total_procs} procs"


def all_row(name: str, how: str, span: str, v: ValidationResult) -> str:
    """One row of the every-trace table: counts, waits in hours, KS, Pearson, utilisation."""
    o = v.overall
    counts = ", ".join(f"{n:,} {r}" for r, n in v.counts.items() if n and r != "outside the window")

    def h(x: float) -> str:
        return f"{x / H:.3g}" if x < 1000 * H else f"{x / H:,.0f}"

    cells = [f"{h(o['rec_' + k])} / {h(o['sim_' + k])}" for k in ("mean", "median", "p95", "max")]
    u = v.utilisation
    return (
        f"| {name} | {how} | {span} | {len(v.compared):,}"
        + (f" ({counts})" if counts else "")
        + " | "
        + " | ".join(cells)
        + f" | {o['rec_zero_share']:.0%} / {o['sim_zero_share']:.0%} | {o['ks']:.3f} | "
        f"{o['pearson']:.2f} ({o['pearson_log']:.2f}) | "
        f"{u['recorded'].mean():.2f} / {u['simulated'].mean():.2f} |"
    )


def main_all(traces: Path, only: list[str], inferred: bool) -> None:
    """``--all``: one row per shared trace under fcfs-backfill (and with ``inferred``)."""
    print(
        "| trace | machine | span | compared (not compared) | mean rec / sim | "
        "median rec / sim | 95th rec / sim | max rec / sim | zero waits rec / sim | KS | "
        "Pearson (log) | util rec / sim |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, machine, window, why in ALL:
        path = traces / f"{name}.swf.gz"
        if not path.exists() or (only and not any(name.startswith(a) for a in only)):
            continue
        t0 = time.perf_counter()
        mach, how = _machine(path, machine)
        span = f"{why}: {window[0]} to {window[1]}" if window else "all"
        kw: dict[str, Any] = {"lenient": True, "window": window}
        steps = [("", None)] + ([(" + inferred availability", "inferred")] if inferred else [])
        for label, avail in steps:
            try:
                v = o2ksim.validate(path, mach, "fcfs-backfill", availability=avail, **kw)
            except O2KSimError as exc:
                print(f"| {name}{label} | {how} | {span} | refused: {exc} |" + " |" * 8, flush=True)
                break
            a = v.availability  # over the whole trace, also with a window
            if avail:
                label += (
                    f" ({a['periods']} periods, {a['hours']:.0f} h: {a['span_share']:.0%} of the "
                    f"trace, {a['wait_share']:.0%} of its recorded waiting)"
                )
            print(all_row(name + label, how, span, v), flush=True)
        print(f"<!-- {name}: {time.perf_counter() - t0:.0f} s -->", file=sys.stderr, flush=True)


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
    every = "--all" in args
    inferred = "--inferred" in args
    args = [a for a in args if a not in ("--all", "--inferred")]
    traces = Path(args.pop(0) if args and Path(args[0]).is_dir() else "../shared/traces")
    if every:
        main_all(traces, args, inferred)
        return
    print(
        "| trace | step | mean rec / sim | gap | median rec / sim | KS | Pearson (log) | closed: mean gap / KS |"
    )
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
