"""The papers' experimental settings as named option sets: ``dfltheory train --recipe dfedsam-cifar10``.

A recipe fills the ``train`` options of one paper's main experiment (each theorem card's §8, seed lines there):
data set, model, m, partition, topology, rounds, local epochs over each client's shuffled data (``epochs``, see
:class:`dfltheory.empirical.engine.EpochSampler`), batch size, learning rate and its decay, weight decay, and the
algorithm's own hyper-parameters. :func:`resolve` merges a config: the options given (not None) win over the recipe,
the recipe over :data:`DEFAULTS`. Where a card leaves a value open the recipe takes the one named in ``notes``; the
DFedCata values the paper lost come from the authors' public code (``[CODE]`` in dfedcata.md §8).
"""

from __future__ import annotations

from dataclasses import dataclass

# the `train` command's defaults for the options a recipe may set (None elsewhere means "the algorithm's default")
DEFAULTS = {"dataset": "digits", "n": 10, "partition": "dirichlet", "alpha": 0.3, "classes_per_client": 2,
            "topology": "ring", "weights": "default", "rounds": 100, "lr": 0.1, "lr_decay": 1.0,
            "batch_size": 32, "weight_decay": 0.0, "epochs": False}
#: defaults that an algorithm may fix (D-PSGD and SGP take K = 1): left unset by :func:`resolve`, so that only a
#: K the user gives can disagree with the algorithm's; the runner fills them (``runner.run``)
ALGO_DEFAULTS = {"K": 5}


@dataclass(frozen=True)
class Recipe:
    card: str  # ../shared/spec/<card>.md
    options: dict  # train options (config keys)
    sources: str  # where the values come from
    notes: str = ""  # choices made where the card is open, and what differs from the paper


# every paper: m = 100 clients, Dirichlet alpha = 0.3 (one of the cards' two or three values), every client trains
# every round, K local epochs over shuffled data in batches of 128, lr 0.1 decayed by lr_decay after every round
_DFL = {"n": 100, "partition": "dirichlet", "alpha": 0.3, "epochs": True, "batch_size": 128, "lr": 0.1,
        "lr_decay": 0.998, "K": 5}
# "at most 10 random neighbours" per round, symmetric (dfedsam.md §7, dfedadmm.md §7): the code lineage's random
# graph (each client picks 9 others, symmetrized; mean degree 9.1), redrawn every round, Metropolis weights
_SYMMETRIC_RANDOM = {"topology": "code-random", "weights": "metropolis"}
_PUSH_RANDOM = {"topology": "random", "topology_params": "k=10,direction=out", "weights": "push-sum"}


def _dfedsam(dataset, model):
    return Recipe("dfedsam", {**_DFL, **_SYMMETRIC_RANDOM, "algo": "dfedsam", "dataset": dataset, "model": model,
                              "rounds": 1000, "rho": 0.01, "weight_decay": 5e-4},
                  "dfedsam.md §8: VGG-11 (CIFAR-10) / ResNet-18 with GroupNorm (CIFAR-100) seed L154, L291; m = 100, "
                  "5 local epochs, batch 128, lr 0.1 x 0.998 per round, rho 0.01, weight decay 5e-4, 1000 rounds "
                  "seed L154, L303; <= 10 random neighbours seed L303, L307 (§7); Dir(0.3) seed L150",
                  "weight decay 5e-4 'for all baselines except FedSAM' (whether DFedSAM has it is not said: taken); "
                  "neighbour weights not stated (Metropolis taken)")


def _dfedadmm(dataset, model, rounds):
    return Recipe("dfedadmm", {**_DFL, **_SYMMETRIC_RANDOM, "algo": "dfedadmm", "dataset": dataset, "model": model,
                               "rounds": rounds, "lam_pen": 0.1, "weight_decay": 0.0},
                  "dfedadmm.md §8: MLP 200-200 (MNIST), CNN (CIFAR-10), ResNet-18 GroupNorm (CIFAR-100) seed L183, "
                  "L335; m = 100, K = 5, batch 128, lr 0.1 x 0.998, no weight decay for DFedADMM, lambda 0.1 seed "
                  "L343; 300 rounds MNIST, 500 CIFAR seed L183, L343; <= 10 random neighbours seed L343, L347 (§7); "
                  "Dir(0.3) seed L179",
                  "lr = lambda = 0.1 is the paper's and makes the K local steps collapse (the run warns); K read as "
                  "epochs (card §11: epochs vs steps unclear)")


def _dfedsgpsm(dataset, model, rounds, alpha):
    return Recipe("dfedsgpsm", {**_DFL, **_PUSH_RANDOM, "algo": "dfedsgpsm", "dataset": dataset, "model": model,
                                "rounds": rounds, "rho": 0.1, "momentum": alpha, "weight_decay": 0.0},
                  "dfedsgpsm.md §8: mnist_2NN (MNIST), CNN (CIFAR-10), ResNet-18 GroupNorm (CIFAR-100) seed L271; "
                  "m = 100, 5 local epochs, batch 128, lr 0.1 x 0.998, momentum 0.9 (0.1 on CIFAR-100) seed L162, "
                  "L275; rho 0.1 (asymmetric) seed L162; 500 rounds CIFAR, 300 MNIST seed L275, L281; 10 random "
                  "out-neighbours, column-stochastic 1/|N_i^out| seed L82, L275-279 (§7); Dir(0.3) seed L158",
                  "weight decay not stated (none taken)")


def _dfedcata(dataset, model, rounds):
    return Recipe("dfedcata", {**_DFL, "algo": "dfedcata", "dataset": dataset, "model": model, "rounds": rounds,
                               "topology": "code-random", "weights": "uniform", "lam_pen": 0.05, "beta": 0.9,
                               "mode": "A", "weight_decay": 5e-4, "clip": 10.0},
                  "dfedcata.md §8: m = 100, lr 0.1 x 0.998 seed L235; 500 rounds CIFAR-10, 200 CIFAR-100 seed L144, "
                  "L235; random topology with about 10 neighbours per round seed L142, L237 (§7: the code's "
                  "generate_random_topo, uniform weights); [CODE] LeNet (CIFAR-10), ResNet-18 with GroupNorm(2) "
                  "(CIFAR-100), batch 128, weight decay 5e-4, lambda 0.05, 5 local epochs, beta 0.9, clipping at 10 "
                  "(§3.2 item 4), mode A (§3.2 item 7)",
                  "the paper's lambda, K and beta are lost: the code's defaults; synchronous schedule (the code's "
                  "in-place one: --sequential); the code's CIFAR-100 ResNet-18 starts from ImageNet weights, this "
                  "one from scratch unless --init-weights FILE gives torchvision's resnet18 ImageNet weights (the "
                  "code's start; not downloaded here)")


def _dfedpgp(dataset):
    return Recipe("dfedpgp", {**_DFL, "algo": "dfedpgp", "dataset": dataset, "model": "resnet18-imagenet",
                              "rounds": 500, "K": 5, "K_v": 1, "lr_decay": 0.99, "weight_decay": 5e-4, "momentum": 0.9,
                              "topology": "random", "topology_params": "k=10,direction=in", "weights": "push-sum"},
                  "dfedpgp.md §8: ResNet-18 with GroupNorm seed L187; v = the classifier head seed L187, L90; "
                  "m = 100, 10 in-neighbours per round, 500 rounds, 5 epochs on u and 1 on v, batch 128, lr 0.1, "
                  "decay 0.99 per round, SGD momentum 0.9 seed L189; weight decay 5e-4 Table 8; Dir(0.3) seed L185",
                  "momentum 0.9 is the experiments' (one SGD optimizer per phase, new each round), not Algorithm "
                  "1's (--momentum 0 runs the theory's plain SGD); weight decay 5e-4 (Table 8) rather than L189's "
                  "0.005; eta_v = eta_u (not stated); push-sum weights 1/(|N^out|+1) "
                  "on the in-neighbour draw (Algorithm 1's column-stochastic P; the experiments' pull rule eq. (6) is "
                  "row-stochastic, card §7)")


RECIPES: dict[str, Recipe] = {
    "dfedsam-cifar10": _dfedsam("cifar10", "vgg11"),
    "dfedsam-cifar100": _dfedsam("cifar100", "resnet18-imagenet"),
    "dfedadmm-mnist": _dfedadmm("mnist", "mlp", 300),
    "dfedadmm-cifar10": _dfedadmm("cifar10", "cnn", 500),
    "dfedadmm-cifar100": _dfedadmm("cifar100", "resnet18-imagenet", 500),
    "dfedsgpsm-mnist": _dfedsgpsm("mnist", "mlp", 300, 0.9),
    "dfedsgpsm-cifar10": _dfedsgpsm("cifar10", "cnn", 500, 0.9),
    "dfedsgpsm-cifar100": _dfedsgpsm("cifar100", "resnet18-imagenet", 500, 0.1),
    "dfedcata-cifar10": _dfedcata("cifar10", "cnn", 500),
    "dfedcata-cifar100": _dfedcata("cifar100", "resnet18-imagenet", 200),
    "dfedpgp-cifar10": _dfedpgp("cifar10"),
    "dfedpgp-cifar100": _dfedpgp("cifar100"),
}
NAMES = tuple(RECIPES)


def get(name: str) -> Recipe:
    """The recipe ``name``; an unknown name is a ValueError listing the recipes."""
    if name not in RECIPES:
        raise ValueError(f"unknown recipe {name!r}; valid recipes: {', '.join(NAMES)} (dfltheory train --recipe list "
                         "shows them with their options)")
    return RECIPES[name]


def resolve(cfg: dict) -> dict:
    """``cfg`` completed: every option that is None or missing takes the recipe's value (``cfg['recipe']``, if
    any), else the command's default (:data:`DEFAULTS`); options given keep their values."""
    recipe = get(cfg["recipe"]).options if cfg.get("recipe") else {}
    base = {**DEFAULTS, **recipe}
    out = {**cfg, **{k: v for k, v in base.items() if cfg.get(k) is None}}
    own = recipe.get("topology_params")
    if own is not None:
        if cfg.get("topology") not in (None, recipe.get("topology")) and cfg.get("topology_params") is None:
            out["topology_params"] = DEFAULTS.get("topology_params")  # another topology: not the recipe's parameters
        elif cfg.get("topology_params"):  # the recipe's parameters, with the ones given replacing theirs
            out["topology_params"] = _merge_params(own, cfg["topology_params"])
    return out


def _merge_params(base: str, given: str) -> str:
    """'k=10,direction=in' updated by 'k=2' -> 'k=2,direction=in' (a key given replaces the recipe's)."""
    def pairs(text):
        return dict(p.split("=", 1) if "=" in p else (p, "") for p in text.split(",") if p.strip())

    merged = {**pairs(base), **pairs(given)}
    return ",".join(f"{k}={v}" if v != "" else k for k, v in merged.items())


def describe(name: str) -> str:
    """One recipe as text: its options as command-line flags, the sources and the notes."""
    r = get(name)
    first = ("algo", "dataset", "model", "n")
    opts = {**{k: r.options[k] for k in first}, **r.options}
    flags = " ".join(f"--{'clients' if k == 'n' else k.replace('_', '-')}" + ("" if v is True else f" {v}")
                     for k, v in opts.items())
    return (f"{name}  (../shared/spec/{r.card}.md §8)\n  {flags}\n"
            f"  sources: {r.sources}\n" + (f"  notes: {r.notes}\n" if r.notes else ""))
