"""User-facing errors.

Every mistake a user can make (a malformed trace line, an unknown policy name,
a bad TOML field) is raised as an :class:`O2KSimError`.  The CLI turns it into
one line on stderr and exit code 2; it never shows a traceback for these.
Anything else escaping the CLI is a bug in o2ksim.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path


class O2KSimError(Exception):
    """Base class of errors caused by user input; the CLI exits with code 2."""

    exit_code = 2


class PerfectEstimatesWarning(UserWarning):
    """Jobs without a requested runtime (SWF field 9) were planned with their actual runtime:
    perfect estimates, which flatter backfilling (:func:`o2ksim.run.checks.perfect_estimates_note`).
    Defined here, with the errors, so that the CLI can silence it (it prints its own line)
    without importing the run layer."""


class UnusedSeedWarning(UserWarning):
    """A seed was given, but neither the workload (read from a trace, not generated) nor the
    policy drew a random number from the run's generator: every seed gives the same run
    (:func:`o2ksim.run.api.unused_seed_note`).  Known only after the run, since a user's
    policy may draw; here with the errors for the same reason as
    :class:`PerfectEstimatesWarning`."""


class RejectedJobsWarning(UserWarning):
    """The run rejected analysed jobs (more processors or memory than any host has, ...),
    counted per reason (:func:`o2ksim.run.checks.rejected_line`): they never ran and are
    not in the wait measures.  ``o2ksim run`` prints the same line itself; here with the
    errors for the same reason as :class:`PerfectEstimatesWarning`."""


class UnusedAvailabilityWarning(UserWarning):
    """Periods of an availability file started at or after the run's last event, so they
    changed nothing (:func:`o2ksim.availability.unused_periods_note`): known only after the
    run; here with the errors for the same reason as :class:`PerfectEstimatesWarning`."""


class InputError(O2KSimError):
    """A problem at a known place in an input file.

    The message names the file, the line (1-based) and the field, e.g.
    ``trace.swf:23: field 4 (run_time): 'abc' is not an integer``.
    """

    def __init__(
        self,
        path: str | PathLike[str] | None,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.reason = message
        where = self.path or "<input>"
        if line is not None:
            where += f":{line}"
        what = f"field {field}: " if field else ""
        super().__init__(f"{where}: {what}{message}")


class ConfigError(InputError):
    """A machine, policy or scenario file (TOML) that does not describe a valid object."""


def output_dir(path: str | PathLike[str]) -> Path:
    """Create the results directory ``path`` (and its parents) or say why not, as a user error."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise O2KSimError(f"{out}: cannot create the output directory ({exc.strerror})") from None
    return out
