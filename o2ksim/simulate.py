"""The Python API: ``simulate(...)`` runs one policy over one workload and returns DataFrames.

>>> from o2ksim import simulate
>>> result = simulate("traces/tiny.swf", machine=None, policy="fcfs-backfill")  # doctest: +SKIP
>>> result.summary["mean_wait"]  # doctest: +SKIP

It does what ``o2ksim run`` does: describe the run as one validated
:class:`~o2ksim.runconfig.RunConfig`, then (:func:`run_config`) load the
workload, apply the runtime-estimate scenario and the window, build the
policy, run the engine, and collect the per-job table (``result.jobs``), the
allocation segments and the overall measures.  ``result.save(dir)`` writes ``jobs.csv``,
``summary.json`` and ``run.json`` (the configuration and versions).
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from o2ksim import __version__, metrics
from o2ksim.engine.contract import PolicyProtocol
from o2ksim.engine.core import RunStats, Simulation
from o2ksim.engine.monitor import Observer, job_columns
from o2ksim.errors import O2KSimError, output_dir
from o2ksim.jobs import Job
from o2ksim.machine import MachineSpec, machine_from_header
from o2ksim.partitioning import JobColumns, allocation_arrays
from o2ksim.policies import Policy, make_policy
from o2ksim.policies.immediate import SummaryCounts
from o2ksim.runconfig import PolicyChoice, RunConfig, WorkloadRecipe
from o2ksim.table import ColumnTable, column, is_frame, write_csv
from o2ksim.validation import check_job_specs, check_jobs_frame
from o2ksim.workloads.convert import specs_from_frame
from o2ksim.workloads.transforms import Window, apply_estimates, select_window

if TYPE_CHECKING:  # pandas is imported when a DataFrame is asked for (Result.jobs, .segments)
    import pandas as pd


class Result:
    """What one run produced, with the configuration that produced it.

    ``jobs`` (one row per job) and ``segments`` (one row per allocation
    interval) are DataFrames, built from the run's numpy columns on first
    access and then kept; :attr:`job_table` and :attr:`segment_table` give
    the same tables without building them (what ``o2ksim run`` writes and
    summarises, so that a run never imports pandas unless asked to).
    """

    def __init__(
        self,
        jobs: pd.DataFrame | ColumnTable,
        summary: dict[str, Any],
        segments: pd.DataFrame | ColumnTable,
        stats: RunStats,
        machine: MachineSpec,
        policy: dict[str, Any],
        config: dict[str, Any] | None = None,
    ) -> None:
        self._jobs = jobs
        self.summary = summary
        self._segments = segments
        self.stats = stats
        self.machine = machine
        self.policy = policy
        self.config = {} if config is None else config

    @property
    def jobs(self) -> pd.DataFrame:
        """The per-job table (see :func:`result_table`), a DataFrame."""
        if isinstance(self._jobs, ColumnTable):
            self._jobs = self._jobs.to_frame()
        return self._jobs

    @jobs.setter
    def jobs(self, frame: pd.DataFrame) -> None:
        self._jobs = frame

    @property
    def segments(self) -> pd.DataFrame:
        """The allocation segments (see :meth:`~o2ksim.engine.monitor.Monitor.segments`), a DataFrame."""
        if isinstance(self._segments, ColumnTable):
            self._segments = self._segments.to_frame()
        return self._segments

    @segments.setter
    def segments(self, frame: pd.DataFrame) -> None:
        self._segments = frame

    @property
    def job_table(self) -> pd.DataFrame | ColumnTable:
        """:attr:`jobs` as it is held: the DataFrame once built, else its numpy columns."""
        return self._jobs

    @property
    def segment_table(self) -> pd.DataFrame | ColumnTable:
        """:attr:`segments` as they are held: the DataFrame once built, else numpy columns."""
        return self._segments

    def __repr__(self) -> str:
        from o2ksim.report.compare import result_text

        return result_text(self)

    def _repr_html_(self) -> str:
        from o2ksim.report.compare import result_html

        return result_html(self)

    def save(self, out_dir: str | os.PathLike[str], *, parquet: bool = False) -> Path:
        """Write ``jobs.csv`` (or ``.parquet``), ``summary.json`` and ``run.json`` into ``out_dir``."""
        out = output_dir(out_dir)
        try:
            self._write(out, parquet)
        except OSError as exc:
            raise O2KSimError(f"{out}: cannot write the results ({exc.strerror or exc})") from None
        return out

    def _write(self, out: Path, parquet: bool) -> None:
        if parquet:
            self.jobs.to_parquet(out / "jobs.parquet", index=False)
        else:
            write_csv(self._jobs, out / "jobs.csv")  # without pandas for a ColumnTable
        _write_json(out / "summary.json", self.summary)
        _write_json(
            out / "run.json",
            {
                "config": self.config,
                "policy": self.policy,
                "machine": self.machine.describe(),
                "stats": {
                    "passes": self.stats.passes,
                    "decisions": self.stats.decisions,
                    "wall_seconds": round(self.stats.wall_seconds, 3),
                    "simulated_until": self.stats.sim_end,
                    "stalled": self.stats.stalled,
                    **self.stats.extra,
                },
                "versions": versions(),
            },
        )


def versions() -> dict[str, str]:
    """Versions of o2ksim and the libraries a result depends on (pandas's from its
    installed metadata when the run has not imported it)."""
    import simpy

    return {
        "o2ksim": __version__,
        "python": platform.python_version(),
        "simpy": simpy.__version__ if hasattr(simpy, "__version__") else "?",
        "numpy": np.__version__,
        "pandas": _pandas_version(),
    }


def _pandas_version() -> str:
    pd = sys.modules.get("pandas")
    if pd is not None:
        return pd.__version__
    try:
        return importlib.metadata.version("pandas")
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _write_json(path: Path, data: Any) -> None:
    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, np.generic):
            return clean(v.item())
        return v

    path.write_text(json.dumps(clean(data), indent=2) + "\n")


def load_workload(source: Any, *, lenient: bool = False, strict_order: bool = False) -> Any:
    """A :class:`~o2ksim.workloads.swf.Trace` from a path (SWF, plain or gzip) or a Trace."""
    from o2ksim.workloads.swf import Trace, read_swf

    if isinstance(source, Trace):
        return source
    if isinstance(source, str | os.PathLike):
        return read_swf(source, lenient=lenient, strict_order=strict_order)
    raise O2KSimError(f"cannot use {type(source).__name__} as a workload")


def simulate(
    workload: Any,
    machine: MachineSpec | str | os.PathLike[str] | None = None,
    policy: PolicyProtocol | str = "fcfs-backfill",
    *,
    policy_params: dict[str, Any] | None = None,
    window: Window | Sequence[float | str] | None = None,
    estimates: str | None = None,
    interval: float | str | None = None,
    kill_overrun: bool | None = None,
    overrun_grace: float | str | None = None,
    seed: int = 0,
    progress: bool = False,
    explain: bool = False,
    observers: Sequence[Observer] = (),
) -> Result:
    """Run ``policy`` over ``workload`` on ``machine`` and measure it.

    ``workload``: an SWF path, a :class:`~o2ksim.workloads.swf.Trace`, a frame
    with the SWF columns, or a list of :class:`~o2ksim.jobs.JobSpec`.
    ``machine``: a :class:`MachineSpec`, a name in ``hosts/`` or a TOML path;
    ``None`` derives one host from the trace header (``MaxProcs``).
    ``policy``: a preset or kind name, or a policy object (anything following
    :class:`~o2ksim.engine.contract.PolicyProtocol`, used as is).
    ``window``: analyse only jobs submitted in the window (with warm-up); the
    run continues until each of them has finished.  A :class:`Window` or
    ``(start, end[, warmup])``; times and durations are seconds or what the CLI
    takes (``("14d", "28d")``); the warm-up defaults to 7 days, as on the CLI.
    ``interval``/``overrun_grace``: seconds or a duration (``"5m"``).
    ``estimates``: runtime-estimate scenario (see
    :func:`~o2ksim.workloads.transforms.apply_estimates`).
    ``interval``, ``kill_overrun``, ``overrun_grace``: the run settings
    (:class:`~o2ksim.engine.contract.RunSettings`); the last two default to the
    machine file's ``[options]``.

    The arguments become one validated :class:`~o2ksim.runconfig.RunConfig`
    (:meth:`~o2ksim.runconfig.RunConfig.create`), run by :func:`run_config`.
    """
    config = RunConfig.create(
        workload,
        machine,
        policy,
        policy_params=policy_params,
        window=window,
        estimates=estimates,
        interval=interval,
        kill_overrun=kill_overrun,
        overrun_grace=overrun_grace,
        seed=seed,
        explain=explain,
        progress=progress,
    )
    return run_config(config, observers=observers)


def run_config(config: RunConfig, *, observers: Sequence[Observer] = ()) -> Result:
    """Run one validated :class:`~o2ksim.runconfig.RunConfig` and measure it.

    Every way into the engine ends here (the API, ``o2ksim run``, scenarios
    and sweep workers).  A :class:`~o2ksim.runconfig.WorkloadRecipe` is built
    first (cached per process); a generated workload with a window gets
    arrivals after the window until every analysed job has started (the
    cool-down of T§3.4).
    """
    recipe = config.workload
    if not isinstance(recipe, WorkloadRecipe):
        return _run(config, config.workload, observers)
    from o2ksim.scenario import workload_label

    procs = config.machine.total_procs if config.machine is not None else None
    trace = recipe.build(procs)
    window = config.window
    if window is not None and recipe.model:
        from o2ksim.workloads.cooldown import cooldown_chunk, run_with_cooldown

        chunk = cooldown_chunk(window)
        result = run_with_cooldown(
            lambda tr: _run(config, tr, observers),
            trace,
            lambda _tr, k: WorkloadRecipe(
                {**recipe.spec, "cooldown_chunks": k, "cooldown_chunk": chunk}
            ).build(procs),
            chunk_length=chunk,
        )
    else:
        result = _run(config, trace, observers)
    est = config.estimates
    result.config["workload"] = workload_label(
        {**recipe.spec, "estimates": None if est.requested else est.text}
    )
    if isinstance(config.policy, PolicyChoice) and config.policy.label is not None:
        result.config["label"] = config.policy.label
    return result


def _run(cfg: RunConfig, workload: Any, observers: Sequence[Observer]) -> Result:
    """One simulation of ``cfg`` over ``workload`` (a Trace, a frame or JobSpecs).

    A trace's jobs are read as numpy columns (:attr:`Trace.table
    <o2ksim.workloads.swf.Trace.table>`) and the result is kept as columns:
    nothing here builds a DataFrame that the caller did not give.
    """
    window, estimates, seed = cfg.window, cfg.estimates, cfg.seed
    header = None
    source = None
    if isinstance(workload, tuple):
        frame = None
        specs = list(workload)
    else:
        if is_frame(workload):
            frame = workload
        else:
            frame, header, source = workload.table, workload.header, workload.source
        specs = None
    if frame is not None and len(frame) == 0:
        raise O2KSimError(f"{source or 'the workload'}: no jobs to simulate")
    if frame is not None:
        check_jobs_frame(frame, source)
    else:
        check_job_specs(specs)

    mach = cfg.machine
    if mach is None:
        if header is None:
            raise O2KSimError(
                "no machine given and the workload has no SWF header to derive one from"
            )
        mach = machine_from_header(header, source)

    analysed: np.ndarray | None = None
    if frame is not None:
        frame = apply_estimates(frame, estimates)
        if window is not None:
            frame, analysed = select_window(frame, window)
        specs = specs_from_frame(frame)

    pol: PolicyProtocol = (
        make_policy(cfg.policy.name, **cfg.policy.params)
        if isinstance(cfg.policy, PolicyChoice)
        else cfg.policy
    )
    settings = cfg.settings
    progress = cfg.progress

    obs = list(observers)
    if progress:
        from o2ksim.progress import ProgressBar

        obs.append(ProgressBar(len(analysed) if analysed is not None else len(specs)))
    sim = Simulation(
        mach,
        specs,
        pol,
        settings=settings,
        watch=None if analysed is None else analysed.tolist(),
        observers=obs,
        rng=np.random.default_rng(seed),
    )
    stats = sim.run()
    for o in obs:
        o.close()
    segments = sim.monitor.segment_table(release=True)
    jobs = result_columns(list(sim.jobs.values()), segments, analysed)
    if isinstance(pol, JobColumns):  # e.g. EQspatial's catch-up credit
        for col, values in pol.job_columns().items():
            jobs = jobs.with_column(col, _mapped(jobs["job_id"], values))
    span = None
    if window is not None:
        span = (window.start, window.end)
    summ = metrics.summary(jobs, segments, mach.total_procs, span)
    resizes = jobs["resizes"][jobs["analysed"]] if "analysed" in jobs else jobs["resizes"]
    summ["resizes"] = int(resizes.sum())
    if window is not None and frame is not None:  # the protocol's cool-down (T§3.4)
        # (imports every workload model)
        from o2ksim.workloads.cooldown import cooldown_measures

        last_submit = float(column(frame, "submit").max())
        summ.update(cooldown_measures(jobs, window.end, last_submit, stats.sim_end))
    if isinstance(pol, SummaryCounts):  # immediate service: trials among the analysed jobs
        summ.update(pol.summary_counts(None if analysed is None else set(analysed.tolist())))
    summ["sim_seconds"] = round(stats.wall_seconds, 3)
    config = {
        "workload": str(source) if source else ("frame" if frame is not None else "jobs"),
        "machine": mach.source or mach.name,
        "policy": pol.name,
        "estimates": str(estimates),
        "window": None if window is None else [window.start, window.end, window.warmup],
        "interval": settings.interval,
        "kill_overrun": settings.kill_overrun,
        "overrun_grace": settings.overrun_grace,
        "seed": seed,
    }
    return Result(jobs, summ, segments, stats, mach, describe_policy(pol), config)


def _mapped(job_ids: np.ndarray, values: dict[int, Any]) -> np.ndarray:
    """``values[id]`` for each job id, 0.0 where missing or NaN: what pandas'
    ``Series(job_ids).map(values).fillna(0.0)`` gives, dtype included (int64
    when every id has an integer value, else float64)."""
    found = [values.get(i, math.nan) for i in job_ids.tolist()]
    out = np.array(found) if found else np.zeros(0)
    if out.dtype.kind == "f":
        out[np.isnan(out)] = 0.0
    elif out.dtype.kind not in "iub":
        raise TypeError(f"per-job column values must be numbers, got {out.dtype}")
    return out


def result_table(
    jobs: list[Job], segments: pd.DataFrame | ColumnTable, analysed: np.ndarray | None = None
) -> pd.DataFrame:
    """The run's per-job table: the monitor's columns, ``analysed`` (with a window),
    ``proc_seconds`` and ``mean_procs``; one row per job, by submit time then id.

    Built from whole numpy columns (:func:`result_columns`) and turned into a DataFrame once.
    """
    return result_columns(jobs, segments, analysed).to_frame()


def result_columns(
    jobs: list[Job], segments: pd.DataFrame | ColumnTable, analysed: np.ndarray | None = None
) -> ColumnTable:
    """The columns of :func:`result_table`, without pandas."""
    columns = job_columns(jobs)
    order = np.lexsort((columns["job_id"], columns["submit"]))
    for name, values in columns.items():  # one column at a time: one extra copy at most
        columns[name] = values[order]
    if analysed is not None:
        columns["analysed"] = np.isin(columns["job_id"], analysed)
    columns["proc_seconds"], columns["mean_procs"] = allocation_arrays(
        columns["job_id"],
        columns["start"],
        columns["end"],
        columns["procs"],
        columns["status"] == "completed",
        segments,
    )
    return ColumnTable(columns, len(jobs))


def describe_policy(policy: PolicyProtocol) -> dict[str, Any]:
    """The policy's configuration for ``run.json``: ``describe()`` of a :class:`Policy`, else its name."""
    if isinstance(policy, Policy):
        return policy.describe()
    return {"name": policy.name}
