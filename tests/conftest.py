"""Shared fixtures: one torch thread per xdist worker; a toy theorem with a hand-checkable bound."""

import os

import pytest
import sympy as sp
from hypothesis import settings

from dfltheory.bounds import COMMON, Condition, Source, Theorem

# `make test` is reproducible (the same examples every run); HYPOTHESIS_PROFILE=explore draws new ones.
settings.register_profile("repeatable", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(autouse=True)
def one_torch_thread():
    """`make test` runs two workers on two cores: several torch threads per worker oversubscribe them and spin
    (up to 100x slower). Reset before every test, since a test may change it (e.g. `train --threads`)."""
    import torch

    torch.set_num_threads(1)


V = {k: COMMON[k] for k in ("eta", "K", "T", "L", "lam", "f0_minus_fstar", "sigma_l", "c")}
eta, K, T, L, lam, D, sig, c = (V[k].symbol for k in V)


@pytest.fixture(scope="session")
def toy():
    """bound = D/(eta K T) + eta L sig^2 + eta^2 L^2 K^2 / (1-lam)^2, for eta <= 1/(4 K L)."""
    return Theorem(
        id="toy.thm1", paper="toy", kind="theorem", title="toy local-SGD bound",
        quantity="min_t E||grad f(x_bar^t)||^2",
        terms={"optimization": D / (eta * K * T), "noise": eta * L * sig**2,
               "consensus": eta**2 * L**2 * K**2 / (1 - lam) ** 2},
        variables=tuple(V.values()),
        source=Source("999", "L1-2", "eq. (1)", "toy §1"),
        conditions=(Condition(eta <= 1 / (4 * K * L), "step size"),
                    Condition(eta * K * L < sp.Rational(1, 2), "strict step size")),
    )


@pytest.fixture(scope="session")
def toy_corollary():
    """Schedule eta = c/sqrt(K T); stated rate O(1/sqrt(KT) + 1/T) (it drops the noise term's sqrt(K/T))."""
    return Theorem(
        id="toy.cor1", paper="toy", kind="corollary", title="toy rate", quantity="min_t E||grad f||^2",
        terms={"optimization": D / sp.sqrt(K * T), "consensus": K / T},
        variables=tuple(V.values()), source=Source("999", "L3"), big_o=True,
        parent="toy.thm1", schedule={"eta": c / sp.sqrt(K * T)},
    )
