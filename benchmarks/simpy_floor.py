"""The SimPy floor of a schedule: what the design card's events cost with no policy and no books.

Usage::

    o2ksim run --trace T --policy fcfs-backfill --machine M --out DIR -q
    python benchmarks/simpy_floor.py DIR [--repeat 3]

Replays the schedule recorded in ``DIR/jobs.csv`` (each job's submit, start
and end, processors, memory and host) in two minimal SimPy models and prints
the CPU time of ``env.run()`` in each, best of ``--repeat``.  Memory is
taken and given back only when the run's machine constrains it (as the
engine does; ``DIR/run.json`` says whether it does):

* ``design card``: the events the engine of ``o2ksim/engine/`` must create
  for every job -- the arrivals process's timeout per distinct submit time,
  a scheduler wake-up event per pass (one at every arrival instant and every
  departure instant, the tie rule's ``env.peek()`` loop included), the job's
  own ``simpy.Process`` (its ``Initialize`` and end events), a Container
  ``get`` and ``put`` of its processors and, when it asks for memory, of its
  memory, and its timeout.  A "pass" only looks up the jobs that the recorded
  schedule starts at this instant: no policy, no snapshot, no bookkeeping.
* ``counters``: the model before the redesign (46fd92b): processors and memory
  as counters, no process per job (a timeout whose callback ends the job),
  the same arrivals, wake-ups and passes.

The difference between the two is the price of the design card's model with
every pass kept; the difference between ``design card`` and the engine's
simulate time (``sim_seconds`` in ``summary.json``, or
``benchmarks/phases.py``) is the engine's and the policy's own Python.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections import defaultdict
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, NamedTuple

import simpy


class Row(NamedTuple):
    submit: float
    start: float
    end: float
    procs: int
    mem: float
    host: str


def load(path: str, memory: bool) -> list[Row]:
    """The completed jobs of a ``jobs.csv``, in submit order (``memory``: keep their memory)."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] == "completed":
                mem = float(r["mem"] or 0.0) if memory else 0.0
                rows.append(
                    Row(float(r["submit"]), float(r["start"]), float(r["end"]), int(r["procs"]), mem, r["host"])
                )
    rows.sort(key=lambda r: r.submit)
    return rows


class Wakeup:
    """The scheduler's wake-up: one event per pass, requests before it runs are one pass."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.event = env.event()
        self.pending = False

    def request(self, _event: Any = None) -> None:
        if not self.pending:
            self.pending = True
            self.event.succeed()


def model(rows: list[Row], card: bool) -> float:
    """CPU seconds of ``env.run()`` replaying ``rows`` (``card``: the design card's events)."""
    env = simpy.Environment()
    big = 10**15
    procs = {r.host: simpy.Container(env, big, init=big) for r in rows}
    mem = {r.host: simpy.Container(env, big, init=big) for r in rows}
    starts: dict[float, list[Row]] = defaultdict(list)
    for r in rows:
        starts[r.start].append(r)
    wake = Wakeup(env)

    def job(r: Row) -> Generator[simpy.Event, Any, None]:
        procs[r.host].get(r.procs)
        if r.mem:
            mem[r.host].get(r.mem)
        yield env.timeout(r.end - r.start)
        procs[r.host].put(r.procs)
        if r.mem:
            mem[r.host].put(r.mem)

    def arrivals() -> Generator[simpy.Event, Any, None]:
        for r in rows:
            if r.submit > env.now:
                yield env.timeout(r.submit - env.now)
            wake.request()

    def scheduler() -> Generator[simpy.Event, Any, None]:
        start: Callable[[Row], None]
        if card:
            def start(r: Row) -> None:
                env.process(job(r)).callbacks.append(wake.request)
        else:
            def start(r: Row) -> None:
                env.timeout(r.end - r.start).callbacks.append(wake.request)
        while True:
            yield wake.event
            while env.peek() == env.now:
                yield env.timeout(0)
            wake.event = env.event()
            wake.pending = False
            for r in starts.pop(env.now, ()):
                start(r)

    env.process(arrivals())
    env.process(scheduler())
    t0 = time.process_time()
    env.run()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="an `o2ksim run --out` directory (jobs.csv, run.json)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    run_dir = Path(args.run_dir)
    machine = json.loads((run_dir / "run.json").read_text())["machine"]
    rows = load(str(run_dir / "jobs.csv"), "memory not constrained" not in machine)
    print(f"{run_dir}: {machine}; {len(rows)} completed jobs, {sum(1 for r in rows if r.mem)} taking memory")
    print(f"| model | CPU s (best of {args.repeat}) | us per job |")
    print("|---|---|---|")
    for label, card in (("design card", True), ("counters", False)):
        best = min(model(rows, card) for _ in range(args.repeat))
        print(f"| {label} | {best:.3f} | {best / len(rows) * 1e6:.1f} |")


if __name__ == "__main__":
    main()
