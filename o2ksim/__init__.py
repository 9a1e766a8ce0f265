"""o2ksim: a SimPy simulator of parallel-job scheduling on the NCSA Origin 2000 and beyond."""

__version__ = "0.1.0"
