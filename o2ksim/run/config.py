"""One run, described once: :class:`RunConfig`.

A run is a workload, a machine, a policy, the runtime-estimate scenario, the
analysis window, the run settings (scheduling interval, overrun kill), a seed
and whether to show progress.  Every way into the engine builds the same
frozen, validated :class:`RunConfig` and hands it to
:func:`o2ksim.run.api.run_config`:

* the Python API: :func:`o2ksim.run.api.simulate` (its keyword arguments go
  to :meth:`RunConfig.create`);
* ``o2ksim run``: the command-line values go to :meth:`RunConfig.create`;
* scenarios and sweeps: a :class:`~o2ksim.experiments.scenario.RunSpec`'s JSON
  configuration goes to :meth:`RunConfig.from_dict` (in the sweep's worker
  process), and :meth:`RunConfig.to_dict` writes one back.

:meth:`RunConfig.create` is the one validating constructor: it turns what
users write (``"5m"``, ``("14d", "28d")``, ``"scenario-a:10"``, a machine
name) into typed values -- the machine is parsed once into a
:class:`~o2ksim.machine.MachineSpec` and kept, the estimates into an
:class:`~o2ksim.workloads.transforms.Estimates`, the window into a
:class:`~o2ksim.workloads.transforms.Window` -- and refuses anything else
with the usual one-line error.  The dataclass's own ``__init__`` checks that
each field already has its type, so no half-checked configuration exists.

>>> from o2ksim.run.config import RunConfig
>>> cfg = RunConfig.create("traces/tiny.swf", "o2k", "fcfs", interval="5m")  # doctest: +SKIP
>>> cfg.settings.interval  # doctest: +SKIP
300.0
>>> RunConfig.from_dict(cfg.to_dict()) == cfg  # doctest: +SKIP
True
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from o2ksim.availability import Outage, check_outages, load_availability, outages_from_rows
from o2ksim.engine.contract import PolicyProtocol, RunSettings
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.jobs import JobSpec
from o2ksim.machine import MachineSpec, load_machine, parse_machine
from o2ksim.run.checks import check_params_have_effect, check_policy_times
from o2ksim.run.workload import build_workload, workload_label
from o2ksim.table import is_frame
from o2ksim.units import is_date, parse_duration, parse_time, trace_zone
from o2ksim.validation import (
    check_bool,
    check_keys,
    check_run_settings,
    check_seed,
    check_str,
)
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.transforms import Estimates, Window, as_window

WHERE = "run configuration"
RECIPE_KEYS = ("trace", "model", "params", "span", "seed", "jobs", "load", "lenient")
"""The keys of a :class:`WorkloadRecipe` (a scenario's ``[workload]``, normalised)."""
SECTIONS = ("machine", "workload", "policy", "protocol")
PROTOCOL_KEYS = (
    "window", "warmup", "seed", "interval", "kill_overrun", "overrun_grace", "overrun", "availability",
)  # fmt: skip
FRAME_COLUMNS = (
    "job_id", "submit", "run_time", "alloc_procs", "used_mem", "req_procs", "req_time",
    "req_mem", "user", "queue",
)  # fmt: skip
"""The SWF columns a job table given as a frame must have (what the run reads of it)."""


@dataclass(frozen=True)
class WorkloadRecipe:
    """A workload the run builds itself: a trace file, a generated model or inline jobs.

    ``spec`` holds the keys of :data:`RECIPE_KEYS` (what a scenario's
    ``[workload]`` table becomes once validated; see
    :func:`o2ksim.run.workload.build_workload`), ``load`` scaling included.
    Runtime estimates and the window are separate fields of :class:`RunConfig`.
    """

    spec: Mapping[str, Any]

    @classmethod
    def of_trace(cls, path: str | os.PathLike[str], *, lenient: bool = False) -> WorkloadRecipe:
        """The recipe "read this SWF file" (what a path given to :func:`simulate` means)."""
        return cls({**_EMPTY_RECIPE, "trace": os.fspath(path), "lenient": lenient})

    @classmethod
    def generated(
        cls, model: str, span: float, *, seed: int = 0, params: Any = None
    ) -> WorkloadRecipe:
        """The recipe "generate ``span`` seconds of ``model``" (``o2ksim run --model``)."""
        return cls({**_EMPTY_RECIPE, "model": model, "span": span, "seed": seed,
                    "params": params or {}})  # fmt: skip

    @property
    def model(self) -> str | None:
        """The model name when the workload is generated."""
        return self.spec.get("model")

    def build(self, machine_procs: int | None = None) -> Trace:
        """The trace (cached per process: consecutive runs share their workload)."""
        return build_workload(dict(self.spec), machine_procs)

    def label(self) -> str:
        """A short human description (``trace kth.swf``, ``model o2k over 30 days``)."""
        return workload_label(dict(self.spec))


_EMPTY_RECIPE: dict[str, Any] = {
    "trace": None, "model": None, "params": {}, "span": None, "seed": None, "jobs": None,
    "load": None, "lenient": False,
}  # fmt: skip


@dataclass(frozen=True)
class PolicyChoice:
    """A policy by name (a preset, a kind, a preset file or ``module:Name``) with overrides.

    ``label`` names the policy in a scenario's results; each run builds a
    fresh policy from the name and ``params`` (policies keep state).
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None


Workload = Any
"""What :attr:`RunConfig.workload` holds: a :class:`WorkloadRecipe` (a trace path,
a model, inline jobs), a :class:`~o2ksim.workloads.swf.Trace`, a DataFrame with
the SWF columns, or a tuple of :class:`~o2ksim.jobs.JobSpec`."""


@dataclass(frozen=True)
class RunConfig:
    """Everything one run needs, validated (build it with :meth:`create` or :meth:`from_dict`).

    ``machine`` ``None`` means one host sized from the trace header's
    ``MaxProcs``.  ``settings`` are already resolved against the machine
    file's ``[options]`` (SPEC §2: the overrun kill is off unless asked for).
    ``availability``: periods of processors down, checked against ``machine``
    (:mod:`o2ksim.availability`); empty: the machine is whole throughout.
    """

    workload: Workload
    machine: MachineSpec | None
    policy: PolicyChoice | PolicyProtocol
    estimates: Estimates = field(default_factory=Estimates)
    window: Window | None = None
    settings: RunSettings = field(default_factory=RunSettings)
    seed: int = 0
    progress: bool = False
    availability: tuple[Outage, ...] = ()

    def __post_init__(self) -> None:
        wl = self.workload
        if not (isinstance(wl, WorkloadRecipe | Trace) or is_frame(wl)) and not (
            isinstance(wl, tuple) and wl and all(isinstance(s, JobSpec) for s in wl)
        ):
            raise ConfigError(WHERE, f"not a workload: {type(wl).__name__}", field="workload")
        if is_frame(wl):
            missing = [c for c in FRAME_COLUMNS if c not in wl.columns]
            if missing:
                raise ConfigError(
                    WHERE,
                    f"the frame lacks the SWF column(s) {', '.join(missing)} (a job table needs "
                    f"{', '.join(FRAME_COLUMNS)}; o2ksim.workloads.swf.jobs_frame builds one)",
                    field="workload",
                )
        typed: dict[str, tuple[type, ...]] = {
            "machine": (MachineSpec, type(None)),
            "policy": (PolicyChoice, PolicyProtocol),
            "estimates": (Estimates,),
            "window": (Window, type(None)),
            "settings": (RunSettings,),
        }
        for name, types in typed.items():
            value = getattr(self, name)
            if not isinstance(value, types):
                raise ConfigError(
                    WHERE, f"must be {' or '.join(t.__name__ for t in types)}, "
                    f"got {type(value).__name__}", field=name,
                )  # fmt: skip
        check_seed(self.seed, WHERE)
        check_bool(self.progress, WHERE, "progress")
        if not isinstance(self.availability, tuple) or not all(
            isinstance(o, Outage) for o in self.availability
        ):
            raise ConfigError(WHERE, "must be a tuple of Outage", field="availability")
        if self.availability and self.machine is None:
            raise ConfigError(
                WHERE, "needs a machine (the hosts the periods name); give one", field="availability"
            )
        if self.job_specs is not None and (not self.estimates.requested or self.window):
            raise O2KSimError("estimates and window need a trace or frame workload, not JobSpecs")

    # ------------------------------------------------------------------------------- building
    @classmethod
    def create(
        cls,
        workload: Any,
        machine: MachineSpec | str | os.PathLike[str] | Mapping[str, Any] | None = None,
        policy: PolicyProtocol | str | os.PathLike[str] = "fcfs-backfill",
        *,
        policy_params: Mapping[str, Any] | None = None,
        label: str | None = None,
        window: Window | Sequence[float | str] | None = None,
        estimates: Estimates | str | None = None,
        interval: float | str | None = None,
        kill_overrun: bool | None = None,
        overrun_grace: float | str | None = None,
        seed: int = 0,
        explain: bool = False,
        progress: bool = False,
        availability: Any = None,
        overrun: str | None = None,
    ) -> RunConfig:
        """A validated configuration from what users write (the arguments of :func:`simulate`).

        ``workload``: an SWF path, a :class:`WorkloadRecipe`, a
        :class:`~o2ksim.workloads.swf.Trace`, a frame with the SWF columns or
        a list of :class:`~o2ksim.jobs.JobSpec`.  ``machine``: a
        :class:`MachineSpec` (kept as is), a name in ``hosts/``, a TOML path, a
        machine table, or ``None``.  ``window``: a :class:`Window` or ``(start,
        end[, warmup])`` in seconds or durations.  ``interval`` and
        ``overrun_grace``: seconds or durations; ``kill_overrun`` and
        ``overrun_grace`` default to the machine's ``[options]``.  ``overrun``:
        ``now`` (default) or ``requested`` (:class:`RunSettings`).
        ``availability``: an availability file (path), or its periods as
        :class:`~o2ksim.availability.Outage` s or ``{host, from, to, procs}``
        tables; needs ``machine``.
        """
        mach = _machine(machine)
        pol = _policy(policy, policy_params, label)
        if isinstance(pol, PolicyChoice):
            check_params_have_effect(pol.name, pol.params, pol.params)
            check_policy_times(pol.name, pol.params)
        win = _named("window", as_window, window)
        interval, overrun_grace = (
            None if v is None else _named(name, parse_duration, v)
            for name, v in (("interval", interval), ("overrun_grace", overrun_grace))
        )
        return cls(
            workload=_workload(workload),
            machine=mach,
            policy=pol,
            estimates=Estimates.parse(estimates),
            window=win,
            settings=_settings(mach, interval, kill_overrun, overrun_grace, explain, overrun),
            seed=check_seed(seed, WHERE),
            progress=check_bool(progress, WHERE, "progress"),
            availability=_availability(availability, mach),
        )

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        machine: MachineSpec | None = None,
        explain: bool = False,
        progress: bool = False,
        where: str = WHERE,
    ) -> RunConfig:
        """The configuration :meth:`to_dict` wrote, or a scenario run's (:attr:`RunSpec.config`).

        Four sections: ``machine`` (``None``, a name, a path or a table),
        ``workload`` (the :data:`RECIPE_KEYS` and ``estimates``), ``policy``
        (``name``, ``label``, ``params``) and ``protocol`` (``window`` [START,
        END], ``warmup``, ``seed``, ``interval``, ``kill_overrun``,
        ``overrun_grace``, ``availability``: a path or a list of ``{host,
        from, to, procs}`` tables).  ``machine``: the section's machine already
        parsed (a scenario parses each machine once and hands it over).
        Window bounds may be dates; they are read against the trace's
        ``UnixStartTime``.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(where, "must be a table with machine, workload, policy, protocol")
        check_keys(data, SECTIONS, where)
        workload = dict(_section(data, "workload", where))
        check_keys(workload, (*RECIPE_KEYS, "estimates"), where, "workload.")
        estimates = workload.pop("estimates", None)
        sources = [k for k in ("trace", "model", "jobs") if workload.get(k)]
        if len(sources) != 1:
            raise ConfigError(
                where, "give exactly one of trace, model or jobs", field="workload"
            )
        recipe = WorkloadRecipe({**_EMPTY_RECIPE, **workload})
        pol = dict(_section(data, "policy", where))
        check_keys(pol, ("name", "label", "params"), where, "policy.")
        proto = dict(_section(data, "protocol", where))
        check_keys(proto, PROTOCOL_KEYS, where, "protocol.")
        mach = machine if machine is not None else _machine(data.get("machine"), where)
        window = None
        bounds = proto.get("window")
        if bounds:
            if not isinstance(bounds, Sequence) or isinstance(bounds, str) or len(bounds) != 2:
                raise ConfigError(where, "must be [START, END]", field="protocol.window")
            unix, zone = None, None
            if any(is_date(t) for t in bounds):  # dates: in the trace header's time zone
                trace = recipe.build(mach.total_procs if mach is not None else None)
                unix = getattr(trace.header, "unix_start_time", None)
                zone = trace_zone(trace.header)[0]
            start, end = (parse_time(t, unix, zone) for t in bounds)
            window = Window(start, end, proto.get("warmup") or 0.0)
        return cls.create(
            recipe,
            mach,
            check_str(pol.get("name"), where, "policy.name"),
            policy_params=pol.get("params") or {},
            label=pol.get("label"),
            window=window,
            estimates=estimates,
            interval=proto.get("interval"),
            kill_overrun=proto.get("kill_overrun"),
            overrun_grace=proto.get("overrun_grace"),
            overrun=proto.get("overrun"),
            seed=proto.get("seed", 0),
            explain=explain,
            progress=progress,
            availability=proto.get("availability"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The configuration as JSON values; :meth:`from_dict` reads it back into an equal one.

        The machine is written as its table (no file needed to rebuild it).
        A workload or policy held as a Python object (a Trace, a frame,
        JobSpecs, a policy instance) has no such form and is refused.
        """
        if not isinstance(self.workload, WorkloadRecipe):
            raise O2KSimError(
                f"a run on a {type(self.workload).__name__} in memory cannot be written as a "
                "configuration; give the workload as a path or a scenario workload"
            )
        if not isinstance(self.policy, PolicyChoice):
            raise O2KSimError(
                "a run with a policy object cannot be written as a configuration; "
                "give the policy by name"
            )
        win = self.window
        return {
            "machine": None if self.machine is None else self.machine.to_table(),
            "workload": {
                **self.workload.spec,
                "estimates": None if self.estimates.requested else self.estimates.text,
            },
            "policy": {
                "name": self.policy.name,
                "label": self.policy.label,
                "params": dict(self.policy.params),
            },
            "protocol": {
                "window": None if win is None else [win.start, win.end],
                "warmup": None if win is None else win.warmup,
                "seed": self.seed,
                "interval": self.settings.interval,
                "kill_overrun": self.settings.kill_overrun,
                "overrun_grace": self.settings.overrun_grace,
                "availability": [o.row() for o in self.availability],
                # written when not the default, so that earlier configurations read the same
                **({"overrun": self.settings.overrun} if self.settings.overrun != "now" else {}),
            },
        }

    def replay_dict(self) -> dict[str, Any] | None:
        """:meth:`to_dict` with the trace path made absolute (so the run can be simulated
        again from another directory), or ``None`` when the workload or the policy is a
        Python object (no configuration describes it)."""
        if not isinstance(self.workload, WorkloadRecipe) or not isinstance(self.policy, PolicyChoice):
            return None
        data = self.to_dict()
        trace = data["workload"].get("trace")
        if trace:
            data["workload"]["trace"] = os.path.abspath(trace)
        return data

    # ---------------------------------------------------------------------------- questions
    @property
    def job_specs(self) -> tuple[JobSpec, ...] | None:
        """The jobs, when the workload was given as JobSpecs (no estimates, no window)."""
        return self.workload if isinstance(self.workload, tuple) else None

    @property
    def explain(self) -> bool:
        return self.settings.explain


# ----------------------------------------------------------------------------------- helpers
def _section(data: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    value = data.get(name) or {}
    if not isinstance(value, Mapping):
        raise ConfigError(where, "must be a table", field=name)
    return value


def _workload(source: Any) -> Workload:
    """The run's workload: a path becomes a :class:`WorkloadRecipe`; JobSpecs a tuple."""
    if isinstance(source, WorkloadRecipe | Trace) or is_frame(source):
        return source
    if isinstance(source, str | os.PathLike):
        return WorkloadRecipe.of_trace(source)
    if isinstance(source, Sequence) and source and all(isinstance(s, JobSpec) for s in source):
        return tuple(source)
    raise O2KSimError(f"cannot use {type(source).__name__} as a workload")


def _machine(machine: Any, where: str = WHERE) -> MachineSpec | None:
    """A machine parsed once: a :class:`MachineSpec` is kept, anything else is read."""
    if machine is None or isinstance(machine, MachineSpec):
        return machine
    if isinstance(machine, Mapping):
        return parse_machine(dict(machine), where)
    if isinstance(machine, str | os.PathLike):
        return load_machine(machine)
    raise ConfigError(
        where, f"must be a machine name, a TOML path or a table, got {machine!r}", field="machine"
    )


def _policy(
    policy: Any, params: Mapping[str, Any] | None, label: str | None
) -> PolicyChoice | PolicyProtocol:
    if isinstance(policy, str | os.PathLike):
        if params is not None and not isinstance(params, Mapping):
            raise ConfigError(WHERE, f"must be a table, got {params!r}", field="policy_params")
        if label is not None:
            check_str(label, WHERE, "label")
        return PolicyChoice(os.fspath(policy), dict(params or {}), label)
    if not isinstance(policy, PolicyProtocol):
        raise ConfigError(
            WHERE,
            f"must be a policy name or an object with schedule(snapshot), got {policy!r}",
            field="policy",
        )
    if params:
        raise ConfigError(
            WHERE, "parameters apply to a policy given by name, not to a policy object",
            field="policy_params",
        )  # fmt: skip
    return policy


def _availability(value: Any, machine: MachineSpec | None) -> tuple[Outage, ...]:
    """The run's periods of processors down, from a path, Outages or ``{host, from, to, procs}``."""
    if value is None or (isinstance(value, Sequence) and not isinstance(value, str) and not value):
        return ()
    if machine is None:
        raise ConfigError(
            WHERE, "needs a machine (the hosts the periods name); give one", field="availability"
        )
    if isinstance(value, str | os.PathLike):
        return load_availability(value, machine)
    if isinstance(value, Sequence) and all(isinstance(o, Outage) for o in value):
        outages = tuple(sorted(value, key=lambda o: (o.start, o.end, o.host)))
        check_outages(outages, machine, "availability")
        return outages
    if isinstance(value, Sequence) and all(isinstance(r, Mapping) for r in value):
        for row in value:
            check_keys(row, ("host", "from", "to", "procs"), WHERE, "availability.")
        return outages_from_rows(((None, r) for r in value), machine, "availability")
    raise ConfigError(
        WHERE,
        f"must be an availability file, Outages or {{host, from, to, procs}} tables, got {value!r}",
        field="availability",
    )


def _named(name: str, parse: Any, value: Any) -> Any:
    """``parse(value)``, its refusal naming the argument (``interval: 'abc' is not a duration``)."""
    try:
        return parse(value)
    except O2KSimError as exc:
        text = str(exc)
        raise O2KSimError(text if text.startswith(f"{name}:") else f"{name}: {text}") from None


def _settings(
    machine: MachineSpec | None,
    interval: float | None,
    kill_overrun: bool | None,
    overrun_grace: float | None,
    explain: bool,
    overrun: str | None = None,
) -> RunSettings:
    """The run's settings: the values given, else the machine file's ``[options]``, else off.

    ``interval`` has no machine default; ``kill_overrun`` and ``overrun_grace``
    default to the machine's ``options`` (SPEC §2: off unless asked for; a
    machine derived from a trace header has none).
    """
    check_run_settings(interval, kill_overrun, overrun_grace, overrun=overrun)
    check_bool(explain, WHERE, "explain")
    opts = machine.options if machine is not None else {}
    kill = bool(opts.get("kill_overrun", False)) if kill_overrun is None else kill_overrun
    grace = float(opts.get("overrun_grace", 0.0)) if overrun_grace is None else float(overrun_grace)
    try:
        return RunSettings(interval, kill, grace, explain, overrun or "now")
    except ValueError as exc:
        raise O2KSimError(str(exc)) from None


__all__ = ["FRAME_COLUMNS", "PolicyChoice", "RunConfig", "WorkloadRecipe"]
