"""How long a Gantt chart of one day of a real run takes to draw (issue 25: it took 43 s).

Usage::

    python benchmarks/gantt_day.py                      # the whole KTH-SP2 log, FCFS-backfill
    python benchmarks/gantt_day.py --days 231 100 300 --out /tmp/gantt-days
    python benchmarks/gantt_day.py --trace traces/kth-sp2-sample.swf --days 9

The run is simulated once with a :class:`~o2ksim.report.gantt.GanttRecorder`
(``explain=True``: reservations reported), matplotlib is imported apart, then
for each day ``gantt_figure`` (rows, marks, label placement) and ``savefig``
(PNG at 120 dpi) are timed separately.  Needs ``../shared/traces`` for the
default trace.  The figures of the Gantt guide (docs/guides/gantt.md) come
from this script.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from o2ksim import simulate
from o2ksim.report.gantt import GanttRecorder, gantt_figure

DAY = 86400.0
DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=str(DEFAULT))
    ap.add_argument("--policy", default="fcfs-backfill")
    ap.add_argument("--days", type=int, nargs="+", default=[231, 100, 300])
    ap.add_argument("--out", default="gantt-days", help="folder for the PNGs")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rec = GanttRecorder()
    began = time.perf_counter()
    result = simulate(args.trace, None, args.policy, explain=True, observers=[rec])
    print(f"simulated {len(result.jobs)} jobs in {time.perf_counter() - began:.1f} s")
    began = time.perf_counter()
    import matplotlib.backends.backend_agg  # noqa: F401  (the import, timed apart)

    print(f"matplotlib imported in {time.perf_counter() - began:.1f} s")
    segs = result.segments
    hosts = {h.name: h.procs for h in result.machine.hosts}
    print("| day | submissions | allocations in it | figure | PNG | total |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for day in args.days:
        t0, t1 = day * DAY, (day + 1) * DAY
        began = time.perf_counter()
        fig = gantt_figure(segs, hosts, start=t0, end=t1, teaching=rec.teaching,
                           title=f"{args.policy}, day {day}")  # fmt: skip
        drawn = time.perf_counter()
        fig.savefig(out / f"day{day}.png", dpi=120)
        saved = time.perf_counter()
        n = int(((segs["start"] < t1) & (segs["end"] > t0) & (segs["procs"] > 0)).sum())
        subs = int(((result.jobs["submit"] >= t0) & (result.jobs["submit"] < t1)).sum())
        print(f"| {day} | {subs} | {n} | {drawn - began:.1f} s | {saved - drawn:.1f} s "
              f"| {saved - began:.1f} s |")  # fmt: skip


if __name__ == "__main__":
    main()
