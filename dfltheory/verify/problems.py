"""Problems that meet the papers' assumptions, and the theorem constants they fix (issue 12, item 1).

A :class:`Problem` names a synthetic data set with its options, model and data seed (the run-config fragment
``config``); :func:`theorem_constants` maps every assumption symbol of the catalog (``dfltheory.bounds``) to a
:class:`Constant`: its value at the problem, whether it is ``exact``, a certified ``bound`` (an upper bound; for
``f_star_lower`` a lower bound on f*) or only ``measured`` at a point (not a bound for all x), and where its
proof is (the docstrings of :mod:`dfltheory.empirical.data`, which compute them from the stored data).

* ``synthetic-quadratic`` (linear least squares): L, f* and DFedCata's (G_het, B_het) exact; NO global B, sigma_l
  or sigma_g: a quadratic's gradient, gradient noise and (with distinct client Hessians) heterogeneity grow with
  ||x||, so B is absent and sigma_l, sigma_g are measured at x* (``certified = False``: label its runs "measured
  constants").
* ``synthetic-logistic`` (two-logit logistic regression): L exact (attained at W = 0), the rest certified bounds.
* ``synthetic-robust`` (Cauchy regression, nonconvex, client optima apart): L exact (attained at each client's
  optimum), the rest certified bounds; f* in [f_star_lower, f_star_best] (certified below, found above).
* ``synthetic-robust-common`` (the same with one optimum for all clients): L and f* = 0 exact.
* ``synthetic-personal`` (Cauchy regression, u shared, v personal: DFedPGP): L_u, L_v and F* = 0 exact, the rest
  certified bounds, per block.

sigma_l is the standard deviation at the run's batch size b: the engine draws b samples with replacement, so the
variance is the one-sample variance / b exactly (``batch_size=None``: full local batches, sigma_l = 0).

Heterogeneity has one symbol, ``sigma_g``, in three forms (card §4 of each paper): the average
(1/m) sum_i ||grad f_i - grad f||^2 <= sigma_g^2 (dfedsam Assumption 2), the per-client sup_x max_i
||grad f_i - grad f||^2 (the form the DFedSGPSM proof uses, dfedsgpsm §4 A4; DFedADMM states both, §4 A3), and
DFedPGP's per-client u-block form over all (u, V) (dfedpgp §4 A4). ``theorem_constants(..., theorem=...)`` gives
the form of that theorem's paper; without a theorem, the largest of the forms the data set has, valid for every
paper. The (G, B) form of DFedCata (A3) is ``G_het`` with ``B_het``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dfltheory.empirical import data as D

KINDS = ("exact", "bound", "measured")
_DATA = "dfltheory.empirical.data"
#: a form of sigma_g (dfltheory.bounds.catalog.SIGMA_G_FORMS) -> the key of FederatedData.constants holding
#: sigma_g^2 in that form (GLM problems); a paper declares its form (register_paper(..., sigma_g_form=...))
FORM_KEY = {"mean": "sigma_g2_bound", "client": "sigma_g2_client_bound", "personal": "sigma_g2_personal_bound"}


def _form_key(paper: str | None) -> str | None:
    from dfltheory.bounds.catalog import sigma_g_form

    return FORM_KEY.get(sigma_g_form(paper))


@dataclass(frozen=True)
class Constant:
    """A theorem symbol's value at a problem: ``kind`` 'exact', 'bound' (certified: an upper bound, or a lower
    bound for ``f_star_lower``) or 'measured' (the value at one point, not a bound for all x); ``proof`` names
    where the proof is."""

    value: float
    kind: str
    proof: str

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    @property
    def certified(self) -> bool:
        return self.kind != "measured"


@dataclass(frozen=True)
class Problem:
    """A synthetic problem: ``config`` is the run-config fragment (dataset, model, data_params, data_seed); ``m``
    the default number of clients; ``certified`` False where some constant is only measured."""

    name: str
    config: dict = field(default_factory=dict)
    description: str = ""
    m: int = 8
    certified: bool = True

    def load(self, m: int | None = None) -> D.FederatedData:
        """The problem's data for ``m`` clients (default ``self.m``)."""
        cfg = self.config
        return D.load(cfg["dataset"], self.m if m is None else m, seed=cfg.get("data_seed", 0),
                      **cfg.get("data_params", {}))


def _problem(name, dataset, model, description, certified=True, **data_params) -> Problem:
    return Problem(name, {"dataset": dataset, "model": model, "data_params": data_params, "data_seed": 0},
                   description, certified=certified)


PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    _problem("synthetic-quadratic", "synthetic-quadratic", "linear",
             "least squares: L, f* exact; no finite B, sigma_l, sigma_g over R^d (measured at x*)",
             certified=False, dim=10, n_per_client=100),
    _problem("synthetic-logistic", "synthetic-logistic", "logreg",
             "two-class logistic regression: L exact, B, sigma_l, sigma_g certified bounds", dim=10, n_per_client=100),
    _problem("synthetic-robust", "synthetic-robust", "linear",
             "Cauchy regression, nonconvex, client optima apart: L exact, B, sigma_l, sigma_g bounds, f* >= 0",
             dim=10, n_per_client=100, heterogeneity=1.0),
    _problem("synthetic-robust-common", "synthetic-robust", "linear",
             "Cauchy regression with one optimum for all clients: L and f* = 0 exact, B, sigma_l, sigma_g bounds",
             dim=10, n_per_client=100, heterogeneity=0.0),
    _problem("synthetic-personal", "synthetic-personal", "split-linear",
             "Cauchy regression with shared u and personal v (DFedPGP): L_u, L_v, F* = 0 exact, the rest bounds",
             dim=5, n_per_client=100, heterogeneity=1.0),
)}


def _paper(theorem: str | None) -> str | None:
    if theorem is None:
        return None
    from dfltheory.bounds import PAPERS

    paper = theorem.split(".")[0]
    known = tuple(PAPERS)
    if paper not in known:
        raise ValueError(f"unknown theorem {theorem!r}; give a catalog id such as 'dfedsam.thm4.1' or a paper name "
                         f"({', '.join(known)})")
    return paper


def _personalized(paper: str | None) -> bool:
    """A paper of the personalized objective F(u, V) (its sigma_g on the shared block u: ``sigma_g_form``
    'personal', as DFedPGP registers it): its theorems read the block constants and f* of F."""
    from dfltheory.bounds.catalog import sigma_g_form

    return paper is not None and sigma_g_form(paper) == "personal"


def _batch(batch_size) -> float:
    """The divisor of the one-sample variance: b, or infinity for full local batches (None)."""
    if batch_size is None:
        return math.inf
    if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer (or None for full local batches), got "
                         f"{batch_size!r}")
    return float(batch_size)


def _sigma(var_one_sample: float, b: float, kind: str, proof: str) -> Constant:
    if math.isinf(b):
        return Constant(0.0, "exact", "full local batches: every local gradient is exact")
    return Constant(math.sqrt(var_one_sample / b), kind, f"{proof}; one-sample variance / b (b = {b:g}, drawn with "
                    "replacement: dfltheory.empirical.engine.ClientSampler)")


def _quadratic(c: dict, b: float, paper: str | None) -> dict[str, Constant]:
    q = f"{_DATA}.quadratic_constants"
    sup = "sigma_g2_sup" in c  # all client Hessians equal: the heterogeneity does not depend on x
    key = "sigma_g2_star" if _form_key(paper) == FORM_KEY["mean"] else "sigma_g2_client_star"
    return {
        "L": Constant(c["L"], "exact", f"{q} (L = max_i lambda_max(H_i))"),
        "f_star_lower": Constant(c["f_star"], "exact", f"{q} (f* = f(x*), x* solves the normal equations)"),
        "sigma_l": _sigma(c["sigma_l2_star"], b, "measured", f"{q} (sigma_l2_star: at x* only; unbounded over R^d)"),
        "sigma_g": Constant(math.sqrt(c[key]), "exact" if sup else "measured",
                            f"{q} ({key}: " + ("constant in x, all H_i equal)" if sup else
                                               "at x* only; unbounded over R^d for distinct H_i)")),
        "G_het": Constant(c["G_het"], "exact", f"{q} (G_het: the least G for B_het)"),
        "B_het": Constant(c["B_het"], "exact", f"{q} (B_het)"),
    }


def _glm(c: dict, b: float, paper: str | None, name: str) -> dict[str, Constant]:
    where = {"synthetic-logistic": f"{_DATA}._synthetic_logistic", "synthetic-robust": f"{_DATA}.robust_constants",
             "synthetic-personal": f"{_DATA}.robust_constants"}[name]
    g = f"{_DATA}.glm_constants"
    L_exact = name == "synthetic-logistic" or c.get("L_exact", False)
    forms = [k for k in ("sigma_g2_bound", "sigma_g2_client_bound", "sigma_g2_personal_bound") if k in c]
    key = (_form_key(paper) or FORM_KEY["client"]) if paper else max(forms, key=c.get)
    out = {
        "L": Constant(c["L"], "exact" if L_exact else "bound",
                      f"{where} (L{', attained' if L_exact else ''}); {g} (L)"),
        "B": Constant(c["B"], "bound", f"{g} (B: sup_x ||grad f_i(x)||)"),
        "B_sample": Constant(c["B_sample"], "bound", f"{g} (B_sample: every stochastic gradient)"),
        "sigma_l": _sigma(c["sigma_l2_bound"], b, "bound", f"{g} (sigma_l)"),
        "sigma_g": Constant(math.sqrt(c[key]), "bound", f"{g} (sigma_g: {key})"),
        "G_het": Constant(c["G_het"], "bound", f"{g} (G, B)"),
        "B_het": Constant(c["B_het"], "exact", f"{g} (G, B): the pair (G_het, 0)"),
        "f_star_lower": Constant(c.get("f_star", c.get("f_star_lower", 0.0)), "exact" if "f_star" in c else "bound",
                                 f"{where} (f_star_lower: the loss is >= 0; {_DATA}.cauchy_lower_bound)"),
    }
    if "f_star_best" in c:
        out["f_star_best"] = Constant(c["f_star_best"], "measured", f"{where} (f_star_best: {c['f_star_best_run']}; "
                                      "an upper bound on f*)")
    if name == "synthetic-personal":
        p = f"{_DATA}.personal_constants"
        block = "exact" if c.get("L_exact") else "bound"
        out.update({
            "L_u": Constant(c["L_u"], block, f"{p} (L_u)"),
            "L_v": Constant(c["L_v"], block, f"{p} (L_v)"),
            "L_uv": Constant(c["L_uv"], "bound", f"{p} (L_uv)"),
            "L_vu": Constant(c["L_vu"], "bound", f"{p} (L_vu = L_uv)"),
            "sigma_u": _sigma(c["sigma_u2_bound"], b, "bound", f"{p} (sigma_u)"),
            "B_u": Constant(c["B_u"], "bound", f"{p} (B_u: sup ||grad_u F_i||)"),
            "B_v": Constant(c["B_v"], "bound", f"{p} (B_v: sup ||grad_v F_i||)"),
            "sigma_v": _sigma(c["sigma_v2_bound"], b, "bound", f"{p} (sigma_v)"),
        })
        if _personalized(paper):  # f* of F(u, V) = (1/m) sum_i F_i(u, v_i), the personalized objective
            out["f_star_lower"] = Constant(c.get("F_star", c["F_star_lower"]), "exact" if "F_star" in c else "bound",
                                           f"{p} (F_star: every residual is 0 at the personal optima)")
    return out


def theorem_constants(problem_or_data, batch_size, theorem: str | None = None, m: int | None = None
                      ) -> dict[str, Constant]:
    """Every assumption symbol the problem fixes, as a :class:`Constant`, for runs with minibatches of
    ``batch_size`` (None: full local batches).

    ``problem_or_data``: a :class:`Problem`, a name of :data:`PROBLEMS` (loaded with ``m`` clients, default the
    problem's) or a loaded synthetic :class:`~dfltheory.empirical.data.FederatedData`. ``theorem`` (a catalog id
    or a paper name) picks the paper's form of ``sigma_g`` and, for DFedPGP on ``synthetic-personal``, f* of the
    personalized objective. Symbols: L, sigma_l, sigma_g, G_het, B_het, f_star_lower (a lower bound on f*:
    f(x^0) - f_star_lower bounds f0_minus_fstar), and where they exist B, B_sample (every stochastic gradient,
    what the DFedSAM and DFedSGPSM proofs bound by B), f_star_best (the best value found, measured), L_u, L_v,
    L_uv, L_vu, sigma_u, sigma_v, B_u, B_v. The quadratic has no B (no finite value).
    """
    if isinstance(problem_or_data, str):
        if problem_or_data not in PROBLEMS:
            raise ValueError(f"unknown problem {problem_or_data!r}; valid problems: {', '.join(PROBLEMS)}")
        problem_or_data = PROBLEMS[problem_or_data]
    data = problem_or_data.load(m) if isinstance(problem_or_data, Problem) else problem_or_data
    if not isinstance(data, D.FederatedData) or not data.constants:
        raise ValueError("theorem_constants needs a Problem, a problem name or the FederatedData of a synthetic data "
                         f"set ({', '.join(PROBLEMS)}); real data have no known constants")
    b, paper = _batch(batch_size), _paper(theorem)
    if _personalized(paper) and data.name != "synthetic-personal":
        raise ValueError(f"{paper}'s block constants (L_u, L_v, L_vu, sigma_u, sigma_v) need the 'synthetic-personal' "
                         f"problem, got {data.name!r}")
    if data.name == "synthetic-quadratic":
        return _quadratic(data.constants, b, paper)
    return _glm(data.constants, b, paper, data.name)


def numeric_estimates(evaluator, points, paper: str | None = None) -> dict[str, float]:
    """Numeric lower estimates of the certified constants: their defining suprema evaluated at ``points`` (states
    (m, d), e.g. :func:`dfltheory.verify.trivial.sample_points`; every row of a state the same point x). 'B':
    max ||grad f_i(x)||; 'sigma_g': the paper's form of the heterogeneity (:func:`_form_key`: the average
    (1/m) sum_i ||grad f_i - grad f||^2, otherwise the per-client max), as a standard deviation. A certified
    constant is at least its estimate; their ratio says how loose the certificate is."""
    B2, het = 0.0, 0.0
    for X in points:
        grads = evaluator.client_objectives(X)[1].double()
        gaps = ((grads - grads.mean(0)) ** 2).sum(1)
        B2 = max(B2, float((grads**2).sum(1).max()))
        het = max(het, float(gaps.mean() if _form_key(paper) == FORM_KEY["mean"] else gaps.max()))
    return {"B": math.sqrt(B2), "sigma_g": math.sqrt(het)}


def constants_table(consts: dict[str, Constant], used: dict[str, str], numeric: dict[str, float],
                    gap: tuple[float, float | None]) -> list[dict]:
    """One row per theorem symbol the problem fixes: the value used, how it is known (exact / bound / measured),
    the proof, and where a numeric estimate exists the estimate and value / estimate. ``used``: symbol -> the
    constant that gives it; ``gap``: (f(x^0) - f_star_lower, f(x^0) - f_star_best or None)."""
    rows = []
    for symbol, key in sorted(used.items()):
        c = consts[key]
        est = numeric.get(key) if key == symbol else None
        rows.append({"symbol": symbol, "constant": key, "value": c.value, "kind": c.kind, "proof": c.proof,
                     "numeric": est, "ratio": c.value / est if est else None})
    certified, best = gap
    rows.append({"symbol": "f0_minus_fstar", "constant": "f(x^0) - f_star_lower", "value": certified,
                 "kind": consts["f_star_lower"].kind, "proof": consts["f_star_lower"].proof,
                 "numeric": best, "ratio": certified / best if best else None})
    return rows
