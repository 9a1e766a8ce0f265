"""Job priority functions for backfill policies (T§3.2.1, T§5.1, Tables 12-13).

A priority function orders the waiting queue at every scheduling pass:
``order(queue, now)`` returns the jobs highest priority first.  Ties are broken
by submission order, so FCFS is the tie-breaker of every function.

The thesis's priorities are weighted sums of job measures (Table 13):

====== ===================================================
``w``  Jw = current wait, hours
``x``  Jx = (Jw + R) / R, R = requested runtime in hours
``p``  Jp = requested processors
``m``  Jm = requested memory in MB / 358.4
``pe`` Jpe = max(Jp, Jm)
====== ===================================================

and ``sjf`` (shortest requested runtime first) has no weights.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from o2ksim.errors import ConfigError
from o2ksim.jobs import Job

MB_PER_MEMORY_UNIT = 358.4  # Jm = requested MB / 358.4 (T Table 13)
WEIGHT_NAMES = ("w", "x", "p", "m", "pe")


class Priority:
    """Orders the queue; ``dynamic`` is False when the order never changes (FCFS)."""

    name = ""
    dynamic = True

    def order(self, queue: Collection[Job], now: float) -> Iterable[Job]:
        raise NotImplementedError

    def describe(self) -> str:
        return self.name


class FCFSPriority(Priority):
    """First come, first served: the queue's own (submission) order."""

    name = "fcfs"
    dynamic = False

    def order(self, queue: Collection[Job], now: float) -> Iterable[Job]:
        return queue


def _arrays(
    queue: Collection[Job],
) -> tuple[list[Job], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    jobs = list(queue)
    n = len(jobs)
    submit = np.fromiter((j.spec.submit for j in jobs), dtype=float, count=n)
    req = np.fromiter((j.spec.req_time for j in jobs), dtype=float, count=n)
    procs = np.fromiter((j.spec.procs for j in jobs), dtype=float, count=n)
    mem = np.fromiter((j.spec.mem for j in jobs), dtype=float, count=n)
    return jobs, submit, req, procs, mem


def _by_score(jobs: list[Job], score: np.ndarray) -> list[Job]:
    # jobs are in submission order; a stable sort on -score keeps FCFS among ties
    idx = np.argsort(-score, kind="stable")
    return [jobs[i] for i in idx]


@dataclass
class WeightedPriority(Priority):
    """Weighted sum of the Table 13 measures, recomputed at every pass."""

    weights: Mapping[str, float] = field(default_factory=dict)
    name: str = "weighted"

    def __post_init__(self) -> None:
        bad = set(self.weights) - set(WEIGHT_NAMES)
        if bad:
            raise ConfigError(
                None,
                f"unknown priority weight(s) {', '.join(sorted(bad))} (known: {', '.join(WEIGHT_NAMES)})",
                field="priority",
            )
        self.w = {k: float(self.weights.get(k, 0.0)) for k in WEIGHT_NAMES}
        self.dynamic = any(self.w[k] for k in ("w", "x"))

    def scores(self, queue: Collection[Job], now: float) -> tuple[list[Job], np.ndarray]:
        jobs, submit, req, procs, mem = _arrays(queue)
        wait_h = (now - submit) / 3600.0
        score = self.w["w"] * wait_h
        if self.w["x"]:
            req_h = np.maximum(req, 1.0) / 3600.0
            score = score + self.w["x"] * (wait_h + req_h) / req_h
        if self.w["p"]:
            score = score + self.w["p"] * procs
        jm = mem / 1024.0 / MB_PER_MEMORY_UNIT
        if self.w["m"]:
            score = score + self.w["m"] * jm
        if self.w["pe"]:
            score = score + self.w["pe"] * np.maximum(procs, jm)
        return jobs, score

    def order(self, queue: Collection[Job], now: float) -> Iterable[Job]:
        if len(queue) <= 1:
            return queue
        jobs, score = self.scores(queue, now)
        return _by_score(jobs, score)

    def describe(self) -> str:
        terms = [f"{v:g}*J{k}" for k, v in self.w.items() if v]
        return " + ".join(terms) or "0"


class SJFPriority(Priority):
    """Shortest requested runtime first (ties FCFS)."""

    name = "sjf"
    dynamic = False

    def order(self, queue: Collection[Job], now: float) -> Iterable[Job]:
        if len(queue) <= 1:
            return queue
        jobs, _submit, req, _p, _m = _arrays(queue)
        return _by_score(jobs, -req)


class LXFPriority(WeightedPriority):
    """Largest current expansion factor Jx first (G§2.2)."""

    def __init__(self) -> None:
        super().__init__(weights={"x": 1.0}, name="lxf")


PRIORITIES: dict[str, Callable[[], Priority]] = {
    "fcfs": FCFSPriority,
    "sjf": SJFPriority,
    "lxf": LXFPriority,
}


def make_priority(spec: str | Mapping[str, float] | Priority) -> Priority:
    """A priority from a name (``fcfs``, ``sjf``, ``lxf``), a weight table or an object."""
    if isinstance(spec, Priority):
        return spec
    if isinstance(spec, str):
        try:
            return PRIORITIES[spec]()
        except KeyError:
            raise ConfigError(
                None,
                f"unknown priority '{spec}' (known: {', '.join(sorted(PRIORITIES))}, or a table of weights {', '.join(WEIGHT_NAMES)})",
                field="priority",
            ) from None
    if isinstance(spec, Mapping):
        return WeightedPriority(weights=dict(spec))
    raise ConfigError(None, f"cannot make a priority from {spec!r}", field="priority")
