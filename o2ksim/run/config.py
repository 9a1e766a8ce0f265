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

from o2ksim.availability import Outage
from o2ksim.engine.contract import PolicyProtocol, RunSettings
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.jobs import JobSpec
from o2ksim.machine import MachineSpec
from o2ksim.run.checks import check_params_have_effect, check_policy_times
from o2ksim.run.config_values import (
    EMPTY_RECIPE,
    WHERE,
    PolicyChoice,
    Workload,
    WorkloadRecipe,
    as_availability,
    as_machine,
    as_policy,
    as_settings,
    as_window_of,
    as_workload,
    named,
)
from o2ksim.table import column, is_frame
from o2ksim.units import is_date
from o2ksim.validation import (
    check_bool,
    check_keys,
    check_seed,
    check_str,
    duration_below_limit,
)
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.transforms import Estimates, Window, read_window

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
        end[, warmup])`` in seconds, durations or dates (read in the trace
        header's time zone, :func:`~o2ksim.run.config_values.as_window_of`).  ``interval`` and
        ``overrun_grace``: seconds or durations; ``kill_overrun`` and
        ``overrun_grace`` default to the machine's ``[options]``.  ``overrun``:
        ``now`` (default) or ``requested`` (:class:`RunSettings`).
        ``availability``: an availability file (path), or its periods as
        :class:`~o2ksim.availability.Outage` s or ``{host, from, to, procs}``
        tables; needs ``machine``.
        """
        mach = as_machine(machine)
        pol = as_policy(policy, policy_params, label)
        if isinstance(pol, PolicyChoice):
            check_params_have_effect(pol.name, pol.params, pol.params)
            check_policy_times(pol.name, pol.params)
        workload = as_workload(workload)
        win = named("window", lambda w: as_window_of(w, workload, mach), window)
        interval, overrun_grace = (
            None if v is None else named(name, duration_below_limit, v)
            for name, v in (("interval", interval), ("overrun_grace", overrun_grace))
        )
        return cls(
            workload=workload,
            machine=mach,
            policy=pol,
            estimates=named("estimates", Estimates.parse, estimates),
            window=win,
            settings=as_settings(mach, interval, kill_overrun, overrun_grace, explain, overrun),
            seed=check_seed(seed, WHERE),
            progress=check_bool(progress, WHERE, "progress"),
            availability=as_availability(availability, mach),
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
        recipe = WorkloadRecipe({**EMPTY_RECIPE, **workload})
        pol = dict(_section(data, "policy", where))
        check_keys(pol, ("name", "label", "params"), where, "policy.")
        proto = dict(_section(data, "protocol", where))
        check_keys(proto, PROTOCOL_KEYS, where, "protocol.")
        mach = machine if machine is not None else as_machine(data.get("machine"), where)
        window = None
        bounds = proto.get("window")
        if bounds:
            if not isinstance(bounds, Sequence) or isinstance(bounds, str) or len(bounds) != 2:
                raise ConfigError(where, "must be [START, END]", field="protocol.window")
            header, submit = None, None
            if any(is_date(t) for t in bounds):  # dates: in the trace header's time zone
                trace = recipe.build(mach.total_procs if mach is not None else None)
                header, submit = trace.header, column(trace.table, "submit")
            # refusals in the user's terms: the dates typed, and the zone they were read in
            window = read_window(bounds, header, proto.get("warmup") or 0.0, submit)[0]
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


__all__ = ["FRAME_COLUMNS", "PolicyChoice", "RunConfig", "WorkloadRecipe"]
