"""How ``verify`` tests DFedPGP's theorems: the problem, the step symbol, K, the hyper-parameters, the topologies
and the targets (theorem, algorithm, measured quantity); :class:`dfltheory.verify.plans.PaperPlan` says what each
field means."""

from __future__ import annotations

from dfltheory.verify.plans import DIRECTED, PaperPlan, Target

PLAN = PaperPlan(
    "dfedpgp", "synthetic-personal", "eta_u", K=2, pushsum=True, rate="dfedpgp.cor1",
    symbols={"K_u": 2, "K_v": 2, "eta_v": lambda v: 1 / (8 * v["L_v"] + 8) / v["K_v"] / 2},
    config={"eta_v": "lr_v", "K_v": "K_v"},
    # both steps free (issue 33 item 4; Corollary 1 shrinks eta_v as O(1/sqrt(T))): eta_v is also chosen for T*
    tune={"eta_v": (1e-7, 1e-1)},
    pushsum_lemma="seed 003 L525-527",
    tuned=("dfedpgp.thm1.explicit", "dfedpgp.thm1.explicit_corrected", "dfedpgp.thm1.explicit_u"),
    topologies=DIRECTED,
    run_constants=("L_u", "L_v", "L_uv", "L_vu", "sigma_u", "sigma_v", "sigma_g", "f0_minus_fstar"),
    runs_read_as=("dfedpgp",),
    run_symbols={"dfedpgp": {"K": "K_u"}},  # its K is the shared part's K_u (the pull variant is read with K)
    targets=(Target("dfedpgp.thm1", "dfedpgp", "avg_pgp", main=True),
             Target("dfedpgp.thm1.eq33", "dfedpgp", "avg_pgp"),
             Target("dfedpgp.thm1.explicit", "dfedpgp", "avg_pgp"),
             Target("dfedpgp.thm1.explicit_corrected", "dfedpgp", "avg_pgp"),
             Target("dfedpgp.thm1.explicit_u", "dfedpgp", "avg_pgp")))


def register() -> None:
    """The plan into ``verify``, through the function a user's plugin calls."""
    from dfltheory.verify.plans import register_plan

    register_plan(PLAN, origin=__name__)
