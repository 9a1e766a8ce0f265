"""Checks that a run's options act: refused in one line when they would change nothing.

Issue 27: every accepted option either changes the run or is refused.  The
run configuration (:mod:`o2ksim.run.config`), ``simulate`` and ``o2ksim run``
call these before anything runs:

* :func:`check_params_have_effect` -- immediate-service parameters
  (``quantum``, ``initial_memory``, ``eligible_after``) for a policy that runs
  without immediate service, ``release_ties``, ``sliding`` and ``reservation_kind``
  for one without reservations;
* :func:`check_policy_times` -- a trial quantum beyond the simulated range;
* :func:`check_grace_has_effect` -- an overrun grace for a run that kills no job;
* :func:`check_estimates_have_effect` -- runtime estimates for a policy that never reads
  them (strict FCFS) in a run that kills no job (:func:`estimates_unread`, which a scenario
  asks of each of its runs);
* :func:`check_overrun_has_effect` -- the overrun rule ``requested`` for
  estimates that never fall below the requested runtime;
* :func:`header_machine` -- the machine an SWF header names
  (``; O2KSimMachine: o2k``, written by ``o2ksim generate``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from o2ksim.errors import O2KSimError, PerfectEstimatesWarning
from o2ksim.policies import Policy, make_policy
from o2ksim.table import column
from o2ksim.units import parse_duration
from o2ksim.validation import MAX_TIME
from o2ksim.workloads.swf_header import MACHINE_LABEL, machine_name_problem

IMMEDIATE_ONLY: dict[str, tuple[str, ...]] = {
    "quantum": ("preemptive", "soon"),
    "initial_memory": ("preemptive", "soon"),
    # also read in soon mode (the passes at eligibility times): refused only without trials
    "eligible_after": ("preemptive", "soon"),
}
"""Policy parameters that only act with immediate service, and the modes they act in."""
RESERVATION_ONLY: dict[str, str] = {
    "release_ties": "changes how a reservation reads the jobs ending at its start",
    "sliding": "decides whether a reservation moves earlier when a job ends early",
    "reservation_kind": "decides whether the top waiting jobs or the first ones granted "
    "keep the reservations",
}
"""Backfill parameters that only act on reservations (none with ``reservations = 0``), and
what each decides."""


def header_machine(header: Any, source: str | None = None) -> str | None:
    """The machine an SWF header names (``; O2KSimMachine: o2k``, written by ``o2ksim
    generate``), or ``None``: a trace generated for the O2K runs on the O2K's hosts, not on
    one host of its ``MaxProcs`` processors.  Only a shipped machine's name is taken (the SWF
    reader refuses anything else at its line; a header built in code is checked here): a
    path in a trace header is never opened."""
    extra = getattr(header, "extra", None) or {}
    name = extra.get(MACHINE_LABEL) if isinstance(extra, Mapping) else None
    if not isinstance(name, str) or not name.strip():
        return None
    name = name.strip()
    problem = machine_name_problem(name)
    if problem:
        raise O2KSimError(f"{source or 'the trace header'}: field {MACHINE_LABEL}: {problem}")
    return name


def check_params_have_effect(
    policy: str, params: Mapping[str, Any], given: Iterable[str], name_of: Any = str
) -> None:
    """Refuse a given parameter that the policy, as configured, ignores.

    ``quantum``, ``initial_memory`` and ``eligible_after`` only act with
    immediate service: given to a policy that runs without it
    (``fcfs-backfill``), they would change nothing while the user believes
    they do.  ``name_of(key)`` names the parameter as
    the user gave it (``--quantum`` on the command line).
    """
    given = list(given)
    keys = [k for k in given if k in IMMEDIATE_ONLY]
    held = [k for k in given if k in RESERVATION_ONLY]
    if not keys and not held:
        return
    try:
        resolved = make_policy(policy, **params).params
    except O2KSimError:
        return  # building the policy for the run says what is wrong
    if not isinstance(resolved, Mapping):
        return
    if held and resolved.get("reservations") == 0:
        key = held[0]
        raise O2KSimError(
            f"{name_of(key)}: has no effect: policy '{policy}' runs with reservations = 0, "
            f"and {key} only {RESERVATION_ONLY[key]} (give reservations >= 1)"
        )
    if "immediate_service" not in resolved:
        return
    mode = resolved.get("immediate_service") or "off"
    for key in keys:
        modes = IMMEDIATE_ONLY[key]
        if mode not in modes:
            raise O2KSimError(
                f"{name_of(key)}: has no effect: policy '{policy}' runs with "
                f"immediate_service = {mode}, and {key} acts only with immediate_service = "
                f"{' or '.join(modes)} (set immediate_service, or choose a policy with it, "
                "e.g. fcfs-backfill-immediate)"
            )


TIME_PARAMS = ("quantum", "min_interval")
"""Policy parameters that become simulated time spans the run steps through: beyond
:data:`~o2ksim.validation.MAX_TIME` a trial of ``quantum = 1e38`` never ends, and
``min_interval = inf`` put the next repartitioning at ``-inf + inf``, NaN: the
host never repartitioned at all, not even once (a span beyond any trace, e.g.
``1e11``, is "one repartitioning, then never")."""


def check_policy_times(policy: str, params: Mapping[str, Any]) -> None:
    """Refuse a policy (preset or override) whose trial quantum or repartitioning interval is
    beyond the simulated range."""
    try:
        resolved = make_policy(policy, **params).params
    except O2KSimError:
        return  # building the policy for the run says what is wrong
    if not isinstance(resolved, Mapping):
        return
    for key in TIME_PARAMS:
        value = resolved.get(key)
        if value is None:
            continue
        try:
            seconds = parse_duration(value)
        except O2KSimError:
            continue
        if not seconds < MAX_TIME:
            raise O2KSimError(
                f"{key} {value}: beyond the largest time o2ksim simulates ({MAX_TIME:g} s, "
                f"about 31,700 years) (policy '{policy}')"
            )


def check_grace_has_effect(config: Any, given: Any, name: str = "overrun_grace") -> None:
    """Refuse a grace given for a run that kills no job (kills off on the command line, in
    the call or in the machine's ``[options]``): it would change nothing."""
    if given is not None and not config.settings.kill_overrun:
        raise O2KSimError(
            f"{name} {given}: has no effect: this run does not kill overrunning jobs (kills are "
            "off unless asked for: --kill-overrun, kill_overrun=True, or kill_overrun = true "
            "in the machine's [options])"
        )


def estimates_unread(config: Any) -> str | None:
    """The name of the run's policy when its runtime-estimate scenario changes nothing: the
    policy never reads estimates (:meth:`Policy.reads_estimates
    <o2ksim.policies.base.Policy.reads_estimates>`, strict FCFS) and the run kills no job (the
    engine reads ``req_time`` only for the kill at the runtime and for the predicted ends
    policies see), so every job's start, end and host would be those of ``requested``;
    ``None`` when the estimates are ``requested`` or may act."""
    estimates = config.estimates
    if estimates.requested or config.settings.kill_overrun:
        return None
    chosen = config.policy
    if isinstance(chosen, Policy):
        policy = chosen
    else:
        try:
            policy = make_policy(chosen.name, **chosen.params)
        except O2KSimError:
            return None  # building the policy for the run says what is wrong
    return None if policy.reads_estimates() else str(policy.name)


UNREAD_ESTIMATES = (
    "never reads runtime estimates (it starts jobs in submission order by their size alone) and "
    "{kills}, so the schedule would be that of the requested runtimes (estimates act on "
    "backfilling, priorities, NCSA-LSF* classes, the goal search, immediate service and, with "
    "{kill}, the kills)"
)
"""Why :func:`estimates_unread` estimates change nothing (``kills``: that no job is killed at
its runtime; ``kill``: how kills are asked for)."""


def check_estimates_have_effect(config: Any, name: str = "estimates") -> None:
    """Refuse a runtime-estimate scenario that changes nothing (:func:`estimates_unread`)."""
    policy = estimates_unread(config)
    if policy is None:
        return
    raise O2KSimError(
        f"{name} {config.estimates.text}: has no effect: policy '{policy}' "
        + UNREAD_ESTIMATES.format(kills="this run kills no job at its runtime", kill="--kill-overrun")
    )


def check_overrun_has_effect(config: Any, given: Any, name: str = "overrun") -> None:
    """Refuse the overrun rule ``requested`` where it changes nothing: with the requested
    runtimes, actual ones or the thesis's Scenario A and B no estimate is below the
    requested runtime ``R`` (they are ``R`` or ``T``, or cap ``(1 + K) T`` at ``R``), so a
    job past its estimate is past ``R`` too and the rule predicts *now* as ``now`` does.
    A list of JobSpecs carries its own: the rule acts if one has an estimate below its R."""
    if given != "requested":
        return
    specs = config.job_specs
    if specs is not None:
        if any(s.user_request > s.req_time for s in specs):
            return
        raise O2KSimError(
            f"{name} requested: has no effect: no job's req_time is below its requested_time"
        )
    if not config.estimates.predicted:
        raise O2KSimError(
            f"{name} requested: has no effect: with estimates '{config.estimates.text}' no job's "
            "estimate is below its requested runtime, so none is raised (give predicted "
            "estimates: --estimates user-recent)"
        )


def perfect_estimates_note(table: Any, source: str | None) -> str | None:
    """The warning a run with ``estimates = requested`` owes its user when some jobs of
    ``table`` have no requested runtime: they are planned with their actual runtimes, perfect
    estimates that make backfilling look better than it is (issue 27); ``None`` otherwise."""
    if "req_time" not in table or len(table) == 0:
        return None
    missing = int((column(table, "req_time") <= 0).sum())
    if not missing:
        return None
    return (
        f"{source or 'the workload'}: {missing} of {len(table)} jobs have no requested runtime "
        "(field 9); they are planned with their actual runtimes (perfect estimates, which "
        "flatter backfilling); --estimates scenario-a:20 plans with 1.2 x the runtime"
    )


def reason_groups(reasons: Iterable[object], ids: Iterable[int]) -> list[tuple[int, str, list[int]]]:
    """Reasons grouped with the numbers in them folded ('requests 8 processors' and 'requests
    9 processors' are one group), largest group first: ``(count, first reason, job ids)``."""
    groups: dict[str, tuple[list[int], str]] = {}
    for reason, job in zip(reasons, ids, strict=True):
        text = str(reason) if reason not in (None, "") and reason == reason else "no reason given"
        groups.setdefault(re.sub(r"\d[\d.,]*", "#", text), ([], text))[0].append(int(job))
    ordered = sorted(groups.values(), key=lambda e: -len(e[0]))
    return [(len(jobs), text, jobs) for jobs, text in ordered]


def group_text(n: int, text: str) -> str:
    """One group of :func:`reason_groups` as a line says it: ``3 'requests 9 processors' and alike``."""
    return f"{n} {text!r}{' and alike' if n > 1 and re.search(r'[0-9]', text) else ''}"


def rejected_line(result: Any) -> str:
    """The analysed jobs the run rejected, counted per reason (numbers in reasons folded)."""
    table = result.job_table
    status = column(table, "status")
    rejected = status == "rejected"
    if "analysed" in table.columns:
        rejected &= column(table, "analysed").astype(bool)
    if not rejected.any():
        return ""
    return reasons_line(column(table, "reason")[rejected].tolist(), column(table, "job_id")[rejected].tolist())


def reasons_line(reasons: list[object], ids: list[int]) -> str:
    """``rejected N: ...``, the jobs ``ids`` counted per reason (the three largest groups), as
    ``o2ksim run``, ``simulate()`` and ``o2ksim predict`` say them; ``""`` for no job."""
    if not ids:
        return ""
    ordered = reason_groups(reasons, ids)
    parts = [group_text(n, text) for n, text, _ in ordered[:3]]
    if len(ordered) > 3:
        parts.append(f"{sum(n for n, _, _ in ordered[3:])} for {len(ordered) - 3} other reasons")
    return f"rejected {len(ids)}: " + "; ".join(parts)


__all__ = [
    "IMMEDIATE_ONLY",
    "MACHINE_LABEL",
    "TIME_PARAMS",
    "UNREAD_ESTIMATES",
    "PerfectEstimatesWarning",
    "check_estimates_have_effect",
    "check_grace_has_effect",
    "check_overrun_has_effect",
    "check_params_have_effect",
    "check_policy_times",
    "estimates_unread",
    "group_text",
    "header_machine",
    "perfect_estimates_note",
    "reason_groups",
    "reasons_line",
    "rejected_line",
]
