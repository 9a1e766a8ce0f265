"""Site policies for validation: what the trace headers say about each site's scheduler.

The presets in ``policies/`` named after a site (``kth-sp2-easy``,
``hpc2n-maui``, ``sdsc-blue-queues``) replay a trace under the scheduler its
header names, with the assumptions stated here and in
``docs/guides/validation.md``; nothing in them is tuned to the trace.

* KTH-SP2 ("uses the EASY scheduler"): EASY is FCFS order with one
  reservation for the first waiting job and backfilling (Lifka 1995) --
  exactly ``fcfs-backfill``.
* HPC2N ("uses MAUI scheduler"): Maui's default priority is the queue time
  alone (``QUEUETIMEWEIGHT 1``, every other weight 0) with backfill and one
  reservation for the top job (``RESERVATIONDEPTH 1``); the header names no
  fair-share or other weights, so the preset assumes the defaults -- again
  the order and reservation of ``fcfs-backfill``.
* SDSC-BLUE (queues ``express`` -- 8 nodes for 2 hours --, ``high``,
  ``normal``, ``low``, ``standby``): the job's queue (SWF field 15) ranks it,
  :func:`sdsc_blue_queues`, FCFS within a rank, with one reservation.  The
  header gives the queues and their limits, not their order; the assumed
  order is the one their names say: express, then high, then normal (and
  every queue the header does not rank: interactive, the Diag queues, ...),
  then low, then standby.
"""

from __future__ import annotations

import numpy as np

from o2ksim.policies.priority import QueueView, static_priority

__all__ = ["SDSC_BLUE_RANK", "sdsc_blue_queues"]

SDSC_BLUE_RANK = {1: 4.0, 2: 3.0, 3: 2.0, 4: 1.0, 5: 0.0}
"""SDSC-BLUE queue number (header ``Queue:`` lines) -> rank, higher first:
express 1, high 2, normal 3, low 4, standby 5; any other queue ranks as normal."""

_NORMAL = SDSC_BLUE_RANK[3]


@static_priority  # a queue's rank, whatever the time: kept as an index, not ranked every pass
def sdsc_blue_queues(q: QueueView) -> np.ndarray:
    """Score of each waiting job: the rank of its SDSC-BLUE queue (ties stay in submission order)."""
    get = SDSC_BLUE_RANK.get
    return np.fromiter((get(j.spec.queue, _NORMAL) for j in q.jobs), dtype=float, count=len(q))
