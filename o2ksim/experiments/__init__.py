"""Experiments: scenarios (many runs described in one TOML file) and sweeps that run them.

* :mod:`o2ksim.experiments.scenario` -- a validated :class:`~o2ksim.experiments.scenario.Scenario`
  and its plan of runs (:mod:`o2ksim.experiments.tables` reads each table of the file);
* :mod:`o2ksim.experiments.sweep` -- :func:`~o2ksim.experiments.sweep.run_sweep`: every run,
  resumably, in this process, a process pool or on Dask (:mod:`o2ksim.experiments.workers`);
* :mod:`o2ksim.experiments.store` -- the results directory, written and read back
  (:func:`~o2ksim.experiments.store.load_results`);
* :mod:`o2ksim.experiments.expected` -- the pinned summaries CI compares reduced runs with.

This layer sits on the run layer (:mod:`o2ksim.run`) and below the analyses,
reports and command line (docs/background/architecture.md, "Layers").  The
package itself imports nothing.
"""
