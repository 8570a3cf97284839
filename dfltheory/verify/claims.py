"""The papers' experimental claims (cards §9 and §10), re-run at this machine's scale on digits (issue 16).

Every claim is a comparison of *arms* (an algorithm at a setting) on one metric at the last round, with the same
rounds T and local steps K for every arm of a claim. D-PSGD and SGP take one local step by definition (their rule
forces K = 1, as in the papers, which give them one epoch against five), which the claims that include them say.

**Problem.** scikit-learn's digits (1797 images 8x8, 10 classes; the MLP of :mod:`dfltheory.empirical.models`),
Dirichlet(0.3) label split over m clients (the papers' most heterogeneous Dirichlet setting), the test set split like
each client's training data for the personal accuracy of DFedPGP (dfedpgp.md §8). ``data_seed`` = 0 fixes the data,
the split and the initial model; the S seeds of an arm differ in the minibatch sampling and the random topology.

**Hyper-parameters: one rule, the paper's values** (each card's §8): lr 0.1 with its per-round decay, and the paper's
rho, momentum, lambda, beta, Q and K_v (:data:`PAPER_BASE`); K = 5 local steps and batch 32 for every paper (the
papers' 5 epochs of batch 128 on 500 samples are about 20 steps; digits has about 144 training samples per client at
m = 10). The random topology keeps the papers' fraction of neighbours (10 of 100) at about 2 of 10, k = 2.

**Decision rule.** For a pair (a, b) with means mu_a, mu_b and standard deviations s_a, s_b over n seeds each (the
metric signed so that larger is better), d = mu_a - mu_b is *significant* when |d| > 2 sqrt((s_a^2 + s_b^2)/n), twice
the standard error of the difference (about a 95 % test for normal seeds). A claim "a better than b" *agrees* when d
is significant and positive, *disagrees* when it is significant and negative, and is *no difference* otherwise; a
claim "a about equal to b" agrees when d is not significant and disagrees when it is. A claim of several pairs agrees
when all agree, disagrees when one disagrees, is *no difference* when none is significant, and *in part* otherwise.

:func:`run_claims` trains the runs through :class:`dfltheory.verify.holds.RunCache` (a second call trains nothing)
and returns a JSON-safe dict; :mod:`dfltheory.figures.claims` draws it and holds the ``claims`` command.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dfltheory.verify.holds import RunCache, check_run_options, json_safe, train_command

PAPERS = ("dfedsgpsm", "dfedsam", "dfedcata", "dfedpgp", "dfedadmm")
SIGNIFICANCE = 2.0  # |d| > SIGNIFICANCE * sqrt((s_a^2 + s_b^2) / n)
RULE = ("significant when |mean_a - mean_b| > 2 sqrt((std_a^2 + std_b^2)/n), n seeds per arm (twice the standard "
        "error of the difference); 'a > b' agrees when significant and positive, disagrees when significant and "
        "negative, no difference otherwise; 'a = b' agrees when not significant")
#: metric key -> (+1 larger is better | -1 smaller is better, label)
METRICS = {"test_acc": (1, "test accuracy (last round)"), "train_loss": (-1, "train loss f(x_bar) (last round)"),
           "consensus": (-1, "consensus error (1/m) sum_i ||x_i - x_bar||^2 (last round)")}
#: the theorem's measured quantity per paper (docs/verify.md), drawn beside the metric
QUANTITY = {"dfedsgpsm": "grad_norm_sq", "dfedsam": "grad_norm_sq", "dfedcata": "grad_norm_sq_p",
            "dfedpgp": "grad_norm_sq_u", "dfedadmm": "grad_norm_sq_w"}

COMMON = {"dataset": "digits", "partition": "dirichlet", "alpha": 0.3, "K": 5, "batch_size": 32, "lr": 0.1,
          "data_seed": 0, "local_eval": False, "threads": 1}
SYMMETRIC = {"topology": "random", "topology_params": "k=2,direction=undirected", "weights": "metropolis"}
PUSH_OUT = {"topology": "random", "topology_params": "k=2,direction=out"}  # seed 000 L275-279
PUSH_IN = {"topology": "random", "topology_params": "k=2,direction=in"}  # seed 003 L189
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

    def arm(self, label: str) -> Arm:
        return next(a for a in self.arms if a.label == label)


def _arm(label: str, algo: str, **cfg) -> Arm:
    return Arm(label, {"algo": algo, **cfg})


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
          "accuracy rises from ring to full, and the gain of Q = 4 gossip steps is large on the ring and vanishes on "
          "the full graph",
          "CIFAR-10: DFedSAM ring 73.19, full 88.05; MGS - DFedSAM: ring +7.36, full +0.15",
          (_arm("DFedSAM ring", "dfedsam", topology="ring", topology_params=None),
           _arm("MGS ring", "dfedsam-mgs", topology="ring", topology_params=None),
           _arm("DFedSAM full", "dfedsam", topology="full", topology_params=None),
           _arm("MGS full", "dfedsam-mgs", topology="full", topology_params=None)),
          (("DFedSAM full", ">", "DFedSAM ring"), ("MGS ring", ">", "DFedSAM ring"), ("MGS full", "=", "DFedSAM full")),
          index=("dfedsam.18",)),
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
          (("K=10", ">", "K=2"),), index=("dfedsam.21",)),
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
)


# ------------------------------------------------------------------------------------------------ sizes
@dataclass(frozen=True)
class ClaimSize:
    """Clients m, rounds T, seeds per arm and the rounds between two measurements."""

    m: int
    rounds: int
    seeds: int
    eval_every: int


SIZES = {"quick": ClaimSize(m=4, rounds=1, seeds=3, eval_every=1),
         "default": ClaimSize(m=10, rounds=40, seeds=5, eval_every=2)}


def select(papers: Sequence[str] = ("all",)) -> list[Claim]:
    """The claims of ``papers`` ('all' or paper names); an unknown name is a ValueError listing the valid ones."""
    papers = list(papers) or ["all"]
    bad = [p for p in papers if p != "all" and p not in PAPERS]
    if bad:
        raise ValueError(f"unknown paper {bad[0]!r}; choose 'all' or any of {', '.join(PAPERS)}")
    chosen = PAPERS if "all" in papers else papers
    return [c for c in CLAIMS if c.paper in chosen]


def run_configs(claim: Claim, arm: Arm, size: ClaimSize, device: str = "cpu") -> list[dict]:
    """The ``train`` configs (one per seed) of one arm."""
    base = {**COMMON, **PAPER_BASE[claim.paper], **arm.cfg, "n": size.m, "rounds": size.rounds,
            "eval_every": size.eval_every, "checkpoint_every": size.rounds}
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
    """A claim's verdict from its pairs' (see the module docstring)."""
    if "diverged" in verdicts:
        return "diverged"
    if "disagrees" in verdicts:
        return "disagrees"
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


def evaluate(claim: Claim, size: ClaimSize, cache: RunCache, device: str = "cpu") -> dict:
    """The row of one claim from cached runs: each arm's mean ± std, each pair's verdict, the claim's."""
    sign, label = METRICS[claim.metric]
    arms, values = [], {}
    for arm in claim.arms:
        cfgs = run_configs(claim, arm, size, device)
        got = [cache.get(c) for c in cfgs]
        statuses = [s for _, s in got]
        finals = [rows[-1].get(claim.metric) if rows else None for rows, _ in got]
        ok = all(s == "completed" for s in statuses) and all(v is not None for v in finals)
        values[arm.label] = finals if ok else None
        vals = np.array(finals if ok else [np.nan], float)
        arms.append({"label": arm.label, "algo": arm.cfg["algo"], "seeds": [c["seed"] for c in cfgs],
                     "values": finals, "mean": float(vals.mean()) if ok else None,
                     "std": float(vals.std(ddof=1)) if ok and len(vals) > 1 else (0.0 if ok else None),
                     "status": "completed" if ok else "diverged",
                     "command": f"{train_command(cfgs[0])} --out run  (the other seeds: --seed "
                                f"{cfgs[1]['seed']}..{cfgs[-1]['seed']})" if len(cfgs) > 1 else train_command(cfgs[0]),
                     "curve": _curves([r for r, _ in got], claim.metric),
                     "quantity": _curves([r for r, _ in got], QUANTITY[claim.paper])})
    pairs = []
    for a, rel, b in claim.pairs:
        if values[a] is None or values[b] is None:
            pairs.append({"a": a, "relation": rel, "b": b, "difference": None, "threshold": None,
                          "significant": None, "verdict": "diverged"})
        else:
            pairs.append({"a": a, "relation": rel, "b": b, **compare(values[a], values[b], rel, sign)})
    return {"id": claim.id, "paper": claim.paper, "section": claim.section, "statement": claim.statement,
            "paper_number": claim.paper_number, "metric": claim.metric, "metric_label": label,
            "quantity": QUANTITY[claim.paper], "note": claim.note, "index": list(claim.index), "arms": arms,
            "pairs": pairs, "verdict": overall([p["verdict"] for p in pairs])}


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
    start = time.perf_counter()
    cfgs = [c for claim in chosen for arm in claim.arms for c in run_configs(claim, arm, size, device)]
    unique = list({cache.path(c): c for c in cfgs}.values())
    cache.fill(unique, workers, progress)
    rows = [evaluate(claim, size, cache, device) for claim in chosen]
    name = next((k for k, v in SIZES.items() if v == size), "custom")
    return json_safe({"size": name, "m": size.m, "rounds": size.rounds, "seeds": size.seeds, "device": device,
                      "workers": workers, "rule": RULE, "problem": "digits, Dirichlet(0.3), MLP, K = 5, batch 32",
                      "claims": rows, "runs": len(unique), "runs_trained": cache.trained,
                      "wall_seconds": time.perf_counter() - start})


def compact(result: dict) -> dict:
    """``result`` without the per-round curves (what docs/claims-default.json keeps)."""
    drop = ("curve", "quantity")
    return {**result, "claims": [{**c, "arms": [{k: v for k, v in a.items() if k not in drop} for a in c["arms"]]}
                                 for c in result["claims"]]}
