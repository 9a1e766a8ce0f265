"""Policies: decision objects registered by name, configured by parameters or TOML presets.

A policy is a small object with one decision method (the engine's
:class:`~o2ksim.engine.contract.PolicyProtocol`; this base class gives the
optional ``bind``, ``admit``, ``quiet_until`` and ``stats`` do-nothing defaults)::

    class MyPolicy(Policy):
        kind = "my-policy"
        PARAMS = {"depth": Param(int, 3, "how far to look")}

        def schedule(self, snap: Snapshot) -> Sequence[Decision]: ...

It looks only at the :class:`~o2ksim.engine.snapshot.Snapshot` and returns
decisions; it never touches the engine.  It may keep its own state between
passes (fixed reservations, drained hosts) because one instance serves exactly
one run: :func:`make_policy` builds a fresh one each time.  Randomness comes
from the generator the run passes to :meth:`Policy.bind`.

A *preset* is a TOML file in ``policies/`` naming a registered kind and its
parameters::

    name = "fcfs-backfill"
    kind = "backfill"
    description = "FCFS priority, one dynamic reservation (EASY)"
    source = "T§3.2.1"
    [params]
    priority = "fcfs"
    reservations = 1
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from o2ksim import paths
from o2ksim.engine.contract import PROTOCOL_METHODS
from o2ksim.engine.decisions import Decision
from o2ksim.engine.snapshot import Snapshot
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.files import read_toml
from o2ksim.jobs import Job
from o2ksim.machine import MachineSpec
from o2ksim.plugins import PluginError, is_object_spec, load_object
from o2ksim.registry import Registry
from o2ksim.toml_lines import located
from o2ksim.validation import check_keys, nearest


@dataclass(frozen=True)
class Param:
    """One policy parameter: its type, default and a one-line help (its name is its key
    in ``PARAMS``).

    ``option``: also an ``o2ksim run`` option, ``--name-with-dashes`` (``metavar``
    names its value in the help), built from this declaration; the command line
    refuses it for a policy that does not declare it.
    """

    type: type | tuple[type, ...]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], bool] | None = None
    check_help: str = ""
    option: bool = False
    metavar: str | None = None


#: Settings of the run, not of a policy (:class:`~o2ksim.engine.contract.RunSettings`).
#: Older presets gave them as backfill parameters; they are refused with a pointer.
RUN_SETTING_KEYS = ("interval", "kill_overrun", "overrun_grace")


class Policy:
    """Base class of scheduling policies.  Subclasses set ``kind``, ``PARAMS``, ``schedule``.

    It satisfies :class:`~o2ksim.engine.contract.PolicyProtocol`: ``bind``,
    ``admit``, ``quiet_until``, ``stats`` and ``summary_counts`` have defaults a
    subclass overrides when it needs them.
    """

    kind: ClassVar[str] = ""
    description: ClassVar[str] = ""
    source: ClassVar[str] = ""
    PARAMS: ClassVar[dict[str, Param]] = {}
    #: Whether the policy plans on the free processors each pass reports, and so honours
    #: periods of processors down (an availability file); ``False`` for a policy that keeps
    #: its own count of each host's processors (EQspatial's partitions): refused with one.
    follows_free_procs: ClassVar[bool] = True

    def __init__(self, name: str | None = None, **params: Any) -> None:
        self.name = name or self.kind
        self.params = self.validate(params, where=self.name)
        self.machine: MachineSpec | None = None
        self.rng: np.random.Generator = np.random.default_rng(0)

    @classmethod
    def validate(
        cls, params: Mapping[str, Any], where: str = "", path: str | None = None
    ) -> dict[str, Any]:
        """Check ``params`` against ``PARAMS``; return them with defaults filled in."""
        unknown = set(params) - set(cls.PARAMS)
        moved = sorted(unknown & set(RUN_SETTING_KEYS))
        if moved:
            raise ConfigError(
                path or where,
                f"'{moved[0]}' is a run setting, not a policy parameter: give it to the run "
                f"(o2ksim run --interval/--kill-overrun/--grace, simulate({moved[0]}=...), "
                f"or a scenario's [protocol] table)",
                field=moved[0],
            )
        if unknown:
            known = ", ".join(sorted(cls.PARAMS)) or "none"
            first = sorted(unknown)[0]
            guess = nearest(first, cls.PARAMS)
            hint = f"did you mean '{guess}'? " if guess else ""
            raise ConfigError(
                path or where,
                f"unknown parameter(s) {', '.join(sorted(unknown))} for policy kind '{cls.kind}' ({hint}known: {known})",
                field=first,
            )
        out = {}
        for key, spec in cls.PARAMS.items():
            value = params.get(key, spec.default)
            if value is not None:
                if spec.type is float and isinstance(value, int) and not isinstance(value, bool):
                    value = float(value)
                ok_type = isinstance(value, spec.type) and not (
                    isinstance(value, bool) and spec.type in (int, float)
                )
                if not ok_type:
                    raise ConfigError(
                        path or where, f"expected {_type_name(spec.type)}, got {value!r}", field=key
                    )
                if isinstance(value, float) and not math.isfinite(value) and spec.type is float:
                    raise ConfigError(
                        path or where, f"must be a finite number, got {value}", field=key
                    )
                if spec.choices is not None and value not in spec.choices:
                    raise ConfigError(
                        path or where,
                        f"must be one of {', '.join(map(str, spec.choices))}, got {value!r}",
                        field=key,
                    )
                if spec.check is not None and not spec.check(value):
                    raise ConfigError(path or where, f"{spec.check_help}, got {value!r}", field=key)
            out[key] = value
        return out

    def bind(self, machine: MachineSpec, rng: np.random.Generator | None = None) -> None:
        """Called once before the run: the machine and this run's random generator."""
        self.machine = machine
        if rng is not None:
            self.rng = rng

    def admit(self, job: Job) -> str | None:
        """Reason this policy can never run ``job`` (it is then rejected), or ``None``."""
        return None

    def schedule(self, snap: Snapshot) -> Sequence[Decision]:
        """Decide what to do at this instant."""
        raise NotImplementedError

    def quiet_until(self, snap: Snapshot) -> float:
        """The pass just made on ``snap`` decided nothing: until what time would every later
        pass on the same state decide nothing too?

        "The same state": no arrival, departure, timer, request or change of a
        host's resources since, so a later pass sees ``snap`` with a later
        ``now`` (and no ``arrived``, ``departed``, ``left`` or ``timers``), and the policy's
        own state is the one that pass left (the engine asks before any other
        pass: a policy carrying state between passes answers for it).  With a fixed
        interval the engine skips the ticks before that time (until something
        happens).  The default, ``snap.now``, promises nothing: a pass at
        every tick.  A policy that overrides it must be able to prove it
        (:mod:`o2ksim.policies.quiet` gives the arguments for the built-in
        ones); a wrong answer changes the schedule.
        """
        return snap.now

    def reads_estimates(self) -> bool:
        """Whether this policy, as configured, may read runtime estimates (``req_time``, a
        running job's predicted end) to decide.  ``True`` unless proved otherwise: a run
        refuses ``--estimates`` for a policy that answers ``False`` (and kills no job at its
        runtime), since the schedule would be the same (issue 27)."""
        return True

    def stats(self) -> Mapping[str, float]:
        """The policy's own counters after a run (stored in ``run.json``); none by default."""
        return {}

    def summary_counts(self, ids: AbstractSet[int] | None = None) -> Mapping[str, int]:
        """The policy's counters over the jobs in ``ids`` (the analysed jobs; ``None``: all),
        added to ``summary.json`` and printed by ``o2ksim run``; none by default."""
        return {}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, **self.params}


def _type_name(t: type | tuple[type, ...]) -> str:
    if isinstance(t, tuple):
        return " or ".join(x.__name__ for x in t)
    return t.__name__


POLICIES: Registry[type[Policy]] = Registry("policy kind", key=lambda cls: cls.kind)
"""The policy kinds by name (the shared :class:`o2ksim.registry.Registry`)."""


@dataclass(frozen=True)
class Preset:
    """A named policy configuration read from a TOML file."""

    name: str
    kind: str
    params: dict[str, Any]
    description: str = ""
    source: str = ""
    path: str | None = None


def load_preset(path: str | os.PathLike[str]) -> Preset:
    """Read and validate a policy preset file."""
    path = Path(path)
    text, data = read_toml(path, "policy preset")
    kind = data.get("kind")
    if not isinstance(kind, str):
        raise ConfigError(
            path, 'a policy preset needs kind = "<registered policy kind>"', field="kind"
        )
    cls = POLICIES.get(kind)
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(path, "must be a table", field="params")
    check_keys(data, {"name", "kind", "description", "source", "params"}, str(path))
    with located(text, within="params"):  # the line of the parameter a refusal names
        cls.validate(params, path=str(path))
    return Preset(
        name=str(data.get("name", path.stem)),
        kind=kind,
        params=params,
        description=str(data.get("description", cls.description)),
        source=str(data.get("source", cls.source)),
        path=str(path),
    )


def presets() -> dict[str, Preset]:
    """Every preset shipped in (or added to) the ``policies/`` directories, by name."""
    return {name: load_preset(p) for name, p in paths.available("policies").items()}


def _user_policy(cls: Any, text: str, overrides: Mapping[str, Any]) -> Policy:
    """The user's policy class ``cls``, named ``text`` (``"./qpol.py:Q"``), built with
    ``overrides``; refused in one line when it is not a class, lacks a method of
    :class:`~o2ksim.engine.contract.PolicyProtocol` (``schedule`` inherited from
    :class:`Policy` counts as missing: it only raises ``NotImplementedError``, at the first
    pass), or its constructor fails."""
    if not isinstance(cls, type):
        raise PluginError(f"policy '{text}' is not a class (a subclass of o2ksim.policies.Policy)")
    missing = [m for m in PROTOCOL_METHODS if not callable(getattr(cls, m, None))]
    if issubclass(cls, Policy) and cls.schedule is Policy.schedule:
        missing.insert(0, "schedule")
    if missing:
        raise PluginError(
            f"policy '{text}': class {cls.__name__} does not define {', '.join(missing)} (a policy "
            "subclasses o2ksim.policies.Policy and defines schedule(self, snap))"
        )
    kind = getattr(cls, "kind", "") or text.rpartition(":")[2]
    try:
        policy: Policy = cls(name=kind, **overrides)
    except O2KSimError:
        raise
    except Exception as exc:  # the user's constructor, as a module that fails to import
        raise PluginError(
            f"policy '{text}': {cls.__name__}(name={kind!r}, ...) raised {type(exc).__name__}: {exc}"
        ) from None
    return policy


def make_policy(name: str, **overrides: Any) -> Policy:
    """Build a fresh policy from a preset name, a preset path, a registered kind or ``"module:Class"``.

    ``overrides`` replace preset parameters (``None`` values are ignored), e.g.
    ``make_policy("lxfw-backfill", reservations=2)``.
    """
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if not isinstance(name, str | os.PathLike):
        raise O2KSimError(f"make_policy: expected a policy name or a TOML path, got {name!r}")
    text = os.fspath(name)
    if is_object_spec(text):  # "module:Class" or "file.py:Class" (o2ksim.plugins)
        return _user_policy(load_object(text, what="policy"), text, overrides)
    preset: Preset | None = None
    if text.endswith(".toml") or os.sep in text:
        preset = load_preset(paths.resolve("policies", text))
    else:
        found = paths.available("policies")
        if text in found:
            preset = load_preset(found[text])
    if preset is not None:
        cls = POLICIES.get(preset.kind)
        return cls(name=preset.name, **{**preset.params, **overrides})
    if text in POLICIES.entries():
        return POLICIES.get(text)(name=text, **overrides)
    names = sorted(set(paths.available("policies")) | set(POLICIES.entries()))
    raise O2KSimError(f"unknown policy '{text}' (known: {', '.join(names)})")
