"""Checks of a scenario's planned runs when it is loaded, so that a mistake fails before a
sweep starts, not in the middle of it: every policy variant is built once, and runtime
estimates that change nothing in any run are refused (as ``o2ksim run --estimates`` is)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.policies import make_policy
from o2ksim.run.checks import UNREAD_ESTIMATES, estimates_unread

if TYPE_CHECKING:
    from o2ksim.experiments.scenario import RunSpec, Scenario


def check_runs(sc: Scenario, where: str) -> None:
    """Fail now, not in the middle of a sweep: build every policy variant once, and refuse
    runtime estimates that change nothing in any run (:func:`_check_estimates`)."""
    seen: set[str] = set()
    estimated: dict[str, RunSpec] = {}  # one run per policy variant, estimates and settings
    for run in sc.plan():
        pol = run.config["policy"]
        key = json.dumps(pol, sort_keys=True)
        if run.config["workload"].get("estimates") is not None:
            what = [pol, run.config["workload"]["estimates"], run.config["protocol"], run.config["machine"]]
            estimated.setdefault(json.dumps(what, sort_keys=True, default=str), run)
        if key in seen:
            continue
        seen.add(key)
        try:
            make_policy(pol["name"], **pol["params"])
        except O2KSimError as exc:
            raise ConfigError(where, f"policy '{pol['label']}': {exc}", field="policy") from None
    _check_estimates(sc, where, list(estimated.values()))


def _check_estimates(sc: Scenario, where: str, runs: list[RunSpec]) -> None:
    """Refuse the scenario's runtime estimates (other than ``requested``) when they change
    nothing in any of its ``runs`` (those with estimates), as ``o2ksim run --estimates`` is
    refused (:func:`~o2ksim.run.checks.estimates_unread`: strict FCFS, no kill).  A run of
    such a policy beside runs that do read them is kept: in a factorial design it is the
    control (its schedule is the same at every level, which is a result, not a mistake)."""
    unread: tuple[str, str] | None = None
    for run in runs:
        try:
            policy = estimates_unread(sc.run_config(run))
        except O2KSimError:
            return  # the run itself is refused when it runs, as before
        if policy is None:
            return  # some run reads them
        unread = unread or (run.config["policy"]["label"], run.config["workload"]["estimates"])
    if unread is None:
        return
    field = "factors.workload.estimates" if "workload.estimates" in sc.factors else "workload.estimates"
    raise ConfigError(
        where,
        f"has no effect in any run: policy '{unread[0]}' with estimates '{unread[1]}' "
        + UNREAD_ESTIMATES.format(
            kills="no run of the scenario kills a job at its runtime", kill="protocol.kill_overrun"
        ),
        field=field,
    )


__all__ = ["check_runs"]
