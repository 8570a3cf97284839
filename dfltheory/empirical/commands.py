"""Command-line subcommands of dfltheory.empirical: ``dfltheory train``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dfltheory.empirical.algorithms import NAMES
from dfltheory.empirical.recipes import ALGO_DEFAULTS, DEFAULTS


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default only where it is one: the options a recipe may set default to None and name their own."""

    def _get_help_string(self, action):
        return action.help if action.default is None else super()._get_help_string(action)


def _d(key: str) -> str:
    return f" (default: { {**DEFAULTS, **ALGO_DEFAULTS}[key]}, or the recipe's)"


def warn_unused(cfg: dict, given: list[str]) -> None:
    """Name on stderr the options given on the command line that the algorithm does not read (``--rho`` for
    dfedavg, ``--participation`` for a decentralized one, ``--K`` for D-PSGD, which takes one step): they change
    nothing, which a user should know."""
    from dfltheory.empirical import algorithms as A
    from dfltheory.empirical.runner import ALGO_KEYS

    algo = A.make(cfg["algo"], **{k: cfg.get(k) for k in ALGO_KEYS})
    if algo.K is not None and "K" in given and cfg["K"] != algo.K:
        print(f"dfltheory train: warning: {algo.name} takes K = {algo.K} local step(s) per round by definition (with "
              f"--epochs one local epoch, the papers' setting); --K {cfg['K']} is ignored and K = {algo.K} is stored "
              "in config.json", file=sys.stderr)
    unused = sorted(set(given) & {*algo.unused, *(("weighted",) if algo.decentralized else ())})
    if algo.name in ("dfedpgp", "dfedpgp-pull") and str(cfg.get("personal")).lower() == "none":
        print(f"dfltheory train: warning: {algo.name} with --personal none shares every parameter: its K_v personal "
              "steps move nothing (they cost gradients only) and --lr-v does nothing", file=sys.stderr)
    if unused:
        flags = ", ".join("--" + k.replace("_", "-") for k in unused)
        print(f"dfltheory train: warning: {cfg['algo']} does not use {flags}; ignored (see dfltheory train --help "
              "for which algorithm takes which option)", file=sys.stderr)


def register(subparsers) -> None:
    """Add this pillar's subcommands to the top-level parser."""
    p = subparsers.add_parser(
        "train", help="train one algorithm on federated data (vectorized over clients)",
        description="Train a decentralized (or centralized baseline) FL algorithm; writes config.json, "
                    "metrics.jsonl, checkpoint.pt and summary.json to --out. See docs/empirical.md.",
        formatter_class=_Help)
    p.add_argument("--recipe", default=None, help="a paper's experimental setting (dfedsam-cifar10, ...; 'list' "
                   "shows them): its data set, model, topology, rounds, local epochs, batch size, lr and "
                   "hyper-parameters; options given on the command line override it")
    p.add_argument("--algo", default=None, choices=NAMES, help="the algorithm (required without --recipe)")
    p.add_argument("--dataset", default=None, help="digits, synthetic-quadratic, synthetic-logistic, "
                   "synthetic-robust, synthetic-personal, mnist, fashion-mnist, cifar10, cifar100" + _d("dataset"))
    p.add_argument("--data-params", default=None, help="the data set's options, e.g. dim=10,n_per_client=50,"
                   "heterogeneity=2.0 (true/false for flags; see docs/empirical-data-models.md)")
    p.add_argument("--data-seed", type=int, default=None, help="seed of the problem: the data, the partition, "
                   "the initial model and a random graph (default: --seed); runs differing in --seed alone then "
                   "differ only in the minibatches")
    p.add_argument("--clients", "--n", dest="n", type=int, default=None, help="number of clients m (--n is an "
                   "alias; under torchrun write --clients: torchrun's parser takes --n for an abbreviation of its "
                   "options)" + _d("n"))
    p.add_argument("--partition", default=None, choices=("dirichlet", "pathological", "iid"),
                   help="client partition" + _d("partition"))
    p.add_argument("--alpha", type=float, default=None, help="Dirichlet concentration" + _d("alpha"))
    p.add_argument("--classes-per-client", type=int, default=None, help="pathological partition"
                   + _d("classes_per_client"))
    p.add_argument("--model", default=None, help="logreg, mlp, mlp-small, cnn, vgg11, vgg11-bn, resnet18, "
                   "resnet18-imagenet, linear, split-linear (default per data set)")
    p.add_argument("--init-weights", default=None, metavar="FILE",
                   help="start every client from the parameters in FILE (torch.save(module.state_dict())): the "
                        "model's names, or torchvision's resnet18 for resnet18-imagenet (ImageNet weights: the "
                        "DFedCata code's CIFAR-100 start; BatchNorm layers of the file start as new GroupNorms, a "
                        "classifier of another shape keeps its initial values); nothing is downloaded")
    p.add_argument("--topology", default=None, help="mixing topology (dfltheory.topology names)" + _d("topology"))
    p.add_argument("--weights", default=None, help="mixing weights (metropolis, uniform, ...; default: the "
                   "topology's own rule, or the recipe's)")
    p.add_argument("--topology-params", default=None, help="topology parameters, e.g. k=10 or p=0.1")
    p.add_argument("--sparse", default=None, action=argparse.BooleanOptionalAction,
                   help="multiply with W as a sparse (--sparse) or dense (--no-sparse) matrix; default: sparse "
                        "when at most 10%% of W's entries are non-zero")
    p.add_argument("--rounds", type=int, default=None, help="communication rounds" + _d("rounds"))
    p.add_argument("--K", type=int, default=None, help="local steps per round (with --epochs: local epochs)" + _d("K"))
    p.add_argument("--epochs", default=None, action=argparse.BooleanOptionalAction,
                   help="--K (and --K-v) count local epochs over each client's shuffled data in batches of "
                        "--batch-size, the last one partial (the papers' local work; ceil(n_i / b) steps per epoch "
                        "for client i), instead of steps on batches drawn with replacement (default: steps, or the "
                        "recipe's)")
    p.add_argument("--lr", type=float, default=None, help="local learning rate" + _d("lr"))
    p.add_argument("--lr-decay", type=float, default=None, help="lr multiplied by this after every round, in (0, 1] "
                   "(0.998 in the papers)" + _d("lr_decay"))
    p.add_argument("--batch-size", type=int, default=None, help="minibatch size" + _d("batch_size"))
    p.add_argument("--seed", type=int, default=0, help="seed of the batches (and of the partition, the model "
                   "and a random graph unless --data-seed is given), in [0, 2^32 - 1]")
    hp = p.add_argument_group("algorithm hyper-parameters (default: the papers' values)")
    hp.add_argument("--rho", type=float, help="SAM radius")
    hp.add_argument("--Q", type=int, help="gossip steps per round (dfedsam-mgs)")
    hp.add_argument("--fresh-gossip", action="store_true", help="dfedsam-mgs: a new W per gossip step")
    hp.add_argument("--momentum", type=float, help="local momentum (dfedavgm; dfedsgpsm's alpha; dfedpgp: the "
                    "experiments' SGD momentum, default 0 as in Algorithm 1)")
    hp.add_argument("--lam", type=float, help="ADMM penalty lambda (dfedadmm); keep it well above --lr: each local "
                    "step contracts x_k - x^t by 1 - lr/lam, so lam = lr (the papers' 0.1 = 0.1) makes K steps act "
                    "as one (warned)")
    hp.add_argument("--lam-pen", type=float, help="DFedCata penalty")
    hp.add_argument("--beta", type=float, help="DFedCata Nesterov coefficient")
    hp.add_argument("--mode", choices=("A", "B"), help="DFedCata Nesterov reading: A pre/post-aggregation (code), "
                    "B consecutive (proof)")
    hp.add_argument("--sequential", action="store_true", help="DFedCata: the public code's in-place aggregation")
    hp.add_argument("--K-v", type=int, help="dfedpgp: local steps on the personal part per round, before the K "
                    "steps on the shared part (default 1)")
    hp.add_argument("--lr-v", type=float, help="dfedpgp: personal-part learning rate eta_v (default: --lr), decayed "
                    "like --lr")
    hp.add_argument("--personal", help="dfedpgp: personal layers, comma-separated module names (e.g. 5 or head); "
                    "'none' shares everything (default: the last Linear layer)")
    hp.add_argument("--mu", type=float, help="FedProx proximal coefficient")
    hp.add_argument("--participation", type=float, help="fraction of clients per round (centralized baselines)")
    hp.add_argument("--weighted", action="store_true", help="server average weighted by client sizes (centralized)")
    hp.add_argument("--weight-decay", type=float, default=None, help="L2 weight decay" + _d("weight_decay"))
    hp.add_argument("--clip", type=float, help="clip each local direction to this norm")
    run = p.add_argument_group("run")
    run.add_argument("--out", default=None, help="run directory (required)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    run.add_argument("--eval-every", type=int, default=1)
    run.add_argument("--checkpoint-every", type=int, default=10)
    run.add_argument("--no-local-eval", dest="local_eval", action="store_false",
                     help="skip the per-client test accuracy (m forward passes of the test set)")
    run.add_argument("--device", default="cpu")
    run.add_argument("--nproc", type=int, default=None, help="split the clients over this many processes "
                     "(torch.distributed: gloo on CPU, NCCL with --device cuda); under torchrun, its --nproc-per-node "
                     "instead. See docs/empirical.md")
    run.add_argument("--client-chunk", type=int, default=None, help="vmap over this many clients at a time "
                     "(less GPU memory for large models; default: chosen from the free memory, docs/empirical.md)")
    run.add_argument("--compile", action="store_true", help="run each local step as one torch.compile'd function "
                     "(DFedCata on the digits MLP: 2x to 3x faster rounds; the first round compiles, seconds; needs "
                     "a C++ compiler on CPU; not with --epochs or --sequential). See docs/benchmarks.md")
    run.add_argument("--threads", type=int, default=None, help="torch CPU threads (1 avoids oversubscription on "
                     "shared cores); stored in config.json, a resume with another count warns (results differ at "
                     "~1e-8)")
    run.add_argument("--data-root", default=None)
    run.add_argument("--download", action="store_true")
    run.add_argument("--no-progress", dest="progress", action="store_false")
    p.set_defaults(func=_train)


def parse_data_params(text: str | None) -> dict:
    """'k=v,k=v' -> the data set's keyword options: numbers as int or float, true/false as booleans."""
    from dfltheory.topology.commands import parse_params

    flags = {"true": True, "false": False}
    return {k: flags.get(v.lower(), v) if isinstance(v, str) else v for k, v in parse_params(text).items()}


def _train(args) -> int:
    import os

    from dfltheory.empirical import distributed
    from dfltheory.empirical.runner import ALGO_KEYS, check_options, run

    from dfltheory.empirical import recipes

    if args.recipe == "list":
        print("\n".join(recipes.describe(name) for name in recipes.NAMES), end="")
        return 0
    cfg = recipes.resolve({k: v for k, v in vars(args).items() if k not in ("func", "command")})
    if cfg["algo"] is None:
        raise ValueError("give --algo ALGO or --recipe NAME (dfltheory train --recipe list shows the recipes)")
    if cfg["out"] is None:
        raise ValueError("give --out DIR, the run directory")
    cfg["data_params"] = parse_data_params(args.data_params)
    if cfg.get("init_weights"):  # stored resolved: a resume from another directory names the same file ("" stays)
        cfg["init_weights"] = str(Path(cfg["init_weights"]).expanduser().resolve())
    check_options(cfg)  # a bad value is an error before any warning
    warn_unused(cfg, [k for k in (*ALGO_KEYS, "K", "weighted") if getattr(args, k, None) not in (None, False)])
    several = "WORLD_SIZE" in os.environ or (args.nproc or 1) > 1
    summary = distributed.run(cfg, resume=args.resume) if several else run(cfg, resume=args.resume)
    if summary is None:  # a torchrun rank other than 0: rank 0 reports
        return 0
    last = summary["last"] or {}
    shown = {k: last[k] for k in ("round", "train_loss", "grad_norm_sq", "consensus", "test_acc", "test_loss")
             if k in last}
    print(f"{summary['status']}: {cfg['algo']} {summary['rounds']} rounds in {summary['wall_seconds']:.1f}s; "
          + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown.items()))
    return 0 if summary["status"] == "completed" else 3
