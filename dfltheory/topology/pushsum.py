"""Constants of push-sum over a (time-varying) directed network: D, B, Delta, a, delta, C and q.

Definitions (cards dfedsgpsm.md §5 and dfedpgp.md §5; the matrices P(t) are column-stochastic, P[v, u] > 0 when
u sends to v, self-loops included):

* D      largest number of non-zeros in a column of any P(t) (out-degree + 1; seed 000 Lemma 4 "|N^out_max|", L361;
         with uniform push weights every positive entry is >= 1/D, as in Assran et al. 2019, Assumption 3).
* a      smallest positive entry of any P(t) (the constant "a < 1" of seed 000 Remark 1, L146, read as a weight floor).
* B      smallest window such that the union graph of every window of B consecutive rounds is strongly connected:
         sliding windows [l, l+B-1] for every l (seed 003 Assumption 1, L106) or disjoint blocks [lB, (l+1)B - 1]
         (Assran et al.'s form). On a finite sequence the check covers the windows inside the horizon; inf if none.
* Delta  largest directed diameter of the union graph of a window of B rounds (seed 003 Remark 2, L159).
* delta  inf_t min_i [P(t-1)...P(0) 1]_i: the minimum row sum of the products = minimum push-sum weight
         (seed 000 L136, seed 003 L140, both pointing to Taheri et al. 2020, Prop. 2.1); <= 1, = 1 iff all w = 1.
* theory q, C in three forms, each with ``vacuous`` and its reason:
  - 'sgp'   (Assran et al. 2019, Lemma 3, as quoted by seed 003 L525-527 with K_u = 0): E = Delta*B,
            lambda = 1 - n D^(-E), q = lambda^(1/(E+1)), C < 2 sqrt(d) D^E / lambda^((E+2)/(E+1)).
  - 'pgp'   seed 003's own form, E = (K_u + 1) Delta B (seed 003 L525-527, verbatim in the seed).
  - 'remark1' seed 000 Remark 1 (L146): q = (1 - a^(Delta B))^(1/(Delta B + 1)), a = the weight floor above.
  - 'nedic-olshevsky' Nedic & Olshevsky 2015 Lemma 1 as the card recalls it (dfedsgpsm.md §5.3, CITED-MEMORY):
            C = 4, q = (1 - n^(-nB))^(1/(nB)), the rate of |[P(t:s)]_ij - phi_i(t)| (the "Taheri" pointer).
  Vacuous when the lemma gives no usable rate: n D^(-E) >= 1 (lambda <= 0: the lemma says nothing), B or Delta
  infinite, or q = 1 as a double (1 - q < 2^-54 ~ 5.6e-17: C q^t = C for every t in floating point, and q^t halves
  only every ln 2/(1 - q) > 10^16 rounds). 1 - q itself is kept exactly (log space) in ``one_minus_q``.
* measured over the horizon (dfedpgp.md §5.9): e(t) = max_i sum_j |Phi(t,0)_ij / w_i^t - 1/n| with
  Phi(t,0) = P(t-1)...P(0) and w^t = Phi(t,0) 1; q_measured = exp(slope) of a least-squares fit of log e(t) on the
  second half of the points above 1e-12 (the first point below enters clamped at 1e-12, so exact consensus reads as
  a fast rate), C_measured = max_t e(t)/q_measured^t.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, shortest_path

INF = float("inf")


def _dense_patterns(mats) -> np.ndarray:
    """Boolean (T, n, n) array: pattern[t, v, u] = P(t)[v, u] > 0, u != v."""
    pats = np.stack([(m.toarray() if sp.issparse(m) else np.asarray(m)) > 0 for m in mats])
    idx = np.arange(pats.shape[1])
    pats[:, idx, idx] = False
    return pats


def check_sequence(mats, atol: float = 1e-9) -> list:
    """Validate a non-empty sequence of column-stochastic n x n matrices (raises ValueError naming the problem)."""
    mats = list(mats)
    if not mats:
        raise ValueError("the matrix sequence is empty; pass at least one round")
    n = mats[0].shape[0]
    for t, m in enumerate(mats):
        a = m.toarray() if sp.issparse(m) else np.asarray(m, dtype=float)
        if a.ndim != 2 or a.shape != (n, n):
            raise ValueError(f"round {t}: expected an {n} x {n} matrix, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"round {t}: the matrix has NaN or infinite entries")
        if a.min() < 0:
            raise ValueError(f"round {t}: negative entry {a.min():.3g}; push-sum weights must be >= 0")
        err = float(np.abs(a.sum(axis=0) - 1).max())
        if err > atol:
            raise ValueError(f"round {t}: not column-stochastic (max |column sum - 1| = {err:.3g}); push-sum needs "
                             "column sums 1 (weight rule 'push-sum')")
    return mats


def max_column_nnz(mats) -> int:
    """D: the largest number of non-zero entries in a column of any P(t)."""
    return int(max(int(((m.toarray() if sp.issparse(m) else np.asarray(m)) > 0).sum(axis=0).max()) for m in mats))


def min_positive_weight(mats) -> float:
    """a: the smallest positive entry of any P(t)."""
    out = INF
    for m in mats:
        a = m.toarray() if sp.issparse(m) else np.asarray(m)
        out = min(out, float(a[a > 0].min()))
    return out


def strongly_connected(pattern) -> bool:
    """pattern[v, u] = True for an edge u -> v."""
    return connected_components(sp.csr_array(pattern), directed=True, connection="strong")[0] == 1


def diameter(pattern) -> float:
    """Directed diameter (max over ordered pairs of the hop distance); inf when not strongly connected."""
    d = shortest_path(sp.csr_array(pattern), directed=True, unweighted=True)
    return float(d.max())


def window_B(mats, mode: str = "sliding") -> float:
    """Smallest B such that every window of B rounds (sliding or disjoint blocks) has a strongly connected union."""
    if mode not in ("sliding", "disjoint"):
        raise ValueError(f"mode must be 'sliding' or 'disjoint', got {mode!r}")
    pats = _dense_patterns(mats)
    T = pats.shape[0]
    union = pats.copy()  # union[l] = union of rounds l .. l+b-1 (b = current window)
    for b in range(1, T + 1):
        if b > 1:
            union = union[: T - b + 1] | pats[b - 1:]
        starts = range(0, T - b + 1) if mode == "sliding" else range(0, (T // b) * b, b)
        if all(strongly_connected(union[l]) for l in starts):
            return b
    return INF


def window_diameter(mats, B, mode: str = "sliding") -> float:
    """Delta: the largest diameter of the union graph over the windows of B rounds (inf if B is inf)."""
    if not math.isfinite(B):
        return INF
    B = int(B)
    pats = _dense_patterns(mats)
    T = pats.shape[0]
    starts = range(0, T - B + 1) if mode == "sliding" else range(0, (T // B) * B, B)
    return max(diameter(pats[l:l + B].any(axis=0)) for l in starts)


def _form(E: float, log_x: float, d: float, D: float, name: str) -> dict:
    """q = (1 - x)^(1/(E+1)) and C = 2 sqrt(d) D^E / (1 - x)^((E+2)/(E+1)), x = exp(log_x), in log space."""
    out = {"form": name, "E": E, "lambda": None, "q": INF, "one_minus_q": 0.0, "log10_one_minus_q": -INF,
           "C": INF, "log10_C": INF, "vacuous": True, "reason": ""}
    if not math.isfinite(E):
        out["reason"] = "B or Delta is infinite (no bounded strong connectivity)"
        return out
    if log_x >= 0:
        out["lambda"] = 1 - math.exp(log_x) if log_x < 700 else -INF
        out["reason"] = f"n D^(-E) = exp({log_x:.3g}) >= 1, so lambda = 1 - n D^(-E) <= 0 and the lemma is void"
        return out
    x = math.exp(log_x)
    l1p = math.log1p(-x)
    log_q = l1p / (E + 1)
    omq = -math.expm1(log_q)
    log10_omq = math.log10(omq) if omq > 0 else (log_x - math.log(E + 1)) / math.log(10)
    log_C = math.log(2) + 0.5 * math.log(d) + E * math.log(D) - (E + 2) / (E + 1) * l1p if D else 0.0
    out.update({"lambda": 1 - x, "q": math.exp(log_q), "one_minus_q": omq, "log10_one_minus_q": log10_omq,
                "C": math.exp(log_C) if log_C < 700 else INF, "log10_C": log_C / math.log(10)})
    if out["q"] == 1.0:  # 1 - q < 2^-54: no usable rate (seen by any floating-point use of q)
        log_neg_log_q = (math.log(-l1p) if l1p < 0 else log_x) - math.log(E + 1)  # ln(-ln q), exact in logs
        out["reason"] = (f"1 - q = 10^{log10_omq:.3g} < 2^-54, so q = 1 as a double (C q^t = C for every t in "
                         f"floating point) and q^t halves only every "
                         f"10^{(math.log(math.log(2)) - log_neg_log_q) / math.log(10):.3g} rounds")
    else:
        out["vacuous"] = False
    return out


def sgp_constants(n: int, D: float, Delta: float, B: float, d: float = 1.0, K_u: int | None = None) -> dict:
    """Assran et al. 2019 Lemma 3 (K_u None: E = Delta B) or seed 003 L525-527 (E = (K_u + 1) Delta B)."""
    E = Delta * B * (1 if K_u is None else K_u + 1)
    log_x = math.log(n) - E * math.log(D) if math.isfinite(E) else INF
    return _form(E, log_x, d, D, "sgp" if K_u is None else "pgp")


def remark1_q(a: float, Delta: float, B: float) -> dict:
    """Seed 000 Remark 1 (L146): q = (1 - a^(Delta B))^(1/(Delta B + 1)) (no C is given there)."""
    E = Delta * B
    out = _form(E, E * math.log(a) if math.isfinite(E) and a > 0 else INF, 1.0, 0.0, "remark1")
    out["C"] = None
    out["log10_C"] = None
    return out


def nedic_olshevsky_constants(n: int, B: float) -> dict:
    """C = 4, q = (1 - n^(-nB))^(1/(nB)) (Nedic & Olshevsky 2015 Lemma 1, as recalled in dfedsgpsm.md §5.3)."""
    E = n * B - 1 if math.isfinite(B) else INF
    out = _form(E, -n * B * math.log(n) if math.isfinite(B) else INF, 1.0, 0.0, "nedic-olshevsky")
    out["C"], out["log10_C"] = (4.0, math.log10(4.0)) if math.isfinite(E) else (INF, INF)
    return out


def log10_delta_lower_bound(n: int, B: float) -> float:
    """log10 of delta >= n^(-nB), the worst case for uniform push weights (Nedic & Olshevsky 2015, quoted by
    Taheri et al. 2020 Prop. 2.1 as cited in dfedsgpsm.md §5.2 and dfedpgp.md §5.2; not re-derived here)."""
    return -n * B * math.log10(n) if math.isfinite(B) else -INF


def product_kernel(mats, horizon: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """e(t) for t = 0..T and the push-sum weights' minimum min_i w_i^t (row sums of the products)."""
    mats = list(mats)
    T = len(mats) if horizon is None else horizon
    n = mats[0].shape[0]
    Phi = np.eye(n)
    e = np.empty(T + 1)
    wmin = np.empty(T + 1)
    e[0] = 2.0 * (n - 1) / n
    wmin[0] = 1.0
    for t in range(T):
        P = mats[t % len(mats)]
        Phi = (P @ Phi) if not sp.issparse(P) else np.asarray(P @ Phi)
        w = Phi.sum(axis=1)
        wmin[t + 1] = w.min()
        with np.errstate(divide="ignore", invalid="ignore"):
            e[t + 1] = np.abs(Phi / w[:, None] - 1.0 / n).sum(axis=1).max() if w.min() > 0 else INF
    return e, wmin


def fit_rate(e: np.ndarray, floor: float = 1e-12) -> tuple[float, float]:
    """(q, C) with e(t) <= C q^t: q from a log-linear fit on the tail, C the smallest constant over the horizon."""
    t = np.arange(e.size)
    if not np.all(np.isfinite(e)):
        return INF, INF
    above = np.flatnonzero((t >= 1) & (e > floor))
    below = np.flatnonzero((t >= 1) & (e <= floor))
    if above.size == 0:
        return 0.0, float(e[0])  # exact consensus after one round (e.g. W = 11^T/n)
    if below.size and below[0] > above[-1]:
        above = np.append(above, below[0])  # the first point under the floor enters clamped at the floor
    tt, ee = t[above], np.maximum(e[above], floor)
    if tt.size == 1:
        q = float((ee[0] / e[0]) ** (1.0 / tt[0]))
    else:
        keep = max(2, (tt.size + 1) // 2)  # the second half of the points: the asymptotic rate, not the transient
        q = float(np.exp(np.polyfit(tt[-keep:], np.log(ee[-keep:]), 1)[0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = [e[0]] + [e[i] / q ** i for i in range(1, e.size) if e[i] > floor and q > 0]
    return q, float(max(ratios))


def measured(mats, horizon: int | None = None) -> dict:
    """Measured push-sum constants over a finite horizon: delta, q_measured, C_measured, and e(t)."""
    e, wmin = product_kernel(mats, horizon)
    q, C = fit_rate(e)
    return {"delta": float(wmin.min()), "q_measured": q, "C_measured": C, "kernel": e.tolist(),
            "min_weight_per_round": wmin.tolist()}
