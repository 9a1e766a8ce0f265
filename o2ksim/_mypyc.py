"""mypyc's class decorator for the optional compiled build, and a no-op for the pure one.

``@mypyc_attr(allow_interpreted_subclasses=True)`` lets user code subclass a
class the compiled build compiles (``FCFS``, ``Backfill``: user policies, the
tests' recording policies).  The pure build needs no ``mypy_extensions``: there
the decorator does nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr
else:
    try:
        from mypy_extensions import mypyc_attr
    except ImportError:  # the pure build without mypy installed: nothing to mark

        def mypyc_attr(*attrs, **kwattrs):
            return lambda cls: cls


__all__ = ["mypyc_attr"]
