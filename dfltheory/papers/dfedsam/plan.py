"""How ``verify`` tests DFedSAM's theorems: the problem, the step symbol, K, the hyper-parameters, the topologies
and the targets (theorem, algorithm, measured quantity); :class:`dfltheory.verify.plans.PaperPlan` says what each
field means."""

from __future__ import annotations

import math

from dfltheory.verify.plans import UNDIRECTED, PaperPlan, Target
from dfltheory.verify.worked_example import WorkedExample

#: the report's worked example: DFedSAM on least squares with exact constants against Theorem 4.1, and Corollary
#: 4.1.1's schedule eta = c/(L sqrt(K T)), rho = r/sqrt(T) (card dfedsam.md §6.7, seed L132-134) with its implicit
#: eta <= 1/(10 K L) (seed L544), i.e. T >= 100 c^2 K: the largest c at the smallest horizon is sqrt(T/(100 K))
EXAMPLE = WorkedExample(
    theorem="dfedsam.thm4.1", corollary="dfedsam.cor4.1.1.derived", algorithm="dfedsam",
    gossip_algorithm="dfedsam-mgs", K=5, rho=0.01, r=0.05,
    schedule=lambda T, K, L, c, r: (c / (L * math.sqrt(K * T)), r / math.sqrt(T)),
    largest_c=lambda T, K: math.sqrt(T / (100 * K)),
    name="DFedSAM", gossip_name="DFedSAM(-MGS)", theorem_name="Theorem 4.1", corollary_name="Corollary 4.1.1",
    illustration=dict(eta=1e-3, K=5, T=1000, L=1.0, rho=0.01, sigma_l=1.0, sigma_g=1.0, B=1.0, m=100,
                      f0_minus_fstar=2.3),
    illustration_text="eta = 1e-3, K = 5, L = 1, rho = 0.01, sigma_l = sigma_g = B = 1, m = 100")

PLAN = PaperPlan(
    "dfedsam", "synthetic-robust", "eta", K=4, rate="dfedsam.cor4.1.1.derived",
    informative_problems=("synthetic-robust-common",),
    # the proofs bound the stochastic gradients at perturbed points, grad F_i(y + delta; xi), by B (seed 001 eq.
    # (21), (29); card dfedsam.md §4, §11 item 13), which Assumption 3 (true gradients) does not cover:
    # B_sample bounds every one-sample gradient everywhere (4.1 x B on synthetic-robust; T* 1049 -> 1145)
    constant_of={"B": "B_sample"},
    # the printed statement bounds min_{1<=t<=T}; the proof bounds the average over t and then uses min <= average
    # (card dfedsam.md §2, seed L540-542): both are judged, labelled
    proof_measure={t: "avg" for t in ("dfedsam.thm4.1", "dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2",
                                      "dfedsam.thm4.1.proofE3", "dfedsam.thm4.1.corrected",
                                      "dfedsam.thm4.1.corrected_consensus", "dfedsam.thm4.1.tight")},
    symbols={"rho": 0.01, "Q": 1}, config={"rho": "rho"},
    topologies=UNDIRECTED,
    # at sigma_l = 0 its bound covers the PEP of DFedAvg (DFedSAM at rho = 0)
    pep_model=("dfedavg", {}),
    # the report's certificate row: D-PSGD step then mix (DFedAvg with K = 1), inside Theorem 4.1's conditions
    certificate_case=("dpsgd-atc", {"K": 1, "eta": 0.1}), certificate_order=0,
    example=EXAMPLE,
    # a run's constants are read against DFedSAM's assumptions for its own algorithms and the generic baselines
    run_constants=("L", "sigma_l", "sigma_g", "B", "beta_h", "f0_minus_fstar"),
    runs_read_as=("dfedsam", "dfedsam-mgs", "dfedavg", "dfedavgm", "dpsgd", "fedavg", "fedprox", "fedsam", "scaffold"),
    targets=(Target("dfedsam.thm4.1", "dfedsam", "min", main=True),
             Target("dfedsam.thm4.1.E2", "dfedsam", "min"),
             Target("dfedsam.thm4.1.proofE2", "dfedsam", "min"),
             Target("dfedsam.thm4.1.proofE3", "dfedsam", "min"),
             Target("dfedsam.thm4.1.corrected", "dfedsam", "min"),
             Target("dfedsam.thm4.1.corrected_consensus", "dfedsam", "min"),
             Target("dfedsam.thm4.1.tight", "dfedsam", "min")))


def register() -> None:
    """The plan into ``verify``, through the function a user's plugin calls."""
    from dfltheory.verify.plans import register_plan

    register_plan(PLAN, origin=__name__)
