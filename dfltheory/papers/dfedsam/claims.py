"""DFedSAM's experimental claims (card §9-§10): each compares arms (an algorithm and its options) by a test
over seeds on the data plans of :mod:`dfltheory.verify.claims`, with the paper's own options, rounds, recorded
quantity and the deviations every claim shares."""

from __future__ import annotations

from dfltheory.verify.claims import Claim, SYMMETRIC, Trend, arm
from dfltheory.verify.claims_index import CLAIMS_TEST, ENG, HOLDS, PROP, card_items

#: the paper's values (card §8); "decay" is its per-round factor, over its ``ROUNDS`` (rescaled to the run's rounds)
BASE = {"decay": 0.998, "rho": 0.01, "Q": 4, "weight_decay": 5e-4, **SYMMETRIC}  # dfedsam.md §8
#: the rounds the paper ran (card §8), over which its learning-rate decay is spread
ROUNDS = 1000
#: the theorem's measured quantity (docs/verify.md), drawn beside the metric
QUANTITY = "grad_norm_sq"
#: the data and model of its main experiments (card §8), named where a plan runs others
SETTING = "CIFAR-10 and VGG-11"
#: what every claim still does differently from the paper, on any data (docs/claims.md)
DEVIATIONS = ("symmetric random graph drawn k-regular (the paper: at most 10 neighbours, rule not stated)",)

CLAIMS = (
    Claim("dfedsam.table1", "dfedsam", "§9 Table 1, §10.19",
          "DFedSAM beats DFedAvg, which beats D-PSGD; DFedSAM-MGS (Q = 4) beats DFedSAM",
          "CIFAR-10 Dir 0.3: DFedSAM-MGS 84.26, DFedSAM 82.04, DFedAvg 73.55, D-PSGD 68.23",
          (arm("DFedSAM-MGS", "dfedsam-mgs"), arm("DFedSAM", "dfedsam"), arm("DFedAvg", "dfedavg"),
           arm("D-PSGD", "dpsgd-atc")),
          (("DFedSAM-MGS", ">", "DFedSAM"), ("DFedSAM", ">", "DFedAvg"), ("DFedAvg", ">", "D-PSGD")),
          note="D-PSGD takes one local epoch (its rule), the others 5; D-PSGD as this card reads it (dfedsam.md §3.3: "
               "a step, then gossip of the stepped models: dpsgd-atc, DFedAvg with K = 1), not Lian et al.'s order",
          index=("dfedsam.19",),
          paper_values={"DFedSAM-MGS": 0.8426, "DFedSAM": 0.8204, "DFedAvg": 0.7355, "D-PSGD": 0.6823}),
    Claim("dfedsam.topology", "dfedsam", "§9 Table 2, §10.18",
          "accuracy rises ring < grid < exponential < full, and the gain of Q = 4 gossip steps is large on the ring "
          "and vanishes on the full graph",
          "CIFAR-10 (seed L184-193): DFedSAM ring 73.19, grid 85.28, exp 87.44, full 88.05; MGS - DFedSAM: ring +7.36, "
          "grid +2.11, exp +0.62, full +0.15",
          tuple(arm(f"{name} {topo}", algo, topology=topology, topology_params=None)
                for topo, topology in (("ring", "ring"), ("grid", "grid"), ("exp", "exponential"), ("full", "full"))
                for name, algo in (("DFedSAM", "dfedsam"), ("MGS", "dfedsam-mgs"))),
          (("DFedSAM grid", ">", "DFedSAM ring"), ("DFedSAM exp", ">", "DFedSAM grid"),
           ("DFedSAM full", ">", "DFedSAM exp"), ("MGS ring", ">", "DFedSAM ring"),
           ("MGS full", "=", "DFedSAM full")),
          trends=(Trend("local_test_acc", ">", ("DFedSAM ring", "DFedSAM grid", "DFedSAM exp", "DFedSAM full")),),
          metric="local_test_acc",
          note="each step of the ordering as a pair, and the per-seed rank trend over the four graphs, on the clients' "
               "own models: gossip with a symmetric W keeps x_bar (card §10.15), so the topology reaches x_bar only "
               "through the local drift, while the paper's 15-point spread from ring to full is the local models' "
               "(which model the paper evaluates is not stated, card §8)",
          index=("dfedsam.18",), large=True,
          paper_values={"DFedSAM ring": 0.7319, "DFedSAM grid": 0.8528, "DFedSAM exp": 0.8744, "DFedSAM full": 0.8805,
                        "MGS ring": 0.8055, "MGS grid": 0.8739, "MGS exp": 0.8806, "MGS full": 0.8820},
          deviations=("judged on the clients' own models (the paper does not say which model it evaluates)",)),
    Claim("dfedsam.consensus", "dfedsam", "§10.17",
          "the consensus error is larger on the ring than on the full graph and falls with Q",
          "no number (the card's prediction from Phi(lambda, m, Q), §5.3)",
          (arm("DFedSAM ring", "dfedsam", topology="ring", topology_params=None),
           arm("MGS ring", "dfedsam-mgs", topology="ring", topology_params=None),
           arm("DFedSAM full", "dfedsam", topology="full", topology_params=None)),
          (("DFedSAM full", ">", "DFedSAM ring"), ("MGS ring", ">", "DFedSAM ring")), metric="consensus",
          note="smaller is better: 'a > b' means a has the smaller consensus error; the runs of dfedsam.topology",
          index=("dfedsam.17",), large=True),
    Claim("dfedsam.K", "dfedsam", "§9 Fig. 5(a), §10.21",
          "more local epochs K converge faster in rounds",
          "no number (Fig. 5(a))",
          (arm("K=10", "dfedsam", K=10), arm("K=2", "dfedsam", K=2)),
          (("K=10", ">", "K=2"),), metric="rounds_to_target", index=("dfedsam.21",), varies=("K",),
          paper_setting="CIFAR-10 and VGG-11 (the ablations)", paper_rounds=500),
    Claim("dfedsam.landscape", "dfedsam", "§9 Fig. 2 (seed L27-33)",
          "FedAvg has a flatter loss landscape than DFedAvg in the same setting (DFL is sharper than CFL)",
          "Fashion-MNIST: two landscape pictures, no number",
          (arm("FedAvg", "fedavg", participation=0.1), arm("DFedAvg", "dfedavg", Q=1, rho=0.0)),
          (("FedAvg", ">", "DFedAvg"),), metric="sharpness", data=("fashion-mnist",),
          note="sharpness = lambda_max of the Hessian of f at x_bar after the last round (Lanczos on Hessian-vector "
               "products, dfltheory.verify.landscape), the quantity the pictures show as curvature; the paper's own "
               "FedAvg samples 10 % of the clients, DFedAvg trains all (card §8); `dfltheory plot landscape RUN` "
               "draws Li et al.'s filter-normalised slice of one run",
          paper_setting="Fashion-MNIST (Fig. 2; its model not named)"),
)

#: the card's §10 testable claims (docs/claims.md): (number, claim, status, tests, command, note); a test named
#: without its file is in tests/bounds/test_<paper>.py (:func:`dfltheory.verify.claims_index.card_items`)
CARD = [
    (1, "Phi identities and limits", "asserted", ("test_phi_identities",)),
    (2, "Phi monotone in lambda, non-increasing in Q and m", "asserted", ("test_phi_monotone_and_bounded_below",)),
    (3, "how lambda^Q enters; Phi(Q=4)/Phi(Q=1) reference ratios", "asserted",
     ("test_phi_near_lambda_one", "test_phi_ratios_and_remark2_thresholds_on_reference_topologies")),
    (4, "Remark 2 needs a large Q", "asserted", ("test_phi_ratios_and_remark2_thresholds_on_reference_topologies",)),
    (5, "Lemma D.1 is tight", "asserted", ("test_lemma_d1_tight_and_tight_e3_factor",)),
    (6, "Lemma E.3's ingredients", "asserted", ("test_lemma_d1_tight_and_tight_e3_factor",)),
    (7, "Theorem 4.1 monotonicity", "asserted", ("test_theorem41_monotonicity",)),
    (8, "the bound is minimised at rho = 0", "asserted", ("test_theorem41_minimised_at_rho_zero_and_its_floor",)),
    (9, "floor with fixed rho", "asserted", ("test_theorem41_minimised_at_rho_zero_and_its_floor",)),
    (10, "corollary rates", "asserted", ("test_derived_rates_are_the_leading_terms_of_the_parent",)),
    (11, "learning-rate condition vs the experiments", "asserted",
     ("test_experiments_violate_the_step_size_condition",)),
    (12, "corollary eta compatible with the condition iff T >= 100 c^2 K", "asserted",
     ("test_schedule_meets_step_size_condition_iff_T_large",)),
    (13, "Remark 1's threshold", "asserted", ("test_remark1_threshold_is_not_derivable",)),
    (14, "rho = 0 is DFedAvg; Q = 1 is DFedSAM; W = 11^T/m is FedSAM", "asserted",
     (ENG + "test_reductions", CLAIMS_TEST + "test_dfedsam_with_the_averaging_matrix_is_full_participation_fedsam")),
    (15, "average preservation for symmetric W; drift under random neighbours", "asserted",
     (ENG + "test_gossip_with_symmetric_doubly_stochastic_W_keeps_the_mean_and_contracts",
      PROP + "test_gossip_preserves_the_mean", "tests/verify/test_lemmas_on_runs.py::"
      "test_dfedsam_mean_is_kept_by_symmetric_W_and_drifts_under_row_normalised_random_neighbours"), "",
     "3 random in-neighbours, weights 1/4: gossip moves the mean by up to 0.53 times the local phase's move"),
    (16, "MGS equals W^Q", "asserted",
     ("tests/pep/test_worst_case.py::test_mgs_equals_one_gossip_with_W_power",
      ENG + "test_vectorized_round_equals_per_client_reference",
      "tests/empirical/test_reductions.py::test_dfedsam_mgs_with_resampling_is_a_product_of_Q_matrices")),
    (17, "consensus error ordered ring > full and falling with Q", "training", (), "dfltheory claims dfedsam",
     "ring and full only; the ratios to Phi are not fitted"),
    (18, "Table 2 trend and the MGS gain shrinking with density", "training", (), "dfltheory claims dfedsam"),
    (19, "Table 1: DFedSAM-MGS > DFedSAM > DFedAvg > D-PSGD", "training", (), "dfltheory claims dfedsam"),
    (20, "SAM lowers the generalization gap", "asserted",
     ("tests/empirical/test_sam_generalization.py::test_sam_does_not_lower_the_generalization_gap_at_this_scale",),
     "", "found false at this scale (card §10.20, seed 001 L221-227): digits, 270 training images, 30 rounds: gap "
     "DFedAvg 5.4 +- 0.8, DFedSAM rho = 0.01 5.6 +- 1.1, rho = 0.1 5.9 +- 0.6 points; the test asserts no decrease"),
    (21, "Fig. 5: larger K converges faster (m, rho not run)", "training", (), "dfltheory claims dfedsam"),
    (22, "min_t ||grad f(x_bar^t)||^2 against Theorem 4.1", "training",
     (HOLDS + "test_quick_gives_every_main_theorem_a_verdict_with_a_number",),
     "dfltheory verify dfedsam", "on problems with exact constants (docs/verify.md), not the paper's networks"),
]


def register() -> None:
    """The claims into ``claims`` and the report, through the function a user's plugin calls."""
    from dfltheory.papers.dfedsam import PAPER
    from dfltheory.verify.claims import register_claims
    from dfltheory.verify.claims_index import register_card

    register_claims(PAPER, CLAIMS, base=BASE, rounds=ROUNDS, quantity=QUANTITY, deviations=DEVIATIONS,
                    setting=SETTING, origin=__name__)
    register_card(card_items(PAPER, CARD), origin=__name__)
