"""The thesis's claims (o2ksim/data/thesis_claims.toml) checked on the full thesis months.

Usage::

    python benchmarks/thesis_claims.py                                  # six months, seed 1
    python benchmarks/thesis_claims.py --months 1999-12 2000-02 --seeds 1 2 3
    python benchmarks/thesis_claims.py --page immediate-service --out /tmp/claims.md

The full-size counterpart of ``tests/test_thesis_claims.py`` (which checks
the same claims on a reduced month): each month of Oct 1999 - Mar 2000 is
generated from its per-month O2K set (``--params``), with a week of warm-up,
the 30-day month measured and the protocol's cool-down tail, and run under
every policy the claims name (:func:`o2ksim.experiments.claims.month_cases`).
Prints the claims table (claim, thesis, o2ksim, verdict, evidence) and the
CPU time; exit status 1 when a claim does not hold in every loaded case
(so it can gate a release, not CI: about 4 CPU s per policy and month).
The recorded run is in docs/background/thesis-fidelity.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from o2ksim.experiments.claims import claims_markdown, evaluate, load_claims, month_cases

MONTHS = ("1999-10", "1999-11", "1999-12", "2000-01", "2000-02", "2000-03")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--months", nargs="+", default=list(MONTHS), help="per-month O2K sets")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--days", type=float, default=30.0, help="measured days of each month")
    ap.add_argument(
        "--page", help="only this page's claims (immediate-service, eqspatial, backfill, ncsa-lsf)"
    )
    ap.add_argument("--out", help="also write the Markdown table here")
    args = ap.parse_args()
    claims, loaded = load_claims(page=args.page)
    policies = sorted({c.policy for c in claims} | {v for c in claims for v in c.versus})
    t0 = time.process_time()
    cases = month_cases(args.months, args.seeds, policies, days=args.days, progress=True)
    outcomes = evaluate(claims, cases, loaded)
    table = claims_markdown(outcomes, loaded)
    print(table)
    for label, by_policy in cases.items():
        util = by_policy[policies[0]]["utilisation"]
        print(f"{label}: utilisation under {policies[0]} {util:.2f}")
    print(f"{len(cases)} cases x {len(policies)} policies: {time.process_time() - t0:.0f} CPU s")
    if args.out:
        Path(args.out).write_text(table)
    return 0 if all(o.verdict in ("holds", "no loaded case") for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
