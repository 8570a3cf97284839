"""The papers' experimental claims (cards §9 and §10), re-run faithfully on digits and tested with stated power
(issues 16 and 22).

Every claim compares *arms* (an algorithm at a setting) on one metric, with the same rounds T and local epochs for
every arm except the budget the claim is about (``Claim.varies``). D-PSGD and SGP take one local epoch by definition,
as in the papers (one epoch against five).

**Problem.** scikit-learn's digits (1,797 images 8x8, 10 classes), Dirichlet(0.3) label split (the papers' most
heterogeneous setting), the MLP ``mlp-small`` (the papers' 2NN shape with 32-32 hidden units: the runs are
memory-bound in m d on the CPU), the test set split like each client's data for DFedPGP's personal accuracy
(dfedpgp.md §8). Seed s of an arm is the run ``seed = data_seed = s``: the seeds differ in the partition, the
initial model, the random graph and the minibatches, and an arm's seeds train in one engine
(:mod:`dfltheory.empirical.cohort`).

**Faithful settings** (each card's §8; :data:`PAPER_BASE`): local work in *epochs* (K = 5 epochs of batch 32), lr
0.1 with the paper's per-round decay rescaled so that lr_t follows the paper's path over its own rounds
(decay^(T_paper / T): DFedPGP's 0.99 over 500 rounds ends at 0.0066 eta in every size), the paper's rho, momentum,
lambda, beta, Q, weight decay and mixing rule: DFedPGP as its experiments run it (momentum 0.9, weight decay 5e-4,
the row-stochastic pull rule (6): ``dfedpgp-pull``), DFedCata with the public code's weights and hyper-parameters
(uniform 1/(deg+1) on its random graph, clipping at 10, weight decay 5e-4, reading A; reading B a named variant),
symmetric arms on a random k-regular graph so that they have the directed arms' neighbour budget k, the papers' 10
of 100 neighbours scaled as k = max(2, round(m/10)) (:func:`scaled`), DFedSGPSM-S with that k. What still differs
from a paper is listed per claim (``Claim.deviations``, docs/claims.md).

**DFedADMM** at the printed eta = lambda = 0.1 is degenerate (card §10.12: 1 - eta/lambda ~ 0, the K local steps
act as about one); this is tested once, as the finding ``dfedadmm.printed``, and the other DFedADMM claims run at
lambda = 1 (eta/lambda = 0.1), where the algorithm is not degenerate.

**Tests** (:mod:`dfltheory.verify.stats`): a t-test per pair ('a > b'; paired over the seeds, since seed s gives every
arm of a claim the same problem), TOST with the claim's margin ('a = b'), a permutation test of the per-seed Spearman
rho for 'follows the spectral gap', the paper's named inversions for 'does not follow it', Holm's correction inside a
claim and, beside it, over every test of the run (the family-wise policy); every part carries its p-value, the
smallest effect detectable at 80 % power and, where the paper printed both numbers (``Claim.paper_values``), the
paper's effect: a part that is not significant is then 'paper's effect excluded' or 'underpowered'. Rounds to a
target accuracy use a target every run of the claim reaches (no censored run), measured every round. A pair whose arms
still move in the last 20 % of the rounds by more than the effect tested is flagged ``moving``.

**Calibration** (issue 34): a rule must agree with the paper's own numbers before it may contradict them.
:func:`calibrate` feeds each claim's rule the paper's printed numbers plus the measured per-seed noise; a part (pair or
trend) that the rule calls contradicted on them more than :data:`CALIBRATION_LEVEL` of the time cannot be
contradicted by the runs (it becomes inconclusive, and the claim's verdict is taken again from its parts); a part
without paper numbers is not calibrated and keeps its call.
Claims that test one finding (``Claim.finding``) are counted once (:func:`findings`). :func:`rejudge` applies today's
rules to a stored result's per-seed values without training.

**Plans** (:data:`PLANS`): ``digits`` runs every claim (quick, default, full, gpu sizes); ``mnist`` runs the claims
the papers ran on MNIST at the papers' settings (sizes ``cpu``, which scales the model, local epochs and seeds down
and says so per claim, and ``gpu``), with :func:`estimate`'s cost announced before anything trains.

:func:`run_claims` trains the cohorts (cached under ``out/cohorts``, resumable) and returns a JSON-safe dict;
:mod:`dfltheory.figures.claims` draws it and holds the ``claims`` command.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from dfltheory.plugins import Registry, builtin_papers, load_builtin, load_once
from dfltheory.verify import stats
from dfltheory.verify.instances import check_run_options, train_command
from dfltheory.verify.processes import pool_map
from dfltheory.verify.records import ClaimResult
from dfltheory.verify.strict_json import json_safe

TARGET_GRID = 0.01  # rounds-to-target: the target is the best accuracy every run reaches, rounded down to this
TARGET_MIN = 0.3  # three times chance on 10 classes: below it the runs are not compared by their speed
MARGIN = {"test_acc": 0.01, "local_test_acc": 0.01}  # the equivalence margin of 'a = b' claims: one accuracy point
CALIBRATION_SIMS = 200  # simulated replications of a claim fed the paper's own numbers (:func:`calibrate`)
CALIBRATION_LEVEL = 0.1  # a rule that calls the paper's own numbers "contradicted" more often cannot contradict them
RULE = ("each pair by a two-sided t-test ('a > b'; paired over the seeds, which give both arms the same problems) or "
        "TOST within the claim's margin ('a = b'); 'follows the spectral gap' by a permutation test of the per-seed "
        "Spearman rho, 'does not follow it' on the inversions the paper names (one shown: agrees; all reversed: "
        "contradicted); Holm's correction at 0.05 inside a claim (each claim its own family; the study-wide Holm over "
        "every test of the run is given beside, verdict_study, where an agrees, contradicted or paper's effect "
        "excluded stands only below 0.05); a part that is not significant is 'paper's effect excluded' when "
        "'difference >= the paper's printed effect' is rejected, 'underpowered' when the smallest "
        "effect detectable at 80 % power exceeds the paper's effect (or the margin), else inconclusive; a claim "
        "agrees when every part does, is contradicted when one part is (and the rule, fed the paper's own numbers "
        "with the measured noise, does not call that part contradicted), not testable when none could be tested")
#: metric key -> (+1 larger is better | -1 smaller is better, label)
METRICS = {"test_acc": (1, "test accuracy (last round)"),
           "local_test_acc": (1, "the clients' own models' mean test accuracy (last round)"), "train_loss": (-1, "train loss f(x_bar) (last round)"),
           "consensus": (-1, "consensus error (1/m) sum_i ||x_i - x_bar||^2 (last round)"),
           "rounds_to_target": (-1, "rounds to a test accuracy every run reaches"),
           "sharpness": (-1, "lambda_max of the Hessian of f at x_bar (last round; smaller is flatter)")}
#: the recorded key drawn against rounds for a metric that is not itself recorded
CURVE = {"rounds_to_target": "test_acc", "local_test_acc": "local_test_acc_mean", "sharpness": "train_loss"}

COMMON = {"dataset": "digits", "partition": "dirichlet", "alpha": 0.3, "model": "mlp-small", "epochs": True, "K": 5,
          "batch_size": 32, "lr": 0.1, "local_eval": True, "threads": 1}
#: topology parameters are templates filled per size by :func:`scaled` ({k} neighbours, {kr} for a k-regular graph,
#: {kc} the code's random picks, {p} and {ws_k} below)
SYMMETRIC = {"topology": "random", "topology_params": "k={kr},direction=regular", "weights": "metropolis"}
PUSH_OUT = {"topology": "random", "topology_params": "k={k},direction=out", "weights": "push-sum"}  # seed 000 L275
PULL_IN = {"topology": "random", "topology_params": "k={k},direction=in", "weights": "uniform"}  # seed 003 L189, (6)
CODE_GRAPH = {"topology": "code-random", "topology_params": "k={kc}", "weights": "uniform"}  # dfedcata.md §3.2, §7
_BATCH = ("batch 32 on about 27 (m = 50) or 13 (m = 100) training images per client: 1-2 steps per local epoch (the "
          "Dirichlet sizes vary), not 4-5 of 128 on 500-600")



@dataclass(frozen=True)
class Arm:
    """One algorithm at one setting: ``cfg`` overrides the paper's base; ``seed_offset`` shifts its seeds (a planted
    claim compares an arm with itself on other seeds)."""

    label: str
    cfg: Mapping
    seed_offset: int = 0
    scale: Mapping = field(default_factory=dict)  # {"n": c} m -> round(c m) clients; {"k": c} k -> round(c k)
    finetune: int | None = None  # local fine-tuning steps after training; the metric is then the personal accuracy


@dataclass(frozen=True)
class Trend:
    """The claim that ``metric`` follows the spectral gap across ``arms`` (relation '>') or does not ('=')."""

    metric: str
    relation: str
    arms: tuple[str, ...]
    inversions: tuple[tuple[str, str], ...] = ()  # '=': (a, b) the paper puts a above b though a's gap is smaller


@dataclass(frozen=True)
class Claim:
    """A claim of a paper: ``pairs`` (a, '>' or '=', b) over arm labels, on ``metric`` at the last round;
    ``large``: run at the size's larger client count (topology, neighbour and client-count claims, where the
    spectral gaps must be ordered as in the paper); ``deviations``: what differs from the paper beyond
    :data:`DEVIATIONS`; ``paper_values``: the paper's printed number per arm label, in the metric's units (the
    effect a pair is powered against, and :func:`calibrate`'s input); ``finding``: the id of the claim whose finding
    this one repeats (counted once: :func:`findings`); ``every_round``: measure every round (speed claims, and the
    claims that share their runs); ``paper_setting``, ``paper_rounds``: the data and model, and the rounds, of the
    claim's own table or figure where they are not the paper's main ones (:data:`PAPER_SETTING`, the paper's
    rounds); the learning-rate path stays the main experiments' (rescaled to the run's rounds); ``data``: the
    data plans it runs in (:data:`PLANS`: digits for every claim; MNIST as well where the paper ran it on MNIST; the
    landscape claim only on Fashion-MNIST, which digits cannot carry)."""

    id: str
    paper: str
    section: str
    statement: str
    paper_number: str
    arms: tuple[Arm, ...]
    pairs: tuple[tuple[str, str, str], ...]
    metric: str = "test_acc"
    note: str = ""
    index: tuple[str, ...] = field(default=())  # the card §10 items it answers ("dfedsam.18")
    trends: tuple[Trend, ...] = ()
    varies: tuple[str, ...] = ()  # the budget keys its arms differ in ("K", "n"); all others are equal
    large: bool = False
    deviations: tuple[str, ...] = ()
    paper_values: Mapping[str, float] = field(default_factory=dict)
    finding: str = ""
    every_round: bool = False
    paper_setting: str = ""
    paper_rounds: int | None = None  # the rounds of its table or figure where not the paper's main ones
    data: tuple[str, ...] = ("digits",)  # the data plans (:data:`PLANS`) it runs in

    def arm(self, label: str) -> Arm:
        return next(a for a in self.arms if a.label == label)


def arm(label: str, algo: str, scale: Mapping | None = None, finetune: int | None = None, **cfg) -> Arm:
    return Arm(label, {"algo": algo, **cfg}, scale=dict(scale or {}), finetune=finetune)




# ------------------------------------------------------------------------------------------------ sizes
@dataclass(frozen=True)
class ClaimSize:
    """Clients m (``m_large`` for the claims marked ``large``), rounds T, seeds per arm, rounds between two
    measurements."""

    m: int
    m_large: int
    rounds: int
    seeds: int
    eval_every: int
    K: int | None = None  # local epochs instead of the paper's (a CPU size that must scale them down)
    model: str | None = None  # a stand-in model instead of the plan's
    deviations: tuple[str, ...] = ()  # what this size changes, listed with every claim


#: quick: tests (seconds); default: inside `make report` on 2 cores (minutes; underpowered, and says so); full: the
#: faithful size (m = 50, 100 for the topology, neighbour and client claims, 100 rounds over which the papers'
#: learning-rate paths are spread, 10 seeds; about an hour on 2 cores, results in docs/claims-full.json); gpu: the
#: papers' m = 100 for every claim and 500 rounds (not run)
SIZES = {"quick": ClaimSize(m=4, m_large=6, rounds=2, seeds=3, eval_every=1),
         "default": ClaimSize(m=10, m_large=20, rounds=40, seeds=5, eval_every=4),
         "full": ClaimSize(m=50, m_large=100, rounds=100, seeds=10, eval_every=5),
         "gpu": ClaimSize(m=100, m_large=100, rounds=500, seeds=10, eval_every=10)}


def neighbours(m: int) -> int:
    """The papers' 10 neighbours of 100 clients at m clients: max(2, round(m/10))."""
    return max(2, round(m / 10))


def scaled(m: int, n: int | None = None, k_scale: float = 1.0) -> dict:
    """The values the topology templates take for a run of ``n`` clients in a claim of size ``m`` (n = m unless the
    arm scales it): {k} = round(k_scale neighbours(m)) in [1, n - 1]; {kr} the same made even where n is odd (a
    k-regular graph needs k n even); {kc} = k - 1, the DFedCata code's random picks per client (symmetrized: about
    k neighbours); {p}, the Erdos-Renyi edge probability, max(0.1, 3/n); {ws_k}, the Watts-Strogatz lattice degree,
    8 from n = 50 (the paper's), 4 from n = 8, else 2 (dfedcata.md §7)."""
    n = m if n is None else n
    k = min(n - 1, max(1, round(k_scale * neighbours(m))))
    kr = k if k * n % 2 == 0 else (k - 1 if k > 1 else k + 1)
    return {"k": k, "kr": kr, "kc": max(1, k - 1), "p": round(min(1.0, max(0.1, 3 / n)), 3),
            "ws_k": 8 if n >= 50 else 4 if n >= 8 else 2}


@dataclass(frozen=True)
class Plan:
    """What the claims run on: ``common`` (the options every run shares: data set, partition, model, local epochs,
    batch, lr), its ``sizes`` and the one run when none is named (``default``), the problem in words (``problem``;
    ``setting``: its data and model, compared with each paper's), what it changes from every claim of a paper
    (``deviations``). It runs the claims that name it (``Claim.data``), each arm with its paper's options for this
    data set (``register_claims(data_options=...)``)."""

    name: str
    common: Mapping
    sizes: Mapping[str, ClaimSize]
    default: str
    problem: str
    setting: str
    deviations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


DIGITS = Plan("digits", COMMON, SIZES, "default", "digits, Dirichlet(0.3), MLP 32-32, K = 5 local epochs of batch 32",
              "digits and a 32-32 MLP", deviations={p: (_BATCH,) for p in builtin_papers()})

#: MNIST where the papers ran it (issue 34 item 2): DFedSGPSM's Table 1 and DFedADMM's Tables 1 and 2 (seed 000 L275,
#: seed 004 L183, L343; cards §8): m = 100 clients of about 600 images (Dirichlet 0.3), the 200-200 MLP
#: ("mnist_2NN"), K = 5 local epochs of batch 128, lr 0.1 decayed by 0.998 per round over 300 rounds, the papers'
#: rho, momentum and lambda; the papers' options for MNIST are theirs (``register_claims(data_options=...)``:
#: DFedADMM's weight decay for its baselines, seed 004 L343), the claims run on MNIST name it. The model is the paper's in
#: the gpu size; the cpu size (one session on 2 cores: about 3.7 CPU-hours measured, 12 cohorts of 5 seeds) swaps in
#: the 32-32 MLP, one local epoch and 5 seeds, and says so.
MNIST_COMMON = {**COMMON, "dataset": "mnist", "model": "mlp", "batch_size": 128}
_MNIST_STANDIN = ("the 32-32 MLP (d = 26,506) standing in for the papers' 200-200 MLP (d = 199,210): 7.5 times fewer "
                  "operations per image")
MNIST_SIZES = {
    "quick": ClaimSize(m=4, m_large=4, rounds=2, seeds=2, eval_every=1, model="mlp-small",
                       deviations=("the quick size: a test of the plumbing, not of the claims",)),
    "cpu": ClaimSize(m=100, m_large=100, rounds=300, seeds=5, eval_every=50, K=1, model="mlp-small",
                     deviations=("the cpu size (one session, about 2 hours on 2 cores): " + _MNIST_STANDIN,
                                 "the cpu size: 1 local epoch, not the papers' 5 (about 5 steps of batch 128, not 25)",
                                 "the cpu size: 5 seeds per arm, not 10")),
    "gpu": ClaimSize(m=100, m_large=100, rounds=300, seeds=10, eval_every=5),
}
MNIST = Plan("mnist", MNIST_COMMON, MNIST_SIZES, "cpu",
             "MNIST (60,000 training images), Dirichlet(0.3), m = 100, the 200-200 MLP, K = 5 local epochs of batch 128",
             "MNIST and the 200-200 MLP")
#: Fashion-MNIST for DFedSAM's landscape claim (seed 001 Fig. 2, L27-33: FedAvg against DFedAvg "with the same
#: setting", no other detail; dfedsam.md §8 for the main setting: m = 100, Dirichlet 0.3, 5 local epochs of batch 128,
#: lr 0.1 decayed by 0.998 per round, weight decay 5e-4, FedAvg sampling 10 % of the clients). The split is the
#: package's documented stratified one (``dfltheory data fetch fashion-mnist``).
FASHION_COMMON = {**COMMON, "dataset": "fashion-mnist", "model": "mlp", "batch_size": 128}
FASHION_SIZES = {
    "quick": ClaimSize(m=4, m_large=4, rounds=2, seeds=3, eval_every=1, model="mlp-small",
                       deviations=("the quick size: a test of the plumbing, not of the claim",)),
    "cpu": ClaimSize(m=100, m_large=100, rounds=100, seeds=5, eval_every=20, K=1, model="mlp-small",
                     deviations=("the cpu size (minutes on 2 cores): the 32-32 MLP, the paper's model being unnamed "
                                 "for Fig. 2 (its main models are VGG-11 and ResNet-18 on CIFAR)",
                                 "the cpu size: 100 rounds (the paper's 1000 are its CIFAR runs), 1 local epoch, not 5",
                                 "the cpu size: 5 seeds per arm")),
    "gpu": ClaimSize(m=100, m_large=100, rounds=1000, seeds=10, eval_every=50),
}
FASHION = Plan("fashion-mnist", FASHION_COMMON, FASHION_SIZES, "cpu",
               "Fashion-MNIST (the package's stratified 60,000/10,000 split), Dirichlet(0.3), m = 100, K = 5 local "
               "epochs of batch 128", "Fashion-MNIST")
PLANS = {"digits": DIGITS, "mnist": MNIST, "fashion-mnist": FASHION}


def plan_of(plan: str | Plan) -> Plan:
    """The plan named ``plan`` (or ``plan`` itself); an unknown name is a ValueError listing the valid ones."""
    if isinstance(plan, Plan):
        return plan
    if plan not in PLANS:
        raise ValueError(f"unknown data plan {plan!r}; choose one of {', '.join(PLANS)}")
    return PLANS[plan]


#: per paper with claims: its claims' ids, its base options, its rounds, the theorem quantity recorded, what every
#: claim changes, the data and model of its main experiments; every claim by id. :class:`dfltheory.plugins.Registry`
#: mappings: the built-in papers' claims (dfltheory/papers/<id>/claims.py) are registered when one is first read
#: (:func:`_load_builtins`); a plugin adds papers and claims (:func:`register_claims`), it cannot replace or remove a
#: built-in one


def _load_builtins() -> None:
    # the built-in papers' claims are fixed: a plugin adds its own, it cannot replace one
    load_once(_LOADING, lambda: load_builtin("claims"), *_REGISTRIES)


_LOADING: list[bool] = []
PAPERS: dict[str, tuple[str, ...]] = Registry("paper with claims", load=_load_builtins)
PAPER_BASE: dict[str, dict] = Registry("paper's claims base options", load=_load_builtins)
PAPER_ROUNDS: dict[str, int] = Registry("paper's claims rounds", load=_load_builtins)
QUANTITY: dict[str, str] = Registry("paper's claims quantity", load=_load_builtins)
DEVIATIONS: dict[str, tuple[str, ...]] = Registry("paper's claims deviations", load=_load_builtins)
PAPER_SETTING: dict[str, str] = Registry("paper's main experimental setting", load=_load_builtins)
#: paper -> data plan -> algorithm -> the options its arms take on that data set (register_claims' data_options)
DATA_OPTIONS: dict[str, dict[str, dict[str, dict]]] = Registry("paper's options per data set", load=_load_builtins)
CLAIMS: dict[str, Claim] = Registry("claim", load=_load_builtins)
_REGISTRIES = (PAPERS, PAPER_BASE, PAPER_ROUNDS, QUANTITY, DEVIATIONS, PAPER_SETTING, DATA_OPTIONS, CLAIMS)


def register_claims(paper: str, claims: Sequence[Claim], *, base: Mapping, rounds: int,
                    quantity: str = "grad_norm_sq", deviations: Sequence[str] = (), setting: str = "",
                    data_options: Mapping[str, Mapping[str, Mapping]] | None = None, origin: str = "") -> None:
    """Make ``dfltheory claims PAPER`` (and the report) test a paper's experimental claims: each :class:`Claim` of
    ``paper`` compares :class:`Arm`s (a registered algorithm and its options over :data:`COMMON` and ``base``) by a
    statistical test over seeds. ``base``: the paper's options, with ``decay`` its per-round learning-rate factor
    over its ``rounds`` (rescaled to the run's rounds); ``quantity``: the metric of the theorem's quantity recorded
    beside; ``deviations``: what every claim does differently from the paper; ``setting``: the data and model of its
    main experiments, named where a plan runs others; ``data_options``: data plan -> algorithm -> the options its
    arms take in that plan (the paper's weight decay for its baselines on MNIST). ``origin`` (a plugin file) is named in the errors, ValueErrors
    that name the problem and the fix."""
    from dfltheory.bounds import PAPERS as CATALOG
    from dfltheory.empirical.algorithms import ALGORITHMS

    where = f"{origin}: " if origin else ""
    if not isinstance(paper, str):
        raise ValueError(f"{where}register_claims: paper must be a paper id (a string), got {type(paper).__name__}; "
                         "see docs/extending.md")
    shape = []
    if isinstance(claims, (str, bytes, Mapping)) or not isinstance(claims, Iterable):
        shape.append(f"claims must be a list of Claim, got {type(claims).__name__}")
    else:
        claims = list(claims)
        shape += [f"claims[{i}] must be a Claim (dfltheory.verify.claims.Claim), got {type(c).__name__}"
                  for i, c in enumerate(claims) if not isinstance(c, Claim)]
    if not isinstance(base, Mapping):
        shape.append(f"base must be a mapping of the paper's options with 'decay', got {type(base).__name__}")
    if not isinstance(setting, str):
        shape.append(f"setting must be the data and model of the paper's main experiments (a string), got "
                     f"{type(setting).__name__}")
    if not isinstance(quantity, str):
        shape.append(f"quantity must be a recorded metric's name (a string), got {type(quantity).__name__}")
    data_options = {} if data_options is None else data_options
    if not isinstance(data_options, Mapping) or not all(
            isinstance(algos, Mapping) and all(isinstance(o, Mapping) for o in algos.values())
            for algos in data_options.values()):
        shape.append("data_options must map a data plan to {algorithm: {option: value}}")
    if isinstance(deviations, (str, bytes)) or not isinstance(deviations, Iterable) or \
            not all(isinstance(d, str) for d in deviations):
        shape.append("deviations must be a list of strings (what every claim does differently from the paper)")
    if shape:
        raise ValueError(f"{where}claims of {paper!r}: {shape[0]}; see docs/extending.md")
    problems = []
    if paper not in CATALOG:
        problems.append(f"unknown paper {paper!r} (register it first: dfltheory.bounds.register_paper)")
    if paper in PAPERS:
        problems.append(f"paper {paper!r} already has claims")
    if "decay" not in base or isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        problems.append("base needs 'decay' (the paper's per-round factor, 1.0 for none) and rounds an integer >= 1")
    ids = [c.id for c in claims] + list(CLAIMS)
    problems += [f"data_options names data plan {d!r}, not one of {', '.join(PLANS)}" for d in data_options
                 if d not in PLANS]
    for c in claims:
        labels = {a.label for a in c.arms}
        if c.paper != paper:
            problems.append(f"{c.id!r} is not a Claim of paper {paper!r} (its paper: {c.paper!r})")
        elif ids.count(c.id) > 1:
            problems.append(f"duplicate claim id {c.id!r}")
        elif (not isinstance(c.data, (tuple, list)) or not c.data
              or any(not isinstance(d, str) or d not in PLANS for d in c.data)):
            problems.append(f"claim {c.id!r}: data {c.data!r} names no data plan; give a tuple of "
                            f"{', '.join(PLANS)}")
        elif c.metric not in METRICS:
            problems.append(f"claim {c.id!r}: metric {c.metric!r} is not one of {', '.join(METRICS)}")
        else:
            problems += [f"claim {c.id!r}: arm {a.label!r} runs unknown algorithm {a.cfg.get('algo')!r}"
                         for a in c.arms if a.cfg.get("algo") not in ALGORITHMS]
            problems += [f"claim {c.id!r}: pair {pair} names an arm it does not have"
                         for pair in c.pairs if pair[0] not in labels or pair[2] not in labels or
                         pair[1] not in (">", "=")]
    if problems:
        raise ValueError(f"{where}claims of {paper!r}: {problems[0]}; see docs/extending.md")
    PAPERS[paper] = tuple(c.id for c in claims)
    PAPER_BASE[paper], PAPER_ROUNDS[paper], QUANTITY[paper] = dict(base), rounds, quantity
    DEVIATIONS[paper] = tuple(deviations)
    PAPER_SETTING[paper] = setting
    DATA_OPTIONS[paper] = {d: {a: dict(o) for a, o in algos.items()} for d, algos in data_options.items()}
    for c in claims:
        CLAIMS[c.id] = c





def select(papers: Sequence[str] = ("all",), plan: str | Plan = "digits") -> list[Claim]:
    """The claims of ``papers`` ('all' or paper names) that ``plan`` runs; an unknown name is a ValueError listing
    the valid ones."""
    plan = plan_of(plan)
    papers = list(papers) or ["all"]
    bad = [p for p in papers if p != "all" and p not in PAPERS]
    if bad:
        raise ValueError(f"unknown paper {bad[0]!r}; choose 'all' or any of {', '.join(PAPERS)}")
    chosen = PAPERS if "all" in papers else papers
    out = [c for c in CLAIMS.values() if c.paper in chosen and plan.name in c.data]
    if not out:
        raise ValueError(f"the {plan.name} plan has no claims of {', '.join(papers)}; it runs "
                         f"{', '.join(c.id for c in CLAIMS.values() if plan.name in c.data)}")
    return out


def run_config(claim: Claim, arm: Arm, size: ClaimSize, device: str = "cpu", plan: str | Plan = "digits") -> dict:
    """The ``train`` config of one arm (without its seeds): the plan's options, m (or the arm's multiple of it)
    clients, the paper's decay rescaled to the run's rounds, the topology template filled by :func:`scaled`, the
    size's local epochs and model where it scales them down, every round measured for the claims that need it."""
    plan = plan_of(plan)
    m = size.m_large if claim.large else size.m
    n = max(2, round(arm.scale.get("n", 1.0) * m))
    every = 1 if claim.metric == "rounds_to_target" or claim.every_round else size.eval_every
    base = {**plan.common, **PAPER_BASE[claim.paper],
            **DATA_OPTIONS[claim.paper].get(plan.name, {}).get(arm.cfg["algo"], {}), **arm.cfg, "n": n,
            "rounds": size.rounds, "eval_every": every}
    if size.K is not None and "K" not in claim.varies:
        base["K"] = size.K
    if size.model is not None:
        base["model"] = size.model
    base["lr_decay"] = round(base.pop("decay") ** (PAPER_ROUNDS[claim.paper] / size.rounds), 10)
    if isinstance(base.get("topology_params"), str):
        base["topology_params"] = base["topology_params"].format(**scaled(m, n, arm.scale.get("k", 1.0)))
    if device != "cpu":
        base["device"] = device
    return {k: v for k, v in base.items() if v is not None}


def seeds_of(arm: Arm, size: ClaimSize) -> list[int]:
    return [arm.seed_offset + s for s in range(size.seeds)]


def run_configs(claim: Claim, arm: Arm, size: ClaimSize, device: str = "cpu", plan: str | Plan = "digits") -> list[dict]:
    """One ``train`` config per seed (seed = data_seed = s), as :func:`run_cohort` trains them."""
    cfg = run_config(claim, arm, size, device, plan)
    return [{**cfg, "seed": s, "data_seed": s} for s in seeds_of(arm, size)]


# ------------------------------------------------------------------------------------------------ cohorts
#: the cohorts' cache format, hashed into every key and stored in a result (``"cache"``): 2 since ``dpsgd`` is Lian et
#: al. 2017's order (a result without it ran ``dpsgd`` as step then mix, today's ``dpsgd-atc``: :func:`rejudge`)
CACHE_VERSION = 2
#: algorithms whose name meant another algorithm in results before :data:`CACHE_VERSION` 2: the name then -> now
RENAMED = {"dpsgd": "dpsgd-atc"}


def _key(cfg: Mapping, seeds: Sequence[int], finetune: int | None, final: str | None = None) -> str:
    from dfltheory.empirical.algorithms import cache_form

    blob = json.dumps({"cfg": cache_form(cfg), "seeds": list(seeds), "finetune": finetune, "_cache": CACHE_VERSION}
                      | ({"final": final} if final else {}), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def sharpness(engine, evaluators, copies: int) -> list[float]:
    """Per copy of a cohort, lambda_max of the Hessian of f at its x_bar (:mod:`dfltheory.verify.landscape`: Lanczos
    on Hessian-vector products, on the copy's fixed evaluation batch of 128 training samples per client)."""
    from dfltheory.empirical.replicas import Copy
    from dfltheory.verify.landscape import batch_loss, evaluation_batch, top_eigenvalue

    m, out = engine.m // copies, []
    for c, ev in enumerate(evaluators):
        x = Copy(engine, c, m).x_bar().detach()
        f = batch_loss(engine.model, *evaluation_batch(ev, seed=c))
        out.append(float(top_eigenvalue(f, x)["eigenvalue"]))
    return out


#: metric -> the measurement of the trained models that gives it (:func:`run_cohort`'s ``final``), instead of a record
FINAL = {"sharpness": sharpness}


def _train(cfg: dict, seeds: list[int], out: str, finetune: int | None, data_root: str | None = None,
           final: str | None = None) -> dict:
    """One cohort (a worker process: one CPU thread); the seeds of an algorithm that couples every client
    (:func:`dfltheory.empirical.runner.coupling`: DFedSGPSM-S) one engine each. ``data_root``: where the data set's
    files are (not part of the cohort's key); ``final``: a metric of :data:`FINAL` measured on the trained models."""
    import torch

    from dfltheory.empirical import algorithms as A
    from dfltheory.empirical.cohort import run_cohort
    from dfltheory.empirical.runner import coupling

    torch.set_num_threads(int(cfg.get("threads", 1)))
    train = {k: v for k, v in cfg.items() if k not in ("rounds", "eval_every", "threads", "local_eval")}
    if data_root is not None:
        train["data_root"] = data_root
    kw = {"rounds": cfg["rounds"], "eval_every": cfg["eval_every"], "checkpoint_every": 50,
          "local_eval": cfg.get("local_eval", True), "finetune": finetune, "final": FINAL.get(final)}
    if not coupling(A.make(cfg["algo"])):
        return run_cohort(train, seeds, out, **kw)
    parts = [run_cohort(train, [s], Path(out) / f"seed{s}", **kw) for s in seeds]
    result = {"seeds": seeds, "rounds": cfg["rounds"], "records": [p["records"][0] for p in parts],
              "status": [p["status"][0] for p in parts], "wall_seconds": sum(p["wall_seconds"] for p in parts),
              "finetuned": None if finetune is None else [p["finetuned"][0] for p in parts],
              "final": None if final is None else [p["final"][0] for p in parts]}
    (Path(out) / "records.json").write_text(json.dumps(result))  # the cohort is complete (read back per seed)
    return result


def _cohorts(chosen: Sequence[Claim], size: ClaimSize, device: str, plan: str | Plan = "digits") -> dict[str, tuple]:
    """{key: (cfg, seeds, finetune, final)} of every distinct cohort the claims need (``final``: the claim's metric
    where :data:`FINAL` measures it on the trained models, else None)."""
    out = {}
    for claim in chosen:
        final = claim.metric if claim.metric in FINAL else None
        for arm in claim.arms:
            cfg, seeds = run_config(claim, arm, size, device, plan), seeds_of(arm, size)
            out[_key(cfg, seeds, arm.finetune, final)] = (cfg, seeds, arm.finetune, final)
    return out


# ------------------------------------------------------------------------------------------------ cost
#: floating-point operations per second of one worker: the CPU's measured in CPU time (issue 34: real MNIST, m = 100,
#: 5 seeds in one engine, the 32-32 MLP, one thread: 1.7e10 training, 1.6 times the time for a SAM step
#: (:data:`SAM_COST`), evaluations :data:`EVAL_SPEEDUP` times faster per operation (large batches)); the GPU's is an
#: assumption (about 10 % of an H100's fp32 peak for these small per-client products), not a measurement. On digits
#: (batches of a few images) the per-step overheads dominate and the estimate is about 9 times low (0.27 against the
#: 2.35 CPU-hours the full size took)
THROUGHPUT = {"cpu": 1.6e10, "cuda": 5.0e12}
EVAL_SPEEDUP = 3.5
SAM_COST = 1.6
_INPUT = {"digits": ((1, 8, 8), 1_348, 449), "mnist": ((1, 28, 28), 60_000, 10_000),
          "fashion-mnist": ((1, 28, 28), 60_000, 10_000), "cifar10": ((3, 32, 32), 50_000, 10_000),
          "cifar100": ((3, 32, 32), 50_000, 10_000)}


def _parameters(model: str, dataset: str) -> int:
    from dfltheory.empirical.models import make_model

    shape = _INPUT[dataset][0]
    return sum(p.numel() for p in make_model(model, shape, 100 if dataset == "cifar100" else 10).parameters())


def estimate(chosen: Sequence[Claim], size: ClaimSize, device: str = "cpu", plan: str | Plan = "digits",
             workers: int = 1) -> dict:
    """The cost of training the cohorts of ``chosen`` at ``size`` before it starts: per cohort seeds x rounds x
    (local epochs x training images x 6 d operations, :data:`SAM_COST` times that for a SAM step) + evaluations (x_bar's loss and
    gradient on the training set, 6 d per image; x_bar and, with the clients' own models, m models on the test set,
    2 d per image; :data:`EVAL_SPEEDUP` times faster), over :data:`THROUGHPUT` of one worker. Returns
    {"cohorts", "runs", "flops", "cpu_hours" (worker-hours), "hours" (wall, ``workers`` at a time), "assumption"}."""
    from dfltheory.empirical import algorithms as A
    from dfltheory.empirical.runner import ALGO_KEYS

    plan = plan_of(plan)
    jobs = _cohorts(chosen, size, device, plan)
    flops, evals_flops, params = 0.0, 0.0, {}
    for cfg, seeds, *_ in jobs.values():
        shape, n_train, n_test = _INPUT[cfg["dataset"]]
        sizes = cfg.get("data_params") or {}
        n_train, n_test = sizes.get("train_size", n_train), sizes.get("test_size", n_test)
        key = (cfg["model"], cfg["dataset"])
        d = params.setdefault(key, _parameters(*key))
        algo = A.make(cfg["algo"], **{k: cfg[k] for k in ALGO_KEYS if k in cfg})
        epochs = algo.K or cfg.get("K", 1)
        sam = SAM_COST if float(algo.hyper.get("rho") or 0.0) > 0 else 1.0
        evals = cfg["rounds"] // cfg["eval_every"] + 1
        per_eval = 2 * d * n_test * (1 + (cfg["n"] if cfg.get("local_eval", True) else 0)) + 6 * d * n_train
        flops += len(seeds) * cfg["rounds"] * epochs * n_train * 6 * d * sam
        evals_flops += len(seeds) * evals * per_eval
    rate = THROUGHPUT["cpu" if device == "cpu" else "cuda"]
    hours = (flops + evals_flops / EVAL_SPEEDUP) / rate / 3600
    flops += evals_flops
    return {"cohorts": len(jobs), "runs": sum(len(j[1]) for j in jobs.values()), "flops": flops,
            "cpu_hours" if device == "cpu" else "device_hours": hours,
            "hours": hours / (workers if device == "cpu" else 1),
            "assumption": f"{rate:.2g} operations per second per worker ({'measured' if device == 'cpu' else 'assumed'})"}


# ------------------------------------------------------------------------------------------------ verdicts
#: the record key of a metric whose name is not its key
RECORDED = {"local_test_acc": "local_test_acc_mean"}


def _curves(records: list[list[dict]], key: str) -> dict:
    """Mean and std over seeds of ``key`` at every round all seeds measured (empty where no run records it)."""
    series = [{r["round"]: r.get(key) for r in rows} for rows in records]
    rounds = sorted(set.intersection(*(set(s) for s in series))) if series else []
    vals = np.array([[np.nan if s[t] is None else s[t] for t in rounds] for s in series], float)
    keep = [i for i in range(len(rounds)) if not np.isnan(vals[:, i]).any()]
    rounds, vals = [rounds[i] for i in keep], vals[:, keep] if len(rounds) else vals
    if not rounds:
        return {"round": [], "mean": [], "std": []}
    std = vals.std(0, ddof=1) if len(vals) > 1 else np.zeros(len(rounds))
    return {"round": rounds, "mean": vals.mean(0).tolist(), "std": std.tolist()}


def spectral_gap(cfg: Mapping, seed: int) -> float:
    """1 - lambda of a run's mixing matrices (dfltheory.topology: lambda = ||W - 11^T/m||_2, its mean over rounds
    for a time-varying graph, drawn with the run's data seed as the run draws it)."""
    from dfltheory.topology import analyze
    from dfltheory.parsing import parse_params

    a = analyze(cfg["topology"], cfg["n"], weights=cfg.get("weights") or "metropolis", seed=seed,
                horizon=min(cfg["rounds"], 50), **parse_params(cfg.get("topology_params")))
    return 1.0 - float(a["lambda_mean"] if a["time_varying"] else a["lambda"])


def target_of(arms: Sequence[dict]) -> float | None:
    """The rounds-to-target level: the best test accuracy every run of ``arms`` reaches, rounded down to
    :data:`TARGET_GRID`; None below :data:`TARGET_MIN` or where a run diverged."""
    best = [max(r["test_acc"] for r in rows) for a in arms for rows in a["records"]]
    if not best or any(b is None or not np.isfinite(b) for b in best):
        return None
    level = np.floor(min(best) / TARGET_GRID) * TARGET_GRID
    return float(level) if level >= TARGET_MIN else None


def _value(rows: list[dict], metric: str, target: float | None) -> float | None:
    if metric == "rounds_to_target":
        if target is None:
            return None
        return next((r["round"] for r in rows if (r.get("test_acc") or 0.0) >= target - 1e-12), None)
    return rows[-1].get(RECORDED.get(metric, metric)) if rows else None


def _movement(rows_per_seed: list[list[dict]], metric: str, rounds: int) -> float | None:
    """|mean metric at the last record - at the record nearest 0.8 T|: what the last 20 % of the rounds moved."""
    if metric == "rounds_to_target" or not rows_per_seed or not rows_per_seed[0]:
        return None
    key = RECORDED.get(metric, metric)
    pick = lambda rows: min(rows, key=lambda r: abs(r["round"] - 0.8 * rounds))  # noqa: E731
    last = [rows[-1].get(key) for rows in rows_per_seed]
    early = [pick(rows).get(key) for rows in rows_per_seed]
    if any(v is None for v in last + early):
        return None
    return abs(float(np.mean(last)) - float(np.mean(early)))


def _arm_row(arm: Arm, cfg: dict, result: dict) -> dict:
    ok = all(s == "completed" for s in result["status"])
    return {"label": arm.label, "algo": arm.cfg["algo"], "seeds": result["seeds"], "records": result["records"],
            "status": "completed" if ok else "diverged", "finetune": arm.finetune, "finetuned": result.get("finetuned"),
            "final": result.get("final"),
            "config": cfg, "wall_seconds": result.get("wall_seconds"),
            "command": f"{train_command({**cfg, 'seed': result['seeds'][0], 'data_seed': result['seeds'][0]})} "
                       f"--out run  (seed s of {result['seeds'][0]}..{result['seeds'][-1]}: --seed s --data-seed s; "
                       "the claims train them as one cohort)"}


def _finish_arm(a: dict, metric: str, target: float | None, size: ClaimSize, quantity: str, gap: bool) -> dict:
    """An arm's per-seed values of ``metric`` (the fine-tuned accuracy where the arm fine-tunes), mean, std, the
    clients' own models' accuracy per seed (``local_values``) and mean, the curves, the movement over the last 20 %
    of the rounds, and the spectral gap (``gap``)."""
    if a["finetune"] is not None:
        values = list(a["finetuned"] or [])
    elif metric in FINAL:
        values = list(a.get("final") or [])
    else:
        values = [_value(rows, metric, target) for rows in a["records"]]
    ok = a["status"] == "completed" and values and all(v is not None and np.isfinite(v) for v in values)
    v = np.asarray(values if ok else [np.nan], float)
    local = [rows[-1].get("local_test_acc_mean") if rows else None for rows in a["records"]]
    known = bool(local) and all(x is not None for x in local)
    return {**{k: a[k] for k in ("label", "algo", "seeds", "finetune", "command", "config")},
            "values": values, "mean": float(v.mean()) if ok else None,
            "std": float(v.std(ddof=1)) if ok and len(v) > 1 else None,
            "local_values": local if known else None,
            "local_test_acc_mean": float(np.mean(local)) if known else None,
            "movement": None if a["finetune"] is not None or metric in FINAL else _movement(a["records"], metric,
                                                                                             size.rounds),
            "curve": _curves(a["records"], CURVE.get(metric, metric)), "quantity": _curves(a["records"], quantity),
            "spectral_gap": (float(np.mean([spectral_gap(a["config"], s) for s in a["seeds"][:3]])) if gap else None),
            "status": "completed" if ok else a["status"] if a["status"] != "completed" else "not measured"}


def _effect(claim: Claim, a: str, b: str) -> float | None:
    """The paper's effect of 'a > b' in the better direction (its printed numbers), None where it printed none."""
    pv = claim.paper_values
    return METRICS[claim.metric][0] * (pv[a] - pv[b]) if a in pv and b in pv else None


def judge(claim: Claim, by: Mapping[str, Mapping], permutations: int = stats.PERMUTATIONS) -> tuple[list, list, str]:
    """(pairs, trends, verdict) of ``claim`` from its arms' per-seed values (``by[label]``: "values" (None: not
    measured), "seeds", "spectral_gap"): each pair's and trend's test, Holm inside the claim (the pairs' tests of
    the paper's effect in a second family), their verdicts and the claim's (:mod:`dfltheory.verify.stats`)."""
    sign = METRICS[claim.metric][0]
    margin = MARGIN.get(claim.metric)
    by = {**{x: {"values": None, "seeds": None, "spectral_gap": None} for a in claim.arms for x in [a.label]}, **by}
    paired = lambda a, b: by[a]["seeds"] == by[b]["seeds"]  # noqa: E731
    missing = lambda *labels: next((x for x in labels if by[x]["values"] is None), None)  # noqa: E731
    why_missing = ("no target every run reaches" if claim.metric == "rounds_to_target" else "{} diverged")
    tests, pairs, trends = [], [], []  # tests: (kind, index, relation)
    for a, rel, b in claim.pairs:
        row = {"a": a, "relation": rel, "b": b}
        gone = missing(a, b)
        if gone is not None:
            pairs.append({**row, "verdict": "not testable here", "why": why_missing.format(gone)})
            continue
        t = stats.pair_test(by[a]["values"], by[b]["values"], rel, sign, margin, pair=paired(a, b),
                            paper_effect=_effect(claim, a, b) if rel == ">" else None)
        pairs.append({**row, **t})
        tests.append(("pair", len(pairs) - 1, rel))
    for tr in claim.trends:
        lab = METRICS[tr.metric][1]
        out = {"metric": tr.metric, "metric_label": lab, "relation": tr.relation, "arms": list(tr.arms),
               "gap": [by[x].get("spectral_gap") for x in tr.arms],
               "mean": [None if by[x]["values"] is None else float(np.mean(by[x]["values"])) for x in tr.arms]}
        needed = tr.arms if tr.relation == ">" else sorted({x for inv in tr.inversions for x in inv})
        gone = missing(*needed)
        if gone is not None or any(by[x].get("spectral_gap") is None for x in needed):
            trends.append({**out, "rho": None, "p_value": None, "verdict": "not testable here",
                           "why": why_missing.format(gone) if gone else "no spectral gap"})
            continue
        complete = all(by[x]["values"] is not None for x in tr.arms)
        rank = (stats.trend_test(out["gap"], sign * np.array([by[x]["values"] for x in tr.arms], float).T,
                                 permutations) if complete else {"rho": None, "p": None, "interval": None})
        out.update(rho=rank["rho"], interval=rank["interval"],
                   test="permutation test of the mean per-seed Spearman rho")
        if tr.relation == ">":
            out["p_value"] = rank["p"]
            if rank["rho"] is None:
                trends.append({**out, "verdict": "not testable here", "why": "the spectral gaps are all equal"})
                continue
        else:
            gap = dict(zip(tr.arms, out["gap"]))
            inv = []
            for a, b in tr.inversions:
                row = {"a": a, "relation": ">", "b": b}
                if not gap[a] < gap[b]:
                    inv.append({**row, "verdict": "not testable here",
                                "why": f"at this size {a}'s gap {gap[a]:.3g} is not below {b}'s {gap[b]:.3g}"})
                    continue
                inv.append({**row, **stats.pair_test(by[a]["values"], by[b]["values"], ">", sign, pair=paired(a, b),
                                                     paper_effect=_effect(claim, a, b))})
            tested = [x for x in inv if "p" in x]
            decided = stats.inversion_test(tested)
            for x, p_adj in zip(tested, decided["p_holm"]):
                x.update(p_holm=p_adj, verdict=("agrees" if x["signed"] > 0 else "contradicted") if p_adj < stats.ALPHA
                         else "inconclusive")
            out.update(inversions=inv, p_value=decided["p_value"], decided=decided["verdict"],
                       test="the paper's inversions: one shown (Holm) agrees, all reversed contradicts; rho descriptive")
            if not tested:
                trends.append({**out, "rho": None, "verdict": "not testable here",
                               "why": "no inversion of the paper is one at this size"})
                continue
        trends.append(out)
        tests.append(("trend", len(trends) - 1, tr.relation))
    ps = [pairs[i]["p"] if k == "pair" else trends[i]["p_value"] for k, i, _ in tests]
    adjusted = stats.holm(ps) if ps else []
    beyond = stats.holm([pairs[i].get("p_beyond", 1.0) if k == "pair" else 1.0 for k, i, _ in tests]) if ps else []
    excl_idx = [i for k, i, _ in tests if k == "pair" and "p_excluded" in pairs[i]]
    excluded = dict(zip(excl_idx, stats.holm([pairs[i]["p_excluded"] for i in excl_idx]) if excl_idx else []))
    for (kind, i, rel), p_adj, pb in zip(tests, adjusted, beyond):
        if kind == "pair":
            pairs[i].update(stats.pair_verdict(pairs[i], rel, p_adj, pb if rel == "=" else None, len(tests),
                                               p_excluded_adjusted=excluded.get(i)))
            if i in excluded:
                pairs[i]["p_excluded_holm"] = excluded[i]
        elif rel == ">":
            trends[i].update(p_holm=p_adj, verdict=stats.trend_verdict(trends[i], rel, p_adj))
        else:
            call = trends[i]["decided"] if p_adj < stats.ALPHA else "inconclusive"
            trends[i].update(p_holm=p_adj, verdict=call if call != "not testable here" else "inconclusive")
    parts = [p["verdict"] for p in pairs] + [t["verdict"] for t in trends]
    return pairs, trends, stats.claim_verdict(parts)


def _restricted(claim: Claim, labels: set) -> Claim | None:
    """``claim`` cut to the parts whose arms all have a paper number (a '>' trend: all its arms; a '=' trend: the
    inversions both of whose arms have one); None where nothing is left."""
    pairs = tuple(p for p in claim.pairs if p[0] in labels and p[2] in labels)
    trends = []
    for t in claim.trends:
        if t.relation == ">" and set(t.arms) <= labels:
            trends.append(t)
        elif t.relation == "=":
            inv = tuple(x for x in t.inversions if set(x) <= labels)
            if inv:
                trends.append(replace(t, inversions=inv))
    return replace(claim, pairs=pairs, trends=tuple(trends)) if pairs or trends else None


def calibrate(claim: Claim, noise: Mapping[str, float], gaps: Mapping[str, float | None], seeds: int = 10,
              sims: int = CALIBRATION_SIMS, seed: int = 0, parts: str = "all") -> dict | None:
    """How the claim's rule judges the paper's own numbers: ``sims`` replications of ``seeds`` values per arm, the
    paper's number plus N(0, ``noise[label]``) (independent across arms: no pairing credit), judged by
    :func:`judge` on the parts with paper numbers (``parts`` 'trends': the trends alone). Returns {"sims", "seeds",
    one fraction per claim verdict, "parts": per calibrated part (:func:`part_name`) the fraction of simulations
    that call it contradicted}, None where the paper printed too little to judge any part (issue 34: a rule must
    agree with the paper's own numbers before it may contradict them)."""
    sub = _restricted(claim, set(claim.paper_values))
    if sub is not None and parts == "trends":
        sub = replace(sub, pairs=()) if sub.trends else None
    if sub is None:
        return None
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(stats.VERDICTS, 0)
    against: dict[str, int] = {}
    labels = sorted(claim.paper_values)
    for _ in range(sims):
        by = {x: {"values": (claim.paper_values[x] + noise[x] * rng.standard_normal(seeds)).tolist(),
                  "seeds": list(range(seeds)), "spectral_gap": gaps.get(x)} for x in labels}
        pairs, trends, verdict = judge(sub, by, permutations=999)
        counts[verdict] += 1
        for part in pairs + trends:
            name = part_name(part)
            against[name] = against.get(name, 0) + (part["verdict"] == "contradicted")
    return {"sims": sims, "seeds": seeds, **{v: n / sims for v, n in counts.items()},
            "parts": {k: n / sims for k, n in against.items()}}


def part_name(part: Mapping) -> str:
    """A part of a claim's result by name: 'a > b' for a pair, 'trend of <metric> (<relation>) over <arms>' for a
    trend (how :func:`calibrate`'s "parts" names them)."""
    if "a" in part:
        return f"{part['a']} {part['relation']} {part['b']}"
    return f"trend of {part['metric']} ({part['relation']}) over {', '.join(part['arms'])}"


def measured_noise(claim: Claim, arms: Sequence[Mapping]) -> dict[str, float]:
    """Per arm with a paper number, the per-seed spread :func:`calibrate` adds to it: the measured standard deviation
    (rounds to a target: the measured coefficient of variation times the paper's number, the two runs' rounds being
    on different scales); an arm without a spread borrows the largest of the claim's."""
    sd = {a["label"]: a.get("std") for a in arms}
    mean = {a["label"]: a.get("mean") for a in arms}
    out = {}
    for x, v in claim.paper_values.items():
        s = sd.get(x)
        if s is not None and claim.metric == "rounds_to_target":
            s = s / mean[x] * v if mean.get(x) else None
        out[x] = s
    known = [s for s in out.values() if s]
    return {x: s if s else (max(known) if known else 0.0) for x, s in out.items()}


def evaluate(claim: Claim, size: ClaimSize, results: Mapping[str, dict], device: str = "cpu",
             plan: str | Plan = "digits") -> dict:
    """The row of one claim from its cohorts: each arm's values, each pair's and trend's test and verdict (Holm
    inside the claim), the rule's calibration on the paper's own numbers, the claim's verdict and its reason."""
    plan = plan_of(plan)
    cfgs = [run_config(claim, arm, size, device, plan) for arm in claim.arms]
    final = claim.metric if claim.metric in FINAL else None
    raw = [_arm_row(arm, cfg, results[_key(cfg, seeds_of(arm, size), arm.finetune, final)])
           for arm, cfg in zip(claim.arms, cfgs)]
    target = target_of(raw) if claim.metric == "rounds_to_target" else None
    in_trend = {lab for t in claim.trends for lab in t.arms}
    arms = [_finish_arm(a, claim.metric, target, size, QUANTITY[claim.paper], a["label"] in in_trend) for a in raw]
    row = {"id": claim.id, "paper": claim.paper, "section": claim.section, "statement": claim.statement,
           "paper_number": claim.paper_number, "paper_values": dict(claim.paper_values), "metric": claim.metric,
           "metric_label": METRICS[claim.metric][1], "target": target, "curve_metric": CURVE.get(claim.metric,
                                                                                                claim.metric),
           "quantity": QUANTITY[claim.paper], "note": claim.note, "index": list(claim.index),
           "finding": claim.finding or claim.id, "m": size.m_large if claim.large else size.m,
           "eval_every": cfgs[0]["eval_every"], "deviations": deviations(claim, size, plan), "arms": arms}
    return ClaimResult.from_dict({**row, **verdicts(claim, arms)}).to_dict()  # the row's keys: ClaimResult's


def verdicts(claim: Claim, arms: Sequence[Mapping]) -> dict:
    """{"pairs", "trends", "verdict", "calibration", "reason"} of ``claim`` from its finished arms (per-seed values,
    seeds, spectral gaps, movements): :func:`judge`, each pair's 'still moving' flag, and the calibration guard, part
    by part: a contradicted part that the rule also calls contradicted on the paper's own numbers more than
    :data:`CALIBRATION_LEVEL` of the time becomes inconclusive (``calibration_contradicted``: that fraction), and
    the claim's verdict is taken again from its parts; a part the calibration does not cover (no paper numbers)
    keeps its call."""
    by = {a["label"]: {"values": a["values"] if a["mean"] is not None else None, "seeds": a["seeds"],
                       "spectral_gap": a.get("spectral_gap")} for a in arms}
    pairs, trends, verdict = judge(claim, by)
    mv = {a["label"]: a.get("movement") for a in arms}
    for p in pairs:
        if "difference" in p and claim.metric != "rounds_to_target":
            moved = max((mv[x] or 0.0) for x in (p["a"], p["b"]))
            p.update(movement=moved, moving=moved > max(abs(p["difference"]), p["detectable"]))
    seeds = max((len(a["seeds"]) for a in arms), default=2)
    calib = calibrate(claim, measured_noise(claim, arms), {a["label"]: a.get("spectral_gap") for a in arms},
                      seeds=max(2, seeds))
    notes = []
    rates = (calib or {}).get("parts", {})
    for part in pairs + trends:
        rate = rates.get(part_name(part))
        if part["verdict"] == "contradicted" and rate is not None and rate > CALIBRATION_LEVEL:
            part.update(verdict="inconclusive", calibration_contradicted=rate)
            notes.append(f"{part_name(part)}: the rule calls the paper's own numbers (with the measured noise) "
                         f"contradicted in {100 * rate:.0f} % of {calib['sims']} simulations: it may not contradict "
                         "them")
    if notes:
        verdict = stats.claim_verdict([p["verdict"] for p in pairs + trends])
    note = "; ".join(notes)
    why = reason(verdict, pairs, trends, claim.metric)
    return {"pairs": pairs, "trends": trends, "verdict": verdict, "calibration": calib,
            "reason": "; ".join(x for x in (why if verdict != "agrees" or not note else "", note) if x) or why}


def deviations(claim: Claim, size: ClaimSize, plan: str | Plan = "digits") -> list[str]:
    """What the claim's runs do differently from the paper: the plan's data and model, the paper's general
    deviations, the claim's own, the size's (rounds, clients, and what it scales down)."""
    plan = plan_of(plan)
    setting = claim.paper_setting or PAPER_SETTING.get(claim.paper, "")
    out = [f"{plan.setting}, not {setting}"] if setting and not setting.startswith(plan.setting) else []
    out += list(plan.deviations.get(claim.paper, ())) + list(DEVIATIONS[claim.paper]) + list(claim.deviations)
    m = size.m_large if claim.large else size.m
    paper_rounds = claim.paper_rounds or PAPER_ROUNDS[claim.paper]
    main = PAPER_ROUNDS[claim.paper]
    if size.rounds != paper_rounds and paper_rounds != main:
        out.append(f"{size.rounds} rounds, not the {paper_rounds} of its table or figure (the learning-rate decay: the "
                   f"paper's over its main {main} rounds, rescaled to {size.rounds})")
    elif size.rounds != paper_rounds:
        out.append(f"{size.rounds} rounds, not the paper's {paper_rounds} (its learning-rate path rescaled to them)")
    elif paper_rounds != main:
        out.append(f"the learning-rate decay of the paper's main {main} rounds over {size.rounds}")
    return out + ([f"m = {m} clients, not 100"] if m != 100 else []) + list(size.deviations)


def shown_in(metric: str) -> tuple[float, str]:
    """(scale, unit) a difference of ``metric`` is written in: accuracy in points, anything else as measured."""
    return (100.0, " points") if metric in ("test_acc", "local_test_acc") else (1.0, "")


def reason(verdict: str, pairs: Sequence[dict], trends: Sequence[dict], metric: str) -> str:
    """One line: why a claim did not agree (the parts that did not, with their smallest detectable effects and the
    paper's effects)."""
    if verdict == "agrees":
        return "every part agrees"
    scale, unit = shown_in(metric)
    bits = []
    for p in pairs:
        if p["verdict"] == "agrees":
            continue
        name = f"{p['a']} {p['relation']} {p['b']}"
        paper = (f", the paper's {scale * p['paper_effect']:+.3g}{unit}" if p.get("paper_effect") is not None
                 else "")
        if p["verdict"] == "not testable here":
            bits.append(f"{name}: not testable ({p['why']})")
        elif p["verdict"] == "contradicted":
            bits.append(f"{name}: contradicted (difference {scale * p['difference']:+.3g}{unit}, Holm p "
                        f"{p['p_holm']:.2g}{paper})")
        else:
            bits.append(f"{name}: {p['verdict']} (difference {scale * p['difference']:+.3g}{unit}, detectable "
                        f"{scale * p['detectable']:.3g}{unit}{paper})" + (" still moving" if p.get("moving") else ""))
    for t in trends:
        if t["verdict"] != "agrees":
            rho = "undefined" if t.get("rho") is None else f"{t['rho']:+.2f}"
            inv = "; ".join(f"{x['a']} over {x['b']} {scale * x['difference']:+.3g}{unit}"
                            for x in t.get("inversions", ()) if "difference" in x)
            bits.append(f"trend over {len(t['arms'])} arms: {t['verdict']} (mean rho {rho}"
                        + (f"; the paper's inversions: {inv}" if inv else "") + ")")
    return "; ".join(bits)


def findings(rows: Sequence[Mapping]) -> list[dict]:
    """One finding per group of claims that test the same thing (``Claim.finding``: dfedadmm.lambda repeats
    dfedadmm.printed's degenerate eta/lambda), counted once: its claims and the verdict their parts give together."""
    groups: dict[str, list] = {}
    for r in rows:
        groups.setdefault(r.get("finding") or r["id"], []).append(r)
    return [{"id": k, "claims": [r["id"] for r in rs],
             "verdict": stats.claim_verdict([r["verdict"] for r in rs]) if len(rs) > 1 else rs[0]["verdict"],
             "verdict_study": (stats.claim_verdict([r.get("verdict_study", r["verdict"]) for r in rs]) if len(rs) > 1
                               else rs[0].get("verdict_study", rs[0]["verdict"]))}
            for k, rs in groups.items()]


def study_wide(rows: Sequence[dict]) -> dict:
    """The family-wise policy across claims (:mod:`dfltheory.verify.stats`): Holm over the deciding p-value of every
    part of every claim (:func:`stats.deciding_p`: a "paper's effect excluded" by its test of the paper's effect);
    each part gets ``p_study`` and ``verdict_study`` (:func:`stats.study_verdict`: agrees, contradicted and excluded
    stand only below 0.05), each claim ``verdict_study``. Returns
    {"tests": how many, "policy"}."""
    parts = [p for r in rows for p in list(r["pairs"]) + list(r["trends"]) if stats.deciding_p(p) is not None]
    adjusted = stats.holm([stats.deciding_p(p) for p in parts]) if parts else []
    for p, q in zip(parts, adjusted):
        p.update(p_study=q, verdict_study=stats.study_verdict(p["verdict"], q, part=p))
    for r in rows:
        own = [p.get("verdict_study", p["verdict"]) for p in list(r["pairs"]) + list(r["trends"])]
        r["verdict_study"] = r["verdict"] if r["verdict"] not in stats.DECIDED else stats.claim_verdict(own)
    return {"tests": len(parts), "policy": "each claim one family (Holm at 0.05 inside it); verdict_study: Holm at "
                                           "0.05 over every test of every claim of the run"}


def run_claims(papers: Sequence[str] = ("all",), size: str | ClaimSize | None = None, out: str | Path = "claims",
               workers: int = 1, progress: Callable[[int, int, float], None] | None = None, device: str = "cpu",
               claims: Sequence[Claim] | None = None, plan: str | Plan = "digits", data_root: str | None = None,
               announce: Callable[[dict], None] | None = None) -> dict:
    """Train (or read from the cache ``out/cohorts``) every cohort of the claims of ``papers`` in ``plan`` (digits:
    every claim; mnist: the claims the papers ran on MNIST) and return, JSON-safe: ``claims`` (one row per claim:
    arms with per-seed values of the metric and of the clients' own models, mean ± std and curves; pairs and trends
    with their test, p-values, smallest detectable effect, the paper's effect and verdict, the study-wide verdict;
    the rule's calibration on the paper's numbers; the claim's verdict and reason), ``findings`` (claims that test
    the same thing counted once), the rule, the size, the cost estimate and the wall time. ``size``: a name of the
    plan's sizes (default: the plan's). ``claims`` replaces the table (a planted claim in tests). ``announce(cost)``
    with :func:`estimate` before anything trains; ``progress(done, total, eta_seconds)`` after each cohort;
    ``data_root``: where the data set's files are."""
    plan = plan_of(plan)
    size = check_run_options(plan.default if size is None else size, plan.sizes, workers, device)
    chosen = list(claims) if claims is not None else select(papers, plan)
    _check_data(plan, data_root)
    root = Path(out) / "cohorts"
    jobs = _cohorts(chosen, size, device, plan)
    cost = estimate(chosen, size, device, plan, workers)
    if announce is not None:
        announce(cost)
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    keys = sorted(jobs, key=lambda k: -jobs[k][0]["n"])  # the largest first: the pool ends evenly
    cached = sum((root / k / "records.json").exists() for k in keys)
    from dfltheory.empirical import rundir

    root.mkdir(parents=True, exist_ok=True)
    with rundir.lock(root, "the claims cache", Path(out) / ".cohorts.lock"):  # a second claims run on it is refused
        results = dict(zip(keys, pool_map(_train, [(jobs[k][0], jobs[k][1], str(root / k), jobs[k][2], data_root,
                                                    jobs[k][3]) for k in keys], workers, progress)))
    rows = [evaluate(claim, size, results, device, plan) for claim in chosen]
    policy = study_wide(rows)
    name = next((k for k, v in plan.sizes.items() if v == size), "custom")
    return json_safe({"plan": plan.name, "size": name, "cache": CACHE_VERSION, "m": size.m, "m_large": size.m_large,
                      "rounds": size.rounds, "seeds": size.seeds, "device": device, "workers": workers, "rule": RULE,
                      "family_wise": policy, "problem": plan.problem, "estimate": cost,
                      "claims": rows, "findings": findings(rows), "cohorts": len(keys),
                      "cohorts_trained": len(keys) - cached, "runs": sum(len(jobs[k][1]) for k in keys),
                      "wall_seconds": time.perf_counter() - start, "cpu_seconds": _cpu_seconds() - cpu_start,
                      "cohort_seconds": float(sum(r.get("wall_seconds") or 0.0 for r in results.values())),
                      "machine_note": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"})


def _check_data(plan: Plan, data_root: str | None) -> None:
    """Fail before anything trains where the plan's data set is not on disk (the data engineer's
    ``dfltheory.empirical.fetch.ensure_dataset`` names the fix; without it the loader's own error does, later)."""
    dataset = plan.common["dataset"]
    if dataset == "digits" or (plan.common.get("data_params") or {}).get("fake"):
        return
    try:
        from dfltheory.empirical.fetch import ensure_dataset
    except ImportError:
        return
    ensure_dataset(dataset, root=data_root, download=False)


def rejudge(result: dict) -> dict:
    """``result`` (a stored claims.json, compact or not) judged again by today's rules from its per-seed values,
    without training: every claim gets today's statement, note and deviations; each claim whose stored values still
    measure what the claim now tests gets new pairs, trends, calibration, verdict and reason (``rejudged`` true); a
    claim whose metric or measurement cadence changed keeps its stored verdict with ``rejudged`` false and ``stale``
    saying why (a run is needed). A result from before :data:`CACHE_VERSION` 2 ran ``dpsgd`` as step then mix: its
    arms are relabelled ``dpsgd-atc`` (:data:`RENAMED`), and a claim that now runs Lian et al.'s ``dpsgd`` is stale
    unless its row was re-run since (the row's own ``cache``: :func:`merge_rows`).
    Adds the study-wide verdicts and the findings."""
    by_id = dict(CLAIMS)
    plan = plan_of(result.get("plan", "digits"))
    rows = []
    for row in result["claims"]:
        claim = by_id.get(row["id"])
        before = row.get("cache", result.get("cache", 1)) < CACHE_VERSION  # a row re-run since carries its own
        if before:
            row = {**row, "arms": [_renamed(a) for a in row["arms"]]}
        row = {**row, "arms": [current_arm(a) for a in row["arms"]]}  # options under today's names
        stale = None
        renamed = sorted({a.cfg["algo"] for a in claim.arms} & set(RENAMED)) if claim is not None and before else []
        if claim is None:
            stale = "no longer a claim"
        elif renamed:
            stale = (f"its stored {', '.join(renamed)} runs are the old order (step then mix, now "
                     f"{', '.join(RENAMED[x] for x in renamed)}); the claim runs {', '.join(renamed)} in Lian et al. "
                     "2017's order (a re-run)")
        elif row["metric"] != claim.metric:
            stale = f"now judged on {claim.metric} ({METRICS[claim.metric][1]}); stored: {row['metric']} (a re-run)"
        elif claim.metric == "rounds_to_target" and result.get("eval_every", 5) != 1 and row.get("eval_every") != 1:
            stale = "now measured every round; stored every few rounds (a re-run)"
        new = {**row, "finding": (claim.finding if claim else "") or row["id"],
               "paper_values": dict(claim.paper_values) if claim else {}}
        if claim is not None and result.get("size") in plan.sizes:  # today's texts: statement, note, deviations
            new.update(statement=claim.statement, section=claim.section, paper_number=claim.paper_number,
                       note=claim.note, index=list(claim.index),
                       deviations=deviations(claim, plan.sizes[result["size"]], plan))
        if stale:
            new.update(rejudged=False, stale=stale)
            for part in list(new["pairs"]) + list(new["trends"]):
                part.setdefault("verdict_study", part["verdict"])
        else:
            arms = [{**a, "movement": a.get("movement")} for a in row["arms"]]
            new.update(verdicts(claim, arms), rejudged=True)
            new.pop("stale", None)  # a stale row of a stored result, now judged
        rows.append(new)
    fresh = [r for r in rows if r["rejudged"]]
    policy = study_wide(fresh)
    for r in rows:
        r.setdefault("verdict_study", r["verdict"])
    return {**result, "rule": RULE, "family_wise": policy, "claims": rows, "findings": findings(rows),
            "rejudged": "the stored per-seed values judged again by the issue-34 rules (dfltheory.verify.claims."
                        "rejudge); stale rows keep their stored verdict until re-run"}


def merge_rows(result: dict, rerun: dict) -> dict:
    """``result`` (a stored claims.json) with the rows of ``rerun`` (a :func:`run_claims` result of some of its
    claims, at the same plan and size) in place of its own, each marked with the re-run's ``cache``, then judged
    again (:func:`rejudge`: the study-wide correction and the findings over every row)."""
    if (rerun.get("plan", "digits"), rerun.get("size")) != (result.get("plan", "digits"), result.get("size")):
        raise ValueError(f"the re-run is plan {rerun.get('plan', 'digits')!r} size {rerun.get('size')!r}, the result "
                         f"plan {result.get('plan', 'digits')!r} size {result.get('size')!r}: merge runs of one size")
    fresh = {row["id"]: {**row, "cache": rerun.get("cache", CACHE_VERSION)} for row in compact(rerun)["claims"]}
    missing = sorted(set(fresh) - {row["id"] for row in result["claims"]})
    if missing:
        raise ValueError(f"the re-run has claims the result does not: {', '.join(missing)}")
    return rejudge({**result, "claims": [fresh.get(row["id"], row) for row in result["claims"]]})


def _renamed(arm: Mapping) -> dict:
    """A stored arm of a result from before :data:`CACHE_VERSION` 2 under its algorithm's name today."""
    algo = arm.get("algo")
    if algo not in RENAMED:
        return dict(arm)
    new = RENAMED[algo]
    out = {**arm, "algo": new}
    if isinstance(arm.get("config"), Mapping):
        out["config"] = {**arm["config"], "algo": new}
    if isinstance(arm.get("command"), str):
        out["command"] = re.sub(rf"--algo {re.escape(algo)}(?=\s|$)", f"--algo {new}", arm["command"])
    return out


def current_arm(arm: Mapping) -> dict:
    """A stored arm with its config's options under today's names and its command's flags with them
    (:func:`dfltheory.empirical.algorithms.current_names`: DFedADMM's penalty ``lam`` is ``lam_pen``; a former name
    its algorithm never read is dropped from both, as it changed nothing)."""
    from dfltheory.empirical.algorithms import current_names, former_names
    from dfltheory.empirical.run_config import flag

    config = arm.get("config")
    if not isinstance(config, Mapping) or not former_names() & set(config):
        return dict(arm)
    new = current_names(config, stored=True)
    out = {**arm, "config": new}
    if isinstance(arm.get("command"), str):
        command = arm["command"]
        today = [k for k in new if k not in config]  # the name a former one took today, if its algorithm reads it
        for name in former_names() & set(config):
            swap = f"{flag(today[0])} " if today and new[today[0]] == config[name] else ""
            command = re.sub(rf" {re.escape(flag(name))} (\S+)(?=\s|$)", (rf" {swap}\1" if swap else ""), command)
        out["command"] = command
    return out


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the worker processes that trained runs)."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                   resource.getrusage(resource.RUSAGE_CHILDREN)))


def compact(result: dict) -> dict:
    """``result`` without the per-round curves (what docs/claims-*.json keep)."""
    drop = ("curve", "quantity")
    return {**result, "claims": [{**c, "arms": [{k: v for k, v in a.items() if k not in drop} for a in c["arms"]]}
                                 for c in result["claims"]]}


def trend_text(t: Mapping, number: Callable[[float], str] = lambda x: f"{x:.2g}") -> str:
    """A topology trend of a claim's result in words: its arms, the metric against the spectral gap, the mean
    per-seed Spearman rho, its permutation p-value and the verdict (the report and docs/claims.md)."""
    rho = "undefined" if t.get("rho") is None else number(t["rho"])
    p = "" if t.get("p_value") is None else f", p {number(t['p_value'])}"
    arms = f"{t['arms'][0]} … {t['arms'][-1]}: " if t.get("arms") else ""
    return (f"{arms}{t.get('metric_label', t['metric'])} against the spectral gap: mean per-seed Spearman rho {rho}{p} "
            f"({t['verdict']})")
