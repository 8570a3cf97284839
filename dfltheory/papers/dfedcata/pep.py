"""Which PEP models DFedCata's Theorem 1 covers, and its symbols at a PEP's settings (sigma_l = 0), registered with
:func:`dfltheory.pep.compare.register_pep_bound`:

* ``dfedcata-b``: dfedcata.thm1 (card dfedcata §6.3, the proof's reading B; the paper's claim without a consensus
  term, Xi = 0) and ``.consensus`` (with Xi);
* ``dfedcata-a``: ``.A`` (reading A, p^t = a_bar^t, with Xi) and the same at Xi = 0.

All bound (1/T) sum_t ||grad f(p^t)||^2 under A3 (1/m) sum_i ||grad f_i||^2 <= G^2 + B_het^2 ||grad f||^2, which
with B_het = 1 is the PEP's sigma_g condition with G = sigma_g; Delta0 = 0 (x^{-1} = x^0); one gossip step per
round. A bound b + c Xi (Xi the run's consensus error of the y_i^t) is compared through the PEP of the average minus
c Xi (dfltheory.pep.compare).
"""

from __future__ import annotations


def values(s: dict, lam: float | None) -> tuple[dict | None, str]:
    """Theorem 1's symbols (either reading) at the PEP's settings ``s`` (sigma_l = 0), or None and why not."""
    tid = "dfedcata.thm1" if s["algorithm"] == "dfedcata-b" else "dfedcata.thm1.A"
    if s["Q"] != 1:
        return None, f"{tid} models one gossip step per round (Q = 1), got Q = {s['Q']}"
    if s["sigma_g"] is None:
        return None, f"{tid} assumes A3 (heterogeneity): give sigma_g (G of A3 with B_het = 1)"
    return dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], m=s["m"], sigma_l=0.0, f0_minus_fstar=s["Delta"],
                beta=s["beta"], lam_pen=s["lam_pen"], G_het=s["sigma_g"], B_het=1.0, Delta0=0.0, Q=s["Q"]), ""


def register() -> None:
    """The theorem's PEP models into ``pep``, through the function a user's plugin calls."""
    from dfltheory.pep.compare import PEPBound, register_pep_bound

    register_pep_bound(PEPBound(("dfedcata-b",), "dfedcata.thm1", values, ("dfedcata.thm1", "dfedcata.thm1.consensus"),
                                with_xi=("dfedcata.thm1.consensus",)), origin=__name__)
    register_pep_bound(PEPBound(("dfedcata-a",), "dfedcata.thm1.A", values, ("dfedcata.thm1.A", "dfedcata.thm1.A@Xi=0"),
                                with_xi=("dfedcata.thm1.A",)), origin=__name__)
