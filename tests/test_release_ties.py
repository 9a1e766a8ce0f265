"""``release_ties``: how a reservation at an instant where jobs end reads their releases.

``smallest-first`` (the default) counts same-time releases one job at a time,
smallest first, and a reservation there takes only those it needs (EASY's
*extra*, as ``checks/easy_oracle.py`` computes it); ``together`` makes every
release at one instant free at that instant (the availability profile of
conservative backfilling, Mu'alem and Feitelson 2001).

Expected values come from a hand-worked case (both rules, one and every
reservation) and from two implementations written here from the definitions,
sharing nothing with the package: EASY's pass with the extra counted from
every release at the shadow time (the reference loop of
``checks/easy_oracle.py`` with that one change) and conservative backfilling
planned from scratch at every instant over a plain list of steps.
"""

from __future__ import annotations

import heapq
import math
import random

import pytest

from o2ksim import simulate
from o2ksim.errors import O2KSimError
from o2ksim.jobs import JobSpec
from o2ksim.machine import HostSpec, MachineSpec
from o2ksim.policies import carried_plan
from o2ksim.policies.backfill import Backfill

TEN = MachineSpec("ten", (HostSpec("h", 10, math.inf),))


def starts(jobs, machine, **params):
    """Start time by job id of a backfill run with ``params``."""
    r = simulate(jobs, machine=machine, policy=Backfill(**params)).jobs
    return dict(zip(r["job_id"].astype(int), r["start"].astype(float), strict=True))


# -- by hand ---------------------------------------------------------------------------
HAND = [  # id, submit, processors, requested = actual runtime
    JobSpec(1, 0.0, 2, 0, 100.0, 100.0),  # A
    JobSpec(2, 0.0, 6, 0, 100.0, 100.0),  # B: A and B start at 0, 2 processors free
    JobSpec(3, 1.0, 4, 0, 50.0, 50.0),  # H: waits for A's release at 100
    JobSpec(4, 2.0, 2, 0, 500.0, 500.0),  # J: fits now, runs past 100
]


@pytest.mark.parametrize("reservations", [1, "all"])
def test_by_hand_the_two_rules_differ_where_a_reservation_meets_a_tie(reservations):
    """One 10-processor host.  At 1, H (4 processors) is reserved at 100, where A (2) and
    B (6) end.  smallest-first: H takes 2 free + A's 2; B's 6 come an instant later, so
    across 100 only 2 + 2 - 4 = 0 processors are left and J (2 processors, 500 s) waits
    until A and B end: H and J start at 100.  together: across 100 there are
    2 + 2 + 6 - 4 = 6 left, J starts at once (2); H still at 100 (8 free then)."""
    minimal = starts(HAND, TEN, reservations=reservations, release_ties="smallest-first")
    together = starts(HAND, TEN, reservations=reservations, release_ties="together")
    assert minimal == {1: 0.0, 2: 0.0, 3: 100.0, 4: 100.0}
    assert together == {1: 0.0, 2: 0.0, 3: 100.0, 4: 2.0}


# -- independent implementations ---------------------------------------------------------
def easy_together(jobs, total):
    """EASY on one host (FCFS, exact shadow from requested runtimes), releases at the
    shadow time all counted: ``checks/easy_oracle.py``'s loop, ``extra`` changed."""
    jobs = sorted(jobs, key=lambda j: (j.submit, j.job_id))
    out, running, est_end, queue = {}, [], {}, []
    free, i, n = total, 0, len(jobs)

    def start(j, now):
        nonlocal free
        free -= j.procs
        out[j.job_id] = now
        heapq.heappush(running, (now + j.run_time, j.job_id, j.procs))
        est_end[j.job_id] = (now + j.req_time, j.procs)

    while i < n or running:
        now = min(
            jobs[i].submit if i < n else float("inf"), running[0][0] if running else float("inf")
        )
        while running and running[0][0] <= now:
            _, jid, p = heapq.heappop(running)
            free += p
            del est_end[jid]
        while i < n and jobs[i].submit <= now:
            queue.append(jobs[i])
            i += 1
        while queue and queue[0].procs <= free:
            start(queue.pop(0), now)
        if not queue:
            continue
        head = queue[0]
        avail, shadow = free, now
        for e, p in sorted((max(e, now), p) for e, p in est_end.values()):
            if avail >= head.procs and e > shadow:
                break  # every release at the shadow time is counted (together)
            avail += p
            shadow = e
        extra = avail - head.procs
        k = 1
        while k < len(queue) and free > 0:
            j = queue[k]
            if j.procs <= free and (now + j.req_time <= shadow or j.procs <= extra):
                if now + j.req_time > shadow:
                    extra -= j.procs
                queue.pop(k)
                start(j, now)
            else:
                k += 1
    return out


def conservative_together(jobs, total):
    """Conservative backfilling on one host, re-planned from scratch at every instant:
    the free processors as a list of (time, free) steps from the running jobs'
    predicted ends; every waiting job, in FCFS order, goes to the earliest step start
    where its window fits, and starts if that is now."""
    jobs = sorted(jobs, key=lambda j: (j.submit, j.job_id))
    out, running, queue = {}, [], []  # running: (actual end, predicted end, procs)
    i, n = 0, len(jobs)
    while i < n or running or queue:
        now = min(
            jobs[i].submit if i < n else float("inf"),
            min((r[0] for r in running), default=float("inf")),
        )
        running = [r for r in running if r[0] > now]
        while i < n and jobs[i].submit <= now:
            queue.append(jobs[i])
            i += 1
        ends = sorted({max(r[1], now) for r in running} | {now})
        steps = [[t, total - sum(r[2] for r in running if max(r[1], now) > t)] for t in ends]
        waiting = []
        for j in queue:
            at = next(s for s, _ in steps if fits(steps, s, j.procs, j.req_time))
            hold(steps, at, j.procs, j.req_time)
            if at == now:
                out[j.job_id] = now
                running.append((now + j.run_time, now + j.req_time, j.procs))
            else:
                waiting.append(j)
        queue = waiting
    return out


def fits(steps, s, procs, duration):
    """Whether ``procs`` stay free over ``[s, s + duration)``; ``s`` is a step start."""
    return all(free >= procs for t, free in steps if s <= t < s + duration)


def hold(steps, s, procs, duration):
    for t in (s, s + duration):
        if all(u != t for u, _ in steps):
            before = max((x for x in steps if x[0] < t), key=lambda x: x[0])
            steps.append([t, before[1]])
            steps.sort()
    for step in steps:
        if s <= step[0] < s + duration:
            step[1] -= procs


def integer_jobs(seed, n, total, exact):
    """Jobs submitted in bursts on a 10-second grid with runtimes of 10, 20 or 100 s (or
    half of it when not ``exact``), so that several jobs often end at one instant."""
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for k in range(n):
        t += rng.choice([0, 0, 0, 10])
        req = float(rng.choice([10, 10, 20, 100]))
        run = req if exact else float(rng.choice([req, req, req / 2]))
        jobs.append(JobSpec(k + 1, t, rng.choice([1, 1, 2, 3, 5, 8]), 0, req, run))
    return jobs


@pytest.mark.parametrize("seed", range(6))
def test_easy_together_matches_an_independent_easy(seed):
    jobs = integer_jobs(seed, 400, 10, exact=seed % 2 == 0)
    assert starts(jobs, TEN, release_ties="together") == easy_together(jobs, 10)


@pytest.mark.parametrize("seed", range(6))
def test_conservative_together_matches_plain_profile_backfilling(seed, monkeypatch):
    """Carried from pass to pass (every queue length) and fresh, both against the oracle."""
    jobs = integer_jobs(100 + seed, 150, 10, exact=seed % 2 == 0)
    expected = conservative_together(jobs, 10)
    monkeypatch.setattr(carried_plan, "MIN_QUEUE", 0)
    policy = Backfill(reservations="all", release_ties="together")
    got = simulate(jobs, machine=TEN, policy=policy).jobs
    assert dict(zip(got["job_id"].astype(int), got["start"], strict=True)) == expected
    assert policy.carried is not None and policy.carried.counts["repaired"] == 0
    monkeypatch.setattr(carried_plan, "ENABLED", False)
    assert starts(jobs, TEN, reservations="all", release_ties="together") == expected


def test_the_oracles_see_the_tie_the_default_rule_reads():
    """The oracles are not the default rule: on the hand case they give J at 2."""
    assert easy_together(HAND, 10)[4] == 2.0
    assert conservative_together(HAND, 10)[4] == 2.0


def test_a_tie_rule_without_reservations_is_refused():
    with pytest.raises(O2KSimError, match="release_ties"):
        simulate(
            HAND,
            machine=TEN,
            policy="fcfs-backfill",
            policy_params={"reservations": 0, "release_ties": "together"},
        )


def test_the_random_workloads_meet_ties_where_the_rules_differ():
    """The oracle tests above could not tell the two rules apart without such ties."""
    easy = [integer_jobs(seed, 400, 10, exact=seed % 2 == 0) for seed in range(6)]
    assert sum(starts(j, TEN) != starts(j, TEN, release_ties="together") for j in easy) >= 3
    conservative = [integer_jobs(100 + seed, 150, 10, exact=seed % 2 == 0) for seed in range(6)]
    assert (
        sum(
            starts(j, TEN, reservations="all", release_ties="smallest-first")
            != starts(j, TEN, reservations="all", release_ties="together")
            for j in conservative
        )
        >= 3
    )


def test_auto_is_smallest_first_with_a_number_and_together_with_all():
    """The default: EASY's reference rule for N reservations, the plain profile for all."""
    assert starts(HAND, TEN) == starts(HAND, TEN, release_ties="smallest-first")
    assert starts(HAND, TEN, reservations=2)[4] == 100.0
    assert starts(HAND, TEN, reservations="all")[4] == 2.0


def test_a_run_records_the_rule_it_used():
    """run.json's policy says which rule ``auto`` stood for."""
    assert Backfill(reservations="all").describe()["release_ties"] == "together"
    assert Backfill().describe()["release_ties"] == "smallest-first"
    given = Backfill(reservations="all", release_ties="smallest-first")
    assert given.describe()["release_ties"] == "smallest-first"
