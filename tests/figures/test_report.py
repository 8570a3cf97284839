"""The report's sections (the full report, with its training run, is `make report`, not a test)."""

import matplotlib

matplotlib.use("Agg")

import pytest

from dfltheory.figures import plot_topology_constants
from dfltheory.figures.report import PAPER_TOPOLOGIES, catalog_section, markdown, topology_section


def test_topology_section_has_every_paper_topology():
    sec = topology_section(n=16)
    assert tuple(sec["rows"]) == PAPER_TOPOLOGIES
    assert sec["rows"]["full"]["lambda"] == pytest.approx(0, abs=1e-12)
    assert 0 < sec["rows"]["ring"]["spectral_gap"] < sec["rows"]["exponential"]["spectral_gap"]


def test_catalog_section_counts_add_up():
    sec = catalog_section()
    assert sec["count"] == sum(sec["by_paper"].values()) == sum(sec["by_tag"].values()) >= 100
    assert set(sec["by_paper"]) == {"dfedsgpsm", "dfedsam", "dfedcata", "dfedpgp", "dfedadmm"}


def test_markdown_lists_findings_and_violations():
    rep = {"topology": {"n": 4, "rows": {"ring": {"lambda": 0.5}}},
           "catalog": {"count": 1, "by_paper": {"p": 1}, "by_kind": {"theorem": 1}, "by_tag": {"SEED": 1}},
           "rates": [{"id": "p.cor1", "parent": "p.thm1", "derived_rate": "T^-1/2", "stated_rate": "T^-1",
                      "findings": ["slower than stated"], "conditions": []}],
           "experiments": [{"id": "p.exp", "theorem": "p.thm1", "conditions": [
               {"relation": "eta <= 1/(10*K*L)", "violated_for": "L in (0.05, inf)"}]}],
           "training": None, "figures": ["a.png"]}
    text = markdown(rep)
    assert "slower than stated" in text and "violated for L in (0.05, inf)" in text and "![a.png](a.png)" in text


def test_plot_topology_constants_one_curve_per_topology():
    ax = plot_topology_constants(["ring", "exponential"], [8, 16])
    ring, expo = ax.get_lines()
    assert list(ring.get_xdata()) == [8, 16] and ring.get_ydata()[1] < ring.get_ydata()[0]
    assert all(expo.get_ydata() > ring.get_ydata())


def test_training_section_runs_at_an_admissible_step_size(tmp_path):
    from dfltheory.figures.report import training_section

    tr = training_section(tmp_path, rounds=3, n=6)
    assert tr["status"] == "completed"
    assert all(c["holds"] for c in tr["conditions"])  # eta is the largest step size every condition admits
    assert tr["bound_at_T"] > tr["measured_min_grad_norm_sq"] > 0
    assert sum(tr["bound_terms"].values()) == pytest.approx(tr["bound_at_T"])
    again = training_section(tmp_path, rounds=3, n=6)  # the run is regenerated, not refused
    assert again["measured_min_grad_norm_sq"] == tr["measured_min_grad_norm_sq"]


def test_markdown_sweeps_state_their_sizes_and_point_to_the_readme_runs():
    top = {"n": 16, "rounds": 100, "eta": 0.01, "theorem": "dfedsam.thm4.1",
           "rows": [{"topology": t, "Q": 1, "lambda": lam, "measured": m, "bound": b, "measured_ratio": m / 0.01,
                     "bound_ratio": b / 80.0} for t, lam, m, b in (("ring", 0.95, 0.011, 1.2e4), ("full", 0.0, 0.01, 80.0))]}
    rate = {"corollary": "dfedsam.cor4.1.1.derived", "c": 0.22, "r": 0.05, "n": 16, "T_leading": 813.0,
            "rows": [{"T": T, "eta": 0.01, "measured": m, "bound": b} for T, m, b in ((25, 1.76, 2917.0),
                                                                                   (50, 0.73, 750.0))],
            "slopes": {"measured": -1.26, "bound": -1.96, "stated": -0.5},
            "local_slopes": {"measured": [-1.26], "bound": [-1.96]}}
    rep = {"topology": {"n": 4, "rows": {}}, "catalog": {"count": 0, "by_paper": {}, "by_kind": {}, "by_tag": {}},
           "rates": [], "experiments": [], "training": None, "sweeps": {"topology": top, "rate": rate}, "figures": []}
    text = markdown(rep)
    assert "n = 16, T = 100" in text and "examples/topology_sweep.py --n 64 --rounds 200" in text
    assert "between 1 and 1.1" in text  # the measured ratios' range, stated
    assert "| 50 | 0.01 | 0.73 | 750 | -1.26 | -1.96 |" in text  # slope from the previous horizon
    assert "over T = 25 ... 50" in text and "`examples/rate_in_T.py`" in text and "T = 813" in text
