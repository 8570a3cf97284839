"""A separately written one-round primal PEP: the independent check of a certificate (issue 32).

The certificate SDP and its verifying PEP are both assembled from one model (``certify._one_round``: PEPit's points,
``program_pep._gossip``, ``problem._oracle``). This module writes the one-round problem again, by hand, in cvxpy: a Gram
matrix over the leaf vectors (the round-start models x_1..x_m and every gradient the round queries), one scalar per
function value, the interpolation conditions of L-smooth functions (Taylor, Hendrickx, Glineur 2017, Thm 3.10:
f_j >= f_k - L/4 ||x_j - x_k||^2 + 1/2 <g_j + g_k, x_j - x_k> + 1/(4L) ||g_j - g_k||^2 for each pair of f_i's
points), sigma_g at the two metric points, B at every queried point, and the algorithm's round written out:

    y_i <- x_i;  K times: g = grad f_i(y_i) (push-sum with momentum: v = g, then v = alpha v + g; g = v);
    y_i <- y_i - eta g;   x_i^+ = sum_j (W^Q)_ij y_j;   p = x_bar, p^+ = x_bar^+,

or, for D-PSGD in Lian et al. 2017's order (``dpsgd``), x_i^+ = sum_j W_ij x_j - eta grad f_i(x_i),

and maximises a (f(p^+) - f(p)) + c [(1/m) ||X^+ - 1 x_bar^+||^2 - (1/m) ||X - 1 x_bar||^2] + tau ||grad f(p)||^2
(f = the mean of the f_i). A valid certificate has this maximum <= e. Covered: the consensus potential on an
explicit W (D-PSGD in both orders, DFedAvg, DFedAvg-MGS, SGP, DFedSGPM; sigma_g > 0 or None, rho = 0); the other
families return None (not covered).
"""
from __future__ import annotations

import numpy as np

__all__ = ["COVERED", "one_round_max"]

COVERED = ("dpsgd", "dpsgd-atc", "dfedavg", "dfedavg-mgs", "sgp", "dfedsgpm")


def one_round_max(algorithm: str, m: int, K: int, eta: float, L: float, W, Q: int, sigma_g, B, alpha, c: float,
                  tau: float, a: float = 1.0, solver: str = "CLARABEL") -> float | None:
    """The largest left side of the one-round inequality (module docstring) at (a, c, tau), or None where this
    model does not cover the setting. Raises RuntimeError when the solver fails (never a number then)."""
    import cvxpy as cp

    if algorithm not in COVERED or W is None or (sigma_g is not None and sigma_g == 0):
        return None
    W = np.asarray(W, dtype=float)
    if W.ndim != 2:
        return None
    WQ = np.linalg.matrix_power(W, Q)
    leaves = [m]  # a one-element list: the number of leaves so far (positions first)
    grads = []  # (agent, point, gradient, value index) of every query: points and gradients as coefficient vectors
    positions = [np.eye(1, m, i).ravel() for i in range(m)]

    def query(i, point):
        g = ("leaf", leaves[0])
        leaves[0] += 1
        grads.append((i, point, g, len(grads)))
        return grads[-1]

    def local(i):
        y, v = ("pos", positions[i]), None
        for _ in range(K):
            _, _, g, _ = query(i, y)
            step = ("grad", g)
            if algorithm in ("dfedsgpm",) and alpha:
                v = [step] if v is None else [("scaled", alpha, v), step]
                step = ("sum", v)
            y = ("minus", y, eta, step)
        return y

    mean0 = ("avg", [("pos", positions[i]) for i in range(m)])
    if algorithm == "dpsgd":  # Lian et al.: the unmixed models gossiped, each minus eta times its own gradient there
        starts = [("pos", positions[i]) for i in range(m)]
        grads_at = [query(i, starts[i])[2] for i in range(m)]
        mixed = [("minus", ("avg_w", WQ[i], starts), eta, ("grad", grads_at[i])) for i in range(m)]
    else:
        ends = [local(i) for i in range(m)]
        mixed = [("avg_w", WQ[i], ends) for i in range(m)]
    mean1 = ("avg", mixed)
    sites = [[query(i, p) for i in range(m)] for p in (mean0, mean1)]
    n = leaves[0]

    def coef(e):  # the coefficient vector (length n) of a symbolic point
        kind = e[0]
        if kind == "pos":
            return np.concatenate([e[1], np.zeros(n - m)])
        if kind == "leaf":
            out = np.zeros(n)
            out[e[1]] = 1.0
            return out
        if kind == "grad":
            return coef(e[1])
        if kind == "scaled":
            return e[1] * sum(coef(t) for t in e[2])
        if kind == "sum":
            return sum(coef(t) for t in e[1])
        if kind == "minus":
            return coef(e[1]) - e[2] * coef(e[3])
        if kind == "avg":
            return sum(coef(t) for t in e[1]) / len(e[1])
        if kind == "avg_w":
            return sum(w * coef(t) for w, t in zip(e[1], e[2]))
        raise AssertionError(kind)

    G = cp.Variable((n, n), PSD=True)
    f = cp.Variable(len(grads))

    def inner(u, v):
        return cp.sum(cp.multiply(G, np.outer(u, v)))

    def sq(u):
        return inner(u, u)

    cons = []
    pts = [(i, coef(p), coef(g)) for i, p, g, _ in grads]
    for i in range(m):
        own = [k for k, (j, _, _) in enumerate(pts) if j == i]
        for j in own:
            for k in own:
                if j == k:
                    continue
                (_, xj, gj), (_, xk, gk) = pts[j], pts[k]
                cons.append(f[j] - f[k] >= -L / 4 * sq(xj - xk) + 0.5 * inner(gj + gk, xj - xk)
                            + 1 / (4 * L) * sq(gj - gk))
    site_idx = [[q[3] for q in site] for site in sites]
    if sigma_g is not None:
        for idx in site_idx:
            gbar = sum(pts[k][2] for k in idx) / m
            cons.append(sum(sq(pts[k][2] - gbar) for k in idx) / m <= sigma_g ** 2)
    if B is not None:
        for _, _, g in pts:
            cons.append(sq(g) <= B ** 2)
    f0 = sum(f[k] for k in site_idx[0]) / m
    f1 = sum(f[k] for k in site_idx[1]) / m
    g0 = sum(pts[k][2] for k in site_idx[0]) / m
    X0, X1 = [coef(("pos", positions[i])) for i in range(m)], [coef(p) for p in mixed]
    xb0, xb1 = coef(mean0), coef(mean1)
    spread = (sum(sq(x - xb1) for x in X1) - sum(sq(x - xb0) for x in X0)) / m
    problem = cp.Problem(cp.Maximize(a * (f1 - f0) + c * spread + tau * sq(g0)), cons)
    import warnings

    try:
        with warnings.catch_warnings():  # "Solution may be inaccurate": the status decides
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=solver)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as err:  # a solver error or panic: no number
        raise RuntimeError(f"the separate one-round PEP failed in {solver} ({type(err).__name__})") from None
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"the separate one-round PEP ended with status {problem.status!r}")
    return float(problem.value)
