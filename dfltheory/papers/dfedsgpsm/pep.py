"""Which PEP models DFedSGPSM's Theorem 1 covers, and its symbols at a PEP's settings (sigma_l = 0), registered with
:func:`dfltheory.pep.compare.register_pep_bound`:

* ``dfedsgpm`` (and ``sgp``, its K = 1, alpha = 0 case, outside the theorem's K >= 2, alpha > 0): dfedsgpsm.thm1
  and its readings ``.corrected``, ``.consistent``, ``.alpha_tilde`` at rho = 0 and x0_sq_mean = 0, with push-sum
  constants delta, C, q (card dfedsgpsm §5; :func:`dfltheory.pep.compare.push_sum_constants` says how they are
  measured). Push-sum commutes with translations (x_i^t -> x_i^t + w_i^t a when x^0 -> x^0 + a and every f_i is
  shifted by a), so the worst case does not depend on ||x^0||^2 while the bound grows with it: the bound at
  x0_sq_mean = 0 is the one to beat.
* ``dfedsgpsm-unnormalized``: the same at the radius rho B >= ||rho g|| (the proof uses only the ascent's length,
  through L^2 rho^2).

All bound (1/T) sum_t ||grad f(x_bar^t)||^2 at the numerators' mean.
"""

from __future__ import annotations

import math

THEOREM = "dfedsgpsm.thm1"
READINGS = ("dfedsgpsm.thm1", "dfedsgpsm.thm1.corrected", "dfedsgpsm.thm1.consistent", "dfedsgpsm.thm1.alpha_tilde")
MODELS = ("sgp", "dfedsgpm", "dfedsgpsm-unnormalized")


def values(s: dict, lam: float | None) -> tuple[dict | None, str]:
    """Theorem 1's symbols at the PEP's settings ``s`` (sigma_l = 0, x0_sq_mean = 0), or None and why not."""
    from dfltheory.pep.compare import PUSH_SUM_HORIZON, missing_assumptions, push_sum_constants

    missing = missing_assumptions(s, THEOREM)
    if missing:
        return None, missing
    consts = push_sum_constants(s["mixing_args"], s["T"], s["m"])
    if not math.isfinite(consts["C"]):
        return None, (f"the mixing never reaches consensus over {max(s['T'], PUSH_SUM_HORIZON)} rounds "
                      f"(e(t) does not decay: the identity or a disconnected graph), so {THEOREM}'s e(t) <= C q^t "
                      "holds for no C and q < 1")
    rho = s["rho"] * s["B"] if s["rho"] else 0.0  # radius of the unnormalized ascent rho g
    return dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], alpha=s["alpha"] or 0.0, rho=rho, sigma_l=0.0,
                sigma_g=s["sigma_g"], B=s["B"], f0_minus_fstar=s["Delta"], x0_sq_mean=0.0, **consts), ""


def register() -> None:
    """The theorem's PEP models into ``pep``, through the function a user's plugin calls."""
    from dfltheory.pep.compare import PEPBound, register_pep_bound

    register_pep_bound(PEPBound(MODELS, THEOREM, values, READINGS), origin=__name__)
