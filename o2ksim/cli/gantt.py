"""``o2ksim gantt``: processor allocation per host over a time range, as PNG, SVG or PDF."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from o2ksim.cli.report import results_dir_of
from o2ksim.errors import O2KSimError
from o2ksim.experiments.scenario import load_scenario, simulate_run
from o2ksim.experiments.store import load_results
from o2ksim.files import parent_folder
from o2ksim.report.gantt import (
    EmptyWindow,
    GanttRecorder,
    Teaching,
    teaching_from_jobs,
    write_gantt,
)
from o2ksim.report.replay import StoredRun, has_replay
from o2ksim.units import TraceClock, is_date, parse_time, trace_zone
from o2ksim.validation import MAX_TIME

HELP = "draw a Gantt chart (processors per host over time) of a run, as PNG, SVG or PDF"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source", metavar="SOURCE",
        help="a results directory (with --run), one run's directory (RESULTS/runs/ID), "
        "an `o2ksim run --out DIR` folder (without --report the run is simulated again from "
        "its run.json, with its reservations), or a scenario file or name (its first run is "
        "simulated)",
    )  # fmt: skip
    parser.add_argument("--run", metavar="ID", help="run id (prefix) inside a results directory")
    parser.add_argument(
        "-o", "--out", metavar="FILE", default="gantt.png",
        help="output file, in the format its extension names: .png, .svg or .pdf (default gantt.png)",
    )
    parser.add_argument(
        "--start",
        metavar="TIME",
        help="start of the time range (seconds since the trace start, 90m, 2d; an ISO date "
        "with a run folder, read in the trace header's time zone as run --window)",
    )
    parser.add_argument("--end", metavar="TIME", help="end of the time range")
    parser.add_argument(
        "--hosts", metavar="H1,H2", dest="host_names", action="extend", type=_host_list,
        help="hosts to draw, in order (default all); a name with a comma in it: --host",
    )  # fmt: skip
    parser.add_argument(
        "--host", metavar="NAME", dest="host_names", action="append",
        help="a host to draw, its name exactly as the machine has it (commas and spaces "
        "too: a machine sized from a trace header is named after its Computer line); "
        "repeatable, and drawn in the order given with --hosts",
    )  # fmt: skip
    parser.add_argument("--title", help="figure title")
    parser.set_defaults(func=run)


def _host_list(text: str) -> list[str]:
    """``--hosts a,b``: the names between the commas, without the spaces around them."""
    return [h.strip() for h in text.split(",")]


def _from_results(root: Path, run_id: str | None) -> tuple[Path, str]:
    res = load_results(root)
    ok = res.ok
    if run_id:
        ids = ok["run_id"].tolist()
        match = [run_id] if run_id in ids else [r for r in ids if r.startswith(run_id)]
        if len(match) != 1:
            raise O2KSimError(
                f"--run {run_id}: {'no' if not match else len(match)} finished run(s) match "
                f"(finished: {', '.join(ok['run_id'].head(8))}{' ...' if len(ok) > 8 else ''})"
            )
        rid = match[0]
    elif len(ok) == 1:
        rid = ok["run_id"].iloc[0]
    else:
        raise O2KSimError(
            f"{root} holds {len(ok)} finished runs; choose one with --run ID "
            f"(e.g. {', '.join(ok['run_id'].head(3))})"
        )
    return root / "runs" / rid, rid


def _policy_title(policy: dict, workload: str, estimates: str | None = None) -> str:
    """``name (param=value, ...): workload`` with every parameter of the run's policy."""
    params = {k: v for k, v in policy.items() if k not in ("name", "kind") and v is not None}
    text = policy.get("name", "?")
    if params:
        text += " (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
    text += f": {workload}"
    if estimates and estimates != "requested":
        text += f", estimates {estimates}"
    return text


def run(args: argparse.Namespace) -> int:
    # refused before a scenario is simulated: a missing folder, the input itself, a stored
    # result's file, an extension that names no figure format
    parent_folder(args.out, "-o", inputs=(args.source,), figure=True)
    src = Path(args.source)
    replayed = (src.is_dir() and not (src / "results" / "plan.json").exists()
                and has_replay(src))  # fmt: skip
    if replayed:
        if args.run:
            raise O2KSimError("--run needs a results directory")
        return _draw(args, *_replayed(src))
    if src.is_dir():
        src = results_dir_of(args.source, "gantt")[0]
    if src.is_dir() and (src / "plan.json").exists():
        src, _ = _from_results(src, args.run)
    elif args.run:
        raise O2KSimError("--run needs a results directory")
    if src.is_dir():
        seg_path = src / "segments.parquet"
        if not seg_path.exists():
            raise O2KSimError(f"{src}: no segments.parquet (was the run stored with segments?)")
        segments = pd.read_parquet(seg_path)
        info = json.loads((src / "summary.json").read_text()).get("info", {})
        hosts = info.get("hosts")
        if not hosts:
            raise O2KSimError(f"{src}: summary.json does not record the hosts")
        teaching, rejected = None, None
        if (src / "jobs.parquet").exists():
            jobs = pd.read_parquet(src / "jobs.parquet")
            teaching = teaching_from_jobs(jobs)
            rejected = jobs.loc[jobs["status"] == "rejected"]
        title = _policy_title(info.get("policy", {}), info.get("workload", ""))
    else:
        sc = load_scenario(args.source)
        recorder = GanttRecorder()
        result = simulate_run(sc.plan()[0].config, explain=True, observers=[recorder])
        segments = result.segments
        hosts = {h.name: h.procs for h in result.machine.hosts}
        teaching = recorder.teaching
        rejected = result.jobs.loc[result.jobs["status"] == "rejected"]
        title = _policy_title(
            result.policy, result.config["workload"], result.config.get("estimates")
        )
    return _draw(args, segments, hosts, teaching, rejected, title)


def _replayed(folder: Path) -> tuple[Any, dict[str, int], Teaching, Any, str, Any]:
    """An ``o2ksim run --out`` folder without --report: the run simulated again from its
    ``run.json`` (checked against its ``jobs.csv``), with the chart's recorder attached, so
    the chart has the reservations and their history too."""
    stored = StoredRun.open(folder)
    recorder = GanttRecorder()
    result = stored.replay([recorder])
    hosts = {h.name: h.procs for h in result.machine.hosts}
    jobs = result.jobs
    workload = str((stored.meta.get("config") or {}).get("workload") or "")
    title = _policy_title(result.policy, Path(workload).name if workload else "",
                          result.config.get("estimates"))  # fmt: skip
    return (result.segments, hosts, recorder.teaching, jobs.loc[jobs["status"] == "rejected"],
            title, stored.trace.header)  # fmt: skip


def _draw(args: argparse.Namespace, segments: Any, hosts: Any, teaching: Teaching | None,
          rejected: Any, title: str, header: Any = None) -> int:  # fmt: skip
    """Draw the chart; --start/--end dates are read against the trace ``header`` (a run
    folder's) in its time zone, as ``o2ksim run --window``, and messages say them as typed."""
    title = args.title or title
    names = args.host_names or None  # --hosts and --host, in the order given
    unix = getattr(header, "unix_start_time", None)
    zone, label = trace_zone(header)
    said = TraceClock(unix, zone, label) if is_date(args.start) or is_date(args.end) else TraceClock()
    try:
        start = parse_time(args.start, unix, zone) if args.start else None
        end = parse_time(args.end, unix, zone) if args.end else None
    except O2KSimError as exc:
        raise O2KSimError(f"--start/--end: {exc}") from None
    for option, text, value in (("--start", args.start, start), ("--end", args.end, end)):
        if value is not None and not abs(value) < MAX_TIME:  # as a trace's times (and NaN)
            raise O2KSimError(f"{option} {text}: must be within {MAX_TIME:g} s of the trace start")
    if start is not None and end is not None and not end > start:
        raise O2KSimError(
            f"--start {args.start} --end {args.end}: the end {said.as_written(args.end, end)} must "
            f"be after the start {said.as_written(args.start, start)}{said.zone_said}"
        )
    try:
        write_gantt(
            segments, hosts, args.out, start=start, end=end, host_names=names, title=title,
            teaching=teaching,
        )  # fmt: skip
    except EmptyWindow as exc:
        text = str(exc)
        if said.unix_start is not None:  # the range in the dates typed, not in day offsets
            t0 = float(segments["start"].min()) if start is None else start
            t1 = float(segments["end"].max()) if end is None else end
            text = (f"no job holds processors between {said.as_written(args.start, t0) if args.start else said.show(t0)}"
                    f" and {said.as_written(args.end, t1) if args.end else said.show(t1)}"
                    + (f" on {', '.join(names)}" if names else "") + said.zone_said)  # fmt: skip
        print(f"o2ksim: warning: {text}; no chart written", file=sys.stderr)
        return 0
    except ValueError as exc:
        hint = ("; --hosts splits at commas: name a host whose name has one with --host NAME"
                if str(exc).startswith("unknown host") and any("," in h for h in hosts)
                else "")  # fmt: skip
        raise O2KSimError(f"{exc}{hint}") from None
    print(f"Gantt chart: {args.out}")
    if rejected is not None and len(rejected):
        print(f"{len(rejected)} job(s) rejected (not drawn):")
        for j, reason in zip(rejected["job_id"], rejected["reason"], strict=True):
            print(f"  J{int(j)}: {reason or 'rejected'}")
    return 0
