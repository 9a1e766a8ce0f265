"""Turn a trace (SWF columns) into the engine's job requests (SPEC §2, §4).

Field choices, the same for every trace:

* processors = requested (field 8), else allocated (field 5);
* memory = requested KB per processor (field 10) x processors; 0 (not
  constrained) when unknown;
* requested runtime = field 9; when unknown (-1) the scheduler is told the
  actual runtime (the usual convention for traces without estimates);
* actual runtime = field 4; a job with unknown runtime or processors is kept
  and reported as rejected with the reason, never dropped silently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from o2ksim.jobs import JobSpec
from o2ksim.table import column


def specs_from_frame(jobs: Any) -> list[JobSpec]:
    """Job requests from a table with the SWF columns (see :data:`o2ksim.workloads.swf.SWF_FIELDS`):
    a DataFrame or a :class:`~o2ksim.table.ColumnTable`."""
    req_p = column(jobs, "req_procs", np.int64)
    procs = np.where(req_p > 0, req_p, column(jobs, "alloc_procs", np.int64))
    run = column(jobs, "run_time", np.float64)
    req_t = column(jobs, "req_time", np.float64)
    req_time = np.where(req_t > 0, req_t, np.maximum(run, 0.0))
    req_mem = column(jobs, "req_mem", np.int64)
    mem = np.where((req_mem > 0) & (procs > 0), req_mem * np.maximum(procs, 0), 0)
    used = column(jobs, "used_mem", np.int64)
    used_mem = np.where((used > 0) & (procs > 0), used * np.maximum(procs, 0), 0)
    # positional, in JobSpec's field order: job_id, submit, procs, mem, req_time,
    # run_time, used_mem, user, queue
    columns = (
        column(jobs, "job_id", np.int64).tolist(),
        column(jobs, "submit", np.float64).tolist(),
        procs.tolist(),
        mem.tolist(),
        req_time.tolist(),
        run.tolist(),
        used_mem.tolist(),
        column(jobs, "user", np.int64).tolist(),
        column(jobs, "queue", np.int64).tolist(),
    )
    setters = _slot_setters()
    if setters is None:
        return list(map(JobSpec, *columns))  # map avoids a keyword call per job
    new = object.__new__
    s0, s1, s2, s3, s4, s5, s6, s7, s8 = setters
    specs = []
    append = specs.append
    for a, b, c, d, e, f, g, h, i in zip(*columns, strict=True):
        spec = new(JobSpec)
        s0(spec, a), s1(spec, b), s2(spec, c), s3(spec, d), s4(spec, e)
        s5(spec, f), s6(spec, g), s7(spec, h), s8(spec, i)
        append(spec)
    return specs


_SPEC_FIELDS = ("job_id", "submit", "procs", "mem", "req_time", "run_time", "used_mem", "user", "queue")


def _slot_setters() -> list[Callable[[Any, Any], None]] | None:
    """The slot setters of :class:`JobSpec`'s fields, when its constructor does nothing
    but store them; else ``None``.

    A frozen dataclass stores each field through ``object.__setattr__``: about
    1.2 µs per job for nine fields, a third of the set-up of a run (40 ms of
    the 28,476 KTH-SP2 jobs).  Filling the slots of a new instance directly
    makes the same objects in half the time.  This is only done while
    ``JobSpec`` is exactly the plain dataclass it is written as (these nine
    fields in this order, each a slot, no ``__post_init__``); a compiled or
    changed ``JobSpec`` is built by calling it.  ``tests/test_run_path_fast.py``
    compares the two.
    """
    if (
        not dataclasses.is_dataclass(JobSpec)
        or tuple(f.name for f in dataclasses.fields(JobSpec)) != _SPEC_FIELDS
        or hasattr(JobSpec, "__post_init__")
        or JobSpec.__new__ is not object.__new__
    ):
        return None
    descriptors = [JobSpec.__dict__.get(name) for name in _SPEC_FIELDS]
    if not all(type(d).__name__ == "member_descriptor" for d in descriptors):
        return None
    return [d.__set__ for d in descriptors]  # type: ignore[union-attr]
