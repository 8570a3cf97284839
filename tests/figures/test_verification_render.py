"""What verify gives per verdict and per theorem reaches the reader, in ``dfltheory verify``'s text and in the
report's verification section (HTML and Markdown): the functional judged (the proof's marked), why the instance and
each candidate's ratio, c* with its instrument, the terms' shares and the mutation table (missed in red); the
informative runs' duplicate "T = R" half and the slope column are gone. The fixture has the shapes of a real
``dfltheory verify`` result (DFedSAM judged on its printed and on its proof's functional)."""

import copy

import pytest

from dfltheory.figures import verification as V
from dfltheory.figures.render import _verification, environment


def _at(measured, ratio, functional):
    return {"T": 2290, "verdict": "holds", "label": "informative", "informative": True, "bound": 0.0244,
            "measured": measured, "ci": [0.9 * measured, 1.1 * measured], "ratio": ratio, "functional": functional,
            "trivial": {"level": 0.04}, "dominant": "optimization",
            "c_star": {"factor": 6.433, "instrument": "pep", "by_instrument": {"training": 4127.0, "pep": 6.433}},
            "term_shares": {"drift": 0.24, "optimization": 0.66, "topology": 0.10}}


PRINTED = "min_{1<=t<=T} E||grad f(x_bar^t)||^2"
PROOF = "(1/T) sum_{t<T} E||grad f(x_bar^t)||^2 (the proof's left-hand side)"
RATIONALE = "of 2 candidate instance(s) trained, the one where bound / measured is smallest (1.43e+03)"
RESULT = {
    "verdicts": [{**_at(0.002317, 10.53, PROOF), "theorem": "dfedsam.thm4.1", "paper": "dfedsam",
                  "variant": "printed (judged on the proof's functional)", "main": True, "setting": "full",
                  "problem": "synthetic-robust", "topology": "full", "constants": "certified", "m": 8, "T": 2290,
                  "T_star": 1145, "proof_functional": True, "instance_rationale": "bound-holds grid: full"}],
    "informative": [{"theorem": "dfedsam.thm4.1", "paper": "dfedsam", "status": "run", "problem": "synthetic-robust",
                     "topology": "full", "constants": "certified", "T_star": 1145, "T_run": 2290, "R": 2290,
                     "step_symbol": "eta", "step": 0.00376, "seconds": 18.0, "seeds": 5,
                     "command": "dfltheory verify dfedsam.thm4.1 --out OUT", "instance_rationale": RATIONALE,
                     "candidates": [
                         {"problem": "synthetic-robust-common", "topology": "ring", "constants": "certified",
                          "ratio": 61688563.4},
                         {"problem": "synthetic-robust", "topology": "full", "constants": "certified",
                          "ratio": 1432.77}],
                     "verdicts": [
                         {"theorem": "dfedsam.thm4.1", "variant": "printed", "functional": PRINTED,
                          "proof_functional": False, "measured_slope": None, "bound_slope": None,
                          "at": _at(1.703e-5, 1432.77, PRINTED), "at_end": _at(1.703e-5, 1432.77, PRINTED)},
                         {"theorem": "dfedsam.thm4.1", "variant": "printed (judged on the proof's functional)",
                          "functional": PROOF, "proof_functional": True, "measured_slope": None, "bound_slope": None,
                          "at": _at(0.002317, 10.53, PROOF), "at_end": _at(0.002317, 10.53, PROOF)}]}],
    "mutations": [{"theorem": "dfedsam.thm4.1", "c_star": 6.433, "instrument": "pep",
                   "note": "PEP: dfedavg m = 2, K = 2, T = 4: worst case 1, bound 6.433",
                   "rows": [{"mutation": "bound x 1/10", "factor": 10.0, "caught_by": "pep"},
                            {"mutation": "term 'drift' dropped", "factor": 1.316, "caught_by": None}]}],
    "rates": [], "topology": [], "horizons": [], "figures": {}, "size": "default", "seeds": [0, 1],
    "wall_seconds": 60.0, "device": "cpu"}


def _sections(result) -> dict[str, str]:
    """The report's verification section alone (the templates' text from ``{% if verification %}`` to the next
    section), rendered from :func:`_verification` as the report renders it."""
    out = {}
    for name, end in (("report.html.j2", '<h2 id="network">'), ("report.md.j2", "## 2. A digits network")):
        env = environment()
        env.autoescape = name.endswith("html.j2")
        src = env.loader.get_source(env, name)[0]
        body = src[src.index("{% if verification %}"):src.index(end)]
        out[name] = env.from_string(body).render(verification=_verification(result), failures={"by": {}}, notes={},
                                                 figures={}, failed_list=lambda key: "")
    return out


EXPECTED = [PRINTED, "the proof's functional: " + PROOF, RATIONALE,
            "synthetic-robust-common, ring: ×6.169×10⁷", "synthetic-robust, full: ×1433 (kept)",
            "c* = 6.433 (pep; training 4127)", "optimization 66 %, drift 24 %, topology 10 %",
            "bound x 1/10", "term 'drift' dropped", "PEP: dfedavg m = 2, K = 2, T = 4"]


def test_the_command_prints_every_key():
    text = "\n".join((V.table(RESULT), V.informative_lines(RESULT), V.mutation_lines(RESULT)))
    for piece in EXPECTED:
        assert piece in text, piece
    assert "dfedsam.thm4.1 [proof's functional]: T = 2290" in text  # the proof's row is told apart
    assert "caught: bound x 1/10 (x10, pep)" in text and "missed: term 'drift' dropped (x1.316)" in text
    assert "1 of 2 mutations caught" in text
    assert "slope" not in text and "T = 2290: holds (informative), bound 0.0244 vs 1.703×10⁻⁵" in text
    assert text.count("T = 2290:") == 2  # one verdict per target and functional, no second "T = R" half


@pytest.mark.parametrize("name", ["report.html.j2", "report.md.j2"])
def test_the_report_section_renders_every_key(name):
    text, html = _sections(RESULT)[name], name.endswith("html.j2")
    for piece in EXPECTED:  # as each format escapes it: HTML entities, a Markdown cell's '|'
        assert (piece.replace("'", "&#39;").replace("<", "&lt;") if html else piece.replace("|", "\\|")) in text, piece
    assert "slope" not in text and "runs' end" not in text
    assert "5 seeds × 2290 rounds" in text
    assert text.count("<b>(the proof's functional)</b>" if html else "**(the proof's functional)**") == 1
    if name.endswith("html.j2"):
        assert '<td class="bad">not caught</td>' in text and '<td class="ok">pep</td>' in text
    else:
        assert "**not caught**" in text


def test_missed_mutations_are_red_in_the_html():
    env = environment()
    css = env.loader.get_source(env, "report.html.j2")[0]
    assert "table.mutations td.bad { color: #b91c1c" in css


def test_nothing_is_shown_where_verify_gave_none():
    bare = copy.deepcopy(RESULT)
    for v in bare["verdicts"] + [v["at"] for v in bare["informative"][0]["verdicts"]]:
        for key in ("functional", "c_star", "term_shares", "instance_rationale", "proof_functional"):
            v.pop(key, None)
    for v in bare["informative"][0]["verdicts"]:
        v.pop("functional"), v.pop("proof_functional")
    bare["informative"][0].pop("candidates"), bare["informative"][0].pop("instance_rationale")
    bare.pop("mutations")
    text = "\n".join(_sections(bare).values()) + V.informative_lines(bare) + V.table(bare)
    for piece in ("c* =", "term shares:", "functional:", "candidates (", "Mutation tests", "nstance:"):
        assert piece not in text, piece


def test_the_first_screen_tells_the_two_dfedsam_verdicts_apart():
    from dfltheory.figures.verdicts import exact_cell

    cell = exact_cell("dfedsam.thm4.1", RESULT)
    lines = [cell["text"], *cell["detail"]]
    assert sum("on the proof's functional" in line for line in lines[:2]) == 1, lines
