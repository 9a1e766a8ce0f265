"""Where a trial runs and whom it preempts (T§3.2.2), and the engine decisions that run it.

:func:`plan_trial` applies the thesis's rules (free processors first, the
host with the fewest; else eligible victims by increasing current slowdown,
selected then de-selected by :func:`choose_victims`; the host left with the
fewest idle processors); :func:`trial_decisions` turns a :class:`TrialPlan`
into ``Preempt`` and ``Start`` decisions (time limit ``q``, requeue on
failure, the victims resumed when the trial ends).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from o2ksim.engine.decisions import Preempt, Start
from o2ksim.engine.snapshot import HostView
from o2ksim.jobs import Job
from o2ksim.machine import KB_PER_MB
from o2ksim.policies.immediate.eligibility import VictimLists
from o2ksim.policies.immediate.settings import TrialSettings


@dataclass(frozen=True, slots=True)
class TrialPlan:
    """Where a job's trial runs, with how much memory, and whom it preempts."""

    job: Job
    host: str
    mem: int
    victims: tuple[Job, ...] = ()
    idle_after: int = 0  # processors left idle on the host once the trial has started


def current_slowdown(job: Job, now: float) -> float:
    """Time since arrival divided by the time the job has actually run (T§3.2.2).

    The time run is the work done in the current run (since its last start
    from the queue) at the requested size, so time spent preempted is excluded.
    """
    ran = job.work_done(now) / job.spec.procs if job.spec.procs else 0.0
    return (now - job.spec.submit) / ran if ran > 0 else math.inf


def is_eligible_victim(job: Job, now: float, t: float) -> bool:
    """Run uninterrupted for at least ``t`` and predicted (by its request) to need more than ``t``."""
    return now - job.last_start >= t and job.predicted_end(now) - now > t


def choose_victims(candidates: Sequence[Job], free: int, need: int) -> list[Job] | None:
    """Victims among ``candidates`` (already in preemption order) so that ``free`` plus
    their processors reach ``need``; ``None`` when even all of them are not enough.

    Jobs are selected in order until enough processors are found, then the
    selected ones are tried in reverse order and each one not needed is dropped.
    """
    chosen: list[Job] = []
    have = free
    for job in candidates:
        if have >= need:
            break
        chosen.append(job)
        have += job.alloc_procs
    if have < need:
        return None
    for job in reversed(list(chosen)):
        if have - job.alloc_procs >= need:
            chosen.remove(job)
            have -= job.alloc_procs
    return chosen


def plan_trial(
    job: Job,
    hosts: Iterable[HostView],
    free: dict[str, list[float]],
    now: float,
    settings: TrialSettings,
    *,
    preempt: bool,
    protected: frozenset[int] | set[int] = frozenset(),
    victims: VictimLists | None = None,
) -> TrialPlan | None:
    """Where ``job``'s trial runs (T§3.2.2), or ``None`` when it cannot run now.

    ``free`` maps host name to ``[processors, memory]`` the trial may use
    (processors owed to preempted jobs already deducted).  First choice: a
    host with enough free processors and the trial memory, the one with the
    fewest free processors.  Otherwise, when ``preempt``: on every host with
    the trial memory, eligible running jobs (not in ``protected``, e.g. other
    trials) in increasing current slowdown, selected and de-selected by
    :func:`choose_victims`; the host left with the fewest idle processors wins.
    ``victims`` shares the eligible lists between the trials of one pass.
    """
    spec = job.spec
    need = spec.procs
    mem = settings.trial_memory(spec)
    best: str | None = None
    best_free = math.inf
    hosts = tuple(hosts)
    for h in hosts:
        f = free[h.name]
        if f[0] >= need and f[1] >= mem and f[0] < best_free:
            best, best_free = h.name, f[0]
    if best is not None:
        return TrialPlan(job, best, mem, (), int(best_free - need))
    if not preempt:
        return None
    if victims is None:
        victims = VictimLists(now, settings.eligible_after, protected)
    plan: TrialPlan | None = None
    for h in hosts:
        f = free[h.name]
        if f[1] < mem or h.spec.procs < need:
            continue
        if f[0] + victims.total(h) < need:
            continue
        candidates, _total = victims.of(h)
        chosen = choose_victims(candidates, int(f[0]), need)
        if chosen is None:
            continue
        idle = int(f[0]) + sum(v.alloc_procs for v in chosen) - need
        if plan is None or idle < plan.idle_after:
            plan = TrialPlan(job, h.name, mem, tuple(chosen), idle)
            if idle == 0:
                break  # no later host can do better (host ties go to machine order)
    return plan


def trial_decisions(plan: TrialPlan, settings: TrialSettings, now: float) -> list[Any]:
    """``Preempt`` each victim, then ``Start`` the trial (time limit ``q``, requeue on failure;
    the engine resumes the victims when it ends)."""
    out: list[Any] = []
    job = plan.job
    for v in plan.victims:
        ran = now - v.last_start
        out.append(
            Preempt(
                v,
                note=f"for J{job.id}'s trial: ran uninterrupted {ran:g} s >= t, "
                f"predicted to need {v.predicted_end(now) - now:g} s more > t, "
                f"current slowdown {current_slowdown(v, now):.3g}",
            )
        )
    if plan.victims:
        why = "preempting " + ", ".join(f"J{v.id}" for v in plan.victims)
    else:
        why = "on free processors"
    out.append(
        Start(
            job,
            plan.host,
            procs=job.spec.procs,
            mem=plan.mem,
            time_limit=settings.quantum,
            on_limit="requeue",
            resumes=plan.victims,
            note=f"immediate service: {settings.quantum:g} s trial with "
            f"{plan.mem / KB_PER_MB:g} MB, {why}",
        )
    )
    return out
