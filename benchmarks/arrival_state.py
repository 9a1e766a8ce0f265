"""Idle processors and idle memory per host at every arrival instant, for the thesis's months (issue 23).

Usage::

    .venv/bin/python benchmarks/arrival_state.py                          # 2000-02, seeds 1 2 3
    .venv/bin/python benchmarks/arrival_state.py --months 1999-10 2000-02 --seeds 1 --per-host
    .venv/bin/python benchmarks/arrival_state.py --policy lxfw-backfill --out /tmp/state.json
    .venv/bin/python benchmarks/arrival_state.py --rate-factor 0.85 --policy-param reservations=4

Each case generates one month with the O2K model's per-month parameter set
(``generate("o2k", params="2000-02", ...)``: the class mix and job count of
thesis Table 6) with a week of warm-up, and runs it on the eight O2K hosts
(``hosts/o2k.toml``) under LXF&W-backfill with the preemptive 1-minute
immediate service (the default ``lxfw-backfill-immediate``).  An
:class:`ArrivalState` observer (engine hooks only, so the schedule is the
policy's own) keeps each host's held processors and memory from the
allocation and release events and, at every arrival of an analysed job (the
30 days after the warm-up), records the state *before* the pass the arrival
triggers: each host's idle processors and idle memory, and whether some host
has

* ``procs``: as many idle processors as the job requests;
* ``1GB``: the trial's initial memory idle (``min(1 GB, requested)``, T§3.2.2);
* ``both``: both on the same host -- a trial without preemption (T§3.2.2);
* ``full``: the requested processors and the requested memory -- a full start.

Binding resource, over the arrivals that find no host for their trial
(``both`` false): *memory* when a host has the processors but not the 1 GB,
*processors* when a host has the 1 GB but none has the processors, and
*both* when no host has either.  The same for the full request (``full``).
For the arrivals that could not start as full jobs: the share that found the
processors and 1 GB on a host (a trial on free processors), the requested
processors and memory (the full job fitted: the backfill reservation kept it
out), the processors without the requested memory (memory binding), or no
host with the processors (processors binding; *fragmented* when the idle
processors of all hosts add up to the request).
For the processors-bound ones, the median request and the median widest
idle block on any host (``bound_procs_median``, ``bound_block_median``; the
median request of all arrivals is ``procs_median``).
What happened to the arrival at its own instant is recorded too: started as a
full job, trial on free processors, trial preempting (a preemption in the same
instant), or neither (it waits).  No run here is a cool-down run: the state
at an arrival depends only on the jobs before it.

``--defer-departures`` is an engine-order ablation (issue 23): a pass that
only a departure asked for (no arrival, no timer at that instant) decides
nothing, so the processors a departure frees stay idle until the next
arrival's or timer's pass (the departed jobs are handed to that pass).  It is
done here by wrapping the policy's ``schedule``, not in the engine: the
thesis's simulator schedules at departures (T§3.4, "the events include the
next job arrival and the next job departure"; T§3.7 notes the real
O2K's 5-minute cycle is "not in the simulation"), so this is a measurement,
not a reading to adopt.  After the last submit time it defers nothing (the
queue would otherwise never drain).

``--per-host`` adds, per host, the mean idle processors and idle GB at the
arrivals and the share of arrivals finding the host with no idle processor /
under 1 GB idle.  ``--out`` writes every number as JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from o2ksim.engine.monitor import Observer
from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job, JobState
from o2ksim.machine import KB_PER_GB, KB_PER_MB, MachineSpec, load_machine
from o2ksim.policies.base import Policy, make_policy
from o2ksim.policies.immediate import DEFAULT_INITIAL_MEMORY
from o2ksim.run.api import simulate
from o2ksim.workloads.models import generate, load_params
from o2ksim.workloads.transforms import Window

DAY = 86400.0
WARMUP = 7 * DAY
MONTH = 30 * DAY
OUTCOMES = ("full_start", "trial_free", "trial_preempting", "waits")
THESIS_MONTHS = ("1999-10", "1999-11", "1999-12", "2000-01", "2000-02", "2000-03")


def _median(x: np.ndarray) -> float:
    """The median, ``nan`` for no values."""
    return float(np.median(x)) if len(x) else float("nan")


@dataclass
class ArrivalState(Observer):
    """Per-host idle processors and memory at each analysed arrival, from the engine's events only.

    ``start``/``end``: the analysed submit window (seconds).  Memory is KB, as
    in the engine.  The held amounts come from ``on_allocation`` (a job's
    current ``alloc_procs``/``alloc_mem`` on ``job.host``; a preempted job keeps
    its memory) and ``on_release``.
    """

    machine: MachineSpec
    start: float
    end: float
    trial_mem: float = DEFAULT_INITIAL_MEMORY
    held: dict[int, tuple[str, int, float]] = field(default_factory=dict)
    used_procs: dict[str, int] = field(default_factory=dict)
    used_mem: dict[str, float] = field(default_factory=dict)
    rows: list[tuple[float, int, float]] = field(default_factory=list)  # submit, procs, mem
    used_procs_at: list[list[int]] = field(default_factory=list)
    used_mem_at: list[list[float]] = field(default_factory=list)
    outcome: dict[int, str] = field(default_factory=dict)  # job id -> what happened at arrival
    row_of: dict[int, int] = field(default_factory=dict)
    last_preempt: float = -1.0

    def __post_init__(self) -> None:
        self.names = [h.name for h in self.machine.hosts]
        self.cap_procs = np.array([h.procs for h in self.machine.hosts])
        self.cap_mem = np.array([h.memory for h in self.machine.hosts], dtype=float)
        self.used_procs = dict.fromkeys(self.names, 0)
        self.used_mem = dict.fromkeys(self.names, 0.0)

    def _drop(self, job_id: int) -> None:
        old = self.held.pop(job_id, None)
        if old is not None:
            host, procs, mem = old
            self.used_procs[host] -= procs
            self.used_mem[host] -= mem

    def on_allocation(self, job: Job, now: float) -> None:
        self._drop(job.id)
        assert job.host is not None
        self.held[job.id] = (job.host, job.alloc_procs, job.alloc_mem)
        self.used_procs[job.host] += job.alloc_procs
        self.used_mem[job.host] += job.alloc_mem
        if job.state is JobState.PREEMPTED:
            self.last_preempt = now
        elif job.id in self.row_of and job.id not in self.outcome and now == job.spec.submit:
            if job.limit_action == "requeue" and np.isfinite(job.time_limit):
                self.outcome[job.id] = (
                    "trial_preempting" if self.last_preempt == now else "trial_free"
                )
            else:
                self.outcome[job.id] = "full_start"

    def on_release(self, job: Job, now: float) -> None:
        self._drop(job.id)

    def on_arrival(self, job: Job, now: float) -> None:
        if not (self.start <= job.spec.submit < self.end):
            return
        self.row_of[job.id] = len(self.rows)
        self.rows.append((now, job.spec.procs, float(job.spec.mem)))
        self.used_procs_at.append([self.used_procs[h] for h in self.names])
        self.used_mem_at.append([self.used_mem[h] for h in self.names])

    def measures(self) -> dict[str, Any]:
        """The shares of the module docstring, per-host means, and the outcomes at arrival."""
        n = len(self.rows)
        procs = np.array([r[1] for r in self.rows])[:, None]
        mem = np.array([r[2] for r in self.rows])[:, None]
        idle_p = self.cap_procs[None, :] - np.array(self.used_procs_at)
        idle_m = self.cap_mem[None, :] - np.array(self.used_mem_at)
        trial_m = np.where(mem > 0, np.minimum(self.trial_mem, mem), self.trial_mem)
        p_ok = idle_p >= procs
        m_ok = idle_m >= trial_m
        fm_ok = idle_m >= mem
        has_p, has_m = p_ok.any(1), m_ok.any(1)
        both, full = (p_ok & m_ok).any(1), (p_ok & fm_ok).any(1)
        has_fm = fm_ok.any(1)
        outcomes = [self.outcome.get(j, "waits") for j in self.row_of]

        def not_started() -> dict[str, float]:
            # the arrivals that could not start as full jobs at their instant: what they found
            miss = np.array([o != "full_start" for o in outcomes], dtype=bool)
            k = max(int(miss.sum()), 1)
            return {
                "arrivals": int(miss.sum()),
                "procs": float((miss & has_p).sum() / k),
                "both": float((miss & both).sum() / k),
                "full_fits": float((miss & full).sum() / k),
                "memory_binding": float((miss & has_p & ~full).sum() / k),
                # no host has the processors, yet the machine's idle processors add up to them
                "fragmented": float((miss & ~has_p & (idle_p.sum(1) >= procs[:, 0])).sum() / k),
                "processors_binding": float((miss & ~has_p).sum() / k),
                # the processors-bound ones: what they ask for, the widest idle block they find
                "bound_procs_median": _median(procs[miss & ~has_p, 0]),
                "bound_block_median": _median(idle_p.max(1)[miss & ~has_p]),
            }

        def share(mask: np.ndarray) -> float:
            return float(mask.mean()) if n else float("nan")

        def binding(fit: np.ndarray, p: np.ndarray, m: np.ndarray) -> dict[str, float]:
            miss = ~fit
            k = max(int(miss.sum()), 1)
            return {
                "no_host": share(miss),
                "memory": float((miss & p).sum() / k),
                "processors": float((miss & ~p & m).sum() / k),
                "neither": float((miss & ~p & ~m).sum() / k),
            }

        return {
            "arrivals": n,
            "procs": share(has_p),
            "mem_1gb": share(has_m),
            "both": share(both),
            "full": share(full),
            "trial_binding": binding(both, has_p, has_m),
            "full_binding": binding(full, has_p, has_fm),
            "outcome": {k: outcomes.count(k) / max(n, 1) for k in OUTCOMES},
            "not_started": not_started(),
            "idle_procs_machine_mean": float(idle_p.sum(1).mean()),
            "idle_procs_machine_median": float(np.median(idle_p.sum(1))),
            "procs_median": _median(procs[:, 0]),
            "idle_gb_machine_mean": float(idle_m.sum(1).mean() / KB_PER_GB),
            "hosts": {
                h: {
                    "idle_procs_mean": float(idle_p[:, i].mean()),
                    "idle_gb_mean": float(idle_m[:, i].mean() / KB_PER_GB),
                    "no_idle_proc": share(idle_p[:, i] <= 0),
                    "under_1gb": share(idle_m[:, i] < self.trial_mem),
                }
                for i, h in enumerate(self.names)
            },
        }


def defer_departures(policy: Policy, last_submit: float) -> Policy:
    """``policy`` with its departure-only passes deferred (module docstring), until ``last_submit``.

    A pass with departures but no arrival and no timer returns nothing and
    keeps its departed jobs; the next pass gets them with its own.
    """
    inner = policy.schedule
    kept: list[Job] = []

    def schedule(snap: Snapshot) -> Any:
        if snap.departed and not snap.arrived and not snap.timers and snap.now < last_submit:
            kept.extend(snap.departed)
            return []
        if kept:
            snap = replace(snap, departed=(*kept, *snap.departed))
            kept.clear()
        return inner(snap)

    policy.schedule = schedule  # type: ignore[method-assign]
    return policy


def run_case(
    month: str,
    seed: int,
    policy: str,
    *,
    rate_factor: float = 1.0,
    policy_params: dict[str, object] | None = None,
    defer: bool = False,
) -> dict[str, Any]:
    """One generated month (``params=month``) under ``policy`` on hosts/o2k.toml, observed at arrivals.

    ``rate_factor`` multiplies the month's arrival rate (an ablation of the
    load level: the same class mix, fewer or more jobs); ``policy_params``
    override the policy preset's parameters (e.g. ``{"reservations": 4}``).
    """
    params = None if month == "avg" else month
    overrides = None
    if rate_factor != 1.0:
        base, _ = load_params("o2k", params)
        overrides = {
            "arrivals": {"rate_scale": base["arrivals"].get("rate_scale", 1.0) * rate_factor}
        }
    trace = generate("o2k", span=WARMUP + MONTH, seed=seed, params=params, overrides=overrides)
    machine = load_machine("o2k")
    obs = ArrivalState(machine, WARMUP, WARMUP + MONTH)
    pol = make_policy(policy, **(policy_params or {}))
    if defer:
        pol = defer_departures(pol, float(trace.jobs["submit"].max()))
    t0 = time.process_time()
    result = simulate(trace, machine=machine, policy=pol,
                      window=Window(WARMUP, WARMUP + MONTH, WARMUP), observers=[obs])  # fmt: skip
    out = obs.measures()
    s = result.summary
    month_jobs = result.jobs.loc[result.jobs["analysed"]]
    cap = MONTH * sum(h.procs for h in machine.hosts)
    cap_mb = MONTH * sum(h.memory for h in machine.hosts) / KB_PER_MB
    out["pxt"] = float(
        (month_jobs["procs"] * month_jobs["run_time"]).sum() / cap
    )  # Table 6's P x T
    out["mxt"] = float((month_jobs["mem"] * month_jobs["run_time"]).sum() / cap_mb)  # mem is MB
    out.update(
        month=month,
        seed=seed,
        policy=policy,
        utilisation=s.get("utilisation"),
        trials=s.get("immediate_service_jobs", 0),
        trials_preempting=s.get("immediate_service_preempting", 0),
        trials_completed=s.get("immediate_service_completed", 0),
        mean_wait_h=float(month_jobs["wait"].mean() / 3600),
        mean_slowdown=s.get("mean_slowdown"),
        cpu_seconds=time.process_time() - t0,
    )
    return out


HEADER = (
    "| month | seed | P x T | M x T | util. | arrivals | procs | 1 GB | both | full | trial miss: mem / procs / neither "
    "| full miss: mem / procs / neither | at arrival: full / trial free / trial preempt / wait "
    "| trials preempting (summary) | idle procs mean / median | idle GB mean |"
)


def row(o: dict) -> str:
    """One Markdown table row of :data:`HEADER`."""

    def pc(x: float) -> str:
        return f"{100 * x:.1f}"

    tb, fb, oc = o["trial_binding"], o["full_binding"], o["outcome"]
    util = "-" if o["utilisation"] is None else f"{o['utilisation']:.3f}"
    pre = f"{o['trials_preempting']} / {o['trials']}" if o["trials"] else "-"
    return (
        f"| {o['month']} | {o['seed']} | {pc(o['pxt'])} | {pc(o['mxt'])} | {util} | {o['arrivals']} | {pc(o['procs'])} | {pc(o['mem_1gb'])} "
        f"| {pc(o['both'])} | {pc(o['full'])} "
        f"| {pc(tb['memory'])} / {pc(tb['processors'])} / {pc(tb['neither'])} "
        f"| {pc(fb['memory'])} / {pc(fb['processors'])} / {pc(fb['neither'])} "
        f"| {pc(oc['full_start'])} / {pc(oc['trial_free'])} / {pc(oc['trial_preempting'])} / {pc(oc['waits'])} "
        f"| {pre} | {o['idle_procs_machine_mean']:.1f} / {o['idle_procs_machine_median']:.0f} "
        f"| {o['idle_gb_machine_mean']:.1f} |"
    )


HEADER2 = (
    "| month | seed | not started at arrival | of them: a host with the procs | procs + 1 GB (trial on free) "
    "| procs + requested memory (full fits) | memory binding | processors binding | of which fragmented | trials preempting |"
)


def row2(o: dict) -> str:
    """One Markdown row of :data:`HEADER2`: what the arrivals that could not start in full found."""
    ns = o["not_started"]
    pct = {k: f"{100 * v:.1f}" for k, v in ns.items() if k != "arrivals"}
    pre = f"{100 * o['trials_preempting'] / o['trials']:.1f}" if o["trials"] else "-"
    return (
        f"| {o['month']} | {o['seed']} | {ns['arrivals']} ({100 * ns['arrivals'] / max(o['arrivals'], 1):.1f}) "
        f"| {pct['procs']} | {pct['both']} | {pct['full_fits']} | {pct['memory_binding']} "
        f"| {pct['processors_binding']} | {pct['fragmented']} | {pre} |"
    )


HEADER3 = (
    "| month | seed | P x T | util. | trials (% arr.) | % preempting | % done in quantum "
    "| not started: procs + 1 GB | full fits but held out | processors bound | mean wait h |"
)


def row3(o: dict) -> str:
    """One Markdown row of :data:`HEADER3`: the figures an ablation is judged on."""
    ns, n, t = o["not_started"], max(o["arrivals"], 1), max(o["trials"], 1)
    return (
        f"| {o['month']} | {o['seed']} | {100 * o['pxt']:.0f} | {o['utilisation']:.3f} "
        f"| {o['trials']} ({100 * o['trials'] / n:.1f}) | {100 * o['trials_preempting'] / t:.1f} "
        f"| {100 * o['trials_completed'] / t:.1f} | {100 * ns['both']:.1f} | {100 * ns['full_fits']:.1f} "
        f"| {100 * ns['processors_binding']:.1f} | {o['mean_wait_h']:.2f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--months",
        nargs="+",
        default=["2000-02"],
        help=f"Table 6 months (thesis: {' '.join(THESIS_MONTHS)}); 'avg' = the default set",
    )
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--policy", default="lxfw-backfill-immediate")
    ap.add_argument(
        "--rate-factor",
        type=float,
        default=1.0,
        help="multiply each month's arrival rate (load-level ablation)",
    )
    ap.add_argument(
        "--policy-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a policy parameter, e.g. reservations=4 (repeatable)",
    )
    ap.add_argument(
        "--defer-departures",
        action="store_true",
        help="engine-order ablation: a departure-only pass is deferred to the next arrival or timer",
    )
    ap.add_argument("--per-host", action="store_true", help="also print the per-host table")
    ap.add_argument("--out", help="write all results as JSON here")
    args = ap.parse_args()
    print(
        "shares in % of the analysed arrivals; the 'miss' columns in % of the arrivals with no host"
    )
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    pp: dict[str, object] = {}
    for item in args.policy_param:
        key, _, value = item.partition("=")
        if value.lower() in ("true", "false"):
            pp[key] = value.lower() == "true"
        else:
            pp[key] = int(value) if value.lstrip("-").isdigit() else value
    results = []
    for month in args.months:
        for seed in args.seeds:
            o = run_case(
                month, seed, args.policy, rate_factor=args.rate_factor, policy_params=pp,
                defer=args.defer_departures,
            )  # fmt: skip
            results.append(o)
            print(row(o), flush=True)
    print(
        "\nArrivals that could not start as full jobs at their instant (in %; binding: no host "
        "has procs + requested memory, memory: a host has the procs; processors: none has them)"
    )
    print(HEADER2)
    print("|" + "---|" * (HEADER2.count("|") - 1))
    for o in results:
        print(row2(o))
    print("\nThe figures the ablations are judged on (% of trials, of not-started arrivals)")
    print(HEADER3)
    print("|" + "---|" * (HEADER3.count("|") - 1))
    for o in results:
        print(row3(o))
    total_cpu = sum(o["cpu_seconds"] for o in results)
    defer = " departures deferred" if args.defer_departures else ""
    print(
        f"\n{args.policy} {pp or ''} rate x {args.rate_factor:g}{defer}; "
        f"simulation CPU {total_cpu:.0f} s in all"
    )
    if args.per_host:
        print(
            "\n| month | seed | host | idle procs mean | idle GB mean | no idle proc % | < 1 GB idle % |"
        )
        print("|---|---|---|---|---|---|---|")
        for o in results:
            for h, v in o["hosts"].items():
                print(f"| {o['month']} | {o['seed']} | {h} | {v['idle_procs_mean']:.1f} | {v['idle_gb_mean']:.1f} "
                      f"| {100 * v['no_idle_proc']:.1f} | {100 * v['under_1gb']:.1f} |")  # fmt: skip
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1, default=float)


if __name__ == "__main__":
    main()
