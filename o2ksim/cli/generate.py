"""``o2ksim generate``: write a synthetic workload (O2K, Cirne-Berman or Downey model) as SWF."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from o2ksim.errors import O2KSimError
from o2ksim.files import parent_folder
from o2ksim.outfiles import Signalled, interrupts_end
from o2ksim.run.checks import MACHINE_LABEL
from o2ksim.validation import MAX_LOAD, MAX_UNIX_TIME, MIN_LOAD, check_span_option, seed_value
from o2ksim.workloads import models
from o2ksim.workloads.reshape import offered_load, scale_load
from o2ksim.workloads.swf import write_swf

HELP = "generate a synthetic workload (o2k, cirne-berman, downey) as an SWF file"

_MODELS = ("o2k", "cirne-berman", "downey")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", default="o2k", choices=_MODELS, help="workload model (default o2k)"
    )
    parser.add_argument(
        "--params",
        metavar="FILE|NAME",
        help="parameter file (TOML, e.g. from `o2ksim fit`) or a shipped set: o2k; kth, anl, ctc, sdsc "
        "(cirne-berman); downey. Default: the model's own set (cirne-berman: kth)",
    )
    parser.add_argument(
        "--month",
        metavar="YYYY-MM",
        help="o2k: the class mix, job count and per-class demand of one month of thesis "
        "Table 6 (1999-10 ... 2000-03, 2000-10 ... 2000-12) instead of the nine-month average",
    )
    parser.add_argument(
        "--dedicated",
        choices=("exclude", "include"),
        help="o2k: the vst jobs that ran on the three dedicated hosts -- left out as in the "
        "thesis's simulations (default, T 3.4) or included (SWF partition 2), as Table 6 counts them",
    )
    parser.add_argument(
        "--span", default="30d", help="time covered: 30d, 12h, 3600s, 2w (default 30d)"
    )
    parser.add_argument(
        "--seed",
        type=seed_value,
        default=0,
        help="random seed (default 0); the same seed gives the same file",
    )
    parser.add_argument(
        "--out", required=True, metavar="FILE.swf[.gz]", help="output SWF file (.gz to compress)"
    )
    parser.add_argument(
        "--load",
        metavar="RHO",
        help=f"scale interarrival times so that the offered load is RHO (G§4), from {MIN_LOAD:g} to {MAX_LOAD:g}",
    )
    parser.add_argument(
        "--start",
        metavar="UNIX|DATE",
        help="UnixStartTime of the trace: seconds or a UTC date (default 2000-01-03, a Monday)",
    )
    parser.set_defaults(func=run)


def _start(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        try:
            when = datetime.fromisoformat(text.strip())
        except ValueError:
            raise O2KSimError(
                f"--start: '{text}' is neither Unix seconds nor a date like 2000-01-03"
            ) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        value = int(when.timestamp())
    if not -MAX_UNIX_TIME <= value <= MAX_UNIX_TIME:  # o2ksim's SWF reader refuses the header
        raise O2KSimError(
            f"--start {text}: at most {MAX_UNIX_TIME} (9999-12-31 23:59:59 UTC) either side of 1970"
        )
    return value


def _load(text: str | None) -> float | None:
    """``--load``: an offered load from :data:`MIN_LOAD` to :data:`MAX_LOAD`."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise O2KSimError(f"--load {text}: not a number (e.g. 0.8)") from None
    if not MIN_LOAD <= value <= MAX_LOAD:  # NaN too
        raise O2KSimError(f"--load {text}: must be from {MIN_LOAD:g} to {MAX_LOAD:g} (a share of the machine)")
    return value


def run(args: argparse.Namespace) -> int:
    """``o2ksim generate``: the trace is written whole or not at all
    (:func:`o2ksim.files.atomic_path`); SIGINT/SIGTERM end it in one line, exit 128 + signal."""
    args.written = False

    def said(exc: Signalled) -> str:
        if args.written:
            return f"interrupted by {exc} after {args.out} was written"
        return (
            f"interrupted by {exc}; nothing was written to {args.out} "
            "(an earlier file there is untouched)"
        )

    with interrupts_end(said):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    # refused before the workload is generated; never the parameter file it reads
    parent_folder(args.out, "--out", inputs=(args.params,))
    load_target = _load(args.load)
    try:
        span = models.parse_span(args.span) if isinstance(args.span, str) else args.span
    except O2KSimError as exc:
        raise O2KSimError(f"--span {args.span}: {exc}") from None
    check_span_option(span, warmup=False)  # '1e9d' was taken and the generator was killed for its memory
    params = args.params
    overrides = None
    if (args.month or args.dedicated) and args.model != "o2k":
        raise O2KSimError("--month and --dedicated are options of the o2k model (--model o2k)")
    if args.month:
        if args.params:
            raise O2KSimError("give either --month or --params, not both")
        if args.month not in models.PARAM_SETS["o2k"][1:]:
            raise O2KSimError(
                f"--month: no Table 6 month '{args.month}' "
                f"(known: {', '.join(models.PARAM_SETS['o2k'][1:])})"
            )
        params = args.month
    if args.dedicated:
        overrides = {"dedicated": {"include": args.dedicated == "include"}}
    trace = models.generate(
        args.model,
        span=span,
        seed=args.seed,
        params=params,
        start_time=_start(args.start),
        overrides=overrides,
    )
    if len(trace.jobs) == 0:
        source = trace.header.extra.get("O2KSimParamSource", args.model)
        raise O2KSimError(
            f"{source}: the model generated no jobs in {args.span}; use a longer --span "
            "or a higher arrival rate"
        )
    if load_target is not None:
        try:
            trace = scale_load(trace, load_target)
        except O2KSimError as exc:
            raise O2KSimError(f"--load {args.load}: {exc}") from None
    if args.model == "o2k":  # `o2ksim run --trace` then runs it on the O2K's hosts
        trace.header.extra[MACHINE_LABEL] = "o2k"
    try:
        write_swf(trace, args.out)
        args.written = True
    except OSError as exc:
        raise O2KSimError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    procs = trace.header.max_procs
    load = offered_load(trace)
    source = trace.header.extra.get("O2KSimParamSource", "")
    days = float(trace.header.extra.get("O2KSimSpan", 0)) / 86400.0
    print(
        f"wrote {args.out}: {len(trace.jobs)} jobs, model {args.model} ({source}), seed {args.seed}, "
        f"{days:g} days, offered load {load:.3f} of {procs} processors over the {days:g} days of "
        "arrivals (a run states its utilisation over first submit to last end)"
    )
    return 0
