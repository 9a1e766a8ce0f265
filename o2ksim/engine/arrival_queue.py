"""The engine's queue: the waiting jobs in arrival order, with insertion at any place.

Policies read the queue (``Snapshot.queue``) in arrival order: the order of
the jobs' rows in the :class:`~o2ksim.engine.queue_index.QueueIndex`
(submission order, ties in the given order).  An arrival always goes last
(its row is greater than any row seen before), but a trial run that ends on
its quantum puts its job back in the queue at its arrival place, anywhere in
it (immediate service, T§3.2.2).  Sorting the whole queue for that costs
O(q log q) a requeue, and in a flood nearly every job is requeued once
(issue 27, D29).

:class:`ArrivalQueue` keeps the jobs in a list of *chunks*, each two parallel
Python lists (the rows, ascending, and their jobs) of at most
``2 * CHUNK`` entries:

* **Invariant.**  The chunks' rows, read one chunk after the other, are
  strictly increasing; no chunk is empty; ``_firsts[k]`` is the first row of
  chunk ``k``; ``_n`` is the number of jobs.
* **Costs.**  An insertion or a removal is a binary search over the chunks'
  first rows and one within a chunk, and a list insertion or deletion within
  the chunk: O(log q + CHUNK) (the latter a ``memmove`` of pointers).  A
  chunk that reaches ``2 * CHUNK`` entries is split in two; an empty one is
  dropped (O(q / CHUNK) pointers moved, once per ``CHUNK`` removals at
  least).  Iterating is ``itertools.chain`` over the chunks: O(q) in C, and
  O(1) to reach the head.  ``len`` is O(1).

No deleted entry is ever walked over: a removal closes its gap at once (a
``dict``'s holes, which an iteration walks, were the reason the queue was an
``OrderedDict`` before; see ``docs/guides/scaling.md``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping
from itertools import chain

from o2ksim.jobs import Job

CHUNK = 512  # a chunk is split when it reaches twice this many jobs


class ArrivalQueue:
    """The waiting jobs in ascending row (arrival order); ``row_of`` maps a job id to its row.

    A ``Collection`` of jobs: ``len``, iteration in arrival order, ``in``.
    Only the engine changes it (:meth:`add`, :meth:`remove`); a policy reads
    it through ``Snapshot.queue`` during a pass.
    """

    __slots__ = ("_firsts", "_jobs", "_n", "_row_of", "_rows")

    def __init__(self, row_of: Mapping[int, int]) -> None:
        self._row_of = row_of
        self._rows: list[list[int]] = []  # per chunk, the rows in ascending order
        self._jobs: list[list[Job]] = []  # per chunk, the jobs of those rows
        self._firsts: list[int] = []  # per chunk, its first row
        self._n = 0

    def add(self, job: Job) -> None:
        """Put ``job`` in the queue at its arrival place (an arrival: last)."""
        row = self._row_of[job.id]
        rows_of, firsts = self._rows, self._firsts
        if not rows_of or row > rows_of[-1][-1]:  # an arrival: after every queued job
            k = len(rows_of) - 1
            if k < 0:
                rows_of.append([row])
                self._jobs.append([job])
                firsts.append(row)
                self._n += 1
                return
            rows = rows_of[k]
            rows.append(row)
            self._jobs[k].append(job)
        else:
            k = max(bisect_right(firsts, row) - 1, 0)  # the chunk it belongs to
            rows = rows_of[k]
            i = bisect_left(rows, row)
            if i < len(rows) and rows[i] == row:
                raise ValueError(f"job {job.id} is already queued")
            rows.insert(i, row)
            self._jobs[k].insert(i, job)
            if i == 0:
                firsts[k] = row
        self._n += 1
        if len(rows) >= 2 * CHUNK:  # split it in two halves
            jobs = self._jobs[k]
            rows_of.insert(k + 1, rows[CHUNK:])
            self._jobs.insert(k + 1, jobs[CHUNK:])
            firsts.insert(k + 1, rows[CHUNK])
            del rows[CHUNK:], jobs[CHUNK:]

    def remove(self, job: Job) -> None:
        """Take ``job`` out of the queue (``KeyError`` when it is not in it)."""
        k, i = self._place(job)
        if i < 0:
            raise KeyError(job.id)
        rows, jobs = self._rows[k], self._jobs[k]
        del rows[i], jobs[i]
        self._n -= 1
        if not rows:
            del self._rows[k], self._jobs[k], self._firsts[k]
        elif i == 0:
            self._firsts[k] = rows[0]

    def _place(self, job: Job) -> tuple[int, int]:
        """The chunk and the index in it of ``job``'s row; index -1 when it is not queued."""
        row = self._row_of.get(job.id)
        if row is None or not self._firsts:
            return 0, -1
        k = bisect_right(self._firsts, row) - 1
        if k < 0:
            return 0, -1
        rows = self._rows[k]
        i = bisect_left(rows, row)
        if i < len(rows) and rows[i] == row and self._jobs[k][i] is job:
            return k, i
        return k, -1

    def __contains__(self, job: object) -> bool:
        return isinstance(job, Job) and self._place(job)[1] >= 0

    def __iter__(self) -> Iterator[Job]:
        return chain.from_iterable(self._jobs)

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __repr__(self) -> str:
        return f"ArrivalQueue({[j.id for j in self]})"
