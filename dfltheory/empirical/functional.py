"""A model as a function of one flat parameter vector, batched over clients with torch.func.

All client state in the engine is a tensor of shape ``(m, d)``: row i is client i's parameter vector. The
model is called through ``torch.func.functional_call`` on views of one row, so ``vmap`` over the rows gives all
clients' forward passes, and ``vmap(grad(...))`` all clients' stochastic gradients, in one call.

The module is put in eval mode: the engine's models have no dropout, and a module with BatchNorm is refused (its
running statistics would be buffers updated in place in training mode, or frozen at their initial values in eval
mode; the papers and the DFedCata authors' code replace every BatchNorm by GroupNorm, dfedcata.md §8); other buffers
are shared by all clients and never updated.

``weights`` (optional, shape (m, b)) turns a client's minibatch loss into sum_j w_j loss_j: with w_j = 1/n_valid on
the valid samples and 0 on padding, a padded batch gives exactly the mean loss of its valid samples (the last,
partial batch of an epoch), since no model here mixes the samples of a batch (GroupNorm normalises each sample).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

Loss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class FlatModel:
    """``module`` seen as ``x -> module(x; params)`` with ``params`` one flat vector of length ``dim``."""

    def __init__(self, module: nn.Module, loss: Loss):
        norms = sorted({type(mod).__name__ for mod in module.modules()
                        if isinstance(mod, nn.modules.batchnorm._BatchNorm)})
        if norms:
            raise ValueError(f"the model has {', '.join(norms)} layers, whose running statistics the vmapped engine "
                             "does not keep per client; use GroupNorm (as the papers' ResNet-18 and every model of "
                             "dfltheory.empirical.models do)")
        self.module = module.eval()
        params = dict(module.named_parameters())
        if not params:
            raise ValueError("the model has no parameters; pass a module with trainable parameters")
        self.names = list(params)
        self.shapes = [p.shape for p in params.values()]
        self.numels = [math.prod(s) for s in self.shapes]
        self.dim = sum(self.numels)
        self.loss = loss
        self.buffers = dict(module.named_buffers())

    def to(self, device) -> FlatModel:
        self.module.to(device)
        self.buffers = dict(self.module.named_buffers())
        return self

    def initial(self) -> torch.Tensor:
        """The module's current parameters as one flat vector (a copy)."""
        return torch.cat([p.detach().reshape(-1) for p in self.module.parameters()]).clone()

    def unflatten(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        return {n: p.view(s) for n, p, s in zip(self.names, flat.split(self.numels), self.shapes)}

    def forward(self, flat: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        return functional_call(self.module, (self.unflatten(flat), self.buffers), (inputs,))

    def loss_at(self, flat: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return self.loss(self.forward(flat, inputs), targets)

    def weighted_loss_at(self, flat: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                         weights: torch.Tensor) -> torch.Tensor:
        """sum_j w_j loss(sample j): the per-sample losses are the mean loss on one-sample batches."""
        out = self.forward(flat, inputs)
        per = vmap(lambda o, y: self.loss(o.unsqueeze(0), y.unsqueeze(0)))(out, targets)
        return (per * weights).sum()

    def batched_grad(self, X: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                     chunk_size: int | None = None, weights: torch.Tensor | None = None) -> torch.Tensor:
        """Row i: grad of client i's minibatch loss at ``X[i]``; shapes (m, d), (m, b, ...), (m, b).

        ``chunk_size`` vmaps over that many clients at a time (bounds activation memory, e.g. VGG-11 on a GPU).
        ``weights`` (m, b): the weighted loss (module docstring), for padded batches.
        """
        if X.shape[0] == 1:  # one row (the code mode trains one client at a time): plain autograd
            return self.row_grad(X[0], inputs[0], targets[0], None if weights is None else weights[0]).unsqueeze(0)
        return self.vmapped_grad(X, inputs, targets, chunk_size, weights)

    def vmapped_grad(self, X: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                     chunk_size: int | None = None, weights: torch.Tensor | None = None) -> torch.Tensor:
        """:meth:`batched_grad` by ``vmap(grad)`` whatever the number of rows (what ``torch.compile`` traces)."""
        if weights is None:
            return vmap(grad(self.loss_at), chunk_size=chunk_size)(X, inputs, targets)
        return vmap(grad(self.weighted_loss_at), chunk_size=chunk_size)(X, inputs, targets, weights)

    def row_grad(self, x: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                 weights: torch.Tensor | None = None) -> torch.Tensor:
        """grad of one client's minibatch loss at one flat vector ``x`` (d,) by plain reverse-mode autograd: about
        a quarter of ``vmap(grad)``'s per-call cost over one row (docs/benchmarks.md, "Where the engine's time
        goes"), the same arithmetic."""
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            loss = (self.loss_at(x, inputs, targets) if weights is None
                    else self.weighted_loss_at(x, inputs, targets, weights))
            return torch.autograd.grad(loss, x)[0]

    def batched_loss(self, X: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                     weights: torch.Tensor | None = None) -> torch.Tensor:
        """Row i: client i's minibatch loss at ``X[i]``; shapes (m, d), (m, b, ...), (m, b) -> (m,)."""
        if weights is None:
            return vmap(self.loss_at)(X, inputs, targets)
        return vmap(self.weighted_loss_at)(X, inputs, targets, weights)

    def last_linear(self) -> str:
        """Name of the last ``nn.Linear`` submodule: the classifier head, DFedPGP's personal part (seed 003 L187)."""
        names = [n for n, mod in self.module.named_modules() if isinstance(mod, nn.Linear)]
        if not names:
            raise ValueError("the model has no nn.Linear layer; name the personal layers explicitly")
        return names[-1]

    def parameter_mask(self, modules) -> torch.Tensor:
        """(dim,) bool: True on the flat coordinates of the parameters of the named submodules ('6', 'head')."""
        known = {n for n, _ in self.module.named_modules() if n}
        unknown = sorted(set(modules) - known)
        if unknown:
            raise ValueError(f"unknown layer(s) {', '.join(unknown)}; the model's layers are "
                             f"{', '.join(sorted(known))}")
        inside = [any(n.startswith(f"{mod}.") for mod in modules) for n in self.names]
        return torch.cat([torch.full((k,), flag) for flag, k in zip(inside, self.numels)])

    def batched_forward(self, X: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        """Outputs of every client's model on the same inputs: (m, n, ...)."""
        return vmap(self.forward, in_dims=(0, None))(X, inputs)
