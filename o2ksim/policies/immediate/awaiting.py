"""The jobs awaiting an immediate-service trial, in arrival order, with their smallest request.

A pass offers a trial to each awaiting job in arrival order, but skips the
jobs asking more processors than any host could give a trial now (``room``,
an upper bound the pass lowers after a refusal and lifts after a trial is
given; :meth:`ImmediateService.schedule
<o2ksim.policies.immediate.service.ImmediateService.schedule>`).  In a flood
nearly every waiting job awaits, so walking them all costs O(q) a pass
(issue 27, D29).  :class:`Awaiting` answers "the first awaiting job at or
after this place asking at most ``room`` processors" without visiting the
others.

* **Places.**  Each job gets the next *place* when it is added: jobs are
  only ever added at the end (arrivals, in arrival order), so the places'
  order is the arrival order.  A removed job's place stays empty until the
  places run out; then the awaiting jobs are renumbered ``0, 1, ...`` in the
  same order (a *compaction*) into a capacity of at least twice their number.
* **Tree.**  A min-tree over the places (``_min[size + p]`` the processors
  place ``p``'s job asks, ``inf`` when empty; ``_min[i]`` the smaller of
  ``_min[2i]`` and ``_min[2i + 1]``): ``_min[1]`` is the smallest request of
  every awaiting job.
* **Costs.**  Adding or removing a job: O(log C), C the capacity, which a
  compaction sets to the least power of two at least twice the jobs then
  awaiting (plus one), and which is used up after at least C / 2 more
  additions: a compaction's O(C) is O(1) amortised per addition.  :meth:`first`: O(log C) (one climb and one descent of the
  tree).  :attr:`smallest`: O(1).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator

from o2ksim.jobs import Job

_MIN_SIZE = 8  # the smallest capacity (a power of two)
_FINITE = sys.float_info.max  # the largest limit: an empty place (inf) never passes it


class Awaiting:
    """The jobs awaiting a trial, in the order they were added (module docstring)."""

    __slots__ = ("_end", "_jobs", "_min", "_place", "_size")

    def __init__(self) -> None:
        self._size = _MIN_SIZE  # capacity: places 0 .. _size - 1
        self._min = [math.inf] * (2 * _MIN_SIZE)
        self._jobs: list[Job | None] = [None] * _MIN_SIZE  # the job at each place
        self._place: dict[int, int] = {}  # job id -> its place
        self._end = 0  # the next free place

    def add(self, job: Job) -> None:
        """``job`` awaits a trial from now on (after every job already awaiting)."""
        if job.id in self._place:
            raise ValueError(f"job {job.id} already awaits a trial")
        if self._end == self._size:
            self._compact()
        p = self._end
        self._end = p + 1
        self._place[job.id] = p
        self._jobs[p] = job
        self._set(p, job.spec.procs)

    def remove(self, job: Job) -> None:
        """``job`` no longer awaits a trial (``KeyError`` when it did not)."""
        p = self._place.pop(job.id)
        self._jobs[p] = None
        self._set(p, math.inf)

    def first(self, start: int, room: float) -> int:
        """The first place at or after ``start`` holding a job that asks at most ``room``
        processors; -1 when none does."""
        if start >= self._end:
            return -1
        limit = min(room, _FINITE)
        tree, size = self._min, self._size
        i = start + size
        while tree[i] > limit:  # climb to the next subtree to the right that holds one
            while i & 1:  # a right child: its parent's part at or after start is done
                if i == 1:
                    return -1
                i >>= 1
            i += 1
        while i < size:  # descend to its leftmost place that does
            i <<= 1
            if tree[i] > limit:
                i += 1
        return i - size

    def job_at(self, place: int) -> Job:
        """The job at ``place`` (a place :meth:`first` returned)."""
        job = self._jobs[place]
        if job is None:
            raise KeyError(place)
        return job

    @property
    def smallest(self) -> float:
        """The fewest processors an awaiting job asks for (``inf`` when none awaits)."""
        return self._min[1]

    def __contains__(self, job: Job) -> bool:
        return job.id in self._place

    def __len__(self) -> int:
        return len(self._place)

    def __iter__(self) -> Iterator[Job]:
        """The awaiting jobs in the order they were added."""
        return (j for j in self._jobs[: self._end] if j is not None)

    def _set(self, p: int, procs: float) -> None:
        """Place ``p`` now asks ``procs`` (``inf``: empty); its ancestors follow."""
        tree = self._min
        i = p + self._size
        tree[i] = procs
        i >>= 1
        while i:
            left, right = tree[2 * i], tree[2 * i + 1]
            tree[i] = left if left <= right else right
            i >>= 1

    def _compact(self) -> None:
        """Renumber the awaiting jobs 0, 1, ... into a capacity of at least twice their
        number (a power of two), and rebuild the tree."""
        jobs = [j for j in self._jobs[: self._end] if j is not None]
        size = _MIN_SIZE
        while size < 2 * (len(jobs) + 1):
            size <<= 1
        tree = [math.inf] * (2 * size)
        for p, job in enumerate(jobs):
            tree[size + p] = job.spec.procs
        for i in range(size - 1, 0, -1):
            left, right = tree[2 * i], tree[2 * i + 1]
            tree[i] = left if left <= right else right
        self._size, self._min, self._end = size, tree, len(jobs)
        self._jobs = jobs + [None] * (size - len(jobs))
        self._place = {job.id: p for p, job in enumerate(jobs)}
