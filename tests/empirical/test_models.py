"""Tests of dfltheory.empirical.models: architectures, vmap over stacked parameters, losses."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, stack_module_state, vmap

from dfltheory.empirical.models import MODELS, loss_fn, make_model
from dfltheory.testing import official

CASES = [  # (model, input shape, number of classes, stacked copies, batch)
    ("linear", (7,), 1, 3, 4),
    ("logreg", (1, 8, 8), 10, 3, 4),
    ("mlp", (1, 28, 28), 10, 3, 4),
    ("cnn", (1, 8, 8), 10, 3, 4),
    ("cnn", (3, 32, 32), 10, 3, 2),
    ("vgg11", (3, 32, 32), 10, 3, 1),
    ("resnet18", (3, 32, 32), 100, 3, 1),
]


def _stacked(name, shape, k, copies):
    torch.manual_seed(0)
    models = [make_model(name, shape, k) for _ in range(copies)]
    params, buffers = stack_module_state(models)
    return models, params, buffers


@pytest.mark.parametrize("name,shape,k,copies,batch", CASES)
def test_vmap_forward_over_stacked_params_matches_separate_calls(name, shape, k, copies, batch):
    models, params, buffers = _stacked(name, shape, k, copies)
    assert buffers == {}  # no running statistics: vmap-safe
    x = torch.randn(copies, batch, *shape, generator=torch.Generator().manual_seed(1))
    base = models[0]
    out = vmap(lambda p, xb: functional_call(base, p, (xb,)))(params, x)
    ref = torch.stack([m(xb) for m, xb in zip(models, x)])
    assert out.shape == (copies, batch, k)
    assert not torch.allclose(ref[0], ref[1])  # the copies really differ
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)


def test_vmap_grad_over_stacked_params_matches_autograd():
    models, params, _ = _stacked("cnn", (1, 8, 8), 10, 3)
    gen = torch.Generator().manual_seed(2)
    x, y = torch.randn(3, 5, 1, 8, 8, generator=gen), torch.randint(0, 10, (3, 5), generator=gen)
    loss = loss_fn("classification")
    grads = vmap(grad(lambda p, xb, yb: loss(functional_call(models[0], p, (xb,)), yb)))(params, x, y)
    for i, m in enumerate(models):
        m.zero_grad()
        loss(m(x[i]), y[i]).backward()
        for n, p in m.named_parameters():
            torch.testing.assert_close(grads[n][i], p.grad, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_batchnorm_only_in_vgg11_bn_and_groupnorm_where_normalised(name):
    shape, k = {"linear": ((7,), 10), "split-linear": ((2, 7), 1)}.get(name, ((3, 32, 32), 10))
    modules = list(make_model(name, shape, k).modules())
    assert any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in modules) == (name == "vgg11-bn")
    assert not any(isinstance(m, nn.Dropout) for m in modules)
    n_gn = sum(isinstance(m, nn.GroupNorm) for m in modules)
    assert (n_gn > 0) == (name in ("vgg11", "resnet18", "resnet18-imagenet"))


@pytest.mark.parametrize("name,shape,k,count", [
    ("cnn", (3, 32, 32), 10, 797_962),  # conv 64-64 (5x5) + FC 384-192-10, the papers' CIFAR-10 CNN
    ("mlp", (1, 28, 28), 10, 199_210),  # mnist_2NN: 784-200-200-10
    ("resnet18", (3, 32, 32), 10, 11_173_962),  # CIFAR ResNet-18 (GroupNorm has BatchNorm's affine parameters)
    ("resnet18-imagenet", (3, 32, 32), 100, 11_227_812),  # torchvision's resnet18, GroupNorm, FC 512-100
    ("logreg", (64,), 10, 650),
])
def test_parameter_counts_match_the_papers_architectures(name, shape, k, count):
    assert sum(p.numel() for p in make_model(name, shape, k).parameters()) == count


def test_small_images_fit_every_image_model():
    x = torch.randn(2, 1, 8, 8)
    for name in ("logreg", "mlp", "cnn", "vgg11", "resnet18", "resnet18-imagenet", "vgg11-bn"):
        assert make_model(name, (1, 8, 8), 10)(x).shape == (2, 10)


@pytest.mark.skipif(not official.available(), reason=f"the authors' code is not at {official.OFFICIAL}")
@pytest.mark.parametrize("ours,theirs,classes", [("resnet18-imagenet", "ResNet18", 100), ("cnn", "LeNet", 10)])
def test_models_compute_what_the_dfedcata_authors_models_compute(ours, theirs, classes, monkeypatch):
    """Their models.client_model (imported, not copied), our parameters copied in order: the same outputs. Their
    ResNet18 loads ImageNet weights (``pretrained=True``); here torchvision builds it without any."""
    import torchvision

    plain = torchvision.models.resnet18
    monkeypatch.setattr(torchvision.models, "resnet18", lambda pretrained=False, **kw: plain(weights=None, **kw))
    with official.official_modules() as code:
        reference = code.models.client_model(theirs)
    torch.manual_seed(0)
    model = make_model(ours, (3, 32, 32), classes)
    shapes = [p.shape for p in model.parameters()]
    assert shapes == [p.shape for p in reference.parameters()]
    assert not any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in reference.modules())
    torch.nn.utils.vector_to_parameters(torch.nn.utils.parameters_to_vector(model.parameters()),
                                        reference.parameters())
    x = torch.randn(3, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(model(x), reference(x), rtol=0, atol=1e-5)


def test_linear_model_has_no_bias():
    model = make_model("linear", (5,), 1)
    assert [n for n, _ in model.named_parameters()] == ["1.weight"]


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="logreg, mlp, mlp-small, cnn, vgg11, resnet18"):
        make_model("alexnet", (3, 32, 32), 10)
    with pytest.raises(ValueError, match=r"image input \(C, H, W\)"):
        make_model("cnn", (20,), 2)
    with pytest.raises(ValueError, match="groups"):
        make_model("resnet18", (3, 32, 32), 10, groups=3)
    with pytest.raises(ValueError, match="num_classes"):
        make_model("mlp", (4,), 0)
    with pytest.raises(ValueError, match="classification, regression"):
        loss_fn("ranking")


def test_losses():
    gen = torch.Generator().manual_seed(0)
    logits, y = torch.randn(6, 4, generator=gen), torch.randint(0, 4, (6,), generator=gen)
    assert loss_fn("classification")(logits, y).item() == pytest.approx(F.cross_entropy(logits, y).item())
    pred, t = torch.tensor([[1.0], [2.0], [4.0]]), torch.tensor([0.0, 2.0, 1.0])
    assert loss_fn("regression")(pred, t).item() == pytest.approx(0.5 * (1 + 0 + 9) / 3)
    assert loss_fn("regression")(pred.squeeze(1), t).item() == pytest.approx(0.5 * 10 / 3)
    with pytest.raises(ValueError, match="does not match"):
        loss_fn("regression")(torch.zeros(3, 2), t)
