"""Reports: figures, tables and HTML pages built from results.

Only this package imports seaborn and matplotlib.  The modules:

* :mod:`o2ksim.report.data` -- the numbers behind the thesis's plots (pure pandas);
* :mod:`o2ksim.report.figures` -- the seaborn figures (T§3.5 Fig. 4, T§5.2 Figs. 49-50);
* :mod:`o2ksim.report.html` -- the self-contained HTML page (``o2ksim report``);
* :mod:`o2ksim.report.gantt` -- processor allocation per host over time (``o2ksim gantt``).
"""
