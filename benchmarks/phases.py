"""Where a whole ``o2ksim run`` process spends its time: start-up, import, read, set-up, simulate, tabulate, write.

Usage::

    python benchmarks/phases.py                    # kth10k kth hpc2n
    python benchmarks/phases.py kth10k ricc120k    # some cases (see speed_goals.py --list)
    python benchmarks/phases.py --repeat 3         # best of 3 (by total CPU)
    python benchmarks/phases.py --startup          # the floor: interpreter start and imports

Each case runs in a fresh interpreter (so imports are cold for Python, warm
for the disk cache) that times, one after the other, exactly what
``o2ksim run --trace T --out DIR`` does:

* ``python``: interpreter start (``python -c pass``, measured from outside);
* ``import``: ``import o2ksim.run.api`` (numpy, pandas, SimPy, the engine, policies);
* ``read``: ``read_swf`` of the trace;
* ``set-up``: ``simulate()`` up to the engine's run (checks, machine, specs, policy, engine);
* ``simulate``: ``Simulation.run``;
* ``tabulate``: from the end of the run to the :class:`~o2ksim.run.results.Result`
  (per-job table, segments, summary);
* ``write``: ``Result.save`` (``jobs.csv``, ``summary.json``, ``run.json``).

Right after, ``../shared/checks/easy_oracle.py`` runs on the same trace: the
machine is shared, so read the ratio to the oracle measured in the same run,
not the absolute times.  Times are CPU seconds (user + system) unless
``--wall`` is given: CPU time is what the program costs and moves far less
with the load of other processes.  Needs ``../shared/traces``.
``--python PATH`` times another interpreter's o2ksim (e.g. an installed
build's); the oracle runs with this script's.
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
from speed_goals import CASES, ORACLE, ROOT, child, trace_of

O2KSIM = [sys.executable]  # [0] is replaced by --python


def _child_run(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of ``cmd``."""
    t = child(cmd)
    return t.wall, t.cpu

PHASES = ("python", "import", "read", "set-up", "simulate", "tabulate", "write")

CHILD = r"""
import json, sys, time
clock = time.process_time if sys.argv[3] == "cpu" else time.perf_counter
t0 = clock()
import o2ksim.run.api
S = sys.modules["o2ksim.run.api"]
t1 = clock()
from o2ksim.workloads.swf import read_swf
trace = read_swf(sys.argv[1])
t2 = clock()
marks = {}
Simulation = S.Simulation
class TimedSimulation:  # a wrapper that times Simulation.run
    def __init__(self, *a, **k):
        self.sim = Simulation(*a, **k)
    def __getattr__(self, name):
        return getattr(self.sim, name)
    def run(self):
        marks["run_start"] = clock()
        out = self.sim.run()
        marks["run_end"] = clock()
        return out
S.Simulation = TimedSimulation
result = S.simulate(trace, policy="fcfs-backfill")
t3 = clock()
result.save(sys.argv[2])
t4 = clock()
print(json.dumps({
    "import": t1 - t0, "read": t2 - t1, "set-up": marks["run_start"] - t2,
    "simulate": marks["run_end"] - marks["run_start"], "tabulate": t3 - marks["run_end"],
    "write": t4 - t3, "jobs": len(result.job_table),
}))
"""


def phases(trace: Path, out: Path, cpu: bool) -> dict[str, float]:
    """Seconds per phase of one run in a fresh interpreter, and of the whole process.

    ``cpu``: CPU seconds (user + system) instead of wall seconds -- far less
    disturbed by other processes on a shared machine.
    """
    index = 1 if cpu else 0
    python_s = min(_child_run([O2KSIM[0], "-c", "pass"])[index] for _ in range(3))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [O2KSIM[0], "-c", CHILD, str(trace), str(out), "cpu" if cpu else "wall"],
        check=True, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["python"] = python_s
    if cpu:
        result["whole"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    else:
        result["whole"] = wall
    return result


FLOOR = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import pandas (with numpy, pyarrow)": "import pandas",
    "import simpy": "import simpy",
    "import numpy, pandas, simpy": "import numpy, pandas, simpy",
    "import o2ksim.run.api": "import o2ksim.run.api",
    "o2ksim --help": "from o2ksim.cli import main; main(['--help'])",
    "o2ksim policies": "from o2ksim.cli import main; main(['policies'])",
}


def startup_floor(repeat: int) -> None:
    """Best-of-``repeat`` wall and CPU seconds of interpreter start and the imports every run pays."""
    print("| process | wall s (best) | CPU s (best) |")
    print("|---|---|---|")
    for label, code in FLOOR.items():
        runs = [_child_run([O2KSIM[0], "-c", code]) for _ in range(repeat)]
        print(f"| `{label}` | {min(r[0] for r in runs):.3f} | {min(r[1] for r in runs):.3f} |", flush=True)


def main() -> None:
    keys = [c.key for c in CASES if c.trace]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", help=f"cases (default kth10k kth hpc2n): {' '.join(keys)}")
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs")
    ap.add_argument("--wall", action="store_true", help="wall seconds (default: CPU seconds)")
    ap.add_argument("--startup", action="store_true", help="only the start-up floor: interpreter and imports")
    ap.add_argument("--no-compile", action="store_true", help="do not byte-compile o2ksim first")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs o2ksim (default: this one)")
    args = ap.parse_args()
    O2KSIM[0] = args.python
    if not args.no_compile:
        import compileall

        compileall.compile_dir(ROOT / "o2ksim", quiet=1)  # as an installed package has it
    if args.startup:
        startup_floor(max(args.repeat, 5))
        return
    print(f"{'wall' if args.wall else 'CPU'} seconds")
    print("| workload | jobs | " + " | ".join(PHASES) + " | whole process | oracle | ratio |")
    print("|---" * (len(PHASES) + 5) + "|")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        chosen = [c for c in CASES if c.trace and c.key in (args.cases or ["kth10k", "kth", "hpc2n"])]
        for case in chosen:
            trace = trace_of(case, tmp)
            assert trace is not None
            oracle_cmd = [sys.executable, str(ORACLE), str(trace), "-", str(case.oracle_procs), str(tmp / "o.csv")]
            best = None
            for _ in range(args.repeat):
                run = phases(trace, tmp / case.key, cpu=not args.wall)
                run["oracle"] = _child_run(oracle_cmd)[0 if args.wall else 1]
                if best is None or run["whole"] / run["oracle"] < best["whole"] / best["oracle"]:
                    best = run
            assert best is not None
            cells = " | ".join(f"{best[p]:.3f}" for p in PHASES)
            print(
                f"| {case.label} | {best['jobs']} | {cells} | {best['whole']:.2f} | {best['oracle']:.2f} "
                f"| {best['whole'] / best['oracle']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
