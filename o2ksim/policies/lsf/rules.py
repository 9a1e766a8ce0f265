"""One NCSA-LSF* pass: the queued-job records and the per-pass rules (eligibility, class
priority, blocking, nomination) that :class:`~o2ksim.policies.lsf.policy.NCSALSF` applies.

The rules read the policy's state between passes only through
:class:`QueueState` (the filed jobs, the drained hosts and the running counts,
which the policy keeps up to date) and the run's :class:`LSFConfig`, user
limit and blocking mode, all handed to :class:`PassRules`; they never reach
into the policy object.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from o2ksim.engine.snapshot import Snapshot
from o2ksim.jobs import Job
from o2ksim.policies.lsf.classes import LSFConfig, LSFHost


class QueuedJob:
    """A queued job as the policy files it: its class and request, read once."""

    __slots__ = ("cls", "deadline", "first", "id", "job", "mem", "procs", "submit", "user")

    def __init__(self, job: Job, cls: tuple[str, str], first: bool, deadline: float) -> None:
        spec = job.spec
        self.job = job
        self.id = spec.job_id
        self.procs = spec.procs
        self.mem = spec.mem
        self.user = spec.user
        self.submit = spec.submit
        self.cls = cls
        self.first = first
        self.deadline = deadline


class QueuePart:
    """Queued jobs of one size class and one rank (priority time class or not), FCFS.

    ``min_procs``/``min_mem`` are lower bounds of the requests inside (they are
    not raised when a job leaves), so ``free < min`` proves that nothing fits.
    """

    __slots__ = ("classes", "jobs", "min_mem", "min_procs")

    def __init__(self) -> None:
        self.jobs: dict[int, QueuedJob] = {}
        self.classes: Counter[tuple[str, str]] = Counter()  # jobs inside per class
        self.min_procs: float = math.inf
        self.min_mem: float = math.inf

    def add(self, e: QueuedJob) -> None:
        self.jobs[e.id] = e
        self.classes[e.cls] += 1
        self.min_procs = min(self.min_procs, e.procs)
        self.min_mem = min(self.min_mem, e.mem)

    def remove(self, e: QueuedJob) -> None:
        del self.jobs[e.id]
        self.classes[e.cls] -= 1
        if not self.jobs:
            self.min_procs = self.min_mem = math.inf
            self.classes.clear()


@dataclass(eq=False)
class QueueState:
    """What the policy keeps between passes and the rules read.

    ``parts``: per size class, the filed waiting jobs as (priority time class,
    the rest); ``drained``: host -> the job it is drained for; the running jobs
    per limit key on each host (``host_counts``), in the machine
    (``sys_counts``) and per user (``user_counts``), which the policy updates
    on every start and departure.
    """

    parts: dict[str, tuple[QueuePart, QueuePart]] = field(default_factory=dict)
    drained: dict[str, QueuedJob] = field(default_factory=dict)
    host_counts: dict[str, Counter[str]] = field(default_factory=dict)
    sys_counts: Counter[str] = field(default_factory=Counter)
    user_counts: Counter[int] = field(default_factory=Counter)


class PassRules:
    """Working state of one scheduling pass: running counts, free resources, eligibility caches.

    Built from the run's configuration, the policy's :class:`QueueState`, the
    user limit (0 = none) and whether a vst job that cannot start blocks the
    lower size classes of its time class (``block_first``).  The caches
    (``_host_ok``, ``_sys_ok``, ``_active``) hold per-class answers and are
    cleared after every start, when the counts change.
    """

    def __init__(
        self,
        cfg: LSFConfig,
        state: QueueState,
        snap: Snapshot,
        user_limit: int,
        block_first: bool,
        block_lower: bool = True,
    ) -> None:
        self.cfg = cfg
        self.state = state
        self.snap = snap
        self.parts = state.parts
        self.user_limit = user_limit
        self.block_first = block_first
        self.block_lower = block_lower  # False: the size_blocking = "never" ablation
        self.free = {h.name: [h.free_procs, h.free_mem] for h in snap.hosts}
        self.host_counts = state.host_counts  # the policy updates them on every start
        self.sys_counts = state.sys_counts
        self.user_counts = state.user_counts
        self._host_ok: dict[tuple[str, tuple[str, str]], bool] = {}
        self._sys_ok: dict[tuple[str, str], bool] = {}
        self._active: dict[tuple[str, str], bool] = {}

    # ---- eligibility: limits of the machine, the user and the host
    def class_ok(self, cls: tuple[str, str]) -> bool:
        """No system-wide limit that counts class ``cls`` is reached."""
        ok = self._sys_ok.get(cls)
        if ok is None:
            limits = self.cfg.system_limits
            counts = self.sys_counts
            ok = True
            for k in self.cfg.limit_keys(cls):
                lim = limits.get(k)
                if lim is not None and counts[k] >= lim:
                    ok = False
                    break
            self._sys_ok[cls] = ok
        return ok

    def user_ok(self, e: QueuedJob) -> bool:
        limit = self.user_limit
        return not (limit and e.user >= 0 and self.user_counts[e.user] >= limit)

    def system_ok(self, e: QueuedJob) -> bool:
        """No system-wide limit applying to the job, nor its user's limit, is reached."""
        return self.class_ok(e.cls) and self.user_ok(e)

    def host_ok(self, cls: tuple[str, str], h: LSFHost) -> bool:
        """The host's limits allow one more job of class ``cls``."""
        if not h.limits:
            return True
        key = (h.name, cls)
        ok = self._host_ok.get(key)
        if ok is None:
            counts = self.host_counts[h.name]
            ok = True
            for k in self.cfg.limit_keys(cls):
                lim = h.limits.get(k)
                if lim is not None and counts[k] >= lim:
                    ok = False
                    break
            self._host_ok[key] = ok
        return ok

    def eligible(self, e: QueuedJob, h: LSFHost) -> bool:
        """Host ``h`` may start the job as far as size and limits go (not free resources)."""
        return (
            e.procs <= h.procs
            and e.mem <= h.memory
            and self.host_ok(e.cls, h)
            and self.class_ok(e.cls)
            and self.user_ok(e)
        )

    # ---- the host's choice
    def nominate(self, h: LSFHost) -> QueuedJob | None:
        """The job host ``h`` would start now under its priority, limits, blocking and drain."""
        free_p, free_m = self.free[h.name]
        drained = self.state.drained.get(h.name)
        if drained is not None:
            if drained.procs <= free_p and drained.mem <= free_m and self.eligible(drained, h):
                return drained
            return None
        if free_p <= 0:
            return None
        blocked_first = False
        block_first_mode = self.block_first
        for s in h.priority:
            block_all = block_first = False
            for part, is_first in zip(self.parts[s], (True, False), strict=True):
                if not part.jobs or (is_first and blocked_first):
                    continue
                ok = self._ok_classes(part, h)
                if not ok:
                    continue
                if free_p < part.min_procs or free_m < part.min_mem:
                    # nothing here fits now: only whether something eligible waits matters
                    if (not is_first or block_first_mode) and self._any_eligible(part, ok, h):
                        if is_first:
                            block_first = True
                        else:
                            block_all = True
                    continue
                hp, hm = h.procs, h.memory
                for e in part.jobs.values():
                    if e.cls not in ok or e.procs > hp or e.mem > hm or not self.user_ok(e):
                        continue
                    if e.procs <= free_p and e.mem <= free_m:
                        return e
                    if not is_first:
                        block_all = True
                    elif block_first_mode:
                        block_first = True
            if block_all and self.block_lower:
                return None
            blocked_first = blocked_first or block_first
        return None

    def _ok_classes(self, part: QueuePart, h: LSFHost) -> set[tuple[str, str]]:
        """The classes present in ``part`` that the machine's and the host's limits allow."""
        return {c for c, n in part.classes.items() if n and self.class_ok(c) and self.host_ok(c, h)}

    def _any_eligible(self, part: QueuePart, ok: set[tuple[str, str]], h: LSFHost) -> bool:
        hp, hm = h.procs, h.memory
        return any(
            e.cls in ok and e.procs <= hp and e.mem <= hm and self.user_ok(e)
            for e in part.jobs.values()
        )

    def active(self, h: LSFHost, s: str) -> bool:
        """Size class ``s`` has an eligible waiting job for host ``h``."""
        key = (h.name, s)
        hit = self._active.get(key)
        if hit is None:
            hit = False
            for part in self.parts[s]:
                ok = self._ok_classes(part, h) if part.jobs else None
                if ok and self._any_eligible(part, ok, h):
                    hit = True
                    break
            self._active[key] = hit
        return hit

    def class_has_priority(self, h: LSFHost, cls: tuple[str, str]) -> bool:
        """Class ``cls`` has scheduling priority on ``h``.

        Its size class is served there, the host's limits allow the class, and
        no higher size class of the host has an eligible waiting job (T§3.1: a
        class has priority unless a higher one is at its limit or has no job).
        """
        s = cls[1]
        if s not in h.priority or not self.host_ok(cls, h):
            return False
        for higher in h.priority:
            if higher == s:
                return True
            if self.active(h, higher):
                return False
        return True

    def has_priority(self, e: QueuedJob, h: LSFHost) -> bool:
        """The job fits host ``h`` at all and its class has scheduling priority there."""
        return e.procs <= h.procs and e.mem <= h.memory and self.class_has_priority(h, e.cls)

    def start(self, e: QueuedJob, h: LSFHost) -> None:
        """Book a start's resources and clear the caches (the policy counts the job)."""
        f = self.free[h.name]
        f[0] -= e.procs
        f[1] -= e.mem
        self._host_ok.clear()
        self._sys_ok.clear()
        self._active.clear()
