"""``dfltheory topology``: print every topology constant, or compare topologies in one table.

    dfltheory topology NAME --n N [--weights RULE] [--seed S] [--Q Q] [--horizon T] [--json]
    dfltheory topology --matrix FILE [--Q Q] [--horizon T] [--json]
    dfltheory topology compare NAME... --n N [...]
    dfltheory topology list

A NAME may carry parameters: ``watts-strogatz:k=8,p=0.02``, ``random:k=10,direction=in``. ``--weights default``
(the default) uses each topology's own rule (metropolis for undirected graphs, push-sum for directed ones,
the code's uniform rule for the code-* lists). ``--matrix FILE`` analyses the user's own W (or push-sum P) stored
as .npy, .csv or Matrix Market .mtx (:func:`dfltheory.topology.load_matrix`). JSON output writes infinities as the
string "inf".
"""

from __future__ import annotations

import json
import math

from dfltheory.parsing import duration, integer, jsonable, parse_spec
from dfltheory.topology import checks
from dfltheory.topology.core import KEYS, NAMES, REGISTRY, analyze, analyze_matrix
from dfltheory.topology.weights import RULES

# The compare table's columns (key, header, format); beta_pi|A and kappa_pi|A are the column-stochastic (push-sum)
# metrics where they apply, else the row-stochastic ones (equal on a doubly stochastic W; docs/topology.md)
TABLE = (("topology", "topology", "s"), ("weights", "weights", "s"), ("lambda", "lambda", ".6f"),
         ("lambda_mean", "lam_mean", ".6f"),
         ("spectral_gap", "gap", ".3e"), ("sigma_2", "sigma_2", ".6f"), ("lambda_2", "lambda_2", ".6f"),
         ("lambda_min", "lambda_min", ".6f"), ("symmetric", "sym", "b"), ("doubly_stochastic", "DS", "b"),
         ("Phi", "Phi(Q)", ".4g"), ("D", "D", "g"), ("B", "B", "g"), ("Delta", "Delta", "g"),
         ("delta", "delta", ".4f"), ("q_measured", "q_meas", ".4f"), ("one_minus_q", "1-q_SGP", ".3e"),
         ("beta", "beta_pi|A", ".4f"), ("kappa", "kappa_pi|A", ".4g"), ("n_eff_0.9", "n_eff(0.9)", ".3g"))


def _fmt(value, spec: str) -> str:
    if value is None:
        return "-"
    if spec == "b":
        return "yes" if value else "no"
    if spec == "s":
        return str(value)
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return format(value, spec)


def _run_one(spec: str, args) -> dict:
    name, params = parse_spec(spec)
    return analyze(name, 100 if args.n is None else args.n, weights=args.weights,
                   seed=0 if args.seed is None else args.seed, Q=args.Q, horizon=args.horizon, d=args.d, K_u=args.K_u,
                   **params)


def _run_matrix(args) -> dict:
    given = [opt for opt, bad in (("a topology NAME", args.names), ("--n", args.n is not None),
                                  ("--weights", args.weights != "default"), ("--seed", args.seed is not None)) if bad]
    if given:
        raise ValueError(f"--matrix FILE gives the clients and their weights; drop {', '.join(given)}")
    return analyze_matrix(args.matrix, Q=args.Q, horizon=args.horizon, d=args.d, K_u=args.K_u)


def _generalized(r: dict, name: str):
    """beta or kappa of the column-stochastic metrics (arXiv 2312.04928) if set, else of the row-stochastic ones."""
    return r[f"{name}_pi"] if r[f"{name}_pi"] is not None else r[f"{name}_A"]


def _print_one(r: dict) -> None:
    for key in KEYS:
        if key == "notes":
            continue
        value = r[key]
        text = _fmt(value, "s") if not isinstance(value, float) else _fmt(value, ".10g")
        if key == "vacuous" and value and r["beta_pi"] is not None:
            text += (f"  (finite instead: beta_pi = {r['beta_pi']:.6g}, generalized gap 1 - beta_pi = "
                     f"{1 - r['beta_pi']:.4g}, kappa_pi = {r['kappa_pi']:.4g}; arXiv 2312.04928)")
        print(f"{key:28s} {text}")
    for key, note in r["notes"].items():
        print(f"note[{key}]: {note}")


def _print_table(rows: list[dict]) -> None:
    def cell(r, key, spec):
        if key == "one_minus_q" and r.get("vacuous") and r.get("q") == math.inf:
            return "void"  # n D^(-E) >= 1: the lemma gives no q at all
        return _fmt(_generalized(r, key) if key in ("beta", "kappa") else r[key], spec)

    cells = [[head for _, head, _ in TABLE]] + [[cell(r, k, s) for k, _, s in TABLE] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(TABLE))]
    for j, row in enumerate(cells):
        print("  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if j == 0:
            print("  ".join("-" * w for w in widths))


def _print_report(r, as_json: bool) -> None:
    if as_json:
        print(json.dumps(jsonable(r), indent=1))
    else:
        _print_one(r)


#: an analysis over a --horizon above the default estimated to take longer is refused unless confirmed with --yes
MAX_SECONDS = 600.0
DEFAULT_HORIZON = 50


def check_horizon(specs: list[str], n: int, horizon: int, yes: bool) -> None:
    """Refuse, before anything is built, an analysis whose rounds over ``horizon`` are estimated
    (:func:`dfltheory.topology.memory.horizon_seconds`) to take more than :data:`MAX_SECONDS`, unless ``yes``;
    the message gives the estimate and the longest horizon that fits."""
    from dfltheory.topology import memory

    limit = memory.FRACTION * memory.available_bytes()
    for name, params in map(parse_spec, specs):
        if name not in REGISTRY or sum(memory.topology_bytes(name, n, params, horizon).values()) > limit:
            return  # an unknown name, or memory the analysis itself refuses: that error comes first
    seconds = {spec: memory.horizon_seconds(parse_spec(spec)[0], n, horizon) for spec in specs}
    total = sum(seconds.values())
    if yes or total <= MAX_SECONDS or horizon <= DEFAULT_HORIZON:  # the default's time is n's, not the horizon's
        return
    spec = max(seconds, key=seconds.get)
    fits = int(horizon * MAX_SECONDS / total)
    fits -= fits % 10 ** max(0, len(str(fits)) - 3)  # three significant digits, rounded down
    per = seconds[spec] / horizon
    per_round = f"{per * 1e3:.3g} ms" if per >= 1e-3 else f"{per * 1e6:.3g} us"
    raise ValueError(f"{spec} on n = {n:,} over --horizon {horizon:,} rounds would take about {duration(total)} "
                     f"(about {per_round} per round), more than {duration(MAX_SECONDS)}; lower --horizon (about "
                     f"{fits:,} fits), or confirm with --yes")


def run(args) -> int:
    checks.arguments(cli=True, n=args.n, seed=args.seed, Q=args.Q, horizon=args.horizon, d=args.d, K_u=args.K_u)
    names = list(args.names)
    specs = names[1:] if names[:1] == ["compare"] else names if names != ["list"] and args.matrix is None else []
    check_horizon(specs, 100 if args.n is None else args.n, args.horizon, getattr(args, "yes", False))
    if args.matrix is not None:
        _print_report(_run_matrix(args), args.json)
        return 0
    if not names:
        raise ValueError("give a topology NAME (see `dfltheory topology list`) or --matrix FILE")
    if names == ["list"]:
        for name in NAMES:
            print(f"{name:22s} default weights {REGISTRY[name].default_weights:10s} {REGISTRY[name].source}")
        print("weight rules: " + ", ".join(RULES) + ", default")
        return 0
    if names[0] == "compare":
        if len(names) < 2:
            raise ValueError("compare needs at least one topology: dfltheory topology compare ring exponential --n 100")
        rows = [_run_one(s, args) for s in names[1:]]
        if args.json:
            print(json.dumps([jsonable(r) for r in rows], indent=1))
        else:
            print(f"n = {rows[0]['n']}, Q = {args.Q}, seed = {rows[0]['seed']}, horizon = {args.horizon} "
                  "(time-varying: lambda = max over rounds)")
            _print_table(rows)
        return 0
    if len(names) != 1:
        raise ValueError("give one topology, or 'compare NAME...' for a table")
    _print_report(_run_one(names[0], args), args.json)
    return 0


def register(subparsers) -> None:
    """Add the ``topology`` subcommand."""
    p = subparsers.add_parser("topology", help="topology constants (lambda, psi, Phi, push-sum C, q, delta, beta_pi, "
                              "kappa_pi, n_eff, ...)",
                              description=__doc__.split("\n\n")[0] + " Topologies: " + ", ".join(NAMES) + ".")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="a topology (NAME or NAME:key=value,...), 'compare NAME...', or 'list'")
    p.add_argument("--matrix", metavar="FILE", help="analyse your own mixing matrix W (or push-sum P) instead: a "
                   ".npy, .csv (n rows of n comma-separated numbers) or Matrix Market .mtx file")
    p.add_argument("--n", type=integer, default=None, help="number of clients (default 100)")
    p.add_argument("--weights", default="default", help=f"weight rule: {', '.join(RULES)} or default")
    p.add_argument("--seed", type=integer, default=None, help="seed of random topologies (default 0)")
    p.add_argument("--Q", type=integer, default=1, help="gossip steps per round for lambda^Q and Phi (default 1)")
    p.add_argument("--horizon", type=integer, default=DEFAULT_HORIZON,
                   help="rounds analysed for time-varying/push-sum (default 50)")
    p.add_argument("--d", type=float, default=1.0, help="model dimension in the SGP bound on C (default 1)")
    p.add_argument("--K-u", dest="K_u", type=integer, default=1, help="K_u of seed 003's q (default 1)")
    p.add_argument("--json", action="store_true", help="print the JSON dict (stable keys, see docs/topology.md)")
    p.add_argument("--yes", action="store_true", help="analyse a horizon estimated to take more than 10 minutes "
                   "(otherwise refused with the estimate)")
    p.set_defaults(func=run)
