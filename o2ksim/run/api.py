"""The Python API: ``simulate(...)`` runs one policy over one workload and returns DataFrames.

>>> from o2ksim import simulate
>>> result = simulate("traces/tiny.swf", machine=None, policy="fcfs-backfill")  # doctest: +SKIP
>>> result.summary["mean_wait"]  # doctest: +SKIP

It does what ``o2ksim run`` does: describe the run as one validated
:class:`~o2ksim.run.config.RunConfig`, then (:func:`run_config`) load the
workload, apply the runtime-estimate scenario and the window, build the
policy, run the engine, and collect the per-job table (``result.jobs``), the
allocation segments and the overall measures.  ``result.save(dir)`` writes ``jobs.csv``,
``summary.json`` and ``run.json`` (the configuration and versions).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from o2ksim import metrics
from o2ksim.availability import unused_periods_note
from o2ksim.engine.contract import PolicyProtocol
from o2ksim.engine.core import Simulation
from o2ksim.engine.monitor import Observer
from o2ksim.errors import (
    O2KSimError,
    RejectedJobsWarning,
    UnusedAvailabilityWarning,
    UnusedSeedWarning,
)
from o2ksim.jobs import JobSpec
from o2ksim.machine import MachineSpec, load_machine, machine_from_header
from o2ksim.partitioning import JobColumns
from o2ksim.policies import make_policy
from o2ksim.progress import ProgressBar
from o2ksim.run.checks import (
    PerfectEstimatesWarning,
    check_estimates_have_effect,
    check_grace_has_effect,
    check_overrun_has_effect,
    header_machine,
    perfect_estimates_note,
    rejected_line,
)
from o2ksim.run.config import PolicyChoice, RunConfig, WorkloadRecipe
from o2ksim.run.results import Result, describe_policy, result_columns
from o2ksim.run.workload import check_job_specs, check_jobs_frame, workload_label
from o2ksim.table import column, is_frame
from o2ksim.validation import shown
from o2ksim.workloads.convert import specs_from_frame
from o2ksim.workloads.cooldown import cooldown_chunk, cooldown_measures, run_with_cooldown
from o2ksim.workloads.transforms import Window, apply_estimates, select_window


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
    seed: int | None = None,
    progress: bool = False,
    explain: bool = False,
    observers: Sequence[Observer] = (),
    availability: Any = None,
    overrun: str | None = None,
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
    takes (``("14d", "28d")``, or dates of a trace with a UnixStartTime,
    ``("1997-08-01", "1997-09-01")``, read in its header's time zone as
    ``--window`` reads them); the warm-up defaults to 7 days, as on the CLI.
    ``interval``/``overrun_grace``: seconds or a duration (``"5m"``).
    ``seed``: the seed of the run's random generator (``None``: 0), which the
    policy may draw from (NCSA-LSF picks a host among equals); when one is
    given and the run never drew from it, an :class:`~o2ksim.errors.UnusedSeedWarning`
    says that the seed changed nothing.
    ``estimates``: runtime-estimate scenario (see
    :func:`~o2ksim.workloads.transforms.apply_estimates`).
    ``interval``, ``kill_overrun``, ``overrun_grace``: the run settings
    (:class:`~o2ksim.engine.contract.RunSettings`); the last two default to the
    machine file's ``[options]``; the kill rule stops a job at its requested
    runtime R + grace, whatever estimate the scheduler plans with.
    ``overrun``: what the scheduler predicts for a running job past its
    estimate -- ``"now"`` (default: it ends now, SPEC §2) or ``"requested"``
    (its prediction is raised to R first, as Tsafrir, Etsion & Feitelson do;
    acts only with predicted estimates, ``user-recent``).
    ``availability``: processors or hosts down between times -- an
    availability file (path, :mod:`o2ksim.availability`), or its periods as
    :class:`~o2ksim.availability.Outage` s or ``{host, from, to, procs}``
    tables; needs ``machine``.

    The arguments become one validated :class:`~o2ksim.run.config.RunConfig`
    (:meth:`~o2ksim.run.config.RunConfig.create`), run by :func:`run_config`.
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
        seed=0 if seed is None else seed,
        explain=explain,
        progress=progress,
        availability=availability,
        overrun=overrun,
    )
    check_grace_has_effect(config, overrun_grace)
    check_estimates_have_effect(config)
    check_overrun_has_effect(config, overrun)
    result = run_config(config, observers=observers)  # observers checked there
    note = "" if seed is None else unused_seed_note(result, config, f"seed={seed}")
    if note:  # only a seed given: the default (None, read as 0) says nothing
        warnings.warn(note, UnusedSeedWarning, stacklevel=2)
    rejected = rejected_line(result)
    if rejected:  # as `o2ksim run` says it: they never ran and are in no wait measure
        warnings.warn(
            f"{rejected} (result.jobs: status 'rejected', column reason)",
            RejectedJobsWarning,
            stacklevel=2,
        )
    late = unused_periods_note(
        config.availability, result.stats.sim_end, result.unix_start, f"availability={shown(availability)}"
    )
    if late:
        warnings.warn(late, UnusedAvailabilityWarning, stacklevel=2)
    return result


def check_observers(observers: Any) -> Sequence[Observer]:
    """The ``observers`` argument: objects with the :class:`~o2ksim.engine.monitor.Observer`
    hooks, refused in one line otherwise (not an AttributeError deep in the run)."""
    if isinstance(observers, str | bytes) or not isinstance(observers, Sequence):
        raise O2KSimError(f"observers: expected a list of Observer objects, got {observers!r}")
    hooks = [n for n in vars(Observer) if n.startswith("on_") or n == "close"]
    for obs in observers:
        lacking = [n for n in hooks if not callable(getattr(obs, n, None))]
        if lacking:
            raise O2KSimError(
                f"observers: {obs!r} is not an Observer (it lacks {', '.join(lacking)}; "
                "subclass o2ksim.engine.monitor.Observer)"
            )
    return observers


def run_config(config: RunConfig, *, observers: Sequence[Observer] = ()) -> Result:
    """Run one validated :class:`~o2ksim.run.config.RunConfig` and measure it.

    Every way into the engine ends here (the API, ``o2ksim run``, scenarios
    and sweep workers).  A :class:`~o2ksim.run.config.WorkloadRecipe` is built
    first (cached per process); a generated workload with a window gets
    arrivals after the window until every analysed job has started (the
    cool-down of T§3.4).
    """
    if not isinstance(config, RunConfig):
        raise O2KSimError(
            f"run_config: expected a RunConfig (RunConfig.create(...)), got {shown(config)}"
        )
    observers = check_observers(observers)
    recipe = config.workload
    if not isinstance(recipe, WorkloadRecipe):
        return _run(config, config.workload, observers)
    procs = config.machine.total_procs if config.machine is not None else None
    trace = recipe.build(procs)
    window = config.window
    simulated = trace
    if window is not None and recipe.model:
        chunk = cooldown_chunk(window)

        def with_tail(_tr: Any, k: int) -> Any:
            nonlocal simulated  # the last one built is the one the result ran on
            simulated = WorkloadRecipe(
                {**recipe.spec, "cooldown_chunks": k, "cooldown_chunk": chunk}
            ).build(procs)
            return simulated

        result = run_with_cooldown(
            lambda tr: _run(config, tr, observers), trace, with_tail, chunk_length=chunk
        )
    else:
        result = _run(config, trace, observers)
    result.simulated = simulated
    est = config.estimates
    result.config["workload"] = workload_label(
        {**recipe.spec, "estimates": None if est.requested else est.text}
    )
    if isinstance(config.policy, PolicyChoice) and config.policy.label is not None:
        result.config["label"] = config.policy.label
    result.replay = config.replay_dict()
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
    specs: list[JobSpec] = []
    if isinstance(workload, tuple):
        frame = None
        specs = list(workload)
        check_job_specs(specs)
    else:
        if is_frame(workload):
            frame = workload
        else:
            frame, header, source = workload.table, workload.header, workload.source
        if len(frame) == 0:
            raise O2KSimError(f"{source or 'the workload'}: no jobs to simulate")
        check_jobs_frame(frame, source)

    mach = cfg.machine
    if mach is None:
        if header is None:
            raise O2KSimError(
                "no machine given and the workload has no SWF header to derive one from"
            )
        named = header_machine(header, source)  # a trace from `o2ksim generate` names its machine
        mach = load_machine(named) if named else machine_from_header(header, source)

    analysed: np.ndarray | None = None
    if frame is not None:
        note = perfect_estimates_note(frame, source) if estimates.kind == "requested" else None
        if note:  # the CLI commands print it themselves, once (o2ksim.cli.main ignores this)
            warnings.warn(note, PerfectEstimatesWarning, stacklevel=4)  # the caller of simulate()
        frame = apply_estimates(frame, estimates)
        if window is not None:
            frame, analysed = select_window(frame, window)
        specs = specs_from_frame(frame)

    pol: PolicyProtocol = (
        make_policy(cfg.policy.name, **cfg.policy.params)
        if isinstance(cfg.policy, PolicyChoice)
        else cfg.policy
    )
    if cfg.availability and not getattr(pol, "follows_free_procs", True):
        raise O2KSimError(
            f"policy {pol.name} partitions each host's full size and cannot take processors down "
            "(availability); use a policy of the FCFS, backfill or LSF families"
        )
    obs = list(observers)
    if cfg.progress:
        obs.append(ProgressBar(len(analysed) if analysed is not None else len(specs)))
    rng = np.random.default_rng(seed)
    fresh = rng.bit_generator.state  # drawn from iff this changes (a user policy may draw)
    sim = Simulation(
        mach,
        specs,
        pol,
        settings=cfg.settings,
        watch=None if analysed is None else analysed.tolist(),
        observers=obs,
        rng=rng,
        availability=cfg.availability,
    )
    stats = sim.run()
    for o in obs:
        o.close()
    segments = sim.monitor.segment_table(release=True)
    jobs = result_columns(list(sim.jobs.values()), segments, analysed)
    not_arrived = 0
    if analysed is not None:  # a window: the jobs submitted after the run stopped never arrived
        arrived = (column(jobs, "status") != "not_started") | (column(jobs, "submit", float) <= stats.sim_end)
        not_arrived = int(len(arrived) - np.count_nonzero(arrived))
        if not_arrived:
            jobs = jobs.take(arrived)
    if isinstance(pol, JobColumns):  # e.g. EQspatial's catch-up credit
        for col, values in pol.job_columns().items():
            jobs = jobs.with_column(col, _mapped(jobs["job_id"], values))
    span = None
    if window is not None:
        span = (window.start, window.end)
    down = None
    if cfg.availability:  # processors out of service: held by a period, after its drain
        down = [
            (r.held_from, min(r.outage.end, stats.sim_end), r.outage.procs)
            for r in sim.outages
            if r.held_from is not None
        ]
    summ = metrics.summary(jobs, segments, mach.total_procs, span, down)
    resizes = jobs["resizes"][jobs["analysed"]] if "analysed" in jobs else jobs["resizes"]
    summ["resizes"] = int(resizes.sum())
    if window is not None and frame is not None:  # the protocol's cool-down (T§3.4)
        last_submit = float(column(frame, "submit").max())
        summ.update(cooldown_measures(jobs, window.end, last_submit, stats.sim_end))
    # the policy's own counters (e.g. immediate service's trials) over the analysed jobs
    counters = dict(pol.summary_counts(None if analysed is None else set(analysed.tolist())))
    summ.update(counters)
    if analysed is not None:
        summ["not_arrived"] = not_arrived  # not in the jobs table: they took no part in the run
    if window is not None and window.zone:  # the zone its dates were read in
        summ["window_zone"] = window.zone
    summ["sim_seconds"] = round(stats.wall_seconds, 3)
    config: dict[str, Any] = {
        "workload": str(source) if source else ("frame" if frame is not None else "jobs"),
        "machine": mach.source or mach.name,
        "policy": pol.name,
        "estimates": str(estimates),
        "window": None if window is None else [window.start, window.end, window.warmup],
        "interval": cfg.settings.interval,
        "kill_overrun": cfg.settings.kill_overrun,
        "overrun_grace": cfg.settings.overrun_grace,
        "overrun": cfg.settings.overrun,
        "seed": seed,
    }
    if cfg.availability:
        config["availability"] = [o.row() for o in cfg.availability]
    result = Result(jobs, summ, segments, stats, mach, describe_policy(pol), config, counters)
    result.random_draws = rng.bit_generator.state != fresh
    result.unix_start = getattr(header, "unix_start_time", None)
    return result


def unused_seed_note(result: Result, config: RunConfig, given: str) -> str:
    """The note for a seed the user gave (``given``: ``--seed 7``, ``seed=7``) that changed
    nothing: the workload was not generated and the run's generator was never drawn from
    (:attr:`Result.random_draws <o2ksim.run.results.Result.random_draws>`); ``""`` otherwise.

    Whether a policy draws is known only after the run (NCSA-LSF draws a host among equals,
    FCFS never; a user's policy may), so the note follows the run rather than refusing it.
    """
    generated = isinstance(config.workload, WorkloadRecipe) and bool(config.workload.model)
    if result.random_draws is not False or generated:
        return ""
    return (
        f"{given} changed nothing in this run: neither the workload (read, not generated) nor "
        f"the policy {result.policy.get('name', '?')} drew from the run's random generator, so "
        "every seed gives the same schedule"
    )


def _mapped(job_ids: np.ndarray, values: Mapping[int, Any]) -> np.ndarray:
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


__all__ = ["Result", "check_observers", "run_config", "simulate"]
