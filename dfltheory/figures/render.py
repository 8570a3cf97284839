"""The report's pages from its data: ``report.html`` (self-contained: inline CSS, no script, figures as PNG files
beside it), ``report.md`` and ``report.json``, rendered by Jinja2 from ``dfltheory/figures/templates``.

:func:`view` turns the report's data (:func:`dfltheory.figures.report.build_report`) into what a reader sees: every
number through :func:`~dfltheory.figures.format.num`, every formula through
:func:`~dfltheory.figures.format.formula`; both templates render the same view, so they agree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from dfltheory.figures.format import duration, formula, interval, num, ratio
from dfltheory.figures.verdicts import (VERDICT_STATUS, c_star_text, candidates_text, functional_text, order_text,
                                        shares_text, tally, verdict_status)
from dfltheory.verify.strict_json import json_safe

__all__ = ["view", "render", "write", "environment"]

#: how each verification verdict reads in the report
HYPER_NAMES = {"eta": "η", "rho": "ρ", "lam": "λ", "alpha": "α", "beta": "β", "eta_u": "η_u", "eta_v": "η_v"}


def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("dfltheory.figures", "templates"),
                      autoescape=select_autoescape(["html", "html.j2"]), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=num, ratio=ratio, formula=formula, interval=interval, order=order_text,
                       md=lambda s: str(s).replace("|", "\\|").replace("\n", " "))
    return env


def _hyper(h: Mapping) -> str:
    return ", ".join(f"{HYPER_NAMES.get(k, formula(k))} = {num(v)}" for k, v in h.items())


def _condition_verdict(c: Mapping) -> tuple[str, str]:
    if c["violated_for"]:
        return "violated for " + interval(c["violated_for"]).replace("every ", "every "), "bad"
    if c["holds"] is None:
        return "undecided without " + ", ".join(formula(m) for m in c["missing"]), "warn"
    return ("holds", "ok") if c["holds"] else ("violated", "bad")


def _settings(experiments) -> list[dict]:
    """Per paper and theorem, the settings grouped by equal verdicts (one table per group)."""
    papers: dict[str, dict[str, dict]] = {}
    for s in (s for s in experiments if not s.get("variant_check") and s.get("status") != "failed"):
        conds = [(c.get("formula") or formula(c["relation"]), c["origin"], *_condition_verdict(c), formula(c["text"]))
                 for c in s["conditions"]]
        group = papers.setdefault(s["paper"], {}).setdefault((s["theorem"], tuple(conds)),
                                                             {"theorem": s["theorem"], "settings": [],
                                                              "conditions": [dict(zip(("formula", "origin", "verdict",
                                                                                       "status", "text"), c))
                                                                             for c in conds]})
        group["settings"].append({"id": s["id"], "description": s["description"],
                                  "hyper": ", ".join(f"{HYPER_NAMES.get(k, formula(k))} = {num(v)}"
                                                      for k, v in s["values"].items())})
    return [{"paper": p, "groups": list(groups.values())} for p, groups in papers.items()]


def _rates(rates) -> list[dict]:
    out = []
    for r in (r for r in rates if r.get("status") != "failed"):  # a failed one is in the section's failures
        out.append({"id": r["id"], "parent": r["parent"],
                    "schedule": ", ".join(f"{formula(k)} = {formula(v)}" for k, v in r["schedule"].items()),
                    "derived": order_text(r["derived_rate"]), "stated": order_text(r["stated_rate"]),
                    "same": r["derived_rate"] == r["stated_rate"],
                    "findings": [formula(f) for f in r["findings"]],
                    "conditions": [{"text": formula(c["text"]), "under": formula(c["under_schedule"])}
                                   for c in r["conditions"]]})
    return out


def _verification(ver: Mapping | None) -> dict | None:
    if not ver:
        return None
    rows = []
    for v in ver.get("verdicts", ()):
        ci = v.get("ci")
        rows.append({**{k: v.get(k) for k in ("theorem", "paper", "variant", "main", "setting", "problem", "topology",
                                              "constants", "verdict", "dominant", "command", "note")},
                     "m": num(v.get("m")), "T": num(v.get("T")), "hyper": _hyper(v.get("hyper") or {}),
                     "bound": num(v.get("bound")), "measured": num(v.get("measured")), "ratio": ratio(v.get("ratio")),
                     "ci": f"[{num(ci[0])}, {num(ci[1])}]" if ci else "—",
                     "failed": "; ".join(formula(f) for f in v.get("failed") or ()),
                     "label": v.get("label") if v["verdict"] in ("holds", "violated", "inconclusive") else None,
                     "level": num((v.get("trivial") or {}).get("level")), "T_star": num(v.get("T_star")),
                     "status": verdict_status(v), "extras": _verdict_extras(v)})
    rates = [{**r, "horizons": ", ".join(num(h) for h in r.get("horizons", ())), "schedule": _schedule(r["schedule"]),
              "measured_slope": num(r.get("measured_slope")), "bound_slope": num(r.get("bound_slope")),
              "stated_slope": num(r.get("stated_slope"))} for r in ver.get("rates", ())]
    topology = [{"paper": t["paper"], "theorem": t["theorem"], "reference": t.get("reference", "the reference"),
                 "constants": t.get("constants", ""),
                 "rows": [{"topology": r["topology"], "lambda": num(r.get("lambda", r.get("mixing")), zero_exact=True),
                           "measured_ratio": num(r.get("measured_ratio")), "bound_ratio": num(r.get("bound_ratio"))}
                          for r in t["rows"]]} for t in ver.get("topology", ())]
    papers = sorted({r["paper"] for r in rows} | set(ver.get("figures", {})),
                    key=lambda p: [r["paper"] for r in rows].index(p) if p in [r["paper"] for r in rows] else 99)
    return {"size": ver.get("size"), "seeds": ", ".join(str(s) for s in ver.get("seeds", ())),
            "wall": num(ver.get("wall_seconds")), "device": ver.get("device"),
            "papers": [{"paper": p, "rows": [r for r in rows if r["paper"] == p],
                        "tally": tally([v for v in ver.get("verdicts", ()) if v["paper"] == p])[0]
                        if any(r["paper"] == p for r in rows) else "",
                        "figures": list(ver.get("figures", {}).get(p, ()))} for p in papers],
            "rates": rates, "topology": topology, "horizons": _horizons(ver.get("horizons", ())),
            "informative": _informative(ver.get("informative", ())),
            "mutations": _mutations(ver.get("mutations") or ()),
            "counts": {k: n for k in dict.fromkeys([*VERDICT_STATUS, *(r["verdict"] for r in rows)])
                       if (n := sum(r["verdict"] == k for r in rows))},
            "informative_holds": sum(r["verdict"] == "holds" and r["status"] == "ok" for r in rows)}


def _verdict_extras(v: Mapping) -> list[str]:
    """What a verdict says about its own test, where verify gives it: the functional measured (the proof's marked),
    why this instance, c* (the factor by which the bound could shrink before the instrument catches it) and each
    term's share of the bound, largest first. Absent keys: nothing."""
    shares = shares_text(v.get("term_shares"))
    return [t for t in (functional_text(v),
                        f"instance: {v['instance_rationale']}" if v.get("instance_rationale") else "",
                        c_star_text(v.get("c_star")), f"term shares: {shares}" if shares else "") if t]


def _mutations(rows) -> list[dict]:
    """The mutation tests of verify (``mutations``): per theorem, each mutated bound, the factor and which check
    caught it (red where none did), c* with its instrument, and the note (which PEP instance was used)."""
    out = []
    for m in rows:
        caught = [r for r in m.get("rows", ()) if r.get("caught_by")]
        out.append({"theorem": m.get("theorem", "—"),
                    "c_star": num(m.get("c_star")) if m.get("c_star") is not None else "—",
                    "instrument": m.get("instrument") or "—", "note": m.get("note") or "",
                    "summary": f"{len(caught)} of {len(m.get('rows', ()))} caught",
                    "rows": [{"mutation": r.get("mutation", ""),
                              "factor": num(r.get("factor")) if r.get("factor") is not None else "—",
                              "caught_by": r.get("caught_by") or ("not caught: still above the proved certificate, "
                                                                  "so no instrument can catch it at the PEP instance"
                                                                  if r.get("holds_by_certificate") else "not caught"),
                              "status": "ok" if r.get("caught_by") else "bad"} for r in m.get("rows", ())]})
    return out


def _horizons(rows) -> list[dict]:
    """The T* rows of the main theorems (the variants' are in verify.json)."""
    out = []
    for r in rows:
        if not r.get("main"):
            continue
        best, large = r["best"], r["largest"]
        out.append({"theorem": r["theorem"], "topology": r["topology"], "constants": r["constants"],
                    "level": num(r["level"]), "largest": num(large.get("T_star")) if large.get("T_star") else "—",
                    "best": num(best.get("T_star")) if best.get("T_star") else "vacuous",
                    "step": f"{formula(r['step_symbol'])} = {num(best.get('step'))}" if best.get("step") else "—",
                    "why": r.get("note") or best.get("why") or large.get("why") or ""})  # prose: T* stays T*
    return out


def _informative(runs) -> list[dict]:
    """One row per theorem verdict of the informative runs at T_run = 2 T* (or the main theorem's reason for having
    none): the functional judged (the proof's marked), the verdict, c* and the term shares; the run's first row also
    carries why this instance (``rationale``) and every candidate's bound / measured (``candidates``)."""
    out = []
    for run in runs:
        where = {"main": run["theorem"], "topology": run.get("topology", "—"), "T_star": num(run.get("T_star"))}
        if run["status"] != "run":
            out.append({**where, "theorem": run["theorem"], "verdict": run["status"], "note": run["note"],
                        "status": "none", "T": None, "run": None, "proof": False, "functional": ""})
            continue
        info = {"rationale": run.get("instance_rationale") or "", "candidates": candidates_text(run),
                "length": f"{run.get('seeds', '?')} seeds × {num(run.get('R', run.get('T_run')))} rounds"}
        for i, v in enumerate(run["verdicts"]):
            a = v["at"]
            out.append({**where, "theorem": v["theorem"], "verdict": a["verdict"], "label": a.get("label"),
                        "functional": functional_text(v) or functional_text(a),
                        "proof": bool(v.get("proof_functional")),
                        "T": num(a["T"]), "step": f"{formula(run['step_symbol'])} = {num(run['step'])}",
                        "bound": num(a.get("bound")), "measured": num(a["measured"]),
                        "ci": f"[{num(a['ci'][0])}, {num(a['ci'][1])}]", "ratio": ratio(a.get("ratio")),
                        "c_star": c_star_text(a.get("c_star")) or "—",
                        "shares": shares_text(a.get("term_shares")) or "—",
                        "seconds": num(run["seconds"]), "command": run["command"], "status": verdict_status(a),
                        "note": "", "run": info if i == 0 else None})
    return out


def _certificates(pep: Mapping | None) -> dict | None:
    """The three-way comparison (paper's bound, certificate, worst case) formatted, with its figure."""
    if not pep or not pep.get("certificates"):
        return None
    rows = [_failed_row(r, algorithm=r.get("algorithm", ""), theorem=r.get("theorem") or "—", T=r.get("T", "—"))
            if r.get("status") == "failed" else
            {"algorithm": r["algorithm"], "theorem": r.get("theorem") or "—", "T": r["T"],
             "paper": num(r.get("paper_bound")), "certificate": num(r.get("certificate")),
             "worst_case": num(r.get("worst_case")),
             "proof": ratio(r["paper_bound"] / r["certificate"]) if r.get("paper_bound") and r.get("certificate")
             else "—",
             "problem": ratio(r["certificate"] / r["worst_case"]) if r.get("worst_case") and r.get("certificate")
             else "—", "status": ""}
            for r in pep["certificates"]]
    return {"rows": rows, "figure": pep.get("certificate_figure")}


def _pep(pep: Mapping | None) -> list[dict] | None:
    """The PEP rows (:func:`dfltheory.pep.pep_table`) formatted; status 'ok' where the bound is above the worst case."""
    if not pep:
        return None
    return [_failed_row(r, algorithm=r.get("algorithm", ""), instance=r.get("instance", ""),
                        theorem=r.get("theorem") or "—") if r.get("status") == "failed" else
            {"algorithm": r["algorithm"], "instance": r["instance"], "quantity": r.get("quantity", ""),
             "worst_case": num(r.get("worst_case")), "theorem": r.get("theorem") or "—", "bound": num(r.get("bound")),
             "ratio": ratio(r.get("ratio")), "verdict": r.get("status", ""),
             "status": "ok" if r.get("status") == "holds" else "warn"} for r in pep["rows"]]


def _failed_row(r: Mapping, **shown) -> dict:
    """A case that raised, as a table row shows it: red ('bad'), ``failed: error`` and the command."""
    return {**shown, "failed": True, "status": "bad", "verdict": f"failed: {r.get('error', '')}",
            "error": r.get("error", ""), "command": r.get("command", "")}


def _claims(claims) -> dict | None:
    """The papers' experimental claims, one group per data set and size
    (:func:`dfltheory.figures.claims.report_section`, which the ``claims`` command's table shares)."""
    from dfltheory.figures.claims import report_section

    return report_section(claims)


def _schedule(schedule) -> str:
    if isinstance(schedule, Mapping):
        return ", ".join(f"{formula(k)} = {formula(v)}" for k, v in schedule.items())
    return formula(schedule)


def _network(net: Mapping | None) -> dict | None:
    if not net:
        return None
    out = []
    for r in (net or {}).get("rows", ()):
        if r.get("status") == "failed":
            out.append(_failed_row(r, paper=r["paper"], algo=r["algo"], theorem=r["theorem"]))
            continue
        if r.get("error"):
            out.append({"paper": r["paper"], "algo": r["algo"], "theorem": r["theorem"], "error": formula(r["error"]),
                        "status": "warn"})
            continue
        consts = r.get("constants") or {}
        values = consts.get("values", consts) if isinstance(consts, Mapping) else {}
        out.append({"paper": r["paper"], "algo": r["algo"], "theorem": r["theorem"],
                    "constants": ", ".join(f"{formula(k)} = {num(v)}" for k, v in values.items()
                                           if isinstance(v, (int, float)) and not isinstance(v, bool)),
                    "text": r.get("constants_text", ""),
                    "eta": f"{formula(r.get('step', 'eta'))} = {num(r.get('eta'))}, K = {num(r.get('K'))}",
                    "largest_eta": num(r.get("largest_eta")),
                    "paper_ok": "met" if r["conditions_paper_ok"] else "violated",
                    "all_ok": ("violated: " + "; ".join(_short(f) for f in r["failed"]) if r.get("failed") else
                               "undecided: " + "; ".join(_short(f) for f in r["undecided"]) if r.get("undecided")
                               else "met"),
                    "bound": num(r.get("bound")), "measured": num(r.get("measured")), "ratio": ratio(r.get("ratio")),
                    "status": "bad" if r.get("failed") else ("warn" if r.get("bound") is None else "ok")})
    setup = (f"digits, the default MLP, ring of {net['n']} clients, {net['rounds']} rounds, batch 16, seed 0, each "
             f"algorithm with its options and K of the verification plan; constants estimated at {net['points']} "
             f"points of each run with {net['iters']} Lanczos steps per Hessian")
    return {"rows": out, "setup": setup}


def _failures(rep: Mapping) -> dict:
    """Every failure (:func:`dfltheory.verify.report_data.collect_failures`): all of them for the header, and per
    section (``by``: section key -> its failures) for the section that shows them in red."""
    from dfltheory.verify.report_data import STAGES

    section = dict(zip(STAGES, ("topology", "rates", "settings", "verification", "network", "training", "pep",
                                "claims")), figures="figures")
    rows = [{**f, "section": section.get(f["stage"], "figures")} for f in rep.get("failures", ())]
    by: dict[str, list] = {}
    for f in rows:
        by.setdefault(f["section"], []).append(f)
    return {"all": rows, "by": by}


def _short(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[: width - 1].rsplit(" ", 1)[0] + " …"


def _training(tr: Mapping | None) -> dict | None:
    if not tr:
        return None
    c = tr["config"]
    return {"n": c["n"], "rounds": c["rounds"], "K": c["K"], "eta": num(c["lr"]), "rho": num(c["rho"]),
            "status": tr["status"], "measured": num(tr["measured_min_grad_norm_sq"]), "bound": num(tr["bound_at_T"]),
            "ratio": ratio(tr["bound_at_T"] / tr["measured_min_grad_norm_sq"]), "dominant": tr["dominant_term"],
            "theorem": tr["theorem"], "notes": tr["notes"],
            "terms": [{"name": k, "value": num(v)} for k, v in tr["bound_terms"].items()],
            "constants": ", ".join(f"{formula(k)} = {num(v)}" for k, v in tr["constants"].items()),
            "conditions": [{"formula": formula(v["relation"]), "holds": "holds" if v["holds"] else "violated",
                            "status": "ok" if v["holds"] else "bad"} for v in tr["conditions"]]}


def _sweeps(sw: Mapping | None) -> dict | None:
    if not sw:
        return None
    top, rate = sw["topology"], sw["rate"]
    local = list(zip(rate["local_slopes"]["measured"], rate["local_slopes"]["bound"]))
    mr = [r["measured_ratio"] for r in top["rows"]]
    br = [r["bound_ratio"] for r in top["rows"]]
    return {"topology": {"n": top["n"], "rounds": top["rounds"], "eta": num(top["eta"]), "theorem": top["theorem"],
                         "measured_range": f"{num(min(mr))} ... {num(max(mr))}",
                         "bound_range": f"{num(min(br))} ... {num(max(br))}",
                         "rows": [{"topology": r["topology"], "Q": r["Q"], "lambda": num(r["lambda"], zero_exact=True),
                                   "measured": num(r["measured"]), "bound": num(r["bound"]),
                                   "measured_ratio": num(r["measured_ratio"]), "bound_ratio": num(r["bound_ratio"]),
                                   "dominant": r["dominant"]} for r in top["rows"]]},
            "rate": {"corollary": rate["corollary"], "c": num(rate["c"]), "r": num(rate["r"]), "n": rate["n"],
                     "T_leading": num(rate["T_leading"]), "first": rate["rows"][0]["T"], "last": rate["rows"][-1]["T"],
                     "slopes": {k: num(v) for k, v in rate["slopes"].items()},
                     "rows": [{"T": r["T"], "eta": num(r["eta"]), "measured": num(r["measured"]),
                               "bound": num(r["bound"]),
                               "measured_slope": num(s[0]) if s else "", "bound_slope": num(s[1]) if s else ""}
                              for r, s in zip(rate["rows"], [None] + local)]}}


#: topology columns: key, header, exactly zero on some topology (lambda of the complete graph)
TOPOLOGY_COLUMNS = (("weights", "weights", False), ("lambda", "λ", True), ("spectral_gap", "1 − λ", False),
                    ("psi", "ψ", True), ("lambda_min", "λ_min", True), ("Phi", "Φ(λ, m, 1)", False),
                    ("doubly_stochastic", "doubly stochastic", False), ("q_measured", "q (measured)", True),
                    ("delta", "δ", False), ("beta_pi", "β_π (push-sum)", False), ("kappa_pi", "κ_π", False),
                    ("beta_A", "β_A (row-stochastic)", False), ("kappa_A", "κ_A", False),
                    ("n_eff_0.9", "n_eff(γ = 0.9)", False))


def view(rep: Mapping) -> dict:
    """What the templates render: the header, the verdict tables, and each section formatted."""
    h = rep["header"]
    header = {**h, "wall": duration(h["wall_seconds"]), "seeds": ", ".join(str(s) for s in h["seeds"]),
              "stages": [{"name": k, "seconds": duration(v)} for k, v in h["stage_seconds"].items()]}
    topo = rep["topology"]
    topology = {"n": topo["n"], "columns": [c[1] for c in TOPOLOGY_COLUMNS],
                "rows": [{"name": name, "cells": [r.get(k) if k == "weights" else num(r.get(k), zero_exact=z)
                                                  for k, _, z in TOPOLOGY_COLUMNS]}
                         for name, r in topo["rows"].items()]}
    cat = rep["catalog"]
    catalog = {"count": cat["count"], "by": [(what, ", ".join(f"{k} {v}" for k, v in dict(cat[key]).items()))
                                             for what, key in (("paper", "by_paper"), ("kind", "by_kind"),
                                                               ("provenance", "by_tag"))]}
    figs = rep["figures"]
    return {"header": header, "tables": rep["verdicts"], "verification": _verification(rep.get("verification")),
            "network": _network(rep.get("network")), "training": _training(rep.get("training")),
            "sweeps": _sweeps(rep.get("sweeps")), "settings": _settings(rep["experiments"]),
            "rates": _rates(rep["rates"]), "topology": topology, "catalog": catalog,
            "pep": _pep(rep.get("pep")), "certificates": _certificates(rep.get("pep")),
            "claims": _claims([c for c in (rep.get("claims"), *(rep.get("claims_stored") or ())) if c]),
            "failures": _failures(rep),
            "figures": dict(figs),
            "notes": h.get("notes", {})}


def render(rep: Mapping) -> dict[str, str]:
    """``{"report.html": ..., "report.md": ...}``."""
    env, v = environment(), view(rep)
    return {name: env.get_template(f"{name}.j2").render(**v) for name in ("report.html", "report.md")}


def write(out: str | Path, rep: Mapping) -> None:
    out = Path(out)
    for name, text in render(rep).items():
        (out / name).write_text(text)
    (out / "report.json").write_text(json.dumps(json_safe(rep), indent=1, allow_nan=False) + "\n")
