"""Worst case of a decentralized algorithm over all L-smooth nonconvex local functions, as one PEPit SDP.

Setting (deterministic: sigma_l = 0; stochastic noise is outside PEP). m agents hold L-smooth (nonconvex)
functions f_1..f_m, f = (1/m) sum_i f_i, identical initialisation x_i^0 = x^0. Round t = 0, 1, ... (the papers'
round t + 1) starts from x_i^t; each agent runs K local steps from y^{t,0}(i) = x_i^t,

    dfedavg               y^{t,k+1}(i) = y^{t,k}(i) - eta grad f_i(y^{t,k}(i))
    dfedsam-unnormalized  y^{t,k+1}(i) = y^{t,k}(i) - eta grad f_i(y^{t,k}(i) + rho grad f_i(y^{t,k}(i)))

and sends z^t(i) = y^{t,K}(i); then X^{t+1} = W^Q Z^t (Q gossip steps; Q = 1: DFedAvg / DFedSAM, K = Q = 1:
``dpsgd-atc``, D-PSGD in the adapt-then-combine order, step then mix; Q > 1: the -MGS variants). ``dpsgd`` is D-PSGD
as Lian et al. 2017 wrote it (Algorithm 1, X_{k+1} = X_k W - gamma grad F(X_k); the engine's ``dpsgd``): the gossip
and the gradient at the unmixed point in parallel,

    x_i^{t+1} = sum_j W_ij x_j^t - eta grad f_i(x_i^t)                                      (K = Q = 1),

so ``dpsgd-atc``'s x_i^{t+1} = sum_j W_ij (x_j^t - eta grad f_j(x_j^t)) mixes the step too; the two have the same
mean x_bar^{t+1} = x_bar^t - eta (1/m) sum_i grad f_i(x_i^t) and differ in the disagreement, and both are gradient
descent on each f_i where W = I. DFedSAM's ascent step is normalized, rho g/||g|| (card dfedsam.md 3.1, seed
L76-90); a normalized step is not a linear combination of the points and gradients, so PEP cannot express it:
``dfedsam-unnormalized`` is the named variant with the ascent step rho g (rho = 0 is DFedAvg).

DFedADMM (seed 004 Algorithm 1, card dfedadmm §3.2; the engine's ``admm_dual`` rule) keeps a dual ghat_i
(ghat_i^{-1} = 0) and runs K steps on the augmented Lagrangian, then sends the message with the OLD dual:

    y^{t,k+1}(i) = y^{t,k}(i) - eta (grad f_i(y^{t,k}(i)) - ghat_i^{t-1} + (y^{t,k}(i) - x_i^t)/lam_pen)    eq. (6)
    ghat_i^t = ghat_i^{t-1} - (y^{t,K}(i) - x_i^t)/lam_pen,   z^t(i) = y^{t,K}(i) - lam_pen ghat_i^{t-1}   lines 15-16

then the same gossip; ``dfedadmm-sam-unnormalized`` takes the gradient at y + rho grad f_i(y) (the box normalizes the
ascent step, the proof bounds the unnormalized one: card §11 item 2).

DFedCata (card dfedcata §3.1; the programs ``dfedcata-a`` / ``dfedcata-b`` the engine trains too): K steps y <- y - eta (grad f_i(y) + lam_pen (y - y_i^t)) from y_i^t, a^{t+1} = W^Q y_K,
then y^{t+1} = a^{t+1} + beta (a^{t+1} - y_K^t) (``dfedcata-a``, the public code) or a^{t+1} + beta (a^{t+1} - a^t)
(``dfedcata-b``, the proof), a^0 = x^0. Push-sum (card dfedsgpsm §3.1) on a column-stochastic P with the weights
w^{t+1} = P w^t, w^0 = 1 (numbers fixed by P, so x/w is linear): ``dfedsgpm`` runs K steps v = alpha v +
grad f_i(y / w_i), y <- y - eta v (v = 0 at each round start) on the numerator, then x^{t+1} = P y_K; ``sgp`` is K = 1,
alpha = 0; ``dfedsgpsm-unnormalized`` takes the gradient at z + rho grad f_i(z), z = y / w_i. On a symmetric doubly
stochastic W the weights stay 1 and push-sum is gossip of the numerators (DFedSGPM is then DFedAvg with local
heavy-ball momentum), so the spectral class applies to it as to DFedAvg. Any explicit mixing may be a sequence, W_t
(or P_t) in round t, w^{t+1} = P_t w^t: the papers' random topologies, a fresh draw each round.

Quantity: ``min`` algorithms (DFedAvg family): min_{t = 0..T-1} ||grad f(x_bar^t)||^2, the average of the
round-start models of the T rounds (the papers' min_{1 <= t <= T}, x_bar^1 = x^0; dfedsam.thm4.1). ``average``
algorithms (DFedADMM): (1/T) sum_{t=0}^{T-1} ||grad f(w^t)||^2 at dfedadmm.thm1's auxiliary sequence
w^t = x_bar^t + ((1 - gamma)/gamma)(x_bar^t - x_bar^{t-1}), gamma = 1 - (1 - eta/lam_pen)^K, x_bar^{-1} = x_bar^0
(card dfedadmm §2, §3.2 (iv), §6.1 Lemma 9; the engine's ``_admm_aux``); DFedCata: the same average at
p^t = a_bar^t + beta/(1 - beta)(a_bar^t - a_bar^{t-1}) (B, card dfedcata Lemma 6) or p^t = a_bar^t (A; the engine's
``_cata_aux``); push-sum: the same average at x_bar^t, the numerators' mean (dfedsgpsm.thm1). Every f_i is queried
at the metric point. The last round's local steps do not change the quantity and are not simulated.

Each algorithm above is written once, as its step program (:mod:`dfltheory.program.library`; issue 35 item 2): the
engine's torch rules (:mod:`dfltheory.empirical.program_rules`), this fixed-T PEP (:func:`program_pep.rounds`) and the
one-round certificate (:func:`program_pep.one_round`) are read from it; :func:`register_program` adds a plugin's
program to all three.

Class of functions (what each constraint is, and where it is imposed):

* L-smoothness of each f_i: PEPit's exact interpolation conditions for L-smooth functions (SmoothFunction) at
  every point where f_i is queried.
* f(x^0) - f* <= Delta (``gap="fstar"``, the theorems' assumption): a scalar f* with f(x_bar^0) - f* <= Delta and
  f(x_bar^t) - f* >= ||grad f(x_bar^t)||^2 / (2L) for every t (true for an L-smooth f bounded below by f*:
  f(x - grad f(x)/L) <= f(x) - ||grad f(x)||^2/(2L)); for DFedADMM at every w^t instead (the metric points, where
  every f_i is queried; w^0 = x^0). These are necessary conditions only, so the value is an
  upper bound on the worst case. ``gap="last"``: f(x_bar^0) - f(x_bar^{T-1}) <= Delta, PEPit's own reading (its
  example gradient_descent.py); implied by the f* one, so its value is larger or equal.
* heterogeneity sigma_g (dfedsam Assumption 2, card dfedsam.md 4): (1/m) sum_i ||grad f_i(x) - grad f(x)||^2
  <= sigma_g^2, imposed at every metric point x_bar^t or w^t (``heterogeneity_at="averages"``, where every f_i is
  queried anyway) or at
  every queried point (``"all"``: every f_j is also queried at every local point, a Gram matrix about m times
  larger). sigma_g = 0 is the equality grad f_i = grad f there, imposed exactly by one gradient shared by every f_i
  (:func:`_oracle`).
* bounded gradients B (dfedsam Assumption 3): ||grad f_i(x)|| <= B at every point where f_i is queried.

Imposing an assumption at finitely many points leaves a larger class, so the PEP value is an upper bound on the
true worst case: "value <= a theorem's bound" certifies that theorem on this instance for every function of the
class. A value above the bound is a candidate counter-example only (see docs/pep.md).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

from dfltheory.constraints import Interval, Options, check
from dfltheory.pep import program_pep
from dfltheory.pep.mixing import ExplicitMixing, PushSumMixing, SpectralClass, as_mixing
from dfltheory.pep.program_pep import _mean, _same, _sum
from dfltheory.plugins import Registry
from dfltheory.program import PROGRAMS
from dfltheory.program.library import admm_gamma

__all__ = ["ACCEPTED_STATUSES", "ADMM", "ALGORITHMS", "CATA", "DPSGD", "GAPS", "HETEROGENEITY_AT", "LIKE",
           "MAX_GRAM", "MAX_SCALE", "MAX_SECONDS", "METRICS", "MIN_STEP", "PARALLEL", "PEPResult", "PEPSolveError",
           "PUSH_SUM", "Size",
           "admm_gamma", "count_text", "diagnose_failure", "estimate_size", "metric_text", "program_of",
           "register_pep_model", "register_program", "worst_case"]

#: the built-in PEP models: programs of :mod:`dfltheory.program.library` whose steps a PEP expresses
MODELS = ("dpsgd", "dpsgd-atc", "dfedavg", "dfedavg-mgs", "dfedsam-unnormalized", "dfedadmm",
          "dfedadmm-sam-unnormalized", "sgp", "dfedsgpm", "dfedsgpsm-unnormalized", "dfedcata-a", "dfedcata-b")
#: algorithm -> (gradient queries per local step, description), read from its program; a plugin adds models
#: (:func:`register_pep_model`, :func:`register_program`) and cannot replace or remove a built-in one
#: (:class:`dfltheory.plugins.Registry`), nor in the registries below
ALGORITHMS: dict[str, tuple[int, str]] = Registry("PEP model", {
    name: (PROGRAMS[name].queries_per_step({}), PROGRAMS[name].description) for name in MODELS})
#: algorithm -> the quantity bounded (its program's metric): 'min' of ||grad f(p^t)||^2 over t < T, the 'average'
#: over t < T, or the 'last' round's value; p^t = x_bar^t, or the theorem's auxiliary sequence (card dfedadmm §2,
#: §6.1 Lemma 9; card dfedcata Lemma 6)
METRICS: dict[str, str] = Registry("PEP model's metric", {name: PROGRAMS[name].metric.kind for name in MODELS})
_POINT: dict[str, str] = Registry("PEP model's metric point", {
    name: PROGRAMS[name].metric.text for name in MODELS if PROGRAMS[name].metric.kind != "min"})
#: the D-PSGD models (one local step, one gossip step: K = Q = 1); PARALLEL: the gossip and the gradient at the
#: unmixed point in parallel (Lian et al. 2017's order), not the step then the gossip
DPSGD = ("dpsgd", "dpsgd-atc")
PARALLEL = ("dpsgd",)


#: a user's PEP model -> the built-in model it runs (:func:`register_pep_model`)
LIKE: dict[str, str] = Registry("PEP model's built-in model")


def register_pep_model(name: str, like: str, description: str, *, theorem: str | None = None,
                       origin: str = "") -> None:
    """Make ``name`` an algorithm of ``dfltheory pep``: the PEP of the built-in model ``like`` (same local steps,
    mixing and measured quantity; see :data:`ALGORITHMS`), under the user's name and ``description``, compared
    with ``theorem`` (a catalog id) where given, else with ``like``'s theorem. ``origin`` (a plugin file) is named
    in the errors, ValueErrors that name the problem and the fix."""
    if not isinstance(origin, str):
        raise ValueError(f"PEP model {name!r}: origin must be a string (the plugin's file, origin=__file__; '' for "
                         f"none), got {origin!r}")
    where = f"{origin}: " if origin else ""
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f"{where}PEP model {name!r}: description must be a non-empty string (one line: what the "
                         f"model runs, shown by dfltheory pep --help), got {description!r}; give description='...'")
    if not isinstance(name, str) or not name or name in ALGORITHMS:
        raise ValueError(f"{where}PEP model name {name!r} is taken or empty; choose another name")
    if like not in ALGORITHMS or like in LIKE:
        raise ValueError(f"{where}PEP model {name!r}: like={like!r} is not a built-in model; give one of "
                         f"{', '.join(k for k in ALGORITHMS if k not in LIKE)}")
    _check_theorem(name, METRICS[like], theorem, where)
    ALGORITHMS[name] = (ALGORITHMS[like][0], description)
    METRICS[name] = METRICS[like]
    if like in _POINT:
        _POINT[name] = _POINT[like]
    LIKE[name] = like
    THEOREM_OF[name] = theorem


def register_program(program, *, theorem: str | None = None, metric: str | None = None, origin: str = "") -> None:
    """Make the step program ``program`` (:class:`dfltheory.program.Program`) an algorithm of ``train`` (its torch
    rules, :mod:`dfltheory.empirical.program_rules`), of ``pep`` (its fixed-T PEP) and of ``certify`` (its one-round
    certificate), with no further code: the program is the one description of the algorithm. ``theorem`` (a catalog
    id) is compared with the worst case; ``metric`` (the quantity the theorem bounds: 'min', 'average' or 'last')
    must be the program's (a ValueError names both where they differ). ``origin`` (a plugin file) is named in the
    errors."""
    from dfltheory.program import Program, register_program as add

    where = f"{origin}: " if origin else ""
    if not isinstance(program, Program):
        raise ValueError(f"{where}register_program needs a dfltheory.program.Program, got {type(program).__name__}")
    name = program.name
    if name in ALGORITHMS:
        raise ValueError(f"{where}PEP model name {name!r} is taken; choose another name")
    if metric is not None and metric != program.metric.kind:
        raise ValueError(f"{where}program {name!r} measures the {program.metric.kind!r} of ||grad f(p^t)||^2, not the "
                         f"{metric!r}; declare Metric({metric!r}, ...)")
    _check_theorem(name, program.metric.kind, theorem, where)
    from dfltheory.empirical.algorithms import ALGORITHMS as TRAINED
    from dfltheory.empirical.algorithms import register_program as train_rules
    from dfltheory.program import PROGRAMS

    if name in PROGRAMS or name in TRAINED:  # checked before anything is written: no half-registered program
        raise ValueError(f"{where}algorithm name {name!r} is taken (a program or a training algorithm); choose "
                         "another name")

    add(program, origin=origin)
    train_rules(program, origin=origin)
    ALGORITHMS[name] = (program.queries_per_step(program.params), program.description)
    METRICS[name] = program.metric.kind
    if program.metric.kind != "min" or program.metric.extrapolation is not None:
        _POINT[name] = program.metric.text
    THEOREM_OF[name] = theorem


def quantity_kind(text: str) -> str | None:
    """What a theorem's left-hand side (its ``quantity``, in words) takes over the rounds: 'min' (min_t ...),
    'average' ((1/T) sum_t ...) or 'last' (the value at round T); None where the words say none of these."""
    words = " ".join(text.lower().split())
    if words.startswith("min") or "min_t" in words or "min_{" in words:
        return "min"
    if words.startswith("(1/t) sum") or words.startswith("1/t sum"):
        return "average"
    if any(k in text for k in ("^{T-1})||", "^T)||", "^{T})||")) or "last iterate" in words:
        return "last"
    return None


#: PEP quantity -> the theorem quantities that bound it (min_t g_t <= the average and <= the last value): a theorem
#: may be compared with a PEP model whose quantity is at most its left-hand side, pointwise
BOUNDED_BY = {"min": ("min", "average", "last"), "average": ("average",), "last": ("last",)}


def _check_theorem(name, kind, theorem, where=""):
    """Refuse a theorem that is unknown, or whose left-hand side does not bound the model's quantity ``kind``
    (:data:`BOUNDED_BY`): a worst case above such a theorem's bound would be no counter-example."""
    if theorem is None:
        return
    from dfltheory.bounds import catalog

    if theorem not in catalog():
        raise ValueError(f"{where}PEP model {name!r}: unknown theorem {theorem!r}; register its paper first")
    lhs = quantity_kind(catalog()[theorem].quantity)
    if lhs is not None and lhs not in BOUNDED_BY[kind]:
        raise ValueError(f"{where}PEP model {name!r} bounds the {kind} over t of ||grad f(p^t)||^2, but {theorem} "
                         f"bounds the {lhs} ({catalog()[theorem].quantity!r}), which does not bound it; attach a "
                         f"theorem on the {kind}, or declare the program's Metric({lhs!r}, ...)")


def program_of(algorithm: str):
    """The step program a PEP model runs (a user's ``like=`` model: the built-in one it names)."""
    return PROGRAMS[LIKE.get(algorithm, algorithm)]


#: a user's PEP model -> the theorem it is compared with (None: its ``like`` model's)
THEOREM_OF: dict[str, str | None] = Registry("PEP model's theorem")
for _registry in (ALGORITHMS, METRICS, _POINT, LIKE, THEOREM_OF):
    _registry.seal()  # the built-in entries are fixed: a plugin adds models, it cannot replace or remove one
del _registry


def metric_text(algorithm: str) -> str:
    """The quantity the PEP bounds for ``algorithm``, in words."""
    point = _POINT.get(algorithm)
    if METRICS[algorithm] == "min":
        return "min_t ||grad f(x_bar^t)||^2" if point is None else f"min_t ||grad f(p^t)||^2 at {point}"
    if METRICS[algorithm] == "last":
        return f"||grad f(p^(T-1))||^2 at {point or 'x_bar^t'}"
    return f"(1/T) sum_t ||grad f(p^t)||^2 at {point}"
SAM = ("dfedsam-unnormalized", "dfedadmm-sam-unnormalized", "dfedsgpsm-unnormalized")
ADMM = ("dfedadmm", "dfedadmm-sam-unnormalized")
CATA = ("dfedcata-a", "dfedcata-b")
PUSH_SUM = ("sgp", "dfedsgpm", "dfedsgpsm-unnormalized")
GAPS = ("fstar", "last")
HETEROGENEITY_AT = ("averages", "all")

#: Largest Gram matrix accepted, and largest expected solve time (seconds), before a problem is refused.
MAX_GRAM = 400
MAX_SECONDS = 600.0

#: Accuracy demanded of a solve: relative to max(1, |value|).
TOL_FEASIBILITY = 1e-6  # dual side: the certificate (residual PSD, multipliers >= 0)
TOL_PRIMAL = 1e-5  # primal side: the worst-case example (Gram PSD, constraints)
TOL_GAP = 1e-4
TOL_PROOF = 1e-4
#: Solver statuses whose answer is checked and, if every residual passes, reported. Clarabel often stops at
#: 'optimal_inaccurate' (its reduced tolerances) on well-posed PEPs whose residuals are ~1e-9: the residuals
#: computed here from the primal and dual solutions, not the solver's label, decide (``strict=True`` refuses it).
ACCEPTED_STATUSES = ("optimal", "optimal_inaccurate")
#: Clarabel's settings for a second attempt when the first fails in any way (an error, another status, or an answer
#: that fails a residual check): a larger static regularization (default 1e-8) gets through the degenerate faces of
#: some class PEPs (DFedCata A's average minus c Xi over [-0.5, 0.5] at T = 5; DFedAvg over the degenerate class
#: [0.9, 0.9] at m = 3, K = 2, T = 4, eta = 0.1, whose first answer misses the proof tolerance); the residual checks
#: judge its answer like any other.
RETRY_OPTIONS = {"static_regularization_constant": 1e-6}
#: every retry of a failed Clarabel solve, in order (issue 32: an audited instance refused after the first retry
#: solves with a stronger regularization); each answer is judged by the same residual checks
RETRY_LADDER = (RETRY_OPTIONS, {"static_regularization_constant": 1e-5}, {"static_regularization_constant": 1e-4})
#: eta L below this: a failed solve is explained as the step's underflow (:func:`diagnose_failure`)
MIN_STEP = 1e-7
#: cvxpy's solvers of semidefinite programs (the others, OSQP, HIGHS, ..., cannot take a PEP).
_SDP_SOLVERS = ("CLARABEL", "SCS", "MOSEK", "CVXOPT", "COPT", "SDPA")
#: Largest dimensionless scale of an instance accepted (eta L, rho L, sigma_g / sqrt(L Delta), B / sqrt(L Delta),
#: DFedADMM's eta / lam_pen and lam_pen / eta, DFedCata's eta lam_pen and beta / (1 - beta); L and Delta within
#: [1/MAX_SCALE, MAX_SCALE]). The SDP's coefficients grow like the squares of these: beyond, its data overflows
#: (eta = 1e300: "Problem data contains NaN or Inf") or no answer meets the tolerances (eta = 1e6 at m = 3, K = 2,
#: T = 4: proof error 1.07), so such an instance is refused as bad input, naming the scale and the fix.
MAX_SCALE = 1e4


class PEPSolveError(RuntimeError):
    """The SDP solver failed or its answer is not accurate enough to be a certified worst case. The message names the
    cause and the fix; ``cause`` is the cause alone (the command line names the fix in its own options)."""

    def __init__(self, message: str, cause: str | None = None):
        super().__init__(message)
        self.cause = message if cause is None else cause


@dataclass(frozen=True)
class Size:
    """Size of the SDP: Gram matrix order, scalar constraints, PSD blocks besides the Gram matrix, and the
    expected solve time in seconds on a 2-core machine (a rough fit, see benchmarks/bench_pep.py)."""

    gram: int
    constraints: int
    lmi: int
    expected_seconds: float


@dataclass(frozen=True)
class PEPResult:
    """A solved PEP. ``value`` is the dual objective (the certified upper bound on the worst case); ``primal`` the
    primal objective (attained by the worst-case Gram matrix); ``diagnostics`` the feasibility residuals."""

    value: float
    primal: float
    status: str
    solver: str
    seconds: float
    size: Size
    diagnostics: dict
    settings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def count_text(n: int) -> str:
    """An integer for a message: in full up to 10^9, else its order of magnitude (T = 10^200 has a 400-digit size)."""
    return str(n) if n < 10 ** 9 else f"~1e{len(str(n)) - 1}"


_REAL = (int, float, np.integer, np.floating)
#: the PEP instance's numbers, declared once (:mod:`dfltheory.constraints`; the command line's --set reaches them)
CONSTRAINTS = {
    **{name: Interval(1, integer=True, kind=(int, np.integer)) for name in ("m", "K", "T", "Q")},
    **{name: Interval(0, closed="neither", kind=_REAL) for name in ("eta", "L", "Delta")},
    **{name: Interval(0, kind=_REAL) for name in ("rho", "sigma_g", "B")},
    "lam_pen": Interval(0, closed="neither", kind=_REAL),  # DFedADMM's penalty
    "lam_pen_cata": Interval(0, kind=_REAL),  # DFedCata's proximal penalty (0: none)
    "beta": Interval(0, 1, "left", kind=_REAL),
    "alpha": Interval(0, 1, "left", kind=_REAL),
    "gap": Options(GAPS),
    "heterogeneity_at": Options(HETEROGENEITY_AT),
}


def _check(algorithm, m, K, T, eta, L, Delta, sigma_g, B, rho, Q, gap, heterogeneity_at, lam_pen=None, beta=None,
           alpha=None):
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; use one of {sorted(ALGORITHMS)}")
    for name, v in (("m", m), ("K", K), ("T", T), ("Q", Q)):
        check(name, v, CONSTRAINTS[name])
    if Q > MAX_SCALE:
        raise ValueError(f"Q = {count_text(Q)} gossip steps per round exceed {MAX_SCALE:g}: W^Q drifts from a "
                         "stochastic matrix in floating point (and is 11^T/m to machine precision long before); use "
                         f"Q <= {MAX_SCALE:g}, or W = 11^T/m for an exact average")
    for name, v in (("eta", eta), ("L", L), ("Delta", Delta), ("rho", rho), ("sigma_g", sigma_g), ("B", B)):
        if not (v is None and name in ("sigma_g", "B")):
            check(name, v, CONSTRAINTS[name])
    if algorithm in DPSGD and (K != 1 or Q != 1):
        raise ValueError(f"{algorithm} is one local step and one gossip step (K = Q = 1), got K = {K}, Q = {Q}; use "
                         "dfedavg for K > 1 or dfedavg-mgs for Q > 1 (both step, then mix)")
    program = PROGRAMS[LIKE.get(algorithm, algorithm)]
    if program.name not in MODELS:  # a plugin's program: its own K, and only the hyper-parameters it reads
        if program.K is not None and K != program.K:
            raise ValueError(f"{algorithm} runs K = {program.K} local steps per round, got K = {K}")
        given = dict(rho=rho or None, lam_pen=lam_pen, beta=beta, alpha=alpha, Q=Q if Q != 1 else None)
        unread = [k for k, v in given.items() if v is not None and k not in program.params]
        if unread:
            raise ValueError(f"{algorithm} does not read {', '.join(unread)} (its hyper-parameters: "
                             f"{', '.join(program.params) or 'none'}); leave {unread[0]} out")
        _check_common(gap, T, heterogeneity_at)
        _check_scales(algorithm, K, eta, L, Delta, sigma_g, B, rho, lam_pen, beta)
        return
    if rho and algorithm not in SAM:
        raise ValueError(f"rho = {rho} only applies to {' and '.join(SAM)} ({algorithm} has no ascent step)")
    if algorithm in ADMM:
        if lam_pen is None or isinstance(lam_pen, bool) or not isinstance(lam_pen, (int, float, np.integer,
                                                                                    np.floating)):
            raise ValueError(f"{algorithm} needs the ADMM penalty lam_pen (a number > 0), got {lam_pen!r}")
        check("lam_pen", lam_pen, CONSTRAINTS["lam_pen"])
    elif algorithm in CATA:
        for name, v, constraint in (("lam_pen", lam_pen, "lam_pen_cata"), ("beta", beta, "beta")):
            if v is None or isinstance(v, bool) or not isinstance(v, _REAL):
                raise ValueError(f"{algorithm} needs {name} (a number), got {v!r}")
            check(name, v, CONSTRAINTS[constraint])
    elif lam_pen is not None:
        raise ValueError(f"lam_pen = {lam_pen} only applies to {', '.join(ADMM + CATA)}")
    if beta is not None and algorithm not in CATA:
        raise ValueError(f"beta = {beta} only applies to {' and '.join(CATA)}")
    if algorithm in PUSH_SUM:
        if algorithm == "sgp" and (K != 1 or alpha):
            raise ValueError(f"sgp is one local step without momentum (K = 1, alpha = 0), got K = {K}, alpha = {alpha};"
                             " use dfedsgpm")
        if algorithm != "sgp" and alpha is None:
            raise ValueError(f"{algorithm} needs the momentum coefficient alpha (a number in [0, 1))")
        if alpha is not None:
            check("alpha", alpha, CONSTRAINTS["alpha"])
        if Q != 1:
            raise ValueError(f"{algorithm} mixes once per round (Q = 1), got Q = {Q}")
    elif alpha is not None:
        raise ValueError(f"alpha = {alpha} only applies to {', '.join(PUSH_SUM)}")
    _check_common(gap, T, heterogeneity_at)
    _check_scales(algorithm, K, eta, L, Delta, sigma_g, B, rho, lam_pen, beta)


def _check_common(gap, T, heterogeneity_at):
    check("gap", gap, CONSTRAINTS["gap"])
    if gap == "last" and T < 2:
        raise ValueError("gap='last' bounds f(x_bar^0) - f(x_bar^{T-1}), which is 0 for T = 1 (the worst case is "
                         "unbounded); use T >= 2 or gap='fstar'")
    check("heterogeneity_at", heterogeneity_at, CONSTRAINTS["heterogeneity_at"])


def _check_scales(algorithm, K, eta, L, Delta, sigma_g, B, rho, lam_pen, beta):
    """Refuse an instance with a scale beyond :data:`MAX_SCALE` (its SDP overflows or cannot be solved to the
    tolerances), naming the scale and the fix. The worst case is L Delta times that of the instance at L = Delta = 1
    with eta L, rho L, sigma_g / sqrt(L Delta), B / sqrt(L Delta) (every other input is dimensionless)."""
    for name, v in (("L", L), ("Delta", Delta)):
        if not 1 / MAX_SCALE <= v <= MAX_SCALE:
            raise ValueError(f"{name} = {v:g} is outside [{1 / MAX_SCALE:g}, {MAX_SCALE:g}], where the SDP's "
                             "coefficients stay solvable; the worst case scales as L Delta: solve at L = Delta = 1 "
                             "with eta L, rho L, sigma_g / sqrt(L Delta) and B / sqrt(L Delta) in place of eta, rho, "
                             "sigma_g and B, and multiply the value by L Delta")
    unit = math.sqrt(L * Delta)
    scales = [("eta L", eta * L, f"use eta <= {MAX_SCALE / L:g} (every theorem asks eta L < 1)"),
              ("rho L", rho * L, f"use rho <= {MAX_SCALE / L:g}")]
    drop = "bounds nothing: leave it out (None; on the command line, out of --set) to drop the assumption"
    scales += [(f"{name} / sqrt(L Delta)", v / unit, f"a {name} this large {drop}")
               for name, v in (("sigma_g", sigma_g), ("B", B)) if v is not None]
    if algorithm in ADMM:
        scales += [("eta / lam_pen", eta / lam_pen, "use lam_pen >= eta (dfedadmm.thm1's gamma in (0, 1])"),
                   ("lam_pen / eta", lam_pen / eta, "use lam_pen <= K eta, as dfedadmm.thm1 does")]
    if algorithm in CATA:
        scales += [("eta lam_pen", eta * lam_pen, f"use lam_pen <= {MAX_SCALE / eta:g}"),
                   ("beta / (1 - beta)", beta / (1 - beta), f"use beta <= {1 - 1 / MAX_SCALE:g}")]
    for name, v, fix in scales:
        if not v <= MAX_SCALE:
            raise ValueError(f"{name} = {v:.3g} exceeds {MAX_SCALE:g}: the SDP's coefficients grow like its square, "
                             f"so its data overflows or no solve meets the tolerances; {fix}")
    if algorithm in ADMM:
        gamma = admm_gamma(eta, lam_pen, K)
        if abs(gamma) < 1 / MAX_SCALE:
            raise ValueError(f"gamma = 1 - (1 - eta/lam_pen)^K is {gamma:.3g} at eta = {eta}, lam_pen = {lam_pen}, "
                             f"K = {K}: the auxiliary sequence w^t (coefficient (1 - gamma)/gamma) is undefined or "
                             "beyond what the SDP resolves; use eta <= lam_pen (dfedadmm.thm1's gamma in (0, 1])")


def _check_solver(solver):
    """Refuse what is not an SDP solver installed for cvxpy, naming those that are."""
    import cvxpy

    installed = [s for s in cvxpy.installed_solvers() if s in _SDP_SOLVERS]
    if not isinstance(solver, str) or solver.upper() not in installed:
        raise ValueError(f"solver {solver!r} is not an SDP solver installed for cvxpy; use one of {installed} "
                         "(CLARABEL by default)")


def _expected_seconds(gram: int, constraints: int) -> float:
    """Rough fit of build + Clarabel solve time on 2 shared cores (benchmarks/bench_pep.py): about
    2e-5 s x constraints^2 (448 constraints: 3.5 s; 784: 11 s; 2075: 64 s); the Gram order matters less."""
    try:
        return 0.5 + 2e-5 * float(constraints) ** 2
    except OverflowError:  # a problem far beyond every limit (T = 10^200)
        return math.inf


def estimate_size(algorithm: str, m: int, K: int, T: int, Q: int = 1, spectral: bool = False,
                  heterogeneity_at: str = "averages", sigma_g: bool = False, B: bool = False,
                  time_varying: bool = False) -> Size:
    """The SDP's size before building it (exact Gram order and constraint count; DFedCata's xi-weighted PEP over
    the class keeps its last consensus step, m - 1 more points per gossip step)."""
    s = ALGORITHMS[algorithm][0]
    rounds = T - 1
    local = rounds * K * s  # local queries per agent, the first at x^0 = x_bar^0
    if heterogeneity_at == "all" and sigma_g:
        distinct = 1 + (T - 1) + m * max(local - 1, 0)  # x^0, x_bar^1.., every agent's other local points
        per_function = [distinct] * m
    else:
        per_function = [T + local - (1 if local else 0)] * m
    mixed_rounds = max(rounds - 1, 0)  # the class's last round is its mean only (see _build)
    spectral_leaves = mixed_rounds * Q * (m - 1) if spectral and m > 1 else 0
    gram = 1 + sum(per_function) + spectral_leaves
    constraints = sum(n * (n - 1) for n in per_function)
    constraints += 1 + T  # gap
    if sigma_g:
        constraints += T if heterogeneity_at == "averages" else per_function[0]
    if B:
        constraints += sum(per_function)
    S = mixed_rounds * Q
    lmi = 1 if spectral and S and m > 1 and not time_varying else 0
    if lmi:
        constraints += S * (S - 1) // 2
    elif spectral and m > 1 and time_varying:
        constraints += S  # one scalar condition per step
    return Size(gram, constraints, lmi, _expected_seconds(gram, constraints))


def worst_case(algorithm: str, m: int, K: int, T: int, eta: float, L: float = 1.0, Delta: float = 1.0, *,
               W=None, spectral=None, sigma_g: float | None = None, B: float | None = None, rho: float = 0.0,
               Q: int = 1, gap: str = "fstar", heterogeneity_at: str = "averages", lam_pen: float | None = None,
               beta: float | None = None, alpha: float | None = None, xi_weight: float = 0.0,
               time_varying: bool = False,
               solver: str = "CLARABEL",
               max_seconds: float = MAX_SECONDS, strict: bool = False) -> PEPResult:
    """Worst case of the quantity :data:`METRICS` names for ``algorithm`` (min_{t<T} ||grad f(x_bar^t)||^2, or the
    average over t < T of ||grad f(w^t)||^2 for DFedADMM, whose penalty is ``lam_pen``, or of ||grad f(p^t)||^2 for
    DFedCata, penalty ``lam_pen`` and extrapolation ``beta``; see the module docstring). ``xi_weight`` = c > 0
    (DFedCata only) maximizes the average minus c Xi instead, Xi = (1/T) sum_{t<T} (1/m) sum_i ||y_i^t - y_bar^t||^2
    the consensus error of the extrapolated round-start points: a bound b + c Xi holds on the instance iff that
    value is <= b.

    Mixing: ``W`` (an m x m symmetric doubly stochastic matrix, exact; for push-sum a column-stochastic P), a
    sequence ``W=[W_0, W_1, ...]`` (round t mixes with W_t; at least T - 1 matrices, the later ones unused: the
    last round's gossip does not reach the quantity) or ``spectral=(lo, hi)`` (every symmetric doubly stochastic W
    with nonunit eigenvalues in [lo, hi], a relaxation; for push-sum too, whose weights stay 1 on such a W, so that
    it is gossip of the numerators); with ``time_varying`` every sequence of matrices of the class, one per gossip
    step. ``sigma_g`` / ``B`` None drop the assumption; ``sigma_g = 0`` is the equality grad f_i = grad f at every
    heterogeneity site, imposed exactly (one gradient shared by every f_i there, see :func:`_oracle`). A problem
    whose Gram matrix exceeds :data:`MAX_GRAM`, whose expected time exceeds ``max_seconds`` (a finite number > 0) or
    whose scales exceed :data:`MAX_SCALE` is refused (ValueError) before it is built. A solve whose status is not in
    :data:`ACCEPTED_STATUSES` (only 'optimal' with ``strict``), or whose primal or dual residuals, proof
    reconstruction or duality gap exceed the tolerances, is retried once with Clarabel's :data:`RETRY_OPTIONS`;
    if that fails too, :class:`PEPSolveError` (cause and fix in one line): never a number.
    """
    name, algorithm = algorithm, LIKE.get(algorithm, algorithm)  # a user's model runs the built-in one it names
    _check(algorithm, m, K, T, eta, L, Delta, sigma_g, B, rho, Q, gap, heterogeneity_at, lam_pen, beta, alpha)
    if isinstance(max_seconds, bool) or not isinstance(max_seconds, (int, float, np.integer, np.floating)) or not (
            math.isfinite(max_seconds) and max_seconds > 0):
        raise ValueError(f"max_seconds must be a finite number of seconds > 0, got {max_seconds!r}; give the time "
                         f"budget of the solve (default MAX_SECONDS = {MAX_SECONDS:g})")
    _check_solver(solver)
    if xi_weight and (algorithm not in CATA or not math.isfinite(xi_weight) or xi_weight < 0):
        raise ValueError(f"xi_weight = {xi_weight} needs a DFedCata algorithm ({', '.join(CATA)}) and a finite value "
                         ">= 0")
    program = PROGRAMS[algorithm]
    if program.mixing == "push-sum" and W is not None and not isinstance(W, PushSumMixing):
        W = PushSumMixing(W.matrices if isinstance(W, ExplicitMixing) else W)
    mixing = as_mixing(W, spectral, time_varying)
    if isinstance(mixing, (ExplicitMixing, PushSumMixing)):
        if mixing.m != m:
            raise ValueError(f"W is {mixing.m} x {mixing.m} but m = {m}; give an m x m matrix")
        if mixing.sequence and len(mixing.matrices) < T - 1:
            raise ValueError(f"the mixing sequence has {len(mixing.matrices)} matrices but T = {T} rounds gossip "
                             f"{T - 1} times; give at least T - 1 = {T - 1} matrices (one per round)")
        mixing = mixing.rounds(T - 1)  # the matrices the PEP uses (the last round's gossip is not simulated)
    size = estimate_size(algorithm, m, K, T, Q, isinstance(mixing, SpectralClass), heterogeneity_at,
                         sigma_g is not None, B is not None, getattr(mixing, "varying", False))
    if size.gram > MAX_GRAM or size.expected_seconds > max_seconds:
        raise ValueError(f"PEP too large: Gram matrix {count_text(size.gram)} x {count_text(size.gram)}, "
                         f"{count_text(size.constraints)} constraints, "
                         f"expected ~{size.expected_seconds:.0f} s (limits: Gram <= {MAX_GRAM}, {max_seconds:.0f} s); "
                         "reduce m, K or T (about m (T (K + 1))^2 constraints, solve time ~ constraints^2)")
    settings = dict(algorithm=name, m=m, K=K, T=T, eta=eta, L=L, Delta=Delta, sigma_g=sigma_g, B=B, rho=rho,
                    Q=Q, gap=gap, heterogeneity_at=heterogeneity_at, mixing=mixing.describe(), lam_pen=lam_pen,
                    beta=beta, alpha=alpha, xi_weight=xi_weight, metric=METRICS[algorithm],
                    mixing_args=mixing.args())
    problem, trace = _build(program, program_params(program, Q=Q, rho=rho, lam_pen=lam_pen, beta=beta, alpha=alpha),
                            m, K, T, eta, L, Delta, mixing, sigma_g, B, gap, heterogeneity_at, xi_weight)
    return _solve(problem, solver, size, settings, ACCEPTED_STATUSES[:1] if strict else ACCEPTED_STATUSES, trace)


def program_params(program, **given):
    """The program's hyper-parameters from ``worst_case``'s or ``certify``'s (Q, rho, lam_pen, beta, alpha): those it
    reads, None taken as not given."""
    return program.bind(**{k: v for k, v in given.items() if k in program.params and v is not None})


def _oracle(fs, i, point, share):
    """(grad f_i, f_i) at ``point`` when sigma_g = 0, where the agents' points may coincide.

    A point equal (:func:`_same`) to one already queried is that point: one location reached along two paths (the
    mean of identical models, push-sum's de-biased numerators) would otherwise get two copies, whose interpolation
    conditions force equal gradients and values through pairs of opposite inequalities, a face without interior
    where the solver stalls. With ``share`` (a site of the heterogeneity condition) every f_j gets one common
    gradient there: at sigma_g = 0, (1/m) sum_j ||grad f_j - grad f||^2 <= 0 is the equality grad f_j = grad f for
    every j, imposed by elimination rather than as a sum of squares <= 0 (no interior either: Clarabel stopped at
    'optimal_inaccurate' 2.7e-4 above the exact 100/89 for DFedAvg, m = 2, K = 1, T = 5, eta = 0.1, W(0.5))."""
    from PEPit import Expression, Point

    def known(f):  # f's (gradient, value) at the point, if f was queried there
        return next(((g, v) for p, g, v in f.list_of_points if _same(p, point)), None)

    point = next((p for f in fs for p, _, _ in f.list_of_points if _same(p, point)), point)
    if share:
        hits = [known(f) for f in fs]
        g = next((h[0] for h in hits if h is not None), None)
        g = Point() if g is None else g
        for f, h in zip(fs, hits):
            if h is None:
                f.add_point((point, g, Expression()))
    return known(fs[i]) or fs[i].oracle(point)


def _build(program, params, m, K, T, eta, L, Delta, mixing, sigma_g, B, gap, heterogeneity_at, xi_weight=0.0):
    """The fixed-T PEP of ``program`` (:mod:`dfltheory.program`, its rounds by :func:`program_pep.rounds`) with the
    class of functions, the initial gap, sigma_g, B and the spectral class's conditions (module docstring)."""
    from PEPit import PEP, Expression
    from PEPit.functions import SmoothFunction

    problem = PEP()
    fs = [problem.declare_function(SmoothFunction, L=L) for _ in range(m)]
    x0 = problem.set_initial_point()
    kind = program.metric.kind
    averages = []  # (metric point p^t, [grad f_i(p^t)], grad f(p^t), f(p^t)) for t = 0..T-1
    consensus = []  # spectral class: (X_s, Y_s) deviation lists of every consensus step

    def query(i, p, site=False):  # (grad f_i(p), f_i(p)); sigma_g = 0: equal gradients at every site (_oracle)
        if sigma_g == 0:
            return _oracle(fs, i, p, site or heterogeneity_at == "all")
        return fs[i].oracle(p)

    def measure(t, point):  # every f_i at the metric point p^t
        oracles = [query(i, point, site=True) for i in range(m)]
        gbar = _mean([g for g, _ in oracles])
        fbar = (1 / m) * _sum([f for _, f in oracles]) if m > 1 else oracles[0][1]
        averages.append((point, [g for g, _ in oracles], gbar, fbar))
        if kind == "min" or (kind == "last" and t == T - 1):
            problem.set_performance_metric(gbar ** 2)

    # over the class the last round's outputs enter only through their mean (the metric point): no new points, whose
    # consensus constraints would add nothing (the class conditions are exact for one symmetric operator, Colla &
    # Hendrickx Thm 3, so earlier steps keep the same feasible set) and only slow the solver down
    xi = program_pep.rounds(program, params, query, mixing, m, K, T, eta, x0, consensus, measure,
                            last_mean=isinstance(mixing, SpectralClass) and not xi_weight)
    if kind == "average":
        objective = (1 / T) * _sum([gbar ** 2 for _, _, gbar, _ in averages])
        if xi_weight and xi:  # metric - c Xi, Xi = (1/T) sum_{t<T} (1/m) sum_i ||y_i^t - y_bar^t||^2
            objective = objective - (xi_weight / T) * _sum(xi)
        problem.set_performance_metric(objective)

    # f(x^0) - f* <= Delta
    _, _, g0, f0 = averages[0]
    fstar = None
    if gap == "fstar":
        fstar = Expression(is_leaf=True)
        problem.set_initial_condition(f0 - fstar <= Delta)
        for _, _, gbar, fbar in averages:
            problem.add_constraint(fstar - fbar + (1 / (2 * L)) * gbar ** 2 <= 0)
    else:
        problem.set_initial_condition(f0 - averages[-1][3] <= Delta)

    if sigma_g is not None and heterogeneity_at == "all":  # every f_j at every point (PEPit reuses known oracles)
        points = [p for f in fs for p, _, _ in list(f.list_of_points)]
        sites = [[f.gradient(p) for f in fs] for p in points]
    else:
        sites = [gs for _, gs, _, _ in averages]
    assumptions(problem, fs, sites, sigma_g, B)
    class_constraints(problem, consensus, mixing)
    return problem, (fs, averages, fstar, consensus,
                     (mixing.lo, mixing.hi) if isinstance(mixing, SpectralClass) else None,
                     getattr(mixing, "varying", False))


def assumptions(problem, fs, sites, sigma_g, B):
    """sigma_g at each site (a list of the m gradients at one point; a site of one shared gradient, sigma_g = 0 by
    :func:`_oracle`, needs none) and B at every point where an f_i is queried (None: no such assumption)."""
    if sigma_g is not None:
        for gs in sites:
            if all(g is gs[0] for g in gs):
                continue
            gmean = _mean(gs)
            problem.add_constraint((1 / len(gs)) * _sum([(gi - gmean) ** 2 for gi in gs]) <= sigma_g ** 2)
    if B is not None:
        for f in fs:
            for _, g, _ in f.list_of_points:
                problem.add_constraint(g ** 2 <= B ** 2)


def class_constraints(problem, consensus, mixing, scalar_single=False):
    """The spectral class's conditions on the gossip steps ``consensus`` (their deviations (X_s, Y_s), agents
    stacked, one W for all steps): X_s^T Y_r symmetric and (Y - lo X)^T (hi X - Y) PSD (Colla & Hendrickx 2023); a
    new W per step (``mixing.varying``): each step's own <Y_s - lo X_s, hi X_s - Y_s> >= 0. ``scalar_single``: one
    step's 1 x 1 LMI as that scalar inequality (the certificate's data)."""
    if not consensus:
        return
    lo, hi, S = mixing.lo, mixing.hi, len(consensus)

    def inner(a, b):  # sum over agents of <a_i, b_i>: the inner product of the stacked vectors
        return _sum([ai * bi for ai, bi in zip(a, b)])

    U = [[yi - lo * xi for xi, yi in zip(X, Y)] for X, Y in consensus]  # Y - lo X
    V = [[hi * xi - yi for xi, yi in zip(X, Y)] for X, Y in consensus]  # hi X - Y
    if mixing.varying or (scalar_single and S == 1):
        for r in range(S):
            problem.add_constraint(inner(U[r], V[r]) >= 0)
        return
    for r in range(S):
        for q in range(r + 1, S):
            problem.add_constraint(inner(consensus[r][0], consensus[q][1]) == inner(consensus[r][1], consensus[q][0]))
    problem.add_psd_matrix([[0.5 * (inner(U[r], V[q]) + inner(U[q], V[r])) for q in range(S)] for r in range(S)])


def _diagnostics(problem) -> dict:
    """Primal and dual feasibility residuals, as PEPit's check_feasibility computes them (without printing)."""
    from PEPit import Point
    from PEPit.tools.dict_operations import prune_dict, symmetrize_dict

    cons = problem._list_of_prepared_constraints
    ineq = [c for c in cons if c.equality_or_inequality == "inequality"]
    eq = [c for c in cons if c.equality_or_inequality == "equality"]
    primal_violation = max([float(c.eval()) for c in ineq] + [abs(float(c.eval())) for c in eq] + [0.0])
    gram_min_eig = float(np.min(np.linalg.eigvalsh(problem.G_value)))
    psds = problem._list_of_psd_sent_to_wrapper
    lmi_min_eig = min([float(np.min(np.linalg.eigvalsh(p.eval()))) for p in psds] + [0.0])
    residual_min_eig = float(np.min(np.linalg.eigvalsh(problem.residual)))
    dual_min = min([float(c.eval_dual()) for c in ineq] + [0.0])
    lmi_dual_min_eig = min([float(np.min(np.linalg.eigvalsh(p.eval_dual()))) for p in psds] + [0.0])
    combination = -np.dot(Point.list_of_leaf_points, np.dot(problem.residual, Point.list_of_leaf_points))
    for p in psds:
        combination -= np.sum(p.eval_dual() * p.matrix_of_expressions)
    for c in cons:
        combination += c.eval_dual() * c.expression
    d = prune_dict(symmetrize_dict((problem.objective - combination).decomposition_dict))
    dual = float(d.get(1, 0.0))
    proof_error = float(np.sum(np.abs([v for k, v in d.items() if k != 1])))
    return dict(dual_objective=dual, primal_violation=primal_violation, gram_min_eig=gram_min_eig,
                lmi_min_eig=lmi_min_eig, residual_min_eig=residual_min_eig, dual_min=dual_min,
                lmi_dual_min_eig=lmi_dual_min_eig, proof_error=proof_error)


def _attempt(problem, solver, options, accepted):
    """One solve with the solver ``options``: (status, solver name, primal value, diagnostics) of an answer that meets
    every tolerance, else :class:`PEPSolveError` naming what failed."""
    try:
        with warnings.catch_warnings():  # cvxpy's "Solution may be inaccurate": the residuals below decide
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(wrapper="cvxpy", solver=solver, verbose=0, **options)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as err:  # cvxpy's SolverError, Clarabel's PanicException (a BaseException): never a number
        raise PEPSolveError(f"the SDP solver {solver} stopped with an error "
                            f"({' '.join(str(err).split()) or type(err).__name__})") from err
    status = str(getattr(problem.wrapper.prob, "status", "unknown"))
    name = str(getattr(problem.wrapper, "solver_name", solver))
    if status not in accepted or problem.G_value is None:
        raise PEPSolveError(f"the SDP solver {name} ended with status {status!r}, not one of {accepted}"
                            + (" (an unbounded PEP: the assumptions do not bound the quantity)"
                               if status.startswith("unbounded") else ""))
    try:
        primal = float(problem.objective.eval())
        diag = _diagnostics(problem)
    except Exception as err:  # an answer without usable primal or dual values
        raise PEPSolveError(f"the answer of {name} (status {status!r}) has no usable primal and dual solution "
                            f"({' '.join(str(err).split()) or type(err).__name__})") from err
    value = diag["dual_objective"]
    scale = max(1.0, abs(value))
    diag["duality_gap"] = value - primal
    bad = {k: diag[k] for k in ("primal_violation",) if not diag[k] <= TOL_PRIMAL * scale}
    bad.update({k: diag[k] for k in ("gram_min_eig", "lmi_min_eig") if not diag[k] >= -TOL_PRIMAL * scale})
    bad.update({k: diag[k] for k in ("residual_min_eig", "dual_min", "lmi_dual_min_eig")
                if not diag[k] >= -TOL_FEASIBILITY * scale})
    if not diag["proof_error"] <= TOL_PROOF * scale:
        bad["proof_error"] = diag["proof_error"]
    if not abs(diag["duality_gap"]) <= TOL_GAP * scale:
        bad["duality_gap"] = diag["duality_gap"]
    if bad:
        detail = ", ".join(f"{k} = {v:.3g}" for k, v in bad.items())
        raise PEPSolveError(f"the answer of {name} (status {status!r}) is not accurate enough to certify a worst case "
                            f"({detail}; tolerances: dual {TOL_FEASIBILITY:g}, primal {TOL_PRIMAL:g}, gap {TOL_GAP:g}, "
                            f"proof {TOL_PROOF:g}, times max(1, value))")
    return status, name, primal, diag


def diagnose_failure(settings: dict) -> str:
    """The cause of a failed solve that the instance itself explains, with the fix in options that exist: a
    disconnected W (eigenvalue 1 repeated), a W with the eigenvalue -1 (no contraction), a class reaching modulus 1,
    a step below :data:`MIN_STEP` (its terms underflow against the others); '' when none is known. ``settings``:
    worst_case's or certify's (``mixing_args``, ``eta``, ``L``)."""
    args = settings.get("mixing_args") or {}
    if args.get("W") is not None:
        mats = np.asarray(args["W"], dtype=float)
        for M in (mats[None] if mats.ndim == 2 else mats):
            if not np.allclose(M, M.T):
                continue  # push-sum's P: its spectrum says nothing of this kind
            ev = np.linalg.eigvalsh(M)
            ones = int(np.sum(ev >= 1 - 1e-9))
            if ones > 1:
                return (f"W is disconnected (the eigenvalue 1 has multiplicity {ones}: agents in different "
                        "components never mix, so the consensus error never contracts); use a connected W (lambda "
                        "< 1, e.g. --lambda in (-1, 1))")
            if ev.min() <= -1 + 1e-9:
                return ("W has the eigenvalue -1 (lambda = 1: gossip alternates between two states and never "
                        "contracts the consensus error); use a W with every nonunit eigenvalue in (-1, 1) (--lambda "
                        "in (-1, 1); --lambda-range LO HI with -1 < LO <= HI < 1)")
    if args.get("spectral") is not None and max(abs(v) for v in args["spectral"]) >= 1 - 1e-9:
        return ("the class admits eigenvalues of modulus 1 (lambda = 1: no contraction of the consensus error); use "
                "--lambda-range LO HI with -1 < LO <= HI < 1")
    step = settings.get("eta", 1.0) * settings.get("L", 1.0)
    if step < MIN_STEP:
        return (f"eta L = {step:.3g} is below {MIN_STEP:g}: a step this small changes the iterates below the SDP's "
                f"accuracy (its terms eta^2 L^2 underflow against 1); use eta L >= {MIN_STEP:g}")
    return ""


def _solve(problem, solver, estimate, settings, accepted, trace=None) -> PEPResult:
    """Solve, retrying with Clarabel's :data:`RETRY_LADDER` after ANY failure of the first attempt (an error, a
    Rust panic included, a status not in ``accepted``, or an answer that fails a residual check);
    :class:`PEPSolveError` (the cause and the fix, one line) if no attempt gives an answer that meets every
    tolerance."""
    from PEPit import Point

    start = time.perf_counter()
    failures = []
    ladder = [{}] + (list(RETRY_LADDER) if solver.upper() == "CLARABEL" else [])
    for options in ladder:
        try:
            status, solver_name, primal, diag = _attempt(problem, solver, options, accepted)
            break
        except PEPSolveError as err:
            failures.append(str(err))
    else:
        later = sorted(set(failures[1:]) - {failures[0]})
        regs = ", ".join(f"{o['static_regularization_constant']:g}" for o in ladder[1:])
        retry = ("" if len(failures) == 1 else
                 f"; the same after a retry with static_regularization_constant = {regs}" if not later else
                 f"; retried with static_regularization_constant = {regs}: {'; '.join(later)}")
        cause = diagnose_failure(settings)
        cause = f"{cause}; " if cause else ""
        cause = f"{cause}{failures[0]}{retry}; no worst case is reported"
        step = settings.get("eta", 0.0) * settings.get("L", 1.0)
        fix = ("every theorem asks eta L < 1: try a smaller eta" if step > 1 else
               "try a smaller K or T, or L = Delta = 1 (the worst case scales as L Delta)")
        raise PEPSolveError(f"{cause}: {fix}", cause)
    seconds = time.perf_counter() - start
    size = Size(Point.counter, len(problem._list_of_prepared_constraints), len(problem._list_of_prepared_psd),
                estimate.expected_seconds)
    diag["solver_options"] = dict(options)  # {} or RETRY_OPTIONS: which attempt answered
    value = diag["dual_objective"]
    if trace is not None:  # the worst-case example, checked independently (dfltheory.pep.interpolation)
        from dfltheory.pep import interpolation

        example = interpolation.extract(*trace)
        diag["interpolation"] = interpolation.check(
            example, L=settings["L"], Delta=settings["Delta"], metric=settings["metric"],
            value=None if settings.get("xi_weight") else primal,  # the example realizes the primal value
            sigma_g=settings["sigma_g"], B=settings["B"], gap=settings["gap"])
    return PEPResult(value=value, primal=primal, status=status, solver=solver_name, seconds=seconds, size=size,
                     diagnostics=diag, settings=settings)
