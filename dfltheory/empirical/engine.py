"""The vectorized training engine: one round = K batched local steps + one communication rule.

State: ``state`` maps names to tensors stacked over the m clients (``x`` the models, plus the local rules'
momentum / dual variables / control variates); ``cstate`` holds the communication rule's tensors (DFedCata's
aggregated models). A round t:

1. ``plan(t)``: draw the minibatch indices of all K steps (K, m, b) and the participants, from one
   ``torch.Generator`` (on CPU, so CPU and CUDA runs see the same batches);
2. local phase on the participants: K times ``x <- x - eta_t d`` with ``d`` from the local rule, its
   gradients from ``vmap(grad(loss))`` over the clients (:mod:`dfltheory.empirical.functional`);
   DFedPGP runs K_v personal steps first (K_v + K steps in all);
3. communication rule (gossip etc., a matrix product with W).

``epochs=True`` runs the papers' local work instead of K sampled steps: K (and DFedPGP's K_v) local epochs, each a
pass over the client's shuffled data in batches of b, the last one partial (the authors' code:
``DataLoader(shuffle=True, batch_size=b)``, dfedcata.md §3.2; K = "local epochs" in every card's §8). Client i then
takes K ceil(n_i / b) steps, a number that differs per client: every epoch has ``unit`` = max_i ceil(n_i / b) step
slots, client i's batches fill its first ceil(n_i / b), and in the other slots the client's state (model, momentum,
...) is left unchanged and not computed: a slot's step runs, vmapped, on the rows that have a batch in it
(:class:`EpochSampler`, :meth:`Engine.local_phase`). The plan encodes all of it in the indices: a padding entry is
``~j`` (negative) for a sample j of the client, so a slot with no entry >= 0 is masked, and a partial batch's loss
is the mean over its entries >= 0 (``FlatModel`` weights).

A model with running statistics (BatchNorm; :mod:`dfltheory.empirical.functional`) adds ``state["running_stats"]``
(m, n_stats), all rows the module's initial statistics: every gradient call of a local step moves the rows it
computes by the batch, and no communication rule reads it, so it stays each client's own (subsets of clients, masked
slots, the sequential schedule, checkpoints and the rank split carry it as any other state entry). A BatchNorm model
needs batches of at least 2 samples, and with local epochs every client's sample count a multiple of the batch size:
the padding of a partial batch would enter the batch statistics (``Engine._check_batch_statistics``).

A partially shared model (DFedPGP) keeps ``shared``, the (d,) mask of the coordinates that push-sum mixes and
de-biases; the others are each client's personal parameters.

``sequential=True`` runs the DFedCata public code's Gauss-Seidel schedule instead (card dfedcata §3.2
item 1): client c aggregates, trains, and overwrites its row before client c+1 aggregates. Its ``x_bar`` is
the mean of the trained local models, the model the code evaluates (item 8).

``compile=True`` runs each sampled local step (gradient oracle, the rule's transforms, the update) as one
``torch.compile``d function (inductor fuses the rule's passes over the (m, d) state into the gradient's kernels;
docs/benchmarks.md): the learning rate and its decay enter as 0-d tensors, so a decaying lr compiles once; the step
is specialised on the rule's ``phase`` (DFedPGP: personal and shared steps, two functions), and x is updated in
place in a copy taken at the round's start. The first round pays the compilation (seconds); the trajectories equal
the uncompiled ones to float rounding. Local epochs (masked steps) and the sequential schedule are not compiled.

The engine's dtype is the model's: data, client state and the mixing matrices (``Mixing.to``) follow it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from dfltheory.empirical import budget, chunk
from dfltheory.empirical.algorithms import Algorithm
from dfltheory.empirical.communication import CommContext, Mixing, links
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.rules import StepContext


def compile_failures() -> tuple[type[Exception], ...]:
    """The exceptions of a ``torch.compile``d call that could not be compiled (the backend failed, no working C++
    compiler): the engine turns them into a ValueError naming the fix, the benchmark into a skipped row."""
    from torch._dynamo.exc import BackendCompilerFailed
    from torch._inductor.exc import InvalidCxxCompiler

    return BackendCompilerFailed, InvalidCxxCompiler


def check_compile(device: torch.device) -> None:
    """Refuse ``compile=True`` where ``torch.compile`` cannot run: no TorchDynamo for this Python, or on CPU no C++
    compiler for inductor's kernels; the error names the fix (drop --compile)."""
    from torch._dynamo.eval_frame import is_dynamo_supported

    if not is_dynamo_supported():
        raise ValueError("--compile needs torch.compile, which this Python / torch build does not support; "
                           "drop --compile (Engine(compile=False))")
    if device.type == "cpu":
        from torch._inductor.cpp_builder import get_cpp_compiler

        try:
            get_cpp_compiler()
        except Exception:  # InvalidCxxCompiler, or a compiler that does not run
            raise ValueError("--compile: torch.compile needs a C++ compiler (g++ or clang++, or $CXX) to build "
                               "its CPU kernels and none was found; install one or drop --compile "
                               "(Engine(compile=False))") from None


#: the most sample indices one round's batch plan may hold (2^27: about 2 GiB with its float64 draws)
MAX_PLAN_ENTRIES = 2**27
FUSED_STEPS = 8  # compiled local steps of one round run as one call up to this K (Engine._steps_fn) ...
FUSED_BYTES = 2**26  # ... and while the round's K minibatches, gathered at once, take at most 64 MiB
ROUND_COPIES = 4  # (m, d) working tensors of a round beside the state: anchor, gradient, direction, mixed models


class ClientSampler:
    """Minibatch indices per client: b draws with replacement from the client's own index pool.

    ``batch_size=None`` means full local batches (every step uses the whole local data set, in order; needs
    equal client sizes). Sampling runs on CPU with the caller's generator.
    """

    full_batches_need_equal_sizes = True

    def __init__(self, client_indices, batch_size: int | None):
        sizes = [len(ix) for ix in client_indices]
        if min(sizes) == 0:
            raise ValueError("a client has no training data; use a partition that gives every client samples")
        if batch_size is None and self.full_batches_need_equal_sizes and len(set(sizes)) != 1:
            raise ValueError("full local batches need equal client sizes; pass a batch size")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch size must be >= 1, got {batch_size}")
        self.m, self.batch_size = len(sizes), batch_size
        self.sizes = torch.tensor(sizes)
        self.pools = torch.zeros(self.m, max(sizes), dtype=torch.long)
        for i, ix in enumerate(client_indices):
            self.pools[i, : len(ix)] = torch.as_tensor(ix, dtype=torch.long).cpu()

    def draw(self, K: int, generator: torch.Generator) -> torch.Tensor:
        """Indices into the training set, shape (K, m, b)."""
        if self.batch_size is None:
            return self.pools.unsqueeze(0).expand(K, -1, -1).clone()
        u = torch.rand(K, self.m, self.batch_size, generator=generator, dtype=torch.float64)
        pos = (u * self.sizes[None, :, None]).long().clamp_max(self.sizes[None, :, None] - 1)
        return torch.gather(self.pools.unsqueeze(0).expand(K, -1, -1), 2, pos)


class EpochSampler(ClientSampler):
    """``epochs`` passes over each client's data per round, each in a fresh random order, in batches of b (the
    last one partial): what ``DataLoader(shuffle=True, batch_size=b)`` gives the authors' code (module docstring).

    Client i has ``steps[i]`` = ceil(n_i / b) batches per epoch; every epoch occupies ``unit`` = max_i steps[i] step
    slots, so ``draw`` returns (epochs * unit, m, b) indices in which client i's slots j >= steps[i] of each epoch,
    and the entries past n_i of its last batch, hold ``~pools[i, 0]`` (< 0: masked). ``batch_size=None``: one
    batch of the whole local data set per epoch (unequal sizes allowed). A batch is min(b, max_i n_i) wide.
    """

    full_batches_need_equal_sizes = False

    def __init__(self, client_indices, batch_size: int | None, epochs: int):
        super().__init__(client_indices, batch_size)
        if epochs < 1:
            raise ValueError(f"local epochs per round must be >= 1, got {epochs}")
        self.epochs = epochs
        self.width = int(self.sizes.max()) if batch_size is None else min(batch_size, int(self.sizes.max()))
        self.steps = (self.sizes + self.width - 1) // self.width  # ceil(n_i / b)
        self.unit = int(self.steps.max())

    def draw(self, K: int, generator: torch.Generator) -> torch.Tensor:
        """Indices into the training set, shape (K, m, b) with K = epochs * unit; masked entries < 0."""
        if K != self.epochs * self.unit:
            raise ValueError(f"{self.epochs} local epochs of {self.unit} step slots are {self.epochs * self.unit} "
                             f"slots, not {K}")
        E, m, n = self.epochs, self.m, self.pools.shape[1]
        past = torch.arange(n) >= self.sizes[:, None]  # (m, n) pool padding
        u = torch.rand(E, m, n, generator=generator, dtype=torch.float64).masked_fill_(past, 2.0)
        order = u.argsort(dim=-1)  # each epoch: a random permutation of 0..n_i-1, then the padding
        length = self.unit * self.width
        order = torch.nn.functional.pad(order, (0, length - n)) if length > n else order[..., :length]
        idx = torch.gather(self.pools.expand(E, -1, -1), 2, order)
        valid = torch.arange(length) < self.sizes[:, None]  # (m, length)
        idx = torch.where(valid, idx, ~self.pools[:, :1])
        return idx.view(E, m, self.unit, self.width).transpose(1, 2).reshape(E * self.unit, m, self.width)


@dataclass
class RoundPlan:
    idx: torch.Tensor  # (K, m, b) sample indices
    active: torch.Tensor  # participants (sorted)
    lr: float
    K: int


def layout(tensors: dict) -> dict:
    """{name: [shape, dtype]} of a dict of tensors (what :meth:`Engine.identity` records of a state)."""
    return {str(k): [list(v.shape), str(v.dtype)] for k, v in tensors.items()}


class Engine:
    """Runs an :class:`Algorithm` on federated data; see the module docstring for one round."""

    def __init__(self, model: FlatModel, data, algorithm: Algorithm, mixing: Mixing | None = None, *, K: int,
                 lr: float, lr_decay: float = 1.0, batch_size: int | None = 32, seed: int = 0, device="cpu",
                 sequential: bool = False, x0: torch.Tensor | None = None, client_chunk: int | None = None,
                 epochs: bool = False, compile: bool = False):
        self.device = torch.device(device)
        self.model, self.data, self.algo = model.to(self.device), data, algorithm
        x0 = model.initial() if x0 is None else x0
        self.mixing = None if mixing is None else mixing.to(self.device, x0.dtype)
        self.m = len(data.client_indices)
        K = algorithm.K or K
        if K < 1:
            raise ValueError(f"K (local {'epochs' if epochs else 'steps'} per round) must be >= 1, got {K}")
        self.epochs = bool(epochs)
        if self.epochs:  # K (+ K_v) epochs of `unit` step slots each
            self.sampler = EpochSampler(data.client_indices, batch_size, K + algorithm.K_v)
            self.unit = self.sampler.unit
        else:
            self.sampler = ClientSampler(data.client_indices, batch_size)
            self.unit = 1
        self.K = (K + algorithm.K_v) * self.unit  # step slots per round
        width = self.sampler.width if self.epochs else batch_size or int(self.sampler.sizes.max())
        entries = self.K * self.m * width + (self.sampler.epochs * self.m * self.sampler.pools.shape[1]
                                             if self.epochs else 0)
        if entries > MAX_PLAN_ENTRIES:  # drawn every round: refuse before it exhausts the memory
            raise ValueError(f"one round's batch plan would hold {entries:.3g} sample indices ({self.K} step slots x "
                             f"{self.m} clients x batch {width}), about {entries * 16 / 2**30:.3g} GiB; lower --K "
                             f"(or --K-v) or --batch-size (at most {MAX_PLAN_ENTRIES:.3g} indices)")
        if lr <= 0:
            raise ValueError(f"the learning rate must be > 0, got {lr}")
        self.lr, self.lr_decay, self.seed = lr, lr_decay, seed
        if algorithm.decentralized and mixing is None:
            raise ValueError(f"{algorithm.name} is decentralized and needs a topology (mixing matrix)")
        if mixing is not None and mixing.m != self.m:
            raise ValueError(f"the mixing matrix is {mixing.m}x{mixing.m} but there are {self.m} clients")
        if algorithm.topology and getattr(mixing.source, "name", None) != algorithm.topology:
            raise ValueError(f"{algorithm.name} redraws its graph from the clients' losses every round; use "
                             f"--topology {algorithm.topology} (out-neighbours per client: --topology-params k=...)")
        if sequential and not algorithm.comm.sequential:  # a rule that declares its in-place schedule
            raise ValueError(f"{algorithm.name} declares no sequential (in-place) schedule (a program's "
                             "sequential=True); drop --sequential")
        self.sequential = sequential
        self.copies = 1  # independent copies of m / copies clients (a cohort sets it; the sequential round uses it)
        self.x_train, self.y_train = self._cast(data.x_train, x0.dtype), self._cast(data.y_train, x0.dtype)
        # the client chunk from the memory at hand, or the one given, checked (issue 23 item 2)
        self.client_chunk = chunk.for_engine(model, self.x_train[:1], width, self.m, self.device, client_chunk)
        self.generator = torch.Generator().manual_seed(seed)
        self.shared = None if algorithm.split is None else ~algorithm.split(model).to(self.device)
        self._check_state_memory(x0)
        x = x0.to(self.device).expand(self.m, -1).clone()  # all clients start at the same x^0 (card dfedsam §11)
        self.state = {"x": x, **algorithm.local.init(x), **algorithm.comm.init_state(x)}
        stats = model.initial_stats()
        if stats is not None:  # per client, trained by the local steps, never communicated (module docstring)
            self.state["running_stats"] = stats.to(self.device).expand(self.m, -1).clone()
            self._check_batch_statistics()
        self.cstate = algorithm.comm.init(x)
        self.t, self.sent = 0, 0
        self.xbar_prev = self.x_bar().clone()  # x_bar^{-1} := x_bar^0
        self.layout = {"state": layout(self.state), "cstate": layout(self.cstate)}  # what a checkpoint must carry
        self.compiled = bool(compile)
        if self.compiled:
            if sequential or self.epochs:
                raise ValueError(f"--compile compiles the vectorized engine's sampled local steps; the "
                                 f"{'sequential schedule' if sequential else 'local epochs (masked steps)'} "
                                 f"{'is' if sequential else 'are'} not compiled: drop --compile, or "
                                 f"{'--sequential' if sequential else 'run sampled steps (--no-epochs)'}")
            check_compile(self.device)
            rule, first = algorithm.local, {}  # each step k runs as the first step of its phase
            self._phase_k = [first.setdefault(rule.phase(k, self.unit), k) for k in range(self.K)]
            self._step = torch.compile(self._step_fn, dynamic=False)
            # up to FUSED_STEPS local steps run as one compiled call (a call's own cost, ~0.3 ms on CPU, is most of
            # a round of a small problem) where the K minibatches it gathers at once stay small (FUSED_BYTES: the
            # memory budget counts one batch); more steps, or image batches: one call a step
            sample = self.x_train[:1].element_size() * self.x_train[:1].numel()
            gathered = self.K * self.m * (batch_size or int(self.sampler.sizes.max())) * sample
            self._steps = (torch.compile(self._steps_fn, dynamic=False)
                           if self.K <= FUSED_STEPS and gathered <= FUSED_BYTES else None)

    def _check_state_memory(self, x0: torch.Tensor) -> None:
        """Refuse, before it is allocated, a state of m clients that does not fit the device: its tensors drawn on
        the ``meta`` device (no memory), plus the round's working copies (anchor, gradient, mixed models)."""
        d = x0.shape[-1]  # x0 is one model (d,) or, for a cohort, every client's start (m, d)
        x = torch.empty((self.m, d), dtype=x0.dtype, device="meta")
        tensors = [x, *self.algo.local.init(x).values(), *self.algo.comm.init_state(x).values(),
                   *self.algo.comm.init(x).values()]
        need = sum(t.numel() * t.element_size() for t in tensors) + ROUND_COPIES * x.numel() * x.element_size()
        budget.require(need, f"the state of {self.m} clients x {d:,} parameters ({self.algo.name})",
                       "use fewer clients (--n) or a smaller --model", self.device)

    def _check_batch_statistics(self) -> None:
        """BatchNorm in training mode takes statistics over each batch: refuse batches of one sample (no variance;
        PyTorch fails in the middle of a run) and, with local epochs, padded partial batches, whose padding would
        enter the statistics (``FlatModel`` computes a padded batch's loss, not its statistics, on the valid
        samples). InstanceNorm normalises each sample on its own and needs neither."""
        norms = sorted({type(mod).__name__ for mod in self.model.norms
                        if isinstance(mod, nn.modules.batchnorm._BatchNorm)})
        if not norms:
            return
        sizes, b = self.sampler.sizes, self.sampler.batch_size
        given = "the whole local data set (no --batch-size)" if b is None else f"--batch-size {b}"
        smallest = int(sizes.min()) if b is None else min(b, int(sizes.min()))
        if smallest < 2:
            raise ValueError(f"the model's {', '.join(norms)} layers take statistics over each batch in training, and "
                             f"{given} gives batches of {smallest} sample (a client has {int(sizes.min())}); use "
                             "batches of at least 2 samples, or GroupNorm")
        if self.epochs and b is not None and bool((sizes % b).any()):
            common = math.gcd(*sizes.tolist())
            fix = (f"a --batch-size that divides every client's sample count (their gcd is {common})" if common >= 2
                   else "sampled steps (--no-epochs; no batch size of 2 or more divides every client's sample count)")
            raise ValueError(f"the model's {', '.join(norms)} layers take statistics over each batch, and with local "
                             f"epochs and {given} a client whose sample count is not a multiple of {b} (sizes "
                             f"{sorted(set(sizes.tolist()))[:8]}) ends each epoch on a padded partial batch; use "
                             f"{fix}, or GroupNorm")

    def _oracle(self, ctx: StepContext, xb: torch.Tensor, yb: torch.Tensor, w: torch.Tensor | None = None,
                vmapped: bool = False):
        """``ctx.grad`` on one step's batch: X -> the rows' minibatch gradients at X. With running statistics each
        call also moves ``ctx.state["running_stats"]`` by the batch, as every forward of a training loop does (SAM:
        both passes; ``FlatModel``). ``vmapped``: always by ``vmap(grad)`` (the compiled step)."""
        fn = self.model.vmapped_grad if vmapped else self.model.batched_grad
        if "running_stats" not in ctx.state:
            return lambda X: fn(X, xb, yb, self.client_chunk, w)

        def grad(X):
            g, ctx.state["running_stats"] = fn(X, xb, yb, self.client_chunk, w, ctx.state["running_stats"])
            return g

        return grad

    def _cast(self, t, dtype: torch.dtype) -> torch.Tensor:
        """A data tensor on the engine's device, floating-point ones in the models' dtype (labels stay int64)."""
        t = torch.as_tensor(t).to(self.device)
        return t.to(dtype) if t.is_floating_point() else t

    # ----- one round -------------------------------------------------------------------------------------
    def lr_at(self, t: int) -> float:
        return self.lr * self.lr_decay**t

    def plan(self, t: int) -> RoundPlan:
        idx = self.sampler.draw(self.K, self.generator)
        if self.algo.participation < 1.0:
            S = max(1, round(self.algo.participation * self.m))
            active = torch.randperm(self.m, generator=self.generator)[:S].sort().values
        else:
            active = torch.arange(self.m)
        return RoundPlan(idx, active, self.lr_at(t), self.K)

    def local_phase(self, state: dict, idx: torch.Tensor, lr: float) -> dict:
        """K local steps of every row of ``state`` (vectorized); ``idx`` is (K, rows, b). With local epochs an
        entry < 0 of ``idx`` is padding (module docstring): a row whose slot k has no entry >= 0 keeps its state
        through that step, and a partial batch weighs its valid samples 1 / (their number)."""
        idx = idx.to(self.device)
        valid = (idx >= 0) if self.epochs else None
        K = self.K if valid is None else valid.any(-1).sum(0, keepdim=True).T.to(state["x"].dtype)  # (rows, 1)
        ctx = StepContext(state=dict(state), anchor=state["x"], grad=None, lr=lr, K=K, shared=self.shared,
                          decay=lr / self.lr, unit=self.unit)
        rule = self.algo.local
        rule.round_start(ctx)
        if self.compiled:
            self._compiled_steps(ctx, idx)
            rule.round_end(ctx)
            return ctx.state
        for k in range(self.K):
            if valid is None:
                ctx.k, ctx.grad = k, self._oracle(ctx, self.x_train[idx[k]], self.y_train[idx[k]])
                d = rule.direction(None, ctx)
                ctx.state["x"] = torch.add(ctx.x, d, alpha=-lr)  # x <- x - eta d, one fused pass
            else:
                self._masked_step(ctx, k, idx[k], valid[k], lr)
        rule.round_end(ctx)
        return ctx.state

    def _step_fn(self, state: dict, anchor: torch.Tensor, xb: torch.Tensor, yb: torch.Tensor, lr: torch.Tensor,
                 decay: torch.Tensor, k: int) -> dict:
        """One local step, gradient oracle, the rule's transforms and the update, as one function for
        ``torch.compile``; ``lr`` and ``decay`` are 0-d tensors, ``k`` the first step of step k's phase."""
        ctx = StepContext(state=dict(state), anchor=anchor, lr=lr, K=self.K, shared=self.shared, decay=decay,
                          unit=self.unit, k=k, grad=None)
        ctx.grad = self._oracle(ctx, xb, yb, vmapped=True)
        d = self.algo.local.direction(None, ctx)
        ctx.x.sub_(lr * d)  # in place: the round's own copy of x (see _compiled_steps), no fresh (m, d) buffer
        return ctx.state

    def _steps_fn(self, state: dict, anchor: torch.Tensor, xbs: torch.Tensor, ybs: torch.Tensor, lr: torch.Tensor,
                  decay: torch.Tensor) -> dict:
        """The K local steps (:meth:`_step_fn` K times, on the minibatches ``xbs[k]``, ``ybs[k]``) as one function for
        ``torch.compile``."""
        for k in range(self.K):
            state = self._step_fn(state, anchor, xbs[k], ybs[k], lr, decay, self._phase_k[k])
        return state

    def _compiled_steps(self, ctx: StepContext, idx: torch.Tensor) -> None:
        """The K local steps through the compiled steps (``compile=True``; the first call compiles)."""
        x = ctx.x
        lr = torch.tensor(ctx.lr, dtype=x.dtype, device=x.device)
        decay = torch.tensor(ctx.decay, dtype=x.dtype, device=x.device)
        ctx.state["x"] = ctx.x.clone()  # updated in place by the steps; the anchor stays the round's start
        anchor = ctx.anchor
        calls = ([lambda s: self._steps(s, anchor, self.x_train[idx], self.y_train[idx], lr, decay)]
                 if self._steps is not None else
                 [lambda s, k=k: self._step(s, anchor, self.x_train[idx[k]], self.y_train[idx[k]], lr, decay,
                                            self._phase_k[k]) for k in range(self.K)])
        for call in calls:
            try:
                ctx.state = call(ctx.state)
            except compile_failures() as err:
                raise ValueError(f"torch.compile could not compile the local step of {self.algo.name} "
                                   f"({type(err).__name__}: {str(err).splitlines()[0][:200]}); run without "
                                   f"--compile (Engine(compile=False))") from None

    def _masked_step(self, ctx: StepContext, k: int, idx: torch.Tensor, valid: torch.Tensor, lr: float) -> None:
        """Step slot k of local epochs: the rows with a batch in this slot step (only they are computed), the
        others keep every state entry."""
        on = valid.any(-1)  # (rows,)
        if not bool(on.any()):
            return
        sub = on.nonzero().squeeze(1) if not bool(on.all()) else None
        if sub is not None:  # the step on the sub-batch of rows that have a batch in this slot
            step = StepContext(state={key: v[sub] for key, v in ctx.state.items()}, anchor=ctx.anchor[sub],
                               grad=None, lr=lr, K=ctx.K[sub], shared=self.shared, decay=ctx.decay, unit=self.unit)
            idx, valid = idx[sub], valid[sub]
        else:
            step = ctx
        w = valid.to(ctx.x.dtype)
        w = w / w.sum(-1, keepdim=True).clamp_min(1.0)
        rows = torch.where(valid, idx, ~idx)
        xb, yb = self.x_train[rows], self.y_train[rows]
        step.k, step.grad = k, self._oracle(step, xb, yb, w)
        before = dict(step.state)
        d = self.algo.local.direction(None, step)
        step.state["x"] = torch.add(step.x, d, alpha=-lr)
        if sub is not None:
            for key, v in step.state.items():
                if v is not before.get(key):
                    ctx.state[key] = ctx.state[key].index_copy(0, sub, v)

    def last_batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Every client's last local minibatch of a plan ``idx`` (K, rows, b): its sample indices (rows, b) and
        the loss weights (None when no entry is padding). DFedSGPSM-S's losses are taken on it."""
        if not self.epochs:
            return idx[-1], None
        valid = idx >= 0
        slot = (idx.shape[0] - 1) - valid.any(-1).flip(0).int().argmax(0)  # each row's last slot with a batch
        last, ok = idx[slot, torch.arange(idx.shape[1])], valid[slot, torch.arange(idx.shape[1])]
        w = ok.to(self.x_train.dtype)
        return torch.where(ok, last, ~last), w / w.sum(-1, keepdim=True)

    def round(self) -> dict:
        """Run round ``self.t``; returns {'sent': models sent this round}."""
        plan = self.plan(self.t)
        last, w = self.last_batch(plan.idx.to(self.device))  # the round's last minibatch: DFedSGPSM-S's losses
        ctx = CommContext(self.t, self.m, plan.active.to(self.device), self.mixing, self.algo.comm.draws,
                          shared=self.shared,
                          losses=lambda X: self.model.batched_loss(X, self.x_train[last], self.y_train[last], w,
                                                                   self.state.get("running_stats")))
        self.xbar_prev = self.x_bar().clone()  # x_bar^t, kept for the auxiliary sequences after the round
        if self.sequential:
            self._sequential_round(plan, ctx)
        else:
            a = ctx.active
            if len(a) == self.m:
                self.state = self.local_phase(self.state, plan.idx, plan.lr)
            else:
                sub = self.local_phase({k: v[a] for k, v in self.state.items()}, plan.idx[:, plan.active], plan.lr)
                for k, v in sub.items():
                    self.state[k] = self.state[k].index_copy(0, a, v)
            self.algo.comm.apply(self.state, self.cstate, ctx)
        self.t += 1
        self.sent += ctx.sent
        return {"sent": ctx.sent, "lr": plan.lr}

    def _sequential_round(self, plan: RoundPlan, ctx: CommContext) -> None:
        """Card dfedcata §3.2 item 1: for c = 1..m: aggregate (new rows j < c), extrapolate, train, overwrite.
        With ``copies`` S > 1 (independent copies of m / S clients under a block-diagonal W: a cohort) client c of
        every copy takes its turn at once, which is each copy's own sequential round."""
        comm = self.algo.comm  # its declared in-place schedule (CommRule.sequential_row, Program.sequential)
        W = ctx.W()
        W = (W.to_dense() if W.layout != torch.strided else W).to(self.state["x"].dtype)
        X = self.state["x"].clone()
        per = self.m // self.copies
        for c in range(per):
            rows = torch.arange(c, self.m, per, device=self.device)
            y = comm.sequential_row(rows, X, W, self.state, self.cstate)
            row = {k: v[rows] for k, v in self.state.items()}
            row["x"] = y
            row = self.local_phase(row, plan.idx[:, rows.cpu()], plan.lr)
            X[rows] = row["x"]
            for k, v in row.items():
                if k != "x":
                    self.state[k][rows] = v
        self.state["x"] = X
        comm.sequential_end(self.state, self.cstate)
        ctx.sent += links(W)

    # ----- averages and checkpoints ---------------------------------------------------------------------
    def x_bar(self) -> torch.Tensor:
        """The average model that is measured: ``Algorithm.average`` (DFedCata: the mean a_bar^t of the aggregated
        models, the theory's), and in the sequential schedule the mean of the trained local models X_K^{t-1}, which
        the public code evaluates (``torch.mean(clients_params_list)``, card dfedcata §3.2 item 8): there the rows
        of a^t are aggregated at different moments of the round and their mean is no model the code has."""
        if self.sequential:
            return self.state["x"].mean(0)
        return self.algo.average(self.state, self.cstate)

    def client_models(self) -> torch.Tensor:
        """Each client's model: x, de-biased under push-sum (DFedPGP: (u / mu, v))."""
        return self.algo.client_models(self.state, self.shared)

    @property
    def local_steps(self) -> torch.Tensor:
        """(m,) local steps per round of each client: K, or with local epochs K ceil(n_i / b)."""
        if not self.epochs:
            return torch.full((self.m,), self.K)
        return self.sampler.steps * (self.K // self.unit)

    def aux_points(self) -> dict[str, torch.Tensor]:
        """The algorithm's auxiliary points; with local epochs K is the mean of the clients' step counts."""
        if self.algo.aux is None:
            return {}
        K = self.K if not self.epochs else float(self.local_steps.double().mean())
        return self.algo.aux(self.x_bar(), self.xbar_prev, self.cstate, self.lr_at(max(self.t - 1, 0)), K)

    def identity(self) -> dict:
        """What a checkpoint of this engine must match to be resumed by it: the algorithm, the clients, the model's
        parameters (names and shapes) and the names, shapes and dtypes of the state it carries (as built: a
        distributed rank keeps only its block, :mod:`dfltheory.empirical.distributed`)."""
        return {"algorithm": self.algo.name, "clients": self.m, "parameters": self.model.dim,
                "model": [[name, list(shape)] for name, shape in zip(self.model.names, self.model.shapes)],
                **self.layout}

    def state_dict(self) -> dict:
        return {"identity": self.identity(), "t": self.t, "sent": self.sent, "state": self.state,
                "cstate": self.cstate, "xbar_prev": self.xbar_prev, "generator": self.generator.get_state()}

    def load_state_dict(self, sd: dict) -> None:
        """Continue from ``sd`` (written by :meth:`state_dict`); a ValueError names what differs where it was written
        by another algorithm, client count or model, or carries a state of other names, shapes or dtypes."""
        if not isinstance(sd, dict) or not isinstance(sd.get("identity"), dict):
            raise ValueError("it was not written by this version's engine (no record of what wrote it)")
        state, cstate = sd.get("state"), sd.get("cstate")
        if not all(isinstance(part, dict) and all(isinstance(v, torch.Tensor) for v in part.values())
                   for part in (state, cstate)):
            raise ValueError("its state is missing or not a dict of tensors")
        saved = {**sd["identity"], "state": layout(state), "cstate": layout(cstate)}  # the tensors as they are
        mine = self.identity()
        differ = [key for key in mine if saved.get(key) != mine[key]]
        if differ:
            def show(ident: dict, key: str) -> str:
                value = ident.get(key)
                return (f"{len(value)} tensors" if key == "model" and isinstance(value, list) else
                        ", ".join(f"{k} {tuple(v[0])}" for k, v in value.items()) if isinstance(value, dict) else
                        str(value))
            only_state = set(differ) <= {"state", "cstate"}
            raise ValueError(("it was written by another run, or by an earlier version of this algorithm whose "
                              "state had other entries (dfedcata's aggregates became state slots when it was "
                              "derived from its program): " if only_state else "it was written by another run: ")
                             + "; ".join(f"{key} {show(saved, key)} there, {show(mine, key)} here" for key in differ))
        t, sent, xbar, gen = sd.get("t"), sd.get("sent"), sd.get("xbar_prev"), sd.get("generator")
        if (isinstance(t, bool) or not isinstance(t, int) or t < 0 or isinstance(sent, bool)
                or not isinstance(sent, int) or sent < 0 or not isinstance(xbar, torch.Tensor)
                or xbar.shape != self.xbar_prev.shape or not isinstance(gen, torch.Tensor)
                or gen.shape != self.generator.get_state().shape):
            raise ValueError("its round, message count, previous average or generator state is missing or malformed")
        self.t, self.sent = t, sent
        self.state = {k: v.to(self.device) for k, v in state.items()}
        self.cstate = {k: v.to(self.device) for k, v in cstate.items()}
        self.xbar_prev = xbar.to(self.device)
        self.generator.set_state(gen)
