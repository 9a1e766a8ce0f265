"""Progress bar for long runs (tqdm), driven by job completions."""

from __future__ import annotations

from typing import Any

from o2ksim.engine.monitor import Observer
from o2ksim.jobs import Job


class ProgressBar(Observer):
    """Counts finished jobs on stderr; updates at most every 0.5 s."""

    def __init__(self, total: int, desc: str = "simulating") -> None:
        # tqdm only when a bar is shown: importing it reads package metadata
        # (importlib.metadata), which a run without a bar never needs
        from tqdm import tqdm

        self._bar: Any = tqdm(total=total, desc=desc, unit="job", mininterval=0.5, leave=False)

    def on_end(self, job: Job, now: float) -> None:
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()
