"""Subcommands ``dfltheory report`` (the full verification report) and ``dfltheory plot`` (one figure:
a bound over a parameter, a run's measured rate against a bound, topology constants against n, a data partition)."""

from __future__ import annotations

import math
from pathlib import Path


MAX_POINTS = 100_000  # a bound's curve: more points than pixels already
#: the report's topology table: dense constants (push-sum C and q, n_eff: about n^3 flops) of six topologies, measured
#: at about 11 s for n = 400 on one shared core (2 s at n = 100, 2 s at n = 200)
REPORT_MAX_N, REPORT_N_SECONDS = 1000, (400, 11.0)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report", help="the verification report, verdict first (HTML, Markdown, JSON, figures)",
        description="One verdict table per paper (each main theorem and its variants: conditions at the paper's "
                    "settings, stated against derived rate, bound-holds verdict on exact problems, bound against "
                    "measured on a network with estimated constants, discrepancies), then the sections with their "
                    "figures. Progress on stderr.")
    p.add_argument("papers", nargs="*", metavar="PAPER",
                   help="only these papers in every section (default: all, plugins' included), e.g. dfedsam")
    p.add_argument("--out", default="report", help="directory for report.html, report.md, report.json and figures")
    p.add_argument("--no-train", action="store_true", help="skip the DFedSAM least-squares runs (sections 5-7)")
    p.add_argument("--no-verify", action="store_true", help="skip the verification runs on exact problems")
    p.add_argument("--no-network", action="store_true", help="skip the digits network of each paper")
    p.add_argument("--size", choices=("quick", "default"), default="default", help="size of the verification runs")
    p.add_argument("--no-pep", action="store_true", help="skip the worst cases by performance estimation (~30 s)")
    p.add_argument("--no-claims", action="store_true", help="skip the papers' experimental claims")
    p.add_argument("--claims-size", choices=("quick", "default"), default="default",
                   help="size of the claims' runs (default: 5 seeds, 40 rounds of digits per arm)")
    p.add_argument("--verification", metavar="FILE",
                   help="take the verification results from this JSON file (dfltheory.verify.holds.verify's output) "
                        "instead of running them")
    p.add_argument("--n", type=int, default=100, help="number of clients for the topology table")
    p.set_defaults(func=_report)

    plot = subparsers.add_parser("plot", help="one comparison figure, saved to --out",
                                 description="Draw one figure and save it (PNG, PDF or SVG by the --out suffix).")
    kinds = plot.add_subparsers(dest="figure", required=True, metavar="FIGURE")
    b = kinds.add_parser("bound", help="bounds (or one bound's terms) over a range of one parameter")
    b.add_argument("ids", nargs="+", metavar="ID", help="theorem ids (see `dfltheory bounds list`)")
    b.add_argument("--x", required=True, help="the parameter on the x axis, e.g. lam, eta, T, Q")
    b.add_argument("--range", nargs=2, type=float, required=True, metavar=("LOW", "HIGH"))
    b.add_argument("--points", type=int, default=200)
    b.add_argument("--log-x", action="store_true", help="logarithmic x grid and axis")
    b.add_argument("--terms", action="store_true", help="one theorem: plot its terms and their sum")
    b.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE", help="every other symbol of the bounds")
    b.add_argument("--out", required=True, help="figure file")
    b.set_defaults(func=_plot_bound)
    r = kinds.add_parser("run", help="a training run's measured min_t of a quantity against a theorem's bound")
    r.add_argument("run", help="run directory written by `dfltheory train --out`")
    r.add_argument("id", help="theorem id, e.g. dfedsam.thm4.1")
    r.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE",
                   help="problem constants (L, sigma_l, ...); eta, K, m, rho, Q, alpha come from the run's "
                        "config.json and lambda from its topology unless given here; constants not given are "
                        "estimated from the run (`dfltheory constants RUN`), and the figure says which")
    r.add_argument("--key", default="grad_norm_sq", help="measured quantity in metrics.jsonl")
    r.add_argument("--out", required=True, help="figure file")
    r.set_defaults(func=_plot_run)
    t = kinds.add_parser("topology", help="a topology constant against the number of clients")
    t.add_argument("names", nargs="+", metavar="NAME")
    t.add_argument("--n", nargs="+", type=int, default=[16, 32, 64, 128, 256], help="sizes")
    t.add_argument("--key", default="spectral_gap", help="a key of `dfltheory topology NAME --json`")
    t.add_argument("--weights", default="metropolis")
    t.add_argument("--out", required=True, help="figure file")
    t.set_defaults(func=_plot_topology)
    d = kinds.add_parser("partition", help="each client's label distribution (stacked bars) and size n_i",
                         description="The training data of each client as a run with these options splits it: one "
                                     "bar per client, stacked by class, its height (and number) n_i.")
    d.add_argument("--dataset", default="digits", help="a classification data set: digits, mnist, fashion-mnist, "
                   "cifar10, cifar100 (torchvision files from --data-root; nothing is downloaded)")
    d.add_argument("--clients", "--n", dest="n", type=int, default=10, help="number of clients m")
    d.add_argument("--partition", default="dirichlet", help="dirichlet, pathological or iid")
    d.add_argument("--alpha", type=float, default=0.3, help="Dirichlet concentration")
    d.add_argument("--classes-per-client", type=int, default=2, help="classes per client (pathological)")
    d.add_argument("--seed", type=int, default=0, help="the data seed: a run's --data-seed (default its --seed)")
    d.add_argument("--data-params", default=None, help="the data set's options, e.g. fake=true,train_size=1000")
    d.add_argument("--data-root", default=None, help="directory of the torchvision data sets")
    d.add_argument("--out", required=True, help="figure file")
    d.set_defaults(func=_plot_partition)
    s = kinds.add_parser("landscape", help="a run's filter-normalised loss slice at x_bar (Li et al. 2018)",
                         description="The training loss f on a line or plane through the run's average model x_bar "
                                     "along random filter-normalised directions (Li et al. 2018), on a fixed "
                                     "evaluation batch of every client's data: DFedSAM's Fig. 2 "
                                     "(dfltheory.verify.landscape).")
    s.add_argument("run", metavar="RUN", help="a run directory written by `dfltheory train --out`")
    s.add_argument("--dims", type=int, choices=(1, 2), default=2, help="a line (1) or a plane (2)")
    s.add_argument("--points", type=int, default=21, help="grid points per axis (2 to 201)")
    s.add_argument("--span", type=float, default=1.0, help="the grid covers [-SPAN, SPAN] times each direction")
    s.add_argument("--per-client", type=int, default=128, help="evaluation samples per client")
    s.add_argument("--seed", type=int, default=0, help="seed of the evaluation batch and of the directions")
    s.add_argument("--bias", choices=("zero", "copy"), default="zero",
                   help="direction on biases and norm scales: zero (Li et al.'s --xignore biasbn) or the parameter")
    s.add_argument("--sharpness", action="store_true",
                   help="also the top Hessian eigenvalue at x_bar on the same batch (printed, and in the figure)")
    s.add_argument("--out", required=True, help="figure file")
    s.set_defaults(func=_plot_landscape)


def _report(args) -> int:
    """Every input checked before any work; exit 0 once the report is written, its failures counted on the last
    line (a failed case is in the report, not an exit status)."""
    from dfltheory.figures.report import build_report
    from dfltheory.paths import output_dir
    from dfltheory.verify.report_data import check_papers

    papers = check_papers(args.papers)
    check_report_n(args.n)
    output_dir(args.out, "--out")
    verify = not args.no_verify
    if args.verification:
        verify = verification_file(args.verification)
    rep = build_report(args.out, train=not args.no_train, n=args.n, verify=verify, size=args.size,
                       network=not args.no_network, pep=not args.no_pep, claims=not args.no_claims,
                       claims_size=args.claims_size, papers=papers)
    print(Path(args.out) / "report.html")
    if rep["failures"]:
        print(f"{len(rep['failures'])} failure{'s' * (len(rep['failures']) != 1)} recorded in the report (its header "
              "lists them with the commands that reproduce them)")
    return 0


def check_report_n(n: int) -> None:
    """``--n`` of the topology table within reach: refused above :data:`REPORT_MAX_N` with the time it would take."""
    from dfltheory.topology.checks import arguments

    arguments(cli=True, n=n)
    if n > REPORT_MAX_N:
        at, seconds = REPORT_N_SECONDS
        need = seconds * (n / at) ** 3
        when = (f"{need / 3600:.0f} hours" if need < 86400 * 2 else f"{need / 86400:,.0f} days" if need < 86400 * 730
                else f"{need / 86400 / 365:,.0f} years")
        raise ValueError(f"--n {n:,}: the topology table computes dense constants (about n^3 flops) of six "
                         f"topologies: about {seconds:g} s at n = {at}, so about {when} at n = {n:,}; give --n at "
                         f"most {REPORT_MAX_N:,} (`dfltheory topology NAME --n N` computes one topology at larger n)")


def verification_file(path: str) -> dict:
    """The verification results in ``path`` (``dfltheory verify --json``'s output), checked before any work: a
    JSON object whose 'verdicts' is a list of objects with 'theorem', 'paper' and 'verdict', and which the report's
    verification section can show; otherwise one line naming what is wrong."""
    from dfltheory.empirical.rundir import read_json
    from dfltheory.figures.render import _verification
    from dfltheory.figures.verdicts import exact_cell

    fix = "give the JSON that dfltheory.verify.holds.verify returns (dfltheory verify --json > FILE)"
    if not Path(path).is_file():
        raise ValueError(f"--verification {path}: no such file; {fix}")
    ver = read_json(path, fix)
    head = f"--verification {path}: not verification results"
    if not isinstance(ver, dict) or "verdicts" not in ver:
        raise ValueError(f"{head} (a JSON object with 'verdicts'); {fix}")
    verdicts = ver["verdicts"]
    if not isinstance(verdicts, list):
        raise ValueError(f"{head}: 'verdicts' is {type(verdicts).__name__} {json_short(verdicts)}, not a list of "
                         f"verdicts; {fix}")
    for k, v in enumerate(verdicts):
        missing = [key for key in ("theorem", "paper", "verdict") if not isinstance(v, dict) or key not in v]
        if missing:
            raise ValueError(f"{head}: verdict {k} ({json_short(v)}) lacks {', '.join(missing)}; {fix}")
    for key, kind in (("rates", list), ("topology", list), ("informative", list), ("horizons", list),
                      ("mutations", list), ("figures", dict), ("seeds", list)):
        if key in ver and not isinstance(ver[key], kind):
            raise ValueError(f"{head}: '{key}' is {type(ver[key]).__name__}, not a {kind.__name__}; {fix}")
    try:  # what the report will do with it, now rather than after the other stages
        _verification(ver)
        for v in verdicts:
            exact_cell(v["theorem"], ver)
    except (TypeError, KeyError, AttributeError, ValueError, IndexError) as err:
        raise ValueError(f"{head}: the report cannot read it ({type(err).__name__}: {' '.join(str(err).split())}); "
                         f"{fix}") from None
    return ver


def json_short(value, width: int = 60) -> str:
    import json

    text = json.dumps(value, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def _save(ax, out: str) -> int:
    from dfltheory.figures.axes import save_figure

    print(f"wrote {save_figure(ax, out)}")
    return 0


def _check_out(out: str) -> None:
    """The figure file can be written (its missing directories are created) and has a type matplotlib writes."""
    import matplotlib.pyplot as plt

    from dfltheory.paths import output_file

    if Path(out).is_dir():
        output_file(out, "--out")  # raises: a directory, not a file name
    kinds = plt.gcf().canvas.get_supported_filetypes()
    plt.close()
    suffix = Path(out).suffix.lower().lstrip(".")
    if suffix not in kinds:
        order = ["png", "pdf", "svg"] + sorted(set(kinds) - {"png", "pdf", "svg"})
        raise ValueError(f"--out {out}: unknown figure type {suffix or '(no suffix)'!r}; end the name with a type "
                         f"matplotlib writes: {', '.join('.' + k for k in order)}")
    output_file(out, "--out")


def _plot_bound(args) -> int:
    import numpy as np

    from dfltheory.bounds.commands import parse_assignments
    from dfltheory.figures import plot_bound, plot_bound_terms

    _check_out(args.out)
    low, high = args.range
    if not 2 <= args.points <= MAX_POINTS:
        raise ValueError(f"--points must be an integer from 2 to {MAX_POINTS:,} (a curve's grid), got {args.points}")
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high or (args.log_x and low <= 0):
        raise ValueError(f"--range {low} {high}: need finite LOW < HIGH, and LOW > 0 with --log-x")
    grid = np.geomspace(low, high, args.points) if args.log_x else np.linspace(low, high, args.points)
    values = parse_assignments(args.set)
    if args.terms:
        if len(args.ids) != 1:
            raise ValueError("--terms draws the terms of one theorem; give one ID")
        ax = plot_bound_terms(args.ids[0], args.x, grid, values)
    else:
        ax = plot_bound(args.ids, args.x, grid, values)
    if args.log_x:
        ax.set_xscale("log")
    return _save(ax, args.out)


def _plot_run(args) -> int:
    from dfltheory.bounds import get
    from dfltheory.bounds.commands import parse_assignments
    from dfltheory.empirical.rundir import read_records
    from dfltheory.figures import plot_predicted_vs_measured
    from dfltheory.verify.report_data import run_values

    _check_out(args.out)
    thm = get(args.id)
    read_records(Path(args.run) / "metrics.jsonl")  # a damaged file names itself before anything is drawn
    values = {k: v for k, v in run_values(args.run).items() if k in thm.required}
    given = parse_assignments(args.set)
    values.update(given)
    estimated = {}
    missing = [k for k in thm.required if k not in values and k != "T"]
    if missing:  # the problem constants nobody knows for a network: local estimates along the run
        from dfltheory.empirical.rundir import read_json
        from dfltheory.verify.estimators import SYMBOLS, estimate_run, paper_of

        algo = read_json(Path(args.run) / "config.json", "train the run again").get("algo")
        unknown = [k for k in missing if k not in SYMBOLS[paper_of(algo)]]
        if unknown:  # named now, before the estimates (minutes) that could not give them
            raise ValueError(f"{thm.id} needs {', '.join(unknown)}, which neither the run's config nor its estimates "
                             f"give; pass --set {' '.join(f'{k}=VALUE' for k in unknown)}")

        found = estimate_run(args.run).values()
        estimated = {k: found[k] for k in missing if k in found}
        values.update(estimated)
    ax = plot_predicted_vs_measured(Path(args.run) / "metrics.jsonl", thm, values, key=args.key)
    ax.set_title(f"{Path(args.run).name}: measured against {thm.id}")
    lines = [f"given: {', '.join(sorted(given))}" if given else "",
             f"estimated from the run (local, not certified): {', '.join(sorted(estimated))}" if estimated else ""]
    if any(lines):
        ax.figure.text(0.01, 0.005, "; ".join(x for x in lines if x), fontsize=6, va="bottom")
    if estimated:
        print("estimated from the run: " + ", ".join(f"{k} = {v:.4g}" for k, v in sorted(estimated.items())))
    return _save(ax, args.out)


def _plot_topology(args) -> int:
    from dfltheory.figures import plot_topology_constants

    from dfltheory.topology import KEYS
    from dfltheory.topology.checks import arguments

    _check_out(args.out)
    for n in args.n:
        arguments(cli=True, n=n)
    if args.key not in KEYS:
        raise ValueError(f"--key {args.key!r} is not a topology constant; give one of {', '.join(KEYS)}")
    ax = plot_topology_constants(args.names, args.n, key=args.key, weights=args.weights)
    return _save(ax, args.out)


def _plot_partition(args) -> int:
    from dfltheory.empirical.commands import parse_data_params
    from dfltheory.figures.partition import plot_partition

    _check_out(args.out)
    try:
        ax = plot_partition({"dataset": args.dataset, "n": args.n, "partition": args.partition, "alpha": args.alpha,
                             "classes_per_client": args.classes_per_client, "seed": args.seed,
                             "data_params": parse_data_params(args.data_params), "data_root": args.data_root})
    except FileNotFoundError as err:
        raise ValueError(f"{err} (give --data-root DIR where the files are; `dfltheory train --download` fetches "
                         "them)") from None
    return _save(ax, args.out)


def _plot_landscape(args) -> int:
    from dfltheory.figures.landscape import plot_run_landscape

    _check_out(args.out)
    path, top = plot_run_landscape(args.run, args.out, dims=args.dims, points=args.points, span=args.span,
                                   per_client=args.per_client, seed=args.seed, bias=args.bias,
                                   sharpness=args.sharpness)
    if top is not None:
        print(f"lambda_max = {top['lambda_max']:.6g} (Hessian of f at x_bar, {top['batch']} samples; residual "
              f"{top['residual']:.2g})")
    print(f"wrote {path}")
    return 0
