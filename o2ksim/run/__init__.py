"""Running one simulation: the run-configuration and API layer.

* :mod:`o2ksim.run.config` -- :class:`~o2ksim.run.config.RunConfig`, one run described once, validated;
* :mod:`o2ksim.run.workload` -- the run's workload built from its recipe, and checked;
* :mod:`o2ksim.run.results` -- :class:`~o2ksim.run.results.Result`: the tables, summary and files of a run;
* :mod:`o2ksim.run.api` -- :func:`~o2ksim.run.api.simulate` and
  :func:`~o2ksim.run.api.run_config`, the one way into the engine.

This layer sits on the engine, the policies and the workloads and below the
experiments (:mod:`o2ksim.experiments`), the analyses, the reports and the
command line (docs/background/architecture.md, "Layers").  The package itself
imports nothing: ``import o2ksim.run.config`` does not load the engine.
"""
