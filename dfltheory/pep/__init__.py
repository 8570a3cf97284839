"""Performance estimation (PEP) for the papers' decentralized algorithms: the exact worst case of a theorem's own
quantity over every problem its assumptions allow, as a semidefinite program (PEPit on cvxpy, Clarabel).

Public API::

    from dfltheory.pep import worst_case
    r = worst_case("dfedavg", m=3, K=2, T=5, eta=0.05, L=1, Delta=1, W=W, sigma_g=1, B=2)
    r.value            # certified upper bound on min_t ||grad f(x_bar^t)||^2 over the class
    worst_case("dfedavg", 3, 2, 5, 0.05, spectral=(-0.5, 0.5))   # every W with nonunit spectrum in [-0.5, 0.5]
    compare(r, lam=0.5)["ratio"]   # dfedsam.thm4.1 at sigma_l = 0 over the worst case (and its named variants)
    worst_case("dfedadmm", 3, 2, 5, 0.005, W=W, sigma_g=1, B=2, lam_pen=0.01)  # average of ||grad f(w^t)||^2
    worst_case("dfedcata-b", 3, 2, 4, 0.05, W=W, sigma_g=1, lam_pen=1, beta=0.3)  # at p^t of Lemma 6
    worst_case("dfedsgpm", 3, 2, 4, 0.02, W=P, sigma_g=1, B=2, alpha=0.5)  # push-sum, P column-stochastic
    worst_case("dfedsgpm", 3, 2, 4, 0.02, spectral=(-0.5, 0.5), sigma_g=1, B=2, alpha=0.5)  # symmetric W: w = 1
    worst_case("dfedavg", 3, 2, 4, 0.05, W=[W0, W1, W2])   # time-varying: round t mixes with W_t
    compare(r)         # lambda (push-sum: delta, C, q) taken from the PEP's mixing
    r.diagnostics["interpolation"]["interpolable"]  # the worst-case example checked independently
    pep_table()        # JSON-safe rows: worst case against each theorem's bound, every algorithm (~30 s)
    c = certify("dfedavg", 2, 1, 0.1, lam=0.5, sigma_g=1, T=10)   # a Lyapunov certificate: a bound for every T
    c.bound(10), c.bound(1000), c.floor, c.check["residual"]     # checked by an independent one-round PEP
    certificate_table(("dfedavg", "dpsgd-atc"), m=2, K=1, lam=0.5, sigma_g=1)  # paper / certificate / worst case
    worst_case("dpsgd", 2, 1, 5, 0.1, W=W)   # D-PSGD as Lian et al. wrote it; "dpsgd-atc": step, then mix

See docs/pep.md for what each value certifies and the limits.
"""

from dfltheory.pep.certify import Certificate, certificate_table, certify, tune, verify_certificate
from dfltheory.pep.compare import BOUNDS, PEPBound, compare, register_pep_bound
from dfltheory.pep.interpolation import check as interpolation_check
from dfltheory.pep.mixing import ExplicitMixing, PushSumMixing, SpectralClass, as_mixing
from dfltheory.pep.problem import (ALGORITHMS, GAPS, HETEROGENEITY_AT, MAX_GRAM, MAX_SECONDS, METRICS, PEPResult,
                                   PEPSolveError, Size, admm_gamma, estimate_size, metric_text, register_pep_model,
                                   worst_case)
from dfltheory.pep.sweep import W_lambda, plot, sweep
from dfltheory.pep.table import pep_table

__all__ = ["ALGORITHMS", "BOUNDS", "GAPS", "HETEROGENEITY_AT", "MAX_GRAM", "MAX_SECONDS", "METRICS",
           "Certificate", "ExplicitMixing", "PEPBound", "PEPResult", "PEPSolveError", "PushSumMixing", "Size",
           "SpectralClass", "W_lambda", "admm_gamma", "as_mixing", "certificate_table", "certify", "compare",
           "estimate_size", "interpolation_check", "metric_text", "pep_table", "plot", "register_pep_bound",
           "register_pep_model", "sweep", "tune",
           "verify_certificate", "worst_case"]
