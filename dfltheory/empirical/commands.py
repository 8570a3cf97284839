"""Command-line subcommands of dfltheory.empirical: ``dfltheory train`` and ``dfltheory sweep``, and the run config
files they read (docs/empirical.md, "Runs from files" and "Sweeps").

A run config file (``train --config FILE``) is TOML (``.toml``, read by the standard library's tomllib) or JSON
(``.json``: a run's own ``config.json`` is one) holding ``train`` options: the keys are the options' names with '_'
or '-' (``lr_decay``, ``clients`` or ``n``, ``local_eval = false`` for ``--no-local-eval``), each value of the type
the command line takes (``data_params`` and ``topology_params`` also as tables). The options given on the command
line override the file's, exactly those given (``_Given`` notes them), whatever their values. A sweep file
(``dfltheory sweep FILE``) holds ``base`` (a table of options, or the path of a run config file), ``grid`` and
``zip`` (tables of option -> list of values), ``seeds`` (a list, or a count n: 0 .. n-1) and ``out``;
:mod:`dfltheory.empirical.sweep` runs it.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default only where it is one: the options a recipe may set default to None and name their own."""

    def _get_help_string(self, action):
        return action.help if action.default is None else super()._get_help_string(action)


def _d(key: str) -> str:
    from dfltheory.empirical.recipes import ALGO_DEFAULTS, DEFAULTS

    return f" (default: { {**DEFAULTS, **ALGO_DEFAULTS}[key]}, or the recipe's)"


def warn_unused(cfg: dict, given: list[str]) -> None:
    """Name on stderr the options given on the command line that the algorithm does not read (``--rho`` for
    dfedavg, ``--participation`` for a decentralized one, ``--K`` for D-PSGD, which takes one step): they change
    nothing, which a user should know."""
    from dfltheory.empirical import algorithms as A
    from dfltheory.empirical.run_config import flag
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
        flags = ", ".join(flag(k) for k in unused)
        print(f"dfltheory train: warning: {cfg['algo']} does not use {flags}; ignored (see dfltheory train --help "
              "for which algorithm takes which option)", file=sys.stderr)


class _Given(argparse.Action):
    """An option that also notes its name in ``namespace.explicit`` when the command line gives it: the options that
    override a ``--config`` file are exactly those given, a default value given explicitly included."""

    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        namespace.explicit = {*getattr(namespace, "explicit", ()), self.dest}


@functools.cache
def _noting(cls: type) -> type:
    return type(cls.__name__, (_Given, cls), {})


def register(subparsers) -> None:
    """Add this pillar's subcommands to the top-level parser (the algorithms a plugin registered among --algo's
    choices)."""
    from dfltheory.empirical.algorithms import names

    p = subparsers.add_parser(
        "train", help="train one algorithm on federated data (vectorized over clients)",
        description="Train a decentralized (or centralized baseline) FL algorithm; writes config.json, "
                    "metrics.jsonl, checkpoint.pt, summary.json and TensorBoard event files to --out. See "
                    "docs/empirical.md.",
        formatter_class=_Help)
    p.add_argument("--config", default=None, metavar="FILE", help="read the options from a run config file: TOML, "
                   "or JSON (a run's config.json is one); keys are the options' names with _ or -; the options "
                   "given on the command line override the file's (docs/empirical.md, 'Runs from files')")
    p.add_argument("--recipe", default=None, help="a paper's experimental setting (dfedsam-cifar10, ...; 'list' "
                   "shows them): its data set, model, topology, rounds, local epochs, batch size, lr and "
                   "hyper-parameters; options given on the command line override it")
    p.add_argument("--algo", default=None, choices=names(), help="the algorithm (required without --recipe)")
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
    hp.add_argument("--lam-pen", type=float, help="the algorithm's penalty: dfedadmm's ADMM penalty lambda (keep it "
                    "well above --lr: each local step contracts x_k - x^t by 1 - lr/lambda, so lambda = lr, the "
                    "papers' 0.1 = 0.1, makes K steps act as one; warned), dfedcata's proximal penalty")
    hp.add_argument("--lam", type=float, help=argparse.SUPPRESS)  # --lam-pen's former name for dfedadmm (current_names)
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
    run.add_argument("--tensorboard", default=True, action=argparse.BooleanOptionalAction,
                     help="write TensorBoard event files next to metrics.jsonl (scalars per measured round, the "
                          "config; tensorboard --logdir DIR shows them)")
    for action in p._actions:  # argparse has no public list of a parser's options
        action.__class__ = _noting(type(action))
    p.set_defaults(func=_train)
    s = subparsers.add_parser(
        "sweep", help="train the runs of a sweep file (grid, zip, seeds) in parallel, cached; a summary table",
        description="Train every run of a sweep file: a base run config, crossed with 'grid', walked along 'zip' "
                    "and repeated over 'seeds' (docs/empirical.md, 'Sweeps'). Runs are cached in OUT/runs/<key> (a "
                    "finished one is read back, not retrained); prints one row per run (final and best metrics) "
                    "and writes OUT/sweep.csv. Progress on stderr.")
    s.add_argument("file", metavar="SWEEP", help="sweep file (.toml, or .json)")
    s.add_argument("--jobs", type=int, default=1, help="processes that train runs (one CPU thread each)")
    s.add_argument("--out", default=None, help="directory of the runs and sweep.csv (default: the file's 'out', "
                   "else runs/<the file's name>)")
    s.add_argument("--yes", action="store_true", help="start a large sweep (more than 10,000 runs or an estimated "
                   "day) that is otherwise refused with its size")
    s.add_argument("--no-progress", dest="progress", action="store_false")
    s.set_defaults(func=_sweep)


def parse_data_params(text: str | None) -> dict:
    """'k=v,k=v' -> the data set's keyword options: numbers as int or float, true/false as booleans."""
    from dfltheory.parsing import parse_params

    flags = {"true": True, "false": False}
    return {k: flags.get(v.lower(), v) if isinstance(v, str) else v for k, v in parse_params(text).items()}


@functools.cache
def train_parser() -> argparse.ArgumentParser:
    """The ``train`` command's parser: its options are a run config's keys."""
    sub = argparse.ArgumentParser(prog="dfltheory").add_subparsers()
    register(sub)
    return sub.choices["train"]


@functools.cache
def _options() -> dict[str, argparse.Action]:
    """Config key -> the ``train`` option it sets: every option's name (its config key) and its long flags without
    the dashes, '-' read as '_' (``n``, ``clients``; a negative flag such as ``--no-local-eval`` only as
    ``local_eval``); not ``--config`` itself."""
    keys = {}
    for action in train_parser()._actions:  # argparse has no public list of a parser's options
        if action.dest in ("help", "config"):
            continue
        flags = () if action.const is False else action.option_strings  # store_false: its flag negates the key
        for name in (action.dest, *(f[2:] for f in flags if f.startswith("--") and not f.startswith("--no-"))):
            keys[name.replace("-", "_")] = action
    return keys


def train_defaults() -> dict:
    """The ``train`` command's default of every option a run config may give, but ``out`` and ``resume``."""
    return {a.dest: a.default for a in dict.fromkeys(_options().values()) if a.dest not in ("out", "resume")}


def _load(path) -> dict:
    """The table of a TOML (``.toml``) or JSON (``.json``) file; a missing file, another suffix, a syntax error or
    a JSON value that is not an object is a ValueError naming the file and the fix."""
    import json
    import tomllib

    path = Path(path)
    if (path / "config.json").is_file():
        raise ValueError(f"{path}: a directory; give its run config, {path / 'config.json'}")
    if not path.is_file():
        raise ValueError(f"{path}: {'not a file' if path.exists() else 'no such file'}; give a config file (.toml, "
                         "or .json such as a run's config.json)")
    if path.suffix.lower() not in (".toml", ".json"):
        raise ValueError(f"{path}: unknown config type {path.suffix or '(no suffix)'!r}; give a .toml or a .json "
                         "file")
    try:
        text = path.read_text()
        if path.suffix.lower() == ".toml":
            return tomllib.loads(text)
        data = json.loads(text)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not text (UTF-8); give a .toml or .json config file") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{path}: not valid TOML ({err}); correct it there") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}); correct it "
                         "there") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: holds a JSON {type(data).__name__}, not an object of train options; give "
                         '{"algo": ..., ...}')
    return data


def _action(key: str, where: str, prefix: str = "") -> argparse.Action:
    """The ``train`` option a config key names; an unknown key is a ValueError naming file ``where``, the key (under
    ``prefix``: 'grid.') and the nearest option."""
    import difflib

    keys = _options()
    if key.replace("-", "_") not in keys:
        near = difflib.get_close_matches(key.replace("-", "_"), keys, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"{where}: unknown key '{prefix}{key}'{hint}; the keys are the options of dfltheory train, "
                         "with _ or - (dfltheory train --help lists them)")
    return keys[key.replace("-", "_")]


def _value(action: argparse.Action, value, where: str):
    """``value`` of ``action`` read from a file (``where``: the file and key), in the type the command line gives:
    true/false for a flag, an integer, a number (as a float), a string in the option's choices; None where the
    option's default is None (JSON null); ``data_params`` also as a table (returned as a dict, a string parsed) and
    ``topology_params`` as a table (returned as 'k=v,...'). Another value is a ValueError naming the fix."""
    flag = action.option_strings[0]
    if value is None and action.default is None:
        return None
    if action.dest in ("data_params", "topology_params") and isinstance(value, (str, dict)):
        if isinstance(value, str):
            return parse_data_params(value) if action.dest == "data_params" else value
        if all(isinstance(v, (bool, int, float, str)) for v in value.values()):
            return dict(value) if action.dest == "data_params" else ",".join(
                f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in value.items())
    if action.nargs == 0:
        ok, want, example = isinstance(value, bool), "true or false", "true"
    elif action.type is int:
        ok, want, example = isinstance(value, int) and not isinstance(value, bool), "an integer", "10"
    elif action.type is float:
        ok, want, example = isinstance(value, (int, float)) and not isinstance(value, bool), "a number", "0.1"
        value = float(value) if ok else value
    else:
        ok, want, example = isinstance(value, str), "a string (in quotes)", f'"{(action.choices or ["..."])[0]}"'
    if action.dest in ("data_params", "topology_params"):
        want, example = "a string 'k=v,...' or a table of names to numbers, booleans or strings", "{ dim = 10 }"
    if not ok:
        raise ValueError(f"{where} = {value!r}: must be {want} (the option {flag}), e.g. {example}")
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"{where} = {value!r}: not one of the choices of {flag}: {', '.join(action.choices)}")
    return value


def _table(data: dict, where: str, prefix: str = "", values=_value) -> dict:
    """Config keys -> values of ``data`` (a table of ``train`` options in file ``where``, under ``prefix``: 'grid.')
    as option names -> ``values(action, value, '<where>: <prefix><key>')``; two keys of one option are an error."""
    out, seen = {}, {}
    for key, value in data.items():
        action = _action(key, where, prefix)
        if action.dest in seen:
            raise ValueError(f"{where}: {prefix}{seen[action.dest]} and {prefix}{key} both give {action.dest}; keep "
                             "one")
        seen[action.dest] = key
        out[action.dest] = values(action, value, f"{where}: {prefix}{key}")
    return out


def read_config(path) -> dict:
    """The ``train`` options of a run config file (TOML or JSON), checked: option name -> value."""
    return _table(_load(path), str(path))


#: the keys of a sweep file
SWEEP_KEYS = ("base", "grid", "zip", "seeds", "out")


def read_sweep(path):
    """(:class:`dfltheory.empirical.sweep.Sweep`, its ``out`` or None) of a sweep file (TOML or JSON): ``base`` a
    table of ``train`` options or the path of a run config file (relative to the sweep file), ``grid`` and ``zip``
    tables of option -> list of values, ``seeds`` a list of seeds or a count n (0 .. n-1). The base starts from the
    ``train`` command's defaults. Every key and value is checked, an error naming the file and the key."""
    from dfltheory.empirical.sweep import Sweep

    data, where = _load(path), str(path)
    unknown = sorted(set(data) - set(SWEEP_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; a sweep file holds {', '.join(SWEEP_KEYS)} "
                         "(the run's options go in base)")
    base = data.get("base", {})
    if isinstance(base, str):
        base = read_config(Path(path).parent / base)
    elif isinstance(base, dict):
        base = _table(base, where, "base.")
    else:
        raise ValueError(f"{where}: base must be a table of train options or the path of a run config file")

    def each(action, values, key):
        if not isinstance(values, list):
            raise ValueError(f"{key} = {values!r}: must be a list of values, e.g. [{values!r}]")
        return [_value(action, v, f"{key}[{i}]") for i, v in enumerate(values)]

    tables = {}
    for name in ("grid", "zip"):
        if not isinstance(data.get(name, {}), dict):
            raise ValueError(f"{where}: {name} must be a table of option = [values]")
        tables[name] = _table(data.get(name, {}), where, f"{name}.", each)
    seeds = data.get("seeds")  # a count stays a count: Sweep keeps it as a range, sized before anything is listed
    if seeds is not None and not isinstance(seeds, (list, int)) or isinstance(seeds, bool):
        raise ValueError(f"{where}: seeds must be a list of seeds or a count, got {seeds!r}")
    out = data.get("out")
    if out is not None and not isinstance(out, str):
        raise ValueError(f"{where}: out must be a directory name (a string), got {out!r}")
    try:
        return Sweep({**train_defaults(), **base}, tables["grid"], tables["zip"], seeds), out
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def _train(args) -> int:
    import os

    from dfltheory.empirical import distributed
    from dfltheory.empirical.algorithms import current_names
    from dfltheory.empirical.run_config import flag
    from dfltheory.empirical.runner import ALGO_KEYS, check_options, run

    from dfltheory.empirical import recipes

    options = {action.dest for action in _options().values()}  # not the top-level parser's (--plugin)
    given = {k: v for k, v in vars(args).items() if k in options}
    if args.config is not None:  # the file's options, then the ones the command line gives
        explicit = {k: given[k] for k in getattr(args, "explicit", ()) if k in given}
        given = {**given, **read_config(args.config), **explicit}
    if given["recipe"] == "list":
        print("\n".join(recipes.describe(name) for name in recipes.NAMES), end="")
        return 0
    cfg = recipes.resolve(given)
    if cfg["algo"] is None:
        raise ValueError("give --algo ALGO or --recipe NAME (dfltheory train --recipe list shows the recipes)")
    if cfg["out"] is None:
        raise ValueError("give --out DIR, the run directory")
    where = f"{args.config} or the command line" if args.config is not None else "the command line"
    cfg = current_names(cfg, where, warn=lambda text: print(f"dfltheory train: warning: {text}", file=sys.stderr),
                        flag=flag)
    data = cfg["data_params"]
    cfg["data_params"] = data if isinstance(data, dict) else parse_data_params(data)
    if cfg.get("init_weights"):  # stored resolved: a resume from another directory names the same file ("" stays)
        cfg["init_weights"] = str(Path(cfg["init_weights"]).expanduser().resolve())
    check_options(cfg)  # a bad value is an error before any warning
    warn_unused(cfg, [k for k in (*ALGO_KEYS, "K", "weighted") if given.get(k) not in (None, False)])
    several = "WORLD_SIZE" in os.environ or (cfg.get("nproc") or 1) > 1
    summary = distributed.run(cfg, resume=cfg["resume"]) if several else run(cfg, resume=cfg["resume"])
    if summary is None:  # a torchrun rank other than 0: rank 0 reports
        return 0
    last = summary["last"] or {}
    shown = {k: last[k] for k in ("round", "train_loss", "grad_norm_sq", "consensus", "test_acc", "test_loss")
             if k in last}
    print(f"{summary['status']}: {cfg['algo']} {summary['rounds']} rounds in {summary['wall_seconds']:.1f}s; "
          + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown.items()))
    return 0 if summary["status"] == "completed" else 3


def _sweep(args) -> int:
    from dfltheory.empirical import sweep
    from dfltheory.parsing import duration
    from dfltheory.paths import output_dir

    spec, out = read_sweep(args.file)
    out = next(o for o in (args.out, out, str(Path("runs") / Path(args.file).stem)) if o is not None)  # '' refused
    if not str(out).strip():
        output_dir(out, "--out")  # its error: an empty name (Path('') would be the current directory)
    sweep.check_workers(args.jobs)
    est = sweep.check_size(spec, args.jobs, args.yes)  # before any run is listed

    def progress(done, total, eta):
        if not shown:  # the first call: every config checked, the cached runs found
            shown.append(True)
            print(f"sweep: {total:,} runs, {done:,} cached; the others take at least about "
                  f"{duration(est['seconds'] * (total - done) / max(total, 1))} in {args.jobs} process(es)",
                  file=sys.stderr)
        print(f"\rsweep: {done}/{total} runs, about {eta:.0f} s left   ", end="" if done < total else "\n",
              file=sys.stderr, flush=True)

    shown = []
    counts = {}
    rows = sweep.run_sweep(spec, out, args.jobs, progress if args.progress else None, yes=True, counts=counts)
    out = Path(out)
    print(sweep.table(rows), end="")
    csv = sweep.write_csv(rows, out / "sweep.csv")
    print(f"{counts['read_back']} read back, {counts['trained']} trained; wrote {csv}; runs in {out / 'runs'} "
          f"(tensorboard --logdir {out / 'runs'})")
    return 0
