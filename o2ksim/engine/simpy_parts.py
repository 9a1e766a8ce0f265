"""The engine's SimPy subclasses: the pass signal, the job process and the resource pools.

They live apart from :mod:`o2ksim.engine.core` (which imports them from here,
and re-exports them) because the optional compiled build
(``make install-fast``, docs/guides/performance.md) compiles ``core`` and a
compiled class cannot subclass a Python class such as :class:`simpy.Event`;
this module always runs as plain Python.
"""

from __future__ import annotations

from typing import Any, cast

import simpy
from simpy.events import NORMAL, EventPriority

from o2ksim.engine.errors import PolicyError

LATE = cast(EventPriority, NORMAL + 1)  # SimPy priority of passes: after same-time events


class PassSignal(simpy.Event):
    """An event that, once fired, is processed after every same-time normal event."""

    def fire(self) -> None:
        self._ok = True
        self._value = None
        self.env.schedule(self, LATE)


class JobProcess(simpy.Process):
    """A job's SimPy process: one event per job that is never preempted or resized.

    A plain :class:`simpy.Process` costs a job three events: an ``Initialize``
    event that takes the generator's first step, the runtime timeout, and the
    process's own end event.  Here the first step is taken when the process is
    created (it only computes when the job will end and yields that timeout,
    which nothing at the same instant can change without interrupting the
    process anyway), and when the generator returns and nobody waits for the
    process, its end event is marked processed at once instead of being
    scheduled to call no callbacks (:meth:`_resume`).  The process is otherwise
    a :class:`simpy.Process` (``is_alive``, ``value``, ``interrupt``,
    waiting for it).  This sets SimPy 4.1's private ``_generator``,
    ``_target``, ``_ok``, ``_value`` and ``_active_proc`` as
    :class:`simpy.Process` does; setup.cfg pins ``simpy`` to the versions it
    is tested with.  The generator must yield, at each step, an event not yet
    processed, and only interrupts may fail the events it waits for.
    """

    def __init__(self, env: simpy.Environment, generator: Any) -> None:
        self.env = env
        self.callbacks = []
        self._generator = generator
        target: simpy.Event = next(generator)
        self._target = target
        target.callbacks.append(self._resume)

    def _resume(self, event: simpy.Event) -> None:
        """Send ``event``'s value (or throw its interrupt) into the generator: one step."""
        env = self.env
        env._active_proc = self
        try:
            if event._ok:
                target = self._generator.send(event._value)
            else:  # an Interruption (SimPy hands it over already defused)
                event._defused = True
                cause = event._value
                interrupt = type(cause)(*cause.args)
                interrupt.__cause__ = cause
                target = self._generator.throw(interrupt)
        except StopIteration as stop:
            self._ok = True
            self._value = stop.value
            self._target = None  # type: ignore[assignment]
            env._active_proc = None
            if self.callbacks:
                env.schedule(self)  # someone waits for the job's process
            else:
                self.callbacks = None  # type: ignore[assignment]  # processed: no one to call
            return
        except BaseException as exc:  # the process failed: SimPy crashes the run with it
            self._ok = False
            self._value = exc
            self._target = None  # type: ignore[assignment]
            env._active_proc = None
            env.schedule(self)
            return
        target.callbacks.append(self._resume)
        self._target = target
        env._active_proc = None


class Pool(simpy.Container):
    """A host's processors or memory: a :class:`simpy.Container` the engine books at once.

    Nothing in the model ever *waits* for processors or memory — the
    scheduler starts a job only when its resources are free — so the
    get/put events a Container would schedule and process one by one (four
    per job) carry no information.  :meth:`take` and :meth:`give` change the
    level directly and refuse to over-commit; ``level`` and ``capacity`` are
    the Container's own, and ``get``/``put`` still work for model extensions
    that do want to wait.  (This touches the Container's ``_level``; setup.cfg
    pins ``simpy`` to the versions it is tested with.)
    """

    def take(self, amount: float) -> bool:
        """Remove ``amount``; ``False`` (and no change) if it is not there."""
        if amount > self._level:
            return False
        self._level -= amount
        return True

    def give(self, amount: float) -> None:
        """Put ``amount`` back (never above the capacity: that would be an engine bug)."""
        level = self._level + amount
        if level > self._capacity:
            raise PolicyError(f"pool over its capacity ({level} > {self._capacity})")
        self._level = level
