"""Presentation of the papers' experimental claims (:mod:`dfltheory.verify.claims`): the table "claim / paper's
number / measured here (mean ± std) / verdict", one figure per paper, and the ``dfltheory claims`` command.

``dfltheory claims [PAPER ...] --out DIR [--size quick|default|gpu]`` runs (or reads from DIR's cache) the claims,
prints the table (``--json``: the whole result), writes ``DIR/claims.json`` and ``DIR/figures/<paper>-claims.png``.
A claim with a trend (the topology claims) draws, right, its metric against the spectral gap, one point per arm.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


#: the note under a claims table below the faithful size
SMALL = ("This is a smaller size than the papers' (fewer clients, rounds and seeds): a verdict here can be an "
         "artifact of the size. The faithful size (`dfltheory claims --size full`: m = 50 and 100, 100 rounds, "
         "10 seeds) has its results in docs/claims.md; where the two differ, read that one.")


def small_note(size: str | None) -> str:
    """:data:`SMALL` for a claims size below the faithful one, else ''."""
    return "" if size in ("full", "gpu") else SMALL


#: accuracy in % (the metric, the clients' own models' accuracy, and its recorded curve)
SCALE = {"test_acc": 100.0, "local_test_acc": 100.0, "local_test_acc_mean": 100.0, "train_loss": 1.0}
PERCENT = ("test_acc", "local_test_acc")
#: the data sets' names in the table's group heads, in the order they are shown
DATA_TITLE = {"digits": "digits", "mnist": "MNIST", "fashion-mnist": "Fashion-MNIST"}


def _mean_std(arm: dict, metric: str) -> str:
    if arm["mean"] is None:
        return arm.get("status") or "diverged"
    sd = arm["std"] or 0.0
    if metric in PERCENT:
        return f"{100 * arm['mean']:.2f} ± {100 * sd:.2f}"
    return f"{arm['mean']:.3g} ± {sd:.2g}"


def _study(part: dict) -> str:
    """' [study-wide: Holm p 0.0588, inconclusive]' where the study-wide Holm is known."""
    if part.get("p_study") is None:
        return ""
    return f" [study-wide: Holm p {part['p_study']:.3g}, {part.get('verdict_study', part['verdict'])}]"


def _paper(part: dict, s: float, unit: str) -> str:
    """', the paper's +8.49 points (difference >= it: Holm p 1e-14)' where the paper printed both numbers: the test
    whose rejection excludes the paper's effect."""
    if part.get("paper_effect") is None:
        return ""
    excl = (f" (difference >= it: Holm p {part['p_excluded_holm']:.3g})"
            if part.get("p_excluded_holm") is not None else "")
    return f", the paper's {s * part['paper_effect']:+.3g}{unit}{excl}"


def trend_line(t: dict, metric: str | None = None) -> str:
    """'metric follows the spectral gap over ...: mean per-seed rho, permutation p, interval -> verdict'; for 'does not
    follow it' (relation '='), each of the paper's inversions with its test, the rank correlation descriptive."""
    from dfltheory.verify.claims import shown_in

    s, unit = shown_in(metric or t["metric"])
    what = "follows" if t["relation"] == ">" else "does not follow"
    rho = ("rho undefined" if t.get("rho") is None else f"mean per-seed Spearman rho = {t['rho']:+.2f}"
           + (f" [{t['interval'][0]:+.2f}, {t['interval'][1]:+.2f}]" if t.get("interval") else ""))
    if t["relation"] == "=" and t.get("inversions"):
        inv = []
        for x in t.get("inversions", ()):
            if x.get("difference") is None:
                inv.append(f"{x['a']} over {x['b']}: {x.get('why', 'not testable')}")
                continue
            holm = f", Holm {x['p_holm']:.3g}" if x.get("p_holm") is not None else ""
            inv.append(f"{x['a']} over {x['b']} {s * x['difference']:+.3g}{unit} (p {x['p']:.3g}{holm}"
                       f"{_paper(x, s, unit)}) -> {x['verdict']}")
        p = f"; p {t['p_value']:.3g} (Holm {t.get('p_holm', t['p_value']):.3g})" if t.get("p_value") is not None \
            else ""
        stat = (f"the paper's inversions: {'; '.join(inv) or 'none'}{p}; {rho} (descriptive)")
    elif t.get("rho") is None or t.get("p_value") is None:
        stat = t.get("why", "rho undefined")
    else:
        stat = (f"{rho}, permutation p = {t['p_value']:.3g} (Holm {t.get('p_holm', t['p_value']):.3g})")
    return (f"{t['metric']} {what} the spectral gap over {', '.join(t['arms'])} "
            f"(gaps {', '.join('?' if g is None else f'{g:.3f}' for g in t['gap'])}): {stat} -> {t['verdict']}"
            f"{_study(t)}")


def pair_line(p: dict, metric: str) -> str:
    """'a > b: difference, test, p (Holm), smallest detectable effect, the paper's effect -> verdict' (a pair of a
    claim's result), with the study-wide Holm p and verdict beside."""
    from dfltheory.verify.claims import shown_in

    s, unit = shown_in(metric)
    head = f"{p['a']} {p['relation']} {p['b']}"
    if p.get("difference") is None:
        return f"{head}: {p.get('why', 'not testable')} -> {p['verdict']}"
    moving = f"; still moving by {s * p['movement']:.3g}{unit} in the last 20 % of rounds" if p.get("moving") else ""
    return (f"{head}: {s * p['difference']:+.3g}{unit} ({p['test']}, p {p['p']:.3g}, Holm {p['p_holm']:.3g}; "
            f"detectable at 80 % power {s * p['detectable']:.3g}{unit}{_paper(p, s, unit)}{moving}) -> {p['verdict']}"
            f"{_study(p)}")


def verdict_text(c: dict) -> str:
    """'VERDICT' and, where the study-wide Holm gives another, '(study-wide: ...)'."""
    study = c.get("verdict_study")
    return c["verdict"] + (f" (study-wide: {study})" if study not in (None, c["verdict"]) else "")


def power_text(c: dict) -> str:
    """The claim's power: the smallest effect each tested part detects at 80 % power (the paper's effect beside), and
    how the rule judges the paper's own numbers with the measured noise (the calibration)."""
    from dfltheory.verify.claims import shown_in

    s, unit = shown_in(c["metric"])
    parts = [p for p in c["pairs"] if p.get("detectable") is not None]
    parts += [x for t in c.get("trends", ()) for x in t.get("inversions", ()) if x.get("detectable") is not None]
    mde = "; ".join(f"{p['a']} {p['relation']} {p['b']} {s * p['detectable']:.3g}{unit}"
                    + (f" (the paper's {s * p['paper_effect']:+.3g})" if p.get("paper_effect") is not None else "")
                    for p in parts)
    cal = c.get("calibration")
    rule = (f"the rule fed the paper's numbers ({cal['sims']} simulations of {cal['seeds']} seeds): agrees "
            f"{100 * cal['agrees']:.0f} %, contradicted {100 * cal['contradicted']:.0f} %" if cal
            else "no calibration (the paper printed too few numbers)")
    return (f"detectable at 80 % power: {mde}; " if mde else "") + rule


def data_title(result: Mapping) -> str:
    """'digits full', 'MNIST cpu': the data set and size a result ran."""
    plan = result.get("plan", "digits")
    return f"{DATA_TITLE.get(plan, plan)} {result.get('size') or 'custom'}"


def groups(results: Mapping | Sequence[Mapping]) -> list[tuple[str, Mapping]]:
    """(title, result) per data set and size, digits first, then MNIST (cpu before gpu): one result, or several (a
    claims.json per data set)."""
    results = [results] if isinstance(results, Mapping) else [r for r in results if r]
    order = list(DATA_TITLE)
    sizes = ("quick", "default", "full", "cpu", "gpu")

    def key(r):
        plan, size = r.get("plan", "digits"), r.get("size")
        return (order.index(plan) if plan in order else len(order), sizes.index(size) if size in sizes else len(sizes))

    return [(data_title(r), r) for r in sorted(results, key=key)]


def table(results: Mapping | Sequence[Mapping]) -> str:
    """One block per claim, grouped per data set and size: id, section, verdict (the study-wide beside), the paper's
    statement and number, each arm's mean ± std (and the clients' own models'), each pair's and trend's test with the
    paper's effect, the claim's power and calibration, the reason, the deviations and a stale stored verdict."""

    out = []
    for title, result in groups(results):
        out += [f"== {title}: m = {result.get('m')} ({result.get('m_large')} for the large claims), "
                f"{result.get('rounds')} rounds, {result.get('seeds')} seeds ==", ""]
        note = small_note(result.get("size"))
        out += [note, ""] if note else []
        for c in result["claims"]:
            out += _block(c)
        out.append("")
    return "\n".join(out).rstrip("\n")


def _block(c: dict) -> list[str]:
    unit = " %" if c["metric"] in PERCENT else ""
    target = f" (target {100 * c['target']:.0f} %)" if c.get("target") is not None else ""

    def own(a):
        x = a.get("local_test_acc_mean")
        return f" (own models {100 * x:.2f})" if x is not None and c["metric"] != "local_test_acc" else ""

    seeds = len(c["arms"][0]["seeds"]) if c["arms"] else 0
    out = [f"{c['id']} ({c['section']}, m = {c['m']}): {c['verdict'].upper()}{verdict_text(c)[len(c['verdict']):]}",
           f"  claim: {c['statement']}", f"  paper: {c['paper_number']}",
           f"  here ({c['metric_label']}{unit}{target}, {seeds} seeds): "
           + "; ".join(f"{a['label']} {_mean_std(a, c['metric'])}{own(a)}" for a in c["arms"])]
    out += [f"  {pair_line(p, c['metric'])}" for p in c["pairs"]]
    out += [f"  {trend_line(t, c['metric'])}" for t in c.get("trends", ())]
    out.append(f"  power: {power_text(c)}")
    if c.get("stale"):
        out.append(f"  stale: the stored verdict, not judged again: {c['stale']}")
    if c["verdict"] != "agrees":
        out.append(f"  why: {c['reason']}")
    if c.get("note"):
        out.append(f"  note: {c['note']}")
    if c.get("deviations"):
        out.append(f"  differs from the paper: {'; '.join(c['deviations'])}")
    return out


#: a verdict's colour in the report
CLAIM_STATUS = {"agrees": "ok", "contradicted": "bad"}


def report_section(results: Mapping | Sequence[Mapping] | None) -> dict | None:
    """What the report's claims section receives (:mod:`dfltheory.figures.render`): one group per data set and size
    (:func:`groups`) with its rows (statement, paper's number, each arm's mean ± std and own models, each part's test
    with the paper's effect and the study-wide verdict, power and calibration, verdict, why, deviations), the counts
    over the six verdicts; the first group's size, rule, figures and partition at the top."""
    from dfltheory.figures.format import duration, num
    from dfltheory.verify.claims import trend_text
    from dfltheory.verify.stats import VERDICTS

    if not results:
        return None
    shown = []
    for title, claims in groups(results):
        def pct(c, x):
            return num(100 * x) if c["metric"] in PERCENT else num(x)

        def arm(c, a):
            own = a.get("local_test_acc_mean")
            mine = f" (own models {num(100 * own)})" if own is not None and c["metric"] != "local_test_acc" else ""
            return f"{a['label']} {pct(c, a['mean'])} ± {pct(c, a['std'] or 0.0)}{mine}"

        rows = [{"id": c["id"], "paper": c["paper"], "section": c["section"], "statement": c["statement"],
                 "paper_number": c["paper_number"], "verdict": c["verdict"],
                 "verdict_study": c.get("verdict_study", c["verdict"]), "verdict_text": verdict_text(c),
                 "status": CLAIM_STATUS.get(c["verdict"], "warn"),
                 "why": "" if c["verdict"] == "agrees" else c.get("reason", ""),
                 "stale": c.get("stale") or "",
                 "measured": "; ".join([arm(c, a) for a in c["arms"] if a.get("mean") is not None]
                                       + [trend_text(t, num) for t in c.get("trends", ())]),
                 "tests": [pair_line(p, c["metric"]) for p in c["pairs"]]
                 + [trend_line(t, c["metric"]) for t in c.get("trends", ())],
                 "power": power_text(c), "deviations": "; ".join(c.get("deviations") or ()),
                 "metric": c.get("metric_label", c["metric"])} for c in claims["claims"]]
        shown.append({"title": title, "rows": rows, "rule": claims.get("rule", ""), "size": claims.get("size"),
                      "plan": claims.get("plan", "digits"), "seeds": claims.get("seeds"),
                      "small": small_note(claims.get("size")), "rounds": claims.get("rounds"), "m": claims.get("m"),
                      "m_large": claims.get("m_large"), "wall": duration(claims.get("wall_seconds") or 0),
                      "tests": (claims.get("family_wise") or {}).get("tests"),
                      "figures": dict(claims.get("figures", {})), "partition_figure": claims.get("partition_figure"),
                      "partition": claims.get("partition") or {},
                      "counts": {k: n for k in VERDICTS if (n := sum(r["verdict"] == k for r in rows))},
                      "counts_study": {k: n for k in VERDICTS if (n := sum(r["verdict_study"] == k for r in rows))}})
    return {**shown[0], "groups": shown, "verdicts": list(VERDICTS)}


def plot_claims(result: dict, paper: str, path: str | Path) -> Path:
    """One row per claim of ``paper``: the metric (left) and the theorem's measured quantity (right, log scale)
    against rounds, one line per arm, the band mean ± std over seeds (a fine-tuned arm: one point after the last
    round); a claim with trends draws, right, its trend metrics against the spectral gap instead. Returns the path."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rows = [c for c in result["claims"] if c["paper"] == paper]
    if not rows:
        raise ValueError(f"no claims of {paper!r} in the result; papers there: "
                         f"{', '.join(sorted({c['paper'] for c in result['claims']}))}")
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 3.2 * len(rows)), squeeze=False)
    for (left, right), c in zip(axes, rows):
        curve_metric = c.get("curve_metric", c["metric"])
        s = SCALE.get(curve_metric, 1.0)
        trends = c.get("trends") or []
        panels = ((left, "curve", s),) if trends else ((left, "curve", s), (right, "quantity", 1.0))
        if len(c["arms"]) > 10:  # distinct colours beyond the default cycle's ten
            left.set_prop_cycle(color=plt.cm.tab20.colors)
        for arm in c["arms"]:
            for ax, key, scale in panels:
                cur = arm.get(key) or {"round": []}  # a compact result (docs/claims-*.json) keeps no curves
                if not cur["round"]:
                    continue
                x = cur["round"]
                m = [scale * v for v in cur["mean"]]
                sd = [scale * v for v in cur["std"]]
                line, = ax.plot(x, m, marker="o" if len(x) == 1 else None,
                                label=f"{arm['label']} ({_mean_std(arm, c['metric'])})")
                if len(x) == 1:
                    ax.errorbar(x, m, yerr=sd, color=line.get_color(), capsize=3)
                ax.fill_between(x, [a - b for a, b in zip(m, sd)], [a + b for a, b in zip(m, sd)],
                                color=line.get_color(), alpha=0.2, linewidth=0)
        left.set_title(f"{c['id']}: {verdict_text(c)}", fontsize=9)
        left.set_xlabel("round")
        left.set_ylabel(curve_metric.replace("_", " ") + (" (%)" if SCALE.get(curve_metric) == 100.0 else ""),
                        fontsize=8)
        if left.get_lines():
            left.legend(fontsize=6 if len(c["arms"]) > 6 else 7, ncol=2 if len(c["arms"]) > 6 else 1)
        else:  # a compact result: the final values only
            left.text(0.02, 0.98, f"no per-round curves stored; {c['metric']}:\n" + "\n".join(
                f"{a['label']} {_mean_std(a, c['metric'])}" for a in c["arms"]), transform=left.transAxes,
                fontsize=6, va="top")
        if trends:
            _plot_trends(right, c, trends)
            continue
        right.set_title(f"theorem's quantity {c['quantity']} (where the algorithm records it)", fontsize=9)
        right.set_xlabel("round")
        drawn = [arm["quantity"] for arm in c["arms"] if arm.get("quantity") and arm["quantity"]["round"]]
        if drawn and all(v > 0 for q in drawn for v in q["mean"]):
            right.set_yscale("log")
    fig.suptitle(f"{paper}: claims at m = {result['m']}, T = {result['rounds']}, {result['seeds']} seeds "
                 f"({result['problem']})", fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _plot_trends(ax, c: dict, trends: list[dict]) -> None:
    """The topology figure: each trend's arms, metric (mean ± std over seeds) against the spectral gap, labelled,
    with Spearman's rho and p in the legend."""
    by = {a["label"]: a for a in c["arms"]}
    for t in trends:
        s = SCALE.get(t["metric"], 1.0)
        arms = [by.get(label) for label in t["arms"]]
        if any(a is None or a["mean"] is None for a in arms) or t["metric"] != c["metric"]:
            arms = None  # another metric than the arms' (the trend holds its own means) or a diverged arm
        gap, mean = t["gap"], [s * m if m is not None else float("nan") for m in t["mean"]]
        std = [s * (a["std"] or 0.0) for a in arms] if arms else None
        rho = "rho undefined" if t["rho"] is None else f"mean rho {t['rho']:+.2f}, p {t['p_value']:.2g}"
        ax.errorbar(gap, mean, yerr=std, marker="o", linestyle="none", capsize=3,
                    label=f"{t['arms'][0].split()[0]}: {rho} -> {t['verdict']}")
        for g, m, label in zip(gap, mean, t["arms"]):
            ax.annotate(label.split()[-1], (g, m), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("spectral gap 1 - lambda")
    ax.set_ylabel(trends[0]["metric"].replace("_", " ") + (" (%)" if trends[0]["metric"] in PERCENT else ""),
                  fontsize=8)
    ax.set_title("against the spectral gap (one point per topology)", fontsize=9)
    ax.legend(fontsize=7)


def render(result: dict, out: str | Path) -> dict[str, str]:
    """``out/figures/<paper>-claims.png`` for every paper in ``result``; returns {paper: path}."""
    papers = sorted({c["paper"] for c in result["claims"]})
    return {p: str(plot_claims(result, p, Path(out) / "figures" / f"{p}-claims.png")) for p in papers}


# ------------------------------------------------------------------------------------------------ command
def register(subparsers) -> None:
    from dfltheory.verify.claims import CLAIMS, PAPERS, PLANS

    p = subparsers.add_parser(
        "claims",
        help="the papers' experimental claims re-run on digits, MNIST or Fashion-MNIST: table, verdicts and figures",
        description="Re-run each paper's comparisons (cards §9/§10) in the paper's settings (local epochs, its "
                    "hyper-parameters and learning-rate path, its mixing rule), with seeds that vary the partition, "
                    "the initial model and the graph; each pair is tested by a t-test paired over the seeds (TOST "
                    "for 'about equal'), 'follows the spectral gap' by a permutation test, 'does not follow it' on "
                    "the inversions the paper names, Holm-corrected inside a claim (and study-wide beside), with the "
                    "smallest effect detectable at 80 % power; a part that is not significant says whether the "
                    "paper's printed effect is excluded or the test is underpowered for it. Runs are cached in "
                    "--out and resume; the cost is printed before anything trains.")
    p.add_argument("papers", nargs="*", metavar="PAPER", help=f"'all' (default) or any of {', '.join(PAPERS)}")
    p.add_argument("--out", default="claims", help="directory for the cached runs, claims.json and the figures")
    p.add_argument("--quick", action="store_true", help="the quick size (seconds; for tests): 2 rounds, m = 4, 3 seeds")
    sizes = tuple(dict.fromkeys(k for plan in PLANS.values() for k in plan.sizes))
    p.add_argument("--data", choices=tuple(PLANS), default="digits",
                   help="digits (default: every claim but the landscape one), mnist (the claims the papers ran on "
                        f"MNIST: {', '.join(c.id for c in CLAIMS.values() if 'mnist' in c.data)}) or "
                        "fashion-mnist (DFedSAM's landscape claim, its Fig. 2: "
                        "FedAvg flatter than DFedAvg by the Hessian's top eigenvalue at x_bar); the files under "
                        "--data-root")
    p.add_argument("--data-root", default=None, help="where the data set's files are (mnist: DIR/MNIST/raw, "
                                                     "fashion-mnist: DIR/FashionMNIST/raw)")
    p.add_argument("--size", choices=sizes, default=None,
                   help="digits: quick; default (m = 10 and 20, 40 rounds, 5 seeds: minutes on 2 cores, "
                        "underpowered and says so); full (m = 50 and 100, 100 rounds, 10 seeds: about an hour on 2 "
                        "cores, the results in docs/claims-full.json); gpu (m = 100, 500 rounds, 10 seeds, for "
                        "--device cuda). mnist: quick; cpu (the default: m = 100, 300 rounds, the 32-32 MLP, one "
                        "session on 2 cores); gpu (the papers' settings, for --device cuda). fashion-mnist: quick; "
                        "cpu (the default: m = 100, 100 rounds, the 32-32 MLP, 5 seeds: minutes); gpu (1000 "
                        "rounds, 10 seeds). --quick is --size quick")
    p.add_argument("--jobs", type=int, default=1, help="processes that train runs (one CPU thread each)")
    p.add_argument("--device", default="cpu", help="where runs train: cpu (default), cuda, ...")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.set_defaults(func=_claims)


def _claims(args) -> int:
    from dfltheory.paths import output_dir
    from dfltheory.empirical.runner import check_device
    from dfltheory.empirical.sweep import check_workers
    from dfltheory.verify.claims import PLANS, run_claims, select

    papers = list(args.papers) or ["all"]
    data = getattr(args, "data", "digits")
    plan = PLANS[data]
    select(papers, plan)  # bad input fails before anything is created or run
    check_device(args.device)
    check_workers(args.jobs)
    out = output_dir(args.out)

    def progress(done, total, eta):
        print(f"\rclaims: cohort {done}/{total}, about {eta:.0f} s left   ", end="" if done < total else "\n",
              file=sys.stderr, flush=True)

    size = getattr(args, "size", None) or ("quick" if args.quick else plan.default)
    if args.quick and size != "quick":
        raise ValueError(f"--quick and --size {size} disagree; give one of them")
    if size not in plan.sizes:
        raise ValueError(f"--data {data} has no size {size!r}; choose one of {', '.join(plan.sizes)}")
    if size == "gpu" and args.device == "cpu":
        print(f"dfltheory claims: warning: --size gpu on the CPU: the papers' client counts and rounds; give "
              f"--device cuda, or --size {'full' if data == 'digits' else 'cpu'} for the CPU", file=sys.stderr)

    def announce(cost):
        hours = cost.get("cpu_hours", cost.get("device_hours"))
        print(f"dfltheory claims: --data {data} --size {size}: {cost['cohorts']} cohorts, {cost['runs']} runs, "
              f"{cost['flops']:.3g} operations, about {hours:.2g} {'CPU' if 'cpu_hours' in cost else 'device'}-hours "
              f"(about {cost['hours']:.2g} h wall at --jobs {args.jobs}; {cost['assumption']})", file=sys.stderr,
              flush=True)

    result = run_claims(papers, size, out, args.jobs, progress, args.device, plan=plan,
                        data_root=getattr(args, "data_root", None), announce=announce)
    result["figures"] = render(result, out)
    (out / "claims.json").write_text(json.dumps(result, indent=1) + "\n")
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(table(result))
        print(f"\n{len(result['claims'])} claims, {result['cohorts_trained']} of {result['cohorts']} cohorts trained "
              f"in "
              f"{result['wall_seconds']:.0f} s; results and figures in {out}")
    return 0
