"""The client chunk from the memory at hand (issue 23, item 2; dfltheory.empirical.chunk), with fake memory
budgets: all clients in one call where they fit, the largest chunk that fits where they do not, a refusal with the
numbers where one client does not fit or a given --client-chunk is too large; the chosen chunk changes no result."""

from __future__ import annotations

import pytest
import torch

from dfltheory.empirical import chunk
from dfltheory.empirical.runner import build

GIB = 2.0**30


def test_choose_and_check_with_fake_budgets():
    assert chunk.choose(100, 0.1 * GIB, 80 * GIB) is None  # 10 GiB of 40: one call
    assert chunk.choose(100, 1.0 * GIB, 80 * GIB) == 40  # 100 GiB needed, 40 allowed
    assert chunk.choose(100, 1.0 * GIB, None) is None  # unknown free memory: no choice
    with pytest.raises(ValueError, match=r"one client's local gradient needs about 60 GiB and 80 GiB is free"):
        chunk.choose(100, 60 * GIB, 80 * GIB)
    chunk.check(40, 100, 1.0 * GIB, 80 * GIB)  # fits
    with pytest.raises(ValueError, match=r"--client-chunk 50 needs about 50 GiB .* give --client-chunk 40 or less"):
        chunk.check(50, 100, 1.0 * GIB, 80 * GIB)


def test_per_client_bytes_counts_the_activations_of_a_batch_and_the_parameter_sized_tensors():
    module = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 10))
    sample = torch.zeros(1, 1, 8, 8)
    per = chunk.per_client_bytes(module, sample, batch=32, dim=650)
    assert per == chunk.FACTOR * 32 * (64 + 10) * 4 + 6 * 650 * 4


CFG = {"algo": "dfedsam", "dataset": "digits", "n": 8, "K": 2, "batch_size": 16, "lr": 0.05, "seed": 0,
       "topology": "ring", "weights": "metropolis"}


def test_the_engine_chooses_a_chunk_that_fits_and_it_changes_no_result(monkeypatch):
    free, _ = build(CFG)
    assert free.client_chunk is None  # digits' MLP fits this machine in one call
    per = chunk.per_client_bytes(free.model.module, free.x_train[:1], 16, free.model.dim)
    monkeypatch.setattr(chunk, "free_bytes", lambda device: 3.5 * per / chunk.FRACTION)  # room for 3 clients
    tight, _ = build(CFG)
    assert tight.client_chunk == 3
    for _ in range(2):
        free.round()
        tight.round()
    assert torch.allclose(free.state["x"], tight.state["x"], atol=1e-6)
    with pytest.raises(ValueError, match="--client-chunk 8 needs about"):
        build({**CFG, "client_chunk": 8})
    monkeypatch.setattr(chunk, "free_bytes", lambda device: 0.5 * per / chunk.FRACTION)
    with pytest.raises(ValueError, match="one client's local gradient needs about"):
        build(CFG)
