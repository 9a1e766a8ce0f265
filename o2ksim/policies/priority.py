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
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.jobs import Job
from o2ksim.plugins import is_object_spec, load_object
from o2ksim.policies.order_scan import IndexedOrder, InstantIndex, MergedOrder
from o2ksim.policies.queue_view import (
    KB_PER_MEMORY_UNIT,
    MIN_REQUESTED_SECONDS,
    QueueView,
    RankedQueue,
    RequestColumns,
)
from o2ksim.registry import Registry

if TYPE_CHECKING:
    from o2ksim.engine.queue_index import QueueIndex

WEIGHT_NAMES = ("w", "x", "p", "m", "pe")
SMALL_QUEUE = 24  # up to this many waiting jobs, WeightedPriority.order sorts in plain Python
MERGE_MIN = 512  # from this many waiting jobs, WeightedPriority.order tries a merged order
DAY = 86400.0  # seconds: how far apart FunctionPriority reads a static function's scores


def rank(score: np.ndarray) -> np.ndarray:
    """Positions highest ``score`` first, equal scores in position order (a stable sort):
    :meth:`Priority.order`'s ranking, also the goal-oriented policies' LXF branching order."""
    return np.argsort(-score, kind="stable")


class Priority:
    """Orders the queue, highest priority first; ties in submission order.

    Subclasses implement :meth:`scores` (higher = sooner); :meth:`order` is the
    one function that turns scores into the queue order, for every caller
    (backfill passes, goal-oriented search, explanations, tests).
    """

    name = ""

    def __init__(self) -> None:
        self._columns = RequestColumns()
        self._ordered: tuple[QueueIndex, QueueIndex] | None = None  # per run: index, its order

    def is_static(self) -> bool:
        """Whether the scores are a fixed number per job, whatever the time: then the
        order is kept as an index of its own instead of ranked at every pass."""
        return False

    def static_order(self, queue: Collection[Job], index: QueueIndex | None) -> IndexedOrder | None:
        """:meth:`order` of a static priority (:meth:`is_static`) with the engine's index
        of exactly this queue: the queue read from a per-run index whose rows are in
        ascending ``-score`` order, ties in submission order; ``None`` otherwise.

        The same ranking as the stable sort of the waiting jobs' negated scores in
        :meth:`order` (a stable sort of every job of the run restricted to the waiting
        ones), for O(n log n) once per run instead of O(q log q) per pass.
        """
        if index is None or len(index) != len(queue) or not self.is_static():
            return None
        memo = self._ordered
        if memo is None or memo[0] is not index:
            memo = self._ordered = (index, index.ordered(-self.static_scores(index)))
        return IndexedOrder(memo[1])

    def static_scores(self, index: QueueIndex, now: float = 0.0) -> np.ndarray:
        """Every job's score of the run (``index``: every job), as read at ``now``: for a
        static priority the same at any time (:meth:`static_order`)."""
        cols = [index.submit, index.req_time, index.procs, index.mem]
        return self._checked(self.scores(QueueView(index.jobs, now, cols)), len(index.jobs))

    def _checked(self, raw: Any, n: int) -> np.ndarray:
        score = np.asarray(raw, dtype=float)
        if score.shape != (n,):
            # a plain O2KSimError: SimPy re-raises errors from inside the run by
            # calling type(exc)(*exc.args), which a ConfigError does not survive
            raise O2KSimError(
                f"priority '{self.name}' returned scores of shape {score.shape} "
                f"for {n} waiting jobs (expected one score per job)"
            )
        return score

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
        takes as is; otherwise a list of jobs.  A static priority with ``index``
        gives the same ranking as an :class:`~o2ksim.policies.order_scan.IndexedOrder`
        (:meth:`static_order`); this sort stays its reference (tests/test_flood_order.py).
        """
        if len(queue) <= 1:
            return queue
        static = self.static_order(queue, index)
        if static is not None:
            return static
        q = self.view(queue, now, index)
        ranked = rank(self._checked(self.scores(q), len(q)))
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
        self._instants: tuple[QueueIndex, InstantIndex | None] | None = None  # per run

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
        return self.scores_of(q.procs, q.mem, q.req_time, q.wait)

    def scores_of(self, procs: Any, mem: Any, req_time: Any, wait: Any) -> np.ndarray:
        """:meth:`scores` of jobs given as columns (``wait``: current wait, seconds), for a
        caller holding them already (the goal-oriented policies' LXF branching order)."""
        base, slope = self.terms(procs, mem, req_time)
        return base + slope * wait

    def order(
        self, queue: Collection[Job], now: float, index: QueueIndex | None = None
    ) -> Sequence[Job] | Collection[Job]:
        """:meth:`Priority.order`, with each job's ``base`` and ``slope`` computed once
        per run over the queue index (by :meth:`terms`, so the same floats): a pass
        then costs one multiply-add per waiting job -- in plain Python for a short
        queue, where numpy's per-call cost would dominate, else in numpy.  A long
        queue of few runs (submission instant, and base or slope) is a
        :class:`~o2ksim.policies.order_scan.MergedOrder` instead (:meth:`_merged`)."""
        if len(queue) <= 1 or index is None or len(index) != len(queue) or self.is_static():
            return super().order(queue, now, index)
        _, base, slope, _lists = self._run_terms(index)
        if len(queue) >= MERGE_MIN:
            merged = self._merged(index, base, slope, now)
            if merged is not None:
                return merged
        if len(queue) <= SMALL_QUEUE:
            b, m, t = self.term_lists(index)
            row_of = index.row_of
            in_queue = [row_of[job.id] for job in queue]  # queue order; sorted() is stable
            ranked = sorted(in_queue, key=lambda r: -(b[r] + m[r] * (now - t[r])))
            jobs = index.jobs
            return [jobs[r] for r in ranked]
        rows = index.rows()
        score = base[rows] + slope[rows] * (now - index.submit[rows])
        return RankedQueue(index.jobs, rows[np.argsort(-score, kind="stable")])

    def _run_terms(
        self, index: QueueIndex
    ) -> tuple[QueueIndex, np.ndarray, np.ndarray, tuple[list, ...] | None]:
        """Every job's ``base`` and ``slope`` over the run's queue index, computed once."""
        per_run = self._per_run
        if per_run is None or per_run[0] is not index:
            base, slope = self.terms(index.procs, index.mem, index.req_time)
            base = np.broadcast_to(np.asarray(base, dtype=float), index.procs.shape)
            slope = np.broadcast_to(np.asarray(slope, dtype=float), index.procs.shape)
            per_run = self._per_run = (index, base, slope, None)
        return per_run

    def term_lists(self, index: QueueIndex) -> tuple[list, list, list]:
        """Every job's ``base``, ``slope`` and submit time by index row, as Python lists
        (the same floats as the arrays): for loops over a short queue."""
        _, base, slope, lists = self._run_terms(index)
        if lists is None:
            lists = (base.tolist(), slope.tolist(), index.submit.tolist())
            self._per_run = (index, base, slope, lists)
        b, m, t = lists
        return b, m, t

    def _merged(
        self, index: QueueIndex, base: np.ndarray, slope: np.ndarray, now: float
    ) -> MergedOrder | None:
        """The queue as a merge of fixed-order runs, one per submission instant and base
        or slope (:class:`~o2ksim.policies.order_scan.InstantIndex`); ``None``: rank it."""
        memo = self._instants
        if memo is None or memo[0] is not index:
            inst = None
            if InstantIndex.usable(index, slope):
                inst = InstantIndex(index, np.array(base), np.array(slope))
            memo = self._instants = (index, inst)
        inst = memo[1]
        return None if inst is None else inst.order(now, len(index))

    def is_static(self) -> bool:
        """No weight on the wait (``w``) or the expansion factor (``x``): the score is
        ``base`` alone (``slope`` is 0)."""
        return not self.weights["w"] and not self.weights["x"]

    def describe(self) -> str:
        terms = [f"{v:g}*J{k}" for k, v in self.weights.items() if v]
        return " + ".join(terms) or "0"


class SJFPriority(Priority):
    """Shortest requested runtime first (ties FCFS); starves long jobs (T§5.4.1)."""

    name = "sjf"

    def is_static(self) -> bool:
        return True

    def scores(self, q: QueueView) -> np.ndarray:
        return -q.req_time


class LXFPriority(WeightedPriority):
    """Largest current expansion factor Jx first (G§2.2): Wx = 1, nothing else."""

    def __init__(self) -> None:
        super().__init__({"x": 1.0}, name="lxf")


PriorityFunction = Callable[[QueueView], np.ndarray]


class FunctionPriority(Priority):
    """A priority given as a Python function ``fn(QueueView) -> scores``.

    ``static``: the function reads no time (not ``wait``, ``jw`` or ``jx``), so each
    job's score is fixed and the order is kept as an index instead of ranked at every
    pass (:meth:`Priority.static_order`: a flood of ``n`` jobs then costs O(n log n),
    not O(n^2 log n); with ``--interval``, quiet ticks are skipped as for SJF).  Given
    here, or declared on the function (:func:`static_priority`, or
    ``register_priority(..., static=True)``).  The declaration is checked once per
    run: scores read at two times must be the same, or the run stops with an error
    (a function that reads the wait would otherwise be ranked silently wrong).
    """

    def __init__(self, fn: PriorityFunction, name: str, static: bool | None = None) -> None:
        super().__init__()
        self.fn = fn
        self.name = name
        self.static = bool(getattr(fn, "static", False)) if static is None else static

    def is_static(self) -> bool:
        return self.static

    def static_scores(self, index: QueueIndex, now: float = 0.0) -> np.ndarray:
        """:meth:`Priority.static_scores`, read at two times a day apart after the last
        submission as well: different scores refuse the declaration."""
        score = super().static_scores(index, now)
        later = float(index.submit.max()) + DAY if len(index.submit) else DAY
        if not np.array_equal(score, super().static_scores(index, later)):
            raise O2KSimError(
                f"priority function '{self.name}' is declared static but its scores change "
                "with the time (does it read wait, jw or jx?): drop static"
            )
        return score

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
    name: str, fn: PriorityFunction | None = None, *, replace: bool = False, static: bool = False
) -> Any:
    """Register ``fn(QueueView) -> scores`` (higher first) as priority ``name``.

    Usable directly (``register_priority("mine", fn)``) or as a decorator
    (``@register_priority("mine")``).  A preset then says ``priority = "mine"``;
    the engine is not touched.  Built-in names cannot be replaced unless
    ``replace`` is true.  ``static``: the function reads no time
    (:class:`FunctionPriority`), as :func:`static_priority` declares.
    """

    def add(f: PriorityFunction) -> PriorityFunction:
        if not callable(f):
            raise TypeError(f"priority '{name}' must be callable, got {f!r}")
        if name in PRIORITIES and not replace:
            raise ValueError(f"priority '{name}' is already registered")
        PRIORITIES[name] = lambda: FunctionPriority(f, name, True if static else None)
        return f

    return add if fn is None else add(fn)


def static_priority(fn: PriorityFunction) -> PriorityFunction:
    """Declare that ``fn(QueueView) -> scores`` reads no time, only the jobs' requests
    and fields (a queue class, the processors asked for...): wherever it is used
    (registered, by import path, or given itself), its order is then kept as an index
    (:class:`FunctionPriority`).  Returns ``fn`` (a decorator)."""
    setattr(fn, "static", True)  # noqa: B010 (mypy: a Callable declares no attributes)
    return fn


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
        return FunctionPriority(spec, getattr(spec, "__name__", "function"))  # static if declared
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
