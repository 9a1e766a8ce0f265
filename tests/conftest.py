"""Helpers shared by the test modules (import them with ``from conftest import ...``).

Jobs are written in seconds and gigabytes as a reader would work them out by
hand; ``starts`` reads a result back as ``{job_id: start}``.
"""

from __future__ import annotations

import contextlib
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from o2ksim.folder_lock import LOCK_NAME
from o2ksim.jobs import Job, JobSpec, JobState
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
    """``{job_id: start}`` of a :class:`~o2ksim.run.results.Result`."""
    return {int(j): s for j, s in zip(result.jobs["job_id"], result.jobs["start"], strict=True)}


def one_host(procs, mem_gb=None, name="m") -> MachineSpec:
    """A machine of one host (memory unconstrained unless ``mem_gb`` is given)."""
    mem = math.inf if mem_gb is None else round(mem_gb * KB_PER_GB)
    return MachineSpec(name, (HostSpec(name, procs, mem),))


def presets_of_kind(kind: str) -> list[str]:
    """The names of every shipped preset of policy kind ``kind``, sorted."""
    return sorted(name for name, p in presets().items() if p.kind == kind)


IMMEDIATE_PRESETS = sorted(
    name
    for name, p in presets().items()
    if p.kind == "backfill" and p.params.get("immediate_service", "off") != "off"
)  # backfill with immediate service (preemptive or trial runs): tests/test_immediate*.py
BACKFILL_PRESETS = [n for n in presets_of_kind("backfill") if n not in IMMEDIATE_PRESETS]


def running_job(job_id, procs, mem, start, req, host="h") -> Job:
    """A job running on ``host`` since ``start`` with ``procs`` processors and ``mem`` KB,
    asking ``req`` seconds (its actual runtime, 10 x ``req``, is never reached in a test)."""
    running = Job(JobSpec(job_id, 0.0, procs, mem, req, 10 * req))
    running.state = JobState.RUNNING
    running.host, running.alloc_procs, running.alloc_mem = host, procs, mem
    running.first_start = running.last_start = running.segment_start = start
    return running


THREE_HOSTS = MachineSpec(
    "three",
    (
        HostSpec("a", 16, 8 * KB_PER_GB),
        HostSpec("b", 16, 4 * KB_PER_GB),
        HostSpec("c", 8, 8 * KB_PER_GB),
    ),
)
"""Three unequal hosts (processors and memory) for the property tests of the backfill pass."""


def bursty_jobs(draw, st, max_jobs, mems_mb) -> list[JobSpec]:
    """Hypothesis: bursty arrivals of jobs longer than the gaps between them, so queues grow
    deep (call inside an ``@st.composite``; ``mems_mb``: the memory requests to draw from)."""
    n = draw(st.integers(1, max_jobs))
    t = 0
    jobs = []
    for i in range(n):
        t += draw(st.sampled_from([0, 0, 1, 5, 30]))
        procs = draw(st.sampled_from([1, 1, 2, 3, 4, 8, 12, 16]))
        run = draw(st.integers(0, 900))
        req = draw(st.sampled_from([run, 2 * run + 1, max(1, run // 2), 1000]))
        mem = draw(st.sampled_from(mems_mb)) * 1024
        jobs.append(JobSpec(i + 1, float(t), procs, mem, float(req), float(run)))
    return jobs


def small_host_view(version, running, *, live=True):
    """A view of host ``h`` (8 processors, 100 KB) running ``running`` at ``version``.

    ``live``: the running jobs as the engine hands them (a dict's live values, which
    :func:`~o2ksim.policies.backfill.host_releases` can update from); otherwise a plain
    list, which makes it rebuild.
    """
    from o2ksim.engine.snapshot import HostView

    free_p = 8 - sum(j.alloc_procs for j in running)
    free_m = 100 - sum(j.alloc_mem for j in running)
    jobs = {j.id: j for j in running}.values() if live else running
    return HostView(HostSpec("h", 8, 100), free_p, free_m, jobs, (), version=version)


DRAIN_JOBS = [(1, 0, 6, 100), (2, 0, 4, 100), (3, 60, 8, 50), (4, 70, 2, 20)]
"""(job, submit, procs, runtime = request) of the hand-worked drain example on 10 processors."""


def write_drain_trace(path: Path) -> Path:
    """Write :data:`DRAIN_JOBS` as an SWF file on a 10-processor machine; returns ``path``."""
    path.write_text(
        "; MaxProcs: 10\n"
        + "\n".join(f"{j} {s} -1 {r} {p} -1 -1 {p} {r} -1 1 1 1 -1 -1 -1 -1 -1"
                    for j, s, p, r in DRAIN_JOBS)
        + "\n"
    )  # fmt: skip
    return path


def backfill_options(reservations, reservation_kind, sliding, **other) -> dict:
    """Backfill parameters as a user may give them: without reservations (``reservations
    = 0``) the reservation kind and sliding change nothing and are refused, so they are
    left out (the defaults then stand)."""
    held = {} if reservations == 0 else {"reservation_kind": reservation_kind, "sliding": sliding}
    return {**other, "reservations": reservations, **held}


@contextlib.contextmanager
def folder_held_elsewhere(
    out: Path, env: dict[str, str], holds: str = "from o2ksim.outfiles import claim as hold"
) -> Iterator[int]:
    """Another process holding the folder ``out`` while the block runs (``hold(out)``, a
    context manager ``holds`` imports: :func:`o2ksim.outfiles.claim` unless told); yields its
    pid.  Killed after it: the operating system releases its lock."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         f"import sys, time\nfrom pathlib import Path\n{holds}\n"
         "with hold(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)", str(out)],
        env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield holder.pid
    finally:
        holder.kill()
        holder.wait()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) with its bytes: what a failed or
    interrupted command must leave as it was."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def one_line(err: str) -> str:
    """The one line a command printed on stderr (asserted: one line, no traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def signal_once_locked(proc: subprocess.Popen[str], folder: Path, sig: int, wait: float = 30) -> str:
    """Send ``sig`` to ``proc`` once it holds ``folder`` (its lock file is there), and return
    what it printed on stderr; asserted: it ended with exit code 128 + ``sig``."""
    deadline = time.monotonic() + wait
    while not (folder / LOCK_NAME).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    return err
