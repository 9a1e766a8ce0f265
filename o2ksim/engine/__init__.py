"""The simulation engine (docs/background/architecture.md)."""

from o2ksim import _startup  # noqa: F401  # SimPy without importlib.metadata, before any engine module imports it
