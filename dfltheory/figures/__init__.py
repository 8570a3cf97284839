"""Comparison figures: bounds against their parameters, topology constants, predicted against measured rates, the
clients' data partition.

Every function draws on a matplotlib ``Axes`` (a new figure when none is given) and returns it, so that
figures compose; nothing is shown or saved implicitly.
"""

from dfltheory.figures.bounds import plot_bound, plot_bound_terms
from dfltheory.figures.partition import plot_label_counts, plot_partition
from dfltheory.figures.topology import plot_topology_constants
from dfltheory.figures.training import plot_predicted_vs_measured, plot_rate_in_T, plot_topology_sweep

__all__ = ["plot_bound", "plot_bound_terms", "plot_topology_constants", "plot_predicted_vs_measured",
           "plot_topology_sweep", "plot_rate_in_T", "plot_label_counts", "plot_partition"]
