"""Topology constants beyond the spectral gap: the effective number of neighbours, and the generalized spectral gap
and equilibrium skewness of column- and row-stochastic mixing.

Definitions (cited; docs/topology.md, "Beyond the spectral gap"):

* Effective number of neighbours, Vogels, Hendrikx & Jaggi, "Beyond spectral gap: the role of the topology in
  decentralized learning" (NeurIPS 2022), as their code defines it (epfml/topology-in-decentralized-learning,
  random_walks.py: ``effective_number_of_neighbors(mode="mean")`` over ``random_walk_covariance``, start_at = 1):
  the random walk x <- W(sqrt(gamma) x + n), n ~ N(0, I) drawn afresh each step, has the stationary covariance

      Sigma = sum_{s >= 0} gamma^s W^{s+1} (W^{s+1})^T,   i.e.   Sigma = gamma W Sigma W^T + W W^T   (Stein equation),

  and n_eff(gamma) = (1/(1 - gamma)) / (tr(Sigma)/n): the variance per node without communication (W = I, 1/(1 -
  gamma)) over the mean variance per node with it; 1 for W = I, n for W = 11^T/n. For a normal W (symmetric or
  circulant) with eigenvalues lambda_k, tr(Sigma)/n = (1/n) sum_k |lambda_k|^2/(1 - gamma |lambda_k|^2).
  A time-varying sequence W(0), ..., W(T-1) is repeated periodically (as the code does for its periodic schemes) and
  Sigma is taken after round T-1: Sigma = gamma^T Phi Sigma Phi^T + R with Phi = W(T-1)...W(0) and R what one period
  adds from x = 0 (R <- W(t) (gamma R + I) W(t)^T for t = 0..T-1).
* Generalized spectral gap 1 - beta_pi and equilibrium skewness kappa_pi of a column-stochastic (push-sum) P, Liang,
  Huang, Xin & Yuan, arXiv 2312.04928: pi the right Perron vector (P pi = pi, 1^T pi = 1; positive when the graph is
  strongly connected), ||B||_pi = ||Pi^{-1/2} B Pi^{1/2}||_2 with Pi = diag(pi), beta_pi = ||P - pi 1^T||_pi,
  kappa_pi = max_i pi_i / min_i pi_i.
* The same for a row-stochastic A (arXiv 2506.04600, Sec. 1 "Notations" and Sec. 2.2): pi_A the left Perron vector
  (pi_A^T A = pi_A^T, pi_A^T 1 = 1), ||B||_{pi_A} = ||Pi_A^{1/2} B Pi_A^{-1/2}||_2, beta_A = ||A - 1 pi_A^T||_{pi_A},
  kappa_A = max pi_A / min pi_A. Transposing inside the 2-norm gives beta_A(A) = beta_pi(A^T), kappa_A(A) =
  kappa_pi(A^T): one routine computes both.
* A doubly stochastic W has pi = 1/n: kappa = 1 and beta = ||W - 11^T/n||_2 = sigma_2 (= lambda, the SLEM, when W is
  symmetric or normal).

Sizes: the Perron vector and the weighted norm are dense (n <= spectral.DENSE_MAX_N); n_eff of a non-normal W, or of
a time-varying sequence, needs a dense Lyapunov solve of about 25 n^3 flops (4 s at n = 1000, 45 s at n = 2000 on
one core), so it is refused above :data:`memory.LYAPUNOV_MAX_N`; a normal W needs only its eigenvalues.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from dfltheory.topology import pushsum, spectral
from dfltheory.topology.checks import number
from dfltheory.topology.memory import LYAPUNOV_MAX_N

#: The gammas of the n_eff keys of :func:`dfltheory.topology.analyze` (``n_eff_0.5``, ``n_eff_0.9``, ``n_eff_0.99``)
GAMMAS = (0.5, 0.9, 0.99)
DENSE_NORM_MAX_N = 500  # above this the weighted 2-norm goes through ARPACK (Lanczos on M^T M) instead of an SVD
KINDS = {"column": "pi", "row": "A"}


def check_gamma(gamma) -> np.ndarray:
    """gamma as a float array; every entry a finite number in [0, 1) (ValueError otherwise)."""
    values = np.atleast_1d(np.asarray(gamma, dtype=object))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"gamma must be a number or a non-empty list of numbers in [0, 1), got {gamma!r}")
    return np.array([number(g, "gamma", 0.0, 1.0, high_open=True, meaning="the decay of the random walk "
                            "x <- W(sqrt(gamma) x + noise) of the effective number of neighbours") for g in values])


def _result(values: np.ndarray, gamma):
    return float(values[0]) if np.ndim(gamma) == 0 else values


def n_eff_from_eigenvalues(eigenvalues, gamma):
    """n_eff(gamma) of a normal W (symmetric, circulant) from its n eigenvalues (Vogels et al. 2022):
    (1/(1 - gamma)) / ((1/n) sum_k |lambda_k|^2/(1 - gamma |lambda_k|^2)). A float for one gamma, else an array."""
    g = check_gamma(gamma)
    m2 = np.abs(np.asarray(eigenvalues)) ** 2
    if m2.ndim != 1 or m2.size < 2 or not np.all(np.isfinite(m2)) or m2.max() > 1 + 1e-9:
        raise ValueError("the eigenvalues of a mixing matrix must be n >= 2 finite numbers of modulus <= 1; pass "
                         "numpy.linalg.eigvalsh(W) (or the FFT of a circulant's first row)")
    m2 = np.minimum(m2, 1.0)
    per_node = np.array([np.mean(m2 / (1.0 - gi * m2)) for gi in g])  # one n-vector at a time (n up to 10^8)
    return _result(1.0 / ((1.0 - g) * per_node), gamma)


def _dense(W) -> np.ndarray:
    return W.toarray() if sp.issparse(W) else np.asarray(W, dtype=float)


def n_eff_sequence(mats, gamma):
    """n_eff(gamma) of the time-varying walk x <- W(t)(sqrt(gamma) x + n) over the sequence ``mats`` repeated
    periodically, evaluated after its last round (one matrix: the fixed W). Solves the Stein equation
    Sigma = gamma^T Phi Sigma Phi^T + R (module docstring); n <= memory.LYAPUNOV_MAX_N."""
    g = check_gamma(gamma)
    mats = list(mats)
    if not mats:
        raise ValueError("the matrix sequence is empty; pass at least one round")
    checked = [spectral.check_stochastic(spectral.check_matrix(m)) for m in mats]
    n = checked[0].shape[0]
    if any(m.shape != (n, n) for m in checked):
        raise ValueError(f"every round must be an {n} x {n} matrix, got shapes {sorted({m.shape for m in checked})}")
    if n > LYAPUNOV_MAX_N:
        raise ValueError(f"n = {n:,}: n_eff of a non-normal or time-varying W needs a dense Lyapunov solve (about "
                         f"25 n^3 flops); n <= {LYAPUNOV_MAX_N:,} (a symmetric or circulant W goes through "
                         "n_eff_from_eigenvalues at any n the eigenvalues fit)")
    T = len(checked)
    Phi = np.eye(n)
    for W in checked:
        Phi = np.asarray(W @ Phi)
    out = np.empty(g.size)
    for i, gi in enumerate(g):
        R = np.zeros((n, n))
        for W in checked:
            WS = np.asarray(W @ (gi * R + np.eye(n)))
            R = np.asarray(W @ WS.T).T  # W (gamma R + I) W^T, with gamma R + I symmetric
        Sigma = sla.solve_discrete_lyapunov(gi ** (T / 2) * Phi, R)
        out[i] = n / ((1.0 - gi) * np.trace(Sigma))
    return _result(out, gamma)


def period(mats) -> int:
    """The smallest p such that round t + p equals round t for every t of the sequence (its length if none does):
    the one-peer exponential graph has p = ceil(log2 n), i.i.d. random draws have none."""
    T = len(mats)
    same = (lambda a, b: (a != b).nnz == 0) if sp.issparse(mats[0]) else np.array_equal
    return next((p for p in range(1, T) if all(same(mats[t], mats[t + p]) for t in range(T - p))), T)


def n_eff(W, gamma):
    """n_eff(gamma) of a fixed mixing matrix W (Vogels, Hendrikx & Jaggi 2022; module docstring): eigenvalues for a
    symmetric W (n <= spectral.DENSE_EIG_MAX_N), the Stein equation otherwise (n <= memory.LYAPUNOV_MAX_N)."""
    W = spectral.check_stochastic(spectral.check_matrix(W))
    if not spectral.is_symmetric(W):
        return n_eff_sequence([W], gamma)
    if W.shape[0] > spectral.DENSE_EIG_MAX_N:
        raise ValueError(f"n = {W.shape[0]:,} is too large for the eigenvalues of a dense matrix (n <= "
                         f"{spectral.DENSE_EIG_MAX_N:,}); lower n")
    return n_eff_from_eigenvalues(np.linalg.eigvalsh(_dense(W)), gamma)


def _column_form(W, kind: str) -> np.ndarray:
    """The column-stochastic matrix whose right Perron vector is wanted: W ('column') or W^T ('row')."""
    if kind not in KINDS:
        raise ValueError(f"kind must be 'column' (push-sum P, arXiv 2312.04928) or 'row' (arXiv 2506.04600), "
                         f"got {kind!r}")
    W = spectral.check_matrix(W)
    n = W.shape[0]
    if n > spectral.DENSE_MAX_N:
        raise ValueError(f"n = {n:,}: the Perron vector and the weighted norm are dense (n <= "
                         f"{spectral.DENSE_MAX_N:,}); lower n")
    P = _dense(W) if kind == "column" else _dense(W).T
    err = float(np.abs(P.sum(axis=0) - 1).max())
    if err > 1e-9:
        raise ValueError(f"the matrix is not {kind}-stochastic (max |{kind} sum - 1| = {err:.3g}); pass a "
                         f"{kind}-stochastic W or kind='{'row' if kind == 'column' else 'column'}'")
    if not pushsum.strongly_connected(P > 0):
        raise ValueError("the graph of the matrix is not strongly connected, so it has no unique positive Perron "
                         "vector; beta and kappa are defined for a strongly connected graph")
    return P


def perron_vector(W, kind: str = "column") -> np.ndarray:
    """pi with W pi = pi, sum(pi) = 1 for a column-stochastic W (kind 'column', arXiv 2312.04928), or pi_A with
    pi_A^T W = pi_A^T for a row-stochastic W (kind 'row', arXiv 2506.04600); strongly connected graph, n <= DENSE_MAX_N.
    Solved as (P - I) pi = 0 with the last equation replaced by sum(pi) = 1 (non-singular for an irreducible P)."""
    P = _column_form(W, kind)
    return _perron(P)


def _perron(P: np.ndarray) -> np.ndarray:
    n = P.shape[0]
    B = P - np.eye(n)
    B[-1, :] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    return np.linalg.solve(B, rhs)


def _norm2(M: np.ndarray) -> float:
    """Largest singular value: an SVD up to DENSE_NORM_MAX_N, Lanczos on M^T M (ARPACK, machine precision) above."""
    n = M.shape[0]
    if n <= DENSE_NORM_MAX_N or not M.any():
        return float(np.linalg.norm(M, 2))
    op = spla.LinearOperator((n, n), matvec=lambda x: M.T @ (M @ x), dtype=float)
    v0 = np.random.default_rng(0).standard_normal(n)
    top = spla.eigsh(op, k=1, which="LA", v0=v0, return_eigenvectors=False)[0]
    return float(np.sqrt(max(top, 0.0)))


def generalized_gap(W, kind: str = "column") -> tuple[float, float]:
    """(beta, kappa): beta_pi = ||P - pi 1^T||_pi and kappa_pi = max pi/min pi of a column-stochastic P (kind
    'column', arXiv 2312.04928), or beta_A = ||A - 1 pi_A^T||_{pi_A} and kappa_A of a row-stochastic A (kind 'row',
    arXiv 2506.04600). The generalized spectral gap is 1 - beta. With u = sqrt(pi):
    Pi^{-1/2} (P - pi 1^T) Pi^{1/2} = diag(u)^{-1} P diag(u) - u u^T, whose 2-norm is beta."""
    P = _column_form(W, kind)
    pi = _perron(P)
    u = np.sqrt(pi)
    M = P / u[:, None] * u[None, :] - np.outer(u, u)
    return _norm2(M), float(pi.max() / pi.min())


def constants(topo, out: dict, notes: dict, rounds: range) -> None:
    """Fill the keys beta_pi, kappa_pi, beta_A, kappa_A and n_eff_<gamma> of :func:`core.analyze` for the analysed
    topology ``topo`` over ``rounds`` (``out`` holds its spectral constants and stochasticity already)."""
    _generalized_gaps(topo, out, notes, rounds)
    _effective_neighbours(topo, out, notes, rounds)


def _generalized_gaps(topo, out, notes, rounds) -> None:
    tv = (" (time-varying: the largest per-round value, each round's matrix taken as a fixed network)"
          if topo.time_varying else "")
    if out["doubly_stochastic"]:
        for s in KINDS.values():
            out[f"beta_{s}"], out[f"kappa_{s}"] = min(out["sigma_2"], 1.0), 1.0  # ||W - 11^T/n||_2 <= 1 when DS
        notes["beta_pi"] = ("doubly stochastic: pi = pi_A = 1/n, so kappa_pi = kappa_A = 1 and beta_pi = beta_A = "
                            "sigma_2 = ||W - 11^T/n||_2" + tv)
        return
    for kind, s in KINDS.items():
        if not out[f"{kind}_stochastic"]:
            other = "beta_A, kappa_A" if s == "pi" else "beta_pi, kappa_pi"
            notes[f"beta_{s}"] = (f"the matrices are not {kind}-stochastic (weight rule {topo.weights!r}): beta_{s}, "
                                  f"kappa_{s} do not apply; see {other}")
            continue
        if topo.n > spectral.DENSE_MAX_N:
            notes[f"beta_{s}"] = (f"n > {spectral.DENSE_MAX_N}: beta_{s}, kappa_{s} need a dense Perron vector and "
                                  "weighted norm; lower n")
            continue
        values = []
        for t in rounds:
            W = topo.sparse_matrix(t)
            if not pushsum.strongly_connected(W != 0):
                values = None
                notes[f"beta_{s}"] = (f"round {t}'s graph is not strongly connected: no unique positive Perron "
                                      f"vector, so beta_{s}, kappa_{s} are undefined")
                break
            values.append(generalized_gap(W, kind))
        if values:
            out[f"beta_{s}"] = max(v[0] for v in values)
            out[f"kappa_{s}"] = max(v[1] for v in values)
            source = "arXiv 2312.04928, right Perron vector" if s == "pi" else "arXiv 2506.04600, left Perron vector"
            mean = (f"; mean over the {len(values)} rounds: beta_{s} {np.mean([v[0] for v in values]):.4g}, kappa_{s} "
                    f"{np.mean([v[1] for v in values]):.4g}" if topo.time_varying else "")
            notes[f"beta_{s}"] = f"generalized spectral gap 1 - beta_{s} and skewness kappa_{s} ({source})" + tv + mean


def _effective_neighbours(topo, out, notes, rounds) -> None:
    keys = [f"n_eff_{g}" for g in GAMMAS]
    n = topo.n
    if topo.circulant is not None:
        values = n_eff_from_eigenvalues(np.fft.fft(topo.circulant_row(0)), GAMMAS)
        how = "circulant: from the FFT eigenvalues"
    elif topo.time_varying or not out["symmetric"]:
        if n > LYAPUNOV_MAX_N:
            notes["n_eff"] = (f"n > {LYAPUNOV_MAX_N}: n_eff of a non-symmetric or time-varying W needs a dense "
                              "Lyapunov solve (about 25 n^3 flops); lower n")
            return
        mats = [topo.sparse_matrix(t) for t in rounds]
        p = period(mats)
        values = n_eff_sequence(mats[:p], GAMMAS)
        why = "the period of the sequence" if p < len(mats) else "no round repeats within the horizon"
        how = (f"time-varying: rounds 0..{p - 1} repeated periodically ({why}), Sigma after round {p - 1}"
               if topo.time_varying else "non-symmetric W: the Stein equation Sigma = gamma W Sigma W^T + W W^T")
    elif n > spectral.DENSE_MAX_N:
        notes["n_eff"] = f"n > {spectral.DENSE_MAX_N}: n_eff needs every eigenvalue of W (dense); lower n"
        return
    else:
        values = n_eff_from_eigenvalues(np.linalg.eigvalsh(topo.matrix(0)), GAMMAS)
        how = "symmetric W: from its eigenvalues"
    out.update(zip(keys, (float(v) for v in values)))
    notes["n_eff"] = ("effective number of neighbours n_eff_<gamma> (Vogels, Hendrikx & Jaggi 2022; 1 = no "
                      f"communication, n = exact averaging): {how}")
