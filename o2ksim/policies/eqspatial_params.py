"""EQspatial-MinInterval's parameters and decision-log text (T§3.2.3, T§6.1), apart from its pass.

Besides the thesis's own parameters (MinInterval, the ``/>50hr`` threshold and
the immediate service of T§3.2.2), four choices the text leaves open are
parameters, so that their effect can be measured
(``docs/background/fidelity/eqspatial.md``).  The defaults are o2ksim's
original reading, except ``new_job_service``: ``immediate`` is the reading
that reproduces T§6.1's slowdown claims (default since issue 23):

* ``new_job_service``: what a job placed on a host that may not repartition
  yet, with no free processor for it, gets.  ``wait``: nothing
  until the host's next repartitioning ("the job can run on the currently
  free processors (if any) until the processors can be repartitioned
  again").  ``immediate`` (default): the immediate-service trial of T§3.2.2 ("The key
  algorithms of EQspatial are the host placement policy and the immediate
  service"), on its own host, in the memory it holds there; if it does not
  finish in the quantum it is killed and stays placed, starting at the
  host's next repartitioning.
* ``long_job_placement``: how a job past the ``/>50hr`` threshold counts in
  the placement ratio.  ``share`` (default): like any other job (its request
  in the denominator).  ``deduct``: like a catching-up job, which also gets
  its full request (T§3.2.3's note: "the processors occupied by these jobs
  are deducted from the total number of processors available on the host and
  the requested processors of these jobs are excluded").
* ``long_job_grant``: how "as long as each other job assigned to the host has
  at least one processor to run on" limits a ``/>50hr`` job.  ``partial``
  (default): a cap -- it gets its request, but no more than leaves one
  processor for every other job.  ``whole``: a condition -- its whole request
  if that leaves one for every other job, otherwise an equal share.
* ``long_job_clock``: "the jobs that have been running for longer than 50
  hours".  ``wall`` (default): 50 hours of wall time since the job started,
  on whatever share it had.  ``work``: once it has done 50 hours of work on
  its requested processors (the thesis's runtime: T§3.5 measures runtime
  "on the requested number of processors"), so a job stretched by sharing
  is not privileged before it has done that much.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from dataclasses import replace

from o2ksim.clock import clock
from o2ksim.policies import immediate
from o2ksim.policies.base import Param
from o2ksim.policies.equipartition import HostState
from o2ksim.policies.immediate.settings import amount_check
from o2ksim.units import parse_duration

NEW_JOB_SERVICE = ("wait", "immediate")
LONG_JOB_PLACEMENT = ("share", "deduct")
LONG_JOB_GRANT = ("partial", "whole")
LONG_JOB_CLOCK = ("wall", "work")

PARAMS: dict[str, Param] = {
    "min_interval": Param(
        (int, float, str),
        "5m",
        "minimum time between two processor repartitionings on one host "
        "(seconds or e.g. '5m'; 0 = repartition at every arrival and departure)",
        check=amount_check(parse_duration, positive=False),
        check_help="must be a duration >= 0 (seconds, or e.g. '5m')",
        option=True,
        metavar="DURATION",
    ),
    "long_job_threshold": Param(
        (int, float, str),
        None,
        "jobs that have run longer than this keep their full request while every other "
        "job on the host has a processor (EQspatial/>50hr: '50h'); unset = off",
        check=amount_check(parse_duration, positive=True),
        check_help="must be a positive duration (seconds, or e.g. '50h')",
        option=True,
        metavar="DURATION",
    ),
    "new_job_service": Param(
        str,
        "immediate",
        "a job placed on a host that may not repartition yet and has no free processor for it: "
        "wait for the next repartitioning, or get the immediate-service trial (T§3.2.2)",
        choices=NEW_JOB_SERVICE,
    ),
    "long_job_placement": Param(
        str,
        "share",
        "how a job past long_job_threshold counts in the placement ratio: like any job (share), "
        "or like a catching-up job, its processors deducted from the host's (deduct)",
        choices=LONG_JOB_PLACEMENT,
    ),
    "long_job_grant": Param(
        str,
        "partial",
        "a job past long_job_threshold gets its request but at most what leaves every other job "
        "one processor (partial), or its whole request only if that leaves them one each, else "
        "an equal share (whole)",
        choices=LONG_JOB_GRANT,
    ),
    "long_job_clock": Param(
        str,
        "wall",
        "when a job has 'been running for longer than' long_job_threshold: wall time since its "
        "start (wall), or once it has done that long of work on its request (work)",
        choices=LONG_JOB_CLOCK,
    ),
    # the immediate service of T§3.2.2 for jobs no host has the memory for (T§3.2.3)
    **immediate.PARAMS,
    "immediate_service": replace(
        immediate.PARAMS["immediate_service"],
        default="preemptive",
        help="immediate service for a job no host has the memory for (T§3.2.3 -> T§3.2.2): "
        "preemptive | soon (free processors only) | off (it just waits)",
    ),
}


def repartition_note(
    h: HostState,
    target: Mapping[Hashable, int],
    catching_up: Collection[int],
    long: Collection[int],
    threshold: float | None,
    min_interval: float,
    now: float,
    counted: bool,
) -> str:
    """The decision log's reason for a recomputation of ``h``'s shares (``o2ksim explain``)."""
    why = ", ".join(h.reasons) or "timer"
    equal = [target[j] for j in h.jobs if j in target and j not in catching_up and j not in long]
    if counted:
        text = f"repartitioning {h.name} ({why})"
    else:
        text = f"shares of {h.name} ({why}) need no running job resized"
    if equal:
        lo, hi = min(equal), max(equal)
        text += f": equal share {lo}" if lo == hi else f": equal share {lo}-{hi}"
    held = [f"J{j} catching up" for j in h.jobs if j in catching_up]
    held += [f"J{j} running over {(threshold or 0) / 3600:g} h" for j in h.jobs if j in long]
    if held:
        text += "; full request for " + ", ".join(held)
    if counted and min_interval > 0:
        text += f"; next repartitioning of {h.name} at {clock(now + min_interval)} at the earliest"
    return text
