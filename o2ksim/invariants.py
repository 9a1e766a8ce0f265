"""Checks every correct run must pass, used by the tests and available to users.

:func:`violations` returns human-readable descriptions of what is wrong with a
result (empty when nothing is):

* a host never holds more processors or memory than it has;
* no job ever holds more processors than it requested;
* no job starts before it is submitted;
* every input job appears in the output exactly once;
* no job ends before it starts, and no allocation segment ends before it starts;
* every allocation is on a host of the machine;
* with the run's periods of processors down (an availability file), no job
  starts on processors down or draining;
* work is conserved: a completed job that was never restarted received exactly
  ``run_time * procs`` processor-seconds (across preemptions and resizes);
  without segments, such a job's span ``end - start`` is at least its runtime,
  and exactly its runtime when it was never interrupted.

Users reach these checks with ``o2ksim run --check``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from o2ksim.availability import Outage
from o2ksim.errors import O2KSimError
from o2ksim.machine import KB_PER_MB, MachineSpec

JOB_COLUMNS = ("job_id", "submit", "start", "end", "procs")
SEGMENT_COLUMNS = ("job_id", "host", "start", "end", "procs", "mem")


def _check_arguments(jobs: object, segments: object, machine: object) -> None:
    """One-line refusals for arguments of the wrong kind (not an AttributeError inside)."""
    for name, table, needed in (("jobs", jobs, JOB_COLUMNS), ("segments", segments, SEGMENT_COLUMNS)):
        if name == "segments" and table is None:
            continue
        if not isinstance(table, pd.DataFrame):
            raise O2KSimError(
                f"violations: {name} must be a DataFrame (result.{name}), got {type(table).__name__}"
            )
        missing = [c for c in needed if c not in table.columns]
        if missing:
            raise O2KSimError(f"violations: {name} lacks the column(s) {', '.join(missing)}")
    if not isinstance(machine, MachineSpec):
        raise O2KSimError(
            f"violations: machine must be a MachineSpec (result.machine or load_machine(name)), "
            f"got {type(machine).__name__}"
        )


def violations(
    jobs: pd.DataFrame,
    segments: pd.DataFrame | None,
    machine: MachineSpec,
    input_ids: Iterable[int] | None = None,
    *,
    tolerance: float = 1e-6,
    availability: Sequence[Outage] = (),
) -> list[str]:
    """Everything that is wrong with one run's ``jobs`` table and allocation ``segments``.

    With ``availability`` (the run's periods of processors down), an
    allocation that begins inside a period must leave the host's busy
    processors within its size minus those down then: the drained processors
    take no new job (jobs already running when the period began may keep
    them until they end).
    """
    _check_arguments(jobs, segments, machine)
    problems: list[str] = []
    if segments is None:  # no segments: the per-host checks have nothing to look at
        segments = pd.DataFrame(
            {"job_id": pd.Series(dtype="int64"), "host": pd.Series(dtype=object),
             "start": pd.Series(dtype=float), "end": pd.Series(dtype=float),
             "procs": pd.Series(dtype="int64"), "mem": pd.Series(dtype=float)}
        )  # fmt: skip
    if input_ids is not None:
        expected = sorted(int(i) for i in input_ids)
        got = sorted(int(i) for i in jobs["job_id"])
        if got != expected:
            missing = set(expected) - set(got)
            dup = len(got) - len(set(got))
            problems.append(
                f"jobs in {len(expected)}, out {len(got)}: {len(missing)} missing, {dup} duplicated"
            )
    if not segments.empty:
        # per job id: a job repeated in the table (reported above) must not stop the check
        requested = jobs.groupby("job_id")["procs"].min()
        held = segments.groupby("job_id")["procs"].max()
        over = held[held > requested.reindex(held.index).fillna(np.inf)]
        problems.extend(
            f"job {j} holds {int(p)} processors, requested {int(requested[j])}"
            for j, p in over.head(5).items()
        )
    early = jobs.loc[jobs["start"] < jobs["submit"]]
    problems.extend(f"job {j} starts before it is submitted" for j in early["job_id"].head(5))
    backwards = jobs.loc[jobs["end"] < jobs["start"] - tolerance]
    problems.extend(f"job {j} ends before it starts" for j in backwards["job_id"].head(5))
    if not segments.empty:
        bad_seg = segments.loc[segments["end"] < segments["start"] - tolerance]
        problems.extend(
            f"job {j}: an allocation segment ends before it starts" for j in bad_seg["job_id"].head(5)
        )
        names = {h.name for h in machine.hosts}
        stray = segments.loc[~segments["host"].isin(names)]
        for jid, host in zip(stray["job_id"].head(5), stray["host"].head(5), strict=True):
            problems.append(f"job {jid} holds processors on unknown host {host!r}")

    for host in machine.hosts:
        seg = segments.loc[segments["host"] == host.name]
        if seg.empty:
            continue
        times = np.concatenate([seg["start"].to_numpy(float), seg["end"].to_numpy(float)])
        procs = np.concatenate([seg["procs"].to_numpy(float), -seg["procs"].to_numpy(float)])
        mem = np.concatenate([seg["mem"].to_numpy(float), -seg["mem"].to_numpy(float)])
        # at equal times releases (negative) come first
        order = np.lexsort((procs + mem * 1e-12, times))
        used_p = np.cumsum(procs[order])
        used_m = np.cumsum(mem[order])
        if used_p.max() > host.procs + tolerance:
            at = times[order][int(np.argmax(used_p))]
            problems.append(
                f"host {host.name}: {used_p.max():g} processors in use at t={at:g} (has {host.procs})"
            )
        if availability:
            problems.extend(_down_problems(host.name, host.procs, seg, times[order], used_p, availability))
        cap_mb = host.memory / KB_PER_MB
        if np.isfinite(cap_mb) and used_m.max() > cap_mb * (1 + tolerance):
            at = times[order][int(np.argmax(used_m))]
            problems.append(
                f"host {host.name}: {used_m.max():g} MB in use at t={at:g} (has {cap_mb:g})"
            )

    done = jobs.loc[(jobs["status"] == "completed") & (jobs["restarts"] == 0)]
    if not done.empty and segments.empty:
        span = (done["end"] - done["start"]).to_numpy(float)
        need = done["run_time"].to_numpy(float)
        interrupted = np.zeros(len(done), dtype=bool)
        for col in ("preemptions", "resizes"):
            if col in done:
                interrupted |= done[col].to_numpy() > 0
        plain = ~interrupted
        bad = (span < need - tolerance * np.maximum(need, 1.0) - 1e-6) | (
            plain & (np.abs(span - need) > tolerance * np.maximum(need, 1.0) + 1e-6)
        )
        for jid, g, n in zip(done["job_id"][bad].head(5), span[bad][:5], need[bad][:5], strict=False):
            problems.append(f"job {jid} ran {g:g} s from start to end, needs {n:g} s")
    if not done.empty and not segments.empty:
        received = (
            (segments["procs"] * (segments["end"] - segments["start"]))
            .groupby(segments["job_id"])
            .sum()
        )
        need = (done["run_time"] * done["procs"]).to_numpy(float)
        got = received.reindex(done["job_id"]).fillna(0.0).to_numpy(float)
        bad = np.abs(got - need) > tolerance * np.maximum(need, 1.0) + 1e-6
        for jid, g, n in zip(
            done["job_id"][bad].head(5), got[bad][:5], need[bad][:5], strict=False
        ):
            problems.append(f"job {jid} received {g:g} processor-seconds of work, needs {n:g}")
    return problems


def _down_problems(
    host: str,
    size: int,
    seg: pd.DataFrame,
    times: np.ndarray,
    used: np.ndarray,
    availability: Sequence[Outage],
) -> list[str]:
    """Allocations begun inside a period down that leave more busy than ``size`` minus those down.

    ``seg``: the host's allocation segments; ``times`` and ``used``: its
    allocation events in time order (releases first at one time) and the busy
    processors after each.  A segment that continues its job's previous one
    at the same instant (a resize) is not a new allocation.
    """
    periods = [o for o in availability if o.host == host]
    if not periods:
        return []
    ends = set(zip(seg["job_id"].tolist(), seg["end"].tolist(), strict=True))
    out: list[str] = []
    for job_id, t, p in zip(seg["job_id"].tolist(), seg["start"].tolist(), seg["procs"].tolist(), strict=True):
        if p <= 0 or (job_id, t) in ends:
            continue
        down = sum(o.procs for o in periods if o.start <= t < o.end)
        busy = used[int(np.searchsorted(times, t, side="right")) - 1]
        if down and busy > size - down:
            out.append(
                f"host {host}: job {job_id} starts at t={t:g} with {busy:g} processors busy, "
                f"{down} of {size} down (over-commit counting the periods down)"
            )
            if len(out) >= 5:
                break
    return out
