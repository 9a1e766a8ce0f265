"""How much of a simulation the backfill pass takes, and how much of that is the reservation.

Usage::

    python benchmarks/policy_share.py kth            # KTH-SP2 whole, FCFS-backfill
    python benchmarks/policy_share.py hpc2n o2k      # HPC2N whole; the O2K month (LXF&W)

For each case, in one process: the CPU seconds of ``Simulation.run``; of
``Backfill.schedule`` (every pass of the policy); of the placement of the
deferred reservation inside it (``_Pass.place_pending``: the head job's
shadow, from the hosts' sorted releases); and the rest of the pass (priority
order, free resources, starting the jobs that fit, the backfill scan).  The
clock is read around every pass, which adds about a microsecond per pass to
the two policy figures; compare them between versions of the code run in the
same session, not with other benchmarks.  Needs ``../shared/traces``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT.parent / "shared" / "traces"
CASES = {
    "kth": ("KTH-SP2-1996-2.1-cln.swf.gz", "fcfs-backfill"),
    "hpc2n": ("HPC2N-2002-2.1-cln.swf.gz", "fcfs-backfill"),
    "o2k": (None, "lxfw-backfill"),  # the default synthetic O2K month with its cool-down tail
}


def measure(case: str) -> dict[str, float]:
    """CPU seconds of the run, the policy's passes, and the reservation placement in them."""
    from o2ksim.policies import backfill, backfill_pass
    from o2ksim.run.api import simulate
    from o2ksim.workloads.swf import read_swf

    clock = time.process_time
    spent = {"passes": 0.0, "reservation": 0.0}
    schedule, place = backfill.Backfill.schedule, backfill_pass.BackfillPass.place_pending

    def timed_schedule(self, snap):  # type: ignore[no-untyped-def]
        t = clock()
        try:
            return schedule(self, snap)
        finally:
            spent["passes"] += clock() - t

    def timed_place(self, pending):  # type: ignore[no-untyped-def]
        t = clock()
        try:
            return place(self, pending)
        finally:
            spent["reservation"] += clock() - t

    backfill.Backfill.schedule = timed_schedule  # type: ignore[method-assign]
    backfill_pass.BackfillPass.place_pending = timed_place  # type: ignore[method-assign]
    try:
        trace_name, policy = CASES[case]
        if trace_name is None:
            from o2ksim.cli import main as cli

            t0 = clock()
            cli(["run", "--policy", policy, "-q", "--out", str(Path("/tmp") / "o2ksim-policy-share")])
        else:
            trace = read_swf(TRACES / trace_name)
            t0 = clock()
            simulate(trace, policy=policy)
        total = clock() - t0
    finally:
        backfill.Backfill.schedule = schedule  # type: ignore[method-assign]
        backfill_pass.BackfillPass.place_pending = place  # type: ignore[method-assign]
    return {"run": total, **spent, "rest": spent["passes"] - spent["reservation"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", default=["kth"], help=f"cases: {' '.join(CASES)}")
    args = ap.parse_args()
    print("| case | run CPU s | passes CPU s | reservation placement | rest of the pass |")
    print("|---|---|---|---|---|")
    for case in args.cases:
        if case not in CASES:
            sys.exit(f"policy_share.py: error: unknown case {case!r} (known: {', '.join(CASES)})")
        r = measure(case)
        print(
            f"| {case} | {r['run']:.2f} | {r['passes']:.2f} | {r['reservation']:.2f} | {r['rest']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
