"""Run the backfill-family presets on KTH-SP2 (whole trace) and HPC2N (first 50,000 jobs).

Usage::

    .venv/bin/python benchmarks/backfill_presets.py [--jobs 2] [--out results.md] [--quick]

For each trace it runs every preset of the priority-backfill family
(T§5.1, Table 12), the reservation variants the thesis studies (NCSA-MS*
non-sliding and with a 5-minute cycle, T§5.3.3 and T§3.7; SJF-backfill with
fixed-job and multiple reservations, T§5.4.2) and the runtime-estimate
scenarios of T§6.2 (requested = actual, Scenario A with k = 20%, Scenario B)
for FCFS-, Priority-, LXF&W- and SJF-backfill.  It prints Markdown tables of
mean / 95th percentile / maximum wait (hours), mean slowdown, mean bounded
slowdown, utilisation and the simulation's CPU and wall time, and writes them
to ``--out`` when given, together with a JSON file of the raw numbers.

KTH-SP2 runs on ``hosts/kth-sp2.toml`` (100 processors, memory not
constrained); HPC2N on ``hosts/hpc2n.toml`` (240 processors, 512 MB per
processor, requested memory = field 10 x processors).  The traces are read
from ``../shared/traces``; a missing trace is skipped with a note.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRACES_DIR = Path(__file__).resolve().parents[2] / "shared" / "traces"

PRESETS = [
    "fcfs-backfill",
    "mhpcc-ms",
    "priority-backfill",
    "priority-pm-backfill",
    "ncsa-ms",
    "lxfw-backfill",
    "sjf-backfill",
    "lxf-backfill",
]


@dataclass(frozen=True)
class Config:
    """One run: a preset, parameter overrides, an estimate scenario; ``label`` names the row."""

    label: str
    policy: str
    params: dict[str, Any] = field(default_factory=dict)
    estimates: str | None = None
    table: str = "presets"


def configs(quick: bool = False) -> list[Config]:
    """Every run of one trace, grouped into three tables."""
    out = [Config(p, p) for p in PRESETS]
    out += [
        Config("ncsa-ms, non-sliding", "ncsa-ms", {"sliding": False}, table="variants"),
        Config("ncsa-ms, 5-min cycle", "ncsa-ms", {"interval": "5m"}, table="variants"),
        Config(
            "ncsa-ms, non-sliding + 5-min cycle",
            "ncsa-ms",
            {"sliding": False, "interval": "5m"},
            table="variants",
        ),
        Config(
            "ncsa-ms, dynamic N=1",
            "ncsa-ms",
            {"reservations": 1, "reservation_kind": "dynamic"},
            table="variants",
        ),
        Config(
            "sjf-backfill, fixed N=1",
            "sjf-backfill",
            {"reservation_kind": "fixed"},
            table="variants",
        ),
        Config(
            "sjf-backfill, fixed N=2",
            "sjf-backfill",
            {"reservation_kind": "fixed", "reservations": 2},
            table="variants",
        ),
        Config("sjf-backfill, dynamic N=2", "sjf-backfill", {"reservations": 2}, table="variants"),
        Config(
            "lxfw-backfill, fixed N=2",
            "lxfw-backfill",
            {"reservation_kind": "fixed", "reservations": 2},
            table="variants",
        ),
    ]
    if not quick:
        for policy in ("fcfs-backfill", "priority-backfill", "lxfw-backfill", "sjf-backfill"):
            for scenario in ("actual", "scenario-a:20", "scenario-b"):
                out.append(
                    Config(f"{policy}, {scenario}", policy, estimates=scenario, table="estimates")
                )
    return out


TRACES = {
    "KTH-SP2 (whole trace)": ("KTH-SP2-1996-2.1-cln.swf.gz", "kth-sp2", None),
    "HPC2N (first 50,000 jobs)": ("HPC2N-2002-2.1-cln.swf.gz", "hpc2n", 50_000),
}

_CACHE: dict[str, Any] = {}


def _trace(file: str, head: int | None) -> Any:
    """The trace's jobs (SWF columns), the first ``head`` of them; read once per process."""
    key = f"{file}:{head}"
    if key not in _CACHE:
        from o2ksim.run.workload import load_workload

        jobs = load_workload(TRACES_DIR / file).jobs
        _CACHE[key] = jobs if head is None else jobs.head(head).reset_index(drop=True)
    return _CACHE[key]


def run_one(trace_name: str, cfg: Config) -> dict[str, Any]:
    """Simulate one configuration; the summary plus CPU and wall time of the run."""
    from o2ksim.run.api import simulate

    file, machine, head = TRACES[trace_name]
    trace = _trace(file, head)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    r = simulate(
        trace, machine=machine, policy=cfg.policy, policy_params=cfg.params, estimates=cfg.estimates
    )
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {
        "trace": trace_name,
        "label": cfg.label,
        "table": cfg.table,
        "cpu_seconds": round(cpu, 2),
        "wall_seconds": round(wall, 2),
        "passes": r.stats.passes,
        **{k: v for k, v in r.summary.items() if isinstance(v, int | float)},
    }


HEADER = (
    "| policy | mean wait (h) | 95th wait (h) | max wait (h) | mean slowdown "
    "| mean bounded slowdown | utilisation | CPU s | wall s |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def row(r: dict[str, Any]) -> str:
    h = 3600.0
    return (
        f"| {r['label']} | {r['mean_wait'] / h:.2f} | {r['p95_wait'] / h:.2f} | {r['max_wait'] / h:.1f} "
        f"| {r['mean_slowdown']:.1f} | {r['mean_bounded_slowdown']:.1f} | {r.get('utilisation', float('nan')):.3f} "
        f"| {r['cpu_seconds']:.1f} | {r['wall_seconds']:.1f} |"
    )


TITLES = {
    "presets": "Presets (requested runtimes from the trace)",
    "variants": "Reservation variants",
    "estimates": "Runtime-estimate scenarios (T§6.2)",
}


def markdown(results: list[dict[str, Any]]) -> str:
    """The results as Markdown: one section per trace, one table per group."""
    lines = []
    for trace_name in TRACES:
        rows = [r for r in results if r["trace"] == trace_name]
        if not rows:
            continue
        jobs = rows[0]["jobs"]
        lines.append(f"### {trace_name}: {jobs:,} jobs\n")
        for table, title in TITLES.items():
            sel = [r for r in rows if r["table"] == table]
            if not sel:
                continue
            lines.append(f"**{title}**\n")
            lines.append(HEADER)
            lines.extend(row(r) for r in sel)
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1, help="parallel worker processes (default 1)")
    ap.add_argument(
        "--out", type=Path, help="write the Markdown tables here (and the JSON next to it)"
    )
    ap.add_argument(
        "--quick", action="store_true", help="presets and variants only, no estimate scenarios"
    )
    ap.add_argument(
        "--trace", choices=sorted(TRACES), action="append", help="only this trace (repeatable)"
    )
    args = ap.parse_args(argv)

    todo = []
    for trace_name, (file, _machine, _head) in TRACES.items():
        if args.trace and trace_name not in args.trace:
            continue
        if not (TRACES_DIR / file).exists():
            print(f"skipping {trace_name}: {TRACES_DIR / file} not found", file=sys.stderr)
            continue
        todo.extend((trace_name, cfg) for cfg in configs(args.quick))
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(run_one, *zip(*todo, strict=True)))
    else:
        results = []
        for trace_name, cfg in todo:
            results.append(run_one(trace_name, cfg))
            print(f"{trace_name}: {row(results[-1])}", file=sys.stderr)
    text = markdown(results)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
