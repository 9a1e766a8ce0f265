"""How much of a conservative-backfilling plan one tie-rule change moves (issue 27).

Usage: python benchmarks/cascade_sizes.py [--sizes 30000 100000] [--release-ties smallest-first]

Runs the ``reservations`` trace of ``scale_pathologies.py`` (a job holds the
100-processor host for 10^7 s while ``n`` jobs arrive one a second, then the
queue drains under ``--reservations all``) and, at every fresh pass after the
first (where :mod:`o2ksim.policies.carried_plan` gave up carrying the plan),
compares the plan the last pass left with the one the fresh pass makes: how
many of the waiting jobs' reservations moved, earlier or later.  A repair that
started before the fresh pass may already have moved some reservations; their
places before it are restored from a journal of the repair's moves
(``PlanRepair._apply`` and ``_started``, wrapped: a measurement, not a
behaviour).

Prints the run's pass counts and CPU seconds, and one Markdown row per fresh
pass: time, queue length, reservations moved (earlier, later), the largest move.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from scale_pathologies import write_trace

from o2ksim import simulate
from o2ksim.policies import carried_plan, plan_repair
from o2ksim.policies.backfill import RELEASE_TIES, Backfill


def measure(path: Path, ties: str) -> tuple[list[dict[str, Any]], dict[str, int], float]:
    """The fresh passes' plan changes of one run, its pass counts and its CPU seconds."""
    rows: list[dict[str, Any]] = []
    journal: dict[int, Any] = {}  # id(entry) -> its placement before the repair moved it
    apply, started = plan_repair.PlanRepair._apply, plan_repair.PlanRepair._started
    carry, record = carried_plan.CarriedPlan.carry, carried_plan.CarriedPlan.record

    def journal_apply(self: Any, e: Any, new: Any) -> None:
        journal.setdefault(id(e), e.placed)
        apply(self, e, new)

    def journal_started(self: Any, e: Any) -> None:
        journal.setdefault(id(e), e.placed)
        started(self, e)

    def fresh_carry(self: Any, p: Any) -> bool:
        journal.clear()
        return bool(carry(self, p))

    def compared_record(self: Any, p: Any) -> None:
        old = None
        if self.profiles is not None:
            old = {}
            for e in self.order[self.head :]:
                placed = journal.get(id(e), e.placed)
                if e.alive or id(e) in journal:
                    old[placed.job.id] = placed.at
        record(self, p)
        if old is not None and p.plan is not None:
            moves = [
                r.at - old[r.job.id] for r in p.plan if r.job.id in old and r.at != old[r.job.id]
            ]
            rows.append({
                "now": p.now, "queue": len(p.plan), "moved": len(moves),
                "earlier": sum(m < 0 for m in moves), "later": sum(m > 0 for m in moves),
                "largest": max((abs(m) for m in moves), default=0.0),
            })  # fmt: skip

    plan_repair.PlanRepair._apply = journal_apply  # type: ignore[method-assign]
    plan_repair.PlanRepair._started = journal_started  # type: ignore[method-assign]
    carried_plan.CarriedPlan.carry = fresh_carry  # type: ignore[method-assign]
    carried_plan.CarriedPlan.record = compared_record  # type: ignore[method-assign]
    try:
        policy = Backfill(reservations="all", release_ties=ties)
        t = time.process_time()
        simulate(str(path), policy=policy)
        cpu = time.process_time() - t
    finally:
        plan_repair.PlanRepair._apply = apply  # type: ignore[method-assign]
        plan_repair.PlanRepair._started = started  # type: ignore[method-assign]
        carried_plan.CarriedPlan.carry = carry  # type: ignore[method-assign]
        carried_plan.CarriedPlan.record = record  # type: ignore[method-assign]
    assert policy.carried is not None
    return rows, dict(policy.carried.counts), cpu


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", nargs="+", type=int, default=[30_000, 100_000])
    ap.add_argument("--release-ties", choices=RELEASE_TIES[1:], default="smallest-first")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="o2ksim-cascades-") as tmp:
        for n in args.sizes:
            rows, counts, cpu = measure(
                write_trace("reservations", n, Path(tmp)), args.release_ties
            )
            print(
                f"\nn = {n}, release_ties = {args.release_ties}: passes {counts}, CPU {cpu:.1f} s"
            )
            print("\n| time s | queue | moved | earlier | later | largest move s |")
            print("|---|---|---|---|---|---|")
            for r in rows:
                print(
                    f"| {r['now']:.0f} | {r['queue']} | {r['moved']} | {r['earlier']} | "
                    f"{r['later']} | {r['largest']:.0f} |"
                )


if __name__ == "__main__":
    main()
