"""Presentation of the papers' experimental claims (:mod:`dfltheory.verify.claims`): the table "claim / paper's
number / measured here (mean ± std) / verdict", one figure per paper, and the ``dfltheory claims`` command.

``dfltheory claims [PAPER ...] --out DIR`` runs (or reads from DIR's cache) the claims, prints the table (``--json``:
the whole result), writes ``DIR/claims.json`` and ``DIR/figures/<paper>-claims.png``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SCALE = {"test_acc": 100.0, "train_loss": 1.0}  # accuracy in %


def _mean_std(arm: dict, metric: str) -> str:
    if arm["mean"] is None:
        return "diverged"
    if metric == "test_acc":
        return f"{100 * arm['mean']:.2f} ± {100 * arm['std']:.2f}"
    return f"{arm['mean']:.3g} ± {arm['std']:.2g}"


def table(result: dict) -> str:
    """One block per claim: id, section, the paper's statement and number, each arm's mean ± std, each pair's
    difference against the threshold, and the verdict."""
    out = []
    for c in result["claims"]:
        unit = " %" if c["metric"] == "test_acc" else ""
        out.append(f"{c['id']} ({c['section']}): {c['verdict'].upper()}")
        out.append(f"  claim: {c['statement']}")
        out.append(f"  paper: {c['paper_number']}")
        out.append(f"  here ({c['metric_label']}{unit}, {len(c['arms'][0]['seeds'])} seeds): "
                   + "; ".join(f"{a['label']} {_mean_std(a, c['metric'])}" for a in c["arms"]))
        s = SCALE.get(c["metric"], 1.0)
        for p in c["pairs"]:
            diff = ("-" if p["difference"] is None
                    else f"{s * p['difference']:+.2f} (threshold {s * p['threshold']:.2f})")
            out.append(f"  {p['a']} {p['relation']} {p['b']}: {diff} -> {p['verdict']}")
        if c.get("note"):
            out.append(f"  note: {c['note']}")
    return "\n".join(out)


def plot_claims(result: dict, paper: str, path: str | Path) -> Path:
    """One row per claim of ``paper``: the metric (left) and the theorem's measured quantity (right, log scale)
    against rounds, one line per arm, the band mean ± std over seeds. Returns the path."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rows = [c for c in result["claims"] if c["paper"] == paper]
    if not rows:
        raise ValueError(f"no claims of {paper!r} in the result; papers there: "
                         f"{', '.join(sorted({c['paper'] for c in result['claims']}))}")
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 3.2 * len(rows)), squeeze=False)
    for (left, right), c in zip(axes, rows):
        s = SCALE.get(c["metric"], 1.0)
        for arm in c["arms"]:
            for ax, key, scale in ((left, "curve", s), (right, "quantity", 1.0)):
                cur = arm[key]
                if not cur["round"]:
                    continue
                x = cur["round"]
                m = [scale * v for v in cur["mean"]]
                sd = [scale * v for v in cur["std"]]
                line, = ax.plot(x, m, label=f"{arm['label']} ({_mean_std(arm, c['metric'])})")
                ax.fill_between(x, [a - b for a, b in zip(m, sd)], [a + b for a, b in zip(m, sd)],
                                color=line.get_color(), alpha=0.2, linewidth=0)
        left.set_title(f"{c['id']}: {c['verdict']}", fontsize=9)
        left.set_xlabel("round")
        left.set_ylabel(c["metric_label"].replace(" (last round)", "") + (" (%)" if c["metric"] == "test_acc" else ""),
                        fontsize=8)
        left.legend(fontsize=7)
        right.set_title(f"theorem's quantity {c['quantity']} (where the algorithm records it)", fontsize=9)
        right.set_xlabel("round")
        if any(arm["quantity"]["round"] for arm in c["arms"]) and all(
                v > 0 for arm in c["arms"] for v in arm["quantity"]["mean"]):
            right.set_yscale("log")
    fig.suptitle(f"{paper}: claims at m = {result['m']}, T = {result['rounds']}, {result['seeds']} seeds "
                 f"({result['problem']})", fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def render(result: dict, out: str | Path) -> dict[str, str]:
    """``out/figures/<paper>-claims.png`` for every paper in ``result``; returns {paper: path}."""
    papers = sorted({c["paper"] for c in result["claims"]})
    return {p: str(plot_claims(result, p, Path(out) / "figures" / f"{p}-claims.png")) for p in papers}


# ------------------------------------------------------------------------------------------------ command
def register(subparsers) -> None:
    from dfltheory.verify.claims import PAPERS

    p = subparsers.add_parser(
        "claims", help="the papers' experimental claims re-run on digits: table, verdicts and figures",
        description="Re-run each paper's comparisons (cards §9/§10) on digits with several seeds, the same rounds "
                    "and local steps for every algorithm of a claim and the paper's hyper-parameters; a claim agrees "
                    "only where the difference of means exceeds twice its standard error. Runs are cached in --out.")
    p.add_argument("papers", nargs="*", metavar="PAPER", help=f"'all' (default) or any of {', '.join(PAPERS)}")
    p.add_argument("--out", default="claims", help="directory for the cached runs, claims.json and the figures")
    p.add_argument("--quick", action="store_true", help="the quick size (seconds; for tests): 1 round, m = 4, 3 seeds")
    p.add_argument("--jobs", type=int, default=1, help="processes that train runs (one CPU thread each)")
    p.add_argument("--device", default="cpu", help="where runs train: cpu (default), cuda, ...")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.set_defaults(func=_claims)


def _claims(args) -> int:
    from dfltheory.cli import output_dir
    from dfltheory.empirical.runner import check_device
    from dfltheory.verify.claims import run_claims, select

    papers = list(args.papers) or ["all"]
    select(papers)  # bad input fails before anything is created or run
    check_device(args.device)
    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1 (processes that train runs), got {args.jobs}")
    out = output_dir(args.out)

    def progress(done, total, eta):
        print(f"\rclaims: run {done}/{total}, about {eta:.0f} s left   ", end="" if done < total else "\n",
              file=sys.stderr, flush=True)

    result = run_claims(papers, "quick" if args.quick else "default", out, args.jobs, progress, args.device)
    result["figures"] = render(result, out)
    (out / "claims.json").write_text(json.dumps(result, indent=1) + "\n")
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(table(result))
        print(f"\n{len(result['claims'])} claims, {result['runs_trained']} runs trained in "
              f"{result['wall_seconds']:.0f} s; results and figures in {out}")
    return 0
