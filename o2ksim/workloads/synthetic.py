"""The one place generators turn model draws into a :class:`~o2ksim.workloads.swf.Trace`.

Every generator needs the same two things: one independent random stream per
model component, all from one seed (so the same seed gives the same trace,
and changing one component's parameters leaves the others' draws unchanged),
and an SWF table plus header on the model's clock.  :func:`streams` and
:func:`synthetic_trace` do both, so the generators hold only their model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from o2ksim.workloads.swf import SWFHeader, Trace, block_from_columns

__all__ = ["streams", "synthetic_trace"]


def streams(seed: int, names: Iterable[str]) -> dict[str, np.random.Generator]:
    """One child generator per name, spawned from ``SeedSequence(seed)`` in the order given."""
    names = tuple(names)
    children = np.random.SeedSequence(seed).spawn(len(names))
    return {name: np.random.default_rng(s) for name, s in zip(names, children, strict=True)}


def synthetic_trace(
    columns: dict[str, Any],
    *,
    computer: str,
    installation: str,
    start_time: int,
    procs: int,
    notes: Sequence[str] = (),
    **header: Any,
) -> Trace:
    """A trace of a generated workload: SWF columns by field name, a UTC header on the model clock.

    *columns* maps SWF field names (``submit``, ``run_time``, ``req_procs``...)
    to arrays or scalars (:func:`~o2ksim.workloads.swf.jobs_from_columns`; job
    numbers follow submit order, unnamed fields are -1).  *header* holds any
    further :class:`~o2ksim.workloads.swf.SWFHeader` fields (``max_runtime``,
    ``queues``...).  The caller (:func:`o2ksim.workloads.models.generate`)
    stamps the model, seed and parameters into the header.
    """
    n = len(columns["submit"])
    block = block_from_columns(n, **columns)
    head = SWFHeader(
        version="2.2",
        computer=computer,
        installation=installation,
        unix_start_time=int(start_time),
        time_zone=0,
        time_zone_string="UTC",
        max_procs=int(procs),
        max_nodes=int(procs),
        notes=list(notes),
        **header,
    )
    return Trace(None, head, None, block=block)  # the DataFrame is built when asked for
