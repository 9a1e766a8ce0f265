"""EQspatial-MinInterval's parameters (T§3.2.3, T§6.1), kept apart from the policy's pass.

Besides the thesis's own parameters (MinInterval, the ``/>50hr`` threshold and
the immediate service of T§3.2.2), three choices the text leaves open are
parameters, so that their effect can be measured
(``docs/background/fidelity/eqspatial.md``); their defaults are the reading
o2ksim has always used:

* ``new_job_service``: what a job placed on a host that may not repartition
  yet, with no free processor for it, gets.  ``wait`` (default): nothing
  until the host's next repartitioning ("the job can run on the currently
  free processors (if any) until the processors can be repartitioned
  again").  ``immediate``: the immediate-service trial of T§3.2.2 ("The key
  algorithms of EQspatial are the host placement policy and the immediate
  service"); if it does not finish in the quantum it is killed and stays
  placed, starting at the host's next repartitioning.
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
"""

from __future__ import annotations

from dataclasses import replace

from o2ksim.policies import immediate
from o2ksim.policies.base import Param
from o2ksim.policies.immediate.settings import amount_check
from o2ksim.units import parse_duration

NEW_JOB_SERVICE = ("wait", "immediate")
LONG_JOB_PLACEMENT = ("share", "deduct")
LONG_JOB_GRANT = ("partial", "whole")

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
        "wait",
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
    # the immediate service of T§3.2.2 for jobs no host has the memory for (T§3.2.3)
    **immediate.PARAMS,
    "immediate_service": replace(
        immediate.PARAMS["immediate_service"],
        default="preemptive",
        help="immediate service for a job no host has the memory for (T§3.2.3 -> T§3.2.2): "
        "preemptive | soon (free processors only) | off (it just waits)",
    ),
}
