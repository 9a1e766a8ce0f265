"""The engine's own exceptions: a bug in a policy or in the engine, never a user mistake.

They live in a module of their own, below both :mod:`o2ksim.jobs` and
:mod:`o2ksim.engine.decisions`, so that neither imports the other for them.
They are importable from where they are used: :class:`PolicyError` from
:mod:`o2ksim.engine.decisions`, :class:`IllegalTransition` from
:mod:`o2ksim.jobs`.
"""

from __future__ import annotations


class PolicyError(RuntimeError):
    """A policy asked for something the engine cannot do (a policy bug)."""


class IllegalTransition(RuntimeError):
    """A job was asked to move between states its lifecycle does not allow."""
