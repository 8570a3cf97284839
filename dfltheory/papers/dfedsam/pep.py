"""Which PEP models DFedSAM's Theorem 4.1 covers, and its symbols at a PEP's settings (sigma_l = 0), registered
with :func:`dfltheory.pep.compare.register_pep_bound`:

* ``dfedavg``, ``dfedavg-mgs``, ``dpsgd-atc`` (D-PSGD step then mix, = DFedAvg with K = Q = 1): dfedsam.thm4.1 at
  rho = 0 (card dfedsam.md 3.2: DFedAvg is DFedSAM with rho = 0; -MGS through Q). Both bound
  min_{1<=t<=T} ||grad f(x_bar^t)||^2, x_bar^t the average round-start model, under L-smoothness, sigma_g
  (Assumption 2), B (Assumption 3), f(x_bar^1) - f* and a symmetric doubly stochastic W with lambda = its second
  largest eigenvalue modulus.
* ``dpsgd`` (D-PSGD in Lian et al. 2017's order: the gossip and the gradient at the unmixed point in parallel): no
  theorem of the catalog. dfedsam.thm4.1's proof mixes the step (X^{t+1} = W (X^t - eta G)); Lian's does not
  (X^{t+1} = W X^t - eta G), and its worst case is larger (docs/pep.md), so the bound is not reported for it.
* ``dfedsam-unnormalized`` with rho > 0: none. dfedsam.thm4.1's rho is the radius of the normalized ascent step;
  the unnormalized step's radius rho ||g|| varies, so the theorem is not a bound for it.

The named readings of the same theorem (card dfedsam.md 6.6-6.9) bound the same quantity; those that model one
gossip step only (Lemma E.2) apply at Q = 1.
"""

from __future__ import annotations

THEOREM = "dfedsam.thm4.1"
READINGS = ("dfedsam.thm4.1", "dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2", "dfedsam.thm4.1.proofE3",
            "dfedsam.thm4.1.corrected", "dfedsam.thm4.1.corrected_consensus", "dfedsam.thm4.1.tight")
Q1_ONLY = ("dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2")  # Lemma E.2: one gossip step per round
MODELS = ("dpsgd", "dpsgd-atc", "dfedavg", "dfedavg-mgs", "dfedsam-unnormalized")
PARALLEL = ("dpsgd",)  # Lian et al. 2017's order: the gradient at the unmixed point


def values(s: dict, lam: float | None) -> tuple[dict | None, str]:
    """Theorem 4.1's symbols at the PEP's settings ``s`` (sigma_l = 0, rho = 0), or None and why not."""
    from dfltheory.pep.compare import missing_assumptions

    if s["algorithm"] in PARALLEL:
        return None, (f"{THEOREM} analyses the step-then-mix order (dpsgd-atc, DFedAvg with K = 1); no theorem of the "
                      "catalog covers D-PSGD in Lian et al. 2017's order (the gradient at the unmixed point)")
    if s["algorithm"] == "dfedsam-unnormalized" and s["rho"]:
        return None, (f"no theorem covers the unnormalized ascent step (rho = {s['rho']}): {THEOREM}'s rho is the "
                      "radius of the normalized step")
    missing = missing_assumptions(s, THEOREM)
    if missing:
        return None, missing
    return dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], rho=0.0, sigma_l=0.0, sigma_g=s["sigma_g"], B=s["B"],
                lam=lam, m=s["m"], Q=s["Q"], f0_minus_fstar=s["Delta"]), ""


def register() -> None:
    """The theorem's PEP models into ``pep``, through the function a user's plugin calls."""
    from dfltheory.pep.compare import PEPBound, register_pep_bound

    register_pep_bound(PEPBound(MODELS, THEOREM, values, READINGS,
                                applies=lambda reading, v: reading not in Q1_ONLY or v["Q"] == 1), origin=__name__)
