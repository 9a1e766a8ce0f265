"""The read-only view of the system a policy decides from."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from o2ksim.jobs import Job
from o2ksim.machine import HostSpec, MachineSpec

if TYPE_CHECKING:
    from o2ksim.engine.queue_index import QueueIndex
    from o2ksim.engine.releases import ReleaseIndex


@dataclass(frozen=True, slots=True)
class HostView:
    """One host at the moment of the pass."""

    spec: HostSpec
    free_procs: int
    free_mem: float
    running: Collection[Job]  # RUNNING jobs on the host (in start order)
    preempted: Collection[Job]  # PREEMPTED jobs holding memory on the host
    version: int = 0  # changes whenever an allocation on the host changes (for caches)
    releases: ReleaseIndex | None = None  # running jobs by expected release (engine-kept)
    name: str = ""  # the host's name (``spec.name``; filled in when not given)
    down_procs: int = 0  # processors down or draining (an availability period; not in free_procs)

    def __post_init__(self) -> None:
        if not self.name:  # a plain attribute, not a property: policies read it in inner loops
            object.__setattr__(self, "name", self.spec.name)


@dataclass(frozen=True, slots=True)
class Timer:
    """A ``WakeAt`` that has come due."""

    time: float
    host: str | None
    tag: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything a policy may look at in one scheduling pass.

    ``queue`` holds the QUEUED jobs in submission order (a live, read-only view:
    iterate it during ``schedule`` and do not keep it).  ``hosts`` is in machine
    order and ``host_by_name`` indexes it.  ``timers`` are the policy's own
    wake-ups that came due at this instant; ``arrived`` and ``departed`` are the
    jobs that arrived / gave back their resources (ended, were killed, or a
    trial run went back to the queue) since the previous pass; ``left`` the
    jobs that left the queue since then (started, or killed or rejected while
    waiting), so that a policy can keep a set of waiting jobs up to date
    without scanning it.  ``interval`` is the
    run's fixed scheduling cycle (``None``: a pass at every event).
    ``queue_index`` is the same queue as numpy columns
    (:class:`~o2ksim.engine.queue_index.QueueIndex`), for policies that scan
    it; ``None`` when the snapshot was built by hand or its queue was changed.
    """

    now: float
    queue: Collection[Job]
    hosts: tuple[HostView, ...]
    host_by_name: Mapping[str, HostView]
    machine: MachineSpec
    timers: tuple[Timer, ...] = ()
    arrived: tuple[Job, ...] = ()
    departed: tuple[Job, ...] = ()
    left: tuple[Job, ...] = ()
    explain: bool = False
    interval: float | None = None  # the run's fixed scheduling interval, if any
    queue_index: QueueIndex | None = None

    def running(self) -> list[Job]:
        """All running jobs, host by host."""
        return [j for h in self.hosts for j in h.running]
