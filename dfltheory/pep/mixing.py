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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ExplicitMixing", "PushSumMixing", "SpectralClass", "as_mixing"]

_TOL = 1e-9


@dataclass(frozen=True)
class ExplicitMixing:
    """A given mixing matrix W (m x m, symmetric, doubly stochastic)."""

    W: np.ndarray

    def __post_init__(self):
        W = np.asarray(self.W.toarray() if hasattr(self.W, "toarray") else self.W, dtype=float)
        if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 1:
            raise ValueError(f"W must be a square m x m matrix, got shape {W.shape}")
        if not np.all(np.isfinite(W)):
            raise ValueError("W has a non-finite entry; give a finite symmetric doubly stochastic matrix")
        if not np.allclose(W, W.T, atol=_TOL):
            raise ValueError("W is not symmetric; the PEP models Definition 1's symmetric doubly stochastic W "
                             "(push-sum's column-stochastic P is not covered yet)")
        if not (np.allclose(W.sum(axis=1), 1.0, atol=_TOL)):
            raise ValueError("W is not doubly stochastic (rows of a symmetric W must sum to 1)")
        object.__setattr__(self, "W", W)

    @property
    def m(self) -> int:
        return self.W.shape[0]

    def power(self, Q: int) -> np.ndarray:
        return np.linalg.matrix_power(self.W, Q)

    def lam(self) -> float:
        """Second largest eigenvalue modulus of W (lambda of Definition 1); 0 for m = 1."""
        if self.m == 1:
            return 0.0
        ev = np.sort(np.abs(np.linalg.eigvalsh(self.W)))
        return float(ev[-2])

    def describe(self) -> str:
        return f"explicit W ({self.m} x {self.m}, lambda = {self.lam():.6g})"

    def args(self) -> dict:
        """worst_case's keyword for this mixing, JSON-safe."""
        return {"W": self.W.tolist()}


@dataclass(frozen=True)
class SpectralClass:
    """Every symmetric doubly stochastic W with nonunit eigenvalues in [lo, hi], -1 <= lo <= hi < 1."""

    lo: float
    hi: float

    def __post_init__(self):
        lo, hi = float(self.lo), float(self.hi)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError(f"spectral range [{lo}, {hi}] must be finite")
        if not (-1.0 <= lo <= hi < 1.0):
            raise ValueError(f"spectral range [{lo}, {hi}] needs -1 <= lo <= hi < 1 (hi = 1 allows a disconnected "
                             "network, which never reaches consensus)")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @classmethod
    def from_lambda(cls, lam: float) -> "SpectralClass":
        """The class [-lam, lam]: every W whose second largest eigenvalue modulus is at most lam."""
        return cls(-float(lam), float(lam))

    def lam(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    def args(self) -> dict:
        """worst_case's keyword for this mixing, JSON-safe."""
        return {"spectral": [self.lo, self.hi]}

    def describe(self) -> str:
        return (f"spectral class: every symmetric doubly stochastic W with nonunit eigenvalues in "
                f"[{self.lo:g}, {self.hi:g}]")


@dataclass(frozen=True)
class PushSumMixing:
    """A given column-stochastic P (m x m, nonnegative, columns summing to 1, positive diagonal): push-sum's
    x <- P x, w <- P w (card dfedsgpsm §3.1 lines 15-16; receiver row, sender column). The push-sum weights
    w^t = P^t 1 depend on P only, so the de-biased points x / w are linear combinations of the PEP's points."""

    P: np.ndarray

    def __post_init__(self):
        P = np.asarray(self.P.toarray() if hasattr(self.P, "toarray") else self.P, dtype=float)
        if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] < 1:
            raise ValueError(f"P must be a square m x m matrix, got shape {P.shape}")
        if not np.all(np.isfinite(P)) or np.any(P < -_TOL):
            raise ValueError("P must be finite and nonnegative (a column-stochastic push-sum matrix)")
        if not np.allclose(P.sum(axis=0), 1.0, atol=_TOL):
            raise ValueError("P is not column-stochastic (every column must sum to 1: receiver row, sender column)")
        if np.any(np.diag(P) <= 0):
            raise ValueError("P needs a positive diagonal (every agent keeps a share: the self-loop of card dfedsgpsm "
                             "§2)")
        object.__setattr__(self, "P", P)

    @property
    def m(self) -> int:
        return self.P.shape[0]

    def describe(self) -> str:
        return f"column-stochastic P ({self.m} x {self.m}, push-sum)"

    def args(self) -> dict:
        return {"W": self.P.tolist()}


def as_mixing(W=None, spectral=None):
    """The mixing representation from exactly one of ``W`` (a matrix or :class:`ExplicitMixing`) and ``spectral``
    (a pair (lo, hi) or :class:`SpectralClass`)."""
    if (W is None) == (spectral is None):
        raise ValueError("give exactly one of W= (an explicit mixing matrix) and spectral=(lo, hi) "
                         "(the spectral class)")
    if W is not None:
        return W if isinstance(W, (ExplicitMixing, PushSumMixing)) else ExplicitMixing(W)
    if isinstance(spectral, SpectralClass):
        return spectral
    try:
        lo, hi = spectral
    except (TypeError, ValueError):
        raise ValueError(f"spectral must be a pair (lo, hi), got {spectral!r}") from None
    return SpectralClass(lo, hi)
