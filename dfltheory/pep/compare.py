"""A PEP worst case next to the theorem that bounds the same quantity, at sigma_l = 0 (PEP is deterministic).

Which theorem covers which PEP model is the papers' declaration: each registers, with :func:`register_pep_bound`, a
:class:`PEPBound` (the models whose worst case the theorem bounds, the theorem, its named readings compared beside
it, and the theorem's symbols at a PEP's settings), the built-in papers from ``dfltheory/papers/<id>/pep.py``, whose
docstrings say why each theorem covers each model (and why some models are covered by none). A user's model
registered with a theorem (``register_pep_model(..., theorem=ID)``, ``register_program(..., theorem=ID)``) is given
every setting of the PEP and takes the ones its theorem names.

A reading with a consensus-error term c Xi (``PEPBound.with_xi``) holds on every instance iff the worst case of
the average minus c Xi is <= b: that second PEP is solved (``xi_weight`` of worst_case) and reported; a reading
``"<id>@Xi=0"`` is the theorem with Xi set to 0 (the claim that the bound has no topology term), against the plain
worst case.

Push-sum constants (:func:`push_sum_constants`, card dfedsgpsm §5): delta the smallest push-sum weight and
e(t) = max_i sum_j |Phi(t)_ij / w_i^t - 1/m| (Phi(t) = P_{t-1}...P_0) over max(T, 100) rounds
(dfltheory.topology.pushsum; a sequence P_0..P_{S-1} continued periodically). Lemma 4 (card §6.4) needs
||z_i^t - x_bar^t|| <= C q^t ..., i.e. any pair with e(t) <= C q^t for every t; the theorem's only (C, q) term at
x0_sq_mean = 0 is C^2/(1 - q)^2, so the pair used is the one minimizing C/(1 - q) among the pairs valid over the
horizon (:func:`best_rate`; e(t) <= 1e-12 counts as 0): the smallest bound the theorem gives for that P.
(pushsum.measured's fitted pair, the asymptotic rate, is also valid on the horizon but gives a larger bound:
2.65/(1 - 0.293) = 3.74 against 1.33/(1 - 0.5) = 2.67 for table.P_DIRECTED, and 1e23 where a random sequence reaches
consensus exactly after two rounds.) Over the spectral class [lo, hi] (symmetric doubly stochastic W, on which
push-sum keeps w = 1): delta = 1, q = lambda = max(|lo|, |hi|), C = sqrt(m - 1), the same optimum for the whole
class: row i of W^t - 11^T/m is (e_i - 1/m)^T (W^t - 11^T/m), whose 2-norm is at most lambda^t sqrt((m - 1)/m) and
1-norm sqrt(m) times that, so e(t) <= sqrt(m - 1) lambda^t for every W of the class (equality for m = 2), and no
q < lambda bounds every W.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from dfltheory.pep.problem import LIKE, MODELS, THEOREM_OF, PEPResult, PEPSolveError
from dfltheory.plugins import Registry, load_builtin, load_once

__all__ = ["BOUNDS", "PEPBound", "best_rate", "compare", "main_reading", "missing_assumptions", "mixing_lambda",
           "push_sum_constants", "register_pep_bound", "theorem_for", "theorem_values"]

#: Rounds over which push-sum's C, q and delta are measured (at least T).
PUSH_SUM_HORIZON = 100


@dataclass(frozen=True)
class PEPBound:
    """A theorem that bounds the quantity the PEP of ``models`` computes. ``values(settings, lam)``: the theorem's
    symbols at the PEP's settings (sigma_l = 0; ``settings["algorithm"]`` the built-in model, ``lam`` the mixing's
    lambda or psi, None for a non-symmetric P), or (None, why) where the theorem covers no instance of these settings
    or a setting it assumes is missing. ``readings``: the theorem's named readings compared beside it (ids of the
    catalog, ``"<id>@Xi=0"`` for one with Xi = 0), in the order shown; ``applies(reading, values)``: whether a
    reading is compared at these values (default: always); ``at``: reading -> its values from the theorem's (a
    radius read otherwise); ``with_xi``: the readings with a consensus term c Xi (module docstring)."""

    models: tuple[str, ...]
    theorem: str
    values: Callable[[dict, float | None], tuple[dict | None, str]]
    readings: tuple[str, ...] = ()
    applies: Callable[[str, dict], bool] | None = None
    at: Mapping[str, Callable[[dict], dict]] = field(default_factory=dict)
    with_xi: tuple[str, ...] = ()


_LOADING: list[bool] = []


def _load_builtins() -> None:
    load_once(_LOADING, lambda: load_builtin("pep"), BOUNDS)


#: built-in PEP model -> the :class:`PEPBound` that covers it (:func:`register_pep_bound`); the built-in papers'
#: are registered when it is first read, and a plugin cannot replace one
BOUNDS: dict[str, PEPBound] = Registry("PEP model's theorem", load=_load_builtins)


def register_pep_bound(bound: PEPBound, *, origin: str = "") -> None:
    """Compare the worst case of ``bound.models`` (built-in PEP models, :data:`dfltheory.pep.problem.MODELS`) with
    ``bound.theorem`` and its readings (ids of the catalog). ``origin`` (a plugin file) is named in the errors,
    ValueErrors that name the problem and the fix."""
    from dfltheory.bounds import catalog

    where = f"{origin}: " if origin else ""
    if not isinstance(bound, PEPBound):
        raise ValueError(f"{where}{bound!r} is not a dfltheory.pep.compare.PEPBound")
    if not isinstance(bound.models, (tuple, list)) or not all(isinstance(m, str) for m in bound.models):
        raise ValueError(f"{where}PEP bound {bound.theorem!r}: models must be a tuple of PEP model names, got "
                         f"{bound.models!r}")
    if not isinstance(bound.theorem, str) or not all(isinstance(t, str) for t in bound.readings):
        raise ValueError(f"{where}PEP bound: the theorem and its readings must be theorem ids (strings), got "
                         f"{bound.theorem!r} and {bound.readings!r}")
    problems = [f"theorem {t!r} is not in the catalog (register it first: dfltheory.bounds.register_paper)"
                for t in (bound.theorem, *bound.readings) if t.partition("@")[0] not in catalog()]
    problems += [f"model {m!r} is not a built-in PEP model (one of {', '.join(MODELS)}); a user's model names its "
                 "theorem itself (register_pep_model(..., theorem=ID))" for m in bound.models if m not in MODELS]
    problems += [f"model {m!r} already has a theorem ({BOUNDS[m].theorem})" for m in bound.models if m in BOUNDS]
    problems += [f"{name} must be a function" for name, f in (("values", bound.values), ("applies", bound.applies))
                 if f is not None and not callable(f)]
    if not bound.models:
        problems.append("no models: name the PEP models whose worst case the theorem bounds")
    if problems:
        raise ValueError(f"{where}PEP bound {bound.theorem!r}: {problems[0]}")
    for m in bound.models:
        BOUNDS[m] = bound


def _bound_of(algorithm: str) -> PEPBound | None:
    """The registered bound of ``algorithm``'s built-in model (None for a user's model with its own theorem)."""
    return None if THEOREM_OF.get(algorithm) else BOUNDS.get(LIKE.get(algorithm, algorithm))


def _declared(algorithm: str) -> PEPBound | None:
    """The registered bound whose theorem ``algorithm``'s worst case is compared with (a user's model compared with
    a registered theorem: that theorem's readings too)."""
    tid = theorem_for(algorithm)
    return next((b for b in BOUNDS.values() if b.theorem == tid), None)


def theorem_for(algorithm: str) -> str | None:
    """The theorem the worst case of ``algorithm`` is compared with (a user's model: the one it registered, else
    its built-in model's; None for a model no theorem covers, such as a user's step program registered without
    one)."""
    if THEOREM_OF.get(algorithm):
        return THEOREM_OF[algorithm]
    bound = _bound_of(algorithm)
    return bound.theorem if bound else None


def main_reading(algorithm: str) -> str | None:
    """The theorem compared first, as the paper claims it: with Xi = 0 where its bound has a consensus term."""
    tid, bound = theorem_for(algorithm), _declared(algorithm)
    return f"{tid}@Xi=0" if bound is not None and tid in bound.with_xi else tid


def missing_assumptions(settings: dict, theorem: str, keys: Sequence[str] = ("sigma_g", "B")) -> str:
    """Why a theorem cannot be evaluated at a PEP's settings that leave out ``keys`` (its heterogeneity and
    bounded-gradient assumptions); '' when none is missing."""
    missing = [k for k in keys if settings[k] is None]
    if not missing:
        return ""
    return (f"{theorem} assumes {' and '.join(missing)} (its heterogeneity and bounded-gradient assumptions): "
            f"give {', '.join(missing)}")


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


def theorem_values(result: PEPResult, lam: float | None) -> tuple[dict | None, str]:
    """The theorem's values for the PEP instance (sigma_l = 0), or None and why not."""
    s = result.settings
    tid = theorem_for(s["algorithm"])
    if tid is None:
        return None, (f"no theorem is attached to {s['algorithm']!r} (register_program(..., theorem=ID) compares its "
                      "worst case with one)")
    if THEOREM_OF.get(s["algorithm"]):  # a user's theorem: every setting of the PEP, it takes the ones it names
        given = dict(eta=s["eta"], K=s["K"], T=s["T"], L=s["L"], m=s["m"], Q=s["Q"], rho=s["rho"], sigma_l=0.0,
                     sigma_g=s["sigma_g"], B=s["B"], lam=lam, psi=lam, f0_minus_fstar=s["Delta"])
        return {k: v for k, v in given.items() if v is not None}, ""
    return _bound_of(s["algorithm"]).values(dict(s, algorithm=LIKE.get(s["algorithm"], s["algorithm"])), lam)


def compare(result: PEPResult, lam: float | None = None) -> dict:
    """The worst case, the theorem's bound at sigma_l = 0 and the ratio bound / worst case; ``variants`` the same
    for its named readings (``PEPBound.readings``). ``lam``: the theorem's lambda (psi); None takes it from the PEP's
    mixing (:func:`mixing_lambda`).

    ``bound`` is None (with ``reason``) where no theorem covers the instance or a condition of the theorem fails
    (then its formula bounds nothing). ``finding`` is True when a bound (the theorem's or a variant's) lies below
    the worst case: a candidate counter-example only, see docs/pep.md.
    """
    if lam is None:
        lam = mixing_lambda(result.settings)
    values, reason = theorem_values(result, lam)
    tid = theorem_for(result.settings["algorithm"])
    bound = _declared(result.settings["algorithm"])
    readings = (bound.readings or (tid,)) if bound else (tid,)
    rows = [_one(v, values, reason, result) for v in readings if _applies(v, values, result)]
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
    bound = _declared(result.settings["algorithm"])
    if values is None or tid == theorem_for(result.settings["algorithm"]) or bound is None or bound.applies is None:
        return True
    return bool(bound.applies(tid, values))


def _one(tid: str | None, values: dict | None, reason: str, result: PEPResult) -> dict:
    from dfltheory.bounds import get

    out = dict(theorem=tid, bound=None, ratio=None, finding=False, reason=reason, terms={}, failed_conditions=[])
    if values is None:
        return out
    base, _, at = tid.partition("@")
    thm = get(base)
    bound = _declared(result.settings["algorithm"])
    if bound is not None and tid in bound.at:  # the reading's own values (a radius read otherwise)
        values = bound.at[tid](values)
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
    if bound is not None and tid in bound.with_xi:  # bound = b + c Xi (affine in Xi): the worst case of the average
        # minus c Xi against b
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
