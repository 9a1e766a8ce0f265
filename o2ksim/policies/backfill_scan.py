"""The walk of one backfill pass over the queue: :func:`run_pass` (steps 1-3 of
:mod:`o2ksim.policies.backfill_pass` in priority order) and the scan of the rest of the
queue once every reservation is counted.

* **Indexed scan.**  The rest of the queue is tested with numpy over the
  engine's :class:`~o2ksim.engine.queue_index.QueueIndex` (:func:`_fits`):
  each step finds the first job that fits now and delays no reservation; only
  that job is placed in Python, with the same host rule.  Resources only shrink
  during a pass, so a job that fails once fails for the rest of the pass.
  When the order is kept as an index (FCFS, :mod:`~o2ksim.policies.order_scan`),
  whole blocks of rows are skipped on their minima (:func:`_backfill_blocks`).
* **Pruning.**  Every scan stops as soon as no host has as many free processors
  as the smallest request in the queue.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator

import numpy as np

from o2ksim.engine.queue_index import QueueIndex
from o2ksim.jobs import Job
from o2ksim.policies.backfill_hosts import Free, fits_somewhere
from o2ksim.policies.backfill_pass import BackfillPass
from o2ksim.policies.order_scan import (
    HeldFirst,
    IndexedOrder,
    MergedOrder,
    MergedScan,
    RowScan,
    SkippingScan,
)
from o2ksim.policies.priority import RankedQueue
from o2ksim.policies.profile import Profile
from o2ksim.policies.shadow import Shadow

INDEXED_SCAN_MIN = 64  # below this many jobs left, numpy's per-call cost outweighs the scan


def run_pass(p: BackfillPass, order: Collection[Job]) -> None:
    """Steps 1-3 over ``order``: the queue in priority order (held fixed reservations
    first).

    Lazy reservations (module docstring): with dynamic sliding reservations and no
    decision log, a blocked job's reservation is only *counted* (``pending``) until
    some later job fits now; then the pending reservations are placed, in order, on
    the profiles as they stood, and that job is tested against them.  Once ``N``
    reservations are counted, the rest of the queue can only be backfilled
    (:func:`_backfill_rest`).
    """
    policy = p.policy
    limit = policy.n_reservations
    lazy = not policy.stateful and not p.snap.explain
    pending = p.pending  # blocked jobs whose reservations are not placed yet
    consumed = 0
    jobs = iter(order)
    blocked = False  # some job could not start: from now on, jobs are backfilled
    job = None
    for job in jobs:
        consumed += 1
        if not blocked:
            if p.start_first_fit(job):  # step 1: in priority order, while all fit
                continue
            if limit == 0:  # no reservations: nothing to protect, nothing blocks
                continue
            blocked = True  # the first job that cannot start
            if not lazy:
                p.build_profiles()
        elif p.profiles is None:  # lazy, and no job after the first blocked one fitted
            if not p.fits_now_somewhere(job):
                pending.append(job)  # step 2, deferred
                p.n_res += 1
                if p.n_res >= limit:
                    break
                continue
            p.build_profiles()  # this job fits now: place the deferred reservations
            p.place(pending)
        if p.profiles is not None and p.backfill(job):  # step 3: delays no reservation
            continue
        if p.profiles is None:
            pending.append(job)  # step 2, deferred
            p.n_res += 1
        else:
            p.reserve(job)  # step 2
        if p.n_res >= limit:
            break
    else:
        return  # the whole queue was seen
    assert job is not None
    _backfill_rest(p, order, jobs, consumed, pending, job)


def _backfill_rest(
    p: BackfillPass,
    order: Collection[Job],
    jobs: Iterator[Job],
    consumed: int,
    pending: list[Job],
    last: Job,
) -> None:
    """Step 3 for the rest of the queue once every reservation is counted (``last``:
    the last job seen so far)."""
    index = p.snap.queue_index
    if index is None or len(index) != len(order):
        _scan(p, jobs, pending, 1)  # no index for this queue: job by job
        return
    if p.policy.host_first:  # the indexed test does not implement this reading: job by job
        _scan(p, jobs, pending, index.smallest_procs())
        return
    # every job left asks for at least the queue's smallest request: none fits now
    # when no host has that many processors free
    fewest = index.smallest_procs()
    if p.max_free < fewest:
        return
    if len(order) - consumed < INDEXED_SCAN_MIN:
        _scan(p, jobs, pending, fewest)  # short rest: job by job
        return
    if isinstance(order, IndexedOrder | MergedOrder | HeldFirst):  # an order kept as an index
        scan = order.scan_after(last)
        if scan is None:
            _scan(p, jobs, pending, fewest)
        else:
            _backfill_blocks(p, scan, pending)
        return
    if not isinstance(order, RankedQueue | list):  # the queue itself, in queue (= row) order
        _backfill_blocks(p, RowScan(index, index.row_of[last.id] + 1), pending)
        return
    rows = _rows_in_order(index, order, consumed)
    procs, mem, req = index.procs[rows], index.mem[rows], index.req_time[rows]
    # Resources only shrink during a pass, so a job that fails the test now fails
    # at its turn too: each step tests only the jobs that passed the last one.
    if p.profiles is None:
        left_at = np.flatnonzero(_fits(p, procs, mem, req, with_profiles=False))
        if not len(left_at):
            return
        p.place_pending(pending)
    else:
        left_at = np.arange(len(rows))
        p.keep_only_reserved()
    while len(left_at) and p.max_free > 0:
        left_at = left_at[_fits(p, procs[left_at], mem[left_at], req[left_at], with_profiles=True)]
        if not len(left_at):
            return
        started = p.backfill(index.jobs[rows[left_at[0]]])
        assert started, "the indexed scan and the job-by-job test disagree"
        left_at = left_at[1:]


def _backfill_blocks(
    p: BackfillPass, scan: RowScan | MergedScan | SkippingScan, pending: list[Job]
) -> None:
    """:func:`_backfill_rest`'s indexed scan when the rest of the order is kept as an
    index (the queue itself, or :mod:`~o2ksim.policies.order_scan`): each step asks it
    for the first job that passes :func:`_fits` (monotone in the request, so whole
    blocks of rows are skipped on their minima).

    The same jobs as the scan over every row: resources only shrink during a pass,
    so a job that fails once fails at every later step, and the first job after
    the last started one that passes now is the one the job-by-job scan finds.
    """
    if p.profiles is None:
        job = scan.first(lambda pr, me, rq: _fits(p, pr, me, rq, with_profiles=False), p.max_free)
        if job is None:
            return
        p.place_pending(pending)
    else:
        p.keep_only_reserved()

    def fits(pr: np.ndarray, me: np.ndarray, rq: np.ndarray) -> np.ndarray:
        return _fits(p, pr, me, rq, with_profiles=True)

    while p.max_free > 0:
        job = scan.first(fits, p.max_free)
        if job is None:
            return
        started = p.backfill(job)
        assert started, "the indexed scan and the job-by-job test disagree"
        scan.skip(job)


def _scan(p: BackfillPass, jobs: Iterable[Job], pending: list[Job], fewest: float) -> None:
    """Step 3 job by job once every reservation is counted; ``fewest``: no job asks for
    fewer processors, so the scan stops once no host has that many free."""
    if p.profiles is not None:
        p.keep_only_reserved()
    floor = max(fewest, 1)
    jobs = iter(jobs)
    if p.guarded is None:  # reservations not placed yet: until some job fits now
        for job in jobs:
            if p.max_free < floor:
                return
            if job.spec.procs <= p.max_free and p.fits_now_somewhere(job):
                p.place_pending(pending)
                p.backfill(job)
                break
        else:
            return
    _scan_placed(p, jobs, floor)


def _scan_placed(p: BackfillPass, jobs: Iterator[Job], floor: float) -> None:
    """:func:`_scan`'s loop once every reservation is placed: :meth:`BackfillPass.backfill`
    for each job, with each host's free resources and guard looked up once per pass."""
    assert p.guarded is not None
    guarded, reserved = p.guarded, p.reserved_hosts
    hosts = [
        (h.name, p.free[h.name], guarded.get(h.name) if h.name in reserved else None)
        for h in p.hosts
    ]
    now = p.now
    host_first = p.policy.host_first
    for job in jobs:
        if p.max_free < floor:
            return
        spec = job.spec
        procs, mem, req = spec.procs, spec.mem, spec.req_time
        if procs > p.max_free:
            continue  # fits no host now
        best: tuple[str, Free, Profile | Shadow | None] | None = None
        best_free: int | float = math.inf
        for host in hosts:
            _name, free, guard = host
            have = free.procs
            if have < procs or free.mem < mem or have >= best_free:
                continue
            if guard is not None and not host_first and not guard.fits(now, procs, mem, req):
                continue
            best, best_free = host, have
        if best is not None:
            name, free, guard = best
            if host_first and guard is not None and not guard.fits(now, procs, mem, req):
                continue  # the host-first reading: its host would delay a reservation
            free.book(spec)
            p.start_backfilled(job, name, guard)


def _rows_in_order(index: QueueIndex, order: Collection[Job], skip: int) -> np.ndarray:
    """QueueIndex rows of ``order`` after its first ``skip`` jobs."""
    if isinstance(order, RankedQueue):
        return order.rows[skip:]
    if isinstance(order, list):
        row = index.row_of
        rest = order[skip:]
        return np.fromiter((row[j.id] for j in rest), dtype=np.intp, count=len(rest))
    return index.rows()[skip:]  # the queue itself, in queue (= row) order


def _fits(
    p: BackfillPass, procs: np.ndarray, mem: np.ndarray, req: np.ndarray, *, with_profiles: bool
) -> np.ndarray:
    """:func:`~o2ksim.policies.backfill_hosts.fits_somewhere` on the pass's hosts: fits
    now (and, ``with_profiles``, delays no reservation) -- step 3's test, many jobs at once."""
    guards = p.guards() if with_profiles else {}
    return fits_somewhere(p.hosts, p.free, guards, p.reserved_hosts, p.now, (procs, mem, req))


__all__ = ["INDEXED_SCAN_MIN", "run_pass"]
