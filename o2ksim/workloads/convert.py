"""Turn a trace (SWF columns) into the engine's job requests (SPEC §2, §4).

Field choices, the same for every trace:

* processors = requested (field 8), else allocated (field 5);
* memory = requested KB per processor (field 10) x processors; 0 (not
  constrained) when unknown;
* requested runtime = field 9; when unknown (-1) the scheduler is told the
  actual runtime (the usual convention for traces without estimates); when a
  runtime-estimate scenario replaced it
  (:func:`~o2ksim.workloads.transforms.apply_estimates`), field 9 is the
  estimate and the column ``requested_time`` the user's ``R``, kept as
  ``JobSpec.requested_time`` (``inf`` when unknown: no kill at it, nothing
  to raise a prediction to);
* actual runtime = field 4; a job with unknown runtime or processors is kept
  and reported as rejected with the reason, never dropped silently.
"""

from __future__ import annotations

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
    # run_time, used_mem, user, queue[, requested_time]
    columns: tuple[list[Any], ...] = (
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
    if "requested_time" in jobs.columns:
        user_req = column(jobs, "requested_time", np.float64)
        columns += (np.where(user_req > 0, user_req, np.inf).tolist(),)
    return list(map(JobSpec, *columns))  # positional: no keyword call per job
