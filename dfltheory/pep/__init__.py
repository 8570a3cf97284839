"""Performance estimation (PEP) for the papers' decentralized algorithms: the exact worst case of a theorem's own
quantity over every problem its assumptions allow, as a semidefinite program (PEPit on cvxpy, Clarabel).

Public API::

    from dfltheory.pep import worst_case
    r = worst_case("dfedavg", m=3, K=2, T=5, eta=0.05, L=1, Delta=1, W=W, sigma_g=1, B=2)
    r.value            # certified upper bound on min_t ||grad f(x_bar^t)||^2 over the class
    worst_case("dfedavg", 3, 2, 5, 0.05, spectral=(-0.5, 0.5))   # every W with nonunit spectrum in [-0.5, 0.5]

See docs/pep.md for what each value certifies and the limits.
"""

from dfltheory.pep.mixing import ExplicitMixing, SpectralClass, as_mixing
from dfltheory.pep.problem import (ALGORITHMS, GAPS, HETEROGENEITY_AT, MAX_GRAM, MAX_SECONDS, PEPResult, PEPSolveError,
                                   Size, estimate_size, worst_case)

__all__ = ["ALGORITHMS", "GAPS", "HETEROGENEITY_AT", "MAX_GRAM", "MAX_SECONDS", "ExplicitMixing", "PEPResult",
           "PEPSolveError", "Size", "SpectralClass", "as_mixing", "estimate_size", "worst_case"]
