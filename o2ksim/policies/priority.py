"""Job priority functions for backfill policies (T§3.2.1, T§5.1, T Tables 12-13).

A priority function orders the waiting queue at every scheduling pass:
``order(queue, now)`` returns the jobs highest priority first.  Ties are broken
by submission order, so FCFS is the tie-breaker of every function.

The thesis's priorities are weighted sums of job measures (Table 13), computed
afresh at every pass from the current time:

====== ===================================================
``w``  Jw = current wait, hours
``x``  Jx = (Jw + R) / R, R = requested runtime in hours
``p``  Jp = requested processors
``m``  Jm = requested memory in MB / 358.4
``pe`` Jpe = max(Jp, Jm)
====== ===================================================

Built-in names: ``fcfs`` (arrival order), ``sjf`` (shortest requested runtime
first) and ``lxf`` (largest Jx first, G§2.2).  A preset may instead give a
table of weights (``priority = { w = 0.02, x = 1 }``), the name of a function
registered with :func:`register_priority`, or ``"package.module:function"``.
A priority *function* takes a :class:`QueueView` (numpy arrays over the
waiting jobs) and returns one score per job, higher first::

    from o2ksim.policies.priority import register_priority

    @register_priority("widest-first")
    def widest_first(q):
        return q.jp + 0.01 * q.jw      # wide jobs first, waiting breaks ties

The scores are vectorised: one numpy expression per pass, not a Python loop
over the queue.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.jobs import Job
from o2ksim.plugins import is_object_spec, load_object
from o2ksim.registry import Registry

if TYPE_CHECKING:
    from o2ksim.engine.queue_index import QueueIndex

MB_PER_MEMORY_UNIT = 358.4  # Jm = requested MB / 358.4 (T Table 13)
KB_PER_MEMORY_UNIT = MB_PER_MEMORY_UNIT * 1024.0  # JobSpec.mem is KB
WEIGHT_NAMES = ("w", "x", "p", "m", "pe")
MIN_REQUESTED_SECONDS = 1.0  # Jx floor: a zero requested runtime counts as one second


class QueueView:
    """The waiting jobs of one pass as numpy arrays (one entry per job, queue order).

    ``submit``, ``req_time`` (seconds), ``procs`` and ``mem`` (KB, 0 = not
    constrained) come from the job requests; the Table 13 measures ``jw``,
    ``jx``, ``jp``, ``jm`` and ``jpe`` are derived on first use.
    """

    def __init__(self, jobs: Sequence[Job], now: float, columns: Sequence[np.ndarray]) -> None:
        self.jobs = jobs
        self.now = now
        self.submit, self.req_time, self.procs, self.mem = columns

    def __len__(self) -> int:
        return len(self.jobs)

    @cached_property
    def wait(self) -> np.ndarray:
        """Current wait, seconds."""
        return self.now - self.submit

    @cached_property
    def jw(self) -> np.ndarray:
        """Current wait, hours (Table 13 Jw)."""
        return self.wait / 3600.0

    @cached_property
    def jx(self) -> np.ndarray:
        """Estimated current expansion factor (wait + R) / R (Table 13 Jx)."""
        req = np.maximum(self.req_time, MIN_REQUESTED_SECONDS)
        return (self.wait + req) / req

    @property
    def jp(self) -> np.ndarray:
        """Requested processors (Table 13 Jp)."""
        return self.procs

    @cached_property
    def jm(self) -> np.ndarray:
        """Requested memory in units of 358.4 MB (Table 13 Jm)."""
        return self.mem / KB_PER_MEMORY_UNIT

    @cached_property
    def jpe(self) -> np.ndarray:
        """max(Jp, Jm): the larger of processors and normalised memory (Table 12 Wpe)."""
        return np.maximum(self.procs, self.jm)


class _Columns:
    """Per-run cache of every job's request columns, so a pass without the engine's
    queue index gathers them with one fancy index instead of a Python loop per column."""

    __slots__ = ("cols", "n", "row_of")

    def __init__(self) -> None:
        self.row_of: dict[Job, int] = {}
        self.cols = [np.empty(1024) for _ in range(4)]
        self.n = 0

    def _add(self, jobs: Iterable[Job]) -> None:
        row_of = self.row_of
        for job in jobs:
            if job in row_of:
                continue
            if self.n == len(self.cols[0]):
                self.cols = [np.concatenate([c, np.empty_like(c)]) for c in self.cols]
            spec = job.spec
            row = (spec.submit, spec.req_time, spec.procs, spec.mem)
            for col, value in zip(self.cols, row, strict=True):
                col[self.n] = value
            row_of[job] = self.n
            self.n += 1

    def gather(self, jobs: Sequence[Job]) -> list[np.ndarray]:
        """``submit``, ``req_time``, ``procs`` and ``mem`` of ``jobs``, in their order."""
        get = self.row_of.__getitem__
        try:
            idx = np.fromiter(map(get, jobs), dtype=np.intp, count=len(jobs))
        except KeyError:
            self._add(jobs)
            idx = np.fromiter(map(get, jobs), dtype=np.intp, count=len(jobs))
        return [c[idx] for c in self.cols]


class RankedQueue(Sequence[Job]):
    """Waiting jobs held as :class:`~o2ksim.engine.queue_index.QueueIndex` rows: a job
    object is looked up only when a pass reaches it, and a scan of the rest takes the
    rows as they are (``rows``)."""

    __slots__ = ("jobs", "rows")

    def __init__(self, jobs: Sequence[Job], rows: np.ndarray) -> None:
        self.jobs = jobs  # every job of the run, by row
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.jobs[r] for r in self.rows[i].tolist()]
        return self.jobs[int(self.rows[i])]

    def __iter__(self) -> Iterator[Job]:
        jobs, rows = self.jobs, self.rows
        for lo in range(0, len(rows), _CHUNK):
            yield from map(jobs.__getitem__, rows[lo : lo + _CHUNK].tolist())


_CHUNK = 64  # rows turned into jobs at a time while a RankedQueue is iterated
SMALL_QUEUE = 24  # up to this many waiting jobs, WeightedPriority.order sorts in plain Python


class Priority:
    """Orders the queue, highest priority first; ties in submission order.

    Subclasses implement :meth:`scores` (higher = sooner); :meth:`order` is the
    one function that turns scores into the queue order, for every caller
    (backfill passes, goal-oriented search, explanations, tests).
    """

    name = ""

    def __init__(self) -> None:
        self._columns = _Columns()

    def scores(self, q: QueueView) -> np.ndarray:
        """One score per waiting job; higher runs sooner."""
        raise NotImplementedError

    def view(
        self, queue: Collection[Job], now: float, index: QueueIndex | None = None
    ) -> QueueView:
        """The queue as arrays (for scores, tests and explanations).

        ``index``: the engine's columns of exactly this queue in queue order
        (``Snapshot.queue_index``), read by fancy indexing; without it, the
        jobs' requests are gathered from a per-run cache.
        """
        if index is not None and len(index) == len(queue):
            rows = index.rows()
            cols = [index.submit[rows], index.req_time[rows], index.procs[rows], index.mem[rows]]
            return QueueView(RankedQueue(index.jobs, rows), now, cols)
        jobs = list(queue)
        return QueueView(jobs, now, self._columns.gather(jobs))

    def order(
        self, queue: Collection[Job], now: float, index: QueueIndex | None = None
    ) -> Sequence[Job] | Collection[Job]:
        """The queue highest priority first, ties in submission order (SPEC §3.1).

        A stable sort on the negated scores of the queue, which is in submission
        order.  With ``index`` (the engine's columns of exactly this queue) the
        result is a :class:`RankedQueue` of index rows, which the backfill scan
        takes as is; otherwise a list of jobs.
        """
        if len(queue) <= 1:
            return queue
        q = self.view(queue, now, index)
        score = np.asarray(self.scores(q), dtype=float)
        if score.shape != (len(q),):
            # a plain O2KSimError: SimPy re-raises errors from inside the run by
            # calling type(exc)(*exc.args), which a ConfigError does not survive
            raise O2KSimError(
                f"priority '{self.name}' returned scores of shape {score.shape} "
                f"for {len(q)} waiting jobs (expected one score per job)"
            )
        ranked = np.argsort(-score, kind="stable")
        if isinstance(q.jobs, RankedQueue):
            return RankedQueue(q.jobs.jobs, q.jobs.rows[ranked])
        jobs = q.jobs
        return [jobs[i] for i in ranked.tolist()]

    def describe(self) -> str:
        return self.name


class FCFSPriority(Priority):
    """First come, first served: the queue's own (submission) order (Table 12, Ww = 1)."""

    name = "fcfs"

    def scores(self, q: QueueView) -> np.ndarray:
        return -q.submit

    def order(
        self, queue: Collection[Job], now: float, index: QueueIndex | None = None
    ) -> Collection[Job]:
        """The queue as it is: it is already in submission order (no scores needed)."""
        return queue


class WeightedPriority(Priority):
    """Weighted sum of the Table 13 measures, recomputed at every pass (Table 12).

    The sum is linear in the current wait: ``base + slope * wait`` with
    ``base = Wx + Wp Jp + Wm Jm + Wpe Jpe`` and ``slope = Ww / 3600 + Wx / R``
    (Jw = wait / 3600 and Jx = 1 + wait / R, R the requested runtime in
    seconds; :meth:`terms`).  Terms whose weight is zero are left out (they
    add exactly zero).
    """

    def __init__(self, weights: Mapping[str, float], name: str = "weighted") -> None:
        super().__init__()
        bad = set(weights) - set(WEIGHT_NAMES)
        if bad:
            raise ConfigError(
                None,
                f"unknown priority weight(s) {', '.join(sorted(bad))} (known: {', '.join(WEIGHT_NAMES)})",
                field="priority",
            )
        for k, v in weights.items():
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise ConfigError(
                    None, f"weight {k} must be a finite number, got {v!r}", field="priority"
                )
        self.name = name
        self.weights = {k: float(weights.get(k, 0.0)) for k in WEIGHT_NAMES}
        # per run: the queue index, every job's base and slope, and them as lists
        self._per_run: tuple[QueueIndex, np.ndarray, np.ndarray, tuple[list, ...] | None] | None = (
            None
        )

    def terms(self, procs: Any, mem: Any, req_time: Any) -> tuple[Any, Any]:
        """``(base, slope)`` of the score ``base + slope * wait`` for these requests
        (numpy arrays or numbers): the one place the Table 12 weights are applied."""
        w = self.weights
        base: Any = w["x"]
        if w["p"]:
            base = base + w["p"] * procs
        jm = mem / KB_PER_MEMORY_UNIT
        if w["m"]:
            base = base + w["m"] * jm
        if w["pe"]:
            base = base + w["pe"] * np.maximum(procs, jm)
        slope: Any = w["w"] / 3600.0
        if w["x"]:
            slope = slope + w["x"] / np.maximum(req_time, MIN_REQUESTED_SECONDS)
        return base, slope

    def scores(self, q: QueueView) -> np.ndarray:
        base, slope = self.terms(q.procs, q.mem, q.req_time)
        return base + slope * q.wait

    def order(
        self, queue: Collection[Job], now: float, index: QueueIndex | None = None
    ) -> Sequence[Job] | Collection[Job]:
        """:meth:`Priority.order`, with each job's ``base`` and ``slope`` computed once
        per run over the queue index (by :meth:`terms`, so the same floats): a pass
        then costs one multiply-add per waiting job -- in plain Python for a short
        queue, where numpy's per-call cost would dominate, else in numpy."""
        if len(queue) <= 1 or index is None or len(index) != len(queue):
            return super().order(queue, now, index)
        per_run = self._per_run
        if per_run is None or per_run[0] is not index:
            base, slope = self.terms(index.procs, index.mem, index.req_time)
            base = np.broadcast_to(np.asarray(base, dtype=float), index.procs.shape)
            slope = np.broadcast_to(np.asarray(slope, dtype=float), index.procs.shape)
            per_run = self._per_run = (index, base, slope, None)
        _, base, slope, lists = per_run
        if len(queue) <= SMALL_QUEUE:
            if lists is None:
                lists = (base.tolist(), slope.tolist(), index.submit.tolist())
                self._per_run = (index, base, slope, lists)
            b, m, t = lists
            row_of = index.row_of
            in_queue = [row_of[job.id] for job in queue]  # queue order; sorted() is stable
            ranked = sorted(in_queue, key=lambda r: -(b[r] + m[r] * (now - t[r])))
            jobs = index.jobs
            return [jobs[r] for r in ranked]
        rows = index.rows()
        score = base[rows] + slope[rows] * (now - index.submit[rows])
        return RankedQueue(index.jobs, rows[np.argsort(-score, kind="stable")])

    def describe(self) -> str:
        terms = [f"{v:g}*J{k}" for k, v in self.weights.items() if v]
        return " + ".join(terms) or "0"


class SJFPriority(Priority):
    """Shortest requested runtime first (ties FCFS); starves long jobs (T§5.4.1)."""

    name = "sjf"

    def scores(self, q: QueueView) -> np.ndarray:
        return -q.req_time


class LXFPriority(WeightedPriority):
    """Largest current expansion factor Jx first (G§2.2): Wx = 1, nothing else."""

    def __init__(self) -> None:
        super().__init__({"x": 1.0}, name="lxf")


PriorityFunction = Callable[[QueueView], np.ndarray]


class FunctionPriority(Priority):
    """A priority given as a Python function ``fn(QueueView) -> scores``."""

    def __init__(self, fn: PriorityFunction, name: str) -> None:
        super().__init__()
        self.fn = fn
        self.name = name

    def scores(self, q: QueueView) -> np.ndarray:
        """The user function's scores, checked: numbers, none NaN.

        A user function that raises or returns something else would otherwise
        show a traceback or (NaN) silently scramble the queue order.  Errors are
        plain :class:`O2KSimError` (SimPy re-raises them by ``type(exc)(*args)``).
        """
        try:
            raw = self.fn(q)
        except Exception as exc:
            raise O2KSimError(
                f"priority function '{self.name}' raised {type(exc).__name__}: {exc}"
            ) from None
        try:
            score = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            raise O2KSimError(
                f"priority function '{self.name}' must return numbers (one per waiting job), "
                f"got {str(raw)[:60]!r}"
            ) from None
        if score.shape == (len(q),) and np.isnan(score).any():
            bad = int(np.count_nonzero(np.isnan(score)))
            raise O2KSimError(
                f"priority function '{self.name}' returned {bad} NaN score(s) for {len(q)} "
                "waiting jobs; NaN has no order (use -inf for 'last')"
            )
        return score


PRIORITIES: Registry[Callable[[], Priority]] = Registry(
    "priority", {"fcfs": FCFSPriority, "sjf": SJFPriority, "lxf": LXFPriority}
)
BUILTIN_PRIORITIES = frozenset(PRIORITIES)
"""The names o2ksim defines; everything else in :data:`PRIORITIES` was registered by the user."""


def register_priority(
    name: str, fn: PriorityFunction | None = None, *, replace: bool = False
) -> Any:
    """Register ``fn(QueueView) -> scores`` (higher first) as priority ``name``.

    Usable directly (``register_priority("mine", fn)``) or as a decorator
    (``@register_priority("mine")``).  A preset then says ``priority = "mine"``;
    the engine is not touched.  Built-in names cannot be replaced unless
    ``replace`` is true.
    """

    def add(f: PriorityFunction) -> PriorityFunction:
        if not callable(f):
            raise TypeError(f"priority '{name}' must be callable, got {f!r}")
        if name in PRIORITIES and not replace:
            raise ValueError(f"priority '{name}' is already registered")
        PRIORITIES[name] = lambda: FunctionPriority(f, name)
        return f

    return add if fn is None else add(fn)


def _import_function(path: str) -> PriorityFunction:
    fn = load_object(path, what="priority")
    if not callable(fn):
        raise ConfigError(None, f"'{path}' is not callable", field="priority")
    return fn


def make_priority(spec: str | Mapping[str, float] | Priority | PriorityFunction) -> Priority:
    """A fresh priority from a name, ``"module:function"``, a weight table, a function or an object.

    A :class:`Priority` object is used as is (it then keeps its per-run cache:
    give each run its own).
    """
    if isinstance(spec, Priority):
        return spec
    if isinstance(spec, str):
        if spec in PRIORITIES:
            return PRIORITIES[spec]()
        if ":" in spec:
            return FunctionPriority(_import_function(spec), spec)
        raise ConfigError(
            None,
            f"unknown priority '{spec}' (known: {', '.join(sorted(PRIORITIES))}, "
            f"'module:function', or a table of weights {', '.join(WEIGHT_NAMES)})",
            field="priority",
        )
    if isinstance(spec, Mapping):
        return WeightedPriority(dict(spec))
    if callable(spec):
        return FunctionPriority(spec, getattr(spec, "__name__", "function"))
    raise ConfigError(None, f"cannot make a priority from {spec!r}", field="priority")


def check_priority(spec: Any) -> bool:
    """Whether ``spec`` names a priority (used to validate presets before a run)."""
    try:
        make_priority(spec)
    except ConfigError:
        if is_object_spec(spec):
            raise  # the import's own error says more than "must be a known priority"
        return False
    return True
