"""NCSA-LSF*: the static multi-class priority scheduler of the NCSA Origin 2000 (T§3.1).

The thesis's baseline (T§3.1, Tables 3-4; SPEC §3.2).  Every job is put in a
*time class* by its requested runtime (``vst`` <= 5 h, ``st`` <= 50 h,
``mt`` <= 200 h, ``lt`` <= 400 h) and a *size class* by its requested
processors and memory (``sj`` <= 8 and 2 GB, ``mj`` <= 16 and 4 GB, ``lj`` <= 64
and 16 GB).  The class definitions, the per-host priorities and limits and the
system-wide limits are data: the ``[lsf]`` and ``[host.lsf]`` tables of the
machine file (``hosts/o2k.toml``), so a site retunes them without code.

One scheduling pass repeats, until nothing more starts:

1. *draining* (T§3.1, last paragraphs): a job that has waited its time class's
   drain wait gets draining priority on a random host (the run's generator)
   that is drained for no other job and where its size class has scheduling
   priority; a drained host starts nothing but that job.  The job loses
   draining when a system-wide (or user) limit that applies to it is reached,
   and moves to another host when its size class loses priority on the drained
   host (a higher size class has an eligible waiting job there);
2. *nomination*: each host walks its size classes in priority order (eir:
   ``lj > mj > sj``), inside each class the priority time classes (``vst``)
   first and then first-come first-served, skipping jobs that are over a
   limit; the first job that fits now is the host's candidate.  A job of the
   class with priority that does not fit *blocks* the lower size classes
   (other jobs of its own size class may still start); a ``vst`` job blocks
   only ``vst`` jobs of lower size classes (``vst_blocking``); an arriving job
   obeys the blocking too, unless ``arrival_blocking = "ignore"`` (an ablation:
   it then starts at its arrival wherever its class is served and fits);
3. *start*: the earliest submitted candidate starts, on the host with the most
   free processors among those that nominated it (the arrival rule).

``docs/background/policies/ncsa-lsf.md`` gives the rules with a worked example
and every interpretation made where the thesis is silent.
:func:`o2ksim.analysis.lsf_classes.lsf_class_table` gives the per-class
average and maximum wait of the thesis's Figures 5-6 for any run.
"""

from __future__ import annotations

from o2ksim.policies.lsf.classes import (
    DOC,
    HOUR,
    UNCLASSIFIED,
    LSFConfig,
    LSFHost,
    label,
    lsf_config,
)
from o2ksim.policies.lsf.policy import NCSALSF, WAKE_TAG

__all__ = [
    "DOC",
    "HOUR",
    "NCSALSF",
    "UNCLASSIFIED",
    "WAKE_TAG",
    "LSFConfig",
    "LSFHost",
    "label",
    "lsf_config",
]  # fmt: skip
