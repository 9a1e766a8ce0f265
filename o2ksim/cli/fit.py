"""``o2ksim fit``: estimate a workload model's parameters from an SWF trace."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from o2ksim import __version__
from o2ksim.errors import O2KSimError
from o2ksim.files import parent_folder
from o2ksim.workloads import models
from o2ksim.workloads.cirne_berman_sizes import MAX_SIZE_SEGMENTS
from o2ksim.workloads.swf import read_swf

HELP = "fit the cirne-berman or downey model to an SWF trace and write a parameter file"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="SWF trace (plain or .gz)")
    parser.add_argument(
        "--model",
        default="cirne-berman",
        choices=("cirne-berman", "downey"),
        help="model to fit (default cirne-berman)",
    )
    parser.add_argument(
        "--out",
        metavar="FILE.toml",
        help="write the parameters here (default: print them); `o2ksim generate --params FILE` reads it",
    )
    parser.add_argument(
        "--accuracy",
        choices=("censored", "paper"),
        help="cirne-berman accuracy fit: gamma MLE with jobs killed at their request censored "
        "and a Gaussian copula to the requested time (default, o2ksim's extension, consistent "
        "with the generator) or the paper's plain MLE of completed jobs, independent of it",
    )
    parser.add_argument(
        "--size-fit",
        choices=("piecewise", "paper", "exact"),
        help="cirne-berman partition-size fit: C§6's line plus a piecewise uniform-log fitted to "
        "the same empirical CDF, which the generator uses (default, o2ksim's extension); C§6's "
        "least-squares line alone (paper, C Table 5); or the line by least squares against the "
        "generator's own CDF with its power-of-two step (exact)",
    )
    parser.add_argument(
        "--size-segments",
        type=int,
        metavar="N",
        help="cirne-berman, --size-fit piecewise: number of uniform-log pieces, 1 to 6 (default 2)",
    )
    parser.add_argument(
        "--no-queues",
        action="store_true",
        help="downey: one class for all parallel jobs instead of one per queue",
    )
    parser.add_argument(
        "--classes",
        metavar="RULE",
        help="downey: lifetime classes from queue names (SWF field 15), see `o2ksim predict --help` (e.g. sdsc-paragon)",
    )
    parser.add_argument(
        "--partition",
        metavar="P",
        help="downey: fit only this partition (SWF field 16, e.g. batch)",
    )
    parser.add_argument(
        "--lenient", action="store_true", help="skip malformed trace lines instead of stopping"
    )
    parser.set_defaults(func=run)


_COMMON = {
    "machine.procs": "trace header MaxProcs",
    "fit": "diagnostics of the fit (ignored by the generator)",
}
_CB_COMMENTS = {
    "arrival.jobs_per_day": "C§4: jobs per whole local day, over the days kept (uncommon days removed by clustering)",
    "arrival.coefficients": "C§4: least-squares polynomial of the per-minute rate in m_s, constant first",
    "cancellation.probability": "C§5: share of status-5 jobs",
    "cancellation.lag_chi": "C§5: least squares on the empirical CDF of the cancellation lag",
    "partition.chi": "C§6, Table 5: least squares of the empirical CDF of allocated processors (see fit.partition_method)",
    "partition.power_of_two": "C§6, Table 6: observed share of power-of-two sizes",
    "partition.knots_procs": "o2ksim's extension: piecewise uniform-log knots (processors), used instead of chi, rho",
    "partition.knots_cdf": "P(n <= knot), least squares of the same empirical CDF with the power-of-two step",
    "accuracy.correlation": "o2ksim's extension: Gaussian copula of requested time and accuracy (Spearman matched)",
    "requested_time.chi": "C§7.2: least squares on the empirical CDF (log2 seconds)",
    "accuracy.alpha": "C§7.1: gamma maximum likelihood (see fit.accuracy_method)",
    "accuracy.beta": "scale parameter",
}
_DOWNEY_COMMENTS = {
    "arrival.jobs_per_day": "jobs / days spanned by the trace (Poisson arrivals)",
    "lifetime.max_s": "longest run time in the trace",
    "cluster_size.beta0": "D: least squares on the empirical CDF of parallel jobs' sizes (ln n)",
    "class": "D§3: one class per queue, lifetimes by least squares on the middle 80 % (ln t)",
}


def run(args: argparse.Namespace) -> int:
    if args.out:  # a missing folder or a file in the way: refused before the fit, not after it
        parent_folder(args.out, "--out", inputs=(args.trace,))  # never the trace itself
    downey_only = [o for o, v in (("--classes", args.classes), ("--partition", args.partition),
                                  ("--no-queues", args.no_queues)) if v]  # fmt: skip
    if args.model == "cirne-berman" and downey_only:  # they were ignored without a word
        raise O2KSimError(f"{', '.join(downey_only)}: an option of --model downey only")
    cirne_only = [o for o, v in (("--accuracy", args.accuracy), ("--size-fit", args.size_fit),
                                 ("--size-segments", args.size_segments)) if v is not None]  # fmt: skip
    if args.model == "downey" and cirne_only:  # ignored too: the same fit with or without them
        raise O2KSimError(f"{', '.join(cirne_only)}: an option of --model cirne-berman only")
    if args.size_segments is not None and args.size_fit not in (None, "piecewise"):
        raise O2KSimError(
            f"--size-segments: counts the pieces of --size-fit piecewise; --size-fit {args.size_fit} "
            "has none"
        )
    args.accuracy = args.accuracy or "censored"
    args.size_fit = args.size_fit or "piecewise"
    args.size_segments = 2 if args.size_segments is None else args.size_segments
    if not 1 <= args.size_segments <= MAX_SIZE_SEGMENTS:  # before the trace is read
        raise O2KSimError(f"--size-segments {args.size_segments}: must be from 1 to {MAX_SIZE_SEGMENTS}")
    trace = read_swf(args.trace, lenient=args.lenient)
    options: dict[str, Any]
    if args.model == "cirne-berman":
        options = dict(
            accuracy_method=args.accuracy,
            partition_method=args.size_fit,
            size_segments=args.size_segments,
        )
    else:
        options = dict(by_queue=not args.no_queues, classes=args.classes, partition=args.partition)
    try:
        params = models.fit(args.model, trace, **options)
    except O2KSimError as exc:  # what the trace lacks: said of the file
        text = str(exc)
        if args.trace in text:
            raise
        raise O2KSimError(f"{args.trace}: cannot fit {args.model}: {text}") from None
    models.load_params(args.model, {k: v for k, v in params.items() if k != "fit"})  # validates
    header = (
        f"{args.model} parameters fitted by o2ksim {__version__} from {args.trace}\n"
        f"generate with: o2ksim generate --model {args.model} --params THIS_FILE --span 30d --seed 1 --out F.swf"
    )
    comments = {**_COMMON, **(_CB_COMMENTS if args.model == "cirne-berman" else _DOWNEY_COMMENTS)}
    text = models.dump_toml(params, comments, header)
    if args.out:
        try:
            models.write_params(params, args.out, header=header, comments=comments)
        except OSError as exc:
            raise O2KSimError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
        print(_summary(args.model, params))
        print(f"parameters written to {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def _summary(model: str, p: dict) -> str:
    if model == "cirne-berman":
        f = p["fit"]
        return (
            f"{p['site']}: {f['jobs']} jobs; arrivals {p['arrival']['jobs_per_day']:.1f}/day, polynomial degree "
            f"{f['arrival_degree']} ({len(f['excluded_days'])} day(s) excluded); partition chi {p['partition']['chi']:.4f} "
            f"rho {p['partition']['rho']:.4f} pb {p['partition']['power_of_two']:.4f}; requested time chi "
            f"{p['requested_time']['chi']:.4f} rho {p['requested_time']['rho']:.4f}; accuracy alpha "
            f"{p['accuracy']['alpha']:.4f} beta {p['accuracy']['beta']:.4f}; cancelled {p['cancellation']['probability']:.4f}"
            + _cb_extensions(p)
        )
    classes = ", ".join(
        f"{c['name']} {c['share']:.3f} ({c['beta0']:.3f}, {c['beta1']:.3f})" for c in p["class"]
    )
    return (
        f"{p['site']}: {p['fit']['jobs']} jobs, {p['arrival']['jobs_per_day']:.1f}/day; classes share (beta0, beta1): "
        f"{classes}; cluster size ({p['cluster_size']['beta0']:.3f}, {p['cluster_size']['beta1']:.3f})"
    )


def _cb_extensions(p: dict) -> str:
    """The summary of o2ksim's Cirne-Berman extensions, when fitted."""
    out = ""
    if "knots_procs" in p["partition"]:
        knots = ", ".join(
            f"({x:.3g}, {f:.4f})"
            for x, f in zip(p["partition"]["knots_procs"], p["partition"]["knots_cdf"], strict=True)
        )
        out += f"; size knots (procs, cdf) {knots}"
    if "correlation" in p["accuracy"]:
        out += f"; accuracy-request copula r {p['accuracy']['correlation']:.4f}"
    return out
