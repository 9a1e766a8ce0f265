"""``o2ksim predict``: Downey's queue-time predictors evaluated on a simulated schedule of a trace."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from o2ksim.cli._run_notes import perfect_estimates_said
from o2ksim.errors import O2KSimError
from o2ksim.outfiles import claim
from o2ksim.run.checks import reasons_line
from o2ksim.validation import MAX_PROCS, output_folder

if TYPE_CHECKING:
    from o2ksim.prediction.evaluate import PredictionResult

HELP = "evaluate Downey's queue-time predictors A, B and combined (IPPS 1997) on a trace"
# kept here (not imported from o2ksim.prediction) so that building the parser stays light
CLASS_RULES = (
    "job classes: queue (one class per queue name, SWF field 15; default), none, "
    "reqtime:B1,B2 (short/medium/long by requested time), NAME=GLOB,GLOB;NAME=GLOB "
    "(first match wins, others 'other'), or the preset sdsc-paragon (q*s short, q*m medium, "
    "q*l long, q1l/q1ll sequential, standby); not with --fit (the file has its rule)"
)


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="SWF trace (plain or .gz)")
    parser.add_argument(
        "--out",
        metavar="DIR",
        required=True,
        help="write predictions.csv, summary.csv/json, fig4.png, clm.toml here",
    )
    parser.add_argument(
        "--machine",
        metavar="NAME|FILE",
        help="one-host machine (hosts/ name or TOML); default: the partition's size when the "
        "header names it (SDSC-Par batch: 352), else the header's MaxProcs",
    )
    parser.add_argument(
        "--procs", type=int, metavar="N", help="simulate a one-host machine of N processors"
    )
    parser.add_argument(
        "--partition",
        metavar="P",
        help="keep only this partition (SWF field 16; a number or a header name, e.g. batch)",
    )
    parser.add_argument(
        "--policy",
        choices=("fcfs", "fcfs-backfill"),
        default="fcfs",
        help="scheduler of the simulated schedule (default fcfs, as in the paper)",
    )
    parser.add_argument("--classes", metavar="RULE", help=CLASS_RULES)
    parser.add_argument(
        "--no-sequential-class",
        action="store_true",
        help="do not put one-processor jobs in a class of their own",
    )
    fit = parser.add_mutually_exclusive_group()
    fit.add_argument(
        "--fit",
        metavar="PARAMS.toml",
        help="use this fitted model (a clm.toml written by an earlier run)",
    )
    fit.add_argument(
        "--fit-window",
        nargs=2,
        metavar=("START", "END"),
        help="fit on the jobs submitted in [START, END) (dates, read in the trace header's time zone, or trace seconds); default the whole trace",
    )
    parser.add_argument(
        "--window",
        nargs=2,
        metavar=("START", "END"),
        help="score only the predictions made in [START, END)",
    )
    parser.add_argument(
        "--periods",
        nargs="+",
        metavar="DATE",
        help="interval boundaries (at least three): D Table 5 medians per interval and D§6.1 "
        "(each interval predicted with the previous interval's fit); e.g. 1996-01-01 1996-05-01 1996-09-01 1997-01-01",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=32,
        help="combined predictor: B from this n' on (default 32)",
    )
    parser.add_argument(
        "--overdue",
        choices=("tail", "hold", "release"),
        default="tail",
        help="jobs older than their class's t_max: lifetime uniform-log up to the class's longest "
        "fitted lifetime (tail, default), never free processors in a prediction (hold), or end at once (release)",
    )
    parser.add_argument(
        "--no-whole-queue", action="store_true", help="skip the whole-queue predictions at arrival"
    )
    parser.add_argument(
        "--whole-queue-sample",
        type=int,
        metavar="N",
        help="whole-queue predictions for N evenly spaced waiting arrivals (default 2000; 0 = all, slow on saturated traces)",
    )
    parser.add_argument(
        "--trim",
        type=float,
        default=0.1,
        help="share of the shortest and of the longest jobs left out of each fit (default 0.1)",
    )
    parser.add_argument(
        "--lenient", action="store_true", help="skip malformed trace lines instead of stopping"
    )
    parser.add_argument(
        "--schedule",
        choices=("simulated", "recorded"),
        default="simulated",
        help="score against o2ksim's schedule under --policy (simulated, default, the paper) or against "
        "what really happened: each job's recorded start, submit + SWF field 3 (recorded)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.procs is not None and not 1 <= args.procs <= MAX_PROCS:
        raise O2KSimError(f"--procs {args.procs}: must be from 1 to {MAX_PROCS}")
    if args.procs is not None and args.machine:
        raise O2KSimError("give either --machine or --procs, not both")
    # checked and claimed before the work (a second writer, or a folder holding another
    # command's result, is refused at once); a folder made here is removed if it fails
    with output_folder(args.out, "--out"), claim(args.out, "--out", kind="prediction"):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        with perfect_estimates_said():  # the simulated schedule's, as `o2ksim run` says it
            result = _predict(args)
    except O2KSimError as exc:  # the API names its parameter (window: ...); say the option typed
        text = str(exc)
        for name in ("fit_window", "window", "periods"):
            values = getattr(args, name)
            if values is not None and text.startswith(name):
                flag = "--" + name.replace("_", "-")
                raise O2KSimError(f"{flag} {' '.join(values)}{text[len(name) :]}") from None
        raise
    out = result.save(args.out)
    c = result.config
    print(
        f"{c['trace']}: {c['jobs']} jobs on {c['procs']} processors under {c['policy']}; "
        f"{c['head_events']} waits at the head of the queue"
    )
    for _, row in result.summary.iterrows():
        print(
            f"  {row['kind']:8s} {row['predictor']:12s} {row['predictions']:6d} predictions "
            f"({row['no_prediction']} none)  CC {row['cc']:.3f}  CC(log) {row['cc_log']:.3f}  "
            f"median |error| {row['median_abs_error']:.0f} s"
        )
    if result.another_time is not None:
        pooled = result.another_time[result.another_time["interval"] == "pooled"]
        for _, row in pooled.iterrows():
            print(
                f"  another time: {row['predictor']:9s} {row['parameters']:8s} parameters  CC {row['cc']:.3f}"
            )
    left = result.left_out
    if left is not None and len(left):  # as `o2ksim run` says them: not only in summary.json
        print(
            reasons_line(left["reason"].tolist(), left["job_id"].tolist())
            + " (left out of the predictions; summary.json's rejected_by_simulation)"
        )
    print(f"written to {out}")
    return 0


def _predict(args: argparse.Namespace) -> PredictionResult:
    """:func:`~o2ksim.prediction.predict` with the command's options."""
    # pandas and the simulator load once the folder is claimed: a second predict into it, or
    # a folder holding another result, is refused at once
    from o2ksim.prediction.evaluate import predict

    if args.no_whole_queue and args.whole_queue_sample is not None:  # it would change nothing
        raise O2KSimError("--whole-queue-sample: sizes the whole-queue predictions, which "
                          "--no-whole-queue skips; give one of them")  # fmt: skip
    return predict(
        args.trace,
        machine=args.machine,
        procs=args.procs,
        policy=args.policy,
        schedule=args.schedule,
        partition=args.partition,
        classes=args.classes,
        sequential=not args.no_sequential_class,
        fit=args.fit,
        fit_window=args.fit_window,
        window=args.window,
        periods=args.periods,
        threshold=args.threshold,
        overdue=args.overdue,
        whole_queue=not args.no_whole_queue,
        whole_queue_sample=2000 if args.whole_queue_sample is None else args.whole_queue_sample,
        trim=args.trim,
        lenient=args.lenient,
    )
