"""What new jobs find when they arrive: why o2ksim's O2K months need so many preempting trials.

Usage::

    .venv/bin/o2ksim run --machine o2k --policy lxfw-backfill --seed 1 --out /tmp/plain
    .venv/bin/python benchmarks/arrival_free_processors.py /tmp/plain [hosts/o2k.toml]

Reads ``jobs.csv`` of a run *without* preemption (every job holds ``procs``
processors and ``mem`` MB on ``host`` from ``start`` to ``end``), rebuilds each
host's free processors and memory at every analysed arrival and prints: the
share of arrivals that could not start at once (the jobs immediate service
would give a trial), and of those the share that found a host with enough free
processors and the 1 GB trial memory -- a trial without preemption (T§3.2.2);
the rest would need preemption.  Thesis §5.5 implies about 90 % of the trials
ran on free processors (100-200 of 1000-2000 needed preemption).
"""

from __future__ import annotations

import sys
import tomllib

import numpy as np
import pandas as pd

TRIAL_MB = 1024.0


def main() -> None:
    run_dir = sys.argv[1]
    machine = sys.argv[2] if len(sys.argv) > 2 else "hosts/o2k.toml"
    with open(machine, "rb") as f:
        hosts = {h["name"]: (h["procs"], h["memory_gb"] * 1024.0) for h in tomllib.load(f)["host"]}
    jobs = pd.read_csv(f"{run_dir}/jobs.csv")
    if (jobs["preemptions"] > 0).any() or (jobs["restarts"] > 0).any():
        sys.exit("needs a run without preemption or restarts (e.g. --policy lxfw-backfill)")
    ran = jobs.dropna(subset=["start"]).fillna({"end": np.inf})  # unfinished: still running
    # (time, +1 start / -1 end, host, procs, mem); ends before starts at equal times
    events = sorted(
        [(e, 0, h, -p, -m) for e, h, p, m in zip(ran["end"], ran["host"], ran["procs"], ran["mem"], strict=True)]
        + [(s, 1, h, p, m) for s, h, p, m in zip(ran["start"], ran["host"], ran["procs"], ran["mem"], strict=True)]
    )  # fmt: skip
    arrivals = jobs.loc[jobs["analysed"]].sort_values("submit")
    used = {h: [0, 0.0] for h in hosts}
    i = 0
    waited = fits = 0
    free_at_arrival = []
    for sub, start, procs, mem in zip(arrivals["submit"], arrivals["start"], arrivals["procs"],
                                      arrivals["mem"], strict=True):  # fmt: skip
        while i < len(events) and events[i][0] < sub:  # the state just before this arrival
            _, _, h, p, m = events[i]
            used[h][0] += p
            used[h][1] += m
            i += 1
        free = {h: (cap[0] - used[h][0], cap[1] - used[h][1]) for h, cap in hosts.items()}
        free_at_arrival.append(sum(f[0] for f in free.values()))
        if start > sub:
            waited += 1
            need_mem = min(TRIAL_MB, mem) if mem > 0 else TRIAL_MB
            if any(fp >= procs and fm >= need_mem for fp, fm in free.values()):
                fits += 1
    n = len(arrivals)
    total = sum(p for p, _ in hosts.values())
    print(f"{run_dir}: {n} analysed arrivals")
    print(f"  could not start at arrival:          {waited} ({100 * waited / n:.1f} %)")
    print(f"  of those, a host had free procs+1GB: {fits} ({100 * fits / max(waited, 1):.1f} %)"
          f"  -> need preemption: {waited - fits} ({100 * (waited - fits) / max(waited, 1):.1f} %)")  # fmt: skip
    fa = np.array(free_at_arrival)
    print(f"  free processors at arrival (machine, {total}): mean {fa.mean():.1f}, median "
          f"{np.median(fa):.0f}; arrivals finding < 16 free: {100 * (fa < 16).mean():.1f} %")  # fmt: skip


if __name__ == "__main__":
    main()
