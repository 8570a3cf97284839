"""Models of the papers' experiments, built to run under torch.func.functional_call + vmap.

The papers' ResNet-18 swaps BatchNorm for GroupNorm (dfedadmm.md §8, dfedsam.md §8, dfedpgp.md §8, dfedsgpsm.md
§8; dfedcata.md §8 names GroupNorm(2) in the authors' code), and we do the same in VGG-11: every model the recipes
use normalises with GroupNorm and has no buffers. ``vgg11-bn`` is the one model with BatchNorm (running statistics,
kept per client by the engine: :mod:`dfltheory.empirical.functional`). No model has dropout.

* ``linear``: x -> W x, no bias (regression; with ``synthetic-quadratic`` the weight is the x of the constants).
* ``logreg``: multinomial logistic regression, one affine layer.
* ``mlp``: 200-200 hidden ReLU layers ("mnist_2NN", dfedadmm.md §8, dfedsgpsm.md §8).
* ``mlp-small``: the same shape with 32-32 hidden units (d = 3,466 on digits against 55,210): the claims' runs
  (:mod:`dfltheory.verify.claims`), where the engine's rounds are memory-bound in m d on the CPU.
* ``cnn``: conv(C->64, 5) -> maxpool 2 -> conv(64->64, 5) -> maxpool 2 -> FC 384 -> FC 192 -> FC classes
  (dfedadmm.md §8, dfedsgpsm.md §8, dfedcata.md §8 "LeNet"). Inputs smaller than 16 pixels (digits, 8x8) get
  'same' padding so that both pools fit.
* ``vgg11``: VGG-11 convolution stack (Simonyan & Zisserman 2014) with GroupNorm and a 512-512-classes head
  (dfedsam.md §8, CIFAR-10); pools that would shrink a side below 1 are skipped.
* ``vgg11-bn``: the same with BatchNorm2d after every convolution (torchvision's ``vgg11_bn`` stack, our head):
  the BatchNorm reading of dfedsam.md §11 item 20 (whether DFedSAM's VGG-11 also swaps BatchNorm for GroupNorm is
  unclear). ``vgg11`` (GroupNorm) stays the model the recipes use.
* ``split-linear``: inputs (2, d) read as a = (a_u, a_v); prediction a_u^T u + a_v^T v, two bias-free Linear
  layers ``shared`` (u) and ``personal`` (v), the last one, so DFedPGP keeps v personal (``synthetic-personal``).
* ``resnet18``: CIFAR ResNet-18 (3x3 stem, no stem pool, BasicBlocks [2, 2, 2, 2]) with GroupNorm
  (dfedadmm.md §8, dfedsam.md §8, dfedpgp.md §8).
* ``resnet18-imagenet``: ResNet-18 as the DFedCata authors' code builds it (models.py ``ResNet18``:
  torchvision's ``resnet18``, ImageNet stem conv 7x7 stride 2 + maxpool 3x3 stride 2, every BatchNorm replaced by
  GroupNorm(2, C), FC 512 -> classes; dfedcata.md §8), from scratch: the code starts CIFAR-100 runs from ImageNet
  weights (``pretrained=True``), which are not shipped here; ``train --init-weights FILE`` takes them from a file of
  torchvision's resnet18 as the code does (:mod:`dfltheory.empirical.weights`).

The DFedCata code's ``LeNet`` is ``cnn`` (the same layers on 32x32x3 inputs; both flatten 64x5x5).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

MODELS = ("linear", "split-linear", "logreg", "mlp", "mlp-small", "cnn", "vgg11", "resnet18", "resnet18-imagenet",
          "vgg11-bn")
_VGG11 = (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")


def _image_shape(name, input_shape):
    if len(input_shape) != 3:
        raise ValueError(f"model {name!r} needs image input (C, H, W), got input_shape {tuple(input_shape)}; "
                         "use 'logreg', 'mlp', 'mlp-small' or 'linear' for vector data")
    return tuple(int(s) for s in input_shape)


def _cnn(input_shape, num_classes):
    c, h, w = _image_shape("cnn", input_shape)
    pad = 0 if min(h, w) >= 16 else 2
    for _ in range(2):
        h, w = (h + 2 * pad - 4) // 2, (w + 2 * pad - 4) // 2
    return nn.Sequential(
        nn.Conv2d(c, 64, 5, padding=pad), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(64, 64, 5, padding=pad), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(),
        nn.Linear(64 * h * w, 384), nn.ReLU(),
        nn.Linear(384, 192), nn.ReLU(),
        nn.Linear(192, num_classes),
    )


def _vgg11(input_shape, num_classes, groups, batchnorm=False):
    c, h, w = _image_shape("vgg11-bn" if batchnorm else "vgg11", input_shape)
    layers = []
    for v in _VGG11:
        if v == "M":
            if min(h, w) >= 2:
                layers.append(nn.MaxPool2d(2, 2))
                h, w = h // 2, w // 2
        else:
            layers += [nn.Conv2d(c, v, 3, padding=1), nn.BatchNorm2d(v) if batchnorm else nn.GroupNorm(groups, v),
                       nn.ReLU()]
            c = v
    return nn.Sequential(
        *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, 512), nn.ReLU(),
        nn.Linear(512, num_classes),
    )


class SplitLinear(nn.Module):
    """x of shape (..., 2, d) -> u^T x[..., 0, :] + v^T x[..., 1, :] (shape (..., 1)); u = ``shared.weight``,
    v = ``personal.weight`` (the last Linear layer: DFedPGP's personal part, FlatModel.last_linear)."""

    def __init__(self, dim):
        super().__init__()
        self.shared = nn.Linear(dim, 1, bias=False)
        self.personal = nn.Linear(dim, 1, bias=False)

    def forward(self, x):
        return self.shared(x[..., 0, :]) + self.personal(x[..., 1, :])


class _BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride, groups):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.gn1 = nn.GroupNorm(groups, c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.gn2 = nn.GroupNorm(groups, c_out)
        self.shortcut = nn.Sequential()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.GroupNorm(groups, c_out))

    def forward(self, x):
        out = F.relu(self.gn1(self.conv1(x)))
        return F.relu(self.gn2(self.conv2(out)) + self.shortcut(x))


class ResNet18(nn.Module):
    """ResNet-18 (He et al. 2016) with GroupNorm(groups, C) in place of every BatchNorm. ``stem='cifar'``: conv 3x3
    stride 1, no pool; ``stem='imagenet'``: conv 7x7 stride 2 padding 3, then maxpool 3x3 stride 2 padding 1
    (torchvision's ``resnet18``, the DFedCata code's model)."""

    def __init__(self, input_shape, num_classes, groups=2, stem="cifar"):
        super().__init__()
        c = _image_shape("resnet18", input_shape)[0]
        if stem == "cifar":
            self.stem = nn.Sequential(nn.Conv2d(c, 64, 3, 1, 1, bias=False), nn.GroupNorm(groups, 64), nn.ReLU())
        elif stem == "imagenet":
            self.stem = nn.Sequential(nn.Conv2d(c, 64, 7, 2, 3, bias=False), nn.GroupNorm(groups, 64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
        else:
            raise ValueError(f"unknown ResNet-18 stem {stem!r}; valid stems: cifar, imagenet")
        blocks, c_in = [], 64
        for c_out, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [_BasicBlock(c_in, c_out, stride, groups), _BasicBlock(c_out, c_out, 1, groups)]
            c_in = c_out
        self.layers = nn.Sequential(*blocks)
        self.head = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def make_model(name, input_shape, num_classes, hidden=200, groups=2) -> nn.Module:
    """Build model ``name`` for inputs of shape ``input_shape`` (without batch axis) and ``num_classes`` outputs.

    ``hidden`` sets the MLP width, ``groups`` the GroupNorm group count (``vgg11``, ResNet-18; must divide 64).
    For ``linear`` (regression) ``num_classes`` is the output dimension (1 for the synthetic quadratic).
    """
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; valid models: {', '.join(MODELS)}")
    input_shape = tuple(int(s) for s in input_shape)
    if int(num_classes) != num_classes or num_classes < 1:
        raise ValueError(f"num_classes must be a positive integer, got {num_classes!r}")
    if name in ("vgg11", "resnet18", "resnet18-imagenet") and (int(groups) != groups or groups < 1 or 64 % groups):
        raise ValueError(f"groups must be a positive divisor of 64 for GroupNorm, got {groups!r}")
    d = math.prod(input_shape)
    if name == "linear":
        return nn.Sequential(nn.Flatten(), nn.Linear(d, num_classes, bias=False))
    if name == "split-linear":
        if len(input_shape) != 2 or input_shape[0] != 2 or num_classes != 1:
            raise ValueError(f"model 'split-linear' needs input_shape (2, d) (rows a_u, a_v) and one output, got "
                             f"input_shape {input_shape} and num_classes {num_classes}; use it with "
                             "'synthetic-personal'")
        return SplitLinear(input_shape[1])
    if name == "logreg":
        return nn.Sequential(nn.Flatten(), nn.Linear(d, num_classes))
    if name in ("mlp", "mlp-small"):
        hidden = 32 if name == "mlp-small" else hidden
        return nn.Sequential(nn.Flatten(), nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                             nn.Linear(hidden, num_classes))
    if name == "cnn":
        return _cnn(input_shape, num_classes)
    if name in ("vgg11", "vgg11-bn"):
        return _vgg11(input_shape, num_classes, groups, batchnorm=name == "vgg11-bn")
    return ResNet18(input_shape, num_classes, groups, stem="imagenet" if name == "resnet18-imagenet" else "cifar")


def _cross_entropy(logits, y):
    return F.cross_entropy(logits, y)


def _residual(pred, y):
    if pred.ndim == y.ndim + 1 and pred.shape[-1] == 1:
        pred = pred.squeeze(-1)
    if pred.shape != y.shape:
        raise ValueError(f"prediction shape {tuple(pred.shape)} does not match target shape {tuple(y.shape)}")
    return pred - y


def _half_mse(pred, y):
    return 0.5 * torch.mean(_residual(pred, y) ** 2)


def cauchy_loss(pred, y, c=1.0):
    """Mean Cauchy loss (c^2/2) log(1 + r^2/c^2) of the residuals r = pred - y (robust regression).

    phi'(r) = r / (1 + r^2/c^2), |phi'| <= c/2; phi''(r) = (1 - r^2/c^2) / (1 + r^2/c^2)^2 in [-1/8, 1]:
    smooth, nonconvex, bounded gradients (the constants of ``data.robust_constants`` are for c = 1).
    """
    if not (isinstance(c, (int, float)) and math.isfinite(c) and c > 0):
        raise ValueError(f"the Cauchy scale c must be a finite number > 0, got {c!r}")
    r = _residual(pred, y) / c
    return 0.5 * c**2 * torch.mean(torch.log1p(r**2))


def loss_fn(task):
    """Mean cross-entropy for 'classification'; 0.5 * mean squared error for 'regression'; the mean Cauchy loss
    (c = 1) for 'robust-regression'.

    The regression loss on client i's data is f_i(x) = 1/(2 n_i) ||A_i x - b_i||^2, the synthetic quadratic; the
    robust one f_i(x) = (1/n_i) sum_j (1/2) log(1 + (a_ij^T x - b_ij)^2) (``synthetic-robust``, ``-personal``).
    """
    if task == "classification":
        return _cross_entropy
    if task == "regression":
        return _half_mse
    if task == "robust-regression":
        return cauchy_loss
    raise ValueError(f"unknown task {task!r}; valid tasks: classification, regression, robust-regression")
