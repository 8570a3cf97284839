"""The report's first screen: one table per paper, one row per main theorem and per named variant of it.

Each row joins what the toolkit knows about the theorem, every cell already formatted for a reader:

* ``conditions``   its conditions at the paper's own experimental settings (:mod:`dfltheory.bounds.settings`, what
                   ``dfltheory bounds experiments`` prints): met, or for which L they fail; with an L estimated on a
                   network, violated by what factor;
* ``rate``         the rate each corollary states against the rate its schedule gives in the theorem
                   (:mod:`dfltheory.bounds.rates`, ``dfltheory bounds verify``);
* ``exact``        the bound-holds verdicts on problems with exact constants and the ratio bound/measured
                   (``dfltheory.verify.holds.verify``), or ``verification not run``;
* ``network``      the bound against the measured quantity on a digits network with estimated constants, or ``—``;
* ``discrepancies`` per paper, each item of the "Discrepancies" section of ``docs/bounds/<paper>.md`` and each
                   finding of its settings, linked to that section.

A cell is ``{"text": ..., "detail": [...], "status": "ok" | "bad" | "warn" | "none"}``; Markdown and HTML render
the same cells, so they agree by construction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from dfltheory.figures.format import formula, num, ratio, slug

__all__ = ["theorem_rows", "paper_tables", "discrepancies", "order_text", "tally", "DOCS", "VERDICT_STATUS"]

#: docs/bounds of the source tree (absent from an installed wheel: discrepancies then come from the settings only)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "bounds"


def cell(text: str, status: str = "none", detail: Sequence[str] = (), more: str = "") -> dict:
    """``text`` the verdict, ``detail`` the lines under it, ``more`` what the HTML shows on hover (and JSON keeps)."""
    return {"text": text, "status": status, "detail": list(detail), "more": more}


def failed_cell(rows: Sequence[Mapping]) -> dict:
    """A cell of cases that raised: ``failed`` in red, each case's error and the command that reproduces it."""
    return cell(f"failed ({len(rows)} case{'s' * (len(rows) != 1)})", "bad",
                [f"{r.get('case', '')}: {r['error']}" for r in rows],
                "; ".join(f"reproduce: {r['command']}" for r in rows if r.get("command")))


def order_text(order: str) -> str:
    """``T^-1/2`` (as :mod:`dfltheory.bounds.rates` writes an order) -> ``1/√T``; ``1`` -> ``1 (no decay)``."""
    if order == "1":
        return "1 (no decay)"
    m = re.fullmatch(r"T\^(-?\d+)(?:/(\d+))?", order)
    if not m:
        return formula(order)
    p, q = int(m[1]), int(m[2] or 1)
    base = "T" if q == 1 else ("√T" if q == 2 else f"T^(1/{q})")
    power = formula(f"x**{abs(p)}")[1:] if abs(p) != 1 else ""
    return (f"1/{base}{power}" if p < 0 else f"{base}{power}")


# --- rows -------------------------------------------------------------------------------------------------------

def _root(thm, cat) -> str:
    while thm.variant_of and thm.variant_of in cat:
        thm = cat[thm.variant_of]
    return thm.id


def theorem_rows(paper: str, extra: Sequence[str] = ()) -> list[dict]:
    """The paper's main theorems (kind ``theorem`` that vary no other entry), each followed by its named variants
    (``variant_of`` it, directly or through another variant); ``extra`` ids (e.g. the verification's main
    theorems) are added where the catalog would not list them."""
    from dfltheory.bounds import catalog

    cat = catalog()
    thms = [t for t in cat.values() if t.paper == paper and t.kind == "theorem"]
    rows = []
    for main in (t for t in thms if t.variant_of is None):
        rows.append({"id": main.id, "main": True, "variant": main.variant, "title": main.title})
        rows += [{"id": t.id, "main": False, "variant": t.variant, "title": t.title}
                 for t in thms if t.variant_of is not None and _root(t, cat) == main.id]
    known = {r["id"] for r in rows}
    for i in extra:
        if i not in known:
            t = cat.get(i)
            rows.append({"id": i, "main": True, "variant": getattr(t, "variant", "printed"),
                         "title": getattr(t, "title", i)})
            known.add(i)
    return rows


# --- conditions at the paper's settings -------------------------------------------------------------------------

_THRESHOLD = re.compile(r"^(?P<name>\w+) in (?P<lo>[\[(])(?P<a>[^,]+), (?:inf|oo)\)$")


def _threshold(violated_for: str | None) -> float | None:
    """``L in (0.05, inf)`` -> 0.05: the setting meets the condition only below it."""
    m = _THRESHOLD.match(violated_for or "")
    return float(m["a"]) if m else None


def _settings_for(thm_id: str, experiments: Sequence[Mapping], cat) -> list[Mapping]:
    """The experiments checked against this theorem (for a variant whose conditions differ from the main theorem's,
    the main theorem's settings checked against it), or, for a variant with the main theorem's conditions, the main
    theorem's."""
    own = [s for s in experiments if s["theorem"] == thm_id]
    if own:
        return own
    thm = cat.get(thm_id)
    if thm is None:
        return []
    root = cat[_root(thm, cat)]
    same = [(c.text, str(c.relation)) for c in thm.conditions] == [(c.text, str(c.relation)) for c in root.conditions]
    return [s for s in experiments if s["theorem"] == root.id] if same else []


def _summary(settings: Sequence[Mapping], origins: tuple[str, ...]) -> tuple[list[float], set, set, dict]:
    """Over the settings, for the conditions of these origins: the L below which each setting meets them all, the
    conditions violated for every L, the symbols whose absence leaves some undecided, the tightest conditions."""
    limits, always, undecided, tightest = [], set(), set(), {}
    for s in settings:
        conds = [c for c in s["conditions"] if c["origin"] in origins]
        lim = [(_threshold(c["violated_for"]), c) for c in conds if _threshold(c["violated_for"]) is not None]
        always |= {formula(c["relation"]) for c in conds if c["holds"] is False}
        undecided |= {m for c in conds if c["holds"] is None and c["missing"] for m in c["missing"]}
        if lim:
            low, c = min(lim, key=lambda x: x[0])
            limits.append(low)
            tightest[formula(c["relation"])] = tightest.get(formula(c["relation"]), 0) + 1
    return limits, always, undecided, tightest


def _verdict(limits, always, undecided, n: int, sym: str, estimated_L: float | None) -> tuple[str, str]:
    if limits:
        lo, hi = min(limits), max(limits)
        span = num(lo) if lo == hi else f"{num(lo)} ... {num(hi)}"
        text = f"met only for {sym} < {span}" + (f" ({len(limits)} of {n} settings)" if len(limits) < n else "")
        if estimated_L is None:
            return text, "bad"
        if estimated_L <= lo:
            return f"met at {sym}̂ = {num(estimated_L)}; {text}", "ok"
        f_lo, f_hi = estimated_L / hi, estimated_L / lo
        factor = ratio(f_hi) if abs(f_hi / f_lo - 1) < 1e-3 else f"×{num(max(f_lo, 1))} ... ×{num(f_hi)}"
        return f"violated by {factor} at {sym}̂ = {num(estimated_L)}; {text}", "bad"
    if always:
        return f"violated for every {sym}", "bad"
    if undecided:
        return "met where decided", "warn"
    return "met", "ok"


def conditions_cell(thm_id: str, experiments: Sequence[Mapping], cat, estimated_L: float | None = None) -> dict:
    """Met or violated at the paper's settings, for the paper's own conditions and for all (with those the toolkit
    derived): the L below which they hold (over the settings, smallest ... largest), conditions violated for every L,
    undecided ones; with ``estimated_L`` the factor by which it exceeds that limit."""
    settings = _settings_for(thm_id, experiments, cat)
    broken = [s for s in settings if s.get("status") == "failed"]
    if broken:  # a check that raised: the cell says so, never "met"
        return failed_cell(broken)
    if not settings:
        return cell("no setting of the paper is checked against this entry", "none")
    sym, n = formula(settings[0].get("free", "L")), len(settings)
    ids = list(dict.fromkeys(s["id"].split(".exp.")[-1] for s in settings))
    more = f"{n} setting{'s' * (n != 1)} of the paper: {', '.join(ids)}"
    detail = []
    paper = _summary(settings, ("paper",))
    every = _summary(settings, ("paper", "derived"))
    p_text, p_status = _verdict(*paper[:3], n, sym, estimated_L)
    a_text, a_status = _verdict(*every[:3], n, sym, estimated_L)
    text = f"paper's: {p_text}" + ("" if a_text == p_text else f"; with the derived: {a_text}")
    status = "bad" if "bad" in (p_status, a_status) else ("warn" if "warn" in (p_status, a_status) else "ok")
    tight = every[3] or paper[3]
    if tight:
        detail.append(f"tightest: {max(tight, key=tight.get)}")
    if every[1]:
        detail.append(f"violated for every {sym}: " + "; ".join(sorted(every[1])))
    if every[2]:
        detail.append("undecided without " + ", ".join(formula(u) for u in sorted(every[2])))
    return cell(text, status, detail, more)


# --- stated against derived rates --------------------------------------------------------------------------------

def rate_cell(thm_id: str, rates: Sequence[Mapping], measured: Sequence[Mapping] = ()) -> dict:
    """Each corollary whose parent is this theorem: the order its schedule gives in the theorem against the stated
    one, and how many findings ``bounds verify`` reports; a measured slope where the verification fitted one."""
    mine = [r for r in rates if r["parent"] == thm_id]
    slopes = {m["theorem"]: m for m in measured}
    if any(r.get("status") == "failed" for r in mine):
        return failed_cell([r for r in mine if r.get("status") == "failed"])
    if not mine:
        return cell("—", "none")
    lines, status = [], "ok"
    for r in mine:
        d, s = r["derived_rate"], r["stated_rate"]
        same = d == s
        status = status if same else "bad"
        n = len(r["findings"])
        lines.append(f"{r['id'].split('.', 1)[1]}: {order_text(d)} vs stated {order_text(s)}"
                     + (f" · {n} finding{'s' * (n != 1)}" if n else ""))
        if r["id"] in slopes:
            m = slopes[r["id"]]
            lines.append(f"measured slope {num(m.get('measured_slope'))}, bound {num(m.get('bound_slope'))}, "
                         f"stated {num(m.get('stated_slope'))}")
    text = "same order as stated" if status == "ok" else "differs from the stated order"
    if all(r["derived_rate"] == "1" for r in mine):
        text, status = "does not vanish under the schedule", "bad"
    return cell(text, status, lines)


# --- verification on exact problems ------------------------------------------------------------------------------

VERDICT_STATUS = {"violated": "bad", "inconclusive": "warn", "diverged": "warn", "conditions fail": "warn",
                  "vacuous": "warn", "not testable": "none", "holds": "ok"}


def verdict_status(v: Mapping) -> str:
    """The cell status of one verdict: green ('ok') only for an informative 'holds' (the bound below the trivial
    level, :mod:`dfltheory.verify.trivial`); a trivial 'holds' says nothing ('none')."""
    if v.get("big_o") and v["verdict"] in ("holds", "violated", "inconclusive"):
        return "none"  # an O(.) statement with its constants taken as 1 bounds nothing
    if v["verdict"] == "holds":
        return "ok" if v.get("informative") else "none"
    return VERDICT_STATUS.get(v["verdict"], "warn")


def tally(verdicts: Sequence[Mapping]) -> tuple[str, str]:
    """``"14/14 hold (2 informative, 12 trivial), bound/measured ×51 ... ×3.5×10²⁵"`` (or the worst verdict's
    count) and its status (green only where some hold is informative)."""
    names = [v["verdict"] for v in verdicts]
    order = list(VERDICT_STATUS)  # the worst first; a verdict this table does not know counts as a caveat
    worst = min(names, key=lambda w: order.index(w) if w in order else order.index("holds") - 0.5)
    ratios = sorted(float(v["ratio"]) for v in verdicts if v["verdict"] == "holds" and v.get("ratio") is not None)
    informative = sum(v["verdict"] == "holds" and bool(v.get("informative")) for v in verdicts)
    text = f"{names.count('holds')}/{len(names)} hold"
    if names.count("holds"):
        text += f" ({informative} informative, {names.count('holds') - informative} trivial)"
    if worst != "holds":
        text += f", {names.count(worst)} {worst}"
    if ratios:
        text += f", bound/measured {ratio(ratios[0])}" + (f" ... {ratio(ratios[-1])}" if len(ratios) > 1 else "")
    status = VERDICT_STATUS.get(worst, "warn")
    return text, ("ok" if informative else "none") if status == "ok" else status


def informative_lines(thm_id: str, verification: Mapping | None) -> list[tuple[str, str]]:
    """(text, status) of this theorem's verdicts on the informative runs (beyond T*), at T_run = 2 T*."""
    out = []
    for run in (verification or {}).get("informative", ()):
        for v in run.get("verdicts", ()):
            if v["theorem"] != thm_id:
                continue
            a = v["at"]
            label = "informative" if a.get("informative") else "trivial"
            on = ", on the proof's functional" if v.get("proof_functional") else ""
            out.append((f"informative run: {a['verdict']} ({label}) {ratio(a.get('ratio'))} at T = {a['T']} "
                        f"(T* = {run['T_star']}, {run['topology']}{on})", verdict_status(a)))
        if run["theorem"] == thm_id and run["status"] != "run":
            out.append((f"informative run: {run['status']}", "none"))
    return out


def functional_text(v: Mapping) -> str:
    """The functional a verdict judged, ``the proof's functional: ...`` where it is the proof's rather than the
    printed one (DFedSAM's targets are judged on both: two verdicts told apart only by this); '' where absent."""
    if not v.get("functional"):
        return ""
    return ("the proof's functional: " if v.get("proof_functional") else "functional: ") + str(v["functional"])


def c_star_text(c: Mapping | None) -> str:
    """``c* = 2.94 (training; pep 7.27)``: the factor by which the bound could shrink before its instrument (named)
    catches it, then the other instruments' factors; '' where verify gave none."""
    if not isinstance(c, Mapping) or (c.get("factor") is None and not c.get("instrument")):
        return ""
    factor = num(c["factor"]) if c.get("factor") is not None else "none found"
    others = [f"{k} {num(x)}" for k, x in (c.get("by_instrument") or {}).items()
              if k != c.get("instrument") and x is not None]
    inside = "; ".join(([c["instrument"]] if c.get("instrument") else []) + ([", ".join(others)] if others else []))
    return f"c* = {factor}" + (f" ({inside})" if inside else "")


def shares_text(shares: Mapping | None, top: int | None = None) -> str:
    """Each term's share of the bound, largest first (``optimization 53.5 %, consensus 11.1 %``); ``top`` keeps the
    largest few; '' where absent."""
    if not isinstance(shares, Mapping) or not shares:
        return ""
    def pct(x) -> str:
        return f"{num(100 * x)} %" if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)

    items = sorted(shares.items(), key=lambda kv: -kv[1] if isinstance(kv[1], (int, float)) else 0)
    return ", ".join(f"{k} {pct(x)}" for k, x in items[:top])


def candidates_text(run: Mapping) -> str:
    """The candidate instances an informative run trained, each with its bound / measured, the kept one marked."""
    kept = (run.get("problem"), run.get("topology"), run.get("constants"))
    return "; ".join(f"{c.get('problem')}, {c.get('topology')}: {ratio(c.get('ratio'))}"
                     + (" (kept)" if (c.get("problem"), c.get("topology"), c.get("constants")) == kept else "")
                     for c in run.get("candidates") or ())


def exact_cell(thm_id: str, verification: Mapping | None) -> dict:
    """The verdicts of this theorem on the problems with exact (certified, cited, measured) constants: one verdict
    as it is, several as a tally, per constants family below; each setting's verdict on hover."""
    if not verification:
        return cell("verification not run", "none")
    broken = [f for f in verification.get("failures", ()) if f.get("theorem", thm_id) == thm_id
              and f.get("paper") == thm_id.split(".")[0]]
    if broken:  # this theorem's (or its whole paper's) runs raised: its verdicts are missing, not fine
        return failed_cell(broken)
    mine = [v for v in verification.get("verdicts", ()) if v["theorem"] == thm_id]
    runs = informative_lines(thm_id, verification)
    if not mine and not runs:
        return cell("not verified", "none")
    if runs:  # the informative runs first: the only verdicts that could fail
        (head, status), rest = runs[0], [t for t, _ in runs[1:]]
        summary = [tally(mine)[0] + " at the default horizon"] if mine else []
        return cell(head, status, rest + summary, "; ".join(f"{v['verdict']}: {v.get('setting')}" for v in mine))
    lines = []
    for v in mine:
        text = v["verdict"] + (f" {ratio(v['ratio'])}" if v.get("ratio") is not None else "")
        if v["verdict"] == "holds":
            text += " (informative)" if v.get("informative") else " (trivial)"
        if v.get("failed"):
            text += " (" + "; ".join(formula(f) for f in v["failed"]) + ")"
        lines.append(f"{text}: {formula(v.get('setting') or v.get('problem') or '')}"
                     + (f" ({v['constants']} constants)" if v.get("constants") else ""))
    if len(mine) == 1:  # the verdict itself, its setting below
        head, where = lines[0].split(": ", 1)
        return cell(head, verdict_status(mine[0]), [where], _setting(mine[0]))
    head, status = tally(mine)
    families = list(dict.fromkeys(v.get("constants") for v in mine))
    detail = [f"{fam} constants: " + tally([v for v in mine if v.get("constants") == fam])[0]
              for fam in families if fam] if len(families) > 1 else []
    return cell(head, status, detail, "; ".join(lines))


def _setting(v: Mapping) -> str:
    """Where a verdict was measured: its setting, problem and constants (certified, exact, cited or measured)."""
    where = ", ".join(str(x) for x in (v.get("setting"), v.get("problem")) if x)
    return where + (f"; {v['constants']} constants" if v.get("constants") else "")


def network_cell(thm_id: str, network: Mapping | None) -> dict:
    """The digits run of the paper's algorithm held against this theorem: no bound where a condition fails at the
    run's hyper-parameters (and by what factor its step exceeds the largest admissible), else bound vs measured."""
    mine = [r for r in (network or {}).get("rows", ()) if r["theorem"] == thm_id]
    if not mine:
        return cell("—", "none")
    r = mine[0]
    if r.get("status") == "failed":
        return failed_cell([r])
    if r.get("error"):
        return cell("not evaluated", "warn", [formula(r["error"])[:160]])
    detail = [f"{r['algo']}, {r['n']} clients, {r['rounds']} rounds; L̂ = {num(r.get('L'))}"]
    eta, top = r.get("eta"), r.get("largest_eta")
    if eta is not None and top:
        detail.append(f"η = {num(eta)}, largest the paper's conditions allow {num(top)}"
                      + (f" (exceeded ×{num(eta / top)})" if eta > top else ""))
    if r.get("failed"):
        return cell("no bound: " + "; ".join(r["failed"][:2]) + " fails", "bad", detail)
    if r.get("bound") is None:
        why = "; ".join(r.get("undecided") or []) or "the bound is infinite"
        return cell(f"no bound: undecided ({why})", "warn", detail)
    return cell(f"bound {num(r['bound'])} vs measured {num(r['measured'])} ({ratio(r.get('ratio'))})", "ok", detail)


# --- discrepancies -----------------------------------------------------------------------------------------------

def _plain(markdown: str) -> str:
    return re.sub(r"\s+", " ", markdown.replace("`", "").replace("**", "").replace("*", "")).strip()


def discrepancies(paper: str, findings: Sequence[str] = (), docs: Path = DOCS, page: str | None = None) -> list[dict]:
    """Every numbered item of the "Discrepancies" section of ``docs/bounds/<paper>.md`` (its bold title, or its first
    words) and every finding of the paper's settings, each linked to its section of ``page`` (the page rendered into
    the report's folder, :mod:`dfltheory.figures.theorem_pages`, relative to it; None: no link)."""
    path = docs / f"{paper}.md"
    if not path.exists():
        return [{"n": i + 1, "title": _plain(f)[:160], "href": None, "where": "dfltheory bounds experiments"}
                for i, f in enumerate(findings)]
    href = page
    lines = path.read_text().splitlines()
    sections = {i: line[3:].strip() for i, line in enumerate(lines) if line.startswith("## ")}
    out_items = []

    def section(pred):
        start = next((i for i, h in sections.items() if pred(h)), None)
        if start is None:
            return None, []
        end = next((i for i in sorted(sections) if i > start), len(lines))
        return sections[start], lines[start + 1:end]

    head, body = section(lambda h: h.lower().startswith("discrepancies"))
    items: list[list[str]] = []
    for line in body:
        m = re.match(r"^(\d+)\. (.*)", line)
        if m:
            items.append([m[1], m[2]])
        elif items and line.startswith("   "):
            items[-1].append(line.strip())
    for n, *text in items:
        joined = " ".join(text)
        bold = re.search(r"\*\*(.+?)\*\*", joined)
        title = _plain(bold[1] if bold else joined)
        title = title if len(title) <= 120 else title[:117].rsplit(" ", 1)[0] + " ..."
        out_items.append({"n": int(n), "title": title.rstrip(".:"), "href": href and f"{href}#{slug(head)}",
                          "where": f"docs/bounds/{paper}.md § {head}, item {n}"})
    s_head, _ = section(lambda h: h.lower().startswith("the paper"))
    for f in dict.fromkeys(findings):
        title = _plain(f.split(": ", 1)[0] if len(f) > 120 else f)
        out_items.append({"n": len(out_items) + 1, "title": title[:120],
                          "href": href and (f"{href}#{slug(s_head)}" if s_head else href),
                          "where": f"docs/bounds/{paper}.md § {s_head or 'settings'} (dfltheory bounds experiments)"})
    return out_items


# --- the tables --------------------------------------------------------------------------------------------------

def paper_tables(out: str | Path, experiments: Sequence[Mapping], rates: Sequence[Mapping],
                 verification: Mapping | None = None, network: Mapping | None = None, papers=None,
                 pages: Mapping[str, str] | None = None) -> list[dict]:
    """One table per paper (in the catalog's order; ``papers`` only, default all): its rows with every cell, and its
    discrepancies, linked to the paper's page of ``pages`` (paths relative to the report ``out``)."""
    from dfltheory.bounds import PAPERS, catalog

    cat = catalog()
    verdicts = (verification or {}).get("verdicts", ())
    measured_rates = (verification or {}).get("rates", ())
    L_hat = {r["paper"]: r.get("L") for r in (network or {}).get("rows", ()) if r.get("L") is not None}
    tables = []
    for paper, title in PAPERS.items():
        if papers and paper not in papers:
            continue
        extra = [v["theorem"] for v in verdicts if v["paper"] == paper and v.get("main")]
        rows, main = [], None
        for r in theorem_rows(paper, extra):
            cond = conditions_cell(r["id"], experiments, cat, L_hat.get(paper) if r["main"] else None)
            if r["main"]:
                main = cond
            elif main is not None and (cond["text"], cond["detail"]) == (main["text"], main["detail"]):
                cond = {**cond, "detail": ["as the printed theorem"]}  # the same settings and conditions
            rows.append({**r, "short": r["id"].split(".", 1)[1], "conditions": cond,
                         "rate": rate_cell(r["id"], rates, [m for m in measured_rates if m["paper"] == paper]),
                         "exact": exact_cell(r["id"], verification),
                         "network": network_cell(r["id"], network)})
        findings = [f for s in experiments if s["id"].startswith(paper + ".") for f in s.get("findings", ())]
        tables.append({"paper": paper, "title": title, "rows": rows,
                       "discrepancies": discrepancies(paper, findings, page=(pages or {}).get(paper))})
    return tables
