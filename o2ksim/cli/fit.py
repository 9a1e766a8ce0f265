"""``o2ksim fit``: estimate a workload model's parameters from an SWF trace."""

from __future__ import annotations

import argparse
import sys

from o2ksim.errors import O2KSimError

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
        default="censored",
        help="cirne-berman accuracy fit: gamma MLE with accuracies >= 1 censored (default, "
        "consistent with the generator) or the paper's plain MLE of completed jobs",
    )
    parser.add_argument(
        "--size-fit",
        choices=("paper", "exact"),
        default="paper",
        help="cirne-berman partition-size fit: C§6's least-squares line of the empirical CDF at "
        "each distinct size (default, C Table 5) or least squares against the generator's own "
        "CDF with its power-of-two step (returns the parameters a generated trace came from)",
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
    from o2ksim import __version__
    from o2ksim.workloads import models
    from o2ksim.workloads.swf import read_swf

    trace = read_swf(args.trace, lenient=args.lenient)
    if args.model == "cirne-berman":
        params = models.fit(
            args.model, trace, accuracy_method=args.accuracy, partition_method=args.size_fit
        )
    else:
        params = models.fit(
            args.model,
            trace,
            by_queue=not args.no_queues,
            classes=args.classes,
            partition=args.partition,
        )
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
        )
    classes = ", ".join(
        f"{c['name']} {c['share']:.3f} ({c['beta0']:.3f}, {c['beta1']:.3f})" for c in p["class"]
    )
    return (
        f"{p['site']}: {p['fit']['jobs']} jobs, {p['arrival']['jobs_per_day']:.1f}/day; classes share (beta0, beta1): "
        f"{classes}; cluster size ({p['cluster_size']['beta0']:.3f}, {p['cluster_size']['beta1']:.3f})"
    )
