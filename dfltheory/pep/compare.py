"""A PEP worst case next to the theorem that bounds the same quantity, at sigma_l = 0 (PEP is deterministic).

Which theorem covers which PEP algorithm:

* ``dfedavg``, ``dfedavg-mgs``, ``dpsgd`` (= DFedAvg with K = Q = 1): dfedsam.thm4.1 at rho = 0 (card dfedsam.md 3.2:
  DFedAvg is DFedSAM with rho = 0; -MGS through Q). Both bound min_{1<=t<=T} ||grad f(x_bar^t)||^2, x_bar^t the
  average round-start model, under L-smoothness, sigma_g (Assumption 2), B (Assumption 3), f(x_bar^1) - f* and a
  symmetric doubly stochastic W with lambda = its second largest eigenvalue modulus.
* ``dfedsam-unnormalized`` with rho > 0: none. dfedsam.thm4.1's rho is the radius of the normalized ascent step;
  the unnormalized step's radius rho ||g|| varies, so the theorem is not a bound for it.
* ``dfedadmm``: dfedadmm.thm1 at rho = 0 (and its reading ``.dfedadmm``). ``dfedadmm-sam-unnormalized``:
  dfedadmm.thm1 and ``.corrected`` at the same rho (their proof bounds the unnormalized ascent y + rho g, card
  dfedadmm §11 item 2, with ||g||^2 <= sigma_l^2 + B^2), and ``.normalized`` at the radius rho B that bounds
  ||rho g|| (its proof only uses ||ascent|| <= radius). All bound (1/T) sum_{t<T} ||grad f(w^t)||^2 at the auxiliary
  sequence, with psi = the second largest eigenvalue modulus of W, f(w^0) - f* = f(x^0) - f* <= Delta, sigma_g
  (Assumption 3) and B (Assumption 4).
"""

from __future__ import annotations

from dfltheory.pep.problem import ADMM, PEPResult

__all__ = ["THEOREM", "THEOREMS", "VARIANTS", "theorem_for", "theorem_values", "compare"]

THEOREM = "dfedsam.thm4.1"
#: The named readings of the same theorem (card dfedsam.md 6.6-6.9), each bounding the same quantity; those that
#: model one gossip step only (Lemma E.2) apply at Q = 1.
VARIANTS = ("dfedsam.thm4.1", "dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2", "dfedsam.thm4.1.proofE3",
            "dfedsam.thm4.1.corrected", "dfedsam.thm4.1.corrected_consensus", "dfedsam.thm4.1.tight")
Q1_ONLY = ("dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2")
#: theorem id -> the readings compared with it, per family
THEOREMS = {"dfedsam.thm4.1": VARIANTS,
            "dfedadmm.thm1": ("dfedadmm.thm1", "dfedadmm.thm1.dfedadmm", "dfedadmm.thm1.corrected",
                              "dfedadmm.thm1.normalized")}


def theorem_for(algorithm: str) -> str:
    return "dfedadmm.thm1" if algorithm in ADMM else THEOREM


def theorem_values(result: PEPResult, lam: float) -> tuple[dict | None, str]:
    """The theorem's values for the PEP instance (sigma_l = 0), or None and why not."""
    s = result.settings
    tid = theorem_for(s["algorithm"])
    if s["algorithm"] == "dfedsam-unnormalized" and s["rho"]:
        return None, (f"no theorem covers the unnormalized ascent step (rho = {s['rho']}): {THEOREM}'s rho is the "
                      "radius of the normalized step")
    missing = [k for k in ("sigma_g", "B") if s[k] is None]
    if missing:
        return None, f"{tid} assumes {' and '.join(missing)} (its heterogeneity and bounded-gradient assumptions): " \
                     f"give {', '.join(missing)}"
    if s["algorithm"] in ADMM:
        if s["Q"] != 1:
            return None, f"{tid} models one gossip step per round (Q = 1), got Q = {s['Q']}"
        values = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], rho=s["rho"], sigma_l=0.0, sigma_g=s["sigma_g"],
                      B=s["B"], psi=lam, lam_pen=s["lam_pen"], f0_minus_fstar=s["Delta"])
        return values, ""
    values = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], rho=0.0, sigma_l=0.0, sigma_g=s["sigma_g"], B=s["B"],
                  lam=lam, m=s["m"], Q=s["Q"], f0_minus_fstar=s["Delta"])
    return values, ""


def compare(result: PEPResult, lam: float) -> dict:
    """The worst case, the theorem's bound at sigma_l = 0 and the ratio bound / worst case; ``variants`` the same
    for its named readings (:data:`THEOREMS`).

    ``bound`` is None (with ``reason``) where no theorem covers the instance or a condition of the theorem fails
    (then its formula bounds nothing). ``finding`` is True when a bound (the theorem's or a variant's) lies below
    the worst case: a candidate counter-example only, see docs/pep.md.
    """
    values, reason = theorem_values(result, lam)
    tid = theorem_for(result.settings["algorithm"])
    rows = [_one(v, values, reason, result) for v in THEOREMS[tid] if _applies(v, values, result)]
    if values is None:
        rows = rows[:1]
    out = dict(rows[0], lam=lam, worst_case=result.value, variants=rows[1:])
    out["finding"] = any(r["finding"] for r in rows)
    return out


def _applies(tid: str, values: dict | None, result: PEPResult) -> bool:
    if values is None or tid == theorem_for(result.settings["algorithm"]):
        return True
    if tid in Q1_ONLY:
        return values["Q"] == 1
    if tid == "dfedadmm.thm1.dfedadmm":  # the rho = 0 reading
        return not values["rho"]
    if tid in ("dfedadmm.thm1.corrected", "dfedadmm.thm1.normalized"):  # they differ in the SAM term only
        return bool(values["rho"])
    return True


def _one(tid: str, values: dict | None, reason: str, result: PEPResult) -> dict:
    from dfltheory.bounds import get

    out = dict(theorem=tid, bound=None, ratio=None, finding=False, reason=reason, terms={}, failed_conditions=[])
    if values is None:
        return out
    thm = get(tid)
    if tid == "dfedadmm.thm1.normalized":  # the unnormalized ascent rho g has radius at most rho B
        values = dict(values, rho=values["rho"] * values["B"])
    check = thm.check(**{k: values[k] for k in thm.required})
    out["terms"] = dict(check.terms)
    if not check.is_bound:
        out["failed_conditions"] = [v.relation for v in check.conditions if v.holds is False]
        out["reason"] = f"a condition of {tid} fails ({'; '.join(out['failed_conditions'])}): its formula bounds " \
                        "nothing here"
        return out
    out["bound"] = float(check.value)
    out["ratio"] = out["bound"] / result.value if result.value > 0 else float("inf")
    out["finding"] = out["bound"] < result.value
    return out
