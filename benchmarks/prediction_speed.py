"""Speed of Downey's predictors on a whole trace (issue 13: < 30 s for SDSC-Par-1996).

    .venv/bin/python benchmarks/prediction_speed.py [TRACE]

Times ``o2ksim.prediction.predict`` (head-of-queue predictions A, B and
combined for every wait at the head of the queue, no whole-queue
predictions) on the SDSC-Par-1996 batch partition, and, in the same run, the
plain-Python reference EASY simulator ``../shared/checks/easy_oracle.py`` on
the same trace as a yardstick: on a loaded machine absolute times are
inflated, the ratio is what to compare.  Results are recorded in
docs/guides/queue-time-prediction.md.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "traces" / "SDSC-Par-1996-3.1-cln.swf.gz"
ORACLE = ROOT.parent / "shared" / "checks" / "easy_oracle.py"


def main() -> int:
    from o2ksim.prediction import predict

    trace = Path(sys.argv[1]) if len(sys.argv) > 1 else TRACE
    if not trace.exists():
        print(f"{trace}: not found (needs ../shared/traces)")
        return 0
    t0 = time.perf_counter()
    r = predict(trace, partition="batch", classes="sdsc-paragon", whole_queue=False)
    total = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, str(ORACLE), str(trace), "-", "352"], check=True, capture_output=True
    )
    oracle = time.perf_counter() - t0
    print(f"head-of-queue events: {r.config['head_events']}")
    print("stages: " + ", ".join(f"{k} {v:.2f} s" for k, v in r.timings.items()))
    print(
        f"predict total {total:.2f} s; reference EASY oracle {oracle:.2f} s; ratio {total / oracle:.2f}"
    )
    print(
        f"predictions alone {r.timings['head_predictions']:.2f} s = {r.timings['head_predictions'] / oracle:.2f} x oracle"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
