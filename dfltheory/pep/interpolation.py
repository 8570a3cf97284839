"""The worst-case example behind a PEP value, and an independent check that it is a genuine instance (issue 14 §3).

After a solve PEPit factors the Gram matrix, G = M^T M, so every point and gradient gets a vector of R^r (r the
Gram order) and every function value a number. :func:`extract` reads them: for each agent i the triples
(x, grad f_i(x), f_i(x)) at every point where f_i was queried, the metric points and f*. :func:`check` then verifies,
in numpy and without PEPit's constraint objects:

* **interpolation** (Rotaru, Glineur & Patrinos 2022, Theorem 3.10; PEPit's SmoothFunction): the triples of f_i are
  those of an L-smooth function iff for every pair (a, b) of them
      f_a - f_b >= -(L/4)||x_a - x_b||^2 + (1/2)<g_a + g_b, x_a - x_b> + (1/(4L))||g_a - g_b||^2;
* the **quantity** recomputed from the vectors (min or average over t of ||(1/m) sum_i grad f_i(p^t)||^2) equals
  the primal PEP value (what the example attains; the certified dual value is within the duality-gap tolerance),
  and the **assumptions at the points**: f(x^0) - f* <= Delta, f(p^t) - f* >= ||grad f(p^t)||^2/(2L), sigma_g at
  the metric points, ||grad f_i|| <= B at every queried point.

Each violation is relative to max(1, the magnitude of the terms). A candidate counter-example passes
(``interpolable``) when every violation is below ``tol``: then L-smooth functions through the extracted data exist
(the interpolant of Theorem 3.10) and realize the PEP value on the algorithm's own iterates (the points are the
algorithm's linear combinations by construction). For the spectral class, :func:`realize_mixing` also asks whether
one W of the class, acting as W kron I, produces every consensus step of the example (a small SDP over W; with and
without W >= 0; for the time-varying class one W per step): ``realizable_mixing``. The class's optimum is not
unique, so a non-realizable example does not prove a relaxation gap. What this does not verify: that the interpolant
keeps f >= f* and sigma_g, B between the points (the PEP imposes them at the points only). Those remain the caveats
of a finding (docs/pep.md).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["TOL", "extract", "check"]

#: Largest relative violation accepted: the primal tolerance of a solve (problem.TOL_PRIMAL; residuals are often
#: ~1e-9, ~1e-7 on Clarabel's 'optimal_inaccurate' stops).
TOL = 1e-5


def extract(functions, averages, fstar, consensus=(), spectral=None, varying=False) -> dict:
    """Numbers of the solved PEP: ``functions`` the PEPit functions f_1..f_m, ``averages`` the build's list of
    (metric point, [grad f_i], grad f, f) per round, ``fstar`` the f* leaf (None for gap='last'), ``consensus`` the
    spectral class's (input deviations, output deviations) per step, ``spectral`` its (lo, hi) and ``varying``
    whether each step may have its own W (the time-varying class)."""
    per_function = []
    for f in functions:
        triples = list(f.list_of_points)
        per_function.append({"x": np.array([p.eval() for p, _, _ in triples]),
                             "g": np.array([g.eval() for _, g, _ in triples]),
                             "f": np.array([float(v.eval()) for _, _, v in triples])})
    metric = [{"grad": np.asarray(gbar.eval()), "f": float(fbar.eval()),
               "grads": np.array([g.eval() for g in gs])} for _, gs, gbar, fbar in averages]
    out = {"functions": per_function, "metric": metric, "fstar": None if fstar is None else float(fstar.eval())}
    if consensus:
        out["consensus"] = {"X": np.array([[p.eval() for p in X] for X, _ in consensus]),
                            "Y": np.array([[p.eval() for p in Y] for _, Y in consensus]), "range": spectral,
                            "varying": bool(varying)}
    return out


def realize_mixing(X: np.ndarray, Y: np.ndarray, lo: float, hi: float, nonnegative: bool = False) -> float:
    """Smallest relative residual sum_s ||Y_s - M X_s||^2 / sum_s ||Y_s||^2 over M = W - 11^T/m, W symmetric with
    W 1 = 1 and its other eigenvalues in [lo, hi] (entries of W >= 0 with ``nonnegative``): 0 when one W of the
    spectral class (W kron I) produces every consensus step of the example. X, Y: (steps, m, r) deviations."""
    import cvxpy as cp

    S, m, _ = X.shape
    J = np.ones((m, m)) / m
    M = cp.Variable((m, m), symmetric=True)
    cons = [M @ np.ones(m) == 0, M - lo * (np.eye(m) - J) >> 0, hi * (np.eye(m) - J) - M >> 0]
    if nonnegative:
        cons.append(M + J >= 0)
    residual = sum(cp.sum_squares(Y[s] - M @ X[s]) for s in range(S))
    problem = cp.Problem(cp.Minimize(residual), cons)
    with warnings.catch_warnings():  # cvxpy's "Solution may be inaccurate": the residual returned is what counts
        warnings.simplefilter("ignore", UserWarning)
        try:
            problem.solve(solver="CLARABEL")
        except cp.error.SolverError:  # no W found: the example stays unrealized (inf), the worst case stands
            return float("inf")
    if problem.status not in ("optimal", "optimal_inaccurate"):
        return float("inf")
    return float(problem.value) / max(float(np.sum(Y * Y)), 1e-12)


def _smoothness_violation(x, g, f, L) -> float:
    """Largest relative violation of the L-smooth interpolation inequality over all ordered pairs."""
    dx = x[:, None, :] - x[None, :, :]
    dg = g[:, None, :] - g[None, :, :]
    sg = g[:, None, :] + g[None, :, :]
    lhs = f[:, None] - f[None, :]
    rhs = -(L / 4) * np.sum(dx * dx, -1) + 0.5 * np.sum(sg * dx, -1) + np.sum(dg * dg, -1) / (4 * L)
    scale = np.maximum(1.0, np.abs(lhs) + (L / 4) * np.sum(dx * dx, -1) + np.abs(0.5 * np.sum(sg * dx, -1))
                       + np.sum(dg * dg, -1) / (4 * L))
    return float(np.max(np.maximum(rhs - lhs, 0.0) / scale, initial=0.0))


def check(example: dict, *, L: float, Delta: float, value: float | None, metric: str, sigma_g: float | None = None,
          B: float | None = None, gap: str = "fstar", tol: float = TOL) -> dict:
    """Violations of interpolation, of the quantity (skipped when ``value`` is None: an objective that is not the
    quantity alone) and of the assumptions at the points; ``interpolable`` is True when every one is below ``tol``."""
    smooth = max(_smoothness_violation(d["x"], d["g"], d["f"], L) for d in example["functions"])
    norms = [float(np.sum(p["grad"] ** 2)) for p in example["metric"]]
    recomputed = min(norms) if metric == "min" else float(np.mean(norms))
    out = {"smoothness": smooth, "recomputed": recomputed,
           "points": int(sum(len(d["f"]) for d in example["functions"]))}
    if value is not None:
        out["quantity"] = abs(recomputed - value) / max(1.0, abs(value))
    f0 = example["metric"][0]["f"]
    if gap == "fstar":
        fstar = example["fstar"]
        out["gap"] = max([max(0.0, f0 - fstar - Delta) / max(1.0, Delta)] +
                         [max(0.0, fstar - p["f"] + n / (2 * L)) / max(1.0, abs(p["f"]))
                          for p, n in zip(example["metric"], norms)])
    else:
        out["gap"] = max(0.0, f0 - example["metric"][-1]["f"] - Delta) / max(1.0, Delta)
    if sigma_g is not None:
        het = [float(np.mean(np.sum((p["grads"] - p["grad"]) ** 2, -1))) for p in example["metric"]]
        out["sigma_g"] = max(0.0, max(het) - sigma_g ** 2) / max(1.0, sigma_g ** 2)
    if B is not None:
        top = max(float(np.max(np.sum(d["g"] ** 2, -1))) for d in example["functions"])
        out["B"] = max(0.0, top - B ** 2) / max(1.0, B ** 2)
    if "consensus" in example:  # the spectral class: does one W of the class (W kron I) realize the steps?
        c = example["consensus"]
        steps = [slice(s, s + 1) for s in range(len(c["X"]))] if c.get("varying") else [slice(None)]
        for key, nonnegative in (("mixing", False), ("mixing_nonnegative", True)):  # time-varying: a W per step
            out[key] = max(realize_mixing(c["X"][k], c["Y"][k], *c["range"], nonnegative=nonnegative) for k in steps)
    out["interpolable"] = all(v <= tol for k, v in out.items()
                              if k not in ("recomputed", "points", "mixing", "mixing_nonnegative"))
    out["realizable_mixing"] = out.get("mixing", 0.0) <= tol
    out["tol"] = tol
    return out
