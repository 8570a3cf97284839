"""Pieces shared by the direct runs that the PEP tests compare worst cases with (one per algorithm, in its test)."""

import numpy as np


def measure(grad, point, metric, het, queried) -> None:
    """At ``point``: ||grad f||^2 into ``metric``, the heterogeneity (1/m) sum_i ||grad f_i - grad f||^2 into ``het``,
    each ||grad f_i||^2 into ``queried`` (the points where the assumptions are imposed)."""
    gs = [g(point) for g in grad]
    mean = np.mean(gs, axis=0)
    metric.append(mean @ mean)
    het.append(np.mean([(gi - mean) @ (gi - mean) for gi in gs]))
    queried += [gi @ gi for gi in gs]


def local_gradient(grad_i, y, rho, queried):
    """The local direction at ``y``: the gradient, or with ``rho`` the unnormalized SAM gradient at y + rho g; every
    queried gradient's squared norm into ``queried``."""
    g = grad_i(y)
    queried.append(g @ g)
    if rho:
        g = grad_i(y + rho * g)
        queried.append(g @ g)
    return g
