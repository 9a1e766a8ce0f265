"""Immediate service's parameters: the declaration every backfill policy takes, and the settings.

:data:`PARAMS` declares the four parameters (mode, quantum ``q``, initial
memory, eligibility ``t``); :class:`TrialSettings` is their parsed form
(seconds and KB), built by :meth:`TrialSettings.from_params`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from o2ksim.errors import O2KSimError
from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, KB_PER_MB
from o2ksim.policies.base import Param
from o2ksim.units import parse_duration

MODES = ("off", "preemptive", "soon")
DEFAULT_QUANTUM = 60.0  # seconds (T§5.5)
DEFAULT_INITIAL_MEMORY = KB_PER_GB  # KB (T§5.5: "up to 1 GB")
ELIGIBLE_FACTOR = 10.0  # t = 10 q (T§3.2.2)

_MEM_UNITS = {"kb": 1, "k": 1, "mb": KB_PER_MB, "m": KB_PER_MB, "gb": KB_PER_GB, "g": KB_PER_GB}


def parse_memory(value: str | float | int) -> int:
    """Kilobytes from ``1GB``, ``512MB``, ``2048KB`` or a bare number of megabytes."""
    if isinstance(value, bool):
        raise O2KSimError(f"'{value}' is not an amount of memory (examples: 1GB, 512MB)")
    if isinstance(value, int | float):
        if value < 0 or not math.isfinite(value):
            raise O2KSimError(f"memory must be a non-negative number of MB, got {value!r}")
        return round(value * KB_PER_MB)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*", str(value).lower())
    if not m or m.group(2) not in ("", *_MEM_UNITS):
        raise O2KSimError(f"'{value}' is not an amount of memory (examples: 1GB, 512MB)")
    return round(float(m.group(1)) * _MEM_UNITS.get(m.group(2) or "mb", KB_PER_MB))


def amount_check(parse: Callable[[Any], float], positive: bool) -> Callable[[Any], bool]:
    """A ``Param.check``: ``parse`` (e.g. ``parse_duration``, :func:`parse_memory`) accepts the
    value and it is positive (``positive``) or at least 0; a boolean never is an amount."""

    def check(v: Any) -> bool:
        if isinstance(v, bool):
            return False
        try:
            x = parse(v)
        except O2KSimError:
            return False
        return x > 0 if positive else x >= 0

    return check


PARAMS: dict[str, Param] = {
    "immediate_service": Param(
        str,
        "off",
        "quantum trial run for each new job that cannot start as a full job (T§3.2.2, T§5.5): "
        "preemptive (free processors, else preempt eligible jobs' processors) | soon "
        "(free processors only, [PK00]) | off",
        choices=MODES,
        option=True,
    ),
    "quantum": Param(
        (int, float, str),
        "1m",
        "immediate service: length q of the trial run (seconds or e.g. '1m')",
        check=amount_check(parse_duration, positive=True),
        check_help="must be a positive duration (seconds, or e.g. '1m')",
        option=True,
        metavar="DURATION",
    ),
    "initial_memory": Param(
        (int, float, str),
        "1GB",
        "immediate service: memory of the trial run (MB, or e.g. '1GB', '512MB'); a trial "
        "fails when the job's peak memory exceeds it",
        check=amount_check(parse_memory, positive=False),
        check_help="must be an amount of memory (MB, or e.g. '1GB')",
        option=True,
        metavar="SIZE",
    ),
    "eligible_after": Param(
        (int, float, str),
        None,
        "immediate service: t — a running job may be preempted once it has run uninterrupted "
        "for t and is predicted to need more than t (default 10 x quantum)",
        check=amount_check(parse_duration, positive=False),
        check_help="must be a duration >= 0 (seconds, or e.g. '10m')",
        option=True,
        metavar="DURATION",
    ),
}
"""The immediate-service parameters every backfill policy accepts."""


@dataclass(frozen=True, slots=True)
class TrialSettings:
    """Immediate-service parameters: mode, quantum ``q`` (s), initial memory (KB), ``t`` (s)."""

    mode: str = "preemptive"
    quantum: float = DEFAULT_QUANTUM
    initial_memory: int = DEFAULT_INITIAL_MEMORY
    eligible_after: float = ELIGIBLE_FACTOR * DEFAULT_QUANTUM

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> TrialSettings:
        """Settings from validated policy parameters (see :data:`PARAMS`)."""
        q = parse_duration(params.get("quantum") or DEFAULT_QUANTUM)
        t = params.get("eligible_after")
        return cls(
            mode=params.get("immediate_service") or "off",
            quantum=q,
            initial_memory=parse_memory(
                DEFAULT_INITIAL_MEMORY / KB_PER_MB
                if params.get("initial_memory") is None
                else params["initial_memory"]
            ),
            eligible_after=ELIGIBLE_FACTOR * q if t is None else parse_duration(t),
        )

    @property
    def preemptive(self) -> bool:
        return self.mode == "preemptive"

    def trial_memory(self, spec: JobSpec) -> int:
        """Memory a trial gets: the initial memory, or the request when that is smaller."""
        return min(self.initial_memory, spec.mem) if spec.mem > 0 else self.initial_memory
