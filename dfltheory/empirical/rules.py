"""Local update rules: small composable transforms of the local step direction (optax style).

A local step of every algorithm here is ``x <- x - eta * d`` with the direction ``d`` built by a chain of
transforms. The first transform of a chain is a gradient oracle (:func:`gradient` or :func:`sam`); the others
modify the direction (:func:`proximal`, :func:`anchor_pull`, :func:`admm_dual`, :func:`scaffold_correction`,
:func:`momentum`, :func:`weight_decay`, :func:`clip`, :func:`alternating`). All tensors are stacked over clients,
shape ``(a, d)`` for the ``a`` clients that train this round, so every transform is a few row-wise tensor
operations.

Hooks, all optional: ``init(x)`` returns the transform's per-client state entries; ``round_start(ctx)``
runs before the K local steps; ``round_end(ctx)`` after them (it may replace ``x`` by the message to send,
as DFedADMM does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

EPS = 1e-12  # added to SAM's ||g|| to avoid 0/0 (the papers divide by ||g|| exactly; card dfedsam §3.1)
TORCH_CLIP_EPS = 1e-6  # torch.nn.utils.clip_grad_norm_ scales by max_norm / (||g|| + 1e-6), clamped at 1


@dataclass
class StepContext:
    """What a transform sees. ``state`` holds ``x`` and every transform's per-client tensors (rows = clients)."""

    state: dict[str, torch.Tensor]
    anchor: torch.Tensor  # round-start models x^t (the centre of proximal / ADMM terms)
    grad: Callable[[torch.Tensor], torch.Tensor]  # X -> stacked minibatch gradients at X (this step's batch)
    lr: float | torch.Tensor  # a 0-d tensor inside the engine's compiled step (so its decay does not recompile)
    K: int | torch.Tensor  # local steps this round; with local epochs each client's own count, shape (a, 1)
    k: int = 0
    shared: torch.Tensor | None = None  # (d,) bool: the coordinates push-sum mixes (DFedPGP's u); None: all
    decay: float | torch.Tensor = 1.0  # lr_decay^t, for rules with a learning rate of their own (DFedPGP's eta_v)
    unit: int = 1  # step slots per local unit: 1 (K counts steps) or the slots of one local epoch

    @property
    def x(self) -> torch.Tensor:
        return self.state["x"]

    @property
    def point(self) -> torch.Tensor:
        """Where gradients are taken: x, or the de-biased z = x / w under push-sum (card dfedsgpsm §3.1 line 5)."""
        return debias(self.state["x"], self.state.get("ps_weight"), self.shared)


def debias(x: torch.Tensor, w: torch.Tensor | None, shared: torch.Tensor | None = None) -> torch.Tensor:
    """Push-sum de-biasing z = x / w (card dfedsgpsm §3.1 line 5); with a ``shared`` mask only those coordinates
    are divided: DFedPGP's (z, v) = (u / mu, v) (seed 003 Algorithm 1 line 11, card dfedpgp §3.1)."""
    if w is None:
        return x
    return x / w if shared is None else torch.where(shared, x / w, x)


def _nonnegative(name: str, value: float) -> float:
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _row_norm(t: torch.Tensor) -> torch.Tensor:
    return t.norm(dim=1, keepdim=True)


class Transform:
    name = "transform"

    def init(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {}

    def round_start(self, ctx: StepContext) -> None:
        pass

    def direction(self, d: torch.Tensor | None, ctx: StepContext) -> torch.Tensor:
        raise NotImplementedError

    def round_end(self, ctx: StepContext) -> None:
        pass

    def phase(self, k: int, unit: int):
        """What ``direction`` reads of the step index ``ctx.k`` at step k (``unit`` slots per local unit): None
        where the direction is the same function at every step. The engine's compiled step is specialised on it
        (the steps of one phase share one compiled function), so a direction that reads ``ctx.k`` says how here."""
        return None


class gradient(Transform):
    """Plain stochastic gradient g = grad F_i(x; xi) (card dfedsam §3.1, eq. (3) with rho = 0)."""

    name = "gradient"

    def direction(self, d, ctx):
        return ctx.grad(ctx.point)


class sam(Transform):
    """SAM gradient: g = grad F_i(x; xi), then grad F_i(x + rho g/||g||; xi) on the SAME batch.

    DFedSAM seed 001 L76-84 (eq. (3)), card dfedsam §3.1; DFedADMM-SAM seed 004 box lines 10-12, card
    dfedadmm §3.2; DFedSGPSM lines 7-9 at the de-biased point (card dfedsgpsm §3.1). The norm is the whole
    vector's (not per layer), plus EPS.
    """

    name = "sam"

    def __init__(self, rho: float):
        self.rho = _nonnegative("rho", rho)

    def direction(self, d, ctx):
        z = ctx.point
        g = ctx.grad(z)
        return ctx.grad(z + self.rho * (g / (_row_norm(g) + EPS)))  # rho (g/||g||): the programs' ops.normalize


class weight_decay(Transform):
    """d + wd * x (ordinary L2 weight decay of the papers' SGD, e.g. 5e-4; card dfedsam §8)."""

    name = "weight_decay"

    def __init__(self, wd: float):
        self.wd = wd

    def direction(self, d, ctx):
        return d + self.wd * ctx.x


class proximal(Transform):
    """d + mu (x - x^t): FedProx's term, and DFedCata's Moreau-envelope penalty with mu = lam_pen.

    Card dfedcata §3.1 "local subproblem": x <- x - eta (g + lam_pen (x - y_i^t)); FedProx card dfedcata §3.3.
    """

    name = "proximal"

    def __init__(self, mu: float):
        self.mu = _nonnegative("mu", mu)

    def direction(self, d, ctx):
        return d + self.mu * (ctx.x - ctx.anchor)


class anchor_pull(Transform):
    """d - lam_pen * y_i, y_i = ``ctx.anchor`` the round's starting point: the gradient of the DFedCata code's
    ``lamb * loss_correct``, loss_correct = -<x, y_i> (client/dfedcata.py; card dfedcata §3.2 item 3).

    Followed by ``weight_decay(lam_pen + wd)`` (the code's SGD ``weight_decay = lamb + weight_decay``) it gives
    proximal's lam_pen (x - y_i) plus wd x; a :class:`clip` between the two clips grad f - lam_pen y_i only, as the
    code.
    """

    name = "anchor_pull"

    def __init__(self, lam_pen: float):
        self.lam_pen = _nonnegative("lam_pen", lam_pen)

    def direction(self, d, ctx):
        return d - self.lam_pen * ctx.anchor


class admm_dual(Transform):
    """DFedADMM's augmented-Lagrangian step and dual update (seed 004 box lines 6/13, 15, 16; card dfedadmm §3.2).

    step:      d - ghat_i^{t-1} + (1/lam_pen)(x - x_i^t)                  eq. (6)
    round end: ghat_i^t = ghat_i^{t-1} - (1/lam_pen)(x_{i,K} - x_i^t)     line 15
               message z_i^t = x_{i,K} - lam_pen * ghat_i^{t-1}            line 16 (OLD dual; replaces x)
    """

    name = "admm_dual"

    def __init__(self, lam_pen: float):
        if lam_pen <= 0:
            raise ValueError(f"the ADMM penalty lam_pen must be > 0, got {lam_pen}")
        self.lam_pen = lam_pen

    def init(self, x):
        return {"dual": torch.zeros_like(x)}  # ghat_i^{-1} = 0

    def direction(self, d, ctx):
        return d - ctx.state["dual"] + (ctx.x - ctx.anchor) / self.lam_pen

    def round_end(self, ctx):
        old = ctx.state["dual"]
        ctx.state["dual"] = old - (ctx.x - ctx.anchor) / self.lam_pen
        ctx.state["x"] = ctx.x - self.lam_pen * old


class scaffold_correction(Transform):
    """SCAFFOLD (Karimireddy et al. 2020, option II): d - c_i + c; c_i^+ = c_i - c + (x^t - x_K)/(K eta).

    The server's control update c <- c + (1/m) sum_{i in S} (c_i^+ - c_i) is communication
    (:class:`dfltheory.empirical.communication.scaffold_control`); this rule leaves c_i^+ - c_i in ``c_delta``.
    """

    name = "scaffold"

    def init(self, x):
        z = torch.zeros_like(x)
        return {"c_local": z, "c_global": z.clone(), "c_delta": z.clone()}

    def direction(self, d, ctx):
        return d - ctx.state["c_local"] + ctx.state["c_global"]

    def round_end(self, ctx):
        s = ctx.state
        new = s["c_local"] - s["c_global"] + (ctx.anchor - ctx.x) / (ctx.K * ctx.lr)
        s["c_delta"] = new - s["c_local"]
        s["c_local"] = new


class momentum(Transform):
    """Local heavy-ball momentum v <- beta v + d, step along v (DFedAvgM, Sun, Li & Wang 2022; card dfedsam §3.3).

    With ``reset=True`` (DFedAvgM's y^{t,-1} = y^{t,0}) the buffer restarts at 0 every round and lives only through
    the round (it is not part of the run's state or its checkpoints). ``moving(ctx)`` (a bool mask over the
    coordinates): only those move at this step, and the buffer of the others is held at 0, as one SGD optimizer per
    group of parameters, new when its group starts to move (DFedPGP's phases, :class:`alternating`).
    """

    name = "momentum"

    def __init__(self, beta: float, reset: bool = True, moving: Callable[[StepContext], torch.Tensor] | None = None):
        if not 0 <= beta < 1:
            raise ValueError(f"momentum beta must be in [0, 1), got {beta}")
        self.beta, self.reset, self.moving = beta, reset, moving

    def init(self, x):
        return {} if self.reset else {"momentum": torch.zeros_like(x)}

    def round_start(self, ctx):
        if self.reset:
            ctx.state["momentum"] = torch.zeros_like(ctx.x)

    def direction(self, d, ctx):
        v = self.beta * ctx.state["momentum"] + d
        if self.moving is not None:
            v = torch.where(self.moving(ctx), v, 0.0)
        ctx.state["momentum"] = v
        return v

    def round_end(self, ctx):
        if self.reset:
            del ctx.state["momentum"]


class alternating(Transform):
    """DFedPGP's alternating local phase (seed 003 Algorithm 1 lines 5-12, L90-100; card dfedpgp §3.1): the
    direction restricted to the part that moves.

    Steps k < K_v move the personal part only, v <- v - eta_v grad_v F_i(z_i^{t,0}, v) (u frozen);
    the other K_u steps the shared part only, u <- u - eta_u grad_u F_i(u / mu, v^{t+1}).
    ``ctx.shared`` marks u. With local epochs K_v and K_u count epochs (seed 003 L189: 1 on v, 5 on u): the first
    K_v epochs' step slots (``ctx.unit`` slots per epoch) move v. eta_v is :class:`personal_lr`, the experiments'
    momentum :class:`momentum` with ``moving=alternating.moving`` (algorithms.dfedpgp).
    """

    name = "alternating"

    def __init__(self, K_v: int):
        if K_v < 0:
            raise ValueError(f"K_v (personal steps per round) must be >= 0, got {K_v}")
        self.K_v = K_v

    def phase(self, k, unit):
        """True on the personal steps (the first K_v local units), False on the shared ones."""
        return k < self.K_v * unit

    def moving(self, ctx) -> torch.Tensor:
        """(d,) bool: the coordinates that step k moves (v on a personal step, u on a shared one)."""
        return ~ctx.shared if self.phase(ctx.k, ctx.unit) else ctx.shared

    def direction(self, d, ctx):
        return torch.where(self.moving(ctx), d, 0.0)


class personal_lr(Transform):
    """eta_v on DFedPGP's personal steps: the direction times ``lr_v`` / eta_u there, lr_v decayed like eta_u
    (default eta_v = eta_u, seed 003 L189 states none); last in the chain, so that clipping and momentum act on the
    gradient as an SGD optimizer with learning rate eta_v does."""

    name = "personal_lr"

    def __init__(self, phases: alternating, lr_v: float):
        if lr_v <= 0:
            raise ValueError(f"the personal learning rate lr_v must be > 0, got {lr_v}")
        self.phases, self.lr_v = phases, lr_v

    def phase(self, k, unit):
        return self.phases.phase(k, unit)

    def direction(self, d, ctx):
        return d * (self.lr_v * ctx.decay / ctx.lr) if self.phases.phase(ctx.k, ctx.unit) else d


class clip(Transform):
    """Per-client norm clipping of the direction so far: d * min(1, max_norm / (||d|| + eps)).

    DFedCata code: clip_grad_norm_(max_norm=10) at every local step (card dfedcata §3.2 item 4), whose eps is
    ``TORCH_CLIP_EPS``; the other algorithms use ``EPS``.
    """

    name = "clip"

    def __init__(self, max_norm: float, eps: float = EPS):
        if max_norm <= 0:
            raise ValueError(f"max_norm must be > 0, got {max_norm}")
        self.max_norm, self.eps = max_norm, eps

    def direction(self, d, ctx):
        return d * torch.clamp(self.max_norm / (_row_norm(d) + self.eps), max=1.0)


class chain(Transform):
    """Compose transforms left to right; the first must be a gradient oracle (``gradient`` or ``sam``)."""

    name = "chain"

    def __init__(self, *transforms: Transform):
        if not transforms or not isinstance(transforms[0], (gradient, sam)):
            transforms = (gradient(), *transforms)
        if any(isinstance(t, (gradient, sam)) for t in transforms[1:]):
            raise ValueError("only the first transform of a chain may be a gradient oracle (gradient or sam)")
        self.transforms = transforms

    def init(self, x):
        out: dict[str, torch.Tensor] = {}
        for t in self.transforms:
            out.update(t.init(x))
        return out

    def round_start(self, ctx):
        for t in self.transforms:
            t.round_start(ctx)

    def direction(self, d, ctx):
        for t in self.transforms:
            d = t.direction(d, ctx)
        return d

    def round_end(self, ctx):
        for t in self.transforms:
            t.round_end(ctx)

    def phase(self, k, unit):
        return tuple(t.phase(k, unit) for t in self.transforms)

    def __repr__(self):
        return " -> ".join(t.name for t in self.transforms)


def sgd(*modifiers: Transform) -> chain:
    """Local SGD with optional modifiers: ``sgd(momentum(0.9))``."""
    return chain(gradient(), *modifiers)
