"""Small fixed mixing matrices for tests and benchmarks (dense numpy)."""

from __future__ import annotations

import numpy as np


def ring_matrix(m: int, self_weight: float = 1 / 3) -> np.ndarray:
    """The symmetric doubly stochastic ring W = s I + (1 - s)/2 (S + S^T), S the cyclic shift (m >= 3): with
    s = 1/3 the Metropolis weights of the ring, the DFedCata code's mean of i - 1, i, i + 1."""
    if m < 3:
        raise ValueError(f"a ring needs m >= 3 clients, got {m}")
    if not 0.0 <= self_weight <= 1.0:
        raise ValueError(f"self_weight must lie in [0, 1], got {self_weight}")
    shift = np.roll(np.eye(m), 1, axis=1)
    return self_weight * np.eye(m) + (1.0 - self_weight) / 2.0 * (shift + shift.T)


class RandomPushSumTopology:
    """A time-varying column-stochastic P_t on m clients (a topology object: ``time_varying``, ``matrix(t)``): client
    i keeps a share and pushes to 2 other clients drawn at round t, equal shares."""

    time_varying = True

    def __init__(self, m: int):
        self.m = m

    def matrix(self, t: int) -> np.ndarray:
        rng = np.random.default_rng(100 + t)
        P = np.eye(self.m)
        for i in range(self.m):
            P[rng.choice(np.delete(np.arange(self.m), i), 2, replace=False), i] = 1
        return P / P.sum(0, keepdims=True)


class RandomPermutationTopology:
    """A time-varying symmetric doubly stochastic W_t = (I + P_t + P_t^T)/3 on m clients, P_t a permutation drawn at
    round t (a topology object: ``time_varying``, ``matrix(t)``)."""

    time_varying = True

    def __init__(self, m: int):
        self.m = m

    def matrix(self, t: int) -> np.ndarray:
        P = np.eye(self.m)[np.random.default_rng(t).permutation(self.m)]
        return (np.eye(self.m) + P + P.T) / 3
