"""The engine's compiled local step (``Engine(compile=True)``, ``train --compile``): the uncompiled trajectories to
float32 rounding, one compilation per phase and none after the first round, clear refusals."""

import json

import pytest
import torch
from torch._dynamo.utils import counters

from dfltheory.empirical import algorithms as A
from dfltheory.empirical import data as D
from dfltheory.empirical.communication import Mixing
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.models import loss_fn, make_model
from dfltheory.empirical.runner import run
from dfltheory.topology import build

M = 6
HP = {"dfedcata": {"mode": "A", "clip": 10.0, "weight_decay": 5e-4}, "dfedpgp": {"lr_v": 0.02, "momentum": 0.9}}


@pytest.fixture(scope="module")
def digits():
    return D.load("digits", M, partition="dirichlet", alpha=0.5, seed=0)


def engine(data, algo, compile, **kw):
    torch.manual_seed(0)
    model = FlatModel(make_model("mlp", data.input_shape, data.num_classes), loss_fn(data.task))
    a = A.make(algo, **HP.get(algo, {}))
    W = build("ring", M, weights="push-sum" if a.stochastic == "column" else "metropolis", seed=0)
    return Engine(model, data, a, Mixing(W), K=3, lr=0.05, lr_decay=0.9, batch_size=8, seed=0, compile=compile,
                  **kw)


def graphs() -> int:
    return counters["stats"]["unique_graphs"]


@pytest.mark.parametrize("algo", ["dfedavg", "dfedsam", "dfedcata", "dfedadmm", "dfedpgp"])
def test_compiled_step_gives_the_uncompiled_trajectory(digits, algo):
    """4 rounds with a decaying lr: every client-state and communication-state entry within 1e-5 relative of the
    uncompiled engine's; one compiled function (the round's K local steps in one call, DFedPGP's personal and shared
    steps included) in the first round and no recompilation after it, although lr changes every round."""
    plain, compiled = engine(digits, algo, False), engine(digits, algo, True)
    start = graphs()
    for r in range(4):
        plain.round()
        compiled.round()
        if r == 0:
            assert graphs() - start == 1
            after_first = graphs()
        for name, want in [*plain.state.items(), *plain.cstate.items()]:
            got = (compiled.state | compiled.cstate)[name]
            rel = float((got - want).abs().max() / want.abs().max().clamp_min(1e-30))
            assert rel < 1e-5, f"{algo} round {r}: {name} differs by {rel:.1e} (relative)"
    assert graphs() == after_first, "the compiled step recompiled after the first round"
    assert not torch.equal(compiled.state["x"], engine(digits, algo, False).state["x"])  # it trained


def test_compile_refuses_epochs_and_sequential(digits):
    with pytest.raises(ValueError, match="masked steps.*drop --compile"):
        engine(digits, "dfedavg", True, epochs=True)
    with pytest.raises(ValueError, match="sequential schedule.*drop --compile"):
        engine(digits, "dfedcata", True, sequential=True)


def test_compile_without_a_cpp_compiler_names_the_fix(digits, monkeypatch):
    import torch._inductor.cpp_builder as builder

    def missing():
        raise RuntimeError("no compiler")

    monkeypatch.setattr(builder, "get_cpp_compiler", missing)
    with pytest.raises(ValueError, match="needs a C\\+\\+ compiler.*drop --compile"):  # one line in the CLI
        engine(digits, "dfedavg", True)


def test_train_compile_is_stored_and_resumes(tmp_path):
    """``compile`` goes to config.json; 2 rounds and a resume to 3 give the uninterrupted 3 rounds bit for bit."""
    cfg = {"algo": "dfedavg", "dataset": "digits", "n": 4, "rounds": 3, "K": 2, "batch_size": 8, "lr": 0.05,
           "lr_decay": 0.9, "compile": True, "progress": False, "local_eval": False, "checkpoint_every": 1}
    whole = run({**cfg, "out": str(tmp_path / "whole")})
    run({**cfg, "rounds": 2, "out": str(tmp_path / "part")})
    resumed = run({**cfg, "out": str(tmp_path / "part")}, resume=True)
    assert json.loads((tmp_path / "part" / "config.json").read_text())["compile"] is True
    assert resumed["last"] == whole["last"]
    a, b = (torch.load(tmp_path / d / "checkpoint.pt", weights_only=True)["state"]["x"] for d in ("whole", "part"))
    assert torch.equal(a, b)


def test_more_local_steps_than_fused_compile_one_function_per_phase(digits, monkeypatch):
    """Past FUSED_STEPS the steps run one call each: DFedPGP's personal and shared phases are then two compiled
    functions, and the trajectory is the fused one's to float rounding."""
    import dfltheory.empirical.engine as E

    fused = engine(digits, "dfedpgp", True)
    monkeypatch.setattr(E, "FUSED_STEPS", 1)
    start = graphs()
    stepwise = engine(digits, "dfedpgp", True)
    stepwise.round()
    assert graphs() - start == 2
    fused.round()
    assert float((fused.state["x"] - stepwise.state["x"]).abs().max()) < 1e-5


def test_large_minibatches_are_not_gathered_at_once(digits, monkeypatch):
    """The fused call gathers the round's K minibatches at once; past FUSED_BYTES (image batches) the steps run one
    call each, which the memory budget (one batch per client) covers."""
    import dfltheory.empirical.engine as E

    assert engine(digits, "dfedavg", True)._steps is not None
    monkeypatch.setattr(E, "FUSED_BYTES", 1)
    stepwise = engine(digits, "dfedavg", True)
    assert stepwise._steps is None
    stepwise.round()
    assert torch.isfinite(stepwise.state["x"]).all()
