"""How ``verify`` tests DFedADMM's theorems: the problem, the step symbol, K, the hyper-parameters, the topologies
and the targets (theorem, algorithm, measured quantity); :class:`dfltheory.verify.plans.PaperPlan` says what each
field means."""

from __future__ import annotations

from dfltheory.verify.plans import UNDIRECTED, PaperPlan, Target

PLAN = PaperPlan(
    "dfedadmm", "synthetic-robust", "eta", K=4, rate="dfedadmm.cor1.derived",
    informative_problems=("synthetic-robust-common",),
    # lam_pen = 1/(192 L): half the largest value Theorem 1 admits (lam_pen <= 1/(96 L)), so that the steps
    # lam_pen/K <= eta <= 1/(96 K L) form an interval rather than one point
    symbols={"lam_pen": lambda v: 1 / (192 * v["L"]), "rho": 0.01}, config={"lam_pen": "lam_pen", "rho": "rho"},
    topologies=UNDIRECTED,
    # at lam_pen = 1/(192 L) the consensus-drift term alone keeps Theorem 1 above ||grad f(x^0)||^2 at every T
    # (eta >= lam_pen / K pins the step); a smaller lam_pen lowers the admissible steps with it: lam_pen is
    # chosen continuously (issue 33 item 5; it was one of 5 values)
    tune={"lam_pen": (1e-5, 1e-2)},
    pep_model=("dfedadmm", {"lam_pen": 0.01}),
    certificate_case=("dfedadmm", {"K": 1, "eta": 0.01, "lam_pen": 0.01}), certificate_order=1,  # the report's row
    run_constants=("L", "sigma_l", "sigma_g", "B", "f0_minus_fstar"),
    runs_read_as=("dfedadmm", "dfedadmm-sam"),
    # the report's digits network run: a penalty well above the step (eta = lambda collapses the local steps)
    network_hp={"lam_pen": 0.1},
    targets=(Target("dfedadmm.thm1", "dfedadmm-sam", "avg_w", main=True),
             Target("dfedadmm.thm1.corrected", "dfedadmm-sam", "avg_w"),
             Target("dfedadmm.thm1.normalized", "dfedadmm-sam", "avg_w"),
             Target("dfedadmm.thm1.dfedadmm", "dfedadmm", "avg_w")))


def register() -> None:
    """The plan into ``verify``, through the function a user's plugin calls."""
    from dfltheory.verify.plans import register_plan

    register_plan(PLAN, origin=__name__)
