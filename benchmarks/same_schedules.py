"""Same schedules as a baseline build: job_id, start, end and host of every job, case by case.

Usage::

    python benchmarks/same_schedules.py --baseline /path/to/old/venv/bin/o2ksim
    python benchmarks/same_schedules.py --baseline OLD --candidate NEW kth-fcfs-backfill o2k-ncsa-lsf
    python benchmarks/same_schedules.py --list

A refactoring that claims to change no schedule is checked here against the
build it started from, installed the same way (e.g. ``pip install`` of a
``git archive`` of the old commit into its own virtual environment).  Every
case runs ``o2ksim run --trace ... --out ...`` with both executables and
compares the ``jobs.csv`` columns ``job_id, start, end, host`` row for row
(sorted by job id; exact float equality, NaN equal to NaN).  The baseline's
output is cached in ``--cache`` (keyed by case) so that repeated checks of a
candidate cost only the candidate's runs.

The cases are the redesign issue's list: FCFS, FCFS-backfill, LXF&W-backfill,
SJF-backfill and Priority-backfill with two reservations on the whole KTH-SP2
and SDSC-Par-1996 traces and on HPC2N's first 20,000 jobs (``hosts/hpc2n.toml``),
and NCSA-LSF* and LXF&W-backfill on a generated O2K month written to a file by
the baseline's ``o2ksim generate``; and, on the same month, the preemptive
policies (LXF&W-backfill with preemptive and "soon" immediate service,
EQspatial-5m and -0m).  Needs ``../shared/traces``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT.parent / "shared" / "traces"
COLUMNS = ("job_id", "start", "end", "host")


@dataclass(frozen=True)
class Case:
    key: str
    trace: str  # a file in ../shared/traces, "hpc2n-20k" or "o2k-month" (made in the cache)
    machine: str
    policy: str
    extra: tuple[str, ...] = ()


def _cases() -> list[Case]:
    families = [
        ("fcfs", "fcfs", ()),
        ("fcfs-backfill", "fcfs-backfill", ()),
        ("lxfw-backfill", "lxfw-backfill", ()),
        ("sjf-backfill", "sjf-backfill", ()),
        ("priority-backfill-r2", "priority-backfill", ("--reservations", "2")),
    ]
    traces = [
        ("kth", "KTH-SP2-1996-2.1-cln.swf.gz", "kth-sp2"),
        ("sdsc-par", "SDSC-Par-1996-3.1-cln.swf.gz", "sdsc-par"),
        ("hpc2n-20k", "hpc2n-20k", str(ROOT / "hosts" / "hpc2n.toml")),
    ]
    cases = [
        Case(f"{t}-{f}", trace, machine, policy, extra)
        for t, trace, machine in traces
        for f, policy, extra in families
    ]
    cases += [
        Case("o2k-ncsa-lsf", "o2k-month", "o2k", "ncsa-lsf"),
        Case("o2k-lxfw-backfill", "o2k-month", "o2k", "lxfw-backfill"),
    ]
    # the preemptive policies: unchanged by a refactoring too (thesis-fidelity work may change them)
    cases += [
        Case(f"o2k-{p}", "o2k-month", "o2k", p)
        for p in ("lxfw-backfill-immediate", "lxfw-backfill-soon", "eqspatial-5m", "eqspatial-0m")
    ]
    return cases


def _trace_file(name: str, cache: Path, baseline: str) -> Path:
    if name == "hpc2n-20k":
        path = cache / "hpc2n-20k.swf"
        if not path.exists():
            jobs = 0
            with gzip.open(TRACES / "HPC2N-2002-2.1-cln.swf.gz", "rt") as src, open(
                str(path) + ".part", "w"
            ) as dst:
                for line in src:
                    if not line.lstrip().startswith(";") and line.strip():
                        if jobs == 20_000:
                            break
                        jobs += 1
                    dst.write(line)
            Path(str(path) + ".part").rename(path)
        return path
    if name == "o2k-month":
        path = cache / "o2k-month.swf"
        if not path.exists():
            subprocess.run(
                [baseline, "generate", "--model", "o2k", "--span", "30d", "--seed", "1",
                 "--out", str(path)],
                check=True, stdout=subprocess.DEVNULL,
            )  # fmt: skip
        return path
    return TRACES / name


def _run(exe: str, case: Case, trace: Path, out: Path) -> list[tuple[str, ...]]:
    if out.exists():
        shutil.rmtree(out)
    cmd = [exe, "run", "--trace", str(trace), "--machine", case.machine, "--policy", case.policy,
           *case.extra, "--out", str(out), "--no-progress", "-q"]  # fmt: skip
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return _rows(out / "jobs.csv")


def _rows(path: Path) -> list[tuple[str, ...]]:
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = [tuple(_norm(r[c]) for c in COLUMNS) for r in reader]
    return sorted(rows, key=lambda r: int(float(r[0])))


def _norm(text: str) -> str:
    """A cell as a comparable string: numbers by value (``5`` == ``5.0``), NaN as empty, and
    the ``-`` that jobs.csv writes for "no host" since issue 27 as empty too."""
    if text == "-":
        return ""
    try:
        value = float(text)
    except ValueError:
        return text
    if math.isnan(value):
        return ""
    return repr(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", help="case keys (default: all)")
    parser.add_argument("--baseline", help="the old build's o2ksim executable")
    parser.add_argument("--candidate", default=str(Path(sys.executable).parent / "o2ksim"),
                        help="the new build's o2ksim executable (default: this interpreter's)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/o2ksim-same-schedules"),
                        help="where the baseline's outputs and derived traces are kept")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    cases = _cases()
    if args.list:
        for c in cases:
            print(c.key)
        return 0
    if not args.baseline:
        parser.error("--baseline is required")
    if not TRACES.is_dir():
        print(f"same_schedules: {TRACES} is absent; nothing to compare")
        return 0
    chosen = [c for c in cases if not args.cases or c.key in args.cases]
    unknown = set(args.cases) - {c.key for c in cases}
    if unknown:
        parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    args.cache.mkdir(parents=True, exist_ok=True)
    failed = 0
    for case in chosen:
        trace = _trace_file(case.trace, args.cache, args.baseline)
        base_out = args.cache / "baseline" / case.key
        if (base_out / "jobs.csv").exists():
            base = _rows(base_out / "jobs.csv")
        else:
            base = _run(args.baseline, case, trace, base_out)
        # a folder of this process's own: several checks may share one cache
        cand = _run(args.candidate, case, trace, args.cache / f"candidate-{os.getpid()}" / case.key)
        if base == cand:
            print(f"same       {case.key}: {len(base)} jobs")
            continue
        failed += 1
        differ = [(b, c) for b, c in zip(base, cand, strict=False) if b != c]
        first = differ[0] if differ else None
        print(f"DIFFERENT  {case.key}: {len(base)} vs {len(cand)} rows, {len(differ)} differ;"
              f" first {first}")  # fmt: skip
    shutil.rmtree(args.cache / f"candidate-{os.getpid()}", ignore_errors=True)
    print(f"{len(chosen) - failed} same, {failed} different")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
