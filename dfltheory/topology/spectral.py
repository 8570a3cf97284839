"""Spectral constants of mixing matrices, with three computation paths that agree where they overlap.

Definitions (cited):

* lambda := max{|lambda_2(W)|, |lambda_m(W)|}, spectral gap 1 - lambda (Definition 1 of seed 001, L100, quoted from
  Sun, Li & Wang 2022; dfedsam.md §5.1). With the algebraic ordering 1 = lambda_1 >= lambda_2 >= ... >= lambda_m this
  is the second largest eigenvalue modulus (SLEM) of W.
* psi: the same object in seed 004 (Definition 1, L139; dfedadmm.md §5.1), defined only for a W that satisfies
  Definition 1 (symmetric).
* lambda^Q: the contraction of Q gossip steps (seed 001 Lemma E.3, L431-473; dfedsam.md §5.3). For symmetric W,
  lambda(W^Q) = lambda(W)^Q exactly.
* Phi(lambda, m, Q) = (lambda^Q + 1)/((1 - lambda)^2 m^(2(Q-1))) + (lambda^Q + 1)/(1 - lambda^Q)^2, eq. (6) of
  seed 001 (L118-120).
* For a non-symmetric W: the SLEM of W (eigenvalues ordered by modulus, the Perron eigenvalue 1 removed once)
  and sigma_2 := ||W - 11^T/n||_2, the largest singular value of the mean-removed matrix (equal to the second
  singular value of W when W is doubly stochastic; the "code ||W - P||_2" column of dfedcata.md §7).

Paths: circulant matrices through the FFT (O(n log n)), sparse symmetric matrices through Lanczos on the deflated
operator W - 11^T/n (scipy.sparse.linalg.eigsh), everything else dense (numpy.linalg). A disconnected graph gives
lambda = 1 and a zero gap; every quantity that divides by the gap is then float('inf'), never NaN.
"""

from __future__ import annotations

import math

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from dfltheory.topology.checks import ARGUMENTS, number

DENSE_MAX_N = 2000  # above this, symmetric sparse matrices go through Lanczos in "auto" mode
DENSE_EIG_MAX_N = 20000  # no dense eigenvalues (O(n^3) time, 48 n^2 bytes) above this


@dataclass(frozen=True)
class Spectrum:
    """Spectral summary of one mixing matrix."""

    lam: float          # SLEM: lambda of Definition 1 (seed 001 L100) / psi (seed 004 L139)
    lambda_2: float     # second largest eigenvalue (real part for a non-symmetric W)
    lambda_min: float   # smallest eigenvalue (real part for a non-symmetric W)
    sigma_2: float      # ||W - 11^T/n||_2
    symmetric: bool
    method: str         # 'fft', 'lanczos' or 'dense'

    @property
    def spectral_gap(self) -> float:
        return 1.0 - self.lam

    def as_dict(self) -> dict:
        return asdict(self)


def check_shape(shape, what: str = "mixing matrix") -> int:
    """n of an n x n ``what`` of this shape (n >= 2), or ValueError (before anything of that size is read)."""
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"a {what} must be square (n x n), got shape {tuple(shape)}")
    if shape[0] < 2:
        raise ValueError(f"a {what} needs n >= 2 clients, got n={shape[0]}")
    return int(shape[0])


def check_matrix(W, allow_negative: bool = False, what: str = "mixing matrix"):
    """Reject what no mixing matrix (or adjacency, ``what``) can be: not real numbers, not square, non-finite or
    negative entries."""
    try:
        if np.iscomplexobj(W):
            raise TypeError
        W = sp.csr_array(W, dtype=float) if sp.issparse(W) else np.asarray(W, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"a {what} must be an n x n array of real numbers, got a {type(W).__name__}"
                         + (f" of {W.dtype}" if hasattr(W, "dtype") else "")) from None
    data = W.data if sp.issparse(W) else W
    check_shape(W.shape, what)
    if not np.all(np.isfinite(data)):
        raise ValueError(f"the {what} has NaN or infinite entries; fix them before analysing it")
    if not allow_negative and data.size and data.min() < 0:
        raise ValueError(f"the {what} has negative entries (min {data.min():.3g}); its entries must be >= 0")
    return W


def check_stochastic(W, atol: float = 1e-9):
    """Reject a matrix that is neither row- nor column-stochastic (as :func:`validation.validate` measures it):
    lambda, sigma_2 and the push-sum constants are defined relative to the eigenvalue 1 of W 1 = 1 or 1^T P = 1^T,
    which a non-stochastic matrix lacks (its "lambda" would be a meaningless number)."""
    one = np.ones(W.shape[0])
    rows = float(np.abs(W @ one - 1).max())
    cols = float(np.abs(W.T @ one - 1).max())
    if min(rows, cols) > atol:
        raise ValueError(f"the mixing matrix is neither row- nor column-stochastic (max |row sum - 1| = {rows:.3g}, "
                         f"max |column sum - 1| = {cols:.3g}, tolerance {atol:g}): lambda and the other constants "
                         "need W 1 = 1 (or 1^T P = 1^T for push-sum); normalise the rows (W / W.sum(axis=1)[:, None]), "
                         "write the weights with full precision, or build W with dfltheory.topology.mixing_matrix")
    return W


def is_symmetric(W, atol: float = 1e-12) -> bool:
    if sp.issparse(W):
        D = (W - W.T)
        return D.nnz == 0 or float(np.abs(D.data).max()) <= atol
    return bool(np.allclose(W, W.T, atol=atol, rtol=0))


def _slem_from_eigs(ev: np.ndarray) -> tuple[float, float, float]:
    """(SLEM, lambda_2, lambda_min) from all eigenvalues: drop the one closest to 1 (the Perron eigenvalue)."""
    ev = np.asarray(ev)
    top = int(np.argmin(np.abs(ev - 1.0)))
    rest = np.delete(ev, top)
    return _clip(float(np.max(np.abs(rest)))), float(np.max(rest.real)), float(np.min(ev.real))


def _clip(lam: float) -> float:
    """A stochastic matrix has no eigenvalue of modulus > 1: round-off above 1 (repeated eigenvalue 1 of a
    disconnected graph) is clipped to exactly 1, so the gap is exactly 0 and never slightly negative."""
    return 1.0 if 1.0 < lam <= 1.0 + 1e-9 else lam


def dense_spectrum(W) -> Spectrum:
    """All eigenvalues with numpy (eigvalsh for symmetric W, eigvals otherwise) and sigma_2 by SVD."""
    W = W.toarray() if sp.issparse(W) else np.asarray(W, dtype=float)
    n = W.shape[0]
    sym = is_symmetric(W)
    ev = np.linalg.eigvalsh((W + W.T) / 2) if sym else np.linalg.eigvals(W)
    lam, l2, lmin = _slem_from_eigs(ev)
    M = W - 1.0 / n
    sigma2 = lam if sym else float(np.sqrt(max(np.linalg.eigvalsh(M.T @ M)[-1], 0.0)))
    return Spectrum(lam, l2, lmin, sigma2, sym, "dense")


def lanczos_spectrum(W, tol: float = 1e-8) -> Spectrum:
    """Symmetric W through Lanczos on the deflated operator W - 11^T/n (removes the eigenvalue of 1 = W 1).

    lambda_2 = largest algebraic eigenvalue of W - 11^T/n, lambda_min = smallest algebraic eigenvalue of W, and
    SLEM = max(|lambda_2|, |lambda_min|) (= sigma_2 for symmetric W). Requires W 1 = 1 (checked). Two Lanczos runs
    (ARPACK, relative tolerance 1e-8); a clustered top of the spectrum (small-world graphs) makes the first one the slow one."""
    W = sp.csr_array(W, dtype=float)
    n = W.shape[0]
    if not is_symmetric(W):
        raise ValueError("the Lanczos path needs a symmetric W; use the dense path for a non-symmetric matrix")
    if np.max(np.abs(W @ np.ones(n) - 1.0)) > 1e-9:
        raise ValueError("the Lanczos path deflates the eigenvector 1 and needs W 1 = 1 (row-stochastic W)")
    op = spla.LinearOperator((n, n), matvec=lambda x: W @ x - x.sum(axis=0) / n, dtype=float)
    v0 = np.random.default_rng(0).standard_normal(n)
    v0 -= v0.mean()
    l2 = float(spla.eigsh(op, k=1, which="LA", tol=tol, v0=v0, return_eigenvectors=False)[0])
    lmin = float(spla.eigsh(W, k=1, which="SA", tol=tol, v0=v0, return_eigenvectors=False)[0])
    lam = _clip(max(abs(l2), abs(lmin)))
    return Spectrum(lam, l2, lmin, lam, True, "lanczos")


def circulant_first_row(n: int, offsets, self_weight: float, weight: float) -> np.ndarray:
    """First row c of the circulant W with W[i, j] = c[(j - i) mod n], for edges i -> i + o (W[i+o, i] = weight)."""
    c = np.zeros(n)
    c[0] = self_weight
    for o in {int(o) % n for o in offsets} - {0}:
        c[(-o) % n] += weight
    return c


def circulant_spectrum(c) -> Spectrum:
    """Spectrum of the circulant matrix with first row c: eigenvalues are the DFT of c (k = 0 is sum(c) = 1).

    Circulant matrices are normal, so singular values are the eigenvalue moduli and sigma_2 = SLEM. The row is
    checked as every mixing matrix is: finite, >= 0, summing to 1 (row- and column-stochastic at once)."""
    c = np.asarray(c, dtype=float)
    if c.ndim != 1 or c.size < 2 or not np.all(np.isfinite(c)) or c.min() < 0 or abs(c.sum() - 1) > 1e-9:
        raise ValueError(f"the first row of a circulant mixing matrix must be n >= 2 finite weights >= 0 that sum to "
                         f"1, got shape {c.shape}" + (f", sum {c.sum():.6g}, min {c.min():.3g}" if c.size else ""))
    ev = np.fft.fft(c)
    rest = ev[1:]
    sym = bool(np.allclose(c[1:], c[1:][::-1], atol=1e-15))
    lam = _clip(float(np.max(np.abs(rest))))
    return Spectrum(lam, float(np.max(rest.real)), float(np.min(ev.real)), lam, sym, "fft")


def circulant_matrix(c) -> np.ndarray:
    """Dense circulant matrix W[i, j] = c[(j - i) mod n] (for tests and small n)."""
    c = np.asarray(c, dtype=float)
    n = c.size
    idx = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n
    return c[idx]


def spectrum(W, method: str = "auto", check: bool = True) -> Spectrum:
    """Spectral summary of a user-given mixing matrix (dense or scipy.sparse).

    method: 'auto' (Lanczos for sparse symmetric matrices with n > DENSE_MAX_N, dense otherwise), 'dense' or
    'lanczos'. W must be row- or column-stochastic (:func:`check_stochastic`; ``check=False`` skips this and the
    sign check, for a signed or unnormalised matrix analysed on purpose). Circulant matrices given by their first
    row go through :func:`circulant_spectrum`."""
    W = check_matrix(W, allow_negative=not check)
    if check:
        check_stochastic(W)
    if method not in ("auto", "dense", "lanczos"):
        raise ValueError(f"method must be 'auto', 'dense' or 'lanczos', got {method!r}")
    n = W.shape[0]
    if method == "lanczos" or (method == "auto" and sp.issparse(W) and n > DENSE_MAX_N and is_symmetric(W)):
        return lanczos_spectrum(W)
    if n > DENSE_EIG_MAX_N:
        raise ValueError(f"n = {n:,} is too large for the eigenvalues of a dense matrix (O(n^3), n <= "
                         f"{DENSE_EIG_MAX_N:,}): only a symmetric W (Lanczos) or a circulant topology (FFT) is "
                         "analysed at this size; lower n")
    return dense_spectrum(W)


def lam(W, method: str = "auto") -> float:
    """lambda = max{|lambda_2(W)|, |lambda_m(W)|} (seed 001 Definition 1, L100): the SLEM of W."""
    return spectrum(W, method=method).lam


def sigma_2(W) -> float:
    """||W - 11^T/n||_2 (dense)."""
    W = check_stochastic(check_matrix(W))
    W = W.toarray() if sp.issparse(W) else W
    return float(np.linalg.norm(W - 1.0 / W.shape[0], 2))


def spectral_gap(W, method: str = "auto") -> float:
    """1 - lambda (0 for a disconnected graph)."""
    return 1.0 - lam(W, method=method)


def _check_lam(lam_value: float) -> float:
    return number(lam_value, "lambda", 0.0, 1.0, meaning="the second largest eigenvalue modulus of W")


def lambda_q(lam_value: float, Q: int = 1) -> float:
    """lambda^Q: contraction of Q gossip steps with a symmetric W (seed 001 L431-473)."""
    return _check_lam(lam_value) ** number(Q, "Q", **ARGUMENTS["Q"])


def phi(lam_value: float, m: int, Q: int = 1) -> float:
    """Phi(lambda, m, Q) of seed 001 eq. (6), L118-120 (dfedsam.md §5.3); float('inf') when lambda = 1."""
    lq = lambda_q(lam_value, Q)
    m = number(m, "m", low=1, integer=True, meaning="the number of clients")
    if lam_value >= 1.0:
        return float("inf")
    log_mq = 2 * (Q - 1) * math.log(m)  # m^(2(Q-1)) overflows a float from Q ~ 80 at m = 100: work in logs
    first = (lq + 1) / (1 - lam_value) ** 2 * math.exp(-log_mq) if log_mq < 700 else 0.0
    return first + (lq + 1) / (1 - lq) ** 2


def phi_e2(lam_value: float) -> float:
    """1/(1 - lambda)^2: the consensus factor of seed 001 Lemma E.2 (L377) and seed 004 Lemma 8; inf at lambda = 1."""
    lam_value = _check_lam(lam_value)
    return float("inf") if lam_value == 1.0 else 1.0 / (1.0 - lam_value) ** 2
