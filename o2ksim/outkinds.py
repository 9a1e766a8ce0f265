"""Which command's result a folder holds: the family of files of each writing command.

Every command that writes a results folder (``o2ksim run``, ``validate``,
``predict``, ``characterize``) writes its own *family* of files and replaces an
earlier result *of its kind* as a set (:class:`o2ksim.outfiles.Staging`).  Two
kinds must never share a folder: ``summary.json`` is both a run's and a
prediction's, ``summary.csv`` both a prediction's and a characterisation's, and
a run into a validation's folder would leave ``compared.csv`` beside a
different ``jobs.csv`` (issue-27 audit, D2).  So, as git refuses to clone into
a folder that is not empty, :func:`refuse_another_result` refuses, before any
work, a folder that holds another kind's result, naming that kind and the files
that show it.  A sweep's results directory and the folder of one of its runs
(``RESULTS/runs/<id>``) are refused to every command (D4): a sweep's run folder
is read back by ``report``, ``gantt`` and ``scenario claims``.

The families are defined here, once, below every command that writes them.
"""

from __future__ import annotations

import os
from pathlib import Path

from o2ksim.errors import O2KSimError

RUN_FILES = (
    "jobs.csv", "jobs.parquet", "segments.csv", "summary.json", "run.json", "report", "results",
)  # fmt: skip
"""The names a run writes into its folder; a new run replaces all of them."""

VALIDATION_FILES = (
    *RUN_FILES, "validation.csv", "validation.json", "compared.csv", "excluded.csv", "utilisation.csv",
    "outages.csv", "availability.csv", "validation-cdf.png", "validation-runtime.png",
    "validation-utilisation.png", "validation.html",
)  # fmt: skip
"""What ``o2ksim validate --out`` writes: the replayed run's files, the comparison's tables,
its figures and its page, committed together (``run.json`` last)."""

PREDICTION_FILES = (
    "predictions.csv", "summary.csv", "by_need.csv", "clm.toml", "clm.csv", "another_time.csv",
    "medians.csv", "summary.json", "fig4.png", "prediction.html",
)  # fmt: skip
"""What ``PredictionResult.save`` writes; a new prediction replaces all of an earlier one's."""

TABLE_FILES = (
    "summary.csv", "jobs_per_day_of_week.csv", "jobs_per_hour.csv", "periods.csv",
    "processors.csv", "memory.csv", "memory_by_procs.csv", "runtime.csv", "ratio.csv",
    "lsf_classes.csv",
)  # fmt: skip
"""Every table :meth:`~o2ksim.workloads.characterize.Characterization.save` may write
(``memory.csv``, ``memory_by_procs.csv`` and ``ratio.csv`` only for a trace with memory
requests or requested runtimes)."""

FIGURE_FILES = (
    "jobs_per_day.png", "jobs_per_hour.png", "interarrivals.png", "processors.png",
    "memory.png", "runtimes.png", "ratio.png", "lsf_classes.png",
)  # fmt: skip
"""Every figure :func:`o2ksim.report.workload_figures.write_figures` may draw.  With
:data:`TABLE_FILES`, the files of a characterisation."""

REPORT_FILES = ("report.html", "figures", "tables")
"""What a report folder holds (``o2ksim report``): a new report replaces all three."""

FAMILIES: dict[str, tuple[str, ...]] = {
    "validation": VALIDATION_FILES,
    "run": RUN_FILES,
    "prediction": PREDICTION_FILES,
    "characterisation": TABLE_FILES + FIGURE_FILES,
    "report": REPORT_FILES,
}
"""Each writing command's kind of result -> its family (a validation's holds a run's)."""

LAST: dict[str, str] = {
    "validation": "run.json",
    "run": "run.json",
    "prediction": "prediction.html",
    "characterisation": "summary.csv",
    "report": "report.html",
}
"""The file each kind renames in last: the folder holds it only with the rest of its result."""

SWEEP_PLAN = "plan.json"
"""The file that marks a sweep's results directory (``o2ksim scenario run --out``)."""


def is_prediction_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` was written by ``o2ksim predict`` (it holds ``predictions.csv`` and ``clm.toml``)."""
    p = Path(path)
    return (p / "predictions.csv").exists() and (p / "clm.toml").exists()


def report_place(
    results_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None
) -> tuple[Path, str]:
    """Where ``o2ksim report RESULTS_DIR [--out OUT_DIR]`` writes, and the kind of result the
    folder then holds: a prediction's page goes into its own folder, any other report into
    ``RESULTS_DIR/report``, unless ``out_dir`` is given.  One rule for the writers and for the
    command, which claims the folder before the report's heavy modules load."""
    prediction = is_prediction_dir(results_dir)
    if out_dir is not None:
        folder = Path(out_dir)
    else:
        folder = Path(results_dir) if prediction else Path(results_dir) / "report"
    return folder, "prediction" if prediction else "report"


_NOT_MARKERS = ("report", "results", "figures", "tables")
"""Sub-folders (a run's, a report's): names other tools give folders too, so they alone show
no result."""


def _markers(kind: str) -> tuple[str, ...]:
    """The files only ``kind`` writes (a validation's family holds a run's: a run's own
    names are those no other kind but a validation writes)."""
    mine = FAMILIES[kind]
    others = {*_NOT_MARKERS} | {
        name
        for k, family in FAMILIES.items()
        if k != kind and not set(mine) < set(family)
        for name in family
    }
    return tuple(n for n in mine if n not in others)


MARKERS: dict[str, tuple[str, ...]] = {kind: _markers(kind) for kind in FAMILIES}
"""Each kind's distinctive names: a folder holding one of them holds that kind's result."""


def result_held(folder: Path) -> tuple[str, list[str]] | None:
    """The kind of result ``folder`` holds and the names that show it, or ``None``.

    Kinds are tried in :data:`FAMILIES`' order, a validation before a run (a validation's
    folder holds a run's files too)."""
    for kind, names in MARKERS.items():
        found = [n for n in names if (folder / n).exists() or (folder / n).is_symlink()]
        if found:
            return kind, found
    return None


def sweep_run_of(folder: Path) -> Path | None:
    """The sweep whose run folder ``folder`` is (``RESULTS/runs/<id>``), or ``None``."""
    parent = folder.resolve().parent
    if parent.name == "runs" and (parent.parent / SWEEP_PLAN).is_file():
        return parent.parent
    return None


def refuse_sweep_run(folder: Path, where: str) -> None:
    """A sweep's run folder belongs to the sweep (``report``, ``gantt`` and ``scenario claims``
    read it back): no command writes its own result there (issue-27 audit, D4)."""
    sweep = sweep_run_of(folder)
    here = folder.resolve()
    if sweep is None and here.name == "runs" and (here.parent / SWEEP_PLAN).is_file():
        sweep, what = here.parent, "the runs/ folder"
    else:
        what = f"the folder of run {here.name}"
    if sweep is not None:
        raise O2KSimError(
            f"{where}: is {what} of the sweep in {sweep}; writing there would corrupt the "
            "sweep: choose another folder"
        )


def refuse_another_result(folder: Path, where: str, kind: str) -> None:
    """Refuse, in one line, a folder holding another kind's result than ``kind``'s (D2)."""
    held = result_held(folder)
    if held is not None and held[0] != kind:
        other, names = held
        raise O2KSimError(
            f"{where}: holds the results of `o2ksim {_command(other)}` ({', '.join(names[:4])}); "
            f"a {kind}'s files would be mixed with them: choose another folder"
        )


COMMANDS = {"run": "run", "validation": "validate", "prediction": "predict",
            "characterisation": "characterize", "report": "report"}  # fmt: skip
"""The command that writes each kind of result."""


def _command(kind: str) -> str:
    return COMMANDS[kind]


def refuse_result_file(target: Path, option: str) -> None:
    """Refuse a single output file (a figure, a trace) that would replace a file of a stored
    result: ``gantt RUN -o RUN/run.json`` (issue-27 audit, D25)."""
    folder = target.parent
    sweep = sweep_run_of(folder)
    held = result_held(folder)
    if (folder / SWEEP_PLAN).is_file() or sweep is not None:
        family: tuple[str, ...] = (SWEEP_PLAN, "scenario.toml", "summary.parquet", "summary.csv",
                                   "config.json", "summary.json", "jobs.parquet",
                                   "segments.parquet", "error.txt", "runs")  # fmt: skip
        what = "a sweep"
    elif held is not None:
        family, what = FAMILIES[held[0]], f"`o2ksim {_command(held[0])}`"
    else:
        return
    if target.name in family and (target.exists() or target.is_symlink()):
        raise O2KSimError(
            f"{option} {target}: is a file of the results of {what} in {folder}; "
            "writing there would destroy it: give another file name"
        )


__all__ = [
    "COMMANDS",
    "FAMILIES",
    "FIGURE_FILES",
    "LAST",
    "MARKERS",
    "PREDICTION_FILES",
    "REPORT_FILES",
    "RUN_FILES",
    "SWEEP_PLAN",
    "TABLE_FILES",
    "VALIDATION_FILES",
    "refuse_another_result",
    "refuse_result_file",
    "refuse_sweep_run",
    "report_place",
    "result_held",
    "sweep_run_of",
]
