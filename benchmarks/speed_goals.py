"""The speed goals of issue 9, each measured against the plain-Python EASY oracle in the same run.

Usage::

    python benchmarks/speed_goals.py                 # every case
    python benchmarks/speed_goals.py kth10k kth      # some cases
    python benchmarks/speed_goals.py --repeat 3      # best of 3

Every case runs ``o2ksim run`` as a whole process (interpreter start, imports,
reading the trace, simulating, writing ``jobs.csv``) and, right after it,
``../shared/checks/easy_oracle.py`` on the same trace.  Because the reference
machine is shared, absolute times move with the load; the ratio o2ksim /
oracle is the figure to compare across runs.  Both wall time and CPU time
(user + system, of the child process) are reported: CPU time is what the
program costs and is far less sensitive to other processes on the machine.
Peak RSS is the child's ``ru_maxrss``.  Needs ``../shared/traces``.

Before timing, the o2ksim package is byte-compiled once (``compileall``), as
an installed package, or any machine that lets Python write ``__pycache__``,
has it after the first run: on a machine with ``PYTHONDONTWRITEBYTECODE``
set and an editable install every run would otherwise also compile every
o2ksim module it imports (about 0.04-0.05 s).  ``--no-compile`` skips this.

``--python PATH`` runs o2ksim with another interpreter, e.g. the compiled
build's (``make install-fast``; ``--python .venv-fast/bin/python``); the oracle
always runs with this script's interpreter.  o2ksim's processes run with
``PYTHONSAFEPATH=1``, so the working directory's ``o2ksim/`` never shadows the
installed package of that interpreter.
"""

from __future__ import annotations

import argparse
import os
import resource
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
O2KSIM = [sys.executable, "-m", "o2ksim"]  # [0] is replaced by --python
os.environ["PYTHONSAFEPATH"] = "1"  # see the module docstring


@dataclass(frozen=True)
class Case:
    key: str
    label: str
    goal_s: float
    trace: str | None  # file in ../shared/traces, or None for a generated workload
    head: int | None = None  # first N jobs only
    machine: str | None = None
    oracle_procs: int = 100  # the oracle's machine size (the trace header's MaxProcs)


CASES = [
    Case("kth10k", "KTH-SP2 first 10,000", 0.6, "KTH-SP2-1996-2.1-cln.swf.gz", 10_000),
    Case("kth", "KTH-SP2 whole (28,476)", 1.2, "KTH-SP2-1996-2.1-cln.swf.gz"),
    Case("hpc2n", "HPC2N whole (202,876)", 8.0, "HPC2N-2002-2.1-cln.swf.gz", oracle_procs=240),
    Case("ricc", "RICC whole (447,794; 8,192 procs)", 90.0, "RICC-2010-2.swf.gz", oracle_procs=8192),
    Case("o2k-month", "synthetic O2K month + week, 8 hosts (LXF&W)", 2.0, None),
]


def _child_run(cmd: list[str]) -> tuple[float, float, float]:
    """Run ``cmd``; its wall seconds, CPU seconds and peak RSS (MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024.0


def _head(trace: Path, n: int, out: Path) -> Path:
    import gzip

    path = out / f"{trace.stem}-head{n}.swf"
    count = 0
    with gzip.open(trace, "rt") as src, open(path, "w") as dst:
        for line in src:
            if not line.startswith(";") and line.strip():
                count += 1
                if count > n:
                    break
            dst.write(line)
    return path


def trace_cases(keys: list[str] | None, default: list[str], tmp: Path) -> list[tuple[Case, Path]]:
    """The trace cases named by ``keys`` (else ``default``), each with its trace file
    (the first ``case.head`` jobs written to ``tmp`` when the case takes only those)."""
    chosen = [c for c in CASES if c.trace and c.key in (keys or default)]
    return [
        (c, _head(TRACES / c.trace, c.head, tmp) if c.head else TRACES / c.trace) for c in chosen
    ]


def measure(case: Case, tmp: Path) -> dict[str, float | str]:
    """o2ksim and oracle wall/CPU seconds for one case."""
    if case.trace is None:
        cmd = [*O2KSIM, "run", "--policy", "lxfw-backfill", "-q", "--out", str(tmp / case.key)]
        # the oracle has no memory or hosts: time it on a trace of the same size instead
        oracle = [
            sys.executable, str(ORACLE), str(_head(TRACES / "KTH-SP2-1996-2.1-cln.swf.gz", 12_000, tmp)),
            "-", "100", str(tmp / "oracle.csv"),
        ]  # fmt: skip
    else:
        trace = TRACES / case.trace
        if case.head:
            trace = _head(trace, case.head, tmp)
        cmd = [*O2KSIM, "run", "--trace", str(trace), "--policy", "fcfs-backfill", "-q"]
        cmd += ["--out", str(tmp / case.key)]
        if case.machine:
            cmd += ["--machine", case.machine]
        oracle = [sys.executable, str(ORACLE), str(trace), "-", str(case.oracle_procs), str(tmp / "oracle.csv")]
    wall, cpu, rss = _child_run(cmd)
    owall, ocpu, _ = _child_run(oracle)
    return {"wall": wall, "cpu": cpu, "rss": rss, "owall": owall, "ocpu": ocpu}


def startup() -> tuple[float, float]:
    """Wall seconds of ``o2ksim --help`` and of ``python -c 'import o2ksim'`` (best of 5)."""
    helps, imports = [], []
    for _ in range(5):
        helps.append(_child_run([*O2KSIM[:1], "-c", "from o2ksim.cli import main; main(['--help'])"])[0])
        imports.append(_child_run([O2KSIM[0], "-c", "import o2ksim"])[0])
    return min(helps), min(imports)


def _build(python: str) -> str:
    """``o2ksim --version`` of ``python``'s o2ksim (which says whether it is the compiled build)."""
    return subprocess.run(
        [python, "-m", "o2ksim", "--version"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()


def compile_package() -> None:
    """Byte-compile the o2ksim package (what a first run does where Python may write bytecode)."""
    import compileall

    compileall.compile_dir(ROOT / "o2ksim", quiet=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", help=f"cases to run (default all): {' '.join(c.key for c in CASES)}")
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs")
    ap.add_argument("--no-compile", action="store_true", help="do not byte-compile o2ksim first")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs o2ksim (default: this one)")
    args = ap.parse_args()
    O2KSIM[0] = args.python
    if not args.no_compile:
        compile_package()
    print(f"o2ksim: {_build(args.python)}")
    chosen = [c for c in CASES if not args.cases or c.key in args.cases]
    print("| workload (FCFS-backfill unless noted) | goal s | o2ksim wall s | oracle wall s | ratio "
          "| o2ksim CPU s | oracle CPU s | CPU ratio | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for case in chosen:
            runs = [measure(case, tmp) for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["cpu"])
            print(
                f"| {case.label} | {case.goal_s:g} | {best['wall']:.2f} | {best['owall']:.2f} "
                f"| {best['wall'] / best['owall']:.2f} | {best['cpu']:.2f} | {best['ocpu']:.2f} "
                f"| {best['cpu'] / best['ocpu']:.2f} | {best['rss']:.0f} |",
                flush=True,
            )
    if not args.cases or "startup" in args.cases:
        help_s, import_s = startup()
        print(f"\n`o2ksim --help`: {help_s:.3f} s; `import o2ksim`: {import_s:.3f} s (best of 5)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
