"""Presentation of the bound-holds experiments (:mod:`dfltheory.verify.holds`): the verdict table, the overlays
(bound at every T over the measured running min / average, per topology), the rate in T and the topology
dependence, and the ``dfltheory verify`` command.

``dfltheory verify all --out DIR`` runs (or reads from DIR's cache) every experiment, prints one line per verdict
(``--json``: the whole result), writes ``DIR/verify.json`` and the figures ``DIR/figures/<paper>-*.png``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from dfltheory.figures.axes import axes_or_new, save_figure
from dfltheory.figures.format import num
from dfltheory.figures.verdicts import c_star_text, candidates_text, functional_text, shares_text

EXIT_CODES = """A verdict 'holds' is informative only where the bound is below the trivial level: the smaller of the
measured quantity at x^0 (an algorithm that never moves) and its supremum (every algorithm); otherwise it reads
'holds (trivial: bound >= ...)'. T* is the horizon from which the bound is below that level (--horizons).

exit codes:
  0  every verdict is 'holds', 'vacuous' or 'conditions fail' (the bound is never below the measurement)
  1  some bound is below the measured quantity's 95 % interval ('violated'): a counter-example, with its command
     (a theorem stated as O(.), whose constants the catalog takes as 1, is labelled so and never counts)
  2  bad input: one line on stderr"""


def verdict_text(v: dict) -> str:
    """'holds (informative)', 'holds (trivial: bound >= ...)', or the verdict alone where no bound was compared."""
    label = v.get("label")
    if v.get("verdict") not in ("holds", "violated", "inconclusive") or not label or label.startswith("no bound"):
        return v.get("verdict", "-")
    return f"{v['verdict']} ({label})"


def _aligned(lines: list[tuple]) -> str:
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(lines[0]) - 1)]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths)) + "  " + str(r[-1]) for r in lines)


def table(result: dict) -> str:
    """One line per verdict: theorem (``[proof's functional]`` where the verdict judged the proof's functional, not
    the printed one), constants, setting, verdict with its trivial label, bound, the trivial level (the smaller of
    the value at x^0 and the supremum), T* (best step), measured [95 % interval], ratio, dominant term (or the
    conditions that fail), c* with its instrument, the terms' shares (largest first); the functional each theorem
    judged is listed once below the table."""
    head = ("theorem", "constants", "setting", "verdict", "bound", "trivial level", "T*", "measured [95% CI]",
            "bound/measured", "dominant", "c* (instrument)", "term shares")
    lines = [head]
    functionals: dict[str, str] = {}
    for v in result["verdicts"]:
        ci = v.get("ci")
        measured = f"{num(v.get('measured'))} [{num(ci[0])}, {num(ci[1])}]" if ci else "-"
        why = v.get("dominant") or "; ".join(v.get("failed") or []) or "-"
        level = (v.get("trivial") or {}).get("level")
        name = v["theorem"] + (" [proof's functional]" if v.get("proof_functional") else "")
        if v.get("functional"):
            functionals.setdefault(name, v["functional"])
        lines.append((name, v["constants"], v["setting"], verdict_text(v), num(v.get("bound")), num(level),
                      v.get("T_star") or "-", measured, num(v.get("ratio")), why, c_star_text(v.get("c_star")) or "-",
                      shares_text(v.get("term_shares"), top=3) or "-"))
    text = _aligned(lines)
    if functionals:
        text += "\n\nfunctionals judged:\n" + "\n".join(f"  {k}: {f}" for k, f in functionals.items())
    return text


def horizon_table(rows: list[dict]) -> str:
    """The T* table: per theorem, topology and constants, the trivial level and the smallest T at which the bound
    falls below it, at the largest admissible step and at the best one (with that step), or why it never does."""
    head = ("theorem", "topology", "constants", "trivial level", "T* (largest step)", "T* (best step)", "best step",
            "why / note")
    lines = [head]
    for r in rows:
        large, best = r["largest"], r["best"]
        why = best.get("why") or large.get("why") or r.get("note") or "-"
        if best.get("T_star") and r.get("note"):
            why = r["note"]
        lines.append((r["theorem"], r["topology"], r["constants"],
                      f"{num(r['level'])} ({'x^0' if r['trivial']['at_x0'] <= r['trivial']['sup'] else 'sup'})",
                      large.get("T_star") or ("-" if large.get("note") else "vacuous"), best.get("T_star") or "vacuous",
                      f"{r['step_symbol']} = {num(best.get('step'))}" if best.get("step") else "-", why))
    return _aligned(lines)


def constants_lines(tables: dict) -> str:
    """Per paper and problem, each constant the theorems use: value, how it is known, and where a numeric
    estimate exists, value / estimate (how loose the certificate is)."""
    out = []
    for where, rows in tables.items():
        parts = [f"{r['symbol']} = {num(r['value'])} ({r['kind']}"
                 + (f", {num(r['ratio'], digits=3)} x the numeric {num(r['numeric'])})" if r.get("ratio") else ")")
                 for r in rows]
        out.append(f"constants, {where}: " + "; ".join(parts))
    return "\n".join(out)


def informative_lines(result: dict) -> str:
    """One block per main theorem: where and how long its informative runs went, why that instance (and each
    candidate's bound / measured), then each target's verdict at T_run = 2 T* with the functional it judged (the
    proof's marked), c* with its instrument and the terms' shares."""
    out = []
    for r in result.get("informative", []):
        if r["status"] != "run":
            out.append(f"{r['theorem']}: {r['status']}: {r.get('note', '')}")
            continue
        out.append(f"{r['theorem']} on {r['topology']} ({r['constants']} constants), T* = {r['T_star']}, "
                   f"{r['step_symbol']} = {num(r['step'])}, {r['seeds']} seeds x {r['R']} rounds in "
                   f"{r['seconds']:.0f} s:")
        if r.get("instance_rationale"):
            out.append(f"  instance: {r['instance_rationale']}")
        if r.get("candidates"):
            out.append(f"  candidates (bound / measured): {candidates_text(r)}")
        for v in r["verdicts"]:
            a = v["at"]
            mark = " [proof's functional]" if v.get("proof_functional") else ""
            out.append(f"  {v['theorem']}{mark}: T = {a['T']}: {verdict_text(a)}, bound {num(a.get('bound'))} vs "
                       f"{num(a['measured'])} [{num(a['ci'][0])}, {num(a['ci'][1])}]"
                       + "".join(f"; {t}" for t in (c_star_text(a.get("c_star")),
                                                     shares_text(a.get("term_shares"))) if t))
            if functional_text(v):
                out.append(f"    {functional_text(v)}")
    return "\n".join(out)


def mutation_lines(result: dict) -> str:
    """Per theorem: c* with its instrument, the mutations caught (by which check) and missed, and the note (which
    PEP instance was used)."""
    out = []
    for m in result.get("mutations") or []:
        rows = m.get("rows") or []
        factor = lambda r: f"x{num(r['factor'])}, " if r.get("factor") is not None else ""  # noqa: E731
        caught = [f"{r['mutation']} ({factor(r)}{r['caught_by']})" for r in rows if r.get("caught_by")]
        missed = [f"{r['mutation']}" + (f" ({factor(r)[:-2]})" if factor(r) else "")
                  + (" [above the certificate]" if r.get("holds_by_certificate") else "") for r in rows
                  if not r.get("caught_by")]
        c = f"c* = {num(m['c_star'])} ({m.get('instrument')})" if m.get("c_star") is not None else "no c*"
        out.append(f"{m['theorem']}: {c}; {len(caught)} of {len(rows)} mutations caught")
        out.append("  caught: " + ("; ".join(caught) or "none"))
        out.append("  missed: " + ("; ".join(missed) or "none"))
        if m.get("note"):
            out.append(f"  {m['note']}")
    return "\n".join(out)


def rate_lines(result: dict) -> str:
    out = []
    for r in result.get("rates", []):
        if r.get("measured_slope") is None:
            out.append(f"{r['theorem']}: {r.get('note', 'no rate measured')}")
            continue
        out.append(f"{r['theorem']} ({r['topology']}, {r['constants']} constants), T = "
                   f"{', '.join(map(str, r['horizons']))}: measured slope {num(r['measured_slope'], digits=3)}, "
                   f"bound slope {num(r['bound_slope'], digits=3)} (over the horizons where its conditions hold), "
                   f"stated {r['stated_slope']:g}, derived {r['derived_slope']:g}")
    return "\n".join(out)


def _log_ok(values) -> list:
    return [v if isinstance(v, (int, float)) and v > 0 and math.isfinite(v) else math.nan for v in values]


def plot_overlays(result: dict, paper: str, path: Path) -> Path | None:
    """One panel per (topology, constants) of the paper: the measured running quantity of the main theorem and the
    bound of every target (main solid, variants dashed) at every horizon T, log-log."""
    import matplotlib.pyplot as plt

    items = result["overlays"].get(paper) or []
    panels = sorted({(o["topology"], o["constants"]) for o in items})
    if not panels:
        return None
    fig, axs = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
    for ax, (topo, family) in zip(axs[0], panels):
        group = [o for o in items if o["topology"] == topo and o["constants"] == family]
        main = next((o for o in group if o["main"]), group[0])
        ax.loglog(main["T"], _log_ok(main["measured"]), "k-", lw=2, label="measured (mean of seeds)")
        for o in group:
            ax.loglog(o["T"], _log_ok(o["bound"]), "-" if o["main"] else "--", lw=1.2,
                      label=o["theorem"].split(".", 1)[1])
        ax.set_title(f"{topo} ({family} constants)", fontsize=9)
        ax.set_xlabel("rounds T")
        ax.set_ylabel("quantity bounded at horizon T")
        ax.legend(fontsize=6)
    fig.suptitle(f"{paper}: bound at every T against the measured quantity", fontsize=10)
    return save_figure(axs[0][0], path)


def plot_rate(rate: dict, path: Path) -> Path | None:
    """Measured quantity (with its interval) and bound under the corollary's schedule against T, log-log, with a
    reference line of the stated slope through the first measured point."""
    rows = [r for r in rate.get("rows", []) if "measured" in r]
    if len(rows) < 2:
        return None
    ax = axes_or_new()
    T = [r["T"] for r in rows]
    meas = [r["measured"] for r in rows]
    lo = [max(r["measured"] - (r["ci"][0] if isinstance(r["ci"][0], float) else 0), 0) for r in rows]
    hi = [(r["ci"][1] - r["measured"]) if isinstance(r["ci"][1], float) else 0 for r in rows]
    ax.errorbar(T, meas, yerr=[lo, hi], fmt="ko-",
                label=f"measured (slope {num(rate['measured_slope'], digits=3)})")
    bound = [r["bound"] if r.get("conditions_hold") else None for r in rows]  # no bound where a condition fails
    ax.loglog(T, _log_ok(bound), "s--",
              label=f"bound where its conditions hold (slope {num(rate['bound_slope'], digits=3)})")
    ax.loglog(T, [meas[0] * (t / T[0]) ** rate["stated_slope"] for t in T], ":",
              label=f"stated rate T^{rate['stated_slope']:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("horizon T (schedule " + ", ".join(f"{k} = {v}" for k, v in rate["schedule"].items()) + ")",
                  fontsize=7)
    ax.set_ylabel("quantity at T")
    ax.set_title(f"{rate['theorem']}: rate in T", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(ax, path)


def readable_ratio_axis(ax, which: str, values) -> None:
    """Log scale where the ratios span a factor 10 or more; else linear with plain decimals (no offset, no
    ``1.00001×10⁰`` repeated on every tick): ratios near 1 differ in their last digits, which the ticks then show."""
    from matplotlib.ticker import ScalarFormatter

    vals = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v) and v > 0]
    if vals and max(vals) / min(vals) >= 10:
        getattr(ax, f"set_{which}scale")("log")
        return
    getattr(ax, f"set_{which}scale")("linear")
    plain = ScalarFormatter(useOffset=False)
    plain.set_scientific(False)
    getattr(ax, f"{which}axis").set_major_formatter(plain)


def plot_topology(entries: list[dict], path: Path) -> Path | None:
    """Measured against predicted ratio (to the best-mixing topology) per topology, one marker per paper."""
    if not entries:
        return None
    ax = axes_or_new()
    for e in entries:
        rows = [r for r in e["rows"] if r.get("bound_ratio")]
        ax.scatter([r["bound_ratio"] for r in rows], [r["measured_ratio"] for r in rows],
                   label=f"{e['paper']} ({e['constants']})")
        for r in rows:
            ax.annotate(r["topology"], (r["bound_ratio"], r["measured_ratio"]), fontsize=6)
    ax.axline((1, 1), slope=1, color="grey", lw=0.8, ls=":")
    for which, key in (("x", "bound_ratio"), ("y", "measured_ratio")):
        readable_ratio_axis(ax, which, [r.get(key) for e in entries for r in e["rows"] if r.get("bound_ratio")])
    ax.set_xlabel("bound ratio to the best-mixing topology")
    ax.set_ylabel("measured ratio to the best-mixing topology")
    ax.set_title("topology dependence: measured against predicted", fontsize=9)
    ax.legend(fontsize=7)
    return save_figure(ax, path)


def render(result: dict, out: str | Path) -> dict[str, list[str]]:
    """Draw every figure of ``result`` into ``out/figures``; returns {paper: [paths relative to out]} and stores it
    in ``result['figures']``."""
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    figures: dict[str, list[str]] = {}

    def keep(paper, path):
        if path is not None:
            figures.setdefault(paper, []).append(str(Path(path).relative_to(out)))

    for paper in result["overlays"]:
        keep(paper, plot_overlays(result, paper, out / "figures" / f"{paper}-overlay.png"))
    for r in result.get("rates", []):
        keep(r["paper"], plot_rate(r, out / "figures" / f"{r['paper']}-rate.png"))
    keep("all", plot_topology(result.get("topology", []), out / "figures" / "topology-dependence.png"))
    result["figures"] = figures
    return figures


# ------------------------------------------------------------------------------------------------ command
def register(subparsers) -> None:
    import argparse

    from dfltheory.verify.instances import SIZES

    p = subparsers.add_parser(
        "verify", help="every main theorem against training: bound-holds verdicts, overlays, rates",
        description="Train each paper's algorithm on problems with exact or certified constants, at step sizes its "
                    "theorem admits, and compare the bound with the measured quantity (mean of seeds, 95 %% "
                    "interval). Runs are cached in --out: a second call only re-evaluates and re-draws.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help="'all', a paper (dfedsgpsm, dfedsam, dfedcata, dfedpgp, dfedadmm) or a theorem id")
    p.add_argument("--all", action="store_true", help="every paper (same as the target 'all')")
    p.add_argument("--out", default="verify", help="directory for the cached runs, verify.json and the figures")
    p.add_argument("--size", choices=sorted(SIZES), default="default",
                   help="quick: seconds (tests); default: every paper in minutes on 2 CPU cores; large: for a GPU")
    p.add_argument("--quick", action="store_const", const="quick", dest="size", help="the same as --size quick")
    p.add_argument("--no-rates", dest="rates", action="store_false", help="skip the rate-in-T runs")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.add_argument("--jobs", type=int, default=1, help="processes that train runs in parallel (one CPU thread each; "
                   "2 on a 2-core machine)")
    p.add_argument("--device", default="cpu", help="where runs train: cpu (default), cuda, cuda:1, ...")
    p.add_argument("--horizons", action="store_true",
                   help="print only the T* table (the horizon from which each bound is below its trivial level), "
                        "without training")
    p.set_defaults(func=_verify)


def _verify(args) -> int:
    from dfltheory.paths import output_dir
    from dfltheory.empirical.runner import check_device
    from dfltheory.empirical.sweep import check_workers
    from dfltheory.verify.holds import verify
    from dfltheory.verify.instances import resolve_targets

    targets = list(args.targets) + (["all"] if args.all else [])
    if not targets:
        raise ValueError("name what to verify: 'all' (or --all), a paper or a theorem id")
    resolve_targets(targets)  # bad input fails before anything is created or run
    if args.horizons:
        from dfltheory.verify.holds import horizons

        rows, tables = horizons(targets, args.size, args.jobs)
        if args.json:
            print(json.dumps({"horizons": rows, "constants": tables}, indent=1))
        else:
            print(horizon_table(rows) + "\n\n" + constants_lines(tables))
        return 0
    check_device(args.device)
    check_workers(args.jobs)
    out = output_dir(args.out)

    def progress(stage, done, total, eta):
        print(f"\r{stage}: run {done}/{total}, about {eta:.0f} s left   ", end="" if done < total else "\n",
              file=sys.stderr, flush=True)

    result = verify(targets, args.size, out, progress, rates=args.rates, workers=args.jobs, device=args.device)
    render(result, out)
    (out / "verify.json").write_text(json.dumps(result, indent=1) + "\n")
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(table(result))
        if result.get("informative"):
            print("\ninformative runs (beyond T*):\n" + informative_lines(result))
        if result.get("mutations"):
            print("\nmutation tests (would the instrument catch a wrong bound?):\n" + mutation_lines(result))
        if result["rates"]:
            print("\nrate in T:\n" + rate_lines(result))
        print(f"\n{len(result['verdicts'])} verdicts in {result['wall_seconds']:.0f} s; results and figures in {out}")
    informative = [v["at"] for r in result.get("informative", []) for v in r.get("verdicts", [])]
    return 1 if any(v["verdict"] == "violated" and not v.get("big_o") for v in result["verdicts"] + informative) else 0
