"""The index of the cards' §10 testable claims: each claim -> the tests (``file::function``) or the command that
checks it, and its status. Each paper declares its card's items in its claims module and registers them with
:func:`register_card` (the built-in papers in ``dfltheory/papers/<id>/claims.py``, loaded with their claims);
``docs/claims.md`` is generated from them by :func:`markdown` (``python -m dfltheory.verify.claims_index
[CLAIMS_JSON]``), and ``tests/verify/test_claims.py`` checks that every test named here exists and that the document
is the one the index generates, so the index cannot rot.

Statuses:

* ``asserted``: a test asserts the claim as the card states it;
* ``in part``: a test asserts part of it (the note says which part is open);
* ``not yet``: nothing checks it;
* ``training``: an experimental claim, run by ``dfltheory claims`` (:mod:`dfltheory.verify.claims`; the verdict
  at the default size is shown) or ``dfltheory verify`` (docs/verify.md).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dfltheory.plugins import Registry

STATUSES = ("asserted", "in part", "not yet", "training")
B = "tests/bounds/test_{}.py::"
ENG = "tests/empirical/test_engine.py::"
TRAIN = "tests/empirical/test_train.py::"
TOPO = "tests/topology/test_{}.py::"
PROP = "tests/testing/test_properties.py::"
QUANT = "tests/verify/test_quantities.py::"
HOLDS = "tests/verify/test_holds.py::"
CLAIMS_TEST = "tests/verify/test_claims.py::"


@dataclass(frozen=True)
class Item:
    paper: str
    number: int
    title: str
    status: str
    tests: tuple[str, ...] = ()
    command: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.paper}.{self.number}"


@dataclass(frozen=True)
class Card:
    """A card's §10 items, numbered 1..n; ``personal_metric``: the paper's test accuracy is already the clients'
    own models' (its result cells show no 'own models' beside x_bar's)."""

    items: tuple[Item, ...]
    personal_metric: bool = False


def card_items(paper: str, rows) -> list[Item]:
    """Items from rows (number, claim, status, tests[, command[, note]]); a test named without its file is in
    ``tests/bounds/test_<paper>.py``."""
    b = B.format(paper)
    out = []
    for number, title, status, tests, *rest in rows:
        tests = tuple(t if "::" in t else b + t for t in tests)
        command, note = (list(rest) + ["", ""])[:2]
        out.append(Item(paper, number, title, status, tests, command, note))
    return out


def _load_builtins() -> None:
    """The built-in cards are registered with the built-in claims (each paper's claims module registers both): load
    those, then fix the cards registered (not while the claims are still being loaded: a card's registration reads
    this registry)."""
    from dfltheory.verify import claims

    claims.CLAIMS.keys()  # loads the built-in claims, a no-op while they are being loaded
    if claims.CLAIMS.builtin:  # the built-in claims are sealed: every built-in card is in
        CARDS.loaded()  # first: sealing reads the registry
        CARDS.seal()


#: paper -> its card (:func:`register_card`), in the order registered: the built-in papers' first
CARDS: dict[str, Card] = Registry("paper's card index", load=_load_builtins)


def register_card(items: Sequence[Item], *, personal_metric: bool = False, origin: str = "") -> None:
    """Add a paper's card to docs/claims.md: its §10 items (:func:`card_items`), numbered 1..n, all of one paper,
    each status one of :data:`STATUSES`. ``origin`` (a plugin file) is named in the errors."""
    where = f"{origin}: " if origin else ""
    items = tuple(items)
    if not items or not all(isinstance(i, Item) for i in items):
        raise ValueError(f"{where}register_card needs a non-empty list of Item (dfltheory.verify.claims_index."
                         "card_items builds them from rows)")
    paper = items[0].paper
    problems = [f"items of several papers ({items[0].paper!r}, {i.paper!r}): register one card per paper"
                for i in items if i.paper != paper][:1]
    if [i.number for i in items] != list(range(1, len(items) + 1)):
        problems.append(f"the items of {paper!r} are numbered {[i.number for i in items]}; number them 1..n")
    problems += [f"item {i.key}: status {i.status!r} is not one of {', '.join(STATUSES)}" for i in items
                 if i.status not in STATUSES]
    if paper in CARDS:
        problems.append(f"paper {paper!r} already has a card")
    if problems:
        raise ValueError(f"{where}{problems[0]}")
    CARDS[paper] = Card(items, personal_metric)


def index() -> tuple[Item, ...]:
    """Every registered item, card by card."""
    return tuple(i for card in CARDS.values() for i in card.items)


def counts() -> dict[str, int]:
    c = Counter(i.status for i in index())
    return {s: c.get(s, 0) for s in STATUSES}


def _results(result: dict | None) -> dict[str, list[dict]]:
    """card item ('dfedsam.18') -> the claim rows of ``result`` that answer it."""
    from dfltheory.verify.claims import CLAIMS

    rows = {c["id"]: c for c in (result or {}).get("claims", [])}
    out: dict[str, list[dict]] = {}
    for claim in CLAIMS.values():
        for key in claim.index:
            out.setdefault(key, []).append(rows.get(claim.id, {"id": claim.id}))
    return out


def _arms(r: dict) -> str:
    """'label mean ± std, ...' of a claim row (accuracy in %)."""
    s = 100.0 if r["metric"] in ("test_acc", "local_test_acc") else 1.0
    def own(a):  # the clients' own models beside x_bar (not where the metric is already theirs: Card)
        x = a.get("local_test_acc_mean")
        return (f" (own models {100 * x:.3g})" if x is not None and r["metric"] == "test_acc"
                and not (r["paper"] in CARDS and CARDS[r["paper"]].personal_metric) and a.get("finetune") is None
                else "")

    arms = [f"{a['label']} {s * a['mean']:.3g} ± {s * (a['std'] or 0.0):.2g}{own(a)}" if a["mean"] is not None
            else f"{a['label']} {a['status']}" for a in r["arms"]]
    from dfltheory.verify.claims import trend_text

    return ", ".join(arms + [trend_text(t) for t in r.get("trends", ())])


def _result_cell(rows: list[dict]) -> str:
    return "<br>".join(f"`{r['id']}`: **{r['verdict']}** ({_arms(r)})" if "verdict" in r else f"`{r['id']}`"
                       for r in rows)


def _tests(r: dict) -> str:
    """Each part of a claim row: the difference, its test's Holm-adjusted p and the smallest detectable effect."""
    from dfltheory.verify.claims import shown_in

    s, unit = shown_in(r["metric"])
    out = []
    for p in r["pairs"]:
        if p.get("difference") is None:
            out.append(f"{p['a']} {p['relation']} {p['b']}: {p['why']}")
            continue
        moving = ", still moving" if p.get("moving") else ""
        paper = f", the paper's {s * p['paper_effect']:+.3g}{unit}" if p.get("paper_effect") is not None else ""
        study = (f" (study-wide: {p['verdict_study']})" if p.get("verdict_study", p["verdict"]) != p["verdict"]
                 else "")
        out.append(f"{p['a']} {p['relation']} {p['b']}: {s * p['difference']:+.3g}{unit}, p_Holm "
                   f"{p['p_holm']:.2g}, detectable {s * p['detectable']:.3g}{unit}{paper}{moving}: {p['verdict']}"
                   f"{study}")
    for t in r.get("trends", ()):
        if t.get("rho") is None:
            out.append(f"trend ({t['metric']}): {t.get('why', 'undefined')}")
        elif t["relation"] == "=" and "inversions" in t:
            inv = ", ".join(f"{x['a']} over {x['b']} {s * x['difference']:+.3g}{unit}" if "difference" in x
                            else f"{x['a']} over {x['b']}: {x['why']}" for x in t["inversions"])
            out.append(f"does not follow the gap ({t['metric']}, {len(t['arms'])} arms; rho {t['rho']:+.2f} "
                       f"descriptive): the paper's inversions {inv}; p_Holm {t.get('p_holm', 1.0):.2g}: {t['verdict']}")
        else:
            rho = "undefined" if t.get("rho") is None else f"{t['rho']:+.2f}"
            interval = (f" [{t['interval'][0]:+.2f}, {t['interval'][1]:+.2f}]" if t.get("interval") else "")
            out.append(f"trend ({t['metric']} vs gap, {len(t['arms'])} arms): mean rho {rho}{interval}, p_Holm "
                       f"{t.get('p_holm', 1.0):.2g}: {t['verdict']}")
    return "<br>".join(out)


def _training_section(result: dict) -> list[str]:
    from dfltheory.verify.claims import RULE

    from dfltheory.verify.claims import findings
    from dfltheory.verify.stats import VERDICTS

    found = result.get("findings") or findings(result["claims"])
    counts_ = Counter(f["verdict"] for f in found)
    study = Counter(f.get("verdict_study", f["verdict"]) for f in found)
    repeated = [f for f in found if len(f["claims"]) > 1]
    data = "" if result.get("plan", "digits") == "digits" else f"--data {result['plan']} "
    lines = [f"## Training claims: `dfltheory claims {data}--size {result['size']} --jobs {result['workers']}`", "",
             f"m = {result['m']} clients ({result['m_large']} for the topology, neighbour and client-count claims), "
             f"T = {result['rounds']} rounds, {result['seeds']} seeds per arm (each seed its own partition, initial "
             f"model, graph and minibatches), {result['problem']}, the papers' settings (dfltheory/verify/claims.py); "
             f"{result['cohorts']} cohorts ({result['runs']} runs), {result['cohort_seconds'] / 60:.0f} min of "
             f"training summed over the cohorts (each on one CPU thread; {result['workers']} processes at a time, "
             f"{result['machine_note']}). Rule: {RULE}. Accuracies in % (x_bar's, and the clients' own models in "
             "brackets; DFedPGP's is the personal accuracy). A pair marked 'still moving' changed by more than the "
             "effect tested over the last 20 % of the rounds.", "",
             f"**Verdicts** ({len(result['claims'])} claims, {len(found)} findings: "
             + ("; ".join(f"{', '.join(f['claims'][1:])} counted with {f['claims'][0]}" for f in repeated) or "each "
                "claim its own") + "): " + ", ".join(f"{counts_.get(v, 0)} {v}" for v in VERDICTS) + ". Study-wide "
             "(Holm over every test of the run): " + ", ".join(f"{study.get(v, 0)} {v}" for v in VERDICTS) + ".", "",
             "A rule must agree with the paper's own numbers before it may contradict them: each claim's rule is fed "
             "the paper's printed numbers plus the measured per-seed noise (200 simulations; column 'calibration': "
             "how often it then agrees / calls them contradicted); a 'contradicted' the rule also gives the paper's "
             "numbers more than 10 % of the time is void.", ""] + ([
             f"{result['rejudged']}.", ""] if result.get("rejudged") else []) + [
             "| claim | section | paper's number | measured here (mean ± std) | tests | calibration | verdict | why |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["claims"]:
        why = "" if r["verdict"] == "agrees" else r["reason"]
        if r.get("stale"):
            why = f"stored verdict, not judged again: {r['stale']}" + (f"; {why}" if why else "")
        cal = r.get("calibration")
        cal = (f"agrees {100 * cal['agrees']:.0f} %, contradicted {100 * cal['contradicted']:.0f} %" if cal
               else "no paper numbers")
        study = (f" (study-wide: {r['verdict_study']})" if r.get("verdict_study", r["verdict"]) != r["verdict"]
                 else "")
        lines.append(f"| `{r['id']}` (m = {r['m']}): {r['statement']} | {r['section']} | {r['paper_number']} | "
                     f"{_arms(r)} | {_tests(r)} | {cal} | **{r['verdict']}**{study} | {why} |")
    lines += ["", "### What still differs from each paper, per claim", ""]
    lines += [f"* `{r['id']}`: " + "; ".join(r["deviations"]) for r in result["claims"]]
    return lines + [""]


#: where a claim's note reports the DFedSGPSM-S collapse that the issue-34 section quotes
MARK = "DFedSGPSM-S collapses"


def _issue34_section() -> list[str]:
    """How the rules were calibrated on the papers' own numbers (issue 34 item 4), and the DFedSGPSM-S collapse."""
    from dfltheory.verify.claims import CALIBRATION_LEVEL, CLAIMS

    collapse = next(c.note[c.note.index(MARK):] for c in CLAIMS.values() if MARK in c.note)  # quoted from the note
    return ["### The rules against the papers' own numbers (issue 34)", "",
            "* 'Does not follow the spectral gap' (DFedCata's Table III and Fig. 4) is tested on the inversions the "
            "paper names (WS and ER above Full, Exp below Grid; ER faster than Full): the earlier rule, 'the mean "
            "per-seed Spearman rho lies inside (-0.5, 0.5)', called the paper's own Table III 'contradicted' (its "
            "rank correlation with the gaps is about +0.5: the ring is far below the rest). Fed the paper's tables "
            "with the measured per-seed noise, every trend rule now agrees "
            "(`tests/verify/test_claims.py::test_each_trend_rule_agrees_with_the_papers_own_table`), and no rule "
            f"calls a paper's printed numbers contradicted more than {100 * CALIBRATION_LEVEL:.0f} % of the time "
            "(`test_no_rule_contradicts_the_papers_own_numbers`); a rule that would may not contradict them (the "
            "claim becomes inconclusive).",
            "* 'Inconclusive' is split: *paper's effect excluded* (the one-sided test of 'difference >= the paper's "
            "printed effect' rejects, Holm inside the claim) and *underpowered* (the smallest effect detectable at "
            "80 % power exceeds the paper's effect, or the equivalence margin).",
            "* Family-wise policy: each claim is one family (Holm at 0.05 over its tests), as each paper states each "
            "claim; beside it, the study-wide verdict applies Holm at 0.05 over every test of every claim of the run.",
            "* One finding counted once: `dfedadmm.lambda` repeats `dfedadmm.printed` (the degenerate eta/lambda at "
            "the printed eta = 0.1 and small lambda); the verdict counts are over findings.",
            "* The clients' own models' accuracy is stored per seed (`local_values`), and `dfedsam.topology` is judged "
            "on it (gossip with a symmetric W keeps x_bar; the paper's 15-point spread is the local models'). Speed "
            "claims, and the runs they share, are measured every round.",
            f"* {collapse}.", ""]


#: the plans beside digits, each with its heading and what it runs (issue 34 items 2 and 3)
_PLAN_TEXT = {
    "mnist": ("MNIST, where the papers ran it", "DFedSGPSM's Table 1, DFedADMM's Tables 1 and 2; the other claims' "
              "tables are CIFAR", "the papers' learning rate, decay, rho, momentum, lambda, neighbours and rounds "
              "(cards §8), weight decay 5e-4 for DFedADMM's DFedAvg", "MNIST/raw"),
    "fashion-mnist": ("Fashion-MNIST: DFedSAM's landscape claim (its Fig. 2)", "FedAvg against DFedAvg in the same "
                      "setting, judged on lambda_max of the Hessian of f at x_bar after training, per seed; `dfltheory "
                      "plot landscape RUN` draws one run's filter-normalised slice", "DFedSAM's main setting (card "
                      "§8: lr 0.1 decayed by 0.998, weight decay 5e-4, FedAvg sampling 10 % of the clients; the "
                      "split is not an official one)", "FashionMNIST/raw"),
}


def _plan_section(name: str, result: dict | None) -> list[str]:
    """A plan beside digits: its claims, sizes, what each size scales down, the cost estimate; the results where
    ``result`` (docs/claims-<plan>.json) is given."""
    from dfltheory.verify.claims import PLANS, estimate, select

    plan = PLANS[name]
    heading, what, settings, raw = _PLAN_TEXT[name]
    chosen = select(["all"], plan)
    lines = [f"## {heading}: `dfltheory claims --data {name} [--size cpu|gpu]`", "",
             f"Claims: {', '.join(f'`{c.id}`' for c in chosen)} ({what}). Problem: {plan.problem}; {settings}. "
             f"Data: `dfltheory data fetch {name}`, then `--data-root DIR` (DIR/{raw}). The cost is printed before "
             "anything trains.", "", "| size | m | rounds | seeds | local epochs | model | measured every | cohorts "
             "(runs) | estimate | what it scales down |", "|---|---|---|---|---|---|---|---|---|---|"]
    for size_name, size in plan.sizes.items():
        if size_name == "quick":
            continue
        device = "cpu" if size_name == "cpu" else "cuda"
        cost = estimate(chosen, size, device, plan, workers=2 if size_name == "cpu" else 1)
        none = "nothing: the papers' settings"
        hours = (f"{cost['cpu_hours']:.2f} CPU-hours ({cost['hours']:.2f} h on 2 cores)" if size_name == "cpu"
                 else f"{cost['device_hours']:.1f} GPU-hours (assumed throughput)")
        lines.append(f"| {size_name} | {size.m} | {size.rounds} | {size.seeds} | {size.K or 5} | "
                     f"{size.model or plan.common['model']} | {size.eval_every} rounds | {cost['cohorts']} "
                     f"({cost['runs']}) | {hours} | {'; '.join(size.deviations) or none} |")
    lines.append("")
    if result:
        lines += _training_section(result)
    else:
        lines += [f"Results: not yet run (`dfltheory claims --data {name} --size cpu --jobs 2 --out claims-{name}`, "
                  f"then `docs/claims-{name}.json`).", ""]
    return lines


def markdown(result: dict | None = None, mnist: dict | None = None, fashion: dict | None = None) -> str:
    """docs/claims.md: counts, then one table per card; ``result`` (of :func:`dfltheory.verify.claims.run_claims`)
    fills the verdicts of the training claims; ``mnist`` and ``fashion`` (the MNIST and Fashion-MNIST plans'
    results, docs/claims-mnist.json and docs/claims-fashion-mnist.json) add their tables."""
    c = counts()
    by = _results(result)
    lines = ["# The cards' §10 testable claims: what checks each one", "",
             "Generated by `python -m dfltheory.verify.claims_index docs/claims-full.json > docs/claims.md` from "
             "`dfltheory/verify/claims_index.py`; `tests/verify/test_claims.py` checks that every test named here "
             "exists and that this file is up to date.", "",
             f"**{len(index())} claims**: {c['asserted']} asserted by a test, {c['in part']} in part, {c['not yet']} "
             f"not yet, {c['training']} need training (run by `dfltheory claims` or `dfltheory verify`).", ""]
    if result:
        lines += _training_section(result)
    lines += _issue34_section() + _plan_section("mnist", mnist) + _plan_section("fashion-mnist", fashion)
    for paper, card in CARDS.items():
        lines += [f"## {paper} (card §10, {len(card.items)} claims)", "", "| # | claim | status | checked by | result / open part |",
                  "|---|---|---|---|---|"]
        for item in card.items:
            checks = [f"`{t}`" for t in item.tests] + ([f"`{item.command}`"] if item.command else [])
            res = _result_cell(by.get(item.key, [])) if item.status == "training" else ""
            extra = "<br>".join(x for x in (res, item.note) if x)
            lines.append(f"| {item.number} | {item.title} | {item.status} | {'<br>'.join(checks) or '-'} | "
                         f"{extra or '-'} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m dfltheory.verify.claims_index [CLAIMS_JSON [MNIST_JSON [FASHION_JSON]]]
    from dfltheory.verify.claims_index import markdown as generate  # the module the papers register into

    res, mn, fa = (json.loads(Path(a).read_text()) if a else None for a in (sys.argv[1:] + ["", "", ""])[:3])
    sys.stdout.write(generate(res, mn, fa))
