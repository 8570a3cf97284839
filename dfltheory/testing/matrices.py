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
