"""Two rules of :class:`~o2ksim.policies.profile.Profile` kept apart from the step
function: what a reservation at a release time defers by one instant (the tie rule of
SPEC §3.1) and how :meth:`~o2ksim.policies.profile.Profile.earliest` remembers its
answers between searches.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from types import MappingProxyType

#: The releases of a profile under ``release_ties = "together"``: none is looked up, so no
#: reservation defers any (``Profile.deferred``); every release counts at its time.
NO_TIES: Mapping[float, list[tuple[int, float]]] = MappingProxyType({})


def remember(
    found: dict[tuple[int, float], tuple[list[float], list[float]]],
    key: tuple[int, float],
    duration: float,
    at: float,
) -> None:
    """Add the answer ``at`` for ``duration`` to ``found[key]``, keeping only the answers
    that bound a later search further than a shorter duration's (both lists rising)."""
    memo = found.get(key)
    if memo is None:
        found[key] = ([duration], [at])
        return
    durations, answers = memo
    j = bisect.bisect_right(durations, duration)
    if j and answers[j - 1] >= at:
        return  # a request no longer than this one already bounds as far
    k = j
    while k < len(answers) and answers[k] <= at:
        k += 1  # longer requests bounded no further: this answer bounds them
    if j and durations[j - 1] == duration:
        j -= 1
    durations[j:k] = [duration]
    answers[j:k] = [at]


def unneeded_releases(
    rel: Sequence[tuple[int, float]], have: tuple[int, float], procs: int, mem: float
) -> tuple[int, float]:
    """What a reservation of ``procs``/``mem`` at a release time does not need of the
    releases ``rel`` there (smallest first), when the profile has ``have`` free then:
    :meth:`Profile.reserve` defers it by one instant (the tie rule of the class docstring)."""
    have_p = have[0] - sum(p for p, _ in rel)
    have_m = have[1] - sum(m for _, m in rel)
    spare_p, spare_m = 0, 0.0
    for p, m in rel:
        if have_p >= procs and have_m >= mem:
            spare_p += p
            spare_m += m
        else:
            have_p += p
            have_m += m
    return spare_p, spare_m


__all__ = ["NO_TIES", "remember", "unneeded_releases"]
