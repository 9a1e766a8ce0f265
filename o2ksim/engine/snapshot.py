"""The read-only view of the system a policy decides from."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
    jobs that arrived / left since the previous pass.  ``interval`` is the
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
    explain: bool = False
    interval: float | None = None  # the run's fixed scheduling interval, if any
    queue_index: QueueIndex | None = None

    def running(self) -> list[Job]:
        """All running jobs, host by host."""
        return [j for h in self.hosts for j in h.running]


# -- the engine's constructors -------------------------------------------------------------
# The engine builds a snapshot at every pass and a host view whenever a host changed.  A
# frozen dataclass's ``__init__`` stores each field through ``object.__setattr__`` looked up
# by name; these store through the slots' own descriptors, about 40% faster, and build the
# same objects (equal to, and indistinguishable from, the dataclass constructor's).
_new = object.__new__


def _setters(cls: type, *names: str) -> tuple[Any, ...]:
    """The slot setters of ``cls``'s fields ``names``, by name; every field must be named once."""
    fields = [f.name for f in dataclasses.fields(cls)]
    if sorted(names) != sorted(fields):
        raise AssertionError(f"{cls.__name__}: the engine's constructor must set {fields}")
    return tuple(cls.__dict__[name].__set__ for name in names)


(
    _view_spec, _view_free_procs, _view_free_mem, _view_running, _view_preempted,
    _view_version, _view_releases, _view_name,
) = _setters(
    HostView, "spec", "free_procs", "free_mem", "running", "preempted", "version", "releases", "name"
)  # fmt: skip
(
    _snap_now, _snap_queue, _snap_hosts, _snap_host_by_name, _snap_machine, _snap_timers,
    _snap_arrived, _snap_departed, _snap_explain, _snap_interval, _snap_queue_index,
) = _setters(
    Snapshot, "now", "queue", "hosts", "host_by_name", "machine", "timers", "arrived", "departed",
    "explain", "interval", "queue_index",
)  # fmt: skip


def engine_host_view(
    spec: HostSpec,
    free_procs: int,
    free_mem: float,
    running: Collection[Job],
    preempted: Collection[Job],
    version: int,
    releases: ReleaseIndex | None,
    name: str,
) -> HostView:
    """``HostView(...)`` with every field given (``name`` = ``spec.name``), built faster."""
    view = _new(HostView)
    _view_spec(view, spec)
    _view_free_procs(view, free_procs)
    _view_free_mem(view, free_mem)
    _view_running(view, running)
    _view_preempted(view, preempted)
    _view_version(view, version)
    _view_releases(view, releases)
    _view_name(view, name)
    return view


def engine_snapshot(
    now: float,
    queue: Collection[Job],
    hosts: tuple[HostView, ...],
    host_by_name: Mapping[str, HostView],
    machine: MachineSpec,
    timers: tuple[Timer, ...],
    arrived: tuple[Job, ...],
    departed: tuple[Job, ...],
    explain: bool,
    interval: float | None,
    queue_index: QueueIndex | None,
) -> Snapshot:
    """``Snapshot(...)`` with every field given, built faster (once per pass)."""
    snap = _new(Snapshot)
    _snap_now(snap, now)
    _snap_queue(snap, queue)
    _snap_hosts(snap, hosts)
    _snap_host_by_name(snap, host_by_name)
    _snap_machine(snap, machine)
    _snap_timers(snap, timers)
    _snap_arrived(snap, arrived)
    _snap_departed(snap, departed)
    _snap_explain(snap, explain)
    _snap_interval(snap, interval)
    _snap_queue_index(snap, queue_index)
    return snap
