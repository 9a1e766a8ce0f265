"""The data of the step-through player: one frame per line of the decision log.

:class:`PlayerRecorder` is the :class:`~o2ksim.explain.DecisionLog` with a
memory: for every line the log writes (an arrival, a start, a backfill, a
reservation, an end, a pass's ``waiting`` line, ...) it records what the run
looked like at that moment -- the jobs holding processors (with the end their
requested runtime promises), the reservations of the last pass, the waiting
queue in the policy's priority order with each priority's parts, and the free
processors and memory per host.  Nothing is re-simulated: the frames are the
engine's own events, the processor lanes are the engine's own allocation
segments (``Result.segments``).

A frame is captured when the engine's next hook arrives, before it is
processed: a ``Start`` decision is announced before the allocation it causes,
so the line's frame must include that allocation (the job then runs).

:func:`player_data` runs a scenario and returns everything the page draws, as
compact lists (JSON-ready): a few thousand events stay a few MB.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping
from typing import Any

import numpy as np

from o2ksim.clock import clock
from o2ksim.engine.decisions import Reserve, Start, WakeAt
from o2ksim.errors import O2KSimError
from o2ksim.experiments.scenario import Scenario, load_scenario
from o2ksim.explain import DecisionLog, LogEntry, explain, run_title
from o2ksim.jobs import Job, JobState
from o2ksim.machine import KB_PER_MB, MachineSpec
from o2ksim.policies.priority import (
    FCFSPriority,
    Priority,
    SJFPriority,
    WeightedPriority,
    make_priority,
)

QUEUE_SHOWN = 40
"""Jobs of the queue listed per frame (with their priority parts); the rest are counted."""

ENDS_BEFORE = "ends before the shadow time"
EXTRA_PROCS = "uses extra processors"

MAX_JOBS = 5000
"""The most jobs a scenario's page plays by default (every event of every job is in it)."""


def backfill_tag(text: str) -> str:
    """Why a backfilled job could go, from its log line (the two cases of T§3.2.1, Fig. 1)."""
    tags = []
    if ", before " in text:
        tags.append(ENDS_BEFORE)
    if "processors" in text and "not need" in text:
        tags.append(EXTRA_PROCS)
    if not tags and "holds no reservation" in text:
        tags.append("no reservation on its host")
    return " + ".join(tags) or "delays no reservation"


class PlayerRecorder(DecisionLog):
    """A :class:`DecisionLog` that records a frame (the run's state) for every line."""

    def __init__(
        self, machine: MachineSpec, *, queue: bool = True, all_reservations: bool = False,
        window: tuple[float, float] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(machine, queue=queue, all_reservations=all_reservations)
        #: keep only the lines (and frames) from ``window[0]`` to ``window[1]`` (a day of a
        #: long run); the state is still followed from the start
        self.window = window
        self.hosts = [h.name for h in machine.hosts]
        self._host_index = {h: i for i, h in enumerate(self.hosts)}
        self.mem_total = [h.memory for h in machine.hosts]
        self.holding: dict[int, Job] = {}
        self.reserved: dict[int, tuple[str, float]] = {}  # the last pass's reservations
        self._pass_res: dict[int, tuple[str, float]] = {}
        # job -> its reservations: made at t0 for 'at' (t2), moves (t', new at), start
        self.history: dict[int, list[dict[str, Any]]] = {}
        self.jobs: dict[int, Job] = {}
        self.timers: list[tuple[float, str | None, str]] = []  # passes asked for (WakeAt)
        self.frames: list[dict[str, Any]] = []  # raw: waiting jobs kept as objects
        self._pending = 0  # lines written whose frame is not captured yet

    # -- capture -------------------------------------------------------------------------------
    def on_entry(self, entry: LogEntry) -> None:
        if self.window is not None and not self.window[0] <= entry.time <= self.window[1]:
            self.entries.pop()  # outside the window: not kept, no frame
            return
        self._pending += 1

    def _flush(self) -> None:
        while self._pending:
            self._pending -= 1
            now = self.entries[len(self.entries) - 1 - self._pending].time
            self.frames.append(self._state(now))

    def _state(self, now: float) -> dict[str, Any]:
        running = []
        for job in self.holding.values():
            alloc = job.alloc_procs
            done = job.work_done(now) / job.spec.procs  # seconds at full speed
            left = max(job.spec.req_time - done, 0.0)
            ghost = now + left * job.spec.procs / alloc if alloc else math.nan
            if math.isfinite(job.time_limit):
                ghost = min(ghost, job.time_limit) if math.isfinite(ghost) else job.time_limit
            running.append((job.id, self._host_index.get(job.host or "", 0), alloc,
                            job.last_start, ghost, job.state is JobState.PREEMPTED,
                            job.limit_action == "requeue" and math.isfinite(job.time_limit)))  # fmt: skip
        mem_used = [0.0] * len(self.hosts)
        for job in self.holding.values():
            mem_used[self._host_index.get(job.host or "", 0)] += job.alloc_mem
        free = self.free_procs
        self.timers = [w for w in self.timers if w[0] >= now]
        return {
            "timers": [
                (at, self._host_index.get(h, -1) if h else -1, tag)
                for at, h, tag in sorted(set(self.timers), key=lambda w: w[0])
            ],
            "t": now,
            "run": running,
            "res": [(j, self._host_index[h], at) for j, (h, at) in self.reserved.items()],
            "wait": self.waiting,
            "free": [free[h] for h in self.hosts],
            "mem": [tot - used for tot, used in zip(self.mem_total, mem_used, strict=True)],
        }

    # -- engine hooks (the frame of the previous line first) ------------------------------------
    def on_arrival(self, job: Job, now: float) -> None:
        self._flush()
        self.jobs[job.id] = job
        super().on_arrival(job, now)

    def on_allocation(self, job: Job, now: float) -> None:  # belongs to the decision before it
        super().on_allocation(job, now)
        if job.host is not None:
            self.holding[job.id] = job

    def on_release(self, job: Job, now: float) -> None:
        self._flush()
        self.holding.pop(job.id, None)
        super().on_release(job, now)

    def on_end(self, job: Job, now: float) -> None:
        self._flush()
        self.holding.pop(job.id, None)
        self.reserved.pop(job.id, None)
        super().on_end(job, now)

    def on_decision(self, now: float, d: Any) -> None:
        self._flush()
        if isinstance(d, Reserve):
            self._pass_res[d.job.id] = (d.host, d.at)
            episodes = self.history.setdefault(d.job.id, [])
            if not episodes or episodes[-1]["start"] is not None:  # a new reservation
                episodes.append({"t0": now, "at": d.at, "host": d.host, "moves": [], "start": None})
            else:
                hist = episodes[-1]
                last_at = hist["moves"][-1][1] if hist["moves"] else hist["at"]
                if last_at != d.at:  # it moved (slid earlier, or later behind a requeued trial)
                    hist["moves"].append((now, d.at))
            self.reserved[d.job.id] = (d.host, d.at)
        elif isinstance(d, WakeAt):
            if len(self.timers) > 1000:  # before the window no frame prunes them
                self.timers = [w for w in self.timers if w[0] >= now]
            self.timers.append((d.time, d.host, d.tag))
        elif isinstance(d, Start):
            self.reserved.pop(d.job.id, None)
            made = self.history.get(d.job.id, [])
            # a trial run (immediate service) is no start at the reserved time: the job keeps
            # its reservation if the trial fails and is requeued
            if made and made[-1]["start"] is None and d.on_limit != "requeue":
                made[-1]["start"] = now
        super().on_decision(now, d)

    def on_pass(self, now: float, n_decisions: int) -> None:
        self._flush()
        self.reserved = dict(self._pass_res)
        self._pass_res = {}
        super().on_pass(now, n_decisions)

    def close(self) -> None:
        self._flush()
        super().close()


# -- the priority's parts ----------------------------------------------------------------------
def _priority_parts(
    prio: Priority, jobs: list[Job], now: float
) -> tuple[list[Job], list[list[float]]]:
    """The queue in priority order and, per job, ``[score, part, ...]`` (see :func:`part_names`)."""
    if not jobs:
        return [], []
    ordered = list(prio.order(sorted(jobs, key=lambda j: (j.spec.submit, j.id)), now))
    if isinstance(prio, WeightedPriority):
        w = prio.weights
        rows = []
        for j in ordered:
            wait_h = (now - j.spec.submit) / 3600.0
            req_h = max(j.spec.req_time, 1.0) / 3600.0
            jm = j.spec.mem / (358.4 * 1024.0)
            values = {"w": wait_h, "x": (wait_h + req_h) / req_h, "p": j.spec.procs, "m": jm,
                      "pe": max(j.spec.procs, jm)}  # fmt: skip
            parts = [w[k] * values[k] for k in w if w[k]]
            rows.append([sum(parts), *parts])
        return ordered, rows
    if isinstance(prio, SJFPriority):
        return ordered, [[-j.spec.req_time, j.spec.req_time] for j in ordered]
    if isinstance(prio, FCFSPriority):
        return ordered, [[-j.spec.submit, j.spec.submit] for j in ordered]
    scores = np.asarray(prio.scores(prio.view(ordered, now)), dtype=float)  # a function: its score
    return ordered, [[float(v)] for v in scores]


def part_names(prio: Priority) -> list[str]:
    """The names of the parts :func:`_priority_parts` lists after the score."""
    if isinstance(prio, WeightedPriority):
        names = {"w": "Jw (h)", "x": "Jx", "p": "Jp", "m": "Jm", "pe": "Jpe"}
        return [f"{v:g}×{names[k]}" for k, v in prio.weights.items() if v]
    if isinstance(prio, SJFPriority):
        return ["requested"]
    if isinstance(prio, FCFSPriority):
        return ["submitted"]
    return []  # a priority function: only its score


# -- lanes -----------------------------------------------------------------------------------
def _ranges(rows: list[int]) -> list[int]:
    """Sorted row numbers as flat ``[first, count, first, count, ...]``."""
    out: list[int] = []
    for r in sorted(rows):
        if out and out[-2] + out[-1] == r:
            out[-1] += 1
        else:
            out += [r, 1]
    return out


def assign_lanes(segments: Mapping[str, np.ndarray], hosts: list[str],
                 procs: list[int]) -> list[list[Any]]:  # fmt: skip
    """Give every allocation segment processor rows on its host.

    Returns ``[job, host index, start, end, procs, [first, count, ...]]`` per
    segment.  Rows are handed out lowest first; a job whose allocation changes
    (a resize, a resume) keeps the rows it just gave back where it can, so it
    stays on its rows instead of jumping.
    """
    index = {h: i for i, h in enumerate(hosts)}
    order = sorted(range(len(segments["job_id"])),
                   key=lambda i: (float(segments["start"][i]), float(segments["end"][i])))  # fmt: skip
    free = [set(range(p)) for p in procs]
    busy: list[list[tuple[float, int, list[int]]]] = [[] for _ in hosts]  # (end, job, rows)
    freed_by: list[dict[int, tuple[float, list[int]]]] = [{} for _ in hosts]
    out: list[list[Any]] = []
    for i in order:
        h = index.get(str(segments["host"][i]), 0)
        start, end = float(segments["start"][i]), float(segments["end"][i])
        job, n = int(segments["job_id"][i]), int(segments["procs"][i])
        still = []
        for e, j, rows in busy[h]:
            if e <= start:
                free[h].update(rows)
                freed_by[h][j] = (e, rows)
            else:
                still.append((e, j, rows))
        busy[h] = still
        mine = freed_by[h].get(job)
        want = [r for r in mine[1] if r in free[h]] if mine and mine[0] == start else []
        rest = sorted(free[h] - set(want))
        rows = (want + rest)[:n] if n <= len(free[h]) else want + rest  # over-full: draw what fits
        free[h].difference_update(rows)
        busy[h].append((end, job, rows))
        out.append([job, h, start, end, n, _ranges(rows)])
    return out


# -- the whole page's data ---------------------------------------------------------------------
def _r(x: float) -> float | None:
    return None if not math.isfinite(x) else round(x, 3)


def player_data(source: Any = "explain-backfill", *, policy: str | None = None,
                params: dict[str, Any] | None = None, max_jobs: int = MAX_JOBS,
                title: str | None = None,
                shown: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Run ``source`` (a scenario, a scenario file or a shipped scenario's name) and
    return the player's data: hosts, jobs, lanes, log lines and one frame per line.

    ``policy``/``params`` as for :func:`o2ksim.explain.explain`; ``shown``: the
    parameters to name in the run's title (default ``params``; a comparison names
    every parameter either side changes, with this run's value).  A run's
    ``--out`` folder is played by :func:`o2ksim.report.player_run.run_folder_data`.
    """
    sc = source if isinstance(source, Scenario) else load_scenario(source)
    result, rec = explain(sc, policy=policy, params=params, max_jobs=max_jobs,
                          log_class=PlayerRecorder)  # fmt: skip
    assert isinstance(rec, PlayerRecorder)
    return pack_player(
        result, rec, title=title or f"{sc.name}: {sc.description or run_title(result, params)}",
        run=run_title(result, params if shown is None else shown),
    )  # fmt: skip


def pack_player(result: Any, rec: PlayerRecorder, *, title: str, run: str,
                window: tuple[float, float] | None = None) -> dict[str, Any]:  # fmt: skip
    """The page's data of a run recorded by ``rec`` (JSON-ready compact lists).

    ``window``: the time range ``rec`` kept (``PlayerRecorder(window=...)``):
    only the allocations, jobs and reservation histories that touch it are
    kept, and the page's time axis starts at its start.
    """
    rec.close()  # idempotent: captures the last line's frame
    pol = result.policy
    prio_spec = pol.get("priority")
    order_name = "fcfs"
    try:
        prio = make_priority(prio_spec) if isinstance(prio_spec, str | dict) else FCFSPriority()
        order_name = "fcfs" if isinstance(prio, FCFSPriority) else prio.describe()
    except O2KSimError:  # a priority the page cannot rebuild: the queue in arrival order, said so
        prio = FCFSPriority()
        order_name = f"arrival order (the priority {prio_spec!r} could not be rebuilt)"
    hosts = rec.hosts
    procs = [h.procs for h in result.machine.hosts]
    seg = result.segment_table
    table = {c: np.asarray(seg[c]) for c in ("job_id", "host", "start", "end", "procs")}
    lanes = assign_lanes(table, hosts, procs)
    if window is not None:
        lanes = [s for s in lanes if s[3] > window[0] and s[2] < window[1]]
    frames = []
    for f in rec.frames:
        ordered, parts = _priority_parts(prio, f["wait"], f["t"])
        frames.append([
            _r(f["t"]),
            [[j, h, p, _r(s), _r(g), int(pre), int(trial)] for j, h, p, s, g, pre, trial in f["run"]],
            [[j, h, _r(at)] for j, h, at in f["res"]],
            [j.id for j in ordered[:QUEUE_SHOWN]],
            [[round(v, 4) for v in row] for row in parts[:QUEUE_SHOWN]],
            len(ordered),
            f["free"],
            [None if not math.isfinite(m) else round(m / KB_PER_MB, 1) for m in f["mem"]],
            [[_r(at), h, tag] for at, h, tag in f["timers"]],
        ])  # fmt: skip
    shown_jobs: list[Job] = list(rec.jobs.values())
    if window is not None:  # the jobs the page names: in a lane, a frame or a log line
        named = {s[0] for s in lanes} | {e.job for e in rec.entries if e.job is not None}
        for fr in frames:
            named.update(r[0] for r in fr[1])
            named.update(r[0] for r in fr[2])
            named.update(fr[3])
        shown_jobs = [j for j in shown_jobs if j.id in named]
    jobs = {
        str(j.id): [_r(j.spec.submit), j.spec.procs, _r(j.spec.req_time), _r(j.spec.run_time),
                    round(j.spec.mem / KB_PER_MB, 1)]
        for j in shown_jobs
    }  # fmt: skip
    tags = {str(e.job): backfill_tag(e.text) for e in rec.entries if e.event == "backfilled"}
    history = {
        str(j): [
            [_r(h["t0"]), rec._host_index[h["host"]], _r(h["at"]),
             [[_r(t), _r(a)] for t, a in h["moves"]], None if h["start"] is None else _r(h["start"])]
            for h in episodes
        ]
        for j, episodes in rec.history.items() if str(j) in jobs
    }  # fmt: skip
    host_of = rec._host_index
    log_lines = [[_r(e.time), e.event, e.job, e.text, host_of.get(e.host or "", -1)]
                 for e in rec.entries]  # fmt: skip
    if window is not None:
        begin, t_end = window
    else:
        begin, t_end = 0.0, max([s[3] for s in lanes] + [f[0] or 0 for f in frames] + [0.0])
    return {
        "title": title,
        "run": run,
        "machine": result.machine.describe(),
        "hosts": hosts,
        "procs": procs,
        "mem": [None if not math.isfinite(m) else round(m / KB_PER_MB, 1) for m in rec.mem_total],
        "priority": order_name,
        "arrival_order": isinstance(prio, FCFSPriority),
        "parts": part_names(prio),
        "jobs": jobs,
        "lanes": lanes,
        "tags": tags,
        "history": history,
        "log": log_lines,
        "frames": frames,
        "begin": _r(begin),
        "end": _r(t_end),
        "clock_example": clock(0),
    }


def frame_at(data: Mapping[str, Any], time: float) -> int:
    """Index of the last frame at or before ``time`` (0 if none)."""
    times = [f[0] for f in data["frames"]]
    return max(bisect_right(times, time) - 1, 0)
