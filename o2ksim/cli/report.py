"""``o2ksim report``: the HTML report of a results directory."""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path

from o2ksim.errors import O2KSimError
from o2ksim.outfiles import claim, interrupts_end, said_of_folder
from o2ksim.outkinds import SWEEP_PLAN, is_prediction_dir, report_place
from o2ksim.outread import held_to_read
from o2ksim.validation import output_folder

HELP = "write the HTML report (figures, tables, scenario, versions) of a results directory"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        metavar="RESULTS_DIR",
        help="directory written by `o2ksim scenario run`, by `o2ksim run --out DIR --report` "
        "(its results/ are read) or by `o2ksim predict` (its prediction page)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where to write report.html, figures/ and tables/ (default RESULTS_DIR/report), "
        "replacing the three of an earlier report there; written whole or not at all",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    parser.set_defaults(func=run)


def results_dir_of(path: str, command: str) -> tuple[Path, Path | None]:
    """The results directory behind ``path`` and, for an ``o2ksim run --out`` folder, the
    folder itself (where its report goes).

    ``o2ksim run --out DIR --report`` stores its run as a one-run results directory in
    ``DIR/results``; ``o2ksim run --out DIR`` alone keeps only the job table and the
    summary, which is not enough for the report's or the Gantt chart's views (no
    allocation segments): the error names the flag to add.
    """
    p = Path(path)
    if (p / "plan.json").exists() or is_prediction_dir(p):
        return p, None
    if (p / "results" / "plan.json").exists():
        return p / "results", p
    if (p / "run.json").exists():
        try:
            json.loads((p / "run.json").read_text())
        except (OSError, ValueError) as exc:  # cut short or damaged: not "run without --report"
            raise O2KSimError(
                f"{p / 'run.json'}: not a readable run record ({exc}); run the run again"
            ) from None
        raise O2KSimError(
            f"{p}: written by `o2ksim run --out {p}` without --report, which keeps no results "
            f"directory (no allocation segments); add --report to that `o2ksim run` command: it "
            f"stores {p / 'results'}, which `o2ksim {command} {p}` reads"
        )
    return p, None


def run(args: argparse.Namespace) -> int:
    """``o2ksim report``: the report is built aside and committed as a whole, replacing the
    earlier report (:func:`~o2ksim.report.html.write_report`); a failure or SIGINT/SIGTERM
    leaves the earlier one untouched, in one line."""
    results, run_out = results_dir_of(args.results, "report")
    out = args.out if args.out is not None or run_out is None else run_out / "report"
    written: list[Path] = []
    said = said_of_folder(out, "the report was", "an earlier report there is", lambda: bool(written))

    # `o2ksim run --out DIR`'s folder is held against a run writing into it meanwhile: claimed
    # when the report goes into it, else only held to be read (it may be read-only)
    held: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if run_out is not None:
        held = claim(run_out, "") if args.out is None else held_to_read(run_out)
    target, kind = report_place(results, out)
    prediction = kind == "prediction"
    # the folder the report goes to, claimed as write_report claims it, before pandas and
    # matplotlib load: a second report into it, or another command's result there, is refused
    # at once (when RESULTS is no results directory, write_report says so, making nothing)
    early: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    place: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if prediction or (results / SWEEP_PLAN).exists():
        early = claim(target, "", sweep_folder_ok=not prediction, kind=kind)
    if args.out is not None or not isinstance(early, contextlib.nullcontext):
        # a file in the way or an unwritable place: one line, before the work; a folder made
        # for the report is removed again if the report then fails
        place = output_folder(target, "--out" if args.out is not None else "")
    with interrupts_end(said), held, place, early:
        from o2ksim.report.html import write_report

        written.append(write_report(results, out))
    if not args.quiet:
        print(f"report: {written[0]}")
    return 0
