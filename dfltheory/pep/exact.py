"""A certificate as a proof: the one-round Lyapunov inequality checked in exact rational arithmetic (issue 32).

The SDP of :mod:`dfltheory.pep.certify` gives floating-point coefficients (a, P, R, tau) and multipliers: lambda_k
>= 0 of the one-round PEP's scalar constraints, PSD Lambda of its LMIs, and a residual S that must be PSD with

    a (f(p^{t+1}) - f(p^t)) + [quadratic part] + tau ||grad f(p^t)||^2 - e
        = sum_k lambda_k constraint_k - <Lambda, LMI> - <S, Gram>     (identically in the Gram matrix and values).

Here every number is a :class:`fractions.Fraction`: the data (PEPit's coefficients, snapped to the nearest fraction
with denominator <= 10^9 where that is within 2 ulp of the float: eta = 0.02 is read as 1/50), a = 1, P, R, tau and
the multipliers rounded to multiples of 2^-40. Then

1. P, R and every Lambda are checked PSD by an exact LDL^T (nonnegative pivots; a zero pivot needs a zero column);
   where one fails, the least dyadic multiple of I that makes it pass is added (P, R: a larger potential is still a
   potential; Lambda: the change goes into S below);
2. the coefficients of the function values must match exactly: the rounding's mismatch is removed by an exact
   solve for a correction of the largest multipliers (which must stay >= 0);
3. e is what the constant terms give, exactly (the largest over the mixing matrices);
4. S = (its Gram part) is checked PSD by an exact LDL^T. Where it fails, the multipliers of the bounded
   constraints (||g_j||^2 <= B^2 on each queried gradient, a single diagonal entry of the Gram matrix; sigma_g's
   (1/m) sum_i ||g_i - g||^2 <= sigma_g^2, a PSD form) are all raised by the least dyadic s that makes it pass
   (bisection): S gains s times their forms, e gains s (B^2 + ... + sigma_g^2 + ...). That is the weakening
   ``exact_check`` reports (``"weakened by X"``, X = (e_exact - e_sdp) / |e_sdp|, floored). Where these do not
   reach the failing direction (no B, a position direction) the certificate stays unproved (``"failed: ..."``).

The result is an identity over the rationals: the one-round inequality with the rational (a, P, R, tau, e) holds for
every Gram matrix and function values of the one-round PEP with the snapped data, hence the bound at every T.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["DENOMINATOR", "exact_certificate", "ldl_psd", "rational"]

#: the multipliers and coefficients are rounded to multiples of 1/DENOMINATOR
DENOMINATOR = 2 ** 40
#: the largest denominator a data entry is snapped to (where that is within 2 ulp of the float)
SNAP = 10 ** 9


def rational(x: float) -> Fraction:
    """A multiplier or coefficient rounded to the dyadic grid 2^-40."""
    return Fraction(round(float(x) * DENOMINATOR), DENOMINATOR)


def snap(x: float) -> Fraction:
    """A data entry as the fraction it approximates (denominator <= 10^9, within 2 ulp), else exactly the float."""
    x = float(x)
    exact = Fraction(x)
    if x == 0:
        return exact
    near = exact.limit_denominator(SNAP)
    return near if abs(near - exact) <= 2 * abs(np.spacing(x)) else exact


def ldl_psd(M) -> tuple[bool, str]:
    """Exact LDL^T of a symmetric rational matrix (a list of lists of Fractions, not modified): (True, '') when every
    pivot is >= 0 and a zero pivot has a zero column (M is PSD), else (False, where it failed)."""
    A = [list(row) for row in M]
    n = len(A)
    for k in range(n):
        d = A[k][k]
        if d < 0:
            return False, f"pivot {k} = {float(d):.3g} < 0"
        if d == 0:
            if any(A[i][k] != 0 for i in range(k + 1, n)):
                return False, f"pivot {k} = 0 with a nonzero column"
            continue
        for i in range(k + 1, n):
            if A[i][k] == 0:
                continue
            f = A[i][k] / d
            for j in range(k + 1, i + 1):
                if A[j][k]:
                    A[i][j] -= f * A[j][k]
                    A[j][i] = A[i][j]
    return True, ""


def _least_shift(M, passes, start=Fraction(1, 2 ** 60)) -> Fraction | None:
    """The least dyadic s >= 0 (to a factor 2, then bisected 12 times) with passes(s); None beyond 2^20."""
    if passes(Fraction(0)):
        return Fraction(0)
    s = start
    while not passes(s):
        s *= 2
        if s > 2 ** 20:
            return None
    lo, hi = s / 2, s
    for _ in range(12):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    return hi


def _psd_rational(V):
    """A PSD float matrix as a rational one that passes the exact LDL^T (the least dyadic shift of I added)."""
    R = [[rational((V[i][j] + V[j][i]) / 2) for j in range(len(V))] for i in range(len(V))]
    if not R:
        return R, Fraction(0)
    shift = _least_shift(R, lambda s: ldl_psd([[R[i][j] + (s if i == j else 0) for j in range(len(R))]
                                                for i in range(len(R))])[0])
    if shift is None:
        raise ArithmeticError("a PSD coefficient matrix is not PSD even after a shift")
    return [[R[i][j] + (shift if i == j else 0) for j in range(len(R))] for i in range(len(R))], shift


def _rat_data(d):
    """The one-round data of :func:`dfltheory.pep.certify._matrices` with every entry snapped (:func:`snap`)."""
    def mat(F, G, c):
        return [snap(v) for v in F], [[snap(v) for v in row] for row in G], snap(c)

    return dict(cons=[(mat(*fgc), eq) for fgc, eq in d["cons"]],
                lmis=[[[mat(*e) for e in row] for row in lmi] for lmi in d["lmis"]],
                a=mat(*d["a"]), tau=mat(*d["tau"]),
                P=[(jk, mat(*piece)) for jk, piece in d["P"]], R=[(jk, mat(*piece)) for jk, piece in d["R"]])


def _solve_exact(A, r):
    """A solution x of the rational system A x = r (A: rows of Fractions) by Gaussian elimination, None if none."""
    rows, cols = len(A), len(A[0]) if A else 0
    M = [list(A[i]) + [r[i]] for i in range(rows)]
    pivots, row = [], 0
    for col in range(cols):
        p = next((i for i in range(row, rows) if M[i][col] != 0), None)
        if p is None:
            continue
        M[row], M[p] = M[p], M[row]
        inv = 1 / M[row][col]
        M[row] = [v * inv for v in M[row]]
        for i in range(rows):
            if i != row and M[i][col] != 0:
                f = M[i][col]
                M[i] = [a - f * b for a, b in zip(M[i], M[row])]
        pivots.append(col)
        row += 1
        if row == rows:
            break
    if any(M[i][cols] != 0 for i in range(row, rows)):
        return None
    x = [Fraction(0)] * cols
    for i, col in enumerate(pivots):
        x[col] = M[i][cols]
    return x


def _one(d, a, P, R, tau, lam, Lams):
    """For one mixing's rational data: (e, S, lam) after the exact correction of the function values' coefficients
    (step 2 of the module docstring); ArithmeticError where that is impossible with multipliers >= 0."""
    n = len(d["a"][1])
    nF = len(d["a"][0])
    terms = [(a, d["a"]), (tau, d["tau"])]
    terms += [(P[j][k], piece) for (j, k), piece in d["P"]] + [(R[j][k], piece) for (j, k), piece in d["R"]]
    obj_F = [sum((v * F[i] for v, (F, _, _) in terms), Fraction(0)) for i in range(nF)]
    obj_G = [[sum((v * G[i][j] for v, (_, G, _) in terms), Fraction(0)) for j in range(n)] for i in range(n)]
    obj_c = sum((v * c for v, (_, _, c) in terms), Fraction(0))
    lmi_F, lmi_G, lmi_c = [Fraction(0)] * nF, [[Fraction(0)] * n for _ in range(n)], Fraction(0)
    for lmi, Lam in zip(d["lmis"], Lams):
        for p, row in enumerate(lmi):
            for q, (F, G, c) in enumerate(row):
                w = Lam[p][q]
                if w:
                    lmi_F = [x - w * y for x, y in zip(lmi_F, F)]
                    lmi_G = [[x - w * y for x, y in zip(rx, ry)] for rx, ry in zip(lmi_G, G)]
                    lmi_c -= w * c
    cons = d["cons"]
    lam = list(lam)
    residual = [obj_F[i] - lmi_F[i] - sum((lam[k] * cons[k][0][0][i] for k in range(len(cons)) if lam[k]),
                                          Fraction(0)) for i in range(nF)]
    if any(residual):
        # correct the multipliers that are clearly positive (and the equalities' free ones)
        biggest = max((abs(v) for v in lam), default=Fraction(0))
        J = [k for k in sorted(range(len(cons)), key=lambda k: -abs(lam[k]))
             if cons[k][1] or lam[k] > biggest * Fraction(1, 10 ** 6)]
        J = [k for k in J if any(cons[k][0][0])]
        A = [[cons[k][0][0][i] for k in J] for i in range(nF)]
        delta = _solve_exact(A, residual) if J else None
        if delta is None:
            raise ArithmeticError("the function values' coefficients cannot be matched exactly")
        for k, dk in zip(J, delta):
            lam[k] += dk
        if any(lam[k] < 0 for k in range(len(cons)) if not cons[k][1]):
            raise ArithmeticError("matching the function values' coefficients exactly makes a multiplier negative")
    dual_G = [[lmi_G[i][j] + sum((lam[k] * cons[k][0][1][i][j] for k in range(len(cons)) if lam[k]), Fraction(0))
               for j in range(n)] for i in range(n)]
    dual_c = lmi_c + sum((lam[k] * cons[k][0][2] for k in range(len(cons)) if lam[k]), Fraction(0))
    S = [[dual_G[i][j] - obj_G[i][j] for j in range(n)] for i in range(n)]
    return obj_c - dual_c, S, lam


def _shift_sites(d):
    """(constraint index, its Gram matrix, its cost) of each inequality q(Gram) <= c with c > 0, no function values
    and q PSD: ||g_j||^2 <= B^2 on a leaf gradient (one diagonal entry), sigma_g's (1/m) sum ||g_i - g||^2 <=
    sigma_g^2. Raising its multiplier by s adds s q to S and s c to e."""
    sites = []
    for k, ((F, G, c), eq) in enumerate(d["cons"]):
        if eq or not c < 0 or any(F) or not any(any(row) for row in G):
            continue
        if np.linalg.eigvalsh(np.array(G, dtype=float)).min() >= 0 and ldl_psd(G)[0]:
            sites.append((k, G, -c))
    return sites


def exact_certificate(datas, a, P, R, tau, multipliers, e_sdp, floor: float = 0.0) -> dict:
    """Check the certificate (a, P, R, tau) (as the SDP gives them, a > 0: divided by a here) with its
    ``multipliers`` (per mixing: (lambda, [Lambda, ...]))
    exactly (module docstring). Returns {"proved": bool, "exact_check": "passed" | "weakened by X" | "failed: ..",
    "e": the exact e (Fraction), "tau": Fraction, "P", "R" (Fractions), "shift": the B shift s, "weakening": X},
    X = (e_exact - e_sdp) / max(|e_sdp|, ``floor``) (e = 0 at sigma_g = 0: ``floor`` is the scale there)."""
    try:
        Pq, _ = _psd_rational((np.asarray(P, dtype=float) / a).tolist() if len(P) else [])
        Rq, _ = _psd_rational((np.asarray(R, dtype=float) / a).tolist() if len(R) else [])
    except ArithmeticError as err:
        return dict(proved=False, exact_check=f"failed: {err}")
    aq, tq = Fraction(1), rational(max(tau / a, 0.0))
    es, shifts = [], []
    for d, (lam, Lams) in zip(datas, multipliers):
        rd = _rat_data(d)
        lamq = [max(rational(v / a), Fraction(0)) if not eq else rational(v / a) for v, (_, eq) in zip(lam, d["cons"])]
        try:
            Lq = [_psd_rational(np.asarray(L, dtype=float) / a)[0] for L in Lams]
            e, S, _ = _one(rd, aq, Pq, Rq, tq, lamq, Lq)
        except ArithmeticError as err:
            return dict(proved=False, exact_check=f"failed: {err}")
        sites = _shift_sites(rd)

        total = [[sum((G[i][j] for _, G, _ in sites), Fraction(0)) for j in range(len(S))] for i in range(len(S))]

        def shifted(s):
            return [[S[i][j] + s * total[i][j] for j in range(len(S))] for i in range(len(S))]

        ok, why = ldl_psd(S)
        s = Fraction(0)
        if not ok:
            s = _least_shift(S, lambda v: ldl_psd(shifted(v))[0]) if sites else None
            if s is None:
                return dict(proved=False, exact_check=f"failed: the residual S is not PSD ({why}) and no bound (B, "
                                                      "sigma_g) gives a shift that repairs it")
        es.append(e + s * sum(cost for _, _, cost in sites))
        shifts.append(s)
    e = max(es)
    ref = Fraction(float(e_sdp) / a)
    scale = max(abs(ref), Fraction(floor))
    weakening = float((e - ref) / scale) if scale else float(e - ref)
    text = "passed" if e <= ref else f"weakened by {weakening:.2g} (relative)"
    weakening = max(weakening, 0.0)
    return dict(proved=True, exact_check=text, e=e, tau=tq, P=Pq, R=Rq, shift=max(shifts), weakening=weakening)
