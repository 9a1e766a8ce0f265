"""Each host's running jobs ordered by when they are expected to give their resources back.

Backfill builds an availability profile from the running jobs at almost every
pass; on a large machine (thousands of running jobs) rebuilding and sorting it
in Python each time dominated the run.  The engine therefore keeps, per host,
the expected releases of its running jobs in sorted numpy arrays, updated when
a job starts, ends, is preempted, resumed or resized (a memmove each), so a
profile is a cumulative sum away.

A running job's expected release is its predicted end (start + requested
runtime, SPEC §2), or the time limit it was started with if that comes first
(there the engine stops it).  Once that time has passed the scheduler
predicts it *now*; :meth:`ReleaseIndex.arrays` leaves that clamping to the
reader.  A job that was resized or resumed after a preemption has a
prediction that moves with time (:meth:`~o2ksim.jobs.Job.predicted_end`), and
one started on fewer processors than it requested is predicted from the work
it owes at its reduced rate, and one whose prediction is raised to its
request once it overruns its estimate (the overrun rule ``requested``,
``Job.overrun_time``) changes its prediction at that moment; such jobs are
listed apart, in :attr:`ReleaseIndex.irregular`.

A start or an end costs a dict store while the host runs few jobs: the
sorted arrays are then rebuilt only when a reader asks for them (backfill
asks only on hosts with many running jobs).  Once they exist and the host
runs at least :data:`INCREMENTAL_FROM` jobs, they are kept sorted in place.
"""

from __future__ import annotations

import numpy as np

from o2ksim.jobs import Job


def regular_release(job: Job) -> float:
    """The fixed expected release time of a job never resized, preempted or reduced."""
    end = job.last_start + job.spec.req_time
    return job.time_limit if job.time_limit < end else end


INCREMENTAL_FROM = 32  # regular running jobs from which the sorted arrays are updated in place


class ReleaseIndex:
    """Sorted ``(time, procs, mem)`` of the regular running jobs of one host, and the others.

    Entries are ordered by time, then processors, then memory (the tie rule of
    SPEC §3.1 counts same-time releases smallest first).
    """

    __slots__ = ("_entries", "_id", "_m", "_n", "_p", "_sorted", "_t", "irregular")

    def __init__(self) -> None:
        self._entries: dict[int, tuple[float, float, float]] = {}  # regular jobs: id -> release
        self._t = np.empty(64)
        self._p = np.empty(64)
        self._m = np.empty(64)
        self._id = np.empty(64, dtype=np.int64)
        self._n = 0
        self._sorted = True  # the arrays hold exactly ``_entries``, sorted
        self.irregular: dict[int, Job] = {}

    def __len__(self) -> int:
        return len(self._entries) + len(self.irregular)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Times, processors and memory of the regular releases, sorted (read-only views)."""
        if not self._sorted:
            self._rebuild()
        n = self._n
        return self._t[:n], self._p[:n], self._m[:n]

    def _rebuild(self) -> None:
        """Sort the entries into the arrays (after changes made while they were not kept)."""
        n = len(self._entries)
        if n > len(self._t):
            size = max(64, 2 * n)
            self._t, self._p, self._m = np.empty(size), np.empty(size), np.empty(size)
            self._id = np.empty(size, dtype=np.int64)
        ordered = sorted((t, p, m, job_id) for job_id, (t, p, m) in self._entries.items())
        for k, arr in enumerate((self._t, self._p, self._m, self._id)):
            arr[:n] = [row[k] for row in ordered]
        self._n = n
        self._sorted = True

    def _position(self, t: float, p: float, m: float) -> int:
        """Where a release ``(t, p, m)`` goes: after every entry that sorts before or equal."""
        times = self._t[: self._n]
        lo = int(times.searchsorted(t, side="left"))
        hi = int(times.searchsorted(t, side="right"))
        if lo < hi:  # same-time releases: order by processors, then memory
            pp, mm = self._p, self._m
            while lo < hi and (pp[lo] < p or (pp[lo] == p and mm[lo] <= m)):
                lo += 1
        return lo

    def add(self, job: Job) -> None:
        """``job`` now runs on this host."""
        if (
            job.resizes or job.preemptions or job.reduced or job.overrun_time
            or job.alloc_procs != job.spec.procs
        ):  # fmt: skip
            self.irregular[job.id] = job  # its predicted end moves (Job.predicted_end)
            return
        t, p, m = regular_release(job), float(job.alloc_procs), float(job.alloc_mem)
        self._entries[job.id] = (t, p, m)
        if not self._sorted or len(self._entries) <= INCREMENTAL_FROM:
            self._sorted = False  # sorted again when next read
            return
        if self._n == len(self._t):
            self._t, self._p, self._m, self._id = (
                np.concatenate([a, np.empty_like(a)]) for a in (self._t, self._p, self._m, self._id)
            )
        i = self._position(t, p, m)
        n = self._n
        for arr, value in ((self._t, t), (self._p, p), (self._m, m), (self._id, job.id)):
            arr[i + 1 : n + 1] = arr[i:n]
            arr[i] = value
        self._n = n + 1

    def remove(self, job: Job) -> None:
        """``job`` no longer runs on this host (ended, preempted, about to be resized)."""
        if self.irregular.pop(job.id, None) is not None:
            return
        entry = self._entries.pop(job.id, None)
        if entry is None:
            raise RuntimeError(f"job {job.id} is not in the release index")  # an engine bug
        if not self._sorted or len(self._entries) < INCREMENTAL_FROM:
            self._sorted = False
            return
        n = self._n
        i = int(self._t[:n].searchsorted(entry[0], side="left"))
        ids = self._id
        while i < n and ids[i] != job.id:
            i += 1
        if i >= n:
            raise RuntimeError(f"job {job.id} is not in the sorted releases")  # an engine bug
        for arr in (self._t, self._p, self._m, self._id):
            arr[i : n - 1] = arr[i + 1 : n]
        self._n = n - 1
