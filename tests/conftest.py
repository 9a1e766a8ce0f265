"""Helpers shared by the test modules (import them with ``from conftest import ...``).

Jobs are written in seconds and gigabytes as a reader would work them out by
hand; ``starts`` reads a result back as ``{job_id: start}``.
"""

from __future__ import annotations

import math

from o2ksim.jobs import JobSpec
from o2ksim.machine import KB_PER_GB, HostSpec, MachineSpec
from o2ksim.policies import presets


def job(job_id, submit, procs, req, run=None, mem_gb=0.0, user=-1) -> JobSpec:
    """A job submitted at ``submit`` asking ``procs`` processors and ``req`` seconds
    (running ``run`` seconds, default ``req``) and ``mem_gb`` GB for the whole job."""
    run = req if run is None else run
    return JobSpec(
        job_id, float(submit), procs, round(mem_gb * KB_PER_GB), float(req), float(run), user=user
    )


def starts(result) -> dict[int, float]:
    """``{job_id: start}`` of a :class:`~o2ksim.simulate.Result`."""
    return {int(j): s for j, s in zip(result.jobs["job_id"], result.jobs["start"], strict=True)}


def one_host(procs, mem_gb=None, name="m") -> MachineSpec:
    """A machine of one host (memory unconstrained unless ``mem_gb`` is given)."""
    mem = math.inf if mem_gb is None else round(mem_gb * KB_PER_GB)
    return MachineSpec(name, (HostSpec(name, procs, mem),))


def presets_of_kind(kind: str) -> list[str]:
    """The names of every shipped preset of policy kind ``kind``, sorted."""
    return sorted(name for name, p in presets().items() if p.kind == kind)


BACKFILL_PRESETS = presets_of_kind("backfill")
