"""Initial weights from a file: the starting point x^0 of every client read from a saved state dict.

The DFedCata code starts its CIFAR-100 ResNet-18 from ImageNet weights (``models.resnet18(pretrained=True)``, then
every BatchNorm replaced by a new ``GroupNorm(2, C)`` and the classifier by a new ``Linear(512, 100)``; card
dfedcata §8, the code's models.py). :func:`load_initial_weights` does the same from a file the user provides (no
download here): a tensor is taken where the file has it under the model's name (or, for ``resnet18-imagenet``, under
torchvision's ``resnet18`` name) with the same shape; the model keeps its own initial value

* for a normalisation layer that is a BatchNorm in the file and a GroupNorm here (a new GroupNorm, as in the code),
* where the shapes differ (the classifier: 1000 ImageNet classes in the file),
* where the file has no such tensor.

What was taken and what was kept is returned as one line, which ``dfltheory train --init-weights`` prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch
from torch import nn

_BN_BUFFERS = ("running_mean", "running_var", "num_batches_tracked")


def torchvision_resnet18_name(name: str) -> str:
    """The name in torchvision's ``resnet18`` of a ``resnet18-imagenet`` parameter: stem.0 -> conv1, stem.1 -> bn1,
    layers.(2(l-1)+b).{conv,gn}j -> layer l.b.{conv,bn}j, shortcut -> downsample, head -> fc."""
    name = re.sub(r"^stem\.0\.", "conv1.", name)
    name = re.sub(r"^stem\.1\.", "bn1.", name)
    name = re.sub(r"^head\.", "fc.", name)
    match = re.match(r"^layers\.(\d+)\.(.*)$", name)
    if match:
        block, rest = int(match.group(1)), match.group(2)
        rest = rest.replace("shortcut.", "downsample.").replace("gn", "bn")
        name = f"layer{block // 2 + 1}.{block % 2}.{rest}"
    return name


#: other layouts a model's file may come in: model name -> (our parameter name -> the file's)
LAYOUTS = {"resnet18-imagenet": ("torchvision's resnet18", torchvision_resnet18_name)}


def read_state_dict(path) -> dict[str, torch.Tensor]:
    """The tensors of a file written by ``torch.save(module.state_dict(), path)`` (or a dict holding one under
    'state_dict' or 'model'); anything else is a ValueError naming the file and what it should hold."""
    fix = "give a file written by torch.save(module.state_dict(), path)"
    if not str(path).strip():
        raise ValueError(f"--init-weights: the path is empty; {fix}")
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"--init-weights: {path} is a directory; {fix}")
    if not path.is_file():
        raise ValueError(f"--init-weights: {path} does not exist or is not a regular file; {fix}")
    try:
        sd = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # not a torch file, cut short, or holding objects other than tensors
        raise ValueError(f"--init-weights: {path} is not a state dict that torch.load can read safely (not written "
                         f"by torch.save, damaged, or holding objects other than tensors); {fix}") from None
    for wrapper in ("state_dict", "model"):
        if isinstance(sd, dict) and isinstance(sd.get(wrapper), dict):
            sd = sd[wrapper]
    if (not isinstance(sd, dict) or not sd or not all(isinstance(v, torch.Tensor) for v in sd.values())
            or not all(isinstance(k, str) for k in sd)):
        raise ValueError(f"--init-weights: {path} holds no state dict (a dict of parameter names, strings, to "
                         f"tensors); {fix}")
    return sd


def load_initial_weights(module: nn.Module, model: str, path) -> str:
    """Copy the file's tensors into ``module``'s parameters (module docstring); returns what was taken and kept."""
    sd = read_state_dict(path)
    tensors = {k: v for k, v in sd.items() if not k.endswith(_BN_BUFFERS)}
    batchnorm = {k.rsplit(".", 1)[0] for k in sd if k.endswith("running_mean")}  # the file's BatchNorm layers
    ours = dict(module.named_parameters())
    layout, rename = "the model's names", (lambda n: n)
    if not any(n in tensors for n in ours) and model in LAYOUTS:
        layout, rename = LAYOUTS[model]
    owners = dict(module.named_modules())
    taken, kept = [], {"BatchNorm in the file, GroupNorm here": [], "another shape": [], "not in the file": []}
    with torch.no_grad():
        for name, p in ours.items():
            src = rename(name)
            layer, here = src.rsplit(".", 1)[0], owners[name.rsplit(".", 1)[0]]
            if src not in tensors:
                kept["not in the file"].append(name)
            elif layer in batchnorm and not isinstance(here, nn.modules.batchnorm._BatchNorm):
                kept["BatchNorm in the file, GroupNorm here"].append(name)
            elif tuple(tensors[src].shape) != tuple(p.shape):
                kept["another shape"].append(f"{name} {tuple(tensors[src].shape)} vs {tuple(p.shape)}")
            else:
                value = tensors[src]
                if not value.is_floating_point():
                    raise ValueError(f"--init-weights: {path} holds {src} as {value.dtype}, not floating-point "
                                     "parameters; give the state dict of a trained or initialised model")
                if not bool(torch.isfinite(value).all()):
                    raise ValueError(f"--init-weights: {path} holds NaN or infinite entries in {src}; give a state "
                                     "dict with finite parameters")
                p.copy_(value.to(p.dtype))
                taken.append(name)
        for name, buf in module.named_buffers():  # a BatchNorm's running statistics, where both have them
            src = rename(name)
            if buf.is_floating_point() and src in sd and tuple(sd[src].shape) == tuple(buf.shape):
                buf.copy_(sd[src].to(buf.dtype))
    if not taken:
        theirs = ", ".join(list(tensors)[:4])
        raise ValueError(f"--init-weights: no tensor of {path} fits model {model!r} (the file has {theirs}, ...; the "
                         f"model {', '.join(list(ours)[:4])}, ...); give a state dict of this model"
                         + (f" or of {LAYOUTS[model][0]}" if model in LAYOUTS else ""))
    why = "; ".join(f"{len(v)} {reason} ({', '.join(v[:2])}{', ...' if len(v) > 2 else ''})"
                    for reason, v in kept.items() if v)
    read = {rename(n) for n in ours} | {rename(n) for n, _ in module.named_buffers()}
    unused = [k for k in tensors if k not in read]
    return (f"took {len(taken)} of {len(ours)} parameter tensors from {path} ({layout})"
            + (f"; kept the model's own initial values for {why}" if why else "")
            + (f"; {len(unused)} tensor(s) of the file fit no parameter of the model ({', '.join(unused[:3])}"
               f"{', ...' if len(unused) > 3 else ''})" if unused else ""))
