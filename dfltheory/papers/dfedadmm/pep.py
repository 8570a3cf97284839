"""Which PEP models DFedADMM's Theorem 1 covers, and its symbols at a PEP's settings (sigma_l = 0), registered with
:func:`dfltheory.pep.compare.register_pep_bound`:

* ``dfedadmm``: dfedadmm.thm1 at rho = 0 (and its reading ``.dfedadmm``);
* ``dfedadmm-sam-unnormalized``: dfedadmm.thm1 and ``.corrected`` at the same rho (their proof bounds the
  unnormalized ascent y + rho g, card dfedadmm §11 item 2, with ||g||^2 <= sigma_l^2 + B^2), and ``.normalized`` at
  the radius rho B that bounds ||rho g|| (its proof only uses ||ascent|| <= radius).

All bound (1/T) sum_{t<T} ||grad f(w^t)||^2 at the auxiliary sequence, with psi = the second largest eigenvalue
modulus of W, f(w^0) - f* = f(x^0) - f* <= Delta, sigma_g (Assumption 3) and B (Assumption 4), for one gossip step
per round.
"""

from __future__ import annotations

THEOREM = "dfedadmm.thm1"
READINGS = ("dfedadmm.thm1", "dfedadmm.thm1.dfedadmm", "dfedadmm.thm1.corrected", "dfedadmm.thm1.normalized")
MODELS = ("dfedadmm", "dfedadmm-sam-unnormalized")


def values(s: dict, lam: float | None) -> tuple[dict | None, str]:
    """Theorem 1's symbols at the PEP's settings ``s`` (sigma_l = 0), or None and why not."""
    from dfltheory.pep.compare import missing_assumptions

    if s["Q"] != 1:
        return None, f"{THEOREM} models one gossip step per round (Q = 1), got Q = {s['Q']}"
    missing = missing_assumptions(s, THEOREM)
    if missing:
        return None, missing
    return dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], rho=s["rho"], sigma_l=0.0, sigma_g=s["sigma_g"],
                B=s["B"], psi=lam, lam_pen=s["lam_pen"], f0_minus_fstar=s["Delta"]), ""


def applies(reading: str, v: dict) -> bool:
    """``.dfedadmm`` is the rho = 0 reading; ``.corrected`` and ``.normalized`` differ in the SAM term only."""
    if reading == "dfedadmm.thm1.dfedadmm":
        return not v["rho"]
    if reading in ("dfedadmm.thm1.corrected", "dfedadmm.thm1.normalized"):
        return bool(v["rho"])
    return True


def register() -> None:
    """The theorem's PEP models into ``pep``, through the function a user's plugin calls."""
    from dfltheory.pep.compare import PEPBound, register_pep_bound

    # the unnormalized ascent rho g has radius at most rho B (.normalized's rho)
    radius = {"dfedadmm.thm1.normalized": lambda v: dict(v, rho=v["rho"] * v["B"])}
    register_pep_bound(PEPBound(MODELS, THEOREM, values, READINGS, applies=applies, at=radius), origin=__name__)
