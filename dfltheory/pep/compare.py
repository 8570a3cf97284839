"""A PEP worst case next to the theorem that bounds the same quantity, at sigma_l = 0 (PEP is deterministic).

Which theorem covers which PEP algorithm:

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
* ``dfedadmm``: dfedadmm.thm1 at rho = 0 (and its reading ``.dfedadmm``). ``dfedadmm-sam-unnormalized``:
  dfedadmm.thm1 and ``.corrected`` at the same rho (their proof bounds the unnormalized ascent y + rho g, card
  dfedadmm §11 item 2, with ||g||^2 <= sigma_l^2 + B^2), and ``.normalized`` at the radius rho B that bounds
  ||rho g|| (its proof only uses ||ascent|| <= radius). All bound (1/T) sum_{t<T} ||grad f(w^t)||^2 at the auxiliary
  sequence, with psi = the second largest eigenvalue modulus of W, f(w^0) - f* = f(x^0) - f* <= Delta, sigma_g
  (Assumption 3) and B (Assumption 4).
* ``dfedcata-b``: dfedcata.thm1 (card dfedcata §6.3, the proof's reading B; the paper's claim without a consensus
  term, Xi = 0) and ``.consensus`` (with Xi); ``dfedcata-a``: ``.A`` (reading A, p^t = a_bar^t, with Xi) and the
  same at Xi = 0. All bound (1/T) sum_t ||grad f(p^t)||^2 under A3 (1/m) sum_i ||grad f_i||^2 <= G^2 + B_het^2
  ||grad f||^2, which with B_het = 1 is the PEP's sigma_g condition with G = sigma_g; Delta0 = 0 (x^{-1} = x^0).
  A bound b + c Xi (Xi the run's consensus error of the y_i^t) holds on every instance iff the worst case of the
  average minus c Xi is <= b: that second PEP is solved (``xi_weight`` of worst_case) and reported.
* ``dfedsgpm`` (and ``sgp``, its K = 1, alpha = 0 case, outside the theorem's K >= 2, alpha > 0):
  dfedsgpsm.thm1 and its readings ``.corrected``, ``.consistent``, ``.alpha_tilde`` at rho = 0 and x0_sq_mean = 0,
  with push-sum constants (card dfedsgpsm §5): delta the smallest push-sum weight and e(t) = max_i sum_j
  |Phi(t)_ij / w_i^t - 1/m| (Phi(t) = P_{t-1}...P_0) over max(T, 100) rounds (dfltheory.topology.pushsum; a sequence
  P_0..P_{S-1} continued periodically). Lemma 4 (card §6.4) needs ||z_i^t - x_bar^t|| <= C q^t ..., i.e. any pair with
  e(t) <= C q^t for every t; the theorem's only (C, q) term at x0_sq_mean = 0 is C^2/(1 - q)^2, so the pair used is the
  one minimizing C/(1 - q) among the pairs valid over the horizon (:func:`best_rate`; e(t) <= 1e-12 counts as 0): the
  smallest bound the theorem gives for that P. (pushsum.measured's fitted pair, the asymptotic rate, is also valid on
  the horizon but gives a larger bound: 2.65/(1 - 0.293) = 3.74 against 1.33/(1 - 0.5) = 2.67 for
  table.P_DIRECTED, and 1e23 where a random sequence reaches consensus exactly after two rounds.) Over the spectral
  class [lo, hi] (symmetric doubly stochastic W, on which push-sum keeps w = 1): delta = 1, q = lambda =
  max(|lo|, |hi|), C = sqrt(m - 1), the same optimum for the whole class: row i of W^t - 11^T/m is
  (e_i - 1/m)^T (W^t - 11^T/m), whose 2-norm is at most lambda^t sqrt((m - 1)/m) and 1-norm sqrt(m) times that, so
  e(t) <= sqrt(m - 1) lambda^t for every W of the class (equality for m = 2), and no q < lambda bounds every W.
  Push-sum commutes with translations (x_i^t -> x_i^t + w_i^t a when x^0 -> x^0 + a and every f_i is shifted by a),
  so the worst case does not depend on ||x^0||^2 while the bound grows with it: the bound at x0_sq_mean = 0 is the one
  to beat. ``dfedsgpsm-unnormalized``: the same at the radius rho B >= ||rho g|| (the proof
  uses only the ascent's length, through L^2 rho^2). All bound (1/T) sum_t ||grad f(x_bar^t)||^2 at the numerators'
  mean.
"""

from __future__ import annotations

import math

from dfltheory.pep.problem import ADMM, CATA, LIKE, MODELS, PARALLEL, PUSH_SUM, THEOREM_OF, PEPResult, PEPSolveError

__all__ = ["THEOREM", "THEOREMS", "VARIANTS", "best_rate", "compare", "mixing_lambda", "push_sum_constants",
           "theorem_for", "theorem_values"]

THEOREM = "dfedsam.thm4.1"
#: The named readings of the same theorem (card dfedsam.md 6.6-6.9), each bounding the same quantity; those that
#: model one gossip step only (Lemma E.2) apply at Q = 1.
VARIANTS = ("dfedsam.thm4.1", "dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2", "dfedsam.thm4.1.proofE3",
            "dfedsam.thm4.1.corrected", "dfedsam.thm4.1.corrected_consensus", "dfedsam.thm4.1.tight")
Q1_ONLY = ("dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2")
#: theorem id -> the readings compared with it, per family
THEOREMS = {"dfedsam.thm4.1": VARIANTS,
            "dfedadmm.thm1": ("dfedadmm.thm1", "dfedadmm.thm1.dfedadmm", "dfedadmm.thm1.corrected",
                              "dfedadmm.thm1.normalized"),
            "dfedcata.thm1": ("dfedcata.thm1", "dfedcata.thm1.consensus"),
            "dfedcata.thm1.A": ("dfedcata.thm1.A", "dfedcata.thm1.A@Xi=0"),
            "dfedsgpsm.thm1": ("dfedsgpsm.thm1", "dfedsgpsm.thm1.corrected", "dfedsgpsm.thm1.consistent",
                               "dfedsgpsm.thm1.alpha_tilde")}
#: Rounds over which push-sum's C, q and delta are measured (at least T).
PUSH_SUM_HORIZON = 100
#: Readings with a consensus-error term c Xi: compared through the PEP of the average minus c Xi. "@Xi=0" rows are the
#: same bound with Xi set to 0 (the paper's claim that the bound has no topology term), against the plain worst case.
WITH_XI = ("dfedcata.thm1.consensus", "dfedcata.thm1.A")


def theorem_for(algorithm: str) -> str | None:
    """The theorem the worst case of ``algorithm`` is compared with (a user's model: the one it registered, else
    its built-in model's; None for a user's step program registered without one)."""
    if THEOREM_OF.get(algorithm):
        return THEOREM_OF[algorithm]
    algorithm = LIKE.get(algorithm, algorithm)
    if algorithm not in MODELS:  # a plugin's own program (register_program) that names no theorem
        return None
    if algorithm in ADMM:
        return "dfedadmm.thm1"
    if algorithm in CATA:
        return "dfedcata.thm1" if algorithm == "dfedcata-b" else "dfedcata.thm1.A"
    if algorithm in PUSH_SUM:
        return "dfedsgpsm.thm1"
    return THEOREM


def best_rate(e, floor: float = 1e-12) -> tuple[float, float]:
    """(C, q) minimizing C / (1 - q) subject to e(t) <= C q^t for every t of the horizon (e(t) <= ``floor`` counts as
    0). log C(q) - log(1 - q), C(q) = max_t e(t)/q^t, is convex in q, so a bounded scalar search finds the optimum.

    (inf, 1) where e has not fallen to half its largest value by the end of the horizon: a P that never reaches
    consensus (the identity, a disconnected graph), or mixes too slowly for the horizon to certify a rate; any finite
    (C, q) fitted there would only describe the horizon, not the e(t) <= C q^t for all t that the theorem needs."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    e = np.asarray(e, dtype=float)
    t = np.flatnonzero(e > floor)
    if not np.all(np.isfinite(e)):
        return math.inf, 1.0
    if t.size == 0 or (t.size == 1 and t[0] == 0):
        return float(e[0]) if e.size else 0.0, 0.0  # consensus after one round
    if e[-1] > 0.5 * e.max():
        return math.inf, 1.0  # no decay over the horizon (docstring)
    log_e = np.log(e[t])

    def objective(q):
        return float(np.max(log_e - t * math.log(q))) - math.log1p(-q)

    q = float(minimize_scalar(objective, bounds=(1e-12, 1 - 1e-12), method="bounded",
                              options={"xatol": 1e-10}).x)
    return float(math.exp(np.max(log_e - t * math.log(q)))), q


def push_sum_constants(mixing_args: dict, T: int, m: int) -> dict:
    """delta, C, q for dfedsgpsm.thm1 (module docstring): of the column-stochastic P (or the sequence P_0..P_{S-1},
    continued periodically) over max(T, PUSH_SUM_HORIZON) rounds, (C, q) from :func:`best_rate`; over the spectral
    class [lo, hi], delta = 1, q = max(|lo|, |hi|), C = sqrt(m - 1)."""
    import numpy as np

    from dfltheory.topology.pushsum import product_kernel

    if "spectral" in mixing_args:
        lo, hi = mixing_args["spectral"]
        return {"delta": 1.0, "C": math.sqrt(max(m - 1, 1)), "q": max(abs(lo), abs(hi))}
    P = np.asarray(mixing_args["W"], dtype=float)
    e, wmin = product_kernel(list(P) if P.ndim == 3 else [P], horizon=max(T, PUSH_SUM_HORIZON))
    C, q = best_rate(e)
    return {"delta": float(wmin.min()), "C": C, "q": q}


def mixing_lambda(settings: dict) -> float | None:
    """The theorems' lambda (psi) of the PEP's mixing: max(|lo|, |hi|) for the class; for an explicit symmetric W its
    second largest eigenvalue modulus, the largest over a sequence's rounds (each gossip step contracts the
    disagreement by at most that, which is all the consensus lemmas use); None for a non-symmetric push-sum P."""
    import numpy as np

    from dfltheory.pep.mixing import ExplicitMixing

    args = settings["mixing_args"]
    if "spectral" in args:
        return max(abs(v) for v in args["spectral"])
    W = np.asarray(args["W"], dtype=float)
    try:
        return ExplicitMixing(W).lam()
    except ValueError:  # not symmetric: push-sum's P has no lambda
        return None


def theorem_values(result: PEPResult, lam: float) -> tuple[dict | None, str]:
    """The theorem's values for the PEP instance (sigma_l = 0), or None and why not."""
    s = result.settings
    tid, algorithm = theorem_for(s["algorithm"]), LIKE.get(s["algorithm"], s["algorithm"])
    if tid is None:
        return None, (f"no theorem is attached to {s['algorithm']!r} (register_program(..., theorem=ID) compares its "
                      "worst case with one)")
    if THEOREM_OF.get(s["algorithm"]):  # a user's theorem: every setting of the PEP, it takes the ones it names
        given = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], m=s["m"], Q=s["Q"], rho=s["rho"], sigma_l=0.0,
                     sigma_g=s["sigma_g"], B=s["B"], lam=lam, psi=lam, f0_minus_fstar=s["Delta"])
        return {k: v for k, v in given.items() if v is not None}, ""
    if algorithm in PARALLEL:
        return None, (f"{THEOREM} analyses the step-then-mix order (dpsgd-atc, DFedAvg with K = 1); no theorem of the "
                      "catalog covers D-PSGD in Lian et al. 2017's order (the gradient at the unmixed point)")
    if algorithm == "dfedsam-unnormalized" and s["rho"]:
        return None, (f"no theorem covers the unnormalized ascent step (rho = {s['rho']}): {THEOREM}'s rho is the "
                      "radius of the normalized step")
    if algorithm in CATA or algorithm in ADMM:
        if s["Q"] != 1:
            return None, f"{tid} models one gossip step per round (Q = 1), got Q = {s['Q']}"
    if algorithm in CATA:
        if s["sigma_g"] is None:
            return None, f"{tid} assumes A3 (heterogeneity): give sigma_g (G of A3 with B_het = 1)"
        values = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], m=s["m"], sigma_l=0.0, f0_minus_fstar=s["Delta"],
                      beta=s["beta"], lam_pen=s["lam_pen"], G_het=s["sigma_g"], B_het=1.0, Delta0=0.0, Q=s["Q"])
        return values, ""
    missing = [k for k in ("sigma_g", "B") if s[k] is None]
    if missing:
        return None, f"{tid} assumes {' and '.join(missing)} (its heterogeneity and bounded-gradient assumptions): " \
                     f"give {', '.join(missing)}"
    if algorithm in PUSH_SUM:
        consts = push_sum_constants(s["mixing_args"], s["T"], s["m"])
        if not math.isfinite(consts["C"]):
            return None, (f"the mixing never reaches consensus over {max(s['T'], PUSH_SUM_HORIZON)} rounds "
                          f"(e(t) does not decay: the identity or a disconnected graph), so {tid}'s e(t) <= C q^t "
                          "holds for no C and q < 1")
        rho = s["rho"] * s["B"] if s["rho"] else 0.0  # radius of the unnormalized ascent rho g
        values = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], alpha=s["alpha"] or 0.0, rho=rho, sigma_l=0.0,
                      sigma_g=s["sigma_g"], B=s["B"], f0_minus_fstar=s["Delta"], x0_sq_mean=0.0, **consts)
        return values, ""
    if algorithm in ADMM:
        values = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], rho=s["rho"], sigma_l=0.0, sigma_g=s["sigma_g"],
                      B=s["B"], psi=lam, lam_pen=s["lam_pen"], f0_minus_fstar=s["Delta"])
        return values, ""
    values = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], rho=0.0, sigma_l=0.0, sigma_g=s["sigma_g"], B=s["B"],
                  lam=lam, m=s["m"], Q=s["Q"], f0_minus_fstar=s["Delta"])
    return values, ""


def compare(result: PEPResult, lam: float | None = None) -> dict:
    """The worst case, the theorem's bound at sigma_l = 0 and the ratio bound / worst case; ``variants`` the same
    for its named readings (:data:`THEOREMS`). ``lam``: the theorem's lambda (psi); None takes it from the PEP's
    mixing (:func:`mixing_lambda`).

    ``bound`` is None (with ``reason``) where no theorem covers the instance or a condition of the theorem fails
    (then its formula bounds nothing). ``finding`` is True when a bound (the theorem's or a variant's) lies below
    the worst case: a candidate counter-example only, see docs/pep.md.
    """
    if lam is None:
        lam = mixing_lambda(result.settings)
    values, reason = theorem_values(result, lam)
    tid = theorem_for(result.settings["algorithm"])
    rows = [_one(v, values, reason, result) for v in THEOREMS.get(tid, (tid,)) if _applies(v, values, result)]
    if values is None:
        rows = rows[:1]
    out = dict(rows[0], lam=lam, worst_case=result.value, variants=rows[1:])
    out["finding"] = any(r["finding"] for r in rows)
    out["interpolation"] = result.diagnostics.get("interpolation")
    if out["finding"] and out["interpolation"] is not None:
        # a candidate counter-example: is the worst-case example a genuine instance (dfltheory.pep.interpolation),
        # and does the value it realizes exceed the bound (not only the certified dual value)?
        out["interpolable"] = bool(out["interpolation"]["interpolable"])
        out["realized"] = out["interpolation"]["recomputed"]
        out["realizable_mixing"] = bool(out["interpolation"]["realizable_mixing"])  # spectral class: one W kron I?
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


def _one(tid: str | None, values: dict | None, reason: str, result: PEPResult) -> dict:
    from dfltheory.bounds import get

    out = dict(theorem=tid, bound=None, ratio=None, finding=False, reason=reason, terms={}, failed_conditions=[])
    if values is None:
        return out
    base, _, at = tid.partition("@")
    thm = get(base)
    if tid == "dfedadmm.thm1.normalized":  # the unnormalized ascent rho g has radius at most rho B
        values = dict(values, rho=values["rho"] * values["B"])
    known = {v.name for v in thm.variables}
    if "Xi" in known:
        values = dict(values, Xi=0.0)
    try:
        check = thm.check(**{k: v for k, v in values.items() if k in known})
    except ValueError as err:  # the formula overflows or divides by 0 at these values (eta = 1e-300: 1/eta)
        out["reason"] = f"{' '.join(str(err).split())} (its formula overflows or divides by 0 at these values)"
        return out
    out["terms"] = dict(check.terms)
    if not check.is_bound:
        out["failed_conditions"] = [v.relation for v in check.conditions if v.holds is False]
        out["reason"] = f"a condition of {base} fails ({'; '.join(out['failed_conditions'])}): its formula bounds " \
                        "nothing here"
        return out
    out["bound"] = float(check.value)
    worst = result.value
    if tid in WITH_XI:  # bound = b + c Xi (affine in Xi): the worst case of the average minus c Xi against b
        c = float(thm.check(**{k: v for k, v in dict(values, Xi=1.0).items() if k in known}).value) - out["bound"]
        out["xi_weight"] = c
        try:
            worst = _xi_worst_case(result, c)
        except PEPSolveError as err:  # the second PEP failed: the bound stands, but is compared with nothing
            out["reason"] = (f"bound {out['bound']:.6g} + {c:.6g} Xi: the PEP of the average minus {c:.6g} Xi failed "
                             f"({' '.join(str(err).split())}), so this reading is not compared")
            return out
        out["worst_case_minus_xi"] = worst
        out["reason"] = f"bound {out['bound']:.6g} + {c:.6g} Xi: compared with the worst case of the average minus " \
                        f"{c:.6g} Xi, {worst:.6g}"
    elif at:
        out["reason"] = f"{base} with {at} (the paper's claim that the bound has no consensus term)"
    out["ratio"] = out["bound"] / worst if worst > 0 else float("inf")
    out["finding"] = out["bound"] < worst
    return out


def _xi_worst_case(result: PEPResult, c: float) -> float:
    """The same PEP with the objective average - c Xi (worst_case's ``xi_weight``)."""
    from dfltheory.pep.problem import worst_case

    s = dict(result.settings)
    mix = s.pop("mixing_args")
    keep = ("L", "Delta", "sigma_g", "B", "Q", "gap", "heterogeneity_at", "lam_pen", "beta")
    return worst_case(s["algorithm"], s["m"], s["K"], s["T"], s["eta"], **{k: s[k] for k in keep}, **mix,
                      xi_weight=c).value
