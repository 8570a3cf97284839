"""A model as a function of one flat parameter vector, batched over clients with torch.func.

All client state in the engine is a tensor of shape ``(m, d)``: row i is client i's parameter vector. The
model is called through ``torch.func.functional_call`` on views of one row, so ``vmap`` over the rows gives all
clients' forward passes, and ``vmap(grad(...))`` all clients' stochastic gradients, in one call.

Running statistics (BatchNorm, or InstanceNorm with ``track_running_stats=True``): the floating-point buffers of
these layers (running mean and variance) are a second flat vector per client, ``stats`` of length ``n_stats`` (the
engine's ``state["running_stats"]``, shape (m, n_stats), never communicated). A gradient call given ``stats`` runs
those layers in training mode: they normalise with the minibatch's statistics and move the client's running
statistics by them (PyTorch's update with the layer's momentum), in a copy that the call returns. Every gradient
evaluation does so, as a PyTorch training loop that calls the module once per gradient: SAM's two passes both
update the statistics, as in the DFedCata authors' code (``ESAM.step`` calls ``model(inputs)`` twice with the model
in train mode: ../shared/reference/dfedcata-official optimizer/ESAM.py, client/client.py ``train``). Every other call
(losses, test outputs, the measured gradients) runs them in eval mode on ``stats`` (the module's own buffers when
``stats`` is None). A layer with ``momentum=None`` (a cumulative average, which needs a per-client batch count) is
refused; the batch counters ``num_batches_tracked`` are not kept (a training call counts on a throwaway copy). The
papers and the DFedCata authors' code replace every BatchNorm by GroupNorm (dfedcata.md §8), which has no
statistics; models without such layers compute exactly what they did before statistics were supported.

The module is otherwise in eval mode, so a model with dropout (p > 0) is refused (dropout would be silently off);
other buffers are shared by all clients and never updated.

``weights`` (optional, shape (m, b)) turns a client's minibatch loss into sum_j w_j loss_j: with w_j = 1/n_valid on
the valid samples and 0 on padding, a padded batch gives exactly the mean loss of its valid samples (the last,
partial batch of an epoch), as long as the model does not mix the samples of a batch (GroupNorm normalises each
sample; BatchNorm in training mode does mix them, and the engine refuses it with padded batches).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

Loss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _dims(*args) -> tuple:
    """vmap's in_dims for arguments stacked over clients, some of them optional: 0, or None for an absent one."""
    return tuple(None if a is None else 0 for a in args)


def _check_module(module: nn.Module, norms: list[nn.Module]) -> None:
    """Refuse what the engine cannot run faithfully: dropout (the module is in eval mode: nn.Dropout*, or a layer's
    own ``dropout``, LSTM, MultiheadAttention), BatchNorm without running statistics and running statistics by
    cumulative average (momentum=None)."""
    dropout = sorted({f"{type(mod).__name__}(p={mod.p})" for mod in module.modules()
                      if isinstance(mod, nn.modules.dropout._DropoutNd) and mod.p > 0}
                     | {f"{type(mod).__name__}(dropout={mod.dropout})" for mod in module.modules()
                        if not isinstance(mod, nn.modules.dropout._DropoutNd)
                        and isinstance(getattr(mod, "dropout", None), float) and mod.dropout > 0})
    if dropout:
        raise ValueError(f"the model has {', '.join(dropout)}: the engine runs the module in eval mode, where "
                         "dropout is off; remove the dropout or set it to 0 (p=0, dropout=0)")
    batch = sorted({type(mod).__name__ for mod in module.modules()
                    if isinstance(mod, nn.modules.batchnorm._BatchNorm) and not mod.track_running_stats})
    if batch:
        raise ValueError(f"the model's {', '.join(batch)} layers have track_running_stats=False: they would normalise "
                         "with the statistics of whatever batch they see, also when the engine evaluates (test "
                         "accuracy would depend on the test chunk) and over the padding of partial batches; set "
                         "track_running_stats=True (the engine keeps the running statistics per client) or use "
                         "GroupNorm")
    cumulative = sorted({type(mod).__name__ for mod in norms if mod.momentum is None})
    if cumulative:
        raise ValueError(f"the model's {', '.join(cumulative)} layers have momentum=None (running statistics as a "
                         "cumulative average, which needs a per-client batch count the engine does not keep); set "
                         "their momentum (PyTorch's default is 0.1)")


class FlatModel:
    """``module`` seen as ``x -> module(x; params)`` with ``params`` one flat vector of length ``dim``, and its
    running statistics (if any) one flat vector of length ``n_stats`` (module docstring)."""

    def __init__(self, module: nn.Module, loss: Loss):
        layers = {name: mod for name, mod in module.named_modules()
                  if isinstance(mod, nn.modules.batchnorm._NormBase) and mod.track_running_stats}
        self.norms = list(layers.values())
        _check_module(module, self.norms)
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
        owned = {n: b for n, b in self.buffers.items() if n.rpartition(".")[0] in layers}
        self.stat_names = [n for n, b in owned.items() if b.is_floating_point()]
        self.counters = [n for n, b in owned.items() if not b.is_floating_point()]  # num_batches_tracked
        self.stat_shapes = [owned[n].shape for n in self.stat_names]
        self.stat_numels = [math.prod(s) for s in self.stat_shapes]
        self.n_stats = sum(self.stat_numels)

    def to(self, device) -> FlatModel:
        self.module.to(device)
        self.buffers = dict(self.module.named_buffers())
        return self

    def initial(self) -> torch.Tensor:
        """The module's current parameters as one flat vector (a copy)."""
        return torch.cat([p.detach().reshape(-1) for p in self.module.parameters()]).clone()

    def initial_stats(self) -> torch.Tensor | None:
        """The module's current running statistics as one flat vector (a copy); None when it has none."""
        if not self.stat_names:
            return None
        return torch.cat([self.buffers[n].detach().reshape(-1) for n in self.stat_names]).clone()

    def unflatten(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        return {n: p.view(s) for n, p, s in zip(self.names, flat.split(self.numels), self.shapes)}

    def buffers_at(self, stats: torch.Tensor | None, train: bool = False) -> dict[str, torch.Tensor]:
        """The buffers of one call: the running statistics read from ``stats`` (the module's own when None), the
        other buffers shared. ``train``: the statistics and the batch counters as fresh tensors, which the layers
        update in place (views of ``stats`` would not carry the update out of ``vmap``)."""
        if stats is None:
            return self.buffers
        own = {n: s.view(shape) for n, s, shape in zip(self.stat_names, stats.split(self.stat_numels),
                                                        self.stat_shapes)}
        if train:
            own = {n: b.clone() for n, b in {**own, **{n: self.buffers[n] for n in self.counters}}.items()}
        return {**self.buffers, **own}

    def _in_training(self, fn, *args):
        """``fn(*args)`` with the running-statistics layers in training mode; the module is in eval mode otherwise."""
        for mod in self.norms:
            mod.training = True
        try:
            return fn(*args)
        finally:
            for mod in self.norms:
                mod.training = False

    def forward(self, flat: torch.Tensor, inputs: torch.Tensor, stats: torch.Tensor | None = None) -> torch.Tensor:
        return functional_call(self.module, (self.unflatten(flat), self.buffers_at(stats)), (inputs,))

    def _loss_of(self, out: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
        """The mean loss, or with ``weights`` sum_j w_j loss(sample j), the per-sample losses the mean loss on
        one-sample batches."""
        if weights is None:
            return self.loss(out, targets)
        per = vmap(lambda o, y: self.loss(o.unsqueeze(0), y.unsqueeze(0)))(out, targets)
        return (per * weights).sum()

    def loss_at(self, flat: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                weights: torch.Tensor | None = None, stats: torch.Tensor | None = None) -> torch.Tensor:
        """The minibatch loss (weighted with ``weights``) in eval mode, on running statistics ``stats``."""
        return self._loss_of(self.forward(flat, inputs, stats), targets, weights)

    def train_loss_at(self, flat: torch.Tensor, stats: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                      weights: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(loss, running statistics after this forward); run under :meth:`_in_training`, the norm layers update
        copies of ``stats`` in place."""
        buffers = self.buffers_at(stats, train=True)
        out = functional_call(self.module, (self.unflatten(flat), buffers), (inputs,))
        return self._loss_of(out, targets, weights), torch.cat([buffers[n].reshape(-1) for n in self.stat_names])

    def batched_grad(self, X: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                     chunk_size: int | None = None, weights: torch.Tensor | None = None,
                     stats: torch.Tensor | None = None):
        """Row i: grad of client i's minibatch loss at ``X[i]``; shapes (m, d), (m, b, ...), (m, b).

        ``chunk_size`` vmaps over that many clients at a time (bounds activation memory, e.g. VGG-11 on a GPU).
        ``weights`` (m, b): the weighted loss (module docstring), for padded batches. ``stats`` (m, n_stats): the
        clients' running statistics; the call then trains them too and returns (gradients, updated statistics).
        """
        if X.shape[0] != 1:
            return self.vmapped_grad(X, inputs, targets, chunk_size, weights, stats)
        # one row (the code mode trains one client at a time): plain autograd
        out = self.row_grad(X[0], inputs[0], targets[0], None if weights is None else weights[0],
                            None if stats is None else stats[0])
        return out.unsqueeze(0) if stats is None else tuple(t.unsqueeze(0) for t in out)

    def vmapped_grad(self, X: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                     chunk_size: int | None = None, weights: torch.Tensor | None = None,
                     stats: torch.Tensor | None = None):
        """:meth:`batched_grad` by ``vmap(grad)`` whatever the number of rows (what ``torch.compile`` traces)."""
        if stats is not None:
            fn = vmap(grad(self.train_loss_at, has_aux=True), in_dims=_dims(X, stats, inputs, targets, weights),
                      chunk_size=chunk_size)
            return self._in_training(fn, X, stats, inputs, targets, weights)
        return vmap(grad(self.loss_at), in_dims=_dims(X, inputs, targets, weights), chunk_size=chunk_size)(
            X, inputs, targets, weights)

    def row_grad(self, x: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                 weights: torch.Tensor | None = None, stats: torch.Tensor | None = None):
        """grad of one client's minibatch loss at one flat vector ``x`` (d,) by plain reverse-mode autograd: about
        a quarter of ``vmap(grad)``'s per-call cost over one row (docs/benchmarks.md, "Where the engine's time
        goes"), the same arithmetic. With ``stats`` (n_stats,): (gradient, updated statistics)."""
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            if stats is None:
                return torch.autograd.grad(self.loss_at(x, inputs, targets, weights), x)[0]
            loss, stats = self._in_training(self.train_loss_at, x, stats, inputs, targets, weights)
            return torch.autograd.grad(loss, x)[0], stats

    def batched_loss(self, X: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor,
                     weights: torch.Tensor | None = None, stats: torch.Tensor | None = None) -> torch.Tensor:
        """Row i: client i's minibatch loss at ``X[i]`` (on its statistics ``stats[i]``); shapes (m, d),
        (m, b, ...), (m, b) -> (m,)."""
        return vmap(self.loss_at, in_dims=_dims(X, inputs, targets, weights, stats))(X, inputs, targets, weights,
                                                                                  stats)

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

    def batched_forward(self, X: torch.Tensor, inputs: torch.Tensor, stats: torch.Tensor | None = None) -> torch.Tensor:
        """Outputs of every client's model (on its statistics ``stats[i]``) on the same inputs: (m, n, ...)."""
        return vmap(self.forward, in_dims=(0, None, *_dims(stats)))(X, inputs, stats)
