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
arm of a claim the same problem), TOST with the claim's margin ('a = b'),
a permutation test of the per-seed Spearman rho (trends against the spectral gap), Holm's correction inside a claim;
every part carries its p-value and the smallest effect detectable at 80 % power. Rounds to a target accuracy use a
target every run of the claim reaches (no censored run). A pair whose arms still move in the last 20 % of the rounds
by more than the effect tested is flagged ``moving``.

:func:`run_claims` trains the cohorts (cached under ``out/cohorts``, resumable) and returns a JSON-safe dict;
:mod:`dfltheory.figures.claims` draws it and holds the ``claims`` command.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dfltheory.verify import stats
from dfltheory.verify.holds import check_run_options, json_safe, pool_map, train_command

#: the papers with registered claims (the five, then the plugins': :func:`register_claims`)
PAPERS: list[str] = []
TARGET_GRID = 0.01  # rounds-to-target: the target is the best accuracy every run reaches, rounded down to this
TARGET_MIN = 0.3  # three times chance on 10 classes: below it the runs are not compared by their speed
MARGIN = {"test_acc": 0.01}  # the equivalence margin of 'a = b' claims: one accuracy point
RULE = ("each pair by a two-sided t-test ('a > b'; paired over the seeds, which give both arms the same problems) or "
        "TOST within the claim's margin ('a = b'), each trend by "
        "a permutation test of the per-seed Spearman rho against the spectral gap; Holm's correction at 0.05 inside "
        "a claim; a part is inconclusive when not significant, with the smallest effect detectable at 80 % power; a "
        "claim agrees when every part does, is contradicted when one part is, not testable when none could be "
        "tested, inconclusive otherwise")
#: metric key -> (+1 larger is better | -1 smaller is better, label)
METRICS = {"test_acc": (1, "test accuracy (last round)"), "train_loss": (-1, "train loss f(x_bar) (last round)"),
           "consensus": (-1, "consensus error (1/m) sum_i ||x_i - x_bar||^2 (last round)"),
           "rounds_to_target": (-1, "rounds to a test accuracy every run reaches")}
#: the recorded key drawn against rounds for a metric that is not itself recorded
CURVE = {"rounds_to_target": "test_acc"}
#: the theorem's measured quantity per paper (docs/verify.md), drawn beside the metric
_QUANTITY = {"dfedsgpsm": "grad_norm_sq", "dfedsam": "grad_norm_sq", "dfedcata": "grad_norm_sq_p",
            "dfedpgp": "grad_norm_sq_u", "dfedadmm": "grad_norm_sq_w"}

COMMON = {"dataset": "digits", "partition": "dirichlet", "alpha": 0.3, "model": "mlp-small", "epochs": True, "K": 5,
          "batch_size": 32, "lr": 0.1, "local_eval": True, "threads": 1}
#: topology parameters are templates filled per size by :func:`scaled` ({k} neighbours, {kr} for a k-regular graph,
#: {kc} the code's random picks, {p} and {ws_k} below)
SYMMETRIC = {"topology": "random", "topology_params": "k={kr},direction=regular", "weights": "metropolis"}
PUSH_OUT = {"topology": "random", "topology_params": "k={k},direction=out", "weights": "push-sum"}  # seed 000 L275
PULL_IN = {"topology": "random", "topology_params": "k={k},direction=in", "weights": "uniform"}  # seed 003 L189, (6)
CODE_GRAPH = {"topology": "code-random", "topology_params": "k={kc}", "weights": "uniform"}  # dfedcata.md §3.2, §7
#: the rounds each paper ran (card §8), over which its learning-rate decay is spread
_ROUNDS = {"dfedsgpsm": 300, "dfedsam": 1000, "dfedcata": 500, "dfedpgp": 500, "dfedadmm": 300}
#: the paper's values (card §8 of each paper); "decay" is the paper's per-round factor (rescaled: :func:`run_config`)
_BASE = {
    "dfedsgpsm": {"decay": 0.998, "rho": 0.1, "momentum": 0.9, **PUSH_OUT},  # dfedsgpsm.md §8 (MNIST)
    "dfedsam": {"decay": 0.998, "rho": 0.01, "Q": 4, "weight_decay": 5e-4, **SYMMETRIC},  # dfedsam.md §8
    "dfedcata": {"decay": 0.998, "lam_pen": 0.05, "beta": 0.9, "mode": "A", "clip": 10.0, "weight_decay": 5e-4,
                 **CODE_GRAPH},  # dfedcata.md §8 (the public code's defaults)
    "dfedpgp": {"decay": 0.99, "K_v": 1, "momentum": 0.9, "weight_decay": 5e-4, **PULL_IN},  # dfedpgp.md §8 (L189)
    "dfedadmm": {"decay": 0.998, "lam": 0.1, "rho": 0.1, **SYMMETRIC},  # dfedadmm.md §8
}
_BATCH = ("batch 32 on about 29 (m = 50) or 14 (m = 100) training images per client: 1-2 steps per local epoch (the "
          "Dirichlet sizes vary), not 4 of 128 on 500")
#: what every claim of a paper still does differently from the paper (docs/claims.md)
_DEVIATIONS = {
    "dfedsgpsm": ("digits and a 32-32 MLP, not MNIST and the 200-200 MLP (CIFAR for Table 2)", _BATCH),
    "dfedsam": ("digits and a 32-32 MLP, not CIFAR-10 and VGG-11",
                _BATCH,
                "symmetric random graph drawn k-regular (the paper: at most 10 neighbours, rule not stated)"),
    "dfedcata": ("digits and a 32-32 MLP, not CIFAR-10 and the code's LeNet", _BATCH,
                 "the paper's lambda, K and beta are lost: the code's defaults (dfedcata.md §8)"),
    "dfedpgp": ("digits and a 32-32 MLP with the last layer personal, not CIFAR-10 and ResNet-18",
                _BATCH,
                "eta_v = eta_u (not stated in the paper)"),
    "dfedadmm": ("digits and a 32-32 MLP, not MNIST and the 200-200 MLP", _BATCH,
                 "symmetric random graph drawn k-regular (the paper: at most 10 neighbours, rule not stated)"),
}


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


@dataclass(frozen=True)
class Claim:
    """A claim of a paper: ``pairs`` (a, '>' or '=', b) over arm labels, on ``metric`` at the last round;
    ``large``: run at the size's larger client count (topology, neighbour and client-count claims, where the
    spectral gaps must be ordered as in the paper); ``deviations``: what differs from the paper beyond
    :data:`DEVIATIONS`."""

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

    def arm(self, label: str) -> Arm:
        return next(a for a in self.arms if a.label == label)


def _arm(label: str, algo: str, scale: Mapping | None = None, finetune: int | None = None, **cfg) -> Arm:
    return Arm(label, {"algo": algo, **cfg}, scale=dict(scale or {}), finetune=finetune)


#: Table III's six topologies (seed 002 L136-142; dfedcata.md §7) with the code's uniform weights, sized by
#: :func:`scaled`
TABLE3 = (("Ring", "ring", None), ("Grid", "grid", None), ("Exp", "exponential", None), ("Full", "full", None),
          ("ER", "code-er", "p={p}"), ("WS", "watts-strogatz", "k={ws_k},p=0.1"))
CATA_TOPOLOGY = tuple(_arm(f"DFedCata {name}", "dfedcata", topology=topo, topology_params=params, sequential=True)
                      for name, topo, params in TABLE3)
AVG_TOPOLOGY = tuple(_arm(f"DFedAvg {name}", "dfedavg", topology=topo, topology_params=params)
                     for name, topo, params in TABLE3)
ADMM_FIXED = {"lam": 1.0}  # DFedADMM where it is not degenerate: eta / lambda = 0.1 (module docstring)


_BUILTIN: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- DFedSGPSM (seed 000)
    Claim("dfedsgpsm.table1", "dfedsgpsm", "§9 Table 1, §10.20",
          "DFedSGPSM beats SGP, and SGP beats D-PSGD (asymmetric beats symmetric under the same local optimizer)",
          "MNIST Dir 0.3: DFedSGPSM 98.51, SGP 94.55, D-PSGD 94.36",
          (_arm("DFedSGPSM", "dfedsgpsm"), _arm("SGP", "sgp"), _arm("D-PSGD", "dpsgd", **SYMMETRIC)),
          (("DFedSGPSM", ">", "SGP"), ("SGP", ">", "D-PSGD")),
          note="SGP and D-PSGD take one local epoch (their rule), DFedSGPSM 5, as in the paper; D-PSGD on a "
               "k-regular graph, SGP on k out-neighbours: the same neighbour budget",
          index=("dfedsgpsm.20",)),
    Claim("dfedsgpsm.table2", "dfedsgpsm", "§9 Table 2, §10.21",
          "module ablation: momentum helps OSGP, SAM helps further, neighbour selection changes little",
          "CIFAR-10 Dir 0.3: OSGP 76.59, +momentum 78.72, +SAM 81.31, +selection 81.35",
          (_arm("OSGP", "dfedsgpsm", rho=0.0, momentum=0.0), _arm("DFedSGPM", "dfedsgpsm", rho=0.0),
           _arm("DFedSGPSM", "dfedsgpsm"),
           _arm("DFedSGPSM-S", "dfedsgpsm-s", topology="neighbour-selection", topology_params="k={k}")),
          (("DFedSGPM", ">", "OSGP"), ("DFedSGPSM", ">", "DFedSGPM"), ("DFedSGPSM-S", "=", "DFedSGPSM")),
          note="OSGP = DFedSGPSM with alpha = 0, rho = 0 (card §10.18); DFedSGPM with rho = 0; DFedSGPSM-S picks k "
               "out-neighbours from the losses (its seeds train one by one: its graph couples all clients)",
          index=("dfedsgpsm.21",), deviations=("the paper's Table 2 is CIFAR-10",)),
    Claim("dfedsgpsm.alpha", "dfedsgpsm", "§9 Fig. 2a, §10.22",
          "momentum alpha = 0.7 gives the best final accuracy among {0.1, ..., 0.9}",
          "best at alpha = 0.7 (no number)",
          (_arm("alpha=0.1", "dfedsgpsm", momentum=0.1), _arm("alpha=0.7", "dfedsgpsm", momentum=0.7),
           _arm("alpha=0.9", "dfedsgpsm", momentum=0.9)),
          (("alpha=0.7", ">", "alpha=0.1"), ("alpha=0.7", ">", "alpha=0.9")), index=("dfedsgpsm.22",),
          deviations=("three of the paper's nine alphas",)),
    # ---------------------------------------------------------------- DFedSAM (seed 001)
    Claim("dfedsam.table1", "dfedsam", "§9 Table 1, §10.19",
          "DFedSAM beats DFedAvg, which beats D-PSGD; DFedSAM-MGS (Q = 4) beats DFedSAM",
          "CIFAR-10 Dir 0.3: DFedSAM-MGS 84.26, DFedSAM 82.04, DFedAvg 73.55, D-PSGD 68.23",
          (_arm("DFedSAM-MGS", "dfedsam-mgs"), _arm("DFedSAM", "dfedsam"), _arm("DFedAvg", "dfedavg"),
           _arm("D-PSGD", "dpsgd")),
          (("DFedSAM-MGS", ">", "DFedSAM"), ("DFedSAM", ">", "DFedAvg"), ("DFedAvg", ">", "D-PSGD")),
          note="D-PSGD takes one local epoch (its rule), the others 5", index=("dfedsam.19",)),
    Claim("dfedsam.topology", "dfedsam", "§9 Table 2, §10.18",
          "accuracy rises ring < grid < exponential < full, and the gain of Q = 4 gossip steps is large on the ring "
          "and vanishes on the full graph",
          "CIFAR-10 (seed L184-193): DFedSAM ring 73.19, grid 85.28, exp 87.44, full 88.05; MGS - DFedSAM: ring +7.36, "
          "grid +2.11, exp +0.62, full +0.15",
          tuple(_arm(f"{name} {topo}", algo, topology=topology, topology_params=None)
                for topo, topology in (("ring", "ring"), ("grid", "grid"), ("exp", "exponential"), ("full", "full"))
                for name, algo in (("DFedSAM", "dfedsam"), ("MGS", "dfedsam-mgs"))),
          (("DFedSAM grid", ">", "DFedSAM ring"), ("DFedSAM exp", ">", "DFedSAM grid"),
           ("DFedSAM full", ">", "DFedSAM exp"), ("MGS ring", ">", "DFedSAM ring"),
           ("MGS full", "=", "DFedSAM full")),
          trends=(Trend("test_acc", ">", ("DFedSAM ring", "DFedSAM grid", "DFedSAM exp", "DFedSAM full")),),
          note="each step of the ordering as a pair, and the per-seed rank trend over the four graphs",
          index=("dfedsam.18",), large=True),
    Claim("dfedsam.consensus", "dfedsam", "§10.17",
          "the consensus error is larger on the ring than on the full graph and falls with Q",
          "no number (the card's prediction from Phi(lambda, m, Q), §5.3)",
          (_arm("DFedSAM ring", "dfedsam", topology="ring", topology_params=None),
           _arm("MGS ring", "dfedsam-mgs", topology="ring", topology_params=None),
           _arm("DFedSAM full", "dfedsam", topology="full", topology_params=None)),
          (("DFedSAM full", ">", "DFedSAM ring"), ("MGS ring", ">", "DFedSAM ring")), metric="consensus",
          note="smaller is better: 'a > b' means a has the smaller consensus error; the runs of dfedsam.topology",
          index=("dfedsam.17",), large=True),
    Claim("dfedsam.K", "dfedsam", "§9 Fig. 5(a), §10.21",
          "more local epochs K converge faster in rounds",
          "no number (Fig. 5(a))",
          (_arm("K=10", "dfedsam", K=10), _arm("K=2", "dfedsam", K=2)),
          (("K=10", ">", "K=2"),), metric="rounds_to_target", index=("dfedsam.21",), varies=("K",)),
    # ---------------------------------------------------------------- DFedCata (seed 002)
    Claim("dfedcata.beta", "dfedcata", "§9 Table IV, §10.20",
          "the Nesterov coefficient beta helps: accuracy rises with beta up to about 0.8, then plateaus",
          "CIFAR-10 Dir 0.3: beta 0 77.17, 0.4 80.24, 0.9 81.54",
          tuple(_arm(f"beta={b:g}", "dfedcata", beta=b, sequential=True) for b in (0.0, 0.4, 0.9)),
          (("beta=0.4", ">", "beta=0"), ("beta=0.9", ">", "beta=0.4")),
          note="the public code's schedule: clients one after the other, each aggregating (reading A) the models "
               "already trained this round, with the code's uniform weights on its random graph (card §3.2); the "
               "accuracy of the mean of the trained local models, which the code evaluates", index=("dfedcata.20",)),
    Claim("dfedcata.beta.readingB", "dfedcata", "§9 Table IV, §3.1 reading B",
          "as dfedcata.beta, in reading B (the theory's extrapolation, card §3.1): a named variant, not the code's",
          "CIFAR-10 Dir 0.3: beta 0 77.17, 0.4 80.24, 0.9 81.54",
          (_arm("B beta=0", "dfedcata", beta=0.0, mode="B"), _arm("B beta=0.4", "dfedcata", beta=0.4, mode="B"),
           _arm("B beta=0.9", "dfedcata", beta=0.9, mode="B")),
          (("B beta=0.4", ">", "B beta=0"), ("B beta=0.9", ">", "B beta=0.4")),
          note="reading B, synchronous, on the same graph and weights as dfedcata.beta", index=("dfedcata.20",),
          deviations=("reading B in the synchronous schedule is the theory's variant; the experiments' code runs "
                      "reading A sequentially (dfedcata.beta)",)),
    Claim("dfedcata.table1", "dfedcata", "§9 Table I",
          "DFedCata beats DFedSAM and DFedAvg",
          "CIFAR-10 Dir 0.3: DFedCata 82.88, DFedSAM 79.37, DFedAvg 77.25",
          (_arm("DFedCata", "dfedcata", sequential=True), _arm("DFedSAM", "dfedsam", rho=0.01),
           _arm("DFedAvg", "dfedavg")),
          (("DFedCata", ">", "DFedSAM"), ("DFedCata", ">", "DFedAvg")),
          note="every arm on the code's graph and weights, with its clipping and weight decay; DFedCata in the code's "
               "sequential schedule, the baselines synchronous (the engine's sequential schedule is DFedCata's)",
          deviations=("DFedSAM's rho is lost from the paper: DFedSAM's own 0.01 (dfedsam.md §8)",
                      "DFedSAM and DFedAvg synchronous (whether the code runs them in place is not checked here)")),
    Claim("dfedcata.topology", "dfedcata", "§9 Table III, §10.12",
          "DFedCata beats DFedAvg on every topology, and its accuracy does not follow the spectral gap (WS and ER "
          "above Full, Exp below Grid)",
          "CIFAR-10 (seed L136-141): DFedCata ring 72.22, grid 81.13, exp 79.05, full 81.38, ER 82.04, WS 82.45; "
          "DFedAvg 63.30, 74.72, 77.11, 78.52, 77.70, 75.65",
          CATA_TOPOLOGY + AVG_TOPOLOGY,
          tuple((c.label, ">", a.label) for c, a in zip(CATA_TOPOLOGY, AVG_TOPOLOGY)),
          trends=(Trend("test_acc", "=", tuple(a.label for a in CATA_TOPOLOGY)),),
          note="DFedCata in the code's sequential schedule, DFedAvg synchronous; uniform weights 1/(deg+1) on every "
               "graph (the code's); grid = 2-D grid without wrap-around, ER "
               "redrawn every round with p = max(0.1, 3/m), WS with k = 8 (4 below m = 50) and p = 0.1 (dfedcata.md "
               "§7)", index=("dfedcata.12",), large=True),
    Claim("dfedcata.speed", "dfedcata", "§VI-A (Fig. 4), §10.13",
          "DFedCata's convergence speed does not follow the spectral gap (about 80 rounds to 75 % on Full against 40 "
          "on ER), unlike earlier DFL methods, whose speed does (DFedAvg here)",
          "CIFAR-10, rounds to 75 % (seed L162): DFedCata about 80 on Full, about 40 on ER (read off Fig. 4)",
          CATA_TOPOLOGY + AVG_TOPOLOGY, (),
          metric="rounds_to_target",
          trends=(Trend("rounds_to_target", "=", tuple(a.label for a in CATA_TOPOLOGY)),
                  Trend("rounds_to_target", ">", tuple(a.label for a in AVG_TOPOLOGY))),
          note="the runs of dfedcata.topology; speed is the rounds to the best accuracy every run reaches, measured "
               "every eval_every rounds", index=("dfedcata.13",), large=True),
    # ---------------------------------------------------------------- DFedPGP (seed 003)
    Claim("dfedpgp.directed", "dfedpgp", "§9 Table 4, §10.17(c)",
          "directed (in-neighbour pull) communication beats the symmetric version of the same personalized "
          "algorithm",
          "CIFAR-10 Dir 0.3: DFedPGP 85.61, DFedAvgM-P 84.69",
          (_arm("DFedPGP directed", "dfedpgp-pull"),
           _arm("DFedPGP symmetric", "dfedpgp-pull", **{**SYMMETRIC, "weights": "uniform"})),
          (("DFedPGP directed", ">", "DFedPGP symmetric"),),
          note="the symmetric arm: a random k-regular graph with p_ij = 1/(k+1), the doubly stochastic form of rule "
               "(6) the paper describes (card §7); the same k neighbours as the directed arm",
          index=("dfedpgp.17",)),
    Claim("dfedpgp.personal", "dfedpgp", "§9 Table 4, §10.17(b)",
          "partial personalization (a personal classifier head) beats sharing the whole model",
          "CIFAR-10 Dir 0.3: DFedPGP 85.61, OSGP 83.14",
          (_arm("DFedPGP", "dfedpgp-pull"), _arm("shared all (OSGP)", "dfedpgp-pull", personal="none")),
          (("DFedPGP", ">", "shared all (OSGP)"),),
          note="the second arm is DFedPGP with every layer shared; personal test accuracy on each client's test "
               "split", index=("dfedpgp.17",)),
    Claim("dfedpgp.finetune", "dfedpgp", "§9 Table 1, §10.17(a)",
          "DFedPGP beats a global decentralized method made personal by local fine-tuning (DFedAvgM + fine-tuning)",
          "CIFAR-10 Dir 0.3 (Table 1, seed L161-175): DFedPGP 85.61, DFedAvgM 82.49, FedBABU (fine-tunes 5 times, "
          "L385) 83.26",
          (_arm("DFedPGP", "dfedpgp-pull"),
           _arm("DFedAvgM + fine-tuning", "dfedavgm", finetune=5, K_v=None, **{**SYMMETRIC, "weights": "uniform"}),
           _arm("DFedAvgM, no fine-tuning", "dfedavgm", finetune=0, K_v=None, **{**SYMMETRIC, "weights": "uniform"})),
          (("DFedPGP", ">", "DFedAvgM + fine-tuning"),),
          note="personal test accuracy on each client's own test split for all three; DFedAvgM (momentum 0.9, "
               "symmetric k-regular gossip) is trained with DFedPGP's schedule, then each client takes 5 SGD steps "
               "of batch 32 on its own data from its final model (dfltheory.empirical.finetune); the third arm, not "
               "decided, is DFedAvgM's final models without fine-tuning", index=("dfedpgp.17",),
          deviations=("fine-tuning: 5 minibatch steps (FedBABU's 5 fine-tuning passes read as steps)",)),
    Claim("dfedpgp.K_u", "dfedpgp", "§6 Remark 1, §9 Table 8, §10.6",
          "more local epochs K_u on the shared part speed convergence (Remark 1); K_u = 5 is the best of the grid "
          "[1, 3, 5, 8] (Table 8)",
          "no accuracy given (Remark 1, seed L157; Table 8 'Local Interval' [1, 3, 5, 8], best 5, L469)",
          tuple(_arm(f"K_u={k}", "dfedpgp-pull", K=k) for k in (1, 3, 5, 8)),
          (("K_u=5", ">", "K_u=1"), ("K_u=5", ">", "K_u=3"), ("K_u=5", ">", "K_u=8")),
          note="K is DFedPGP's K_u in epochs (K_v = 1 personal epoch first), as the paper's Local Interval",
          index=("dfedpgp.6",), varies=("K",)),
    Claim("dfedpgp.clients", "dfedpgp", "§9 Fig. 3b, §10.8, §10.17(f)",
          "fewer clients give higher accuracy (more data per client), although the bound's q predicts the opposite",
          "no number (Fig. 3b, seed L242): 5 and 10 clients above 50, 100 and 200",
          (_arm("m/2 clients", "dfedpgp-pull", scale={"n": 0.5}), _arm("m clients", "dfedpgp-pull"),
           _arm("2m clients", "dfedpgp-pull", scale={"n": 2.0})),
          (("m/2 clients", ">", "m clients"), ("m clients", ">", "2m clients")),
          note="m/2, m, 2m clients split digits' 1,437 training images (50, 100, 200 at the full size); local work "
               "in epochs, so more data per client is more steps per round (the paper's mechanism); the same k "
               "neighbours", index=("dfedpgp.8", "dfedpgp.17"), varies=("n",), large=True),
    Claim("dfedpgp.neighbours", "dfedpgp", "§9 Fig. 3a, §10.7, §10.17(e)",
          "more neighbours give higher accuracy: the largest neighbour count is best",
          "no number (Fig. 3a, seed L240): 2, 5, 10, 20, 40 in-neighbours of 100, best at 40",
          (_arm("k/2", "dfedpgp-pull", scale={"k": 0.5}), _arm("k", "dfedpgp-pull"),
           _arm("2k", "dfedpgp-pull", scale={"k": 2.0}), _arm("4k", "dfedpgp-pull", scale={"k": 4.0})),
          (("4k", ">", "k/2"), ("4k", ">", "k"), ("4k", ">", "2k")),
          note="k = max(2, round(m/10)) in-neighbours: 5, 10, 20, 40 of 100 clients at the full size",
          index=("dfedpgp.7", "dfedpgp.17"), large=True),
    # ---------------------------------------------------------------- DFedADMM (seed 004)
    Claim("dfedadmm.printed", "dfedadmm", "§9 Table 1, §10.12, §10.18",
          "at the printed setting eta = lambda = 0.1: DFedADMM-SAM beats DFedADMM, and DFedADMM beats DFedAvg (the "
          "finding tested here: the card predicts that the K local steps collapse to about one, §10.12)",
          "MNIST Dir 0.3: DFedADMM-SAM 98.44, DFedADMM 98.07, DFedAvg 97.78",
          (_arm("DFedADMM-SAM", "dfedadmm-sam"), _arm("DFedADMM", "dfedadmm"), _arm("DFedAvg", "dfedavg"),
           _arm("DFedADMM lambda=1", "dfedadmm", **ADMM_FIXED)),
          (("DFedADMM-SAM", ">", "DFedADMM"), ("DFedADMM", ">", "DFedAvg")),
          note="the fourth arm, not decided, is DFedADMM where it is not degenerate (lambda = 1): the gap between "
               "the two DFedADMM arms measures the collapse (card §10.12)", index=("dfedadmm.18",)),
    Claim("dfedadmm.sam", "dfedadmm", "§9 Table 1, §10.18",
          "DFedADMM-SAM beats DFedADMM, and DFedADMM beats DFedAvg",
          "MNIST Dir 0.3: DFedADMM-SAM 98.44, DFedADMM 98.07, DFedAvg 97.78",
          (_arm("DFedADMM-SAM", "dfedadmm-sam", **ADMM_FIXED), _arm("DFedADMM", "dfedadmm", **ADMM_FIXED),
           _arm("DFedAvg", "dfedavg")),
          (("DFedADMM-SAM", ">", "DFedADMM"), ("DFedADMM", ">", "DFedAvg")),
          index=("dfedadmm.18",), deviations=("lambda = 1, not the printed 0.1 (degenerate: dfedadmm.printed)",)),
    Claim("dfedadmm.topology", "dfedadmm", "§9 Table 2, §10.17",
          "accuracy of DFedADMM and DFedADMM-SAM rises from ring to full (falls with psi)",
          "MNIST Dir 0.3: DFedADMM ring 96.41, full 98.26; DFedADMM-SAM ring 97.08, full 98.50",
          (_arm("DFedADMM ring", "dfedadmm", topology="ring", topology_params=None, **ADMM_FIXED),
           _arm("DFedADMM full", "dfedadmm", topology="full", topology_params=None, **ADMM_FIXED),
           _arm("DFedADMM-SAM ring", "dfedadmm-sam", topology="ring", topology_params=None, **ADMM_FIXED),
           _arm("DFedADMM-SAM full", "dfedadmm-sam", topology="full", topology_params=None, **ADMM_FIXED)),
          (("DFedADMM full", ">", "DFedADMM ring"), ("DFedADMM-SAM full", ">", "DFedADMM-SAM ring")),
          index=("dfedadmm.17",), large=True,
          deviations=("lambda = 1, not the printed 0.1 (degenerate: dfedadmm.printed)",)),
    Claim("dfedadmm.lambda", "dfedadmm", "§9 Fig. 3b, §10.20",
          "the penalty lambda = 0.2 is the best of {0.05, 0.1, 0.2, 0.5}",
          "no number (Fig. 3b, seed L243): lambda = 0.2 best",
          tuple(_arm(f"lambda={lam:g}", "dfedadmm-sam", lam=lam) for lam in (0.05, 0.1, 0.2, 0.5)),
          (("lambda=0.2", ">", "lambda=0.05"), ("lambda=0.2", ">", "lambda=0.1"), ("lambda=0.2", ">", "lambda=0.5")),
          note="DFedADMM-SAM (rho = 0.1) at the paper's eta = 0.1: lambda = 0.05 makes the local factor "
               "1 - eta/lambda = -1 (card §10.7), lambda = 0.1 collapses the K steps to one (§10.12)",
          index=("dfedadmm.20",)),
    Claim("dfedadmm.K", "dfedadmm", "§9 Fig. 3a, §10.20",
          "more local epochs converge faster: K = 10 beats K = 1, 2 and 5",
          "no number (Fig. 3a, seed L237): K = 10 fastest of {1, 2, 5, 10}",
          tuple(_arm(f"K={k}", "dfedadmm-sam", K=k, **ADMM_FIXED) for k in (1, 2, 5, 10)),
          (("K=10", ">", "K=1"), ("K=10", ">", "K=2"), ("K=10", ">", "K=5")), metric="rounds_to_target",
          index=("dfedadmm.20",), varies=("K",),
          deviations=("lambda = 1, not the printed 0.1 (degenerate: dfedadmm.printed)",)),
    Claim("dfedadmm.rho", "dfedadmm", "§9 Fig. 3d, §10.20",
          "the SAM radius rho = 0.1 is the best of {0.01, ..., 0.3}; convergence slows as rho grows",
          "no number (Fig. 3d, seed L241): rho = 0.1 best of {0.01, 0.05, 0.1, 0.2, 0.25, 0.3}",
          tuple(_arm(f"rho={r:g}", "dfedadmm-sam", rho=r, **ADMM_FIXED) for r in (0.01, 0.1, 0.3)),
          (("rho=0.1", ">", "rho=0.01"), ("rho=0.1", ">", "rho=0.3")), index=("dfedadmm.20",),
          deviations=("lambda = 1, not the printed 0.1 (degenerate: dfedadmm.printed)",
                      "three of the paper's six radii")),
    Claim("dfedadmm.clients", "dfedadmm", "§9 Fig. 3c, §10.20",
          "the number of clients makes no significant difference",
          "no number (Fig. 3c, seed L207): m = 50, 100, 150 'no significant difference'",
          (_arm("m/2 clients", "dfedadmm-sam", scale={"n": 0.5}, **ADMM_FIXED),
           _arm("m clients", "dfedadmm-sam", **ADMM_FIXED),
           _arm("1.5m clients", "dfedadmm-sam", scale={"n": 1.5}, **ADMM_FIXED)),
          (("m/2 clients", "=", "m clients"), ("1.5m clients", "=", "m clients")),
          note="m/2, m, 1.5m = 50, 100, 150 at the full size, as the paper's; digits' training images are split "
               "among them; 'no significant difference' tested as equivalence within one accuracy point",
          index=("dfedadmm.20",), varies=("n",), large=True,
          deviations=("lambda = 1, not the printed 0.1 (degenerate: dfedadmm.printed)",)),
)


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


#: per paper with claims: its base options, its rounds, the theorem quantity recorded, what every claim changes
PAPER_BASE: dict[str, dict] = {}
PAPER_ROUNDS: dict[str, int] = {}
QUANTITY: dict[str, str] = {}
DEVIATIONS: dict[str, tuple[str, ...]] = {}
CLAIMS: list[Claim] = []


def register_claims(paper: str, claims: Sequence[Claim], *, base: Mapping, rounds: int,
                    quantity: str = "grad_norm_sq", deviations: Sequence[str] = (), origin: str = "") -> None:
    """Make ``dfltheory claims PAPER`` (and the report) test a paper's experimental claims: each :class:`Claim` of
    ``paper`` compares :class:`Arm`s (a registered algorithm and its options over :data:`COMMON` and ``base``) by a
    statistical test over seeds. ``base``: the paper's options, with ``decay`` its per-round learning-rate factor
    over its ``rounds`` (rescaled to the run's rounds); ``quantity``: the metric of the theorem's quantity recorded
    beside; ``deviations``: what every claim does differently from the paper. ``origin`` (a plugin file) is named in
    the errors, ValueErrors that name the problem and the fix."""
    from dfltheory.bounds import PAPERS as CATALOG
    from dfltheory.empirical.algorithms import ALGORITHMS

    where = f"{origin}: " if origin else ""
    problems = []
    if paper not in CATALOG:
        problems.append(f"unknown paper {paper!r} (register it first: dfltheory.bounds.register_paper)")
    if paper in PAPERS:
        problems.append(f"paper {paper!r} already has claims")
    if "decay" not in base or isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        problems.append("base needs 'decay' (the paper's per-round factor, 1.0 for none) and rounds an integer >= 1")
    ids = [c.id for c in claims] + [c.id for c in CLAIMS]
    for c in claims:
        labels = {a.label for a in c.arms}
        if not isinstance(c, Claim) or c.paper != paper:
            problems.append(f"{c!r} is not a Claim of paper {paper!r}")
        elif ids.count(c.id) > 1:
            problems.append(f"duplicate claim id {c.id!r}")
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
    PAPERS.append(paper)
    PAPER_BASE[paper], PAPER_ROUNDS[paper], QUANTITY[paper] = dict(base), rounds, quantity
    DEVIATIONS[paper] = tuple(deviations)
    CLAIMS.extend(claims)


for _paper in ("dfedsgpsm", "dfedsam", "dfedcata", "dfedpgp", "dfedadmm"):
    register_claims(_paper, [c for c in _BUILTIN if c.paper == _paper], base=_BASE[_paper], rounds=_ROUNDS[_paper],
                    quantity=_QUANTITY[_paper], deviations=_DEVIATIONS[_paper], origin=__name__)


def select(papers: Sequence[str] = ("all",)) -> list[Claim]:
    """The claims of ``papers`` ('all' or paper names); an unknown name is a ValueError listing the valid ones."""
    papers = list(papers) or ["all"]
    bad = [p for p in papers if p != "all" and p not in PAPERS]
    if bad:
        raise ValueError(f"unknown paper {bad[0]!r}; choose 'all' or any of {', '.join(PAPERS)}")
    chosen = PAPERS if "all" in papers else papers
    return [c for c in CLAIMS if c.paper in chosen]


def run_config(claim: Claim, arm: Arm, size: ClaimSize, device: str = "cpu") -> dict:
    """The ``train`` config of one arm (without its seeds): m (or the arm's multiple of it) clients, the paper's
    decay rescaled to the run's rounds, the topology template filled by :func:`scaled`."""
    m = size.m_large if claim.large else size.m
    n = max(2, round(arm.scale.get("n", 1.0) * m))
    base = {**COMMON, **PAPER_BASE[claim.paper], **arm.cfg, "n": n, "rounds": size.rounds,
            "eval_every": size.eval_every}
    base["lr_decay"] = round(base.pop("decay") ** (PAPER_ROUNDS[claim.paper] / size.rounds), 10)
    if isinstance(base.get("topology_params"), str):
        base["topology_params"] = base["topology_params"].format(**scaled(m, n, arm.scale.get("k", 1.0)))
    if device != "cpu":
        base["device"] = device
    return {k: v for k, v in base.items() if v is not None}


def seeds_of(arm: Arm, size: ClaimSize) -> list[int]:
    return [arm.seed_offset + s for s in range(size.seeds)]


def run_configs(claim: Claim, arm: Arm, size: ClaimSize, device: str = "cpu") -> list[dict]:
    """One ``train`` config per seed (seed = data_seed = s), as :func:`run_cohort` trains them."""
    cfg = run_config(claim, arm, size, device)
    return [{**cfg, "seed": s, "data_seed": s} for s in seeds_of(arm, size)]


# ------------------------------------------------------------------------------------------------ cohorts
def _key(cfg: Mapping, seeds: Sequence[int], finetune: int | None) -> str:
    blob = json.dumps({"cfg": cfg, "seeds": list(seeds), "finetune": finetune}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _train(cfg: dict, seeds: list[int], out: str, finetune: int | None) -> dict:
    """One cohort (a worker process: one CPU thread); the seeds of an algorithm that couples every client
    (:func:`dfltheory.empirical.runner.coupling`: DFedSGPSM-S) one engine each."""
    import torch

    from dfltheory.empirical import algorithms as A
    from dfltheory.empirical.cohort import run_cohort
    from dfltheory.empirical.runner import coupling

    torch.set_num_threads(int(cfg.get("threads", 1)))
    train = {k: v for k, v in cfg.items() if k not in ("rounds", "eval_every", "threads", "local_eval")}
    kw = {"rounds": cfg["rounds"], "eval_every": cfg["eval_every"], "checkpoint_every": 50,
          "local_eval": cfg.get("local_eval", True), "finetune": finetune}
    if not coupling(A.make(cfg["algo"])):
        return run_cohort(train, seeds, out, **kw)
    parts = [run_cohort(train, [s], Path(out) / f"seed{s}", **kw) for s in seeds]
    result = {"seeds": seeds, "rounds": cfg["rounds"], "records": [p["records"][0] for p in parts],
              "status": [p["status"][0] for p in parts], "wall_seconds": sum(p["wall_seconds"] for p in parts),
              "finetuned": None if finetune is None else [p["finetuned"][0] for p in parts]}
    (Path(out) / "records.json").write_text(json.dumps(result))  # the cohort is complete (read back per seed)
    return result


def _cohorts(chosen: Sequence[Claim], size: ClaimSize, device: str) -> dict[str, tuple]:
    """{key: (cfg, seeds, finetune)} of every distinct cohort the claims need."""
    out = {}
    for claim in chosen:
        for arm in claim.arms:
            cfg, seeds = run_config(claim, arm, size, device), seeds_of(arm, size)
            out[_key(cfg, seeds, arm.finetune)] = (cfg, seeds, arm.finetune)
    return out


# ------------------------------------------------------------------------------------------------ verdicts
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
    from dfltheory.topology.commands import parse_params

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
    return rows[-1].get(metric) if rows else None


def _movement(rows_per_seed: list[list[dict]], metric: str, rounds: int) -> float | None:
    """|mean metric at the last record - at the record nearest 0.8 T|: what the last 20 % of the rounds moved."""
    if metric == "rounds_to_target" or not rows_per_seed or not rows_per_seed[0]:
        return None
    pick = lambda rows: min(rows, key=lambda r: abs(r["round"] - 0.8 * rounds))  # noqa: E731
    last = [rows[-1].get(metric) for rows in rows_per_seed]
    early = [pick(rows).get(metric) for rows in rows_per_seed]
    if any(v is None for v in last + early):
        return None
    return abs(float(np.mean(last)) - float(np.mean(early)))


def _arm_row(arm: Arm, cfg: dict, result: dict) -> dict:
    ok = all(s == "completed" for s in result["status"])
    return {"label": arm.label, "algo": arm.cfg["algo"], "seeds": result["seeds"], "records": result["records"],
            "status": "completed" if ok else "diverged", "finetune": arm.finetune, "finetuned": result.get("finetuned"),
            "config": cfg, "wall_seconds": result.get("wall_seconds"),
            "command": f"{train_command({**cfg, 'seed': result['seeds'][0], 'data_seed': result['seeds'][0]})} "
                       f"--out run  (seed s of {result['seeds'][0]}..{result['seeds'][-1]}: --seed s --data-seed s; "
                       "the claims train them as one cohort)"}


def _finish_arm(a: dict, metric: str, target: float | None, size: ClaimSize, quantity: str, gap: bool) -> dict:
    """An arm's per-seed values of ``metric`` (the fine-tuned accuracy where the arm fine-tunes), mean, std, the
    curves, the movement over the last 20 % of the rounds, and the spectral gap (``gap``)."""
    if a["finetune"] is not None:
        values = list(a["finetuned"] or [])
    else:
        values = [_value(rows, metric, target) for rows in a["records"]]
    ok = a["status"] == "completed" and values and all(v is not None and np.isfinite(v) for v in values)
    v = np.asarray(values if ok else [np.nan], float)
    local = [rows[-1].get("local_test_acc_mean") for rows in a["records"] if rows]
    return {**{k: a[k] for k in ("label", "algo", "seeds", "finetune", "command", "config")},
            "values": values, "mean": float(v.mean()) if ok else None,
            "std": float(v.std(ddof=1)) if ok and len(v) > 1 else None,
            "local_test_acc_mean": float(np.mean(local)) if local and all(x is not None for x in local) else None,
            "movement": None if a["finetune"] is not None else _movement(a["records"], metric, size.rounds),
            "curve": _curves(a["records"], CURVE.get(metric, metric)), "quantity": _curves(a["records"], quantity),
            "spectral_gap": (float(np.mean([spectral_gap(a["config"], s) for s in a["seeds"][:3]])) if gap else None),
            "status": "completed" if ok else a["status"] if a["status"] != "completed" else "not measured"}


def evaluate(claim: Claim, size: ClaimSize, results: Mapping[str, dict], device: str = "cpu") -> dict:
    """The row of one claim from its cohorts: each arm's values, each pair's and trend's test and verdict (Holm
    inside the claim), the claim's verdict and its reason."""
    sign, label = METRICS[claim.metric]
    cfgs = [run_config(claim, arm, size, device) for arm in claim.arms]
    raw = [_arm_row(arm, cfg, results[_key(cfg, seeds_of(arm, size), arm.finetune)])
           for arm, cfg in zip(claim.arms, cfgs)]
    target = target_of(raw) if claim.metric == "rounds_to_target" else None
    in_trend = {lab for t in claim.trends for lab in t.arms}
    arms = [_finish_arm(a, claim.metric, target, size, QUANTITY[claim.paper], a["label"] in in_trend) for a in raw]
    by = {a["label"]: a for a in arms}
    tests = []  # (kind 'pair' or 'trend', its index in pairs or trends, relation)
    pairs, trends = [], []
    for a, rel, b in claim.pairs:
        row = {"a": a, "relation": rel, "b": b}
        if by[a]["mean"] is None or by[b]["mean"] is None:
            why = ("no target every run reaches" if claim.metric == "rounds_to_target" and target is None
                   else f"{a if by[a]['mean'] is None else b} diverged")
            pairs.append({**row, "verdict": "not testable here", "why": why})
            continue
        t = stats.pair_test(by[a]["values"], by[b]["values"], rel, sign, MARGIN.get(claim.metric),
                            pair=by[a]["seeds"] == by[b]["seeds"])
        pairs.append({**row, **t})
        tests.append(("pair", len(pairs) - 1, rel))
    for tr in claim.trends:
        s, lab = METRICS[tr.metric]
        rows = [by[x] for x in tr.arms]
        out = {"metric": tr.metric, "metric_label": lab, "relation": tr.relation, "arms": list(tr.arms),
               "gap": [r["spectral_gap"] for r in rows], "mean": [r["mean"] for r in rows]}
        if any(r["mean"] is None for r in rows):
            trends.append({**out, "rho": None, "p_value": None, "verdict": "not testable here",
                           "why": "an arm diverged or no target every run reaches"})
            continue
        V = s * np.array([r["values"] for r in rows], float).T  # seeds x arms, larger is better
        t = stats.trend_test(out["gap"], V)
        trends.append({**out, "rho": t["rho"], "p_value": t["p"], "interval": t["interval"],
                       "test": "permutation test of the mean per-seed Spearman rho"})
        if t["rho"] is None:
            trends[-1].update(verdict="not testable here", why="the spectral gaps are all equal")
        else:
            tests.append(("trend", len(trends) - 1, tr.relation))
    ps = [pairs[i]["p"] if k == "pair" else trends[i]["p_value"] for k, i, _ in tests]
    adjusted = stats.holm(ps) if ps else []
    beyond = [pairs[i].get("p_beyond", 1.0) if k == "pair" else 1.0 for k, i, _ in tests]
    beyond_adj = stats.holm(beyond) if beyond else []
    for (kind, i, rel), p_adj, pb in zip(tests, adjusted, beyond_adj):
        if kind == "pair":
            v = stats.pair_verdict(pairs[i], rel, p_adj, pb if rel == "=" else None, len(tests))
            moved = max((by[x]["movement"] or 0.0) for x in (pairs[i]["a"], pairs[i]["b"]))
            effect = max(abs(pairs[i]["difference"]), v["detectable"])
            pairs[i].update(v, movement=moved if claim.metric != "rounds_to_target" else None,
                            moving=claim.metric != "rounds_to_target" and moved > effect)
        else:
            trends[i].update(p_holm=p_adj, verdict=stats.trend_verdict(trends[i], rel, p_adj))
    parts = [p["verdict"] for p in pairs] + [t["verdict"] for t in trends]
    verdict = stats.claim_verdict(parts)
    return {"id": claim.id, "paper": claim.paper, "section": claim.section, "statement": claim.statement,
            "paper_number": claim.paper_number, "metric": claim.metric, "metric_label": label,
            "target": target, "curve_metric": CURVE.get(claim.metric, claim.metric),
            "quantity": QUANTITY[claim.paper], "note": claim.note, "index": list(claim.index),
            "m": size.m_large if claim.large else size.m,
            "deviations": list(DEVIATIONS[claim.paper]) + list(claim.deviations) + _scale_deviations(claim, size),
            "arms": arms, "pairs": pairs, "trends": trends, "verdict": verdict,
            "reason": reason(verdict, pairs, trends, claim.metric)}


def _scale_deviations(claim: Claim, size: ClaimSize) -> list[str]:
    m = size.m_large if claim.large else size.m
    out = [f"{size.rounds} rounds, not the paper's {PAPER_ROUNDS[claim.paper]} (its learning-rate path rescaled to "
           "them)"] if size.rounds != PAPER_ROUNDS[claim.paper] else []
    return out + ([f"m = {m} clients, not 100"] if m != 100 else [])


def shown_in(metric: str) -> tuple[float, str]:
    """(scale, unit) a difference of ``metric`` is written in: accuracy in points, anything else as measured."""
    return (100.0, " points") if metric == "test_acc" else (1.0, "")


def reason(verdict: str, pairs: Sequence[dict], trends: Sequence[dict], metric: str) -> str:
    """One line: why a claim did not agree (the parts that did not, with their smallest detectable effects)."""
    if verdict == "agrees":
        return "every part agrees"
    scale, unit = shown_in(metric)
    bits = []
    for p in pairs:
        if p["verdict"] == "agrees":
            continue
        name = f"{p['a']} {p['relation']} {p['b']}"
        if p["verdict"] == "not testable here":
            bits.append(f"{name}: not testable ({p['why']})")
        elif p["verdict"] == "contradicted":
            bits.append(f"{name}: contradicted (difference {scale * p['difference']:+.3g}{unit}, Holm p "
                        f"{p['p_holm']:.2g})")
        else:
            bits.append(f"{name}: inconclusive (difference {scale * p['difference']:+.3g}{unit}, detectable "
                        f"{scale * p['detectable']:.3g}{unit})" + (" still moving" if p.get("moving") else ""))
    for t in trends:
        if t["verdict"] != "agrees":
            rho = "undefined" if t.get("rho") is None else f"{t['rho']:+.2f}"
            bits.append(f"trend over {len(t['arms'])} arms: {t['verdict']} (mean rho {rho})")
    return "; ".join(bits)


def run_claims(papers: Sequence[str] = ("all",), size: str | ClaimSize = "default", out: str | Path = "claims",
               workers: int = 1, progress: Callable[[int, int, float], None] | None = None, device: str = "cpu",
               claims: Sequence[Claim] | None = None) -> dict:
    """Train (or read from the cache ``out/cohorts``) every cohort of the claims of ``papers`` and return, JSON-safe:
    ``claims`` (one row per claim: arms with per-seed values, mean ± std and curves; pairs and trends with their
    test, p-values, smallest detectable effect and verdict; the claim's verdict and reason), the rule, the size and
    the wall time. ``claims`` replaces the table (a planted claim in tests). ``progress(done, total, eta_seconds)``
    after each cohort."""
    size = check_run_options(size, SIZES, workers, device)
    chosen = list(claims) if claims is not None else select(papers)
    root = Path(out) / "cohorts"
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    jobs = _cohorts(chosen, size, device)
    keys = sorted(jobs, key=lambda k: -jobs[k][0]["n"])  # the largest first: the pool ends evenly
    cached = sum((root / k / "records.json").exists() for k in keys)
    results = dict(zip(keys, pool_map(_train, [(jobs[k][0], jobs[k][1], str(root / k), jobs[k][2]) for k in keys],
                                      workers, progress)))
    rows = [evaluate(claim, size, results, device) for claim in chosen]
    name = next((k for k, v in SIZES.items() if v == size), "custom")
    return json_safe({"size": name, "m": size.m, "m_large": size.m_large, "rounds": size.rounds,
                      "seeds": size.seeds, "device": device, "workers": workers, "rule": RULE,
                      "problem": "digits, Dirichlet(0.3), MLP 32-32, K = 5 local epochs of batch 32",
                      "claims": rows, "cohorts": len(keys), "cohorts_trained": len(keys) - cached,
                      "runs": len(keys) * size.seeds, "wall_seconds": time.perf_counter() - start,
                      "cpu_seconds": _cpu_seconds() - cpu_start,
                      "cohort_seconds": float(sum(r.get("wall_seconds") or 0.0 for r in results.values())),
                      "machine_note": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"})


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
