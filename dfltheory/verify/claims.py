"""The papers' experimental claims (cards §9 and §10), re-run at this machine's scale on digits (issue 16).

Every claim is a comparison of *arms* (an algorithm at a setting) on one metric at the last round, with the same
rounds T and local steps K for every arm of a claim, except the budget a claim is about (``Claim.varies``: K in the
local-step ablations, the clients m in DFedPGP's client-count claim). D-PSGD and SGP take one local step by
definition (their rule forces K = 1, as in the papers, which give them one epoch against five), which the claims that
include them say. Claims about topologies also test a *trend*: the rank correlation of a metric with the spectral gap
across the arms (below).

**Problem.** scikit-learn's digits (1797 images 8x8, 10 classes; the MLP of :mod:`dfltheory.empirical.models`),
Dirichlet(0.3) label split over m clients (the papers' most heterogeneous Dirichlet setting), the test set split like
each client's training data for the personal accuracy of DFedPGP (dfedpgp.md §8). ``data_seed`` = 0 fixes the data,
the split and the initial model; the S seeds of an arm differ in the minibatch sampling and the random topology.

**Hyper-parameters: one rule, the paper's values** (each card's §8): lr 0.1 with its per-round decay, and the paper's
rho, momentum, lambda, beta, Q and K_v (:data:`PAPER_BASE`); K = 5 local steps and batch 32 for every paper (the
papers' 5 epochs of batch 128 on 500 samples are about 20 steps; digits has about 144 training samples per client at
m = 10). The random topology keeps the papers' fraction of neighbours (10 of 100): k = max(2, round(m/10)), 2 at
m = 10 and 10 at m = 100 (:func:`scaled`, which also sizes the Erdos-Renyi and Watts-Strogatz graphs). An arm's
``scale`` multiplies the clients m or the neighbours k (DFedPGP's Fig. 3 ablations), so a claim keeps its meaning at
every size. An arm's ``finetune`` post-processes its runs (:mod:`dfltheory.empirical.finetune`): the personal test
accuracy after that many local SGD steps from each client's final model (DFedAvg + fine-tuning, against DFedPGP).

**Decision rule.** For a pair (a, b) with means mu_a, mu_b and standard deviations s_a, s_b over n seeds each (the
metric signed so that larger is better), d = mu_a - mu_b is *significant* when |d| > 2 sqrt((s_a^2 + s_b^2)/n), twice
the standard error of the difference (about a 95 % test for normal seeds). A claim "a better than b" *agrees* when d
is significant and positive, *disagrees* when it is significant and negative, and is *no difference* otherwise; a
claim "a about equal to b" agrees when d is not significant and disagrees when it is. A claim of several pairs agrees
when all agree, disagrees when one disagrees, is *diverged* when an arm diverged (and no pair disagrees), is *no
difference* when none is significant, and *in part* otherwise.

**Trends** (:class:`Trend`, the claims about topologies): Spearman's rank correlation rho between the spectral gap
1 - lambda of the arms' mixing matrices (:mod:`dfltheory.topology`; the mean over rounds for a time-varying graph)
and the arms' mean metric (signed, larger is better), *significant* when the exact permutation p-value of |rho| is
below 0.05 (all k! orderings; at k = 6 arms that is |rho| >= 0.886). "The metric follows the gap" agrees when rho is
significant and positive; "does not follow it" agrees when rho is not significant (an absence claim: with six
topologies only a near-perfect ranking is significant) and disagrees when it is. The rounds to reach 90 % test
accuracy (:data:`TARGET`) count T + eval_every for a run that does not reach it (censored: it ranks last).

:func:`run_claims` trains the runs through :class:`dfltheory.verify.holds.RunCache` (a second call trains nothing)
and returns a JSON-safe dict; :mod:`dfltheory.figures.claims` draws it and holds the ``claims`` command.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dfltheory.verify.holds import RunCache, check_run_options, json_safe, train_command

TARGET = 0.9  # the test accuracy of the rounds-to-target metric (digits reaches it within about 10-20 rounds)
TREND_ALPHA = 0.05  # a trend is significant when its exact permutation p-value is below this

PAPERS = ("dfedsgpsm", "dfedsam", "dfedcata", "dfedpgp", "dfedadmm")
SIGNIFICANCE = 2.0  # |d| > SIGNIFICANCE * sqrt((s_a^2 + s_b^2) / n)
RULE = ("significant when |mean_a - mean_b| > 2 sqrt((std_a^2 + std_b^2)/n), n seeds per arm (twice the standard "
        "error of the difference); 'a > b' agrees when significant and positive, disagrees when significant and "
        "negative, no difference otherwise; 'a = b' agrees when not significant; a trend across topologies: "
        "Spearman's rho of the mean metric against the spectral gap, significant when its exact permutation p-value "
        "is below 0.05 ('follows the gap' agrees when significant and positive, 'does not follow it' agrees when "
        "not significant)")
#: metric key -> (+1 larger is better | -1 smaller is better, label)
METRICS = {"test_acc": (1, "test accuracy (last round)"), "train_loss": (-1, "train loss f(x_bar) (last round)"),
           "consensus": (-1, "consensus error (1/m) sum_i ||x_i - x_bar||^2 (last round)"),
           "rounds_to_target": (-1, f"rounds to {100 * TARGET:.0f} % test accuracy")}
#: the recorded key drawn against rounds for a metric that is not itself recorded
CURVE = {"rounds_to_target": "test_acc"}
#: the theorem's measured quantity per paper (docs/verify.md), drawn beside the metric
QUANTITY = {"dfedsgpsm": "grad_norm_sq", "dfedsam": "grad_norm_sq", "dfedcata": "grad_norm_sq_p",
            "dfedpgp": "grad_norm_sq_u", "dfedadmm": "grad_norm_sq_w"}

COMMON = {"dataset": "digits", "partition": "dirichlet", "alpha": 0.3, "K": 5, "batch_size": 32, "lr": 0.1,
          "data_seed": 0, "local_eval": False, "threads": 1}
#: topology parameters are templates filled per size by :func:`scaled` ({k} neighbours, {p} and {ws_k} below)
SYMMETRIC = {"topology": "random", "topology_params": "k={k},direction=undirected", "weights": "metropolis"}
PUSH_OUT = {"topology": "random", "topology_params": "k={k},direction=out"}  # seed 000 L275-279
PUSH_IN = {"topology": "random", "topology_params": "k={k},direction=in"}  # seed 003 L189
#: the paper's values (card §8 of each paper)
PAPER_BASE = {
    "dfedsgpsm": {"lr_decay": 0.998, "rho": 0.1, "momentum": 0.9, **PUSH_OUT},  # dfedsgpsm.md §8
    "dfedsam": {"lr_decay": 0.998, "rho": 0.01, "Q": 4, **SYMMETRIC},  # dfedsam.md §8
    "dfedcata": {"lr_decay": 0.998, "lam_pen": 0.05, "beta": 0.9, **SYMMETRIC},  # dfedcata.md §8 (code defaults)
    "dfedpgp": {"lr_decay": 0.99, "K_v": 1, **PUSH_IN},  # dfedpgp.md §8 (L189)
    "dfedadmm": {"lr_decay": 0.998, "lam": 0.1, "rho": 0.1, **SYMMETRIC},  # dfedadmm.md §8
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
    """A claim of a paper: ``pairs`` (a, '>' or '=', b) over arm labels, on ``metric`` at the last round."""

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

    def arm(self, label: str) -> Arm:
        return next(a for a in self.arms if a.label == label)


def _arm(label: str, algo: str, scale: Mapping | None = None, finetune: int | None = None, **cfg) -> Arm:
    return Arm(label, {"algo": algo, **cfg}, scale=dict(scale or {}), finetune=finetune)


#: Table III's six topologies (seed 002 L136-142; dfedcata.md §7), sized by :func:`scaled`
TABLE3 = (("Ring", "ring", None), ("Grid", "grid", None), ("Exp", "exponential", None), ("Full", "full", None),
          ("ER", "code-er", "p={p}"), ("WS", "watts-strogatz", "k={ws_k},p=0.1"))
#: DFedCata in Table III runs reading B (card §3.1, the theory's variant): the engine's synchronous reading A diverges
#: at beta = 0.9 on the static sparse graphs (card §10.14), and the authors' sequential schedule costs three times as
#: much (one client after the other)
CATA_TOPOLOGY = tuple(_arm(f"DFedCata {name}", "dfedcata", topology=topo, topology_params=params, mode="B")
                      for name, topo, params in TABLE3)
AVG_TOPOLOGY = tuple(_arm(f"DFedAvg {name}", "dfedavg", topology=topo, topology_params=params)
                     for name, topo, params in TABLE3)


CLAIMS: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- DFedSGPSM (seed 000)
    Claim("dfedsgpsm.table1", "dfedsgpsm", "§9 Table 1, §10.20",
          "DFedSGPSM beats SGP, and SGP beats D-PSGD (asymmetric beats symmetric under the same local optimizer)",
          "MNIST Dir 0.3: DFedSGPSM 98.51, SGP 94.55, D-PSGD 94.36",
          (_arm("DFedSGPSM", "dfedsgpsm"), _arm("SGP", "sgp"), _arm("D-PSGD", "dpsgd", **SYMMETRIC)),
          (("DFedSGPSM", ">", "SGP"), ("SGP", ">", "D-PSGD")),
          note="SGP and D-PSGD take one local step (their rule), DFedSGPSM K = 5, as in the paper (1 vs 5 epochs)",
          index=("dfedsgpsm.20",)),
    Claim("dfedsgpsm.table2", "dfedsgpsm", "§9 Table 2, §10.21",
          "module ablation: momentum helps OSGP, SAM helps further, neighbour selection changes little",
          "CIFAR-10 Dir 0.3: OSGP 76.59, +momentum 78.72, +SAM 81.31, +selection 81.35",
          (_arm("OSGP", "dfedsgpsm", rho=0.0, momentum=0.0), _arm("DFedSGPM", "dfedsgpsm", rho=0.0),
           _arm("DFedSGPSM", "dfedsgpsm"),
           _arm("DFedSGPSM-S", "dfedsgpsm-s", topology="neighbour-selection", topology_params="k=2")),
          (("DFedSGPM", ">", "OSGP"), ("DFedSGPSM", ">", "DFedSGPM"), ("DFedSGPSM-S", "=", "DFedSGPSM")),
          note="OSGP = DFedSGPSM with alpha = 0, rho = 0 (card §10.18); DFedSGPM with rho = 0",
          index=("dfedsgpsm.21",)),
    Claim("dfedsgpsm.alpha", "dfedsgpsm", "§9 Fig. 2a, §10.22",
          "momentum alpha = 0.7 gives the best final accuracy among {0.1, ..., 0.9}",
          "best at alpha = 0.7 (no number)",
          (_arm("alpha=0.1", "dfedsgpsm", momentum=0.1), _arm("alpha=0.7", "dfedsgpsm", momentum=0.7),
           _arm("alpha=0.9", "dfedsgpsm", momentum=0.9)),
          (("alpha=0.7", ">", "alpha=0.1"), ("alpha=0.7", ">", "alpha=0.9")), index=("dfedsgpsm.22",)),
    # ---------------------------------------------------------------- DFedSAM (seed 001)
    Claim("dfedsam.table1", "dfedsam", "§9 Table 1, §10.19",
          "DFedSAM beats DFedAvg, which beats D-PSGD; DFedSAM-MGS (Q = 4) beats DFedSAM",
          "CIFAR-10 Dir 0.3: DFedSAM-MGS 84.26, DFedSAM 82.04, DFedAvg 73.55, D-PSGD 68.23",
          (_arm("DFedSAM-MGS", "dfedsam-mgs"), _arm("DFedSAM", "dfedsam"), _arm("DFedAvg", "dfedavg"),
           _arm("D-PSGD", "dpsgd")),
          (("DFedSAM-MGS", ">", "DFedSAM"), ("DFedSAM", ">", "DFedAvg"), ("DFedAvg", ">", "D-PSGD")),
          note="D-PSGD takes one local step (its rule), the others K = 5", index=("dfedsam.19",)),
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
          note="each step of the ordering as a pair (four topologies are too few for a significant rank trend: the "
               "smallest exact p-value of Spearman's rho over 4 points is 1/12)", index=("dfedsam.18",)),
    Claim("dfedsam.consensus", "dfedsam", "§10.17",
          "the consensus error is larger on the ring than on the full graph and falls with Q",
          "no number (the card's prediction from Phi(lambda, m, Q), §5.3)",
          (_arm("DFedSAM ring", "dfedsam", topology="ring", topology_params=None),
           _arm("MGS ring", "dfedsam-mgs", topology="ring", topology_params=None),
           _arm("DFedSAM full", "dfedsam", topology="full", topology_params=None)),
          (("DFedSAM full", ">", "DFedSAM ring"), ("MGS ring", ">", "DFedSAM ring")), metric="consensus",
          note="smaller is better: 'a > b' means a has the smaller consensus error", index=("dfedsam.17",)),
    Claim("dfedsam.K", "dfedsam", "§9 Fig. 5(a), §10.21",
          "more local steps K converge faster in rounds",
          "no number (Fig. 5(a))",
          (_arm("K=10", "dfedsam", K=10), _arm("K=2", "dfedsam", K=2)),
          (("K=10", ">", "K=2"),), index=("dfedsam.21",), varies=("K",)),
    # ---------------------------------------------------------------- DFedCata (seed 002)
    Claim("dfedcata.beta", "dfedcata", "§9 Table IV, §10.20",
          "the Nesterov coefficient beta helps: accuracy rises with beta up to about 0.8, then plateaus",
          "CIFAR-10 Dir 0.3: beta 0 77.17, 0.4 80.24, 0.9 81.54",
          (_arm("beta=0", "dfedcata", beta=0.0), _arm("beta=0.4", "dfedcata", beta=0.4),
           _arm("beta=0.9", "dfedcata", beta=0.9)),
          (("beta=0.4", ">", "beta=0"), ("beta=0.9", ">", "beta=0.4")),
          note="synchronous aggregation, reading A (the engine's default; card §3.1)", index=("dfedcata.20",)),
    Claim("dfedcata.table1", "dfedcata", "§9 Table I",
          "DFedCata beats DFedSAM and DFedAvg",
          "CIFAR-10 Dir 0.3: DFedCata 82.88, DFedSAM 79.37, DFedAvg 77.25",
          (_arm("DFedCata", "dfedcata"), _arm("DFedSAM", "dfedsam", rho=0.01), _arm("DFedAvg", "dfedavg")),
          (("DFedCata", ">", "DFedSAM"), ("DFedCata", ">", "DFedAvg")),
          note="DFedSAM's rho is lost from the paper: DFedSAM's own 0.01 (dfedsam.md §8)"),
    Claim("dfedcata.topology", "dfedcata", "§9 Table III, §10.12",
          "DFedCata beats DFedAvg on every topology, and its accuracy does not follow the spectral gap (WS and ER "
          "above Full, Exp below Grid)",
          "CIFAR-10 (seed L136-141): DFedCata ring 72.22, grid 81.13, exp 79.05, full 81.38, ER 82.04, WS 82.45; "
          "DFedAvg 63.30, 74.72, 77.11, 78.52, 77.70, 75.65",
          CATA_TOPOLOGY + AVG_TOPOLOGY,
          tuple((c.label, ">", a.label) for c, a in zip(CATA_TOPOLOGY, AVG_TOPOLOGY)),
          trends=(Trend("test_acc", "=", tuple(a.label for a in CATA_TOPOLOGY)),),
          note="DFedCata in reading B (card §3.1): the engine's default, the synchronous reading A, diverges at "
               "beta = 0.9 on the static ring, grid, exp and WS graphs here (card §10.14), and the authors' sequential "
               "schedule (--sequential) costs three times as much; grid = 2-D grid without wrap-around, ER redrawn "
               "every round with p = max(0.1, 3/m), WS with k = 4 (8 from m = 50) and p = 0.1 (dfedcata.md §7)",
          index=("dfedcata.12",)),
    Claim("dfedcata.speed", "dfedcata", "§VI-A (Fig. 4), §10.13",
          "DFedCata's convergence speed does not follow the spectral gap (about 80 rounds to 75 % on Full against 40 "
          "on ER), unlike earlier DFL methods, whose speed does (DFedAvg here)",
          "CIFAR-10, rounds to 75 % (seed L162): DFedCata about 80 on Full, about 40 on ER (read off Fig. 4)",
          CATA_TOPOLOGY + AVG_TOPOLOGY, (),
          metric="rounds_to_target",
          trends=(Trend("rounds_to_target", "=", tuple(a.label for a in CATA_TOPOLOGY)),
                  Trend("rounds_to_target", ">", tuple(a.label for a in AVG_TOPOLOGY))),
          note="the runs of dfedcata.topology; speed is the rounds to 90 % test accuracy on digits, measured every "
               "eval_every rounds", index=("dfedcata.13",)),
    # ---------------------------------------------------------------- DFedPGP (seed 003)
    Claim("dfedpgp.directed", "dfedpgp", "§9 Table 4, §10.17(c)",
          "directed (push-sum, in-neighbours) communication beats the symmetric version of the same personalized "
          "algorithm",
          "CIFAR-10 Dir 0.3: DFedPGP 85.61, DFedAvgM-P 84.69",
          (_arm("DFedPGP directed", "dfedpgp"), _arm("DFedPGP symmetric", "dfedpgp", **SYMMETRIC)),
          (("DFedPGP directed", ">", "DFedPGP symmetric"),),
          note="the symmetric arm mixes with the doubly stochastic Metropolis weights of the undirected k = 2 draw",
          index=("dfedpgp.17",)),
    Claim("dfedpgp.personal", "dfedpgp", "§9 Table 4, §10.17(b)",
          "partial personalization (a personal classifier head) beats sharing the whole model",
          "CIFAR-10 Dir 0.3: DFedPGP 85.61, OSGP 83.14",
          (_arm("DFedPGP", "dfedpgp"), _arm("shared all (OSGP)", "dfedpgp", personal="none")),
          (("DFedPGP", ">", "shared all (OSGP)"),),
          note="the second arm is DFedPGP with every layer shared: push-sum with K local steps (OSGP); personal test "
               "accuracy on each client's test split", index=("dfedpgp.17",)),
    Claim("dfedpgp.finetune", "dfedpgp", "§9 Table 1, §10.17(a)",
          "DFedPGP beats a global decentralized method made personal by local fine-tuning (DFedAvg + fine-tuning)",
          "CIFAR-10 Dir 0.3 (Table 1, seed L161-175): DFedPGP 85.61, DFedAvgM 82.49, FedBABU (fine-tunes 5 times, "
          "L385) 83.26",
          (_arm("DFedPGP", "dfedpgp"),
           _arm("DFedAvg + fine-tuning", "dfedavg", finetune=COMMON["K"], K_v=None, **SYMMETRIC),
           _arm("DFedAvg, no fine-tuning", "dfedavg", finetune=0, K_v=None, **SYMMETRIC)),
          (("DFedPGP", ">", "DFedAvg + fine-tuning"),),
          note="personal test accuracy on each client's own test split for all three; DFedAvg (symmetric gossip) is "
               "trained with DFedPGP's schedule, then each client takes K plain SGD steps on its own data from its "
               "final model (dfltheory.empirical.finetune); the third arm, not decided, is DFedAvg's final models "
               "without fine-tuning", index=("dfedpgp.17",)),
    Claim("dfedpgp.K_u", "dfedpgp", "§6 Remark 1, §9 Table 8, §10.6",
          "more local steps K_u on the shared part speed convergence (Remark 1); K_u = 5 is the best of the grid "
          "[1, 3, 5, 8] (Table 8)",
          "no accuracy given (Remark 1, seed L157; Table 8 'Local Interval' [1, 3, 5, 8], best 5, L469)",
          tuple(_arm(f"K_u={k}", "dfedpgp", K=k) for k in (1, 3, 5, 8)),
          (("K_u=5", ">", "K_u=1"), ("K_u=5", ">", "K_u=3"), ("K_u=5", ">", "K_u=8")),
          note="K is DFedPGP's K_u (K_v = 1 personal step first); the paper's Local Interval counts epochs",
          index=("dfedpgp.6",), varies=("K",)),
    Claim("dfedpgp.clients", "dfedpgp", "§9 Fig. 3b, §10.8, §10.17(f)",
          "fewer clients give higher accuracy (more data per client), although the bound's q predicts the opposite",
          "no number (Fig. 3b, seed L242): 5 and 10 clients above 50, 100 and 200",
          (_arm("m/2 clients", "dfedpgp", scale={"n": 0.5}), _arm("m clients", "dfedpgp"),
           _arm("2m clients", "dfedpgp", scale={"n": 2.0})),
          (("m/2 clients", ">", "m clients"), ("m clients", ">", "2m clients")),
          note="m/2, m, 2m = 5, 10, 20 at the default size (the paper: 5 to 200 of 50,000 images; here digits' "
               "1,437 training images are split among them); the same k neighbours", index=("dfedpgp.8", "dfedpgp.17"),
          varies=("n",)),
    Claim("dfedpgp.neighbours", "dfedpgp", "§9 Fig. 3a, §10.7, §10.17(e)",
          "more neighbours give higher accuracy: the largest neighbour count is best",
          "no number (Fig. 3a, seed L240): 2, 5, 10, 20, 40 in-neighbours of 100, best at 40",
          (_arm("k/2", "dfedpgp", scale={"k": 0.5}), _arm("k", "dfedpgp"), _arm("2k", "dfedpgp", scale={"k": 2.0}),
           _arm("4k", "dfedpgp", scale={"k": 4.0})),
          (("4k", ">", "k/2"), ("4k", ">", "k"), ("4k", ">", "2k")),
          note="k = max(2, round(m/10)) in-neighbours: 1, 2, 4, 8 of 10 clients at the default size (5 to 40 of 100 "
               "at the gpu size)", index=("dfedpgp.7", "dfedpgp.17")),
    # ---------------------------------------------------------------- DFedADMM (seed 004)
    Claim("dfedadmm.sam", "dfedadmm", "§9 Table 1, §10.18",
          "DFedADMM-SAM beats DFedADMM, and DFedADMM beats DFedAvg",
          "MNIST Dir 0.3: DFedADMM-SAM 98.44, DFedADMM 98.07, DFedAvg 97.78",
          (_arm("DFedADMM-SAM", "dfedadmm-sam"), _arm("DFedADMM", "dfedadmm"), _arm("DFedAvg", "dfedavg")),
          (("DFedADMM-SAM", ">", "DFedADMM"), ("DFedADMM", ">", "DFedAvg")),
          note="the paper's eta = lambda = 0.1 (decay 0.998): 1 - eta/lambda is near 0, the K local steps act as "
               "about one (card §10.12)", index=("dfedadmm.18",)),
    Claim("dfedadmm.sam.lam1", "dfedadmm", "§9 Table 1, §10.18",
          "as dfedadmm.sam, with lambda = 1 = 10 eta so that the K local steps do not collapse (not the paper's "
          "lambda)",
          "MNIST Dir 0.3: DFedADMM-SAM 98.44, DFedADMM 98.07, DFedAvg 97.78",
          (_arm("DFedADMM-SAM", "dfedadmm-sam", lam=1.0), _arm("DFedADMM", "dfedadmm", lam=1.0),
           _arm("DFedAvg", "dfedavg")),
          (("DFedADMM-SAM", ">", "DFedADMM"), ("DFedADMM", ">", "DFedAvg")),
          note="a departure from the one rule, to separate the collapse at eta = lambda from the algorithm",
          index=("dfedadmm.18",)),
    Claim("dfedadmm.topology", "dfedadmm", "§9 Table 2, §10.17",
          "accuracy of DFedADMM and DFedADMM-SAM rises from ring to full (falls with psi)",
          "MNIST Dir 0.3: DFedADMM ring 96.41, full 98.26; DFedADMM-SAM ring 97.08, full 98.50",
          (_arm("DFedADMM ring", "dfedadmm", topology="ring", topology_params=None),
           _arm("DFedADMM full", "dfedadmm", topology="full", topology_params=None),
           _arm("DFedADMM-SAM ring", "dfedadmm-sam", topology="ring", topology_params=None),
           _arm("DFedADMM-SAM full", "dfedadmm-sam", topology="full", topology_params=None)),
          (("DFedADMM full", ">", "DFedADMM ring"), ("DFedADMM-SAM full", ">", "DFedADMM-SAM ring")),
          note="at the paper's eta = lambda = 0.1, where the K local steps act as about one (see dfedadmm.sam)",
          index=("dfedadmm.17",)),
    Claim("dfedadmm.lambda", "dfedadmm", "§9 Fig. 3b, §10.20",
          "the penalty lambda = 0.2 is the best of {0.05, 0.1, 0.2, 0.5}",
          "no number (Fig. 3b, seed L243): lambda = 0.2 best",
          tuple(_arm(f"lambda={lam:g}", "dfedadmm-sam", lam=lam) for lam in (0.05, 0.1, 0.2, 0.5)),
          (("lambda=0.2", ">", "lambda=0.05"), ("lambda=0.2", ">", "lambda=0.1"), ("lambda=0.2", ">", "lambda=0.5")),
          note="DFedADMM-SAM (rho = 0.1, as Fig. 3's rho panel implies); eta = 0.1: lambda = 0.05 makes the local "
               "factor 1 - eta/lambda = -1 (gamma = 2, card §10.7), lambda = 0.1 collapses the K steps to one "
               "(§10.12)", index=("dfedadmm.20",)),
    Claim("dfedadmm.K", "dfedadmm", "§9 Fig. 3a, §10.20",
          "more local steps converge faster: K = 10 beats K = 1, 2 and 5",
          "no number (Fig. 3a, seed L237): K = 10 fastest of {1, 2, 5, 10}",
          tuple(_arm(f"K={k}", "dfedadmm-sam", K=k) for k in (1, 2, 5, 10)),
          (("K=10", ">", "K=1"), ("K=10", ">", "K=2"), ("K=10", ">", "K=5")),
          note="DFedADMM-SAM at the paper's eta = lambda = 0.1, where every local step restarts from x^t (card "
               "§10.12): the steps beyond the first change little", index=("dfedadmm.20",), varies=("K",)),
    Claim("dfedadmm.rho", "dfedadmm", "§9 Fig. 3d, §10.20",
          "the SAM radius rho = 0.1 is the best of {0.01, ..., 0.3}; convergence slows as rho grows",
          "no number (Fig. 3d, seed L241): rho = 0.1 best of {0.01, 0.05, 0.1, 0.2, 0.25, 0.3}",
          tuple(_arm(f"rho={r:g}", "dfedadmm-sam", rho=r) for r in (0.01, 0.1, 0.3)),
          (("rho=0.1", ">", "rho=0.01"), ("rho=0.1", ">", "rho=0.3")),
          note="DFedADMM-SAM at the paper's eta = lambda = 0.1 (card §10.12); three of the six radii",
          index=("dfedadmm.20",)),
    Claim("dfedadmm.clients", "dfedadmm", "§9 Fig. 3c, §10.20",
          "the number of clients makes no significant difference",
          "no number (Fig. 3c, seed L207): m = 50, 100, 150 'no significant difference'",
          (_arm("m/2 clients", "dfedadmm-sam", scale={"n": 0.5}), _arm("m clients", "dfedadmm-sam"),
           _arm("1.5m clients", "dfedadmm-sam", scale={"n": 1.5})),
          (("m/2 clients", "=", "m clients"), ("1.5m clients", "=", "m clients")),
          note="m/2, m, 1.5m = 5, 10, 15 at the default size, as the paper's 50, 100, 150; digits' training images "
               "are split among them", index=("dfedadmm.20",), varies=("n",)),
)


# ------------------------------------------------------------------------------------------------ sizes
@dataclass(frozen=True)
class ClaimSize:
    """Clients m, rounds T, seeds per arm and the rounds between two measurements."""

    m: int
    rounds: int
    seeds: int
    eval_every: int


#: quick: tests (seconds); default: 2 CPU cores (minutes); gpu: towards the papers' m = 100 clients, 10 neighbours and
#: hundreds of rounds (``--device cuda``; still digits, about 14 training images per client; not run on a GPU yet)
SIZES = {"quick": ClaimSize(m=4, rounds=1, seeds=3, eval_every=1),
         "default": ClaimSize(m=10, rounds=40, seeds=5, eval_every=2),
         "gpu": ClaimSize(m=100, rounds=300, seeds=3, eval_every=10)}


def neighbours(m: int) -> int:
    """The papers' 10 neighbours of 100 clients at m clients: max(2, round(m/10))."""
    return max(2, round(m / 10))


def scaled(m: int, n: int | None = None, k_scale: float = 1.0) -> dict:
    """The values the topology templates take for a run of ``n`` clients in a claim of size ``m`` (n = m unless the
    arm scales it): {k} = round(k_scale neighbours(m)) in [1, n - 1]; {p}, the Erdos-Renyi edge probability,
    max(0.1, 3/n) (the code's 0.1 at n = 100, about 3 expected neighbours below 30); {ws_k}, the Watts-Strogatz
    lattice degree, 8 from n = 50 (the paper's), 4 from n = 8, else 2 (dfedcata.md §7)."""
    n = m if n is None else n
    return {"k": min(n - 1, max(1, round(k_scale * neighbours(m)))), "p": round(min(1.0, max(0.1, 3 / n)), 3),
            "ws_k": 8 if n >= 50 else 4 if n >= 8 else 2}


def select(papers: Sequence[str] = ("all",)) -> list[Claim]:
    """The claims of ``papers`` ('all' or paper names); an unknown name is a ValueError listing the valid ones."""
    papers = list(papers) or ["all"]
    bad = [p for p in papers if p != "all" and p not in PAPERS]
    if bad:
        raise ValueError(f"unknown paper {bad[0]!r}; choose 'all' or any of {', '.join(PAPERS)}")
    chosen = PAPERS if "all" in papers else papers
    return [c for c in CLAIMS if c.paper in chosen]


def run_configs(claim: Claim, arm: Arm, size: ClaimSize, device: str = "cpu") -> list[dict]:
    """The ``train`` configs (one per seed) of one arm: m (or the arm's multiple of it) clients, its topology
    template filled by :func:`scaled`."""
    n = max(2, round(arm.scale.get("n", 1.0) * size.m))
    base = {**COMMON, **PAPER_BASE[claim.paper], **arm.cfg, "n": n, "rounds": size.rounds,
            "eval_every": size.eval_every, "checkpoint_every": size.rounds}
    if isinstance(base.get("topology_params"), str):
        base["topology_params"] = base["topology_params"].format(**scaled(size.m, n, arm.scale.get("k", 1.0)))
    if device != "cpu":
        base["device"] = device
    base = {k: v for k, v in base.items() if v is not None}
    return [{**base, "seed": arm.seed_offset + s} for s in range(size.seeds)]


# ------------------------------------------------------------------------------------------------ verdicts
def compare(a: Sequence[float], b: Sequence[float], relation: str = ">", sign: int = 1) -> dict:
    """Verdict of 'a > b' (or 'a = b') from per-seed values; ``sign`` -1 where smaller is better."""
    a, b = sign * np.asarray(a, float), sign * np.asarray(b, float)
    n = min(len(a), len(b))
    d = float(a.mean() - b.mean())
    sd = lambda x: float(x.std(ddof=1)) if len(x) > 1 else 0.0  # noqa: E731
    threshold = SIGNIFICANCE * math.sqrt((sd(a) ** 2 + sd(b) ** 2) / n)
    significant = abs(d) > threshold
    if relation == "=":
        verdict = "disagrees" if significant else "agrees"
    elif relation == ">":
        verdict = ("agrees" if d > 0 else "disagrees") if significant else "no difference"
    else:
        raise ValueError(f"relation must be '>' or '=', got {relation!r}")
    return {"difference": sign * d, "threshold": threshold, "significant": significant, "verdict": verdict}


def overall(verdicts: Sequence[str]) -> str:
    """A claim's verdict from its pairs' and trends' (module docstring): one that disagrees decides the claim."""
    if "disagrees" in verdicts:
        return "disagrees"
    if "diverged" in verdicts:
        return "diverged"
    if all(v == "agrees" for v in verdicts):
        return "agrees"
    if all(v == "no difference" for v in verdicts):
        return "no difference"
    return "in part"


def _curves(rows_per_seed: list[list[dict]], key: str) -> dict:
    """Mean and std over seeds of ``key`` at every round all seeds measured (empty where no run records it)."""
    series = [{r["round"]: r.get(key) for r in rows} for rows in rows_per_seed]
    rounds = sorted(set.intersection(*(set(s) for s in series))) if series else []
    vals = np.array([[np.nan if s[t] is None else s[t] for t in rounds] for s in series], float)
    if not rounds or np.isnan(vals).any():  # not recorded (another algorithm's quantity) or diverged
        keep = [i for i in range(len(rounds)) if not np.isnan(vals[:, i]).any()]
        rounds, vals = [rounds[i] for i in keep], vals[:, keep]
    if not rounds:
        return {"round": [], "mean": [], "std": []}
    std = vals.std(0, ddof=1) if len(vals) > 1 else np.zeros(len(rounds))
    return {"round": rounds, "mean": vals.mean(0).tolist(), "std": std.tolist()}


def trend_text(t: Mapping, number: Callable[[float], str] = lambda x: f"{x:.2g}") -> str:
    """A topology trend of a claim's result in words: its arms, the metric against the spectral gap, Spearman's
    rho, its p-value and the verdict (the report and docs/claims.md; ``number`` formats the two numbers)."""
    rho = "undefined" if t.get("rho") is None else number(t["rho"])
    p = "" if t.get("p_value") is None else f", p {number(t['p_value'])}"
    arms = f"{t['arms'][0]} … {t['arms'][-1]}: " if t.get("arms") else ""
    return (f"{arms}{t.get('metric_label', t['metric'])} against the spectral gap: Spearman rho {rho}{p} "
            f"({t['verdict']})")


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None where x or y is constant (undefined)."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def spearman_test(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    """(rho, exact two-sided permutation p-value: the fraction of the k! orderings of y whose |rho| is at least the
    observed one); (None, None) where rho is undefined. Up to 8 points (40,320 orderings)."""
    import itertools

    rho = spearman(x, y)
    if rho is None:
        return None, None
    if len(y) > 8:
        raise ValueError(f"the exact permutation test enumerates k! orderings; give at most 8 points, got {len(y)}")
    y = np.asarray(y, float)
    hits = [abs(spearman(x, y[list(p)]) or 0.0) >= abs(rho) - 1e-12 for p in itertools.permutations(range(len(y)))]
    return rho, float(np.mean(hits))


def trend_verdict(rho: float | None, p: float | None, relation: str) -> str:
    """'>' (follows the gap): agrees when significant and positive; '=' (does not): agrees when not significant."""
    significant = p is not None and p < TREND_ALPHA
    if relation == "=":
        return "disagrees" if significant else "agrees"
    if relation == ">":
        return ("agrees" if rho > 0 else "disagrees") if significant else "no difference"
    raise ValueError(f"relation must be '>' or '=', got {relation!r}")


def spectral_gap(cfg: Mapping) -> float:
    """1 - lambda of a run's mixing matrices (dfltheory.topology: lambda = ||W - 11^T/m||_2, its mean over rounds
    for a time-varying graph, drawn with the run's data seed as the run draws it)."""
    from dfltheory.topology import analyze
    from dfltheory.topology.commands import parse_params

    a = analyze(cfg["topology"], cfg["n"], weights=cfg.get("weights") or "metropolis", seed=cfg["data_seed"],
                **parse_params(cfg.get("topology_params")))
    return 1.0 - float(a["lambda_mean"] if a["time_varying"] else a["lambda"])


def _value(rows: list[dict], metric: str, size: ClaimSize) -> float | None:
    """A run's value of ``metric``: at its last record, or the first round that reaches :data:`TARGET`
    (T + eval_every where none does)."""
    if metric == "rounds_to_target":
        return next((r["round"] for r in rows if (r.get("test_acc") or 0.0) >= TARGET), size.rounds + size.eval_every)
    return rows[-1].get(metric) if rows else None


def _arm_values(claim: Claim, arm: Arm, size: ClaimSize, cache: RunCache, device: str, metric: str) -> dict:
    """One arm's runs read back: per-seed values of ``metric`` (None where a run diverged), the curves, the command."""
    cfgs = run_configs(claim, arm, size, device)
    got = [cache.get(c) for c in cfgs]
    ok = all(s == "completed" for _, s in got)
    if arm.finetune is not None and ok:
        from dfltheory.empirical.finetune import finetuned

        finals = [finetuned(cache.path(c), arm.finetune)["personal_acc"] for c in cfgs]
    else:
        finals = [_value(rows, metric, size) for rows, _ in got]
    ok = ok and all(v is not None for v in finals)
    vals = np.array(finals if ok else [np.nan], float)
    if arm.finetune is not None:  # one measurement, after the last round
        curve = ({"round": [size.rounds], "mean": [float(vals.mean())], "std": [float(vals.std(ddof=1))
                  if len(vals) > 1 else 0.0]} if ok else {"round": [], "mean": [], "std": []})
    else:
        curve = _curves([r for r, _ in got], CURVE.get(metric, metric))
    return {"label": arm.label, "algo": arm.cfg["algo"], "seeds": [c["seed"] for c in cfgs], "values": finals,
            "mean": float(vals.mean()) if ok else None,
            "std": float(vals.std(ddof=1)) if ok and len(vals) > 1 else (0.0 if ok else None),
            "status": "completed" if ok else "diverged", "finetune": arm.finetune,
            "command": f"{train_command(cfgs[0])} --out run  (the other seeds: --seed "
                       f"{cfgs[1]['seed']}..{cfgs[-1]['seed']})" if len(cfgs) > 1 else train_command(cfgs[0]),
            "curve": curve, "quantity": _curves([r for r, _ in got], QUANTITY[claim.paper]),
            "spectral_gap": spectral_gap(cfgs[0]) if claim.trends else None}


def _trend(claim: Claim, trend: Trend, rows: dict[str, dict], size: ClaimSize, cache: RunCache, device: str) -> dict:
    """Spearman's rho of the arms' mean ``trend.metric`` (signed: larger is better) against their spectral gaps,
    its exact p-value and the verdict; also the mean ± std over seeds of the per-seed rho."""
    sign, label = METRICS[trend.metric]
    arms = [rows[a] if trend.metric == claim.metric else
            _arm_values(claim, claim.arm(a), size, cache, device, trend.metric) for a in trend.arms]
    out = {"metric": trend.metric, "metric_label": label, "relation": trend.relation, "arms": list(trend.arms),
           "gap": [a["spectral_gap"] for a in arms],
           "mean": [a["mean"] for a in arms]}
    if any(m is None for m in out["mean"]):
        return {**out, "rho": None, "p_value": None, "rho_seeds": None, "verdict": "diverged"}
    rho, p = spearman_test(out["gap"], [sign * m for m in out["mean"]])
    per_seed = [spearman(out["gap"], [sign * a["values"][s] for a in arms]) for s in range(len(arms[0]["values"]))]
    per_seed = [r for r in per_seed if r is not None]
    return {**out, "rho": rho, "p_value": p,
            "rho_seeds": [float(np.mean(per_seed)), float(np.std(per_seed, ddof=1)) if len(per_seed) > 1 else 0.0]
            if per_seed else None, "verdict": trend_verdict(rho, p, trend.relation)}


def evaluate(claim: Claim, size: ClaimSize, cache: RunCache, device: str = "cpu") -> dict:
    """The row of one claim from cached runs: each arm's mean ± std, each pair's and trend's verdict, the claim's."""
    sign, label = METRICS[claim.metric]
    arms = [_arm_values(claim, arm, size, cache, device, claim.metric) for arm in claim.arms]
    by = {a["label"]: a for a in arms}
    pairs = []
    for a, rel, b in claim.pairs:
        if by[a]["mean"] is None or by[b]["mean"] is None:
            pairs.append({"a": a, "relation": rel, "b": b, "difference": None, "threshold": None,
                          "significant": None, "verdict": "diverged"})
        else:
            pairs.append({"a": a, "relation": rel, "b": b, **compare(by[a]["values"], by[b]["values"], rel, sign)})
    trends = [_trend(claim, t, by, size, cache, device) for t in claim.trends]
    return {"id": claim.id, "paper": claim.paper, "section": claim.section, "statement": claim.statement,
            "paper_number": claim.paper_number, "metric": claim.metric, "metric_label": label,
            "curve_metric": CURVE.get(claim.metric, claim.metric), "quantity": QUANTITY[claim.paper],
            "note": claim.note, "index": list(claim.index), "arms": arms, "pairs": pairs, "trends": trends,
            "verdict": overall([p["verdict"] for p in pairs] + [t["verdict"] for t in trends])}


def run_claims(papers: Sequence[str] = ("all",), size: str | ClaimSize = "default", out: str | Path = "claims",
               workers: int = 1, progress: Callable[[int, int, float], None] | None = None, device: str = "cpu",
               claims: Sequence[Claim] | None = None) -> dict:
    """Train (or read from the cache ``out/runs``) every run of the claims of ``papers`` and return, JSON-safe:
    ``claims`` (one row per claim: arms with mean ± std, per-seed values, curves and the command of seed 0; pairs
    with the difference, the threshold and the verdict; the claim's verdict), the rule, the size and the wall time.
    ``claims`` replaces the table (a planted claim in tests). ``progress(done, total, eta_seconds)`` after each run."""
    size = check_run_options(size, SIZES, workers, device)
    chosen = list(claims) if claims is not None else select(papers)
    cache = RunCache(Path(out) / "runs")
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    cfgs = [c for claim in chosen for arm in claim.arms for c in run_configs(claim, arm, size, device)]
    unique = list({cache.path(c): c for c in cfgs}.values())
    cache.fill(unique, workers, progress)
    rows = [evaluate(claim, size, cache, device) for claim in chosen]
    name = next((k for k, v in SIZES.items() if v == size), "custom")
    return json_safe({"size": name, "m": size.m, "rounds": size.rounds, "seeds": size.seeds, "device": device,
                      "workers": workers, "rule": RULE, "problem": "digits, Dirichlet(0.3), MLP, K = 5, batch 32",
                      "claims": rows, "runs": len(unique), "runs_trained": cache.trained,
                      "wall_seconds": time.perf_counter() - start, "cpu_seconds": _cpu_seconds() - cpu_start,
                      "machine_note": f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"})


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the worker processes that trained runs)."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                   resource.getrusage(resource.RUSAGE_CHILDREN)))


def compact(result: dict) -> dict:
    """``result`` without the per-round curves (what docs/claims-default.json keeps)."""
    drop = ("curve", "quantity")
    return {**result, "claims": [{**c, "arms": [{k: v for k, v in a.items() if k not in drop} for a in c["arms"]]}
                                 for c in result["claims"]]}
