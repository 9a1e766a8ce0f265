"""``o2ksim scenario``: run, inspect and check scenario files (experiments and sweeps)."""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from o2ksim.errors import InputError, O2KSimError
from o2ksim.experiments.scenario import available_scenarios, load_scenario
from o2ksim.experiments.sweep_lock import refuse_for_a_sweep
from o2ksim.outfiles import Signalled, interrupts_end
from o2ksim.validation import check_dask_address, output_folder

if TYPE_CHECKING:
    import pandas as pd

HELP = "run a scenario file (an experiment or a sweep), list, show or check scenarios"

HOUR = 3600.0


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")

    p = sub.add_parser(
        "run",
        help="run every run of a scenario (skipping finished ones) and write the results",
        description="Run a scenario: every policy x factor levels x seed.  Each finished run "
        "is stored at once under OUT/runs/, so an interrupted sweep resumes where it stopped.",
    )
    p.add_argument(
        "scenario", metavar="FILE|NAME", help="scenario TOML file or shipped scenario name"
    )
    p.add_argument(
        "--out", metavar="DIR", help="results directory (default: [outputs] dir or results/NAME)"
    )
    p.add_argument(
        "--reduced", action="store_true", help="apply the scenario's [reduced] overrides (CI size)"
    )
    p.add_argument(
        "-j",
        "--workers",
        type=int,
        metavar="N",
        help="local worker processes (default: number of CPUs; 1 = in this process)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on a Dask distributed cluster (e.g. tcp://10.0.0.5:8786) instead of locally",
    )
    p.add_argument(
        "--report",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write the HTML report when done (default: [outputs] report, true)",
    )
    p.add_argument(
        "--retry-failed",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run again the runs that failed last time (default) or keep their errors",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar (default: when stderr is a terminal)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "show", help="print what a scenario runs (machine, workload, policies, runs)"
    )
    p.add_argument("scenario", metavar="FILE|NAME")
    p.add_argument("--reduced", action="store_true", help="with the [reduced] overrides")
    p.add_argument("--runs", action="store_true", help="list every run with its id")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("list", help="list the shipped scenarios")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser(
        "check",
        help="run scenarios at reduced size and compare with their committed expected summaries",
        description="Run each scenario with its [reduced] overrides and compare the summary with "
        "expected/NAME.csv next to it (what CI does).  --update rewrites the expected files.",
    )
    p.add_argument(
        "scenarios",
        nargs="*",
        metavar="FILE|NAME",
        help="scenarios to check (default: every shipped scenario with a [reduced] table)",
    )
    p.add_argument(
        "--update", action="store_true", help="write the expected summaries instead of comparing"
    )
    p.add_argument("-j", "--workers", type=int, metavar="N", help="local worker processes")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "claims",
        help="the thesis's claims checked on a scenario's results: the results pages' claims table",
        description="Evaluate the claims of o2ksim/data/thesis_claims.toml (or --claims FILE) on "
        "the stored runs of a results directory (e.g. of thesis-ch5 or thesis-ch6), one case per "
        "factor levels and seed, and print the Markdown claims table (claim, thesis, o2ksim, "
        "verdict, evidence).  --page-file rewrites the table of a docs page in place.",
    )
    p.add_argument("results", metavar="RESULTS_DIR", help="a results directory of `scenario run`")
    p.add_argument(
        "--page", help="only the claims of this page (immediate-service, eqspatial, backfill, ncsa-lsf)"
    )
    p.add_argument("--claims", metavar="FILE", help="claims file (default: the shipped one)")
    p.add_argument(
        "--page-file",
        metavar="MD",
        help="replace the claims table between the markers of this Markdown page",
    )
    p.set_defaults(func=cmd_claims)
    parser.set_defaults(func=lambda args: _no_action(parser))


def _no_action(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_run(args: argparse.Namespace) -> int:
    """``o2ksim scenario run``: SIGINT/SIGTERM end it in one line that says what is stored
    (each finished run is, whole; the sweep resumes from them), exit 128 + signal number."""
    stage: dict[str, Path] = {}

    def said(exc: Signalled) -> str:
        out = stage.get("out")
        if out is None:
            return f"interrupted by {exc}; nothing was written"
        if "report" in stage:
            return (
                f"interrupted by {exc} while writing the report; the runs are stored in {out}/, "
                f"nothing new was written to {stage['report']}/ (`o2ksim report {out}` writes it)"
            )
        return (
            f"interrupted by {exc}; the runs finished before it are stored in {out}/, the "
            "others are not: run the same command again to resume (finished runs are kept)"
        )

    with interrupts_end(said):
        return _cmd_run(args, stage)


def _cmd_run(args: argparse.Namespace, stage: dict[str, Path]) -> int:
    if args.workers is not None and args.workers < 1:
        raise O2KSimError("--workers must be at least 1")
    if args.scheduler and args.workers is not None:
        raise O2KSimError("give --workers or --scheduler, not both")
    if args.scheduler:
        check_dask_address(args.scheduler)
    if args.out == "":  # it read as no --out: the scenario's own folder, without a word
        raise O2KSimError("--out: an empty path (leave --out out for the scenario's folder)")
    sc = load_scenario(args.scenario, reduced=args.reduced)
    out = Path(args.out) if args.out else sc.default_out_dir()
    refuse_for_a_sweep(out)  # held, or another result's: refused before pandas and the engine load
    # a sweep's modules (pandas, the engine) and the report's, loaded once the folder may be used
    from o2ksim.experiments.sweep import check_windows, perfect_estimates_notes, run_sweep
    from o2ksim.report.html import write_report

    check_windows(sc)  # a window that selects nothing: refused before the folder is made
    stage["out"] = out
    for note in [] if args.quiet else perfect_estimates_notes(sc):
        print(f"o2ksim: warning: {note}", file=sys.stderr)
    say = (lambda _m: None) if args.quiet else (lambda m: print(m, flush=True))
    progress = (sys.stderr.isatty() and not args.quiet) if args.progress is None else args.progress
    try:
        # a folder made here is removed again if the sweep is refused before writing into it
        with output_folder(out, "--out" if args.out else f"{sc.path or sc.name}: [outputs] dir"):
            res = run_sweep(
                sc,
                out,
                workers=args.workers,
                scheduler=args.scheduler,
                progress=progress,
                retry_failed=args.retry_failed,
                log=say,
            )
    except InputError as exc:  # the summary table (written whole or not at all) after the runs
        if exc.path is None or Path(exc.path).parent != out:
            raise
        cause = re.search(r"\(([^()]*)\)", exc.reason)  # "cannot write there (CAUSE); ..."
        raise O2KSimError(
            f"{exc.path}: cannot write the summary table ({cause[1] if cause else exc.reason}); the runs "
            f"stored in {out}/ are complete: run the same command again once there is room "
            "(finished runs are kept)"
        ) from None
    except OSError as exc:  # a full disk: each run's folder is written whole, or not at all
        where = exc.filename or out
        raise O2KSimError(
            f"{where}: cannot write the results ({exc.strerror or exc}); the runs stored in "
            f"{out}/ are complete, the others are not stored: run the same command again "
            "once there is room (finished runs are kept)"
        ) from None
    if res.unused_seeds and not args.quiet:  # once for the scenario (the API warns it)
        print(f"o2ksim: warning: {res.unused_seeds}", file=sys.stderr)
    for note in [] if args.quiet else res.unused_availability:  # once per set of periods late
        print(f"o2ksim: warning: {note}", file=sys.stderr)
    if not args.quiet:
        print(format_table(res.table, ["policy", *sc.factors, "seed"]))
        print(
            f"{len(res.ran)} run(s) in {res.wall_seconds:.1f} s"
            + (f" ({len(res.failed)} failed)" if res.failed else "")
            + (f", {len(res.skipped)} skipped (finished before)" if res.skipped else "")
            + f"; results in {out}/",
            flush=True,
        )
    for run_id in res.failed:
        err = res.table.loc[res.table["run_id"] == run_id, "error"].iloc[0]
        print(
            f"o2ksim: run {run_id} failed: {err} (see {out}/runs/{run_id}/error.txt)",
            file=sys.stderr,
        )
    want_report = sc.outputs.get("report", True) if args.report is None else args.report
    if want_report and (res.table["status"] == "ok").any():
        stage["report"] = out / "report"
        try:  # built aside and committed whole: a failure leaves the earlier report, or none
            page = write_report(out)
        except O2KSimError as exc:  # a full disk: the runs are stored, only the page is missing
            raise O2KSimError(
                f"{exc}; the runs are stored in {out}/ (`o2ksim report {out}` writes the report "
                "once there is room)"
            ) from None
        if not args.quiet:
            print(f"report: {page}")
    # failed runs kept from an earlier sweep (--no-retry-failed) count as well
    return 1 if res.failed or (res.table["status"] != "ok").any() else 0


MAX_ROWS = 40


def format_table(table: pd.DataFrame, factors: list[str]) -> str:
    """The summary as aligned text: factor levels, then waits in hours and slowdown.

    Beyond ``MAX_ROWS`` runs, one line per policy with the means over its
    finished runs (the full table is in ``summary.csv``).
    """
    if len(table) > MAX_ROWS:
        ok = table.loc[table["status"] == "ok"]
        agg = ok.groupby("policy", sort=False)[
            ["jobs", "mean_wait", "p95_wait", "max_wait", "mean_slowdown", "utilisation"]
        ].mean()
        agg.insert(0, "status", [f"{(table['policy'] == p).sum()} runs" for p in agg.index])
        agg = agg.reset_index()
        return format_table(agg, ["policy"]) + "\n(means over each policy's finished runs)"
    cols = [f for f in factors if (f in table and table[f].nunique() > 1) or f == "policy"]
    rows = [
        [
            *(c.rsplit(".", 1)[-1] for c in cols),
            "status",
            "jobs",
            "mean_w(h)",
            "p95_w(h)",
            "max_w(h)",
            "mean_sd",
            "util",
        ]
    ]
    for _, r in table.iterrows():
        rows.append(
            [
                *(_fmt_level(r[c]) for c in cols),
                str(r["status"]),
                _num(r["jobs"], "{:.0f}"),
                _num(r["mean_wait"] / HOUR, "{:.2f}"),
                _num(r["p95_wait"] / HOUR, "{:.2f}"),
                _num(r["max_wait"] / HOUR, "{:.2f}"),
                _num(r["mean_slowdown"], "{:.2f}"),
                _num(r["utilisation"], "{:.3f}"),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            c.ljust(w) if i < len(cols) + 1 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _fmt_level(v: object) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _num(v: object, fmt: str) -> str:
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "-"
    return "-" if math.isnan(x) else fmt.format(x)


def cmd_show(args: argparse.Namespace) -> int:
    sc = load_scenario(args.scenario, reduced=args.reduced)
    print(sc.describe())
    if args.runs:
        for run in sc.plan():
            levels = ", ".join(f"{k}={_fmt_level(v)}" for k, v in run.factors.items())
            print(f"  {run.run_id}  {levels}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    found = available_scenarios()
    if not found:
        print("no shipped scenarios found")
        return 0
    for name, path in sorted(found.items()):
        sc = load_scenario(path)
        runs = len(sc.plan())
        print(f"  {name:<28} {runs:>3} {'run ' if runs == 1 else 'runs'}  {sc.description}")
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    from o2ksim.experiments.claims import claims_markdown, results_claims, update_page

    outcomes, loaded = results_claims(args.results, page=args.page, claims_file=args.claims)
    table = claims_markdown(outcomes, loaded)
    if args.page_file:
        update_page(args.page_file, table)
    else:
        print(table, end="")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from o2ksim.experiments.expected import compare_expected, expected_path, write_expected
    from o2ksim.experiments.sweep import run_sweep

    names = args.scenarios or [
        str(p) for _, p in sorted(available_scenarios().items()) if load_scenario(p).has_reduced
    ]
    if not names:
        raise O2KSimError("no scenarios to check")
    bad = 0
    for name in names:
        sc = load_scenario(name, reduced=True)
        factors = ["policy", *sc.factors, "seed"]
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="o2ksim-check-") as tmp:
            res = run_sweep(sc, tmp, workers=args.workers, progress=False)
        took = time.perf_counter() - t0
        path = expected_path(sc)
        if args.update:
            write_expected(path, res.table, factors)
            print(f"wrote {path} ({len(res.runs)} runs, {took:.1f} s)")
            continue
        problems = compare_expected(res.table, factors, path)
        if problems:
            bad += 1
            print(f"DIFFERENT {sc.name} ({len(res.runs)} runs, {took:.1f} s):")
            for p in problems:
                print(f"  {p}")
        else:
            print(f"ok {sc.name} ({len(res.runs)} runs, {took:.1f} s)")
    return 1 if bad else 0
