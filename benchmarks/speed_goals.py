"""Whole-process time of ``o2ksim run`` on realistic runs, against another build and the EASY oracle.

Usage::

    python benchmarks/speed_goals.py                                  # every case but ricc (minutes)
    python benchmarks/speed_goals.py kth hpc2n --repeat 3             # some cases, best of 3
    python benchmarks/speed_goals.py --baseline /path/to/old/venv/bin/o2ksim --repeat 3
    python benchmarks/speed_goals.py ricc120k --oracle                # and the plain-Python EASY loop
    python benchmarks/speed_goals.py --list

Every case runs ``o2ksim run ... --out DIR -q --no-progress`` as a whole
process (interpreter start, imports, reading the trace, simulating, writing
``jobs.csv``) and reports its CPU time (user + system of that child, from
``os.wait4``), wall time and peak RSS, best of ``--repeat`` by CPU time.

* ``--candidate CMD``: the o2ksim to time, an executable (``.venv/bin/o2ksim``,
  a wrapper script); default: this checkout's ``o2ksim/`` run with this
  script's interpreter (``python -m o2ksim`` with the checkout on ``PYTHONPATH``).
* ``--baseline CMD``: a second o2ksim, timed in the same session, its runs
  alternating with the candidate's (candidate first in odd rounds, baseline
  first in even ones); the table then gives candidate / baseline.
  Executables get the environment without ``PYTHONPATH``, so an installed
  build imports its own package.
* ``--oracle``: also time ``../shared/checks/easy_oracle.py`` (a plain-Python
  EASY loop: one host, no memory, no SimPy) on the same trace, once per round
  (trace cases only).

The machine may be shared: CPU time is what the program costs and moves far
less with other processes' load than wall time; compare figures measured in
the same session only, and say the load (printed at the end).  Before timing,
this checkout's package is byte-compiled once (``compileall``), as an
installed package is (``--no-compile`` skips it).  Needs ``../shared/traces``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TRACES = SHARED / "traces"
ORACLE = SHARED / "checks" / "easy_oracle.py"


@dataclass(frozen=True)
class Case:
    key: str
    label: str
    trace: str | None  # file in ../shared/traces, or None for the default generated O2K month
    head: int | None = None  # first N jobs only
    machine: str | None = None  # name or path (relative to the repository); None: the trace header's
    oracle_procs: int = 100  # the oracle's machine size (the trace header's MaxProcs)
    default: bool = True  # run when no case is named


CASES = [
    Case("o2k-month", "O2K month + warm-up week (default run: 8 hosts, FCFS-backfill)", None),
    Case("kth10k", "KTH-SP2 first 10,000", "KTH-SP2-1996-2.1-cln.swf.gz", 10_000, "kth-sp2"),
    Case("kth", "KTH-SP2 whole (28,476)", "KTH-SP2-1996-2.1-cln.swf.gz", None, "kth-sp2"),
    Case("hpc2n", "HPC2N whole (202,876)", "HPC2N-2002-2.1-cln.swf.gz", None, "hosts/hpc2n.toml", 240),
    Case("ricc120k", "RICC first 120,000 (8,192 procs)", "RICC-2010-2.swf.gz", 120_000, oracle_procs=8192),
    Case("ricc", "RICC whole (447,794; 8,192 procs)", "RICC-2010-2.swf.gz", oracle_procs=8192, default=False),
]


@dataclass
class Timing:
    cpu: float
    wall: float
    rss_mb: float


def child(cmd: list[str], env: dict[str, str] | None = None) -> Timing:
    """Run ``cmd`` from the repository root; its own CPU seconds, wall seconds and peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}")
    return Timing(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024.0)


def head(trace: Path, n: int, out: Path) -> Path:
    """The first ``n`` jobs of ``trace`` (header kept) written to ``out``."""
    path = out / f"{trace.name.split('.swf')[0]}-head{n}.swf"
    if path.exists():
        return path
    count = 0
    with gzip.open(trace, "rt") as src, open(path, "w") as dst:
        for line in src:
            if not line.startswith(";") and line.strip():
                count += 1
                if count > n:
                    break
            dst.write(line)
    return path


def trace_of(case: Case, tmp: Path) -> Path | None:
    """The trace file ``case`` runs (its first ``case.head`` jobs written to ``tmp``), or None."""
    if case.trace is None:
        return None
    full = TRACES / case.trace
    return head(full, case.head, tmp) if case.head else full


def run_args(case: Case, trace: Path | None, out: Path) -> list[str]:
    """``o2ksim run`` arguments of ``case``."""
    args = ["run", "--out", str(out), "-q", "--no-progress"]
    if trace is not None:
        args += ["--trace", str(trace), "--policy", "fcfs-backfill"]
    if case.machine:
        args += ["--machine", case.machine]
    return args


class Build:
    """An o2ksim to time: an executable, or this checkout through this interpreter."""

    def __init__(self, executable: str | None) -> None:
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        if executable is None:
            self.prefix = [sys.executable, "-m", "o2ksim"]
            self.env["PYTHONPATH"] = str(ROOT)
            self.env["PYTHONSAFEPATH"] = "1"
            self.name = f"this checkout ({ROOT.name})"
        else:
            self.prefix = [str(Path(executable).resolve())]
            self.name = executable

    def time(self, args: list[str]) -> Timing:
        return child([*self.prefix, *args], self.env)

    def version(self) -> str:
        done = subprocess.run([*self.prefix, "--version"], capture_output=True, text=True, env=self.env, cwd=ROOT)
        return done.stdout.strip() or done.stderr.strip()


def measure(case: Case, builds: list[Build], oracle: bool, repeat: int, tmp: Path) -> list[Timing | None]:
    """Best-of-``repeat`` timing of each build (alternating order by round), then the oracle's."""
    trace = trace_of(case, tmp)
    runs: list[list[Timing]] = [[] for _ in builds]
    oracle_runs: list[Timing] = []
    for r in range(repeat):
        order = list(range(len(builds)))
        for i in order if r % 2 == 0 else order[::-1]:
            runs[i].append(builds[i].time(run_args(case, trace, tmp / f"out{i}")))
        if oracle and trace is not None:  # the oracle reads a trace: none for a generated month
            cmd = [sys.executable, str(ORACLE), str(trace), "-", str(case.oracle_procs), str(tmp / "o.csv")]
            oracle_runs.append(child(cmd))
    best: list[Timing | None] = [min(t, key=lambda x: x.cpu) for t in runs]
    best.append(min(oracle_runs, key=lambda x: x.cpu) if oracle_runs else None)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", help="cases to run (default: all but ricc); see --list")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs (by CPU time)")
    ap.add_argument("--candidate", help="o2ksim executable to time (default: this checkout)")
    ap.add_argument("--baseline", help="a second o2ksim executable, timed alternately with the candidate")
    ap.add_argument("--oracle", action="store_true", help="also time ../shared/checks/easy_oracle.py")
    ap.add_argument("--no-compile", action="store_true", help="do not byte-compile this checkout's o2ksim first")
    args = ap.parse_args()
    if args.list:
        for c in CASES:
            print(f"{c.key:10} {c.label}{'' if c.default else '  (only when named)'}")
        return
    unknown = set(args.cases) - {c.key for c in CASES}
    if unknown:
        ap.error(f"unknown case(s) {sorted(unknown)}; see --list")
    if not args.no_compile and args.candidate is None:
        import compileall

        compileall.compile_dir(ROOT / "o2ksim", quiet=1)
    builds = [Build(args.candidate)] + ([Build(args.baseline)] if args.baseline else [])
    for label, b in zip(("candidate", "baseline"), builds, strict=False):
        print(f"{label}: {b.name}: {b.version()}")
    head_cells = "| run | CPU s | wall s | peak RSS MB |"
    if args.baseline:
        head_cells += " baseline CPU s | baseline wall s | CPU ratio |"
    if args.oracle:
        head_cells += " oracle CPU s | CPU / oracle |"
    print(f"\nbest of {args.repeat} by CPU time (user + sys of the process)\n")
    print(head_cells)
    print("|---" * (head_cells.count("|") - 1) + "|")
    chosen = [c for c in CASES if (c.key in args.cases if args.cases else c.default)]
    with tempfile.TemporaryDirectory() as d:
        for case in chosen:
            *timings, orc = measure(case, builds, args.oracle, args.repeat, Path(d))
            cand = timings[0]
            assert cand is not None
            row = f"| {case.label} | {cand.cpu:.2f} | {cand.wall:.2f} | {cand.rss_mb:.0f} |"
            if args.baseline:
                base = timings[1]
                assert base is not None
                row += f" {base.cpu:.2f} | {base.wall:.2f} | {cand.cpu / base.cpu:.2f} |"
            if args.oracle:
                row += f" {orc.cpu:.2f} | {cand.cpu / orc.cpu:.2f} |" if orc else " - | - |"
            print(row, flush=True)
    print(f"\nload average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
