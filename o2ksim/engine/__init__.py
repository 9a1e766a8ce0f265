"""The simulation engine (docs/background/architecture.md)."""
