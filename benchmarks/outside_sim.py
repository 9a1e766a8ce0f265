"""What a whole ``o2ksim run`` command costs outside the simulation itself (work package 9k).

Usage::

    python benchmarks/outside_sim.py                          # kth10k kth, best of 5
    python benchmarks/outside_sim.py kth --repeat 9
    python benchmarks/outside_sim.py --against /tmp/main-copy  # interleaved with another checkout

Each run is the real command line (``o2ksim run --trace T -q --out DIR``,
parser, reading, set-up, tabulating, writing) in a fresh interpreter; the
child times ``Simulation.run`` and reports it, so that *outside* = the
process's CPU seconds (user + system, from the parent) minus the simulation's.
The simulation's own time moves by 10-20 % between runs on a shared machine,
which hides changes of a few hundredths of a second in the whole process;
the cost outside it moves far less.  ``--against DIR`` runs the same cases
with the o2ksim of another source tree (``DIR/o2ksim``, e.g. an unchanged
copy of main: ``git archive main | tar -x -C DIR``), alternating with this
one, and prints both.  The EASY oracle runs once per case for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed_goals import CASES, ORACLE, ROOT, _child_run, trace_cases

CHILD = r"""
import json, sys, time
import o2ksim.run.api  # what `o2ksim run` imports anyway, in the order it would
core = sys.modules["o2ksim.engine.core"]
run = core.Simulation.run
spent = []
def timed_run(self, *a, **k):
    t = time.process_time()
    try:
        return run(self, *a, **k)
    finally:
        spent.append(time.process_time() - t)
core.Simulation.run = timed_run
from o2ksim.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "simulate": sum(spent)}), file=sys.stderr)
"""


def outside(source: Path, trace: Path, out: Path) -> tuple[float, float]:
    """(whole process, simulation) CPU seconds of one ``o2ksim run`` with ``source``'s o2ksim."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "run", "--trace", str(trace), "-q", "--out", str(out)],
        check=True, capture_output=True, text=True, cwd=tempfile.gettempdir(), env=env,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    whole = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    if report["code"] != 0:
        raise SystemExit(f"o2ksim run exited with {report['code']}")
    return whole, report["simulate"]


def main() -> None:
    keys = [c.key for c in CASES if c.trace]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", help=f"cases (default kth10k kth): {' '.join(keys)}")
    ap.add_argument("--repeat", type=int, default=5, help="best of N runs (default 5)")
    ap.add_argument("--against", type=Path, help="another source tree to run alternately")
    args = ap.parse_args()
    import compileall

    sources = {"this": ROOT}
    if args.against:
        sources = {"against": args.against.resolve(), **sources}
    for source in sources.values():
        compileall.compile_dir(source / "o2ksim", quiet=1)  # as an installed package has it
    print("CPU seconds, best of", args.repeat)
    print("| workload | source | whole process | simulate | outside the simulation | oracle |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for case, trace in trace_cases(args.cases, ["kth10k", "kth"], tmp):
            best: dict[str, tuple[float, float, float]] = {}
            for _ in range(args.repeat):
                for label, source in sources.items():
                    whole, sim = outside(source, trace, tmp / label)
                    if label not in best or whole - sim < best[label][2]:
                        best[label] = (whole, sim, whole - sim)
            oracle_cmd = [sys.executable, str(ORACLE), str(trace), "-", str(case.oracle_procs), str(tmp / "o.csv")]
            oracle = _child_run(oracle_cmd)[1]
            for label, (whole, sim, rest) in best.items():
                print(f"| {case.label} | {label} | {whole:.3f} | {sim:.3f} | {rest:.3f} | {oracle:.2f} |", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
