"""Sweeps: run every run of a scenario, in parallel, resumably, locally or on Dask.

How the pieces fit:

* :func:`run_sweep` plans the scenario's runs, skips those already finished
  in the results directory (:mod:`o2ksim.experiments.store`, which also
  describes its layout), and hands the others to this process, a local
  process pool or a Dask cluster (:mod:`o2ksim.experiments.workers`).
* :func:`~o2ksim.experiments.workers.execute_run` is the only thing that
  runs in a worker: it simulates one
  :class:`~o2ksim.experiments.scenario.RunSpec` and *returns* the outcome,
  catching any error into it, so one failing run never stops the others.
* The coordinating process stores each outcome as soon as it arrives
  (:func:`~o2ksim.experiments.store.store_outcome`): it writes the workspace
  into a temporary directory and renames it into place, so a run directory
  with a ``summary.json`` is always complete.  A sweep killed at any moment
  therefore leaves only finished runs behind, and the next :func:`run_sweep`
  on the same directory skips them.
* A run's results depend only on its configuration (every random draw comes
  from its seed), so the same sweep gives identical results in one process,
  in a process pool or on a Dask cluster.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from o2ksim.availability import unused_periods_note
from o2ksim.errors import (
    ConfigError,
    O2KSimError,
    PerfectEstimatesWarning,
    UnusedAvailabilityWarning,
    UnusedSeedWarning,
)
from o2ksim.experiments.scenario import RunSpec, Scenario, load_scenario
from o2ksim.experiments.store import (
    adopt_renamed,
    clean_partial,
    earlier_scenario,
    is_finished,
    runs_outside,
    store_outcome,
    summary_table,
    write_plan,
    write_table,
)
from o2ksim.experiments.sweep_lock import results_lock
from o2ksim.experiments.workers import RunOutcome, execute_run, run_dask, run_pool
from o2ksim.run.checks import perfect_estimates_note
from o2ksim.run.config import WorkloadRecipe
from o2ksim.units import is_date
from o2ksim.validation import check_flags, check_path, shown
from o2ksim.workloads.transforms import select_window


@dataclass
class SweepResult:
    """What :func:`run_sweep` did: which runs ran, were skipped or failed, and the table."""

    out_dir: Path
    runs: list[RunSpec]
    ran: list[str]
    skipped: list[str]
    failed: list[str]
    table: pd.DataFrame
    wall_seconds: float
    unused_seeds: str = ""
    """The note that the scenario's seeds changed nothing in the runs of some policies
    (:func:`unused_seeds_note`), ``""`` when they did or no seed was given."""
    unused_availability: list[str] = field(default_factory=list)
    """The notes that periods of the scenario's availability started after the last event of
    some of its runs, so they changed nothing there (:func:`unused_availability_notes`): one
    per set of periods late, not one per run."""

    @property
    def ok(self) -> bool:
        return not self.failed


# ------------------------------------------------------------------------------------ running
def run_sweep(
    scenario: Scenario,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    progress: bool | None = None,
    retry_failed: bool = True,
    log: Callable[[str], None] | None = None,
) -> SweepResult:
    """Run every run of ``scenario`` (a :class:`Scenario`, or a scenario file or shipped
    scenario's name, read with :func:`load_scenario`) that has not finished yet; store each
    as it finishes.

    ``workers``: local worker processes (default: the number of CPUs, at most
    the number of runs; 1 runs everything in this process).  ``scheduler``: the
    address of a Dask scheduler (``tcp://host:8786``); ``client``: an existing
    ``distributed.Client`` (either replaces the local pool).  Runs that failed
    before are tried again unless ``retry_failed`` is false.  Returns what ran,
    what was skipped and the summary table (also written as
    ``summary.parquet``/``summary.csv``).
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise O2KSimError(f"workers: must be a whole number >= 1 (or None: one per CPU), got {workers!r}")
    if isinstance(scenario, str | os.PathLike):  # a scenario file or a shipped one's name
        scenario = load_scenario(scenario)
    if not isinstance(scenario, Scenario):
        raise O2KSimError(
            f"run_sweep: expected a Scenario (load_scenario(path)) or a scenario file, got "
            f"{shown(scenario)}"
        )
    if out_dir is not None:
        check_path(out_dir, "run_sweep", "out_dir")
    check_flags("run_sweep", retry_failed=retry_failed)
    if progress is not None:
        check_flags("run_sweep", progress=progress)
    if log is not None and not callable(log):
        raise O2KSimError(f"run_sweep: log must be a function of one line of text, got {shown(log)}")
    out = Path(out_dir) if out_dir is not None else scenario.default_out_dir()
    check_windows(scenario)  # before the results directory exists: exit 2, nothing written
    for note in perfect_estimates_notes(scenario):  # once per trace, not once per run
        warnings.warn(note, PerfectEstimatesWarning, stacklevel=2)
    with results_lock(out):
        res = _sweep(scenario, out, workers, scheduler, client, progress, retry_failed, log)
    if res.unused_seeds:  # once per scenario, not once per run
        warnings.warn(res.unused_seeds, UnusedSeedWarning, stacklevel=2)
    for note in res.unused_availability:  # once per set of periods late, not once per run
        warnings.warn(note, UnusedAvailabilityWarning, stacklevel=2)
    return res


def unused_availability_notes(
    scenario: Scenario, runs: list[RunSpec], outcomes: dict[str, RunOutcome]
) -> list[str]:
    """One line for each set of availability periods that started at or after the last event
    of some runs of this sweep (``outcomes``: run id to its outcome): they changed nothing in
    those runs (:func:`~o2ksim.availability.unused_periods_note`, as ``o2ksim run`` says it for
    one run).  A sweep of 20 runs with the same periods late says it once, counting the runs."""
    groups: dict[str, list[RunSpec]] = {}
    for run in runs:
        outcome = outcomes.get(run.run_id)
        if outcome is not None and outcome.late_periods:
            key = json.dumps(outcome.late_periods)  # the scenario's one set of periods (not a factor)
            groups.setdefault(key, []).append(run)
    notes = []
    where = f"{scenario.path or scenario.name}: protocol.availability"
    for group in groups.values():
        first = outcomes[group[0].run_id]
        ends = [float(outcomes[r.run_id].info.get("sim_end", 0.0)) for r in group]
        ids = ", ".join(r.run_id for r in group[:3]) + (", ..." if len(group) > 3 else "")
        which = (f"all {len(runs)} runs" if len(group) == len(runs)
                 else f"{len(group)} of the {len(runs)} runs ({ids})")  # fmt: skip
        outages = scenario.run_config(group[0]).availability
        runs_said = "" if len(runs) == 1 else which
        notes.append(unused_periods_note(outages, max(ends), first.unix_start, where, runs=runs_said))
    return [n for n in notes if n]


def unused_seeds_note(scenario: Scenario, runs: list[RunSpec], draws: dict[str, bool | None]) -> str:
    """One line naming the policies whose runs never drew from their random generator,
    although the scenario gives seeds (``protocol.seeds`` other than the default ``[0]``)
    and reads its workload rather than generating it from them: for those policies every
    seed gives the same schedule.  ``draws``: run id to
    :attr:`RunOutcome.random_draws <o2ksim.experiments.workers.RunOutcome.random_draws>`
    of the runs this sweep ran (those finished before are not known)."""
    if scenario.seeds == (0,):
        return ""
    seen: dict[str, list[bool | None]] = {}
    for run in runs:
        if run.run_id in draws and not run.config["workload"].get("model"):
            seen.setdefault(str(run.factors["policy"]), []).append(draws[run.run_id])
    quiet = [policy for policy, drew in seen.items() if drew and all(d is False for d in drew)]
    if not quiet:
        return ""
    return (
        f"{scenario.path or scenario.name}: protocol.seeds {', '.join(map(str, scenario.seeds))} "
        f"changed nothing in the runs of {', '.join(quiet)}: neither the workload (read, not "
        "generated) nor the policy drew from the run's random generator, so every seed gives the same "
        "schedule"
    )


def check_windows(scenario: Scenario) -> None:
    """Each analysis window of a trace workload read against its trace, before anything runs.

    A window of dates is read against the trace header (its UnixStartTime and
    time zone), so only here can a reversed or empty one, or one that holds no
    job of the trace, be seen; it used to pass ``scenario check``, create the
    results directory, store a failed run and exit 1 (issue 27).  The trace is
    parsed once (the cache the runs of this process share).  Generated
    workloads are not built here: their window lies inside the span by design.
    """
    seen: set[str] = set()
    for run in scenario.plan():
        workload, bounds = run.config["workload"], run.config["protocol"].get("window")
        if not bounds or not workload.get("trace"):
            continue
        key = repr((sorted(workload.items(), key=str), bounds))
        if key in seen:
            continue
        seen.add(key)
        try:
            WorkloadRecipe.of_trace(str(workload["trace"]), lenient=bool(workload.get("lenient"))).build()
        except O2KSimError:
            continue  # a trace that cannot be read: its runs fail and record why
        try:
            config = scenario.run_config(run)  # reads a window of dates against the header
            if config.window is not None:
                procs = config.machine.total_procs if config.machine is not None else None
                select_window(config.workload.build(procs).table, config.window)
        except O2KSimError as exc:
            text = str(exc)
            if text.startswith(f"{scenario.path}:"):  # already names the file and the field
                raise
            dated = any(is_date(t) for t in bounds)  # the message quotes the dates and their zone
            raise ConfigError(
                scenario.path or "<scenario>",
                text if dated else f"{' .. '.join(map(str, bounds))}: {text}",
                field="protocol.window",
            ) from None


def perfect_estimates_notes(scenario: Scenario) -> list[str]:
    """One warning per trace of ``scenario`` whose runs plan jobs without a requested runtime
    with their actual runtimes (estimates ``requested``, the default); see
    :func:`o2ksim.run.checks.perfect_estimates_note`.  The runs themselves stay silent."""
    notes: dict[str, str] = {}
    for run in scenario.plan():
        workload = run.config["workload"]
        trace = workload.get("trace")
        if not trace or workload.get("estimates") not in (None, "", "requested") or trace in notes:
            continue
        try:
            built = WorkloadRecipe.of_trace(str(trace), lenient=bool(workload.get("lenient"))).build()
        except O2KSimError:  # a trace that cannot be read: its runs fail and record why
            notes[trace] = ""
            continue
        notes[trace] = perfect_estimates_note(built.table, str(trace)) or ""
    return [n for n in notes.values() if n]


def _sweep(
    scenario: Scenario,
    out: Path,
    workers: int | None,
    scheduler: str | None,
    client: Any,
    progress: bool | None,
    retry_failed: bool,
    log: Callable[[str], None] | None,
) -> SweepResult:
    """:func:`run_sweep` with the results directory locked."""
    t0 = time.perf_counter()
    runs = scenario.plan()
    earlier_scenario(out, scenario)
    write_plan(out, scenario, runs)
    clean_partial(out)
    adopt_renamed(out, runs)
    outside = runs_outside(out, runs)
    done = [r for r in runs if is_finished(out, r, count_failed=not retry_failed)]
    done_ids = {r.run_id for r in done}
    todo = [r for r in runs if r.run_id not in done_ids]
    say = log or (lambda _msg: None)
    if progress is None:
        progress = sys.stderr.isatty()
    keep_segments = bool(scenario.outputs.get("segments", True))
    where = "Dask" if (scheduler or client is not None) else None
    if where is None:
        n_workers = workers or os.cpu_count() or 1
        n_workers = max(1, min(n_workers, len(todo)))
        where = "this process" if n_workers == 1 else f"{n_workers} local processes"
    else:
        n_workers = 0
    say(
        f"{scenario.name}: {len(runs)} run(s); {len(done)} already finished, "
        f"{len(todo)} to run" + (f" on {where}" if todo else "")
        + (f"; {len(outside)} stored run(s) of an earlier plan left out of the summary and "
           f"report ({', '.join(outside[:3])}{', ...' if len(outside) > 3 else ''} in "
           f"{out}/runs/)" if outside else "")
    )  # fmt: skip
    ran: list[str] = []
    failed: list[str] = []
    draws: dict[str, bool | None] = {}
    outcomes: dict[str, RunOutcome] = {}  # not kept: the tables are stored as each run ends
    if todo:
        bar = tqdm(
            total=len(todo),
            desc=scenario.name,
            unit="run",
            disable=not progress,
            leave=False,
            file=sys.stderr,
        )

        def finished(run: RunSpec, outcome: RunOutcome) -> None:
            store_outcome(out, run, outcome)
            ran.append(run.run_id)
            draws[run.run_id] = outcome.random_draws
            if outcome.late_periods:
                outcomes[run.run_id] = RunOutcome(run.run_id, outcome.status, {}, 0.0, info={
                    "sim_end": outcome.info.get("sim_end")}, late_periods=outcome.late_periods,
                    unix_start=outcome.unix_start)  # fmt: skip
            if outcome.status != "ok":
                failed.append(run.run_id)
                bar.set_postfix(failed=len(failed))
            bar.update(1)

        try:
            if scheduler or client is not None:
                run_dask(todo, finished, scheduler, client, keep_segments)
            elif n_workers == 1:
                for run in todo:
                    finished(
                        run, execute_run(run, keep_segments=keep_segments, scenario=scenario)
                    )
            else:
                run_pool(todo, finished, n_workers, keep_segments)
        finally:
            bar.close()
    table = summary_table(out, runs)
    write_table(out, table)
    return SweepResult(
        out,
        runs,
        ran,
        [r.run_id for r in done],
        failed,
        table,
        time.perf_counter() - t0,
        unused_seeds_note(scenario, runs, draws),
        unused_availability_notes(scenario, runs, outcomes),
    )


__all__ = ["SweepResult", "results_lock", "run_sweep"]
