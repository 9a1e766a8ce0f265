"""Analyses of results that are not part of a simulation run."""
