"""The two representations of a consensus (gossip) step in a decentralized PEP.

* :class:`ExplicitMixing`: a given symmetric doubly stochastic W. The step ``x_i^+ = sum_j W_ij x_j`` is a
  linear combination of the PEP's points, so it is exact for that matrix.
* :class:`SpectralClass`: every symmetric doubly stochastic W whose eigenvalues other than the eigenvalue 1 of
  the consensus vector lie in ``[lo, hi]`` (Colla & Hendrickx, "Automatic performance estimation for
  decentralized optimization", IEEE TAC 2023, arXiv:2203.05963, Section IV). A consensus step with an unknown W
  of the class is represented by new points ``d_i`` (the deviations of the outputs from their average) and the
  necessary conditions, for the deviations ``X_s = (x_i^s - x_bar^s)_i`` and ``Y_s = (d_i^s)_i`` of every step s
  (all steps share one W), read as vectors of R^{m d} (the agents' vectors stacked):

      x_bar^+ = x_bar                                  (W 1 = 1, 1^T W = 1^T: the average is kept)
      X^T Y symmetric                                  (W symmetric)
      (Y - lo X)^T (hi X - Y) >= 0   (PSD, S x S)      (spectrum of W on the disagreement space in [lo, hi])

  where X = [X_1 .. X_S], Y = [Y_1 .. Y_S] and the inner products are sums over agents, hence linear in the
  Gram matrix. Every W of the class satisfies them (M = W kron I_d restricted to the disagreement space is
  symmetric with spectrum in [lo, hi]), so the PEP value is an upper bound over the whole class; it is a
  relaxation because a symmetric operator of R^{m d} need not be of the form W kron I_d.

The class may also be **time-varying** (``varying=True``): every sequence of matrices of the class, a new W at each
gossip step (the papers' random topologies, whose draws share a spectral range). Then each step s keeps only its own
condition, <Y_s - lo X_s, hi X_s - Y_s> >= 0 (the 1 x 1 case of the LMI; no symmetry across steps, which needs one
W): necessary for every W_s of the class, so again an upper bound, now over every sequence.

An explicit mixing may also be a **sequence** W_0, W_1, ... (an (S, m, m) stack or a list of matrices): round t
mixes with W_t, as the papers' random topologies do (a fresh draw each round; DFedSGPSM's time-varying column-
stochastic P(t), card dfedsgpsm §2). Every step is still a linear combination of the points, so the PEP stays exact
for that sequence; push-sum's weights w^t = P_{t-1} ... P_0 1 are numbers fixed by the sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ExplicitMixing", "PushSumMixing", "SpectralClass", "as_mixing"]

_TOL = 1e-9


def _stack(M, name: str) -> np.ndarray:
    """A float array of shape (m, m), or (S, m, m) for a sequence (a list of matrices, sparse ones allowed)."""
    if isinstance(M, (list, tuple)) and M and (hasattr(M[0], "toarray") or np.ndim(M[0]) == 2):
        M = [m.toarray() if hasattr(m, "toarray") else m for m in M]
    try:
        A = np.asarray(M.toarray() if hasattr(M, "toarray") else M, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an m x m matrix or a sequence of m x m matrices (one per round), got "
                         f"{type(M).__name__}") from None
    if A.ndim not in (2, 3) or A.shape[-1] != A.shape[-2] or A.shape[-1] < 1 or (A.ndim == 3 and A.shape[0] < 1):
        raise ValueError(f"{name} must be a square m x m matrix or an (S, m, m) stack of them (one per round), got "
                         f"shape {A.shape}")
    return A


def _rounds(A: np.ndarray) -> str:
    return "" if A.ndim == 2 else "round {t}: "


class _Explicit:
    """What the explicit mixings share: one matrix, or a sequence with W_t used in round t."""

    @property
    def matrices(self) -> np.ndarray:
        """The (S, m, m) stack of the rounds' matrices (S = 1 for a fixed matrix)."""
        M = self._matrix
        return M[None] if M.ndim == 2 else M

    @property
    def m(self) -> int:
        return self._matrix.shape[-1]

    @property
    def sequence(self) -> bool:
        return self._matrix.ndim == 3

    def matrix(self, t: int = 0) -> np.ndarray:
        """The matrix of round t (a fixed matrix ignores t)."""
        if not self.sequence:
            return self._matrix
        if t >= self._matrix.shape[0]:
            raise ValueError(f"the mixing sequence has {self._matrix.shape[0]} matrices but round {t} needs one; give "
                             "one matrix per round (at least T - 1)")
        return self._matrix[t]

    def rounds(self, S: int):
        """The same mixing restricted to its first S rounds (a fixed matrix is returned as is)."""
        if not self.sequence or S >= self._matrix.shape[0]:
            return self
        return type(self)(self._matrix[:max(S, 1)])

    def args(self) -> dict:
        """worst_case's keyword for this mixing, JSON-safe."""
        return {"W": self._matrix.tolist()}


@dataclass(frozen=True)
class ExplicitMixing(_Explicit):
    """A given mixing matrix W (m x m, symmetric, doubly stochastic), or a sequence of them (one per round)."""

    W: np.ndarray

    def __post_init__(self):
        W = _stack(self.W, "W")
        for t, Wt in enumerate(W[None] if W.ndim == 2 else W):
            where = _rounds(W).format(t=t)
            if not np.all(np.isfinite(Wt)):
                raise ValueError(f"{where}W has a non-finite entry; give a finite symmetric doubly stochastic matrix")
            if not np.allclose(Wt, Wt.T, atol=_TOL):
                raise ValueError(f"{where}W is not symmetric; the PEP models Definition 1's symmetric doubly "
                                 "stochastic W (push-sum's column-stochastic P: the algorithms sgp, dfedsgpm, "
                                 "dfedsgpsm-unnormalized)")
            if not (np.allclose(Wt.sum(axis=1), 1.0, atol=_TOL)):
                raise ValueError(f"{where}W is not doubly stochastic (rows of a symmetric W must sum to 1)")
            eig = np.linalg.eigvalsh(Wt)
            outside = eig[np.abs(eig) > 1 + _TOL]
            if outside.size:
                raise ValueError(f"{where}W has the eigenvalue {outside[np.argmax(np.abs(outside))]:.6g}, outside "
                                 "[-1, 1]: it is not a mixing matrix (a symmetric doubly stochastic W, nonnegative, "
                                 "has its spectrum in [-1, 1]); give nonnegative weights, e.g. W_lambda(m, lam) or "
                                 "dfltheory.topology's mixing matrices")
        object.__setattr__(self, "W", W)

    @property
    def _matrix(self) -> np.ndarray:
        return self.W

    def power(self, Q: int, t: int = 0) -> np.ndarray:
        return np.linalg.matrix_power(self.matrix(t), Q)

    def lam(self) -> float:
        """Second largest eigenvalue modulus of W (lambda of Definition 1), the largest over a sequence's rounds; 0
        for m = 1. Each gossip step of a sequence contracts the disagreement by at most this lambda."""
        if self.m == 1:
            return 0.0
        return float(max(np.sort(np.abs(np.linalg.eigvalsh(Wt)))[-2] for Wt in self.matrices))

    def describe(self) -> str:
        if self.sequence:
            return (f"explicit W sequence ({self.W.shape[0]} rounds, {self.m} x {self.m}, largest lambda = "
                    f"{self.lam():.6g})")
        return f"explicit W ({self.m} x {self.m}, lambda = {self.lam():.6g})"


@dataclass(frozen=True)
class SpectralClass:
    """Every symmetric doubly stochastic W with nonunit eigenvalues in [lo, hi], -1 <= lo <= hi < 1; with ``varying``
    every sequence of such matrices, one per gossip step."""

    lo: float
    hi: float
    varying: bool = False

    def __post_init__(self):
        lo, hi = float(self.lo), float(self.hi)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError(f"the spectral range (--lambda-range LO HI, spectral=(lo, hi)) [{lo}, {hi}] must be "
                             "finite")
        if not (-1.0 <= lo <= hi < 1.0):
            raise ValueError(f"the spectral range (--lambda-range LO HI, spectral=(lo, hi)) [{lo}, {hi}] needs -1 <= "
                             "lo <= hi < 1 (hi = 1 allows a disconnected network, which never reaches consensus)")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "varying", bool(self.varying))

    @classmethod
    def from_lambda(cls, lam: float) -> "SpectralClass":
        """The class [-lam, lam]: every W whose second largest eigenvalue modulus is at most lam."""
        return cls(-float(lam), float(lam))

    def lam(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    def args(self) -> dict:
        """worst_case's keywords for this mixing, JSON-safe."""
        return {"spectral": [self.lo, self.hi], **({"time_varying": True} if self.varying else {})}

    def describe(self) -> str:
        if self.varying:
            return (f"time-varying spectral class: every sequence of symmetric doubly stochastic W_t with nonunit "
                    f"eigenvalues in [{self.lo:g}, {self.hi:g}], one per gossip step")
        return (f"spectral class: every symmetric doubly stochastic W with nonunit eigenvalues in "
                f"[{self.lo:g}, {self.hi:g}]")


@dataclass(frozen=True)
class PushSumMixing(_Explicit):
    """A given column-stochastic P (m x m, nonnegative, columns summing to 1, positive diagonal), or a sequence of
    them (one per round): push-sum's x <- P_t x, w <- P_t w (card dfedsgpsm §3.1 lines 15-16; receiver row, sender
    column). The push-sum weights w^t = P_{t-1} ... P_0 1 depend on the matrices only, so the de-biased points x / w
    are linear combinations of the PEP's points."""

    P: np.ndarray

    def __post_init__(self):
        P = _stack(self.P, "P")
        for t, Pt in enumerate(P[None] if P.ndim == 2 else P):
            where = _rounds(P).format(t=t)
            if not np.all(np.isfinite(Pt)) or np.any(Pt < -_TOL):
                raise ValueError(f"{where}P must be finite and nonnegative (a column-stochastic push-sum matrix)")
            if not np.allclose(Pt.sum(axis=0), 1.0, atol=_TOL):
                raise ValueError(f"{where}P is not column-stochastic (every column must sum to 1: receiver row, "
                                 "sender column)")
            if np.any(np.diag(Pt) <= 0):
                raise ValueError(f"{where}P needs a positive diagonal (every agent keeps a share: the self-loop of "
                                 "card dfedsgpsm §2)")
        object.__setattr__(self, "P", P)

    @property
    def _matrix(self) -> np.ndarray:
        return self.P

    def describe(self) -> str:
        if self.sequence:
            return f"column-stochastic P sequence ({self.P.shape[0]} rounds, {self.m} x {self.m}, push-sum)"
        return f"column-stochastic P ({self.m} x {self.m}, push-sum)"


def as_mixing(W=None, spectral=None, time_varying: bool = False):
    """The mixing representation from exactly one of ``W`` (a matrix, a sequence of matrices, one per round, or
    :class:`ExplicitMixing`) and ``spectral`` (a pair (lo, hi) or :class:`SpectralClass`; ``time_varying``: every
    sequence of matrices of the class)."""
    if (W is None) == (spectral is None):
        raise ValueError("give exactly one of W= (an explicit mixing matrix) and spectral=(lo, hi) "
                         "(the spectral class)")
    if W is not None:
        if time_varying:
            raise ValueError("time_varying applies to the spectral class; an explicit time-varying mixing is a "
                             "sequence W=[W_0, W_1, ...]")
        return W if isinstance(W, (ExplicitMixing, PushSumMixing)) else ExplicitMixing(W)
    if isinstance(spectral, SpectralClass):
        return SpectralClass(spectral.lo, spectral.hi, True) if time_varying else spectral
    try:
        lo, hi = spectral
    except (TypeError, ValueError):
        raise ValueError(f"spectral must be a pair (lo, hi), got {spectral!r}") from None
    return SpectralClass(lo, hi, time_varying)
