"""Where a sweep's runs execute: one run in a worker, a local process pool, a Dask cluster.

:func:`execute_run` is the only thing that runs in a worker (a local
process, or a Dask worker): it simulates one
:class:`~o2ksim.experiments.scenario.RunSpec` and *returns* a
:class:`RunOutcome`, catching any error into it, so one failing run never
stops the others.  :func:`run_pool` and :func:`run_dask` hand the runs out
and call back as each finishes; the coordinating process stores the
outcomes (:mod:`o2ksim.experiments.store`).  The user's own priorities and
policy kinds, registered in the coordinating process (a notebook, a
script), travel to every worker by value (:func:`pack_registrations`).
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import pickle
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext
from typing import Any, cast

import cloudpickle
import pandas as pd

from o2ksim.availability import late_periods
from o2ksim.errors import O2KSimError, PerfectEstimatesWarning
from o2ksim.experiments.scenario import RunSpec, Scenario
from o2ksim.policies import POLICIES
from o2ksim.policies.priority import PRIORITIES
from o2ksim.run.api import run_config
from o2ksim.run.config import RunConfig
from o2ksim.run.results import Result

METRICS = (
    "jobs", "completed", "killed", "rejected", "unfinished", "mean_wait", "p95_wait",
    "max_wait", "mean_slowdown", "mean_bounded_slowdown", "max_bounded_slowdown",
    "total_excessive_wait_50h", "utilisation",
)  # fmt: skip
"""Measures kept in the summary table (seconds for waits; see :func:`o2ksim.metrics.summary`)."""
COUNTS = ("jobs", "completed", "killed", "rejected", "unfinished")


@dataclass
class RunOutcome:
    """What a worker hands back for one run (picklable, so it can cross processes)."""

    run_id: str
    status: str
    summary: dict[str, Any]
    wall_seconds: float
    jobs: pd.DataFrame | None = None
    segments: pd.DataFrame | None = None
    error: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    #: whether the run drew from its random generator (:attr:`Result.random_draws
    #: <o2ksim.run.results.Result.random_draws>`); not stored, said once per sweep
    random_draws: bool | None = None
    #: the indices of the run's availability periods that start at or after its last event
    #: (:func:`o2ksim.availability.late_periods`), and the trace's UnixStartTime; not stored,
    #: said once per sweep for each set of periods late
    late_periods: tuple[int, ...] = ()
    unix_start: int | None = None


def execute_run(
    run: RunSpec,
    *,
    keep_segments: bool = True,
    registrations: bytes | None = None,
    scenario: Scenario | None = None,
) -> RunOutcome:
    """Simulate one run and return its outcome; an error becomes a ``failed`` outcome.

    The run's JSON configuration becomes a validated
    :class:`~o2ksim.run.config.RunConfig`; with ``scenario`` (in the
    coordinating process) it gets the machine the scenario already parsed.
    ``registrations``: the user's own priorities and policy kinds, packed by
    :func:`pack_registrations` in the coordinating process
    (a Dask worker gets them with every run; a local worker at start-up).
    """
    t0 = time.perf_counter()
    try:
        if registrations:
            install_registrations(registrations)
        config = (
            scenario.run_config(run) if scenario is not None else RunConfig.from_dict(run.config)
        )
        with warnings.catch_warnings():  # the sweep said it once per trace, up front
            warnings.simplefilter("ignore", PerfectEstimatesWarning)
            result = run_config(config)
    except Exception as exc:
        if isinstance(exc, O2KSimError):
            error = f"{type(exc).__name__}: {exc}\n"
        else:
            error = traceback.format_exc()
        return RunOutcome(run.run_id, "failed", {}, time.perf_counter() - t0, error=error)
    outcome = outcome_of(run.run_id, result, time.perf_counter() - t0, keep_segments=keep_segments)
    outcome.late_periods = late_periods(config.availability, result.stats.sim_end)
    outcome.unix_start = result.unix_start
    return outcome


def outcome_of(
    run_id: str, result: Result, wall_seconds: float, *, keep_segments: bool = True
) -> RunOutcome:
    """The stored form of a finished :class:`~o2ksim.run.results.Result`."""
    summary = {k: result.summary.get(k, math.nan) for k in METRICS}
    # policy counters (immediate service) and the protocol's cool-down, for the report
    summary.update((k, v) for k, v in result.summary.items() if k not in summary and k != "sim_seconds")
    info = {
        "machine": result.machine.describe(),
        "total_procs": result.machine.total_procs,
        "hosts": {h.name: h.procs for h in result.machine.hosts},
        "policy": result.policy,
        "passes": result.stats.passes,
        "decisions": result.stats.decisions,
        "sim_end": result.stats.sim_end,
        "window": result.config.get("window"),
        "workload": result.config.get("workload"),
    }
    return RunOutcome(
        run_id,
        "ok",
        summary,
        wall_seconds,
        jobs=result.jobs,
        segments=result.segments if keep_segments else None,
        info=info,
        random_draws=result.random_draws,
    )


# ----------------------------------------------------------- the user's registrations
def user_registrations() -> dict[str, dict[str, Any]]:
    """Priorities and policy kinds registered in this process from outside o2ksim.

    Built-ins and o2ksim's own policy modules are left out: every worker has
    them already.
    """
    return {"priorities": PRIORITIES.user_entries(), "policies": POLICIES.user_entries()}


def pack_registrations() -> bytes | None:
    """:func:`user_registrations` pickled by value (cloudpickle), or ``None`` when there are none.

    cloudpickle pickles functions and classes defined in ``__main__`` (a
    script or a notebook) by value, so a worker needs neither the script nor
    the notebook to rebuild them.
    """
    regs = user_registrations()
    if not regs["priorities"] and not regs["policies"]:
        return None
    return cloudpickle.dumps(regs)


def install_registrations(blob: bytes | None) -> None:
    """Register in this (worker) process what :func:`pack_registrations` packed."""
    if not blob:
        return
    regs = pickle.loads(blob)
    PRIORITIES.update(regs.get("priorities", {}))
    for cls in regs.get("policies", {}).values():
        POLICIES.register(cls)


# ------------------------------------------------------------------------ pools
@contextlib.contextmanager
def _without_main_module() -> Iterator[None]:
    """Start worker processes that do not re-run the caller's script.

    ``multiprocessing`` (spawn, forkserver) normally imports the parent's
    ``__main__`` file in every worker so that functions defined there can be
    unpickled.  A script calling :func:`run_sweep` at its top level, without
    an ``if __name__ == "__main__":`` guard, then starts a sweep inside every
    worker, and every run fails.  The workers need nothing from the script:
    runs are plain configurations and the user's registered priorities and
    policies travel by value (:func:`pack_registrations`).  So
    while workers start, ``__main__`` is made to look like an interactive
    session (no file, no module spec), which ``multiprocessing`` leaves alone.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    missing = object()
    saved = {a: getattr(main, a, missing) for a in ("__file__", "__spec__")}
    try:
        if saved["__file__"] is not missing:
            del main.__file__
        main.__spec__ = None
        yield
    finally:
        for attr, value in saved.items():
            if value is missing:
                if hasattr(main, attr) and attr != "__spec__":
                    delattr(main, attr)
            else:
                setattr(main, attr, value)


def _init_worker(registrations: bytes | None, coordinator: int) -> None:
    """Worker start-up: end with the coordinator; register the user's priorities and policy kinds."""
    watch_coordinator(coordinator)
    install_registrations(registrations)


def run_pool(
    todo: Sequence[RunSpec],
    finished: Callable[[RunSpec, RunOutcome], None],
    n_workers: int,
    keep_segments: bool,
) -> None:
    """Run ``todo`` in ``n_workers`` local processes; ``finished(run, outcome)`` as each ends."""
    # forkserver: workers are forked from a clean server process, never from a
    # parent that may hold threads (a Dask client, a GUI) -- and start fast.
    ctx = _TrackedContext(multiprocessing.get_context("forkserver"))
    pool = ProcessPoolExecutor(
        max_workers=n_workers,
        mp_context=cast(BaseContext, ctx),  # a BaseContext in all but its class
        initializer=_init_worker,
        initargs=(pack_registrations(), os.getpid()),
    )
    try:
        with _without_main_module():  # workers start while the runs are submitted
            pending = {
                pool.submit(execute_run, run, keep_segments=keep_segments): run for run in todo
            }
        while pending:
            ready, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in ready:
                run = pending.pop(fut)
                try:
                    outcome = fut.result()
                except BrokenProcessPool as exc:
                    outcome = RunOutcome(
                        run.run_id, "failed", {}, math.nan, error=f"worker process died: {exc}\n"
                    )
                finished(run, outcome)
    except BaseException:  # an interrupt, a full disk: the sweep stops now
        stop_pool(pool, ctx.started)
        raise
    pool.shutdown(wait=True)


class _TrackedContext:
    """A multiprocessing context that keeps the worker processes it starts.

    ``ProcessPoolExecutor`` has no public way to end its workers (``terminate_workers``
    came in Python 3.14); a pool made with this context gives them to :func:`stop_pool`.
    Everything else is the wrapped context's.
    """

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self.started: list[Any] = []

    def Process(self, *args: Any, **kwargs: Any) -> Any:  # named as the context names it
        """The wrapped context's process (picklable, as the forkserver needs), kept."""
        proc = self._ctx.Process(*args, **kwargs)
        self.started.append(proc)
        return proc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


def stop_pool(pool: ProcessPoolExecutor, workers: Sequence[Any]) -> None:
    """Stop a sweep's pool without waiting for the runs under way: their outcomes would not be
    stored, and an interrupted sweep (SIGTERM to the coordinator alone) would otherwise wait
    for them before it ends.  The workers are terminated; the queued runs are cancelled."""
    for proc in workers:
        with contextlib.suppress(Exception):  # already gone
            proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def watch_coordinator(pid: int, period: float = 0.5) -> None:
    """Make this worker process end when the coordinating process ``pid`` is gone.

    A worker forked by the forkserver is not the coordinator's child, and it
    keeps the pool's pipes open, so a coordinator killed with SIGKILL would
    leave it (and through it the forkserver and the resource tracker) running
    for ever.  A daemon thread looks every ``period`` seconds and ends the
    process once the coordinator has gone; the forkserver and the resource
    tracker then see their pipes close and end too.
    """
    def alive() -> bool:
        if os.getppid() == pid:
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # a process of another user reuses the id
            return False
        try:  # a zombie (killed, not yet reaped) is gone too
            with open(f"/proc/{pid}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
        except OSError:
            return True

    def watch() -> None:
        while alive():
            time.sleep(period)
        os._exit(1)

    threading.Thread(target=watch, name="o2ksim-watch-coordinator", daemon=True).start()


def run_dask(
    todo: Sequence[RunSpec],
    finished: Callable[[RunSpec, RunOutcome], None],
    scheduler: str | None,
    client: Any,
    keep_segments: bool,
) -> None:
    """Run ``todo`` on a Dask cluster (``scheduler``'s address or ``client``); ``finished`` as each ends."""
    try:  # Dask is optional: imported only when a sweep asks for it
        from distributed import Client, as_completed
    except ImportError:
        raise O2KSimError("--scheduler needs Dask: pip install 'dask[distributed]'") from None
    own = client is None
    if own:
        try:
            client = Client(scheduler, set_as_default=False, timeout="20s")
        except (OSError, ValueError, TypeError) as exc:
            raise O2KSimError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        registrations = pack_registrations()
        tag = uuid.uuid4().hex[:6]
        futures = {}
        for run in todo:
            fut = client.submit(
                execute_run,
                run,
                keep_segments=keep_segments,
                registrations=registrations,
                key=f"o2ksim-{run.run_id}-{tag}",
                pure=False,
            )
            futures[fut.key] = (fut, run)
        try:
            for fut in as_completed([f for f, _ in futures.values()], loop=client.loop):
                run = futures[fut.key][1]
                try:
                    outcome = fut.result()
                except Exception as exc:  # the worker died or the task was lost
                    outcome = RunOutcome(
                        run.run_id,
                        "failed",
                        {},
                        math.nan,
                        error=f"Dask task failed: {type(exc).__name__}: {exc}\n",
                    )
                finished(run, outcome)
                fut.release()
        except BaseException:
            client.cancel([f for f, _ in futures.values()])
            raise
    finally:
        if own:
            client.close()


__all__ = [
    "COUNTS",
    "METRICS",
    "RunOutcome",
    "execute_run",
    "install_registrations",
    "outcome_of",
    "pack_registrations",
    "run_dask",
    "run_pool",
    "user_registrations",
    "watch_coordinator",
]
