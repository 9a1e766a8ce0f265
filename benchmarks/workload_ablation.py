"""Workload ablations for issue 23's two immediate-service ratio rows: one workload property at a time.

Usage::

    python benchmarks/workload_ablation.py --describe              # R / T and memory of the generated months
    python benchmarks/workload_ablation.py --knobs model requests=class-limit requests=scenario-a \\
        mem=table6 mem=2 batch=HPC2N --seeds 1 2
    python benchmarks/workload_ablation.py --table6 mem=table6      # Table 6 per class under a knob

The thesis (T§5.5) has about 90 % of its preemptive 1-minute trials on free
processors; in o2ksim's generated months 61-80 % of them preempt, because only
about a fifth to two fifths of the arrivals that cannot start find a host with
their processors and 1 GB idle (docs/background/thesis-fidelity.md).  This
script changes one property of the generated months -- nothing in the
policy or the engine -- and reruns the arrival observer of
``benchmarks/arrival_state.py`` (LXF&W-backfill with the preemptive
1-minute immediate service, 1 GB, on ``hosts/o2k.toml``; a week of warm-up,
30 analysed days).  Knobs (``--knobs``, each a separate run of every month and seed):

* ``model``: the per-month set as shipped (``generate("o2k", params=MONTH)``);
* ``requests=class-limit``: every job requests its LSF class's time limit
  (5, 50, 200 or 400 h, T Table 3) -- the largest R that keeps the job in
  its class, i.e. every request a default one.  T, P, M, the class and so
  Table 6 are unchanged; only the backfill sees a longer R;
* ``requests=scenario-a``: ``min(R, 1.2 T)`` (T§6.2.1's Scenario A, k = 20):
  the opposite bracket, far more accurate requests than the O2K's;
* ``mem=F``: every job's requested memory times F, capped at its LSF size
  class's limit (sj 2 GB, mj 4 GB, lj 16 GB, T Table 3) so that the class
  stays; the job's peak use is unchanged (users over-request, T§4.5.2);
* ``mem=table6``: as ``mem=F`` with F per month chosen so that the month's
  M x T (all jobs, the dedicated hosts' vst jobs included, as Table 6
  counts them) is Table 6's for that month (mean of ten generated months);
* ``mem=table6-class``: one factor per LSF class and month (never below 1),
  so that each class's M x T is the month's Table 6 value where the model is
  below it (capped as ``mem=F``) -- Table 6's memory demand class by class;
* ``batch=TRACE``: same-second submission batches replayed from a real trace
  in ``/work/shared/traces`` (or ``$O2KSIM_TRACES``; e.g. HPC2N, CEA-Curie,
  SDSC-Par): the trace's sequence of batch sizes (jobs sharing a submit
  second), cycled over the generated jobs in submit order, each batch moved
  to its first job's second.  Job attributes and count are unchanged.
* ``A+B``: knobs A and B together (e.g. ``mem=table6+requests=class-limit``).

``--table6 KNOB`` checks a knob against issue 23's limits on Table 6 per
class (ten generated months per month, all jobs, as ``tests/test_o2k_months.py``):
job share within 3 points, P x T and M x T within 25 % or inside Table 6's
nine-month range.  ``--describe`` prints the generated months' T/R and
memory statistics beside the thesis's ch. 4 numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from arrival_state import MONTH, THESIS_MONTHS, WARMUP, ArrivalState
from workload_knobs import (
    ALL_JOBS,
    HOUR,
    MONTH_DAYS,
    TIME_LIMIT_S,
    knob_transform,
    table6_check,
    table6_class_factors,
    table6_factor,
)

from o2ksim.machine import KB_PER_MB, load_machine
from o2ksim.run.api import simulate
from o2ksim.workloads.models import generate
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.transforms import Window


def interarrival_cv(submit: np.ndarray) -> float:
    """CV of the interarrival times in the weekday peak hours (8-18 h UTC, T§4.3's periods)."""
    s = np.sort(submit)
    gaps, t0 = np.diff(s), s[:-1]
    day, hour = (t0 // 86400) % 7, (t0 % 86400) / HOUR
    sel = (day < 5) & (hour >= 9) & (hour < 17) & (gaps < 8 * HOUR)
    g = gaps[sel]
    return float(g.std() / g.mean()) if len(g) > 1 else float("nan")


P_GROUPS = ((1, 1), (2, 8), (9, 32), (33, 64))


def preempting_arrivals(obs: ArrivalState) -> dict[str, Any]:
    """Who preempts: the preempting trials by requested processors, and what the hosts had idle.

    ``by_procs``: share of the preempting trials in each of :data:`P_GROUPS`;
    ``no_idle_anywhere``: share that found no idle processor on any host;
    ``max_host_idle_median``: the median of the largest idle count of a host.
    """
    outcomes = np.array([obs.outcome.get(j, "waits") for j in obs.row_of])
    if not len(outcomes):
        return {"n": 0}
    procs = np.array([r[1] for r in obs.rows])
    idle = obs.cap_procs[None, :] - np.array(obs.used_procs_at)
    pre = outcomes == "trial_preempting"
    n = int(pre.sum())
    if not n:
        return {"n": 0}
    best = idle.max(axis=1)
    return {
        "n": n,
        "by_procs": [float(((procs >= a) & (procs <= b) & pre).sum() / n) for a, b in P_GROUPS],
        "no_idle_anywhere": float(((best <= 0) & pre).sum() / n),
        "max_host_idle_median": float(np.median(best[pre])),
        "arrivals_by_procs": [float(((procs >= a) & (procs <= b)).mean()) for a, b in P_GROUPS],
    }


def run_case(month: str, seed: int, knob: str, policy: str) -> dict[str, Any]:
    """One generated month under one knob, observed at arrivals (as ``arrival_state.run_case``)."""
    trace = generate("o2k", span=WARMUP + MONTH, seed=seed, params=month)
    fn, estimates = knob_transform(knob)
    jobs = trace.jobs if fn is None else fn(trace.jobs, month, seed)
    if fn is not None:
        jobs = jobs.sort_values("submit", kind="stable").reset_index(drop=True)
        trace = Trace(jobs, trace.header)
    machine = load_machine("o2k")
    obs = ArrivalState(machine, WARMUP, WARMUP + MONTH)
    t0 = time.process_time()
    result = simulate(trace, machine=machine, policy=policy, estimates=estimates,
                      window=Window(WARMUP, WARMUP + MONTH, WARMUP), observers=[obs])  # fmt: skip
    out = obs.measures()
    out["preempting"] = preempting_arrivals(obs)
    s = result.summary
    mj = result.jobs.loc[result.jobs["analysed"]]
    cap = MONTH * sum(h.procs for h in machine.hosts)
    cap_mb = MONTH * sum(h.memory for h in machine.hosts) / KB_PER_MB
    out.update(
        month=month,
        seed=seed,
        knob=knob,
        pxt=float((mj["procs"] * mj["run_time"]).sum() / cap),
        mxt=float((mj["mem"] * mj["run_time"]).sum() / cap_mb),
        utilisation=s.get("utilisation"),
        trials=s.get("immediate_service_jobs", 0),
        trials_completed=s.get("immediate_service_completed", 0),
        trials_preempting=s.get("immediate_service_preempting", 0),
        peak_cv=interarrival_cv(jobs["submit"].to_numpy().astype(float)),
        cpu_seconds=time.process_time() - t0,
    )
    return out


# ---------------------------------------------------------------------------------------------
# describe: the generated months' R / T and memory against ch. 4
# ---------------------------------------------------------------------------------------------


def describe(months: list[str], seeds: range) -> None:
    """T/R per time class and overall, and memory efficiency, of the generated months (all jobs)."""
    frames = []
    for month in months:
        for seed in seeds:
            j = generate("o2k", span=f"{MONTH_DAYS[month]}d", seed=seed, params=month,
                         overrides=ALL_JOBS).jobs  # fmt: skip
            frames.append(j.assign(month=month))
    j = pd.concat(frames, ignore_index=True)
    r, t = j["req_time"].to_numpy(float), j["run_time"].to_numpy(float)
    q = t / r
    tc = (j["queue"].to_numpy() - 1) % 4
    default = np.isin(r, TIME_LIMIT_S)

    def pc(mask: np.ndarray, of: np.ndarray | None = None) -> str:
        of = np.ones(len(mask), bool) if of is None else of
        return f"{100 * (mask & of).sum() / max(of.sum(), 1):.0f}"

    print(f"{len(j)} jobs: {', '.join(months)}, seeds {seeds.start}-{seeds.stop - 1}\n")
    print("| jobs | n | T/R <= 0.1 | T/R < 0.2 | T/R > 1 | T < 1 min | T < 10 min | median R/T |")
    print("|---|---|---|---|---|---|---|---|")
    groups = [("all", np.ones(len(j), bool)), ("default R", default), ("non-default R", ~default)]
    groups += [(f"{name} (R <= {int(lim / HOUR)} h)", tc == i)
               for i, (name, lim) in enumerate(zip(("vst", "st", "mt", "lt"), TIME_LIMIT_S, strict=True))]  # fmt: skip
    for name, g in groups:
        print(f"| {name} | {g.sum()} | {pc(q <= 0.1, g)} | {pc(q < 0.2, g)} | {pc(q > 1, g)} "
              f"| {pc(t < 60, g)} | {pc(t < 600, g)} | {np.median(r[g] / t[g]):.1f} |")  # fmt: skip
    r50, r200, r400 = r > 50 * HOUR, r > 200 * HOUR, r == 400 * HOUR
    print(f"\nR > 50 h: T in 10-50 h {pc((t >= 10 * HOUR) & (t <= 50 * HOUR), r50)} %; "
          f"R > 200 h: T in 10-100 h {pc((t >= 10 * HOUR) & (t <= 100 * HOUR), r200)} %; "
          f"R = 400 h: T in 5-50 h {pc((t > 5 * HOUR) & (t < 50 * HOUR), r400)} %; "
          f"R > 5 h: T < 1 min {pc(t < 60, r > 5 * HOUR)} %")  # fmt: skip
    mem = (j["req_mem"] * j["req_procs"]).to_numpy(float)
    peak = (j["used_mem"] * j["req_procs"]).to_numpy(float)
    print(f"memory: peak / requested, M x T weighted: {100 * (peak * t).sum() / (mem * t).sum():.0f} % "
          f"(an upper bound of the thesis's average memory efficiency, 40-55 %, T§4.5.2); "
          f"jobs asking > 1 GB: {pc(mem > 1024 * KB_PER_MB)} %")  # fmt: skip
    for month in months:
        g = (j["month"] == month).to_numpy()
        print(
            f"  {month}: peak/requested {100 * (peak[g] * t[g]).sum() / (mem[g] * t[g]).sum():.0f} %"
        )


# ---------------------------------------------------------------------------------------------


HEADER = (
    "| month | seed | knob | P x T | M x T | util. | peak CV | trials (% arr.) | finished in trial % "
    "| % preempting | not started (% arr.) | procs+1GB | full fits | mem. bind | proc. bind |"
)


def row(o: dict[str, Any]) -> str:
    """One Markdown row of :data:`HEADER`."""
    ns = o["not_started"]
    tr = o["trials"]
    pre = 100 * o["trials_preempting"] / tr if tr else float("nan")
    fin = 100 * o["trials_completed"] / tr if tr else float("nan")
    util = o["utilisation"] or float("nan")
    return (
        f"| {o['month']} | {o['seed']} | {o['knob']} | {100 * o['pxt']:.0f} | {100 * o['mxt']:.0f} "
        f"| {util:.2f} | {o['peak_cv']:.2f} | {tr} ({100 * tr / max(o['arrivals'], 1):.1f}) | {fin:.1f} "
        f"| {pre:.1f} | {ns['arrivals']} ({100 * ns['arrivals'] / max(o['arrivals'], 1):.1f}) "
        f"| {100 * ns['both']:.1f} | {100 * ns['full_fits']:.1f} | {100 * ns['memory_binding']:.1f} "
        f"| {100 * ns['processors_binding']:.1f} |"
    )


LOADED = 0.86  # a run is "loaded" at utilisation >= 0.86 (docs/background/thesis-fidelity.md)


def summary(results: list[dict[str, Any]]) -> list[str]:
    """Per knob: ranges over the runs of % preempting, preempting trials, and over the loaded runs
    of trials (% of arrivals) and finished in trial (% of trials) -- the kept claims."""
    lines = [
        "| knob | runs (loaded) | % preempting (mean) | loaded: preempting trials | procs+1GB free "
        "| mem. bind | loaded: trials % arr. | loaded: finished in trial % |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def rng(vals: list[float], fmt: str = ".0f") -> str:
        return f"{min(vals):{fmt}}-{max(vals):{fmt}}" if vals else "-"

    for knob in dict.fromkeys(o["knob"] for o in results):
        runs = [o for o in results if o["knob"] == knob and o["trials"]]
        loaded = [o for o in runs if (o["utilisation"] or 0) >= LOADED]
        pre = [100 * o["trials_preempting"] / o["trials"] for o in runs]
        lines.append(
            f"| {knob} | {len(runs)} ({len(loaded)}) "
            f"| {rng(pre)} ({np.mean(pre):.0f}) "
            f"| {rng([o['trials_preempting'] for o in loaded])} "
            f"| {rng([100 * o['not_started']['both'] for o in runs])} "
            f"| {rng([100 * o['not_started']['memory_binding'] for o in runs])} "
            f"| {rng([100 * o['trials'] / o['arrivals'] for o in loaded], '.1f')} "
            f"| {rng([100 * o['trials_completed'] / o['trials'] for o in loaded], '.1f')} |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--months", nargs="+", default=list(THESIS_MONTHS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--knobs", nargs="+", default=["model"], help="see the module docstring")
    ap.add_argument("--policy", default="lxfw-backfill-immediate")
    ap.add_argument("--table6", nargs="+", metavar="KNOB", help="only check knobs against Table 6")
    ap.add_argument(
        "--describe", action="store_true", help="only print R / T and memory statistics"
    )
    ap.add_argument("--out", help="write the runs as JSON here")
    ap.add_argument(
        "--summarise", nargs="+", metavar="JSON", help="only print the summary of --out files"
    )
    args = ap.parse_args()
    if args.summarise:
        runs = [o for path in args.summarise for o in json.loads(Path(path).read_text())]
        print("\n".join(summary(runs)))
        return
    if args.describe:
        describe(args.months, range(1, 6))
        return
    if args.table6:
        print("| knob | month | factor | M x T all jobs (Table 6) | outside issue 23's limits |")
        print("|---|---|---|---|---|")
        for knob in args.table6:
            for month in args.months:
                c = table6_check(month, knob)
                fac = "-"
                if knob == "mem=table6":
                    fac = f"{table6_factor(month):.3f}"
                elif knob == "mem=table6-class":
                    fac = " ".join(f"{x:.2f}" for x in table6_class_factors(month))
                print(f"| {knob} | {month} | {fac} | {100 * c['mxt_all']:.0f} % ({100 * c['mxt_table6']:.0f} %) "
                      f"| {'; '.join(c['outside']) or 'none'} |", flush=True)  # fmt: skip
        return
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    results = []
    for month in args.months:
        for seed in args.seeds:
            for knob in args.knobs:
                o = run_case(month, seed, knob, args.policy)
                results.append(o)
                print(row(o), flush=True)
    print(
        f"\n{args.policy}; simulation CPU {sum(o['cpu_seconds'] for o in results):.0f} s in all\n"
    )
    print("\n".join(summary(results)))
    print(
        "\nWho preempts: share of the preempting trials by requested processors (1 / 2-8 / 9-32 / 33-64;"
    )
    print(
        "the arrivals' own shares in brackets), found no idle processor on any host, median largest idle count"
    )
    print(
        "\n| month | seed | knob | util. | preempting | by P, % | no idle anywhere % | largest idle on a host |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for o in results:
        pr = o["preempting"]
        if pr["n"]:
            by = " / ".join(f"{100 * x:.0f}" for x in pr["by_procs"])
            arr = " / ".join(f"{100 * x:.0f}" for x in pr["arrivals_by_procs"])
            print(f"| {o['month']} | {o['seed']} | {o['knob']} | {o['utilisation'] or float('nan'):.2f} "
                  f"| {pr['n']} | {by} ({arr}) | {100 * pr['no_idle_anywhere']:.0f} "
                  f"| {pr['max_host_idle_median']:.0f} |")  # fmt: skip
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1, default=float)


if __name__ == "__main__":
    main()
