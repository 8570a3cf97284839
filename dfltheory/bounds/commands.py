"""Subcommands ``dfltheory bounds {list,show,verify,experiments}`` and ``dfltheory check``."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

from dfltheory.parsing import integer


def register(subparsers) -> None:
    bounds = subparsers.add_parser("bounds", help="the catalog of theorems, corollaries and lemmas",
                                   description="Browse the theorems of the five papers and verify their rates.")
    sub = bounds.add_subparsers(dest="bounds_command", metavar="ACTION", required=True)

    p = sub.add_parser("list", help="list theorem ids")
    p.add_argument("--paper", help="only this paper (dfedsgpsm, dfedsam, dfedcata, dfedpgp, dfedadmm)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_list)

    p = sub.add_parser("show", help="formula, conditions and provenance of one theorem")
    p.add_argument("id")
    p.add_argument("--latex", action="store_true", help="also print the bound in LaTeX")
    p.set_defaults(func=_show)

    p = sub.add_parser("verify", help="substitute each corollary's schedule into its theorem and compare rates")
    p.add_argument("id", nargs="?", help="a corollary id or a paper name (default: every corollary)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_verify)

    p = sub.add_parser("experiments", help="the papers' own experimental settings against their theorems")
    p.add_argument("paper", nargs="?", help="one paper (default: all)")
    p.add_argument("--free", default=None, help="the constant to solve for (default: each setting's own, L)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_experiments)

    p = subparsers.add_parser(
        "check", help="evaluate a bound and check hyper-parameters against its conditions",
        description="Evaluate theorem ID at the given values and give a verdict on each of its conditions, the "
                    "paper's and those the toolkit derived. Topology constants (lambda, psi, C, q, delta, m) can "
                    "come from a named topology.",
        epilog=CHECK_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("id", help="theorem id, e.g. dfedsam.thm4.1 (see `dfltheory bounds list`)")
    p.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE", help="values, e.g. eta=0.01 K=5 T=1000")
    p.add_argument("--topology", help="take topology constants from this topology, NAME or NAME:key=value,... "
                   "(see `dfltheory topology`)")
    p.add_argument("--matrix", metavar="FILE", help="take topology constants from your own mixing matrix W (or "
                   "push-sum P): .npy, .csv or Matrix Market .mtx (instead of --topology)")
    p.add_argument("--n", type=integer, help="number of clients of the topology")
    p.add_argument("--weights", default="default", help="mixing-weight rule of the topology (default: the topology's own)")
    p.add_argument("--seed", type=integer, default=0, help="seed of random topologies")
    p.add_argument("--push-sum", choices=("theory", "measured"), default="theory",
                   help="push-sum C and q: the cited lemma's (theory) or fitted over the horizon (measured)")
    p.add_argument("--conditions", choices=("all", "paper"), default="all",
                   help="which conditions decide whether the value is a bound and bound --solve: 'all' (the "
                        "paper's and the toolkit's derived ones, default) or 'paper' (the paper's alone); both "
                        "verdicts are printed either way")
    p.add_argument("--solve", metavar="NAME", help="also print the admissible range of NAME given the others, "
                   "under the paper's conditions and under all of them")
    p.add_argument("--json", action="store_true", help="machine-readable output (stable keys, see docs)")
    p.set_defaults(func=_check)


#: Exit codes of ``dfltheory check`` (also in its --help).
CHECK_EXIT_CODES = """exit codes:
  0  every selected condition holds: the value is a bound
  1  a selected condition is violated: the value is no bound (the formula can even be negative there)
  2  bad input (unknown theorem or symbol, a value outside its domain, ...): one line on stderr
  3  no selected condition is violated, but some cannot be decided: give the values they name"""


def parse_assignments(items: list[str]) -> dict[str, float]:
    """``['eta=0.1', 'K=5']`` -> ``{'eta': 0.1, 'K': 5.0}`` with a clear error for malformed items."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--set expects NAME=VALUE items, got {item!r} (e.g. --set eta=0.01 K=5)")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--set {name}: {value!r} is not a number") from None
    return out


def _list(args) -> int:
    from dfltheory.bounds import get, ids

    rows = [get(i) for i in ids(args.paper)]
    if args.json:
        print(json.dumps([{"id": t.id, "paper": t.paper, "kind": t.kind, "variant": t.variant,
                           "tag": t.source.tag, "title": t.title, "quantity": t.quantity} for t in rows], indent=1))
        return 0
    for t in rows:
        print(f"{t.id:<32} {t.kind:<11} {t.source.tag:<13} {t.title}")
    return 0


def _show(args) -> int:
    from dfltheory.bounds import get

    thm = get(args.id)
    print(thm.describe())
    if args.latex:
        print("  latex: " + thm.latex())
    return 0


def _verify(args) -> int:
    from dfltheory.bounds import PAPERS
    from dfltheory.bounds.rates import verifiable, verify

    if args.id is None or args.id in PAPERS:
        todo = verifiable(args.id)
    else:
        todo = [args.id]
    reports, start = [], time.perf_counter()
    for n, theorem in enumerate(todo, 1):  # each is symbolic work of seconds: say which, and how far along
        print(f"bounds verify: {n}/{len(todo)} {theorem} ({time.perf_counter() - start:.0f} s so far)",
              file=sys.stderr, flush=True)
        reports.append(verify(theorem))
    if len(todo) > 1:
        print(f"bounds verify: {len(todo)} corollaries in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], indent=1))
        return 0
    for r in reports:
        print(r.format())
        print()
    return 0


def _experiments(args) -> int:
    from dfltheory.bounds import PAPERS
    from dfltheory.bounds.catalog import experiments
    from dfltheory.bounds.settings import violations

    papers = [args.paper] if args.paper else list(PAPERS)
    out = []
    for paper in papers:
        if paper not in PAPERS:
            raise ValueError(f"unknown paper {paper!r}; valid papers: {', '.join(PAPERS)}")
        for setting in experiments(paper):
            name = args.free or setting.free[0]
            out.append({"id": setting.id, "theorem": setting.theorem, "description": setting.description,
                        "values": dict(setting.values), "free": name, "findings": list(setting.findings),
                        "conditions": violations(setting, name)})
    if args.json:
        print(json.dumps(out, indent=1, default=str))
        return 0
    for s in out:
        print(f"{s['id']}  ({s['theorem']}): {s['description']}")
        print("  values: " + ", ".join(f"{k}={v:g}" for k, v in s["values"].items()))
        for c in s["conditions"]:
            if c["violated_for"]:
                verdict = f"VIOLATED for {c['violated_for']}"
            elif c["holds"] is None:
                verdict = "undecided (needs " + ", ".join(c["missing"]) + ")"
            else:
                verdict = "holds" if c["holds"] else "VIOLATED"
            print(f"    {c['origin']:<7} {c['relation']:<44} {verdict}   [{c['text']}]")
        for finding in s["findings"]:
            print(f"  FINDING: {finding}")
        print()
    return 0


def _fmt(x) -> str:
    return "inf" if isinstance(x, float) and math.isinf(x) else f"{x:.6g}"


def _check(args) -> int:
    from dfltheory.bounds import get, topology_values
    from dfltheory.parsing import jsonable
    from dfltheory.topology import checks

    thm = get(args.id)
    if args.solve is not None and args.solve not in thm.symbols:
        raise ValueError(f"--solve {args.solve!r} is not a symbol of {thm.id}; give one of "
                         f"{', '.join(sorted(thm.symbols))}")
    values = parse_assignments(args.set)
    thm.validate(**values)  # a bad --set value (Q=nan) is itself the error, before any topology is built
    topo_report = topo = None
    if args.topology or args.matrix:
        if args.matrix and (args.topology or args.n is not None or args.weights != "default"):
            raise ValueError("--matrix FILE gives the whole mixing matrix: drop --topology, --n and --weights")
        checks.arguments(cli=True, n=args.n, seed=args.seed)
        topo, topo_report = topology_values(thm, args.topology, args.n, args.weights, args.seed,
                                            Q=int(values.get("Q", 1)), push_sum=args.push_sum,
                                            K_u=int(values.get("K_u", 1)), matrix=args.matrix)
        clash = {k for k in topo if k in values and values[k] != topo[k]}
        if clash:
            raise ValueError(f"{sorted(clash)} given with --set and also by --{'matrix' if args.matrix else 'topology'}"
                             f" {args.matrix or args.topology}; give one")
        values.update(topo)
    result = thm.check(conditions=args.conditions, **values)
    solved = None
    if args.solve:
        others = {k: v for k, v in values.items() if k != args.solve}
        solved = {which: thm.solve(args.solve, which, **others) for which in ("paper", "all")}
    if args.json:
        out = result.to_dict()
        if topo_report is not None:
            out["topology"] = jsonable({k: v for k, v in topo_report.items()
                                         if isinstance(v, (int, float, str, bool))})
        if solved:
            out["solve"] = {**solved[args.conditions].to_dict(),
                            "paper": solved["paper"].to_dict(), "all": solved["all"].to_dict()}
        print(json.dumps(out, indent=1))
        return _exit_code(result)
    print(f"{thm.id}: {thm.title}")
    print(f"  bounds {thm.quantity}" + ("  [O(.) taken with constants 1]" if thm.big_o else ""))
    if topo is not None:
        print(f"  topology {args.topology or 'from ' + args.matrix}, n = {topo_report['n']}, "
              f"weights {topo_report['weights']}"
              + (f", push-sum constants {args.push_sum}" if {"C", "q"} & set(topo) else "") + ": "
              + ", ".join(f"{k} = {_fmt(v)}" for k, v in values.items() if k in topo))
    extra = f"   ({result.infinite_reason})" if result.infinite_reason else ""
    if result.is_bound:
        print(f"  value: {_fmt(result.value)}{extra}")
    else:
        print(f"  NO BOUND here: {'the paper' if args.conditions == 'paper' else 'a'} condition marked FAIL is "
              f"violated, so the theorem says nothing at these values (its formula gives {_fmt(result.value)}, "
              "which bounds nothing)")
    for name, v in result.terms.items():
        mark = "  <- dominant" if name == result.dominant_term else ""
        print(f"    {name:>16} = {_fmt(v)}{mark}")
    print(f"  conditions (deciding: {'the paper' + chr(39) + 's' if args.conditions == 'paper' else 'all'}; "
          "`paper` = stated by the paper, `derived` = added by the toolkit, with why):")
    for v in result.conditions:
        if v.holds is None:
            status, detail = "  ?  ", "undecidable: give " + ", ".join(v.missing) if v.missing else "undecidable"
        else:
            status = " ok  " if v.holds else "FAIL "
            rel = f", {100 * v.relative_margin:+.3g}% of the threshold" if v.relative_margin is not None else ""
            detail = f"margin {v.margin:+.4g}{rel}"
        print(f"   [{status}] {v.origin:<7} {v.relation:<44} {detail}   ({v.text})")
        if v.why:
            print(f"{'':18}why: {v.why}")
    print(f"  verdict: {result.summary()}")
    if solved:
        for which, label in (("paper", "paper's conditions"), ("all", "all conditions    ")):
            sol = solved[which]
            largest = "" if sol.empty else f"   largest {_fmt(sol.largest)}"
            print(f"  admissible under {label}: {sol.text()}{largest}   [{sol.method}]")
    return _exit_code(result)


def _exit_code(result) -> int:
    if result.violated:
        return 1
    return 3 if result.undecided else 0
