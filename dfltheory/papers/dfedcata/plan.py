"""How ``verify`` tests DFedCata's theorems: the problem, the step symbol, K, the hyper-parameters, the topologies
and the targets (theorem, algorithm, measured quantity); :class:`dfltheory.verify.plans.PaperPlan` says what each
field means."""

from __future__ import annotations

from dfltheory.verify.plans import UNDIRECTED, PaperPlan, Target

PLAN = PaperPlan(
    "dfedcata", "synthetic-robust", "eta", K=4, rate="dfedcata.cor1",
    informative_problems=("synthetic-robust-common",),
    symbols={"beta": 0.5, "lam_pen": 0.05, "lam_pen_inv": 20.0, "Delta0": 0.0},
    config={"beta": "beta", "lam_pen": "lam_pen"},
    topologies=UNDIRECTED,
    untestable={"dfedcata.thm2": (
        "Theorem 2's printed formula is lost (seed L67-70, card §6.5): the catalog holds a Hardt-type template "
        "whose topology factor Gamma_lam has no formula in the paper, for the decaying step c/(tK + k) and a "
        "loss bounded by U; no number can be compared with a measured stability gap")},
    pep_model=("dfedcata-b", {"lam_pen": 0.05, "beta": 0.5}),
    certificate_case=("dfedcata-b", {"K": 1, "eta": 0.1, "lam_pen": 1.0, "beta": 0.3}), certificate_order=2,
    run_constants=("L", "sigma_l", "G_het", "B_het", "f0_minus_fstar"),
    runs_read_as=("dfedcata",),
    targets=(Target("dfedcata.thm1", "dfedcata", "avg_p", {"mode": "B"}, main=True),
             Target("dfedcata.thm1.consensus", "dfedcata", "avg_p", {"mode": "B"}),
             Target("dfedcata.thm1.invpen", "dfedcata", "avg_p", {"mode": "B"}),
             Target("dfedcata.thm1.novr", "dfedcata", "avg_p", {"mode": "B"}),
             Target("dfedcata.thm1.A", "dfedcata", "avg", {"mode": "A"})))


def register() -> None:
    """The plan into ``verify``, through the function a user's plugin calls."""
    from dfltheory.verify.plans import register_plan

    register_plan(PLAN, origin=__name__)
