"""What users write for a run, turned into typed values (for :class:`~o2ksim.run.config.RunConfig`).

:class:`WorkloadRecipe` (a workload the run builds itself) and
:class:`PolicyChoice` (a policy by name with overrides) are two of
:class:`~o2ksim.run.config.RunConfig`'s field types; the ``as_*`` functions
take what the API, the command line or a scenario give (a path, a machine
name, a table, a list of outages, ``"5m"``) and return the typed value or
refuse it with the usual one-line error.  :meth:`RunConfig.create` and
:meth:`RunConfig.from_dict` are their callers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from o2ksim.availability import Outage, check_outages, load_availability, outages_from_rows
from o2ksim.engine.contract import PROTOCOL_METHODS, PolicyProtocol, RunSettings
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.jobs import JobSpec
from o2ksim.machine import MachineSpec, load_machine, parse_machine
from o2ksim.run.workload import build_workload, workload_label
from o2ksim.table import column, is_frame
from o2ksim.units import is_date
from o2ksim.validation import check_bool, check_keys, check_run_settings, check_str, shown
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.transforms import DEFAULT_WARMUP, Window, as_window, read_window

WHERE = "run configuration"
"""The ``where`` of a refusal about a run's arguments."""


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
        return cls({**EMPTY_RECIPE, "trace": os.fspath(path), "lenient": lenient})

    @classmethod
    def generated(
        cls, model: str, span: float, *, seed: int = 0, params: Any = None
    ) -> WorkloadRecipe:
        """The recipe "generate ``span`` seconds of ``model``" (``o2ksim run --model``)."""
        return cls({**EMPTY_RECIPE, "model": model, "span": span, "seed": seed,
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


EMPTY_RECIPE: dict[str, Any] = {
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


def as_workload(source: Any) -> Workload:
    """The run's workload: a path becomes a :class:`WorkloadRecipe`; JobSpecs a tuple."""
    if isinstance(source, WorkloadRecipe | Trace) or is_frame(source):
        return source
    if isinstance(source, str | os.PathLike):
        if not os.fspath(source):  # '' would read as "no trace", then as no jobs at all
            raise O2KSimError("workload: an empty path is not an SWF file")
        return WorkloadRecipe.of_trace(source)
    if isinstance(source, Sequence) and source and all(isinstance(s, JobSpec) for s in source):
        return tuple(source)
    raise O2KSimError(f"cannot use {type(source).__name__} as a workload")


def as_window_of(value: Any, workload: Workload, machine: MachineSpec | None) -> Window | None:
    """The ``window`` argument of :func:`~o2ksim.run.api.simulate`: a :class:`Window`, or
    ``(start, end[, warmup])`` in seconds, durations or dates.  Dates are read against the
    trace header (its UnixStartTime, in its time zone), as ``o2ksim run --window`` reads
    them, and a reversed window of dates, or one in which the trace submits no job, is
    refused in those dates (:func:`~o2ksim.workloads.transforms.read_window`)."""
    if (
        value is None
        or isinstance(value, Window | str)
        or not isinstance(value, Sequence)
        or len(value) not in (2, 3)
        or not any(is_date(t) for t in value[:2])
    ):
        return as_window(value)
    trace = None
    if isinstance(workload, Trace):
        trace = workload
    elif isinstance(workload, WorkloadRecipe) and workload.spec.get("trace"):
        trace = workload.build(machine.total_procs if machine is not None else None)
    header, submit = (trace.header, column(trace.table, "submit")) if trace is not None else (None, None)
    warmup = value[2] if len(value) == 3 else DEFAULT_WARMUP
    return read_window(value[:2], header, warmup, submit)[0]


def as_machine(machine: Any, where: str = WHERE) -> MachineSpec | None:
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


def as_policy(
    policy: Any, params: Mapping[str, Any] | None, label: str | None
) -> PolicyChoice | PolicyProtocol:
    if isinstance(policy, str | os.PathLike):
        if params is not None and not isinstance(params, Mapping):
            raise ConfigError(WHERE, f"must be a table, got {params!r}", field="policy_params")
        for key in params or {}:
            if not isinstance(key, str):  # a parameter's name: {1: 1} was a TypeError deep inside
                raise ConfigError(
                    WHERE, f"parameter names are strings, got {shown(key)}", field="policy_params"
                )
        if label is not None:
            check_str(label, WHERE, "label")
        return PolicyChoice(os.fspath(policy), dict(params or {}), label)
    if not isinstance(policy, PolicyProtocol):
        missing = [m for m in PROTOCOL_METHODS if not callable(getattr(policy, m, None))]
        raise ConfigError(
            WHERE,
            f"must be a policy name or a policy object (an o2ksim.policies.Policy subclass, "
            f"or an object with the methods of o2ksim.engine.contract.PolicyProtocol), got "
            f"{policy!r}, which lacks {', '.join(missing) or 'a name'}",
            field="policy",
        )
    if params:
        raise ConfigError(
            WHERE, "parameters apply to a policy given by name, not to a policy object",
            field="policy_params",
        )  # fmt: skip
    return policy


def as_availability(value: Any, machine: MachineSpec | None) -> tuple[Outage, ...]:
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


def named(name: str, parse: Any, value: Any) -> Any:
    """``parse(value)``, its refusal naming the argument (``interval: 'abc' is not a duration``)."""
    try:
        return parse(value)
    except O2KSimError as exc:
        text = str(exc)
        raise O2KSimError(text if text.startswith(f"{name}:") else f"{name}: {text}") from None


def as_settings(
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


__all__ = [
    "EMPTY_RECIPE",
    "WHERE",
    "PolicyChoice",
    "Workload",
    "WorkloadRecipe",
    "as_availability",
    "as_machine",
    "as_policy",
    "as_settings",
    "as_workload",
    "named",
]  # fmt: skip
