"""Initial weights from a file: torchvision's resnet18 layout into resnet18-imagenet as the DFedCata code does (convs
taken, BatchNorm -> new GroupNorm, the 1000-class classifier kept), the model's own layout, and bad files."""

import json

import pytest
import torch
import torchvision

from dfltheory import cli
from dfltheory.empirical.models import make_model
from dfltheory.empirical.weights import load_initial_weights, torchvision_resnet18_name


@pytest.fixture(scope="module")
def imagenet_like(tmp_path_factory):
    """A torchvision resnet18 state dict (random weights: nothing is downloaded), BatchNorm affine away from 1/0."""
    torch.manual_seed(1)
    tv = torchvision.models.resnet18(weights=None)
    with torch.no_grad():
        for mod in tv.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.weight.uniform_(2, 3)
                mod.running_mean.uniform_(1, 2)
    path = tmp_path_factory.mktemp("w") / "resnet18.pt"
    torch.save(tv.state_dict(), path)
    return path, tv.state_dict()


def test_torchvision_resnet18_names_cover_the_model_one_to_one():
    names = [n for n, _ in make_model("resnet18-imagenet", (3, 32, 32), 10).named_parameters()]
    theirs = [n for n, _ in torchvision.models.resnet18(weights=None).named_parameters()]
    assert [torchvision_resnet18_name(n) for n in names] == theirs


def test_imagenet_weights_go_in_as_the_dfedcata_code_takes_them(imagenet_like):
    path, sd = imagenet_like
    torch.manual_seed(0)
    model = make_model("resnet18-imagenet", (3, 32, 32), 100)
    head = model.head.weight.detach().clone()
    note = load_initial_weights(model, "resnet18-imagenet", path)
    params = dict(model.named_parameters())
    convs = [n for n in params if "conv" in n or n in ("stem.0.weight",) or n.endswith("shortcut.0.weight")]
    assert len(convs) == 20
    for n in convs:
        assert torch.equal(params[n], sd[torchvision_resnet18_name(n)])
    norms = [n for n in params if ".gn" in n or n.startswith("stem.1") or "shortcut.1" in n]
    assert len(norms) == 40
    for n in norms:  # new GroupNorm(2, C): weight 1, bias 0, as the code's replacement layers
        fresh = torch.ones_like(params[n]) if n.endswith("weight") else torch.zeros_like(params[n])
        assert torch.equal(params[n], fresh)
    assert torch.equal(model.head.weight, head)  # (1000, 512) in the file, (100, 512) here
    assert note.startswith(f"took 20 of 62 parameter tensors from {path} (torchvision's resnet18)")
    assert "40 BatchNorm in the file, GroupNorm here" in note and "2 another shape (head.weight (1000, 512) vs" in note


def test_a_file_of_the_models_own_layout_is_taken_whole(tmp_path):
    torch.manual_seed(3)
    source = make_model("mlp", (64,), 10)
    torch.save(source.state_dict(), tmp_path / "mlp.pt")
    torch.manual_seed(4)
    model = make_model("mlp", (64,), 10)
    note = load_initial_weights(model, "mlp", tmp_path / "mlp.pt")
    assert note == f"took 6 of 6 parameter tensors from {tmp_path / 'mlp.pt'} (the model's names)"
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), source.parameters()))


def test_train_starts_every_client_from_the_file(tmp_path, capsys):
    torch.manual_seed(5)
    source = make_model("mlp", (64,), 10)
    torch.save(source.state_dict(), tmp_path / "x0.pt")
    out = tmp_path / "run"
    assert cli.main(["train", "--algo", "dfedavg", "--dataset", "digits", "--n", "4", "--rounds", "1", "--K", "1",
                     "--init-weights", str(tmp_path / "x0.pt"), "--out", str(out), "--no-progress",
                     "--checkpoint-every", "1"]) == 0
    assert "initial weights: took 6 of 6 parameter tensors" in capsys.readouterr().err
    assert json.loads((out / "config.json").read_text())["init_weights"] == str(tmp_path / "x0.pt")
    from dfltheory.empirical import runner

    engine, _ = runner.build({**json.loads((out / "config.json").read_text()), "out": out})
    x0 = torch.cat([p.detach().reshape(-1) for p in source.parameters()])
    assert torch.equal(engine.state["x"], x0.expand(4, -1))


def mlp_state(**changes):
    torch.manual_seed(6)
    return {**make_model("mlp", (64,), 10).state_dict(), **changes}


@pytest.mark.parametrize("content,match", [
    (None, "does not exist or is not a regular file"),
    ("", "the path is empty"),
    ("dir", "is a directory"),
    (b"not a torch file", "is not a state dict that torch.load can read safely"),
    ({"weights": [1, 2]}, "holds no state dict"),
    ({0: torch.zeros(3), 1: torch.zeros(2)}, r"holds no state dict \(a dict of parameter names, strings"),
    ({"other.weight": torch.zeros(3, 3)}, "no tensor of .* fits model 'mlp'"),
    ("int64", r"holds 1.weight as torch.int64, not floating-point parameters"),
    ("nan", r"holds NaN or infinite entries in 1.bias"),
])
def test_bad_files_are_refused_naming_the_fix(tmp_path, content, match):
    path = "" if content == "" else tmp_path / "w.pt"
    if content == "":
        pass
    elif content == "dir":
        path.mkdir()
    elif content == "int64":
        torch.save(mlp_state(**{"1.weight": torch.zeros(200, 64, dtype=torch.long)}), path)
    elif content == "nan":
        torch.save(mlp_state(**{"1.bias": torch.full((200,), float("nan"))}), path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        torch.save(content, path)
    with pytest.raises(ValueError, match=match) as err:
        load_initial_weights(make_model("mlp", (64,), 10), "mlp", path)
    assert "--init-weights" in str(err.value)


def test_a_wrapped_state_dict_is_read_and_tensors_that_fit_nothing_are_named(tmp_path):
    torch.save({"model": mlp_state(**{"extra.weight": torch.zeros(2)})}, tmp_path / "w.pt")
    note = load_initial_weights(make_model("mlp", (64,), 10), "mlp", tmp_path / "w.pt")
    assert note.startswith("took 6 of 6 parameter tensors") and "1 tensor(s) of the file fit no parameter of the " \
        "model (extra.weight)" in note
