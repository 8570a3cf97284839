"""The worst case of an algorithm by performance estimation (PEP), next to the theorem's bound.

The worst case of the theorem's quantity (min_{t<T} ||grad f(x_bar^t)||^2, or DFedADMM's average at w^t) over every
L-smooth f_1..f_m meeting the assumptions (PEP, see docs/pep.md), the bound at sigma_l = 0 of the theorem covering
the algorithm (dfedsam.thm4.1, dfedadmm.thm1) and the ratio bound / worst case.
"""

from __future__ import annotations

import json
import sys

from dfltheory.pep.command_line import SETTABLE, equivalent_command  # noqa: F401  (re-exported)

EXIT_CODES = """exit codes:
  0  worst case computed (and the bound, where a theorem covers the instance, is above it)
  1  the theorem's bound is below the worst case: a candidate counter-example (see docs/pep.md)
  2  bad input or a problem too large: one line on stderr
  3  the SDP solve failed or was inaccurate: no worst case is reported"""

CERTIFY_DOC = ("A bound on the theorem's quantity for every T from a Lyapunov certificate found by a one-round SDP "
               "(dfltheory.pep.certify), next to the fixed-T worst case (PEP) and the theorem's bound")
CERTIFY_EXIT_CODES = """exit codes:
  0  a certificate at every horizon (each at least the fixed-T worst case where that was solved)
  1  a certificate's bound is BELOW the fixed-T worst case: a bug (see docs/pep.md)
  2  bad input or a problem too large: one line on stderr
  3  no certificate at any horizon (every rung of the retry ladder failed): the causes on stderr
  4  certificates at some horizons, failures at others: both printed, each failure with its cause
with --tune: 0 a best step among the solved evaluations (failed ones listed), 3 every evaluation failed"""
#: the horizons of ``dfltheory certify`` without --T
HORIZONS = (3, 5, 10, 20)


def register(subparsers) -> None:
    """Add the ``pep`` and ``certify`` subcommands (the PEP models a plugin registered among their choices)."""
    import argparse

    from dfltheory.pep.problem import ALGORITHMS, GAPS, HETEROGENEITY_AT

    p = subparsers.add_parser("pep", help="worst case by performance estimation (PEP) vs the theorem's bound",
                              description=__doc__.split("\n\n")[0], epilog=EXIT_CODES,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("algorithm", choices=sorted(ALGORITHMS),
                   help="; ".join(f"{k}: {v[1]}" for k, v in ALGORITHMS.items()))
    p.add_argument("--m", type=int, default=None, help="number of agents (default: --n of the topology, or 3)")
    p.add_argument("--K", type=int, default=1, help="local steps per round (default 1)")
    p.add_argument("--T", type=int, default=3, help="rounds: the min (or average) runs over the T round-start points "
                                                   "(default 3)")
    p.add_argument("--eta", type=float, required=True, help="local step size (with --tune: the largest searched)")
    p.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE",
                   help="L, f0_minus_fstar (Delta), sigma_g, B, rho, Q, lam_pen (DFedADMM's and DFedCata's penalty), "
                        "beta (DFedCata's extrapolation), alpha (DFedSGPM's momentum) "
                        "(default L=1 f0_minus_fstar=1 rho=0 Q=1; sigma_g and B are not imposed unless given; "
                        "sigma_l must be 0)")
    _mixing_options(p)
    p.add_argument("--gap", choices=GAPS, default="fstar",
                   help="fstar: f(x^0) - f* <= Delta (the theorems'); last: f(x^0) - f(x_bar^{T-1}) <= Delta (PEPit's)")
    p.add_argument("--heterogeneity-at", choices=HETEROGENEITY_AT, default="averages",
                   help="where sigma_g is imposed: at every x_bar^t (default) or at every queried point (larger SDP)")
    p.add_argument("--sweep", metavar="NAME=V1,V2,...",
                   help="a table along lambda (with --lambda: W = LAM I + (1 - LAM) 11^T/m; with --lambda-range: the "
                        "class [-LAM, LAM]) or along T, e.g. --sweep lambda=0,0.5,0.9")
    p.add_argument("--figure", metavar="FILE", help="with --sweep: save worst case and bound against it (.png, .pdf)")
    p.add_argument("--tune", choices=["eta"],
                   help="the step in (0, --eta] minimising the worst case at --T (a grid, then a golden-section "
                        "search), with the curve over eta and the largest step the theorem admits")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)
    _register_certify(subparsers)


def _mixing_options(p) -> None:
    """The mixing options of ``pep`` and ``certify`` (read by :func:`_mixing`)."""
    mix = p.add_mutually_exclusive_group(required=True)
    mix.add_argument("--topology", metavar="NAME",
                     help="explicit W (push-sum: P) of this topology on --n (= --m) agents; NAME:key=value,... sets "
                          "its parameters (random:k=1,direction=undirected); a time-varying topology (random, "
                          "neighbour-selection, one-peer-exponential, ...) draws one matrix per round (--seed)")
    mix.add_argument("--matrix", metavar="FILE",
                     help="explicit W (push-sum: P) from a .npy, .csv or .mtx file; a .npy of shape (S, m, m) is a "
                          "sequence, W_t in round t (S >= T - 1)")
    mix.add_argument("--lambda-range", nargs=2, type=float, metavar=("LO", "HI"),
                     help="spectral class: every symmetric doubly stochastic W with nonunit eigenvalues in [LO, HI] "
                          "(push-sum on such a W keeps its weights at 1: the class applies to it too)")
    mix.add_argument("--lambda", dest="lam", type=float, metavar="LAM",
                     help="explicit W = LAM I + (1 - LAM) 11^T/m (every nonunit eigenvalue LAM)")
    p.add_argument("--time-varying", action="store_true",
                   help="with --lambda-range: every sequence of matrices of the class, a new W at each gossip step "
                        "(the papers' random topologies); without it one W serves every step")
    p.add_argument("--n", type=int, default=None, help="agents of --topology (default --m)")
    p.add_argument("--weights", default="default", help="mixing-weight rule of --topology (default: its own)")
    p.add_argument("--seed", type=int, default=0, help="seed of a random topology (its draws of rounds 0..T-1)")


def _register_certify(subparsers) -> None:
    """Add the ``certify`` subcommand (dfltheory.pep.certify: Lyapunov certificates for every T)."""
    import argparse

    from dfltheory.pep.certify import COVERED
    from dfltheory.pep.problem import ALGORITHMS

    p = subparsers.add_parser("certify", help="a bound for every T by a Lyapunov certificate (one-round SDP) vs the "
                                              "worst case and the theorem", description=CERTIFY_DOC,
                              epilog=CERTIFY_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("algorithm", choices=sorted(ALGORITHMS),
                   help=f"covered: {', '.join(COVERED)} (push-sum on a symmetric W or the class)")
    p.add_argument("--m", type=int, default=None, help="number of agents (default: --n of the topology, or 3)")
    p.add_argument("--K", type=int, default=1, help="local steps per round (default 1)")
    p.add_argument("--eta", type=float, required=True, help="local step size (with --tune: the largest searched)")
    p.add_argument("--T", dest="horizons", type=int, nargs="+", default=None, metavar="T",
                   help="horizons: a certificate optimised for each, its bound there (default 3 5 10 20)")
    p.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE", help="as for pep: L, f0_minus_fstar, sigma_g, "
                                                                            "B, rho, Q, lam_pen, beta, alpha")
    _mixing_options(p)
    p.add_argument("--worst-case-max-T", type=int, default=10, metavar="T",
                   help="solve the fixed-T worst case (and the ratio) at the horizons up to this T (default 10; 0: "
                        "none)")
    p.add_argument("--tune", choices=["eta"],
                   help="the step in (0, --eta] minimising the certificate's bound at the one --T given (its floor "
                        "without --T), with the curve over eta and the largest step the theorem admits")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_certify, sweep=None)


def _load_sequence(path):
    """An (S, m, m) stack from a .npy file, or None when the file holds one matrix (or is not a .npy)."""
    import numpy as np

    from dfltheory.topology.files import check_file_matrix

    if not str(path).lower().endswith(".npy"):
        return None
    try:
        A = np.load(path, allow_pickle=False)
    except Exception:  # load_matrix reports an unreadable file with its fix
        return None
    if A.ndim != 3:
        return None
    if A.shape[0] < 1 or A.shape[1] != A.shape[2] or A.shape[1] < 2:
        raise ValueError(f"matrix file {str(path)!r}: a sequence must have shape (S, m, m) with S >= 1 and m >= 2, "
                         f"got {A.shape}")
    for s, W in enumerate(A):  # every round's matrix checked as a single matrix file is
        check_file_matrix(W, path, where=f", matrix {s} of the sequence")
    return np.asarray(A, dtype=float)


def _solve_failed(err, kw: dict, command: str = "pep", eta: float | None = None) -> int:
    """Exit 3: the cause of the failed solve and the fix in the command's options; without sigma_g and B the usual
    cause is an unbounded worst case; a cause the instance explains (a disconnected W, ...) carries its own fix."""
    cause = " ".join(err.cause.split())
    step = (eta or 0.0) * kw.get("L", 1.0)
    fix = ("without a heterogeneity bound (sigma_g) or a gradient bound (B) the worst case may be unbounded: give "
           "--set sigma_g=... or B=..." if kw.get("sigma_g") is None and kw.get("B") is None else
           "" if "; use " in cause else
           f"eta L = {step:g} > 1 and every theorem asks eta L < 1: try a smaller --eta" if step > 1 else
           "try a smaller --K or --T")
    print(f"dfltheory {command}: error: {cause}" + (f": {fix}" if fix else ""), file=sys.stderr)
    return 3


def _sweep_values(args) -> tuple[str | None, list[float]]:
    """(NAME, [V1, V2, ...]) of --sweep NAME=V1,V2,..., each T an integer >= 1; (None, []) without --sweep."""
    from dfltheory.pep.sweep import SWEEPABLE

    if not args.sweep:
        return None, []
    name, sep, text = args.sweep.partition("=")
    if not sep or name not in SWEEPABLE:
        raise ValueError(f"--sweep expects NAME=V1,V2,... with NAME one of {SWEEPABLE}, got {args.sweep!r}")
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--sweep {name}: {text!r} is not a comma-separated list of numbers") from None
    if not values:
        raise ValueError(f"--sweep {name}: give at least one value")
    bad = [v for v in values if name == "T" and not (v.is_integer() and v >= 1)]
    if bad:
        raise ValueError(f"--sweep T: {bad[0]:g} is not an integer >= 1 (a number of rounds)")
    return name, values


def _rounds(args) -> int:
    """Rounds to draw from a time-varying topology: T, or the largest T of a --sweep T=..."""
    name, values = _sweep_values(args)
    return max([args.T, 1] + [int(v) for v in values if name == "T"])


def _mixing(args):
    """(W or None, spectral or None, m, lam, description) from the mixing options; W may be an (S, m, m) sequence."""
    import numpy as np

    from dfltheory.parsing import parse_spec
    from dfltheory.pep.mixing import ExplicitMixing
    from dfltheory.pep.sweep import W_lambda
    from dfltheory.topology import build, load_matrix

    if args.m is not None and args.m < 2:  # one agent has no mixing (PEPit's centralized methods cover it)
        raise ValueError(f"--m must be at least 2 agents for a decentralized PEP, got {args.m}")
    if args.lam is not None:
        if args.n is not None or args.weights != "default":
            raise ValueError("--lambda gives the matrix LAM I + (1 - LAM) 11^T/m: drop --n and --weights")
        m = args.m or 3
        return W_lambda(m, args.lam), None, m, abs(args.lam), f"W = {args.lam:g} I + {1 - args.lam:g} 11^T/{m}"
    if args.lambda_range is not None:
        if args.n is not None or args.weights != "default":
            raise ValueError("--lambda-range gives a class of matrices: drop --n and --weights")
        lo, hi = args.lambda_range
        return None, (lo, hi), args.m or 3, max(abs(lo), abs(hi)), (
            f"{'time-varying ' if args.time_varying else ''}spectral class [{lo:g}, {hi:g}]")
    if args.matrix:
        if args.n is not None or args.weights != "default":
            raise ValueError("--matrix FILE gives the whole mixing matrix: drop --n and --weights")
        W = _load_sequence(args.matrix)
        if W is None:
            W = load_matrix(args.matrix)
            W = W.toarray() if hasattr(W, "toarray") else np.asarray(W)
            source = f"matrix {args.matrix}"
        else:
            source = f"matrix sequence {args.matrix} ({W.shape[0]} rounds)"
    else:
        n = args.n if args.n is not None else (args.m or 3)
        name, params = parse_spec(args.topology)
        topo = build(name, n, weights=args.weights, seed=args.seed, **params)
        if topo.time_varying:  # one draw per round: W_t of round t = 0..T-1 (the PEP uses the first T - 1)
            W = np.stack([topo.matrix(t) for t in range(_rounds(args))])
            source = f"topology {args.topology} (n = {n}, seed {args.seed}, a new draw in each of {W.shape[0]} rounds)"
        else:
            W = topo.matrix()
            source = f"topology {args.topology} (n = {n})"
    m = W.shape[-1]
    if args.m is not None and args.m != m:
        raise ValueError(f"--m {args.m} but the mixing matrix is {m} x {m}; drop --m or match it")
    try:  # symmetric: lambda (the largest over a sequence's rounds); push-sum's P: no lambda
        lam = ExplicitMixing(W[: max(args.T - 1, 1)] if W.ndim == 3 else W).lam()
    except ValueError:
        lam = None
    return W, None, m, lam, source


def _settings(items):
    from dfltheory.bounds.commands import parse_assignments

    values = parse_assignments(items)
    unknown = set(values) - set(SETTABLE)
    if unknown:
        raise ValueError(f"--set {sorted(unknown)}: unknown; use {', '.join(sorted(SETTABLE))}")
    if values.get("sigma_l", 0.0) != 0.0:
        raise ValueError("sigma_l must be 0: PEP is deterministic (stochastic noise is outside it)")
    if "Delta" in values and "f0_minus_fstar" in values:
        raise ValueError("give one of Delta and f0_minus_fstar (the same constant)")
    kw = {SETTABLE[k]: v for k, v in values.items() if SETTABLE[k]}
    if "Q" in kw:
        if not (kw["Q"].is_integer() and kw["Q"] >= 1):
            raise ValueError(f"--set Q must be an integer >= 1 (gossip steps per round), got {kw['Q']:g}")
        kw["Q"] = int(kw["Q"])
    return kw


def _options(args) -> dict:
    """The keywords of ``--set`` and ``--time-varying`` (pep's and certify's), the seed checked."""
    kw = _settings(args.set)
    if args.time_varying:
        if args.lambda_range is None:
            raise ValueError("--time-varying applies to --lambda-range (a class); an explicit time-varying mixing is "
                             "--topology NAME of a time-varying topology or --matrix FILE.npy of shape (S, m, m)")
        kw["time_varying"] = True
    if args.seed < 0:
        raise ValueError(f"--seed must be an integer >= 0 (the random topology's seed), got {args.seed}")
    return kw


def run(args) -> int:
    from dfltheory.parsing import jsonable
    from dfltheory.pep.compare import compare
    from dfltheory.pep.problem import MAX_GRAM, PEPSolveError, count_text, estimate_size, metric_text, worst_case

    kw = _options(args)
    if args.figure and not args.sweep:
        raise ValueError("--figure draws a --sweep: add --sweep lambda=... or --sweep T=...")
    agents = args.m if args.m is not None else args.n
    if agents is not None and agents >= 1 and args.K >= 1 and args.T >= 1:
        # refused before the mixing matrix (m x m) is built: the smallest PEP of these m, K, T (issue 24)
        size = estimate_size(args.algorithm, agents, args.K, _rounds(args))
        if size.gram > MAX_GRAM:
            raise ValueError(f"PEP too large: Gram matrix {count_text(size.gram)} x {count_text(size.gram)} at m = "
                             f"{count_text(agents)}, K = {count_text(args.K)}, T = {count_text(_rounds(args))} (limit "
                             f"{MAX_GRAM}); reduce m, K or T (--m or --n, --K, --T)")
    if args.tune and (args.sweep or args.figure):
        raise ValueError("--tune searches eta at one T: drop --sweep and --figure")
    W, spectral, m, lam, source = _mixing(args)
    if args.tune:
        mixing = dict(W=W) if W is not None else dict(spectral=spectral)
        return _tune(args, "worst_case", args.T, m, source, dict(kw, gap=args.gap,
                                                                 heterogeneity_at=args.heterogeneity_at, **mixing))
    if args.sweep:
        # a sequence's lambda depends on the rounds used: compare takes it from each PEP's mixing
        return _sweep(args, kw, W, spectral, m, None if getattr(W, "ndim", 2) == 3 else lam, source)
    try:
        result = worst_case(args.algorithm, m, args.K, args.T, args.eta, W=W, spectral=spectral, gap=args.gap,
                            heterogeneity_at=args.heterogeneity_at, **kw)
    except PEPSolveError as err:
        return _solve_failed(err, kw, eta=args.eta)
    cmp = compare(result, lam)
    code = 1 if cmp["finding"] else 0
    if args.json:
        print(json.dumps(jsonable({"mixing": source, **cmp, "pep": result.to_dict()}), indent=1))
        return code
    s = result.settings
    penalty = "".join(f", {k} = {s[k]:g}" for k in ("lam_pen", "beta", "alpha") if s.get(k) is not None)
    print(f"{args.algorithm}: m = {m}, K = {s['K']}, T = {s['T']}, Q = {s['Q']}, eta = {s['eta']:g}, L = {s['L']:g}, "
          f"Delta = {s['Delta']:g}, sigma_g = {s['sigma_g']}, B = {s['B']}, rho = {s['rho']:g}{penalty}; {source}, "
          + (f"lambda = {lam:.6g}" if lam is not None else "column-stochastic (push-sum)")
          + (" (the largest over the rounds' W_t)" if lam is not None and getattr(W, "ndim", 2) == 3 else ""))
    print(f"  worst case of {metric_text(args.algorithm)}: {result.value:.6g}   (PEP, {result.solver} {result.status}, "
          f"{result.seconds:.2f} s, Gram {result.size.gram} x {result.size.gram}, {result.size.constraints} "
          f"constraints)")
    if cmp["bound"] is None:
        print(f"  {cmp['theorem']} at sigma_l = 0: no bound ({cmp['reason']})" if cmp["theorem"] else
              f"  no bound: {cmp['reason']}")
    elif cmp["ratio"] is None:
        print(f"  {cmp['theorem']} at sigma_l = 0: {cmp['bound']:.6g}, not compared ({cmp['reason']})")
    else:
        print(f"  {cmp['theorem']} at sigma_l = 0, rho = {s['rho']:g}: {cmp['bound']:.6g}   ratio bound / worst case = "
              f"{cmp['ratio']:.4g}" + (f"   ({cmp['reason']})" if "xi_weight" in cmp else ""))
        for name, v in cmp["terms"].items():
            print(f"    {name:>14} = {v:.6g}")
    for v in cmp["variants"]:
        if v["bound"] is None:
            text = f"no bound ({v['reason']})"
        elif v["ratio"] is None:
            text = f"{v['bound']:.6g}   not compared ({v['reason']})"
        else:
            text = f"{v['bound']:.6g}   ratio {v['ratio']:.4g}" + (f"   ({v['reason']})" if "xi_weight" in v else "")
        print(f"  variant {v['theorem']:<36} {text}" + ("   <- BELOW the worst case" if v["finding"] else ""))
    if cmp["finding"]:
        i = cmp.get("interpolation") or {}
        verdict = ("its worst-case example passes the interpolation check (L-smooth functions through the extracted "
                   "points exist and realize the value; largest relative violation "
                   f"{max(v for k, v in i.items() if k not in ('recomputed', 'points', 'interpolable', 'tol')):.1e})"
                   if i.get("interpolable") else "its worst-case example FAILS the interpolation check: " + str(i))
        print("  a bound is BELOW the PEP worst case: a candidate counter-example; " + verdict +
              " (what the check leaves open: docs/pep.md)")
    return code


def _sweep(args, kw, W, spectral, m, lam, source) -> int:
    from dfltheory.parsing import jsonable
    from dfltheory.paths import output_file
    from dfltheory.pep.problem import PEPSolveError
    from dfltheory.pep.sweep import plot, sweep

    name, values = _sweep_values(args)
    if name == "lambda" and args.lam is None and args.lambda_range is None:
        raise ValueError("--sweep lambda needs --lambda (the explicit W(LAM) family) or --lambda-range (the class)")
    figure = output_file(args.figure, "--figure") if args.figure else None
    try:
        rows = sweep(name, values, args.algorithm, m, args.K, args.T, args.eta, lam=lam, W=W, spectral=spectral,
                     cls=args.lambda_range is not None, gap=args.gap, heterogeneity_at=args.heterogeneity_at, **kw)
    except PEPSolveError as err:
        return _solve_failed(err, kw)
    if figure:
        plot(rows, figure, title=f"{args.algorithm}, m = {m}, K = {args.K}" + (f", T = {args.T}" if name != "T" else "")
             + f", eta = {args.eta:g}")
    code = 1 if any(r["finding"] for r in rows) else 0
    if args.json:
        print(json.dumps(jsonable({"mixing": source if name == "T" else
                                   ("class [-lam, lam]" if args.lambda_range is not None else "W(lam)"),
                                   "rows": rows}), indent=1))
        return code
    fixed = f", T = {args.T}" if name != "T" else ""
    print(f"{args.algorithm}: m = {m}, K = {args.K}{fixed}, eta = {args.eta:g}; {source if name == 'T' else ''}"
          f"{'; ' if name == 'T' else ''}sweep over {name}")
    print(f"  {name:>8} {'worst case':>12} {'bound':>12} {'ratio':>10} {'seconds':>8}")
    for r in rows:
        bound = f"{r['bound']:12.6g}" if r["bound"] is not None else f"{'none':>12}"
        ratio = f"{r['ratio']:10.4g}" if r["ratio"] is not None else f"{'-':>10}"
        print(f"  {r['value']:>8g} {r['worst_case']:12.6g} {bound} {ratio} {r['seconds']:8.2f}"
              + ("  <- bound below the worst case" if r["finding"] else ""))
    if rows[0]["bound"] is None:
        print(f"  no bound: {rows[0]['reason']}")
    if figure:
        print(f"  figure: {figure}")
    return code


def run_certify(args) -> int:
    """``dfltheory certify``: the floor certificate, then per horizon the certificate optimised there, its bound,
    the fixed-T worst case (T <= --worst-case-max-T) and the theorem's bound, with the ratios."""
    from dfltheory.parsing import jsonable
    from dfltheory.pep.certify import certificate_table, certify, check_size
    from dfltheory.pep.problem import PEPSolveError

    kw = _options(args)
    if args.worst_case_max_T < 0:
        raise ValueError(f"--worst-case-max-T must be an integer >= 0 (0: no worst case), got {args.worst_case_max_T}")
    if args.tune and args.horizons is not None and len(args.horizons) > 1:
        raise ValueError("--tune eta minimises the bound at one horizon: give one --T, or none for the floor")
    horizons = list(args.horizons or HORIZONS)
    if min(horizons) < 1:
        raise ValueError(f"--T {min(horizons)} is not a number of rounds; give integers >= 1")
    agents = args.m if args.m is not None else args.n
    if agents is not None and agents >= 1 and args.K >= 1:  # refused before an m x m mixing matrix is built
        check_size(args.algorithm, agents, args.K, kw.get("Q", 1), args.lambda_range is not None)
    args.T = max(horizons)  # the rounds a time-varying topology draws (the certificate holds for every order)
    W, spectral, m, _, source = _mixing(args)
    mixing = dict(W=W) if W is not None else dict(spectral=spectral)
    if args.tune:
        return _tune(args, "certificate", args.horizons[0] if args.horizons else None, m, source, dict(kw, **mixing))
    try:
        floor, floor_error = certify(args.algorithm, m, args.K, args.eta, **kw, **mixing), None
    except PEPSolveError as err:
        floor, floor_error = None, err
    rows = certificate_table((args.algorithm,), m, args.K, args.eta, horizons, args.worst_case_max_T, **kw, **mixing)
    solved = [r for r in rows if r["status"] != "failed"]
    failed = [r for r in rows if r["status"] == "failed"]
    code = 1 if any(r["below_worst_case"] for r in solved) else 3 if not solved else 4 if failed or floor_error else 0
    if args.json:
        print(json.dumps(jsonable({"mixing": source, "floor": floor.to_dict() if floor else None,
                                   "floor_error": str(floor_error) if floor_error else None, "rows": rows}),
                         indent=1))
        return code
    if not solved:
        print(f"dfltheory certify: error: no certificate at any horizon: {failed[0]['error']}", file=sys.stderr)
        return code
    s = dict(solved[0], Q=kw.get("Q", 1), L=kw.get("L", 1.0), Delta=kw.get("Delta", 1.0),
             **{k: kw.get(k) for k in ("sigma_g", "B", "lam_pen", "beta", "alpha")}, rho=kw.get("rho", 0.0))
    extra = "".join(f", {k} = {s[k]:g}" for k in ("lam_pen", "beta", "alpha") if s.get(k) is not None)
    print(f"{args.algorithm}: m = {m}, K = {s['K']}, Q = {s['Q']}, eta = {s['eta']:g}, L = {s['L']:g}, Delta = "
          f"{s['Delta']:g}, sigma_g = {s['sigma_g']}, B = {s['B']}, rho = {s['rho']:g}{extra}; {source}")
    from dfltheory.pep.certify import POTENTIALS
    from dfltheory.pep.problem import LIKE, metric_text

    family, agent, common = POTENTIALS[LIKE.get(args.algorithm, args.algorithm)]
    print(f"  potential '{family}': V_t = a (f(p^t) - f*) + (1/m) sum_i u_i^T P u_i"
          + (" + c^T R c" if common else "") + f", u_i = ({', '.join(agent)})"
          + (f", c = ({', '.join(common)})" if common else "") + f"; bounds {metric_text(args.algorithm)}")
    if floor is not None:
        print(f"  floor (T -> inf): e/tau = {floor.floor:.6g}   (a = 1, c = {floor.c:.4g}, tau = {floor.tau:.4g}, "
              f"e = {floor.e:.4g}; SDP {floor.seconds * 1e3:.0f} ms, exact check {floor.check['exact_check']}, "
              + (f"verifying PEP residual {floor.check['residual']:.1e})" if floor.check["residual"] is not None else
                 f"verifying PEP failed: {floor.check['check_error']})"))
    else:
        print(f"  floor (T -> inf): FAILED ({' '.join(str(floor_error).split())})")
    theorem = solved[0]["theorem"]
    print(f"  {'T':>6} {'certificate':>12} {'worst case':>11} {'ratio':>7} {theorem:>16} {'thm/cert':>9} "
          f"{'c':>9} {'tau':>9} {'e':>9} {'residual':>9} {'ms':>5}  exact check")
    for r in rows:
        if r["status"] == "failed":
            print(f"  {r['T']:>6} {'FAILED':>12}  {r['error']}")
            continue
        worst = f"{r['worst_case']:11.6g}" if r["worst_case"] is not None else f"{'-':>11}"
        ratio = f"{r['certificate_over_worst_case']:7.4f}" if r["certificate_over_worst_case"] else f"{'-':>7}"
        paper = f"{r['paper_bound']:16.6g}" if r["paper_bound"] is not None else f"{'none':>16}"
        over = f"{r['paper_over_certificate']:9.3g}" if r["paper_over_certificate"] else f"{'-':>9}"
        print(f"  {r['T']:>6} {r['certificate']:12.6g} {worst} {ratio} {paper} {over} {r['c']:9.4g} {r['tau']:9.4g} "
              f"{r['e']:9.3g} {_residual(r['check_residual'])} {r['certificate_seconds'] * 1e3:5.0f}  "
              f"{r['exact_check']}"
              + ("   <- BELOW the worst case: a bug" if r["below_worst_case"] else ""))
    if solved[0]["paper_bound"] is None:
        print(f"  {theorem}: no bound ({solved[0]['reason']})")
    skipped = sorted({r["worst_case_reason"] for r in solved if r.get("worst_case_reason")})
    if skipped:
        print(f"  worst case {'; '.join(skipped)}")
    if failed or floor_error:
        print(f"  {len(failed) + (floor_error is not None)} of {len(rows) + 1} certificates (the floor included) "
              "failed (exit 4)" + ("; each failure's command: " if failed else "")
              + "; ".join(r["command"] for r in failed))
    return code


def _residual(v) -> str:
    return f"{v:9.1e}" if v is not None else f"{'failed':>9}"


def _tune(args, by: str, T: int | None, m: int, source: str, kw: dict) -> int:
    """``pep --tune eta`` (by the worst case at --T) and ``certify --tune eta`` (by the certificate's bound at --T or
    its floor): the curve over eta, the best step, the theorem's largest step and the objective there."""
    import math

    from dfltheory.parsing import jsonable
    from dfltheory.pep.certify import tune
    from dfltheory.pep.problem import PEPSolveError

    try:
        out = tune(args.algorithm, m, args.K, args.eta, T, by=by, **kw)
    except PEPSolveError as err:  # every evaluation failed: no step is chosen
        print(f"dfltheory {'pep' if by == 'worst_case' else 'certify'} --tune: error: {' '.join(str(err).split())}",
              file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps(jsonable(dict(out, mixing=source)), indent=1))
        return 0
    name = by.replace("_", " ")
    what = (f"worst case at T = {T}" if by == "worst_case" else
            f"certificate's bound at T = {T}" if T is not None else "certificate's floor (T -> inf)")
    print(f"{args.algorithm}: m = {m}, K = {args.K}; {source}; the step in (0, {args.eta:g}] minimising the {what}")
    print(f"  {'eta':>10} {name:>12} {out['theorem'] or 'theorem':>16}")
    for r in out["curve"]:
        value = f"{r['value']:12.6g}" if math.isfinite(r["value"]) else f"{'failed':>12}"
        paper = f"{r['theorem_bound']:16.6g}" if r["theorem_bound"] is not None else f"{'none':>16}"
        print(f"  {r['eta']:10.5g} {value} {paper}" + ("" if math.isfinite(r["value"]) else f"   ({r['reason']})"))
    if out["failed"]:
        print(f"  {out['failed']} of {out['evaluations']} evaluations failed (listed above with the cause); the best "
              "step is chosen among the solved ones")
    print(f"  best: eta = {out['eta']:.5g}, {name} {out['value']:.6g}"
          + ("" if out["inside_theorem"] else f"   (OUTSIDE {out['theorem']}'s conditions: {out['outside_reason']})"))
    if out["theorem_max_eta"] is None:
        print(f"  {out['theorem']}: no step of the curve meets its conditions")
    else:
        at = out["value_at_theorem_max_eta"]
        gain = f" ({at / out['value']:.3g} x the best)" if at is not None and out["value"] > 0 else ""
        print(f"  {out['theorem']}'s largest step (its conditions, at T = {out['theorem_T']}): eta = "
              f"{out['theorem_max_eta']:.5g}, {name} there " + (f"{at:.6g}{gain}" if at is not None else
                                                             f"failed ({out['value_at_theorem_max_eta_reason']})"))
    return 0
