"""How ``verify`` tests DFedSGPSM's theorems: the problem, the step symbol, K, the hyper-parameters, the topologies
and the targets (theorem, algorithm, measured quantity); :class:`dfltheory.verify.plans.PaperPlan` says what each
field means."""

from __future__ import annotations

from dfltheory.verify.plans import DIRECTED, PaperPlan, Target

PLAN = PaperPlan(
    "dfedsgpsm", "synthetic-robust", "eta", K=4, pushsum=True, rate="dfedsgpsm.cor1.exact",
    informative_problems=("synthetic-robust-common",),
    symbols={"alpha": 0.5, "rho": 0.01}, config={"alpha": "momentum", "rho": "rho"},
    topologies=DIRECTED,
    # at sigma_l = 0 its bound covers the PEP of DFedSGPM (DFedSGPSM at rho = 0)
    pep_model=("dfedsgpm", {"alpha": 0.5}),
    certificate_case=("dfedsgpm", {"K": 2, "eta": 0.02, "alpha": 0.5}), certificate_order=3,  # the report's row
    run_constants=("L", "sigma_l", "sigma_g", "B", "f0_minus_fstar"),
    runs_read_as=("dfedsgpsm", "dfedsgpsm-s", "sgp"),
    targets=(Target("dfedsgpsm.thm1", "dfedsgpsm", "avg", main=True),
             Target("dfedsgpsm.thm1.corrected", "dfedsgpsm", "avg"),
             Target("dfedsgpsm.thm1.consistent", "dfedsgpsm", "avg"),
             Target("dfedsgpsm.thm1.alpha_tilde", "dfedsgpsm", "avg")))


def register() -> None:
    """The plan into ``verify``, through the function a user's plugin calls."""
    from dfltheory.verify.plans import register_plan

    register_plan(PLAN, origin=__name__)
