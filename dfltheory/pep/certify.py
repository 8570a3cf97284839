"""Rates for every T: Lyapunov certificates found by a one-round SDP (issue 27), and steps tuned by PEP.

Setting: the fixed-horizon PEP's (:mod:`dfltheory.pep.problem`): m agents, L-smooth nonconvex f_1..f_m,
f = (1/m) sum_i f_i, the same algorithms, steps, mixing, sigma_g, B, f(x^0) - f* <= Delta, a consensual start, and
the same quantity, min_{t<T} or (1/T) sum_{t<T} of g_t = ||grad f(p^t)||^2 at the metric point p^t (x_bar^t;
DFedADMM's w^t, DFedCata's p^t; ``problem.metric_text``). The state of an algorithm at the start of round t (its
round-start models; DFedADMM's duals ghat_i^{t-1} and x_bar^{t-1}; DFedCata B's previous aggregates) gives a
**potential** (:data:`POTENTIALS` names each algorithm's family and its components)

    V_t = a (f(p^t) - f*) + (1/m) sum_i u_i^tT (P kron I) u_i^t + c^tT (R kron I) c^t,       a >= 0, P, R PSD,

u_i^t the agent's deviations (x_i^t - x_bar^t, ...) and c^t the common vectors (x_bar^t - x_bar^{t-1}, ...), all 0
at a consensual start. ``consensus`` (the DFedAvg family, push-sum at w = 1, DFedCata A on its extrapolated y_i) is
V_t = a (f(x_bar^t) - f*) + c (1/m) ||X^t - 1 x_bar^tT||_F^2.

**Theorem** (the certificate). If for every round, every state and every f_1..f_m of the class

    (one round)    V_{t+1} - V_t + tau g_t <= e,                                              tau >= 0,

then V_0 <= a Delta, V_t >= a (f(p^t) - f*) >= a g_t / (2L) and V_T >= 0 give, for every T,

    (a/(2L)) g_t + tau sum_{s<t} g_s <= a Delta + t e   (t < T),      tau sum_{s<T} g_s <= a Delta + T e,

so min_t g_t <= min{ 2 L Delta, (a Delta + (T-1) e) / ((T-1) tau + a/(2L)), (a Delta + T e) / (T tau) } (the
sharper final step and the plain sum) and (1/T) sum_t g_t <= the largest value of an LP over g >= 0 under those
T + 1 inequalities (:func:`average_bound`; its closed form (a Delta + (T-1) e) / (T min(tau, a/(2L))) beyond
:data:`LP_HORIZON`): :meth:`Certificate.bound`. As T -> infinity both tend to the floor e / tau.

The one-round inequality is a PEP over one round from a FREE state: the interpolation conditions of each f_i
(PEPit's SmoothFunction) at its points of the round (p^t, the local points, p^{t+1}), sigma_g at p^t and p^{t+1}
(sigma_g = 0: one shared gradient there, ``problem._oracle``), B at every queried point, and the mixing
(``program_pep._gossip``: an explicit W, exact; the class's conditions on the round's Q gossip steps, one W or a new one
per step; a sequence W_0, W_1, ..: the inequality for each of its matrices, so for every order of them). Its dual
proves the inequality: multipliers lambda >= 0 of the scalar constraints, PSD ones of the class's LMI and a PSD
residual S with

    a (f(p^{t+1}) - f(p^t)) + [quadratic part]_{t+1} - [..]_t + tau ||grad f(p^t)||^2 - e
        = sum_k lambda_k constraint_k - <Lambda, LMI> - <S, Gram>        (identically in the Gram matrix and values)

which is linear in (a, P, R, tau, e) and the multipliers: ONE semidefinite program (:func:`_sdp`) finds the best
certificate of the family for the bound at a given T (Charnes-Cooper: its denominator fixed, tau + a/(2L(T-1)) = 1;
for an average, the LP's dual weights at the current certificate fix it and SDP and LP alternate, each step no
worse), or for the floor (tau = 1, e minimal, then a minimal at that e). Certificates are homogeneous and reported
with a = 1. Every constraint the dual combines is one the fixed-T PEP imposes on the same instance (the points,
sites and gossip steps of one of its rounds; the class's within-round LMI is a principal block of its LMI; the f*
condition at p^t), so **bound(T) >= the fixed-T PEP value** at every T: a certificate below a worst case is a bug.
At sigma_g = 0 a larger quadratic part costs nothing and the optimum runs off to infinity: trace(P) + trace(R) <=
:data:`QUAD_CAP` a L caps it (a change in the 4th digit of the bounds).

Validation (issue 32). Each SDP is solved by the first rung of :data:`LADDER` whose answer holds (Clarabel, a
stronger regularization, equilibrated data, SCS; any exception of a solver, a Rust panic included, fails a rung).
An answer is checked three ways: (1) the **exact check** (:mod:`dfltheory.pep.exact`): coefficients and multipliers
rounded to rationals, the one-round identity rebuilt in Fractions, the residual Gram matrix PSD by an exact LDL^T,
e weakened by the least amount that makes it hold where needed (``check["exact_check"]``: passed / weakened by X /
failed); a proved certificate reports the exact e (rounded up) and tau (rounded down); (2) the verifying primal PEP
per mixing matrix (PEPit's own SDP at the certificate's coefficients, its dual checked by ``problem._solve``):
``residual`` = its value - e, refused above :data:`TOL_CHECK` relative to max(|e|, :data:`TOL_CHECK_FLOOR` L Delta)
beyond its own accuracy; (3) the separately written one-round PEP (:mod:`dfltheory.pep.separate`, the consensus
family on an explicit W), whose maximum must not exceed e. A certificate not proved exactly (no bounded constraint
reaches the failing direction) keeps the larger of the SDP's e and the verifying value and says so. The solver's
tiny violations of a, tau >= 0 and P, R PSD are removed before the checks.

What a certificate proves: the bound at every T for every instance of the class (deterministic, sigma_l = 0). What
it does not: that the family is the right one. A bound far above the fixed-T worst case says that the family (one
round's view: for the class, only the round's own spectral conditions) is too poor, not that the algorithm is slow.
Push-sum (sgp, dfedsgpm, dfedsgpsm-unnormalized) is certified on a symmetric doubly stochastic W or the class, where
its weights stay 1 and it is gossip of the numerators; on a column-stochastic P the weights change every round and
no one-round certificate of this form applies (refused).

Steps tuned by PEP (:func:`tune`, ``pep --tune eta``, ``certify --tune eta``): the step in (0, eta_max] minimising
the fixed-T worst case or a certificate's bound (a grid, then a golden-section search, :func:`tune_eta`), next to
the largest step the theorem admits (bisection on its conditions) and the value there.
"""
from __future__ import annotations

import math
import time
from fractions import Fraction
from dataclasses import asdict, dataclass, field

import numpy as np

from dfltheory.pep.mixing import ExplicitMixing, PushSumMixing, SpectralClass, as_mixing
from dfltheory.pep.problem import (ACCEPTED_STATUSES, ADMM, ALGORITHMS, DPSGD, LIKE, METRICS, MODELS, PUSH_SUM,
                                   PEPSolveError, Size, program_of, program_params)
from dfltheory.pep.program_pep import components, one_round

__all__ = ["COVERED", "POTENTIALS", "QUAD_CAP", "Certificate", "average_bound", "certificate_table", "certify",
           "check_size", "paper_bound", "tune", "tune_eta", "verify_certificate"]

#: the built-in models' potential families, by name (a plugin's program: "program state")
FAMILIES = {
    **{a: "consensus" for a in ("dpsgd", "dpsgd-atc", "dfedavg", "dfedavg-mgs", "dfedsam-unnormalized")},
    **{a: "consensus (numerators, w = 1)" for a in PUSH_SUM},
    **{a: "admm-state" for a in ADMM},
    "dfedcata-a": "consensus (extrapolated y_i)", "dfedcata-b": "cata-state",
}


def potential(algorithm: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(potential family, its per-agent components u_i, its common components c) of ``algorithm``: read from its
    step program's state (``program_pep.components``: the deviation of every carried slot; the metric's mean minus
    its previous mean where the metric extrapolates; the mean of every dual-like slot)."""
    model = LIKE.get(algorithm, algorithm)
    return (FAMILIES.get(model, "program state"), *components(program_of(model)))


class _Potentials(dict):
    """algorithm -> :func:`potential`, computed on first use (a plugin's program included)."""

    def __missing__(self, algorithm):
        if algorithm not in ALGORITHMS:
            raise KeyError(algorithm)
        return potential(algorithm)


#: algorithm -> (potential family, its per-agent components u_i, its common components c)
POTENTIALS = _Potentials({a: potential(a) for a in MODELS})
COVERED = tuple(a for a in ALGORITHMS if a in POTENTIALS)
#: cap on the quadratic part, trace(P) + trace(R) <= QUAD_CAP a L (module docstring)
QUAD_CAP = 1e3
#: largest T at which an average's bound is the LP of :func:`average_bound` (beyond, its closed form); largest T at
#: which a certificate is optimised for that LP (beyond, for the sharper final step: the two differ by O(1/T)), and
#: the most SDP/LP alternations it takes
LP_HORIZON = 10 ** 4
ALTERNATION_HORIZON = 200
MAX_ALTERNATIONS = 6
#: relative slack on the floor's e when the smallest a is then sought
FLOOR_SLACK = 1e-6
#: the horizon at which a theorem is read when a step is tuned for a certificate's floor (T -> infinity)
THEOREM_HORIZON = 10 ** 4
#: largest excess of the verifying PEP over the certificate's e accepted, relative to |e| (else the rung's answer is
#: refused and the next rung of LADDER tried); TOL_CHECK_FLOOR a L Delta is the floor of that scale (e = 0 at
#: sigma_g = 0)
TOL_CHECK = 1e-4
TOL_CHECK_FLOOR = 1e-8
#: the retry ladder of the certificate SDP: (solver, cvxpy options, equilibrated data); each rung's answer must pass
#: the verifying PEP (TOL_CHECK) before the exact check, else the next rung is tried
LADDER = (("CLARABEL", {}, False), ("CLARABEL", {"static_regularization_constant": 1e-6}, False),
          ("CLARABEL", {}, True), ("CLARABEL", {"static_regularization_constant": 1e-5}, True),
          ("SCS", {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 20000}, True))


@dataclass(frozen=True)
class Certificate:
    """A one-round Lyapunov certificate: V_{t+1} - V_t + tau ||grad f(p^t)||^2 <= e for every round (module docstring).

    Reported with a = 1 (the inequality is homogeneous). ``P`` / ``R``: the quadratic part on the per-agent / common
    components (``components``); ``c`` = P[0][0], the weight of the consensus error (1/m)||X - 1 x_bar^T||_F^2.
    ``e``: proved exactly (``check["proved"]``), the exact e rounded up (``check["e_exact"]``, a fraction); else the
    larger of the SDP's e and the verifying PEP's value. ``check``: the exact check's verdict, the verifying PEP's
    value, residual and accuracy, the separate model's value, the rung of :data:`LADDER` that answered and why the
    earlier ones failed. ``horizon``: the T it was optimised for (None: the floor)."""

    algorithm: str
    potential: str
    metric: str
    a: float
    tau: float
    e: float
    P: list
    R: list
    components: dict
    L: float
    Delta: float
    horizon: int | None
    status: str
    seconds: float
    check: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    @property
    def c(self) -> float:
        """The weight of the first per-agent component's square (the consensus error's)."""
        return float(self.P[0][0]) if self.P else 0.0

    @property
    def floor(self) -> float:
        """e / tau: the bound as T -> infinity (inf when tau = 0)."""
        return self.e / self.tau if self.tau > 0 else math.inf

    def bound(self, T: int) -> float:
        """The bound on the metric implied at T rounds (module docstring): for a min the smallest of 2 L Delta, the
        sharper final step and the plain sum; for an average the LP of :func:`average_bound` (beyond
        :data:`LP_HORIZON` the smaller of its two closed forms)."""
        if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
            raise ValueError(f"T must be an integer >= 1 (rounds), got {T!r}")
        a, tau, e, L, Delta = self.a, self.tau, self.e, self.L, self.Delta
        if self.metric == "average" and T <= LP_HORIZON:
            return average_bound(a, tau, e, L, Delta, T)
        head = a / (2 * L)
        sharp = (T - 1) * tau + head if self.metric == "min" else T * min(tau, head)
        values = [(a * Delta + (T - 1) * e) / sharp if sharp > 0 else math.inf]
        if tau > 0:
            values.append((a * Delta + T * e) / (T * tau))
        if self.metric == "min":
            values.append(2 * L * Delta)  # t = 0: f(x^0) - f* >= ||grad f(x^0)||^2/(2L)
        return min(values)

    def to_dict(self) -> dict:
        return dict(asdict(self), c=self.c, floor=self.floor)


def _pieces(before, after):
    """The quadratic part's change, one expression per entry (j <= k) of P and of R (off-diagonal entries twice)."""
    from dfltheory.pep.problem import _sum

    def change(j, k, agent):
        (u0, c0), (u1, c1) = before, after
        if agent:
            m = len(u0[j])
            one = _sum([a * b for a, b in zip(u1[j], u1[k])]) - _sum([a * b for a, b in zip(u0[j], u0[k])])
            return (1 / m) * one * (1 if j == k else 2)
        return (c1[j] * c1[k] - c0[j] * c0[k]) * (1 if j == k else 2)

    n_u, n_c = len(before[0]), len(before[1])
    return ([((j, k), change(j, k, True)) for j in range(n_u) for k in range(j, n_u)],
            [((j, k), change(j, k, False)) for j in range(n_c) for k in range(j, n_c)])


def _one_round(setting, mixing, coefficients=None):
    """The one-round PEP of ``setting`` on one ``mixing`` (an explicit matrix or the class): the PEPit problem and
    the objective's pieces (a's, tau's, each P and R entry's); with ``coefficients`` (a, P, R, tau) its left side
    is set as the performance metric (the verifying primal PEP)."""
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    from dfltheory.pep.problem import _mean, _oracle, _sum, assumptions, class_constraints

    s = setting
    problem = PEP()
    fs = [problem.declare_function(SmoothFunction, L=s["L"]) for _ in range(s["m"])]

    def query(i, p, site=False):
        return _oracle(fs, i, p, site) if s["sigma_g"] == 0 else fs[i].oracle(p)

    program = program_of(s["algorithm"])  # one round of its step program from a free state
    params = program_params(program, Q=s["Q"], rho=s["rho"], lam_pen=s["lam_pen"], beta=s["beta"], alpha=s["alpha"])
    p0, p1, before, after, consensus = one_round(program, params, query, mixing, s["m"], s["K"], s["eta"])
    m = s["m"]
    sites = []
    for p in (p0, p1):  # every f_i at the metric points: f, grad f, and the heterogeneity sites
        sites.append([query(i, p, site=True) for i in range(m)])
    fbar = [(1 / m) * _sum([v for _, v in site]) for site in sites]
    g0 = _mean([g for g, _ in sites[0]])
    assumptions(problem, fs, [[g for g, _ in site] for site in sites], s["sigma_g"], s["B"])
    class_constraints(problem, consensus, mixing, scalar_single=True)
    quad_u, quad_c = _pieces(before, after)
    pieces = {"a": fbar[1] - fbar[0], "tau": g0 ** 2, "P": quad_u, "R": quad_c}
    if coefficients is not None:
        a, P, R, tau = coefficients
        terms = [a * pieces["a"], tau * pieces["tau"]]
        terms += [float(P[j][k]) * e for (j, k), e in quad_u if P[j][k]]
        terms += [float(R[j][k]) * e for (j, k), e in quad_c if R[j][k]]
        problem.set_performance_metric(_sum(terms))
    return problem, pieces


def _matrices(problem, pieces):
    """numpy data of the one-round PEP: the constraints (F weights, symmetric Gram weights, constant, equality?), the
    LMIs (the same per entry) and the objective pieces, over PEPit's leaf points and function values."""
    from PEPit.tools.expressions_to_matrices import expression_to_matrices

    problem._prepare_constraints(verbose=0)

    def mat(expr):
        G, F, c = expression_to_matrices(expr)
        return F, (G + G.T) / 2, float(c)

    cons = [(mat(c.expression), c.equality_or_inequality == "equality") for c in problem._list_of_prepared_constraints]
    lmis = [[[mat(e) for e in row] for row in psd.matrix_of_expressions] for psd in problem._list_of_prepared_psd]
    return dict(cons=cons, lmis=lmis, a=mat(pieces["a"]), tau=mat(pieces["tau"]),
                P=[(jk, mat(e)) for jk, e in pieces["P"]], R=[(jk, mat(e)) for jk, e in pieces["R"]])


def _sdp(datas, nA, nC, L, Delta, metric, horizon, rung):
    """The certificate SDP over the one-round data of every mixing matrix (module docstring), solved by one ``rung``
    of :data:`LADDER`; returns (a, P, R, tau, e, status, multipliers), multipliers per mixing (lambda, [Lambda]) for
    :func:`dfltheory.pep.exact.exact_certificate`. An average metric is optimised for the bound of
    :func:`average_bound`: its LP's dual weights fix the normalization, and the SDP and the LP alternate until the
    bound stops improving (a failed alternation step ends the alternation at the last certificate, recorded in
    ``status``)."""
    import cvxpy as cp

    a, tau, e = cp.Variable(nonneg=True), cp.Variable(nonneg=True), cp.Variable()
    P = cp.Variable((nA, nA), PSD=True) if nA else None
    R = cp.Variable((nC, nC), PSD=True) if nC else None
    cons = [sum((cp.trace(M) for M in (P, R) if M is not None), start=0) <= QUAD_CAP * a * L]
    handles = []
    for d in datas:
        more, handle = _dual_constraints(d, a, tau, e, P, R, rung[2])
        cons += more
        handles.append(handle)

    def values(status):  # a, tau >= 0 and P, R PSD exactly (the solver's tiny violations removed before the check)
        mult = [(lam.value * unscale, [L.value for L in Lams]) for lam, unscale, Lams in handles]
        return (max(float(a.value), 0.0), _psd(P), _psd(R), max(float(tau.value), 0.0), float(e.value), status,
                mult)

    if horizon is None:  # the floor: tau = 1, e minimal; then the smallest a at that e (the best bound for large T)
        first = values(_solve_sdp(cp.Problem(cp.Minimize(e), cons + [tau == 1]), rung))
        try:
            return values(_solve_sdp(cp.Problem(cp.Minimize(a), cons + [tau == 1, e <= first[4] + FLOOR_SLACK * max(
                1.0, abs(first[4]))]), rung))
        except PEPSolveError as err:  # the second stage only sharpens the bounds at finite T
            return first[:5] + (f"{first[5]} (the smallest a at that e failed: {err.cause})",) + first[6:]
    head = a / (2 * L)
    if horizon == 1:
        return values(_solve_sdp(cp.Problem(cp.Minimize(a * Delta), cons + [head == 1]), rung))
    # the sharper final step, its denominator divided by T - 1 fixed to 1 (tau ~ 1 whatever T: well scaled)
    sharp = cp.Problem(cp.Minimize(a * Delta / (horizon - 1) + e), cons + [tau + head / (horizon - 1) == 1])
    current = values(_solve_sdp(sharp, rung))
    if metric == "min" or horizon > ALTERNATION_HORIZON:
        return current
    y = cp.Parameter(horizon + 1, nonneg=True)  # the LP's weights of its constraints t = 0..T-1 and the plain sum
    later = cp.sum(y) - cp.cumsum(y)[:horizon]  # sum_{t > s} y_t
    weights = np.append(np.arange(horizon), horizon)
    problem = cp.Problem(cp.Minimize(a * Delta * cp.sum(y) + e * (weights @ y)),
                         cons + [head * y[:horizon] + tau * later >= 1])
    best = None
    for step in range(MAX_ALTERNATIONS):  # the LP's weights at the current certificate (a = 1), then the best for them
        scale = current[0] or 1.0
        bound, duals = average_bound(current[0] / scale, current[3] / scale, current[4] / scale, L, Delta, horizon,
                                     duals=True)
        if best is not None and not bound < best[0] * (1 - 1e-6):
            break
        best = (bound, current)
        duals = np.maximum(duals, 0.0)
        y.value = duals / max(float(duals.max()), 1e-300)  # weights of largest 1: well scaled whatever T
        try:
            current = values(_solve_sdp(problem, rung))
        except PEPSolveError as err:
            c = best[1]
            return c[:5] + (f"{c[5]} (alternation {step + 1} failed, the certificate before it kept: {err.cause})",
                            c[6])
    return best[1]


def _psd(M) -> list:
    """The value of a PSD variable shifted by its most negative eigenvalue (if any), as nested lists."""
    if M is None:
        return []
    V = np.atleast_2d(M.value)
    V = (V + V.T) / 2
    V = V + max(0.0, -float(np.linalg.eigvalsh(V).min())) * np.eye(len(V))
    return V.tolist()


def _dual_constraints(d, a, tau, e, P, R, scaled=False):
    """The one-round inequality's certificate for one mixing's data ``d`` (:func:`_matrices`): multipliers >= 0 of
    the inequalities, PSD ones of the LMIs and a PSD residual S, matching its left side minus e term by term.
    ``scaled``: the same identity equilibrated (the Gram matrix under the congruence D G D, D = 1/sqrt of each leaf's
    largest coefficient; each constraint divided by its largest coefficient; each function value's row by its
    largest): an equivalent SDP that a solver may find easier. Returns (constraints, (lambda, its unscaling, [the
    Lambdas])); the true multipliers are lambda.value * unscaling."""
    import cvxpy as cp

    n = d["a"][1].shape[0]
    pieces = [G for (_, G, _), _ in d["cons"]] + [G for _, (_, G, _) in d["P"] + d["R"]] + [d["a"][1], d["tau"][1]]
    pieces += [G for lmi in d["lmis"] for row in lmi for (_, G, _) in row]
    if scaled:
        big = np.max(np.abs(np.stack(pieces)), axis=(0, 2))
        D = np.where(big > 0, 1 / np.sqrt(np.where(big > 0, big, 1.0)), 1.0)
    else:
        D = np.ones(n)

    def cong(G):
        return D[:, None] * G * D[None, :]

    norms = np.array([max(np.abs(F).max(initial=0.0), np.abs(cong(G)).max(initial=0.0), abs(c)) or 1.0
                      for (F, G, c), _ in d["cons"]]) if scaled else np.ones(len(d["cons"]))
    lam = cp.Variable(len(d["cons"]))
    ineq = [k for k, (_, eq) in enumerate(d["cons"]) if not eq]
    cons = [lam[ineq] >= 0] if ineq else []
    AF = np.stack([F for (F, _, _), _ in d["cons"]], axis=1) / norms
    AG = np.stack([cong(G).ravel() for (_, G, _), _ in d["cons"]], axis=1) / norms
    b = np.array([c for (_, _, c), _ in d["cons"]]) / norms
    terms = [(a, d["a"]), (tau, d["tau"])]
    terms += [(P[j, k], piece) for (j, k), piece in d["P"]] + [(R[j, k], piece) for (j, k), piece in d["R"]]
    rows = np.max(np.abs(np.concatenate([AF] + [F[:, None] for _, (F, _, _) in terms], axis=1)), axis=1)
    rows = 1 / np.where(rows > 0, rows, 1.0) if scaled else np.ones(len(rows))
    dual_F, dual_G, dual_c = (rows[:, None] * AF) @ lam, cp.reshape(AG @ lam, (n, n), order="C"), b @ lam
    Lams = []
    for lmi in d["lmis"]:
        Lam = cp.Variable((len(lmi), len(lmi)), PSD=True)
        Lams.append(Lam)
        for p, row in enumerate(lmi):
            for q, (F, G, c) in enumerate(row):
                dual_F, dual_G, dual_c = (dual_F - Lam[p, q] * (rows * F), dual_G - Lam[p, q] * cong(G),
                                          dual_c - Lam[p, q] * c)
    obj_F = sum((v * (rows * F) for v, (F, _, _) in terms), start=0)
    obj_G = sum((v * cong(G) for v, (_, G, _) in terms), start=0)
    obj_c = sum((v * c for v, (_, _, c) in terms), start=0)
    S = cp.Variable((n, n), PSD=True)
    return cons + [obj_F == dual_F, obj_c - e == dual_c, S == dual_G - obj_G], (lam, 1 / norms, Lams)


def average_bound(a, tau, e, L, Delta, T, duals=False):
    """The largest (1/T) sum_{t<T} g_t that a certificate allows (g_t = ||grad f(p^t)||^2): the LP
    max (1/T) sum_t g_t  s.t.  (a/(2L)) g_t + tau sum_{s<t} g_s <= a Delta + t e (t < T: V_t >= a (f(p^t) - f*)
    >= a g_t/(2L) after t rounds), tau sum_{s<T} g_s <= a Delta + T e (V_T >= 0), g >= 0. With ``duals`` also its
    dual weights (one per constraint), which :func:`_sdp` uses as the normalization."""
    from scipy import sparse
    from scipy.optimize import linprog

    rows, cols, vals = [], [], []
    rows, cols, vals = list(range(T)), list(range(T)), [a / (2 * L)] * T  # g_0..g_{T-1}, then S_1..S_T (S_0 = 0)
    rows += list(range(1, T)) + [T]
    cols += list(range(T, 2 * T - 1)) + [2 * T - 1]
    vals += [tau] * T
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(T + 1, 2 * T))
    b = a * Delta + e * np.append(np.arange(T), T)
    eq_rows = list(range(T)) * 2 + list(range(1, T))  # S_{t+1} - S_t - g_t = 0
    eq_cols = list(range(T, 2 * T)) + list(range(T)) + list(range(T, 2 * T - 1))
    eq_vals = [1.0] * T + [-1.0] * T + [-1.0] * (T - 1)
    A_eq = sparse.csr_matrix((eq_vals, (eq_rows, eq_cols)), shape=(T, 2 * T))
    c = np.zeros(2 * T)
    c[-1] = -1.0 / T
    res = linprog(c, A_ub=A, b_ub=b, A_eq=A_eq, b_eq=np.zeros(T), bounds=(0, None), method="highs")
    if res.status == 3:  # a = 0 and tau = 0: the certificate bounds nothing
        return (math.inf, np.zeros(T + 1)) if duals else math.inf
    if res.status != 0:
        raise PEPSolveError(f"the bound's LP (scipy HiGHS) failed at T = {T} ({res.message})")
    return (-res.fun, -res.ineqlin.marginals) if duals else -res.fun


def _solve_sdp(problem, rung):
    """Solve the certificate SDP with one rung (solver, options, scaled) of :data:`LADDER`; the status, or
    PEPSolveError (one line) for any exception of the solver (a Rust panic of Clarabel included) or a status not
    accepted."""
    import warnings

    solver, options, _ = rung
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=solver, **options)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as err:  # cvxpy's SolverError, Clarabel's PanicException (a BaseException), ...
        raise PEPSolveError(f"{_rung_text(rung)} stopped with an error ({type(err).__name__}: "
                            f"{' '.join(str(err).split())[:200]})") from None
    if problem.status not in ACCEPTED_STATUSES:
        raise PEPSolveError(f"{_rung_text(rung)} ended with status {problem.status!r}")
    return problem.status


def _rung_text(rung) -> str:
    solver, options, scaled = rung
    return solver + "".join(f", {k} = {v:g}" for k, v in options.items() if k != "max_iters") + (
        ", equilibrated" if scaled else "")


def _setting(algorithm, m, K, eta, L, Delta, W, lam, spectral, time_varying, sigma_g, B, rho, Q, lam_pen, beta, alpha,
             T, solver):
    """Validate like ``worst_case`` (the same checks and messages) and return (setting, mixings): one mixing per
    distinct matrix of an explicit W or sequence, or the class."""
    from dfltheory.pep.problem import _check, _check_solver

    if T is not None and (isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1):
        raise ValueError(f"T must be an integer >= 1 (the horizon the certificate is optimised for) or None (the "
                         f"floor), got {T!r}")
    _check(algorithm, m, K, T or 1, eta, L, Delta, sigma_g, B, rho, Q, "fstar", "averages", lam_pen, beta, alpha)
    _check_solver(solver)
    if lam is not None:
        if spectral is not None:
            raise ValueError("give one of lam= (the class [-lam, lam]) and spectral=(lo, hi)")
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)) or not 0 <= lam < 1:
            raise ValueError(f"lam must be a number in [0, 1) (the class of every W with nonunit eigenvalues in "
                             f"[-lam, lam]), got {lam!r}")
        spectral = (-float(lam), float(lam))
    if program_of(algorithm).mixing == "push-sum" and W is not None:
        try:
            W = ExplicitMixing(W.matrices if isinstance(W, PushSumMixing) else W)
        except ValueError as err:
            raise ValueError(f"certify covers push-sum on a symmetric doubly stochastic W, where its weights stay 1 "
                             f"({' '.join(str(err).split())}); a column-stochastic P changes the weights every round: "
                             "use dfltheory pep (worst_case) for a given P") from None
    mixing = as_mixing(W, spectral, time_varying)
    if isinstance(mixing, ExplicitMixing):
        if mixing.m != m:
            raise ValueError(f"W is {mixing.m} x {mixing.m} but m = {m}; give an m x m matrix")
        mats = []
        for M in mixing.matrices:  # one one-round inequality per distinct matrix
            if not any(np.array_equal(M, N) for N in mats):
                mats.append(M)
        mixings = [ExplicitMixing(M) for M in mats]
    else:
        mixings = [mixing]
    check_size(algorithm, m, K, Q, isinstance(mixing, SpectralClass))
    setting = dict(algorithm=algorithm, m=m, K=K, eta=eta, L=L, Delta=Delta, sigma_g=sigma_g, B=B, rho=rho, Q=Q,
                   lam_pen=lam_pen, beta=beta, alpha=alpha, mixing=mixing.describe(), mixing_args=mixing.args())
    return setting, mixings


def check_size(algorithm: str, m: int, K: int, Q: int = 1, spectral: bool = False) -> None:
    """Refuse (ValueError) a one-round SDP whose Gram matrix would exceed ``problem.MAX_GRAM``: the state's points,
    every agent's queries (K local ones, the metric points p^t and p^{t+1}) and the class's new points."""
    from dfltheory.pep.problem import MAX_GRAM, count_text

    _, agent, common = POTENTIALS[algorithm]
    gram = len(agent) * m + len(common) + m * (K * ALGORITHMS[algorithm][0] + 2) + (Q * (m - 1) if spectral else 0)
    if gram > MAX_GRAM:
        raise ValueError(f"one-round SDP too large: Gram matrix {count_text(gram)} x {count_text(gram)} at m = "
                         f"{count_text(m)}, K = {count_text(K)} (limit {MAX_GRAM}); reduce m (--m or --n) or K")


def _mixings(setting):
    """The mixings of a certificate's setting (its ``mixing_args``), as :func:`_setting` builds them."""
    args = setting["mixing_args"]
    if "spectral" in args:
        return [as_mixing(None, args["spectral"], args.get("time_varying", False))]
    mats = np.asarray(args["W"], dtype=float)
    return [ExplicitMixing(M) for M in (mats[None] if mats.ndim == 2 else mats)]


def _check_value(setting, mixings, a, P, R, tau, solver):
    """The independent primal PEP: the largest left side of the one-round inequality at (a, P, R, tau) over every
    mixing (PEPit's SDP, its dual checked by ``problem._solve``); (value, status, seconds, accuracy), accuracy =
    |duality gap| + proof error of that solve (how far its value may be from the truth)."""
    from dfltheory.pep.problem import _solve

    start, values, statuses, accuracy = time.perf_counter(), [], [], []
    for mixing in mixings:
        problem, _ = _one_round(setting, mixing, (a, P, R, tau))
        r = _solve(problem, solver, Size(0, 0, 0, 0.0), {}, ACCEPTED_STATUSES)
        values.append(r.value)
        statuses.append(r.status)
        accuracy.append(abs(r.diagnostics["duality_gap"]) + r.diagnostics["proof_error"])
    worst = max(range(len(values)), key=values.__getitem__)
    return values[worst], statuses[worst], time.perf_counter() - start, accuracy[worst]


def verify_certificate(cert: Certificate, solver: str = "CLARABEL") -> dict:
    """Re-check ``cert`` by the independent primal PEP (module docstring): the largest left side of its one-round
    inequality, its e, and ``residual`` = value - e (<= 0 up to the solvers' accuracy for a valid certificate)."""
    s = cert.settings
    value, status, seconds, accuracy = _check_value(s, _mixings(s), cert.a, cert.P, cert.R, cert.tau, solver)
    return dict(value=value, e=cert.e, residual=value - cert.e, status=status, seconds=seconds, accuracy=accuracy)


def certify(algorithm: str, m: int, K: int, eta: float, L: float = 1.0, Delta: float = 1.0, *, W=None,
            lam: float | None = None, spectral=None, time_varying: bool = False, sigma_g: float | None = None,
            B: float | None = None, rho: float = 0.0, Q: int = 1, lam_pen: float | None = None,
            beta: float | None = None, alpha: float | None = None, T: int | None = None,
            solver: str = "CLARABEL") -> Certificate:
    """The best certificate of ``algorithm``'s potential family (:data:`POTENTIALS`) for the bound at ``T`` rounds,
    or for the floor as T -> infinity (``T=None``); see the module docstring. The setting is ``worst_case``'s
    (same names, same validation); mixing: ``W`` (a symmetric doubly stochastic matrix, or a sequence: the
    certificate then holds for every order of its matrices), ``lam`` (the class [-lam, lam]) or ``spectral=(lo,
    hi)``, with ``time_varying`` a new W of the class at each gossip step. The certificate is checked by an
    independent primal PEP (``check``); PEPSolveError if a solve fails or the check exceeds e by more than
    :data:`TOL_CHECK` (relative)."""
    name, model = algorithm, LIKE.get(algorithm, algorithm)  # a user's PEP model certifies the built-in one it names
    setting, mixings = _setting(model, m, K, eta, L, Delta, W, lam, spectral, time_varying, sigma_g, B, rho, Q,
                                lam_pen, beta, alpha, T, solver)
    setting["algorithm"] = name
    start = time.perf_counter()
    datas = [_matrices(*_one_round(setting, mixing)) for mixing in mixings]
    family, agent, common = POTENTIALS[name]
    ladder = LADDER if solver.upper() == "CLARABEL" else ((solver, {}, False), (solver, {}, True))
    failures, candidates = [], []
    for rung in ladder:
        if candidates and rung[0] == "SCS":  # SCS only where no rung verified: slow, and never more provable here
            break
        try:
            cert = _attempt(setting, mixings, datas, family, agent, common, T, rung, solver, start)
        except PEPSolveError as err:
            failures.append(f"{_rung_text(rung)}: {err.cause}")
            continue
        candidates.append(cert)
        if cert.check["proved"] and cert.check["weakening"] <= TOL_CHECK:
            break
        # not proved, or proved only with a weakening above TOL_CHECK: a later rung may do better
        failures.append(f"{_rung_text(rung)}: {cert.check['exact_check']}")
    found = min(candidates, key=lambda c: (not c.check["proved"], c.floor if T is None else c.bound(T)), default=None)
    if found is None:
        cause = _diagnosis(setting, mixings)
        raise PEPSolveError(f"no certificate of {name} ({family}) at {_where(setting, T)}: "
                            + (f"{cause}; " if cause else "") + "every rung of the retry ladder failed: "
                            + "; ".join(failures), cause or "; ".join(failures))
    return Certificate(**{**found.__dict__, "check": dict(found.check, ladder=failures)})


def _where(setting, T) -> str:
    return f"eta = {setting['eta']:g}, " + (f"T = {T}" if T is not None else "the floor (T -> inf)")


def _attempt(setting, mixings, datas, family, agent, common, T, rung, solver, start) -> Certificate:
    """One rung of the ladder: the SDP, the verifying primal PEP (relative tolerance :data:`TOL_CHECK`) and the
    exact rational check (:mod:`dfltheory.pep.exact`); PEPSolveError where the SDP or the verifying PEP fails."""
    from dfltheory.pep.exact import exact_certificate

    L, Delta, algorithm = setting["L"], setting["Delta"], setting["algorithm"]
    a0, P0, R0, tau0, e0, status, mult = _sdp(datas, len(agent), len(common), L, Delta, METRICS[algorithm], T, rung)
    if not a0 > 0:
        raise PEPSolveError(f"{_rung_text(rung)} gave a = 0 (no potential)")
    # homogeneous: reported (and checked, at a well-scaled size) with a = 1
    P, R, tau, e, a = (np.asarray(P0) / a0).tolist(), (np.asarray(R0) / a0).tolist(), tau0 / a0, e0 / a0, 1.0
    seconds = time.perf_counter() - start
    exact = exact_certificate(datas, a0, P0, R0, tau0, mult, e0, floor=TOL_CHECK_FLOOR * L * Delta)
    if exact["proved"]:  # the verifying PEP at the rational coefficients
        P, R, tau = ([[float(v) for v in row] for row in exact["P"]], [[float(v) for v in row] for row in exact["R"]],
                     float(exact["tau"]))
    claimed = float(exact["e"]) if exact["proved"] else e
    try:
        value, check_status, check_seconds, accuracy = _check_value(setting, mixings, a, P, R, tau, solver)
    except PEPSolveError as err:
        if not exact["proved"]:
            raise PEPSolveError(f"its verifying one-round PEP failed ({err.cause})") from None
        # the exact check is the proof; the verifying PEP's failure is recorded, its value missing
        value = check_status = accuracy = None
        check_seconds, check_error = 0.0, " ".join(err.cause.split())
    else:
        check_error = ""
        scale = max(abs(claimed), TOL_CHECK_FLOOR * L * Delta)
        if value - claimed > TOL_CHECK * scale + accuracy:
            raise PEPSolveError(f"the verifying one-round PEP at its coefficients reaches {value:.6g} > e = "
                                f"{claimed:.6g} (relative excess {(value - claimed) / scale:.2g} > {TOL_CHECK:g}, "
                                f"beyond its accuracy {accuracy:.1e}): " +
                                ("the exact check and the verifying PEP disagree" if exact["proved"] else
                                 "an inaccurate answer"))
    separate, separate_error = _separate(setting, P, tau, solver)
    if separate is not None and separate - claimed > TOL_CHECK * max(abs(claimed), TOL_CHECK_FLOOR * L * Delta) + (
            accuracy or 0.0):
        raise PEPSolveError(f"the separately written one-round PEP (dfltheory.pep.separate) reaches {separate:.6g} > "
                            f"e = {claimed:.6g}: the certificate does not hold on that model")
    check = dict(value=value, e_sdp=e, residual=None if value is None else value - e, accuracy=accuracy,
                 separate=separate, separate_error=separate_error,
                 status=check_status, seconds=check_seconds, check_error=check_error, proved=exact["proved"],
                 exact_check=exact["exact_check"], weakening=exact.get("weakening"), rung=_rung_text(rung))
    if exact["proved"]:  # the rational certificate, its e rounded up and tau down to floats
        e_q, tau_q = exact["e"], exact["tau"]
        e = float(e_q) if Fraction(float(e_q)) >= e_q else math.nextafter(float(e_q), math.inf)
        tau = float(tau_q) if Fraction(float(tau_q)) <= tau_q else math.nextafter(float(tau_q), 0.0)
        check.update(e_exact=f"{e_q.numerator}/{e_q.denominator}", residual=None if value is None else value - e)
    else:
        e = max(e, value)  # not proved (numerically verified only): the larger of the SDP's e and the verifying value
    return Certificate(algorithm=algorithm, potential=family, metric=METRICS[algorithm], a=a, tau=tau, e=e, P=P, R=R,
                       components={"agent": list(agent), "common": list(common)}, L=L, Delta=Delta, horizon=T,
                       status=status, seconds=seconds, check=check, settings=setting)


def _separate(setting, P, tau, solver):
    """The separately written one-round PEP (:mod:`dfltheory.pep.separate`) at the certificate's (c, tau): (its
    value, '') where it covers the setting, (None, why not) elsewhere or where its solve fails."""
    from dfltheory.pep.separate import COVERED as SEPARATE, one_round_max

    s, W = setting, setting["mixing_args"].get("W")
    if LIKE.get(s["algorithm"], s["algorithm"]) not in SEPARATE or W is None or np.asarray(W).ndim != 2 or s["rho"]:
        return None, "not covered (the consensus potential on one explicit W)"
    try:
        value = one_round_max(LIKE.get(s["algorithm"], s["algorithm"]), s["m"], s["K"], s["eta"], s["L"], W, s["Q"],
                              s["sigma_g"], s["B"], s["alpha"], float(P[0][0]), tau,
                              solver=solver if solver.upper() != "SCS" else "CLARABEL")
    except RuntimeError as err:
        return None, str(err)
    return value, "" if value is not None else "not covered (sigma_g = 0)"


def _diagnosis(setting, mixings) -> str:
    """The cause of a failure that the instance itself explains (``problem.diagnose_failure``), '' when none."""
    from dfltheory.pep.problem import diagnose_failure

    return diagnose_failure(setting)


def paper_bound(settings: dict, T: int) -> dict:
    """The bound at sigma_l = 0 of the theorem covering the algorithm (``compare``'s main reading; DFedCata A's at
    Xi = 0, the paper's claim) for the instance ``settings`` at T rounds: {theorem, bound (None if no theorem covers
    it or a condition fails), reason}."""
    from dfltheory.pep.compare import _one, main_reading, mixing_lambda, theorem_values
    from dfltheory.pep.problem import PEPResult

    s = dict(settings, T=T, metric=METRICS[settings["algorithm"]])
    tid = main_reading(s["algorithm"])
    result = PEPResult(math.inf, math.inf, "", "", 0.0, Size(0, 0, 0, 0.0), {}, s)  # the theorem reads the settings
    values, reason = theorem_values(result, mixing_lambda(s))
    row = _one(tid, values, reason, result)
    return dict(theorem=row["theorem"], bound=row["bound"], reason=row["reason"])


def certificate_table(algorithms=("dfedavg", "dpsgd-atc"), m: int = 2, K: int | None = None,
                      eta: float | None = None, T=(3, 5, 10, 20), worst_case_max_T: int = 10, max_seconds: float = 60.0,
                      **kw) -> list[dict]:
    """JSON-safe rows (algorithm, T, paper's bound, certificate's bound, fixed-T worst case, ratios) for the report.

    ``K`` defaults to 1 for D-PSGD (both orders) and SGP, else 2; ``eta`` to 1/(10 K L) (dfedsam.thm4.1's largest
    step); ``kw`` are :func:`certify`'s (mixing: ``W``, ``lam``, ``spectral``; sigma_g, B, lam_pen, ...). The
    certificate is optimised at each T; the worst case is solved where T <= ``worst_case_max_T`` and its expected
    time is at most ``max_seconds`` (else None, with the reason). A horizon whose certificate fails (every rung of
    the retry ladder) is a row with ``status`` 'failed', ``error`` (the causes) and ``command`` (the equivalent
    ``dfltheory certify``); a worst case that fails leaves the certificate's row with the cause and the
    ``dfltheory pep`` command in ``worst_case_reason``. Bad input still raises ValueError."""
    from dfltheory.pep.problem import estimate_size, worst_case

    from dfltheory.pep.command_line import equivalent_command

    rows = []
    L = kw.get("L", 1.0)
    for algorithm in algorithms:
        k = K if K is not None else (1 if LIKE.get(algorithm, algorithm) in DPSGD + ("sgp",) else 2)
        step = eta if eta is not None else 1 / (10 * k * L)
        for t in T:
            base = dict(algorithm=algorithm, m=m, K=k, eta=step, T=t)
            try:
                cert = certify(algorithm, m, k, step, T=t, **kw)
                bound = cert.bound(t)  # an average's LP may fail too
            except PEPSolveError as err:  # one case's failure is a row of its own, never the table's end
                rows.append(dict(base, status="failed", error=" ".join(str(err).split()),
                                 command=equivalent_command("certify", algorithm, m, k, t, step, **kw),
                                 certificate=None, worst_case=None, paper_bound=None, theorem=None))
                continue
            paper = paper_bound(cert.settings, t)
            row = dict(base, status="ok", mixing=cert.settings["mixing"],
                       potential=cert.potential, theorem=paper["theorem"], paper_bound=paper["bound"],
                       certificate=bound, a=cert.a, c=cert.c, tau=cert.tau, e=cert.e,
                       check_residual=cert.check["residual"], exact_check=cert.check["exact_check"],
                       ladder=cert.check["ladder"], rung=cert.check["rung"], separate_check=cert.check["separate"],
                       certificate_seconds=cert.seconds, worst_case=None,
                       worst_case_seconds=None, reason=paper["reason"] if paper["bound"] is None else "")
            mixing = cert.settings["mixing_args"]
            size = estimate_size(algorithm, m, k, t, kw.get("Q", 1), "spectral" in mixing, "averages",
                                 kw.get("sigma_g") is not None, kw.get("B") is not None,
                                 bool(mixing.get("time_varying")))
            if t > worst_case_max_T or size.expected_seconds > max_seconds:
                row["worst_case_reason"] = (f"not solved: T > {worst_case_max_T}" if t > worst_case_max_T else
                                            f"not solved: expected ~{size.expected_seconds:.0f} s > {max_seconds:g} s")
            else:
                options = {k2: v for k2, v in kw.items() if k2 not in ("W", "lam", "spectral", "time_varying",
                                                                      "solver")}
                try:
                    wc = worst_case(algorithm, m, k, t, step, **options, **mixing)
                    row.update(worst_case=wc.value, worst_case_seconds=wc.seconds)
                except PEPSolveError as err:  # the certificate stands; the comparison is missing, with the cause
                    row["worst_case_reason"] = (f"the fixed-T worst case failed ({' '.join(err.cause.split())}): "
                                                + equivalent_command("pep", algorithm, m, k, t, step, **options,
                                                                     **mixing))
            worst = row["worst_case"]
            row["certificate_over_worst_case"] = bound / worst if worst else None
            row["paper_over_worst_case"] = paper["bound"] / worst if worst and paper["bound"] is not None else None
            row["paper_over_certificate"] = paper["bound"] / bound if paper["bound"] is not None else None
            row["below_worst_case"] = bool(worst is not None and bound < worst * (1 - TOL_CHECK))
            rows.append(row)
    return rows


def tune_eta(objective, eta_max: float, grid: int = 8, rtol: float = 1e-3, refine: int = 3) -> dict:
    """The step in (0, eta_max] minimising ``objective(eta)`` (a worst case or a certificate's bound): a grid
    eta_max j/grid, j = 1..grid; where a solved grid point neighbours a failed one, ``refine`` bisections toward the
    failure (the best step may lie where a solver gave up); then a golden-section search between the best solved
    point's neighbours until the bracket is below ``rtol`` eta_max. An evaluation that fails (PEPSolveError,
    ValueError) is recorded with its reason and never chosen. Returns {eta, value, curve: [(eta, value, reason)]
    sorted by eta, failed: how many evaluations failed}; PEPSolveError when every evaluation failed."""
    if isinstance(eta_max, bool) or not isinstance(eta_max, (int, float, np.integer, np.floating)) or not (
            math.isfinite(eta_max) and eta_max > 0):
        raise ValueError(f"eta_max must be a finite number > 0 (the largest step searched), got {eta_max!r}")
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 2:
        raise ValueError(f"grid must be an integer >= 2 (grid points of the search), got {grid!r}")
    curve = {}

    def value(eta):
        if eta not in curve:
            try:
                v = float(objective(eta))
                curve[eta] = (v, "") if math.isfinite(v) else (math.inf, f"the objective is {v} (not a bound)")
            except (PEPSolveError, ValueError) as err:
                curve[eta] = (math.inf, " ".join(str(err).split()))
        return curve[eta][0]

    def solved(eta):
        return math.isfinite(value(eta))

    points = [eta_max * j / grid for j in range(1, grid + 1)]
    for p in points:
        value(p)
    for left, right in zip(points, points[1:]):  # a solved point beside a failed one: bisect toward the failure
        if solved(left) != solved(right):
            good, bad = (left, right) if solved(left) else (right, left)
            for _ in range(refine):
                mid = (good + bad) / 2
                good, bad = (mid, bad) if solved(mid) else (good, mid)
    if not any(math.isfinite(v) for v, _ in curve.values()):
        reasons = sorted({why for _, why in curve.values()})
        raise PEPSolveError(f"every one of the {len(curve)} evaluations in (0, {eta_max:g}] failed: "
                            + "; ".join(reasons[:3]) + (f" (and {len(reasons) - 3} more causes)" if len(reasons) > 3
                                                        else ""), "; ".join(reasons[:3]))
    known = sorted(curve)
    j = min(range(len(known)), key=lambda i: curve[known[i]][0])
    lo = known[j - 1] if j else known[0] / 2
    hi = known[j + 1] if j + 1 < len(known) else known[j]
    ratio = (math.sqrt(5) - 1) / 2
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    while hi - lo > rtol * eta_max:
        if value(x1) <= value(x2):
            hi, x2 = x2, x1
            x1 = hi - ratio * (hi - lo)
        else:
            lo, x1 = x1, x2
            x2 = lo + ratio * (hi - lo)
    eta = min((k for k in curve if math.isfinite(curve[k][0])), key=lambda k: curve[k][0])
    return dict(eta=eta, value=curve[eta][0], curve=[(k, v, why) for k, (v, why) in sorted(curve.items())],
                failed=sum(not math.isfinite(v) for v, _ in curve.values()))


def tune(algorithm: str, m: int, K: int, eta_max: float, T: int | None, by: str = "worst_case", grid: int = 8,
         **kw) -> dict:
    """The step minimising the fixed-T worst case at ``T`` (``by='worst_case'``, ``kw`` of ``worst_case``) or the
    certificate's bound at ``T`` (``'certificate'``; its floor with T = None; ``kw`` of :func:`certify`) over
    (0, eta_max] (:func:`tune_eta`: failed evaluations listed, never chosen; ``failed`` counts them), with the
    theorem's bound along the curve (at T, or at :data:`THEOREM_HORIZON` for the floor), whether the chosen step meets
    the theorem's conditions (``inside_theorem``; else ``outside_reason``), the largest step the theorem admits
    (bisection on its conditions, which must hold on an interval of steps) and the objective there."""
    from dfltheory.pep.problem import worst_case

    if by not in ("worst_case", "certificate"):
        raise ValueError(f"by must be 'worst_case' or 'certificate', got {by!r}")
    if by == "worst_case" and T is None:
        raise ValueError("tuning by the worst case needs T (the horizon of the fixed-T PEP)")
    from dfltheory.pep.problem import MAX_SCALE

    L = kw.get("L", 1.0)
    if isinstance(eta_max, (int, float, np.integer, np.floating)) and not isinstance(eta_max, bool) and math.isfinite(
            eta_max) and isinstance(L, (int, float)) and eta_max * L > MAX_SCALE:
        raise ValueError(f"eta_max = {eta_max:g} (the largest step searched, --eta) makes eta L = {eta_max * L:.3g} "
                         f"exceed {MAX_SCALE:g}, above which every step is refused as bad input; use "
                         f"eta_max <= {MAX_SCALE / L:g} (every theorem asks eta L < 1)")
    settings = {}

    def objective(eta):
        if by == "worst_case":
            r = worst_case(algorithm, m, K, T, eta, **kw)
            settings[eta] = r.settings
            return r.value
        cert = certify(algorithm, m, K, eta, T=T, **kw)
        settings[eta] = cert.settings
        return cert.floor if T is None else cert.bound(T)

    out = tune_eta(objective, eta_max, grid)
    horizon = T if T is not None else THEOREM_HORIZON
    rows = []
    for eta, value, reason in out["curve"]:
        paper = paper_bound(settings[eta], horizon) if eta in settings else dict(bound=None, reason=reason)
        rows.append(dict(eta=eta, value=value, theorem_bound=paper["bound"], reason=reason or paper["reason"]))
    base = next(iter(settings.values()), None)

    def admits(eta):  # the theorem's conditions hold at this step (its formula is a bound)
        return paper_bound(dict(base, eta=eta), horizon)["bound"] is not None

    admitted = [r["eta"] for r in rows if r["theorem_bound"] is not None]
    lo = admitted[-1] if admitted else None
    if base is not None and lo is None:  # below the curve's first step: halve until the conditions hold
        lo = next((rows[0]["eta"] / 2 ** j for j in range(1, 41) if admits(rows[0]["eta"] / 2 ** j)), None)
    theorem_eta = theorem_value = None
    theorem_value_reason = ""
    if lo is not None:  # the theorem's largest step: bisection on its conditions up to the next step tried
        hi = min([r["eta"] for r in rows if r["eta"] > lo] + [2 * lo if not admitted else lo])
        while hi - lo > 1e-9 * hi:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if admits(mid) else (lo, mid)
        theorem_eta = lo
        try:
            theorem_value = float(objective(lo))
        except (PEPSolveError, ValueError) as err:
            theorem_value, theorem_value_reason = None, " ".join(str(err).split())
    best_paper = paper_bound(dict(base, eta=out["eta"]), horizon) if base is not None else dict(bound=None, reason="")
    return dict(algorithm=algorithm, by=by, T=T, eta=out["eta"], value=out["value"], curve=rows,
                failed=out["failed"], evaluations=len(rows),
                inside_theorem=best_paper["bound"] is not None, outside_reason=best_paper["reason"] if
                best_paper["bound"] is None else "",
                theorem=paper_bound(base, horizon)["theorem"] if base is not None else None,
                theorem_T=horizon, theorem_max_eta=theorem_eta, value_at_theorem_max_eta=theorem_value,
                value_at_theorem_max_eta_reason=theorem_value_reason)

