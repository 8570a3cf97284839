"""A PEP worst case next to the theorem that bounds the same quantity, at sigma_l = 0 (PEP is deterministic).

Which theorem covers which PEP algorithm:

* ``dfedavg``, ``dfedavg-mgs``, ``dpsgd`` (= DFedAvg with K = Q = 1): dfedsam.thm4.1 at rho = 0 (card dfedsam.md 3.2:
  DFedAvg is DFedSAM with rho = 0; -MGS through Q). Both bound min_{1<=t<=T} ||grad f(x_bar^t)||^2, x_bar^t the
  average round-start model, under L-smoothness, sigma_g (Assumption 2), B (Assumption 3), f(x_bar^1) - f* and a
  symmetric doubly stochastic W with lambda = its second largest eigenvalue modulus.
* ``dfedsam-unnormalized`` with rho > 0: none. dfedsam.thm4.1's rho is the radius of the normalized ascent step;
  the unnormalized step's radius rho ||g|| varies, so the theorem is not a bound for it.
"""

from __future__ import annotations

from dfltheory.pep.problem import PEPResult

__all__ = ["THEOREM", "VARIANTS", "theorem_values", "compare"]

THEOREM = "dfedsam.thm4.1"
#: The named readings of the same theorem (card dfedsam.md 6.6-6.9), each bounding the same quantity; those that
#: model one gossip step only (Lemma E.2) apply at Q = 1.
VARIANTS = ("dfedsam.thm4.1", "dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2", "dfedsam.thm4.1.proofE3",
            "dfedsam.thm4.1.corrected", "dfedsam.thm4.1.corrected_consensus", "dfedsam.thm4.1.tight")
Q1_ONLY = ("dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2")


def theorem_values(result: PEPResult, lam: float) -> tuple[dict | None, str]:
    """The theorem's values for the PEP instance (sigma_l = 0, rho = 0), or None and why not."""
    s = result.settings
    if s["algorithm"] == "dfedsam-unnormalized" and s["rho"]:
        return None, (f"no theorem covers the unnormalized ascent step (rho = {s['rho']}): {THEOREM}'s rho is the "
                      "radius of the normalized step")
    missing = [k for k in ("sigma_g", "B") if s[k] is None]
    if missing:
        return None, f"{THEOREM} assumes {' and '.join(missing)} (Assumptions 2-3): give {', '.join(missing)}"
    values = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], rho=0.0, sigma_l=0.0, sigma_g=s["sigma_g"], B=s["B"],
                  lam=lam, m=s["m"], Q=s["Q"], f0_minus_fstar=s["Delta"])
    return values, ""


def compare(result: PEPResult, lam: float) -> dict:
    """The worst case, the theorem's bound at sigma_l = 0 and the ratio bound / worst case; ``variants`` the same
    for its named readings (:data:`VARIANTS`).

    ``bound`` is None (with ``reason``) where no theorem covers the instance or a condition of the theorem fails
    (then its formula bounds nothing). ``finding`` is True when a bound (the theorem's or a variant's) lies below
    the worst case: a candidate counter-example only, see docs/pep.md.
    """
    values, reason = theorem_values(result, lam)
    rows = [_one(tid, values, reason, result) for tid in VARIANTS if tid == THEOREM or values is None or
            values["Q"] == 1 or tid not in Q1_ONLY]
    if values is None:
        rows = rows[:1]
    out = dict(rows[0], lam=lam, worst_case=result.value, variants=rows[1:])
    out["finding"] = any(r["finding"] for r in rows)
    return out


def _one(tid: str, values: dict | None, reason: str, result: PEPResult) -> dict:
    from dfltheory.bounds import get

    out = dict(theorem=tid, bound=None, ratio=None, finding=False, reason=reason, terms={}, failed_conditions=[])
    if values is None:
        return out
    thm = get(tid)
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
