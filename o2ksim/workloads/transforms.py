"""Workload transformations the protocol and the policy studies need.

* :func:`read_window` — a window as users write it (seconds, durations or dates read
  in the trace header's zone), refused in their terms when it is reversed or empty.
* :func:`select_window` — the month-with-warm-up protocol (T§3.4, SPEC §5): keep the
  jobs submitted from ``start - warmup`` on, and name the jobs submitted in
  ``[start, end)`` as the ones to analyse.
* :func:`apply_estimates` — runtime-estimate scenarios (T§6.2.1, Table 15):
  requested = actual; Scenario A ``min((1+k)T, R)``; Scenario B; and a
  predictor fitted on earlier jobs, the user's recent runtimes
  (:func:`user_recent_runtimes`).

Both work on the SWF columns and return new frames (inputs are not changed).
Durations are parsed by :mod:`o2ksim.units` (re-exported here: ``parse_duration``,
``format_duration``, ``parse_time``).
"""

from __future__ import annotations

import heapq
import numbers
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from o2ksim.errors import O2KSimError
from o2ksim.table import ColumnTable, column
from o2ksim.units import (
    TraceClock,
    format_duration,
    is_date,
    parse_duration,
    parse_time,
    trace_zone,
)
from o2ksim.validation import MAX_TIME, check_number

if TYPE_CHECKING:  # pandas only for the types: a run's tables are numpy columns (o2ksim.table)
    import pandas as pd

@dataclass(frozen=True)
class Window:
    """The analysis window ``[start, end)`` and the warm-up before it.

    Each bound is seconds since the trace start or a duration as the CLI and
    TOML take it (``Window("14d", "28d")``).  The warm-up defaults to 7 days,
    as ``o2ksim run --window`` and a scenario's ``[protocol]`` (T§3.4's week
    before each simulated month); give ``warmup=0`` to analyse from the start.
    """

    start: float
    end: float
    warmup: float = 7 * 86400.0
    #: the time zone its dates were read in (``Europe/Stockholm``), when they were dates
    #: (:func:`read_window`); recorded as ``window_zone`` in the run's summary
    zone: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("start", "end", "warmup"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real | str):
                raise O2KSimError(
                    f"window {name}: expected seconds or a duration such as '7d', got {value!r}"
                )
            seconds = parse_duration(value if isinstance(value, str) else float(value))
            check_number(seconds, "window", name, minimum=-MAX_TIME, maximum=MAX_TIME)
            object.__setattr__(self, name, seconds)
        if self.end <= self.start:
            raise O2KSimError(
                f"window end ({format_duration(self.end)}) must be after its start "
                f"({format_duration(self.start)})"
            )
        if self.warmup < 0:
            raise O2KSimError("warm-up must not be negative")


def as_window(value: Window | Sequence[Any] | None) -> Window | None:
    """A :class:`Window` from a Window, ``(start, end)`` or ``(start, end, warmup)``, or ``None``."""
    if value is None or isinstance(value, Window):
        return value
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) not in (2, 3):
        raise O2KSimError(
            f"window: expected (start, end) or (start, end, warmup), e.g. ('14d', '28d'), "
            f"not {value!r}"
        )
    return Window(*value)


DEFAULT_WARMUP = 7 * 86400.0  # a window's warm-up unless told: T§3.4's week before each month


def read_bounds(bounds: Sequence[Any], header: Any = None) -> tuple[float, float, TraceClock]:
    """``[start, end)`` in trace seconds from bounds as users write them, and the clock to
    speak of them in: seconds, durations or dates (ISO, read against the ``header``'s
    UnixStartTime in its time zone, :func:`~o2ksim.units.trace_zone`).

    A reversed or empty window of dates is refused with the dates as typed and the zone
    they were read in (``window end 2001-09-12 must be after its start 2001-09-14; dates
    read in America/New_York (...)``), not as day offsets from the trace start (issue 27).
    Durations are left to :class:`Window` (its message speaks in durations already).
    """
    if isinstance(bounds, str) or not isinstance(bounds, Sequence) or len(bounds) != 2:
        raise O2KSimError(f"expected [START, END], e.g. ['14d', '28d'] or dates, not {bounds!r}")
    if not any(is_date(t) for t in bounds):
        window = Window(bounds[0], bounds[1], 0.0)
        return window.start, window.end, TraceClock()
    unix = getattr(header, "unix_start_time", None)
    zone, label = trace_zone(header)
    clock = TraceClock(unix, zone, label)
    start, end = (parse_time(t, unix, zone) for t in bounds)
    if end <= start:
        raise O2KSimError(
            f"window end {clock.as_written(bounds[1], end)} must be after its start "
            f"{clock.as_written(bounds[0], start)}{clock.zone_said}"
        )
    return start, end, clock


def read_window(
    bounds: Sequence[Any],
    header: Any = None,
    warmup: float | str = DEFAULT_WARMUP,
    submit: np.ndarray | None = None,
) -> tuple[Window, TraceClock]:
    """The :class:`Window` of ``bounds`` (:func:`read_bounds`) with its ``warmup``, and the
    clock to speak of it in (dates when the user typed dates).  Given the trace's ``submit``
    times, a window in which no job is submitted is refused too, in the same terms."""
    start, end, clock = read_bounds(bounds, header)
    zone = clock.read_in.split(" ")[0] if clock.unix_start is not None else None
    window = Window(start, end, warmup, zone)  # type: ignore[arg-type]  # Window parses a duration
    if submit is not None:
        inside = (submit >= window.start) & (submit < window.end)
        if not inside.any():
            since = "" if clock.unix_start is not None else " after the trace start"
            when = (
                f"its jobs are submitted from {clock.show(float(submit.min()))} to "
                f"{clock.show(float(submit.max()))}{since}" if len(submit) else "the trace has no jobs"
            )
            raise O2KSimError(
                f"no job of the trace is submitted in [{clock.as_written(bounds[0], start)}, "
                f"{clock.as_written(bounds[1], end)}) ({when}){clock.zone_said}"
            )
    return window, clock


def select_window(jobs: pd.DataFrame, win: Window) -> tuple[pd.DataFrame, np.ndarray]:
    """Jobs to simulate (submitted from ``start - warmup``) and the ids to analyse.

    ``jobs`` is a DataFrame or a :class:`~o2ksim.table.ColumnTable` (the
    result is of the same kind).
    """
    submit = column(jobs, "submit")
    simulated = submit >= win.start - win.warmup
    keep = jobs.take(simulated) if isinstance(jobs, ColumnTable) else jobs.loc[simulated]
    sub = submit[simulated]
    analysed = column(jobs, "job_id")[simulated][(sub >= win.start) & (sub < win.end)]
    if len(analysed) == 0:
        first = format_duration(submit.min()) if len(submit) else "0s"
        last = format_duration(submit.max()) if len(submit) else "0s"
        raise O2KSimError(
            f"no job is submitted in the window [{format_duration(win.start)}, "
            f"{format_duration(win.end)}) (jobs are submitted from {first} to {last} "
            "after the trace start)"
        )
    return keep, analysed


ESTIMATES_HELP = (
    "requested | actual | scenario-a[:K] (K percent, default 20) | scenario-b | "
    "user-recent[:N] (mean runtime of the user's N last ended jobs, default 2)"
)
USER_RECENT_DEFAULT = 2  # jobs averaged by ``user-recent`` (Tsafrir, Etsion & Feitelson 2007)

SCENARIO_B_SHORT = 600.0  # Scenario B: T <= 10 minutes ...
SCENARIO_B_FRACTION = 0.1  # ... and T <= 10% of R keep R (T§6.2.1)


def _scaled_runtimes(run: np.ndarray, percent: float) -> np.ndarray:
    """``(1 + K/100) * T`` rounded up to whole seconds.

    Computed as ``(100 + K) * T / 100`` and rounded to micro-seconds before the
    ceiling, so that an exact product such as 110% of 10 s gives 11 s, not 12 s
    (``1.1 * 10 == 11.000000000000002`` in binary floating point).
    """
    return np.ceil(np.round((100.0 + percent) * run / 100.0, 6))


@dataclass(frozen=True)
class Estimates:
    """A runtime-estimate scenario, parsed and checked (T§6.2.1, Table 15).

    ``kind``: ``requested`` (the trace's requested runtimes), ``actual``,
    ``scenario-a``, ``scenario-b`` or ``user-recent``; ``percent``: Scenario
    A's K (B uses 20), or the number of jobs ``user-recent`` averages;
    ``text``: the scenario as the user wrote it (lower case), for the records.
    Build it with :meth:`parse`; :func:`apply_estimates` applies it to a job table.
    """

    kind: str = "requested"
    percent: float = 0.0
    text: str = "requested"

    @classmethod
    def parse(cls, scenario: Estimates | str | None) -> Estimates:
        """The scenario named by ``scenario`` (``None`` and ``""`` mean ``requested``).

        Raises :class:`O2KSimError` naming what is wrong.
        """
        if isinstance(scenario, Estimates):
            return scenario
        if scenario is not None and not isinstance(scenario, str):
            raise O2KSimError(
                f"expected a runtime-estimate scenario name ({ESTIMATES_HELP}), got {scenario!r}"
            )
        if scenario in (None, "", "requested"):
            return cls()
        text = scenario.strip().lower()
        name, _, arg = text.partition(":")
        if name == "actual":
            if arg:
                raise O2KSimError("'actual' takes no argument")
            return cls(name, 0.0, text)
        if name in ("scenario-a", "scenario-b"):
            if name == "scenario-b" and arg:
                raise O2KSimError("'scenario-b' takes no argument (it uses k = 20%)")
            return cls(name, _parse_percent(arg, scenario) if arg else 20.0, text)
        if name == "user-recent":
            return cls(name, float(_parse_count(arg, scenario)) if arg else float(USER_RECENT_DEFAULT), text)
        if name == "requested" and not arg:
            return cls()
        raise O2KSimError(f"unknown runtime-estimate scenario '{scenario}' ({ESTIMATES_HELP})")

    @property
    def predicted(self) -> bool:
        """Whether the estimates come from a predictor and may be below the actual runtime
        (a job then overruns its estimate; the kill rule at the estimate would be wrong)."""
        return self.kind == "user-recent"

    @property
    def requested(self) -> bool:
        """Whether the trace's requested runtimes are kept (nothing to apply)."""
        return self.kind == "requested"

    def __str__(self) -> str:
        return self.text


SCENARIO_A_MAX = 30_000.0
"""The largest Scenario A percentage K: the thesis simulates 20, 50 and 100 and cites
estimates up to ``(1 + 30,000%) T`` in the literature ([FW98], T§6.2.1).  Far beyond it
every estimate is the requested runtime (``scenario-a:1e12`` was ``requested`` under
another name) and ``(100 + K) T`` overflows (``1e300``)."""


def _parse_percent(arg: str, scenario: str) -> float:
    text = arg.strip().rstrip("%").strip()
    try:
        k = float(text)
    except ValueError:
        raise O2KSimError(f"'{arg}' is not a percentage in '{scenario}'") from None
    if not 0 <= k <= SCENARIO_A_MAX:  # NaN too
        raise O2KSimError(
            f"the Scenario A percentage must be a number from 0 to {SCENARIO_A_MAX:,.0f} "
            f"(T§6.2.1 simulates 20, 50, 100), got '{arg}' in '{scenario}'"
        )
    return k


USER_RECENT_MAX = 10**9
"""The most jobs ``user-recent:N`` averages: more than any trace's jobs (a larger N would
average the same history), and a bound the history's ``deque`` can hold."""


def _parse_count(arg: str, scenario: str) -> int:
    text = arg.strip()
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= USER_RECENT_MAX:
        raise O2KSimError(
            f"'{arg}' is not a number of jobs from 1 to {USER_RECENT_MAX:,} in '{scenario}'"
        )
    return int(text)


def user_recent_runtimes(
    submit: np.ndarray,
    run: np.ndarray,
    wait: np.ndarray,
    user: np.ndarray,
    n: int = USER_RECENT_DEFAULT,
) -> np.ndarray:
    """Each job's predicted runtime: the mean actual runtime of its user's ``n`` last ended jobs.

    The predictor of Tsafrir, Etsion & Feitelson ("Backfilling using
    system-generated predictions rather than user runtime estimates", IEEE
    TPDS 2007), fitted on earlier jobs only: a job's history is the jobs of
    the same user that had *ended* by its submit time, in the trace's
    recorded history (end = submit + recorded wait + runtime, SWF fields 2-4;
    an unrecorded wait counts as 0), the most recently ended ones.  The
    recorded history, not the simulated one, so that the estimates are the
    same for every policy compared.  ``nan`` where there is no history (an
    unknown user, < 0, or no ended job yet).  Jobs with an unknown runtime
    (< 0) are no one's history.
    """
    count = len(submit)
    out = np.full(count, np.nan)
    ends = submit + np.where(wait >= 0, wait, 0.0) + run
    pending: dict[int, list[tuple[float, int]]] = {}
    recent: dict[int, deque[float]] = {}
    for i in np.argsort(submit, kind="stable").tolist():
        u = int(user[i])
        if u < 0:
            continue
        heap = pending.setdefault(u, [])
        done = recent.setdefault(u, deque(maxlen=n))
        while heap and heap[0][0] <= submit[i]:
            done.append(float(run[heapq.heappop(heap)[1]]))  # in order of their ends
        if done:
            out[i] = sum(done) / len(done)
        if run[i] >= 0:
            heapq.heappush(heap, (float(ends[i]), i))
    return out


def apply_estimates(jobs: pd.DataFrame, scenario: Estimates | str | None) -> pd.DataFrame:
    """Replace requested runtimes (field 9) by a runtime-estimate scenario (T§6.2.1, Table 15).

    With ``T`` the actual and ``R`` the requested runtime:

    * ``requested`` (or None): keep the trace's requested runtimes;
    * ``actual``: requested = actual runtime (perfect estimates);
    * ``scenario-a:K`` (K percent, default 20; ``scenario-a:20%`` also reads):
      ``min((1 + K/100) * T, R)`` for every job (R unknown: ``(1 + K/100) * T``);
    * ``scenario-b``: as ``scenario-a:20``, except that a job with
      ``T <= 10 min`` and ``T <= 10% of R`` — one that probably aborted early —
      keeps ``R``;
    * ``user-recent:N`` (default 2): the mean actual runtime of the user's
      ``N`` last jobs ended before the submit (:func:`user_recent_runtimes`),
      at least 1 s and never above ``R``; ``R`` without such history.  Unlike
      the others it may be *below* ``T``: the job then overruns its estimate
      and the scheduler predicts its end as *now* until it ends (SPEC §2), or
      first at start + ``R`` under the overrun rule ``requested``.

    Estimates are whole seconds, rounded up.  Jobs with unknown actual runtime
    keep their request.  ``req_time`` becomes the estimate the scheduler plans
    with (the job still runs ``T``), and a column ``requested_time`` keeps the
    trace's ``R`` beside it (``-1``: unknown) for the kill rule and the
    overrun rule (:attr:`o2ksim.jobs.JobSpec.requested_time`).  ``jobs`` is a
    DataFrame or a :class:`~o2ksim.table.ColumnTable`; the result is a new
    table of the same kind.
    """
    estimates = Estimates.parse(scenario)
    if estimates.requested:
        return jobs
    name, k = estimates.kind, estimates.percent
    run = column(jobs, "run_time", np.float64)
    req = column(jobs, "req_time", np.float64)
    known = req > 0
    if name == "actual":
        new = np.ceil(run)
    elif name == "user-recent":
        wait = column(jobs, "wait", np.float64) if "wait" in jobs.columns else np.zeros(len(run))
        users = column(jobs, "user", np.int64)
        pred = np.maximum(np.ceil(np.round(user_recent_runtimes(
            column(jobs, "submit", np.float64), run, wait, users, int(k)), 6)), 1.0)
        new = np.where(np.isnan(pred), req, np.where(known, np.minimum(pred, req), pred))
    else:
        scaled = _scaled_runtimes(run, k)
        new = np.where(known, np.minimum(scaled, req), scaled)
        if name == "scenario-b":
            aborted = known & (run <= SCENARIO_B_SHORT) & (run <= SCENARIO_B_FRACTION * req)
            new = np.where(aborted, req, new)
    valid = (run >= 0) | (name == "user-recent")  # a prediction needs no T of its own
    estimated = np.where(valid, new, req).astype(np.int64)
    requested = np.where(known, req, -1.0)
    if isinstance(jobs, ColumnTable):
        return jobs.with_column("req_time", estimated).with_column("requested_time", requested)
    out = jobs.copy()
    out["req_time"] = estimated
    out["requested_time"] = requested
    return out


__all__ = [
    "DEFAULT_WARMUP",
    "ESTIMATES_HELP",
    "SCENARIO_A_MAX",
    "Estimates",
    "Window",
    "apply_estimates",
    "as_window",
    "format_duration",
    "parse_duration",
    "parse_time",
    "read_bounds",
    "read_window",
    "select_window",
    "user_recent_runtimes",
]
