"""Where a backfill pass puts a job: the host choices of T§3.2.1.

* Steps 1 and 3 start a job *now* on the host with the **fewest free
  processors** that has its processors and memory free (:func:`best_host`;
  :func:`backfill_host` also asks each reserved host's profile that the job
  delays no reservation there).  Filling the fullest host first keeps wide
  holes for wide jobs.  The ``backfill_host = "fewest-free"`` reading picks
  the host by its free resources first and then asks only that host's profile.
* Step 2 reserves a job that cannot start at the **earliest** time some host's
  availability profile can hold it for its requested runtime, ties to the
  fewest free processors (:func:`reserve`); a non-sliding reservation keeps
  its old time while that is still in the future and possible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from o2ksim.engine.snapshot import HostView
from o2ksim.jobs import Job, JobSpec
from o2ksim.policies.profile import Profile
from o2ksim.policies.shadow import Shadow


@dataclass(slots=True)
class Free:
    """What one host has free *now* during a pass, booked down as the pass starts jobs."""

    procs: int
    mem: float

    def book(self, spec: JobSpec) -> None:
        self.procs -= spec.procs
        self.mem -= spec.mem


def best_host(job: Job, hosts: tuple[HostView, ...], free: dict[str, Free]) -> str | None:
    """The host that can start ``job`` now with the fewest free processors (T§3.2.1's
    host choice, which keeps wide holes for wide jobs); books it in ``free``."""
    spec = job.spec
    procs, mem = spec.procs, spec.mem
    best = None
    best_free: int | float = math.inf
    for h in hosts:
        f = free[h.name]
        have = f.procs
        if have >= procs and f.mem >= mem and have < best_free:
            best, best_free = h.name, have
    if best is not None:
        free[best].book(spec)
    return best


def backfill_host(
    job: Job,
    hosts: tuple[HostView, ...],
    free: dict[str, Free],
    guards: Mapping[str, Profile | Shadow],
    reserved_hosts: set[str],
    now: float,
    host_first: bool = False,
) -> str | None:
    """The host with the fewest free processors where ``job`` fits now and delays no
    reservation; books it in ``free``.

    ``host_first`` (the ``backfill_host = "fewest-free"`` reading of T§3.2.1):
    the host is chosen by its free resources alone -- the fewest free
    processors among the hosts with the job's processors and memory free --
    and the job is backfilled only if it delays no reservation *there*;
    otherwise it is not started this pass even when another host would take it.
    """
    spec = job.spec
    procs, mem = spec.procs, spec.mem
    best = None
    best_free: int | float = math.inf
    for h in hosts:
        name = h.name
        f = free[name]
        have = f.procs
        if have < procs or f.mem < mem or have >= best_free:
            continue
        if (
            not host_first
            and name in reserved_hosts
            and not guards[name].fits(now, procs, mem, spec.req_time)
        ):
            continue
        best, best_free = name, have
    if best is None:
        return None
    if (
        host_first
        and best in reserved_hosts
        and not guards[best].fits(now, procs, mem, spec.req_time)
    ):
        return None
    free[best].book(spec)
    return best


def reserve(
    job: Job,
    hosts: tuple[HostView, ...],
    free: dict[str, Free],
    profiles: dict[str, Profile],
    now: float,
    old: tuple[str, float] | None = None,
) -> tuple[float, str | None, bool, bool]:
    """Where and when ``job`` is reserved, whether that is its ``old`` reservation kept,
    and whether another host could have started it as early (``tied``).

    Normally the earliest start over the hosts that could ever hold the job
    (ties: fewest free processors).  ``old`` is the job's reservation from the
    previous pass when reservations do not slide: it is kept while it is still
    in the future and possible; otherwise the new time is the earliest one not
    before it.
    """
    spec = job.spec
    not_before = now
    if old is not None:
        host, at = old
        if at > now:
            prof = profiles.get(host)
            if prof is not None and prof.fits(at, spec.procs, spec.mem, spec.req_time):
                return at, host, True, False
            not_before = at
    best_at, best_host_name = math.inf, None
    best_free: int | float = math.inf
    tied = False
    for h in hosts:
        if h.spec.procs < spec.procs or h.spec.memory < spec.mem:
            continue
        at = profiles[h.name].earliest(spec.procs, spec.mem, spec.req_time, not_before)
        if at == best_at:
            tied = True
        f = free[h.name].procs
        if at < best_at or (at == best_at and f < best_free):
            if at < best_at:
                tied = False
            best_at, best_host_name, best_free = at, h.name, f
    return best_at, best_host_name, False, tied


def fits_somewhere(
    hosts: tuple[HostView, ...],
    free: Mapping[str, Free],
    guards: Mapping[str, Profile | Shadow],
    reserved_hosts: set[str],
    now: float,
    requests: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """Which of these ``(procs, mem, req_time)`` requests fit now on some host (and,
    on each host of ``reserved_hosts``, its guard in ``guards``: delay no reservation
    there): a backfill pass's step 3 for many jobs at once.

    A job fits a reserved host's profile over ``[now, now + req)`` iff every
    step starting before ``now + req`` has its processors and memory, i.e. iff
    the running minimum of the steps up to the last such step does; a host
    reduced to its :class:`Shadow` answers with EASY's test directly.
    """
    procs, mem, req = requests
    ok = np.zeros(len(procs), dtype=bool)
    for h in hosts:
        f = free[h.name]
        if f.procs <= 0:
            continue
        here = (procs <= f.procs) & (mem <= f.mem)
        prof = guards.get(h.name) if h.name in reserved_hosts else None
        if isinstance(prof, Shadow):
            here &= prof.admits(procs, mem, req)
        elif prof is not None:
            fit = np.flatnonzero(here)  # only these need the profile
            lo = prof.lo  # the step in force now (a carried profile keeps past steps)
            last = np.asarray(prof.times[lo:]).searchsorted(now + req[fit], side="left") - 1
            np.maximum(last, 0, out=last)
            min_procs = np.minimum.accumulate(np.asarray(prof.procs[lo:], dtype=float))
            min_mem = np.minimum.accumulate(np.asarray(prof.mem[lo:], dtype=float))
            here[fit] = (min_procs[last] >= procs[fit]) & (min_mem[last] >= mem[fit])
        ok |= here
    return ok
