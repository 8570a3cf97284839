"""DFedPGP's experimental claims (card §9-§10): each compares arms (an algorithm and its options) by a test
over seeds on the data plans of :mod:`dfltheory.verify.claims`, with the paper's own options, rounds, recorded
quantity and the deviations every claim shares."""

from __future__ import annotations

from dfltheory.verify.claims import Claim, PULL_IN, SYMMETRIC, arm
from dfltheory.verify.claims_index import CLAIMS_TEST, ENG, PROP, QUANT, TOPO, card_items

#: the paper's values (card §8); "decay" is its per-round factor, over its ``ROUNDS`` (rescaled to the run's rounds)
BASE = {"decay": 0.99, "K_v": 1, "momentum": 0.9, "weight_decay": 5e-4, **PULL_IN}  # dfedpgp.md §8 (L189)
#: the rounds the paper ran (card §8), over which its learning-rate decay is spread
ROUNDS = 500
#: the theorem's measured quantity (docs/verify.md), drawn beside the metric
QUANTITY = "grad_norm_sq_u"
#: the data and model of its main experiments (card §8), named where a plan runs others
SETTING = "CIFAR-10 and ResNet-18"
#: what every claim still does differently from the paper, on any data (docs/claims.md)
DEVIATIONS = ("the last layer personal", "eta_v = eta_u (not stated in the paper)")

CLAIMS = (
    Claim("dfedpgp.directed", "dfedpgp", "§9 Table 4, §10.17(c)",
          "directed (in-neighbour pull) communication beats the symmetric version of the same personalized "
          "algorithm",
          "CIFAR-10 Dir 0.3: DFedPGP 85.61, DFedAvgM-P 84.69",
          (arm("DFedPGP directed", "dfedpgp-pull"),
           arm("DFedPGP symmetric", "dfedpgp-pull", **{**SYMMETRIC, "weights": "uniform"})),
          (("DFedPGP directed", ">", "DFedPGP symmetric"),),
          note="the symmetric arm: a random k-regular graph with p_ij = 1/(k+1), the doubly stochastic form of rule "
               "(6) the paper describes (card §7); the same k neighbours as the directed arm",
          index=("dfedpgp.17",), paper_values={"DFedPGP directed": 0.8561, "DFedPGP symmetric": 0.8469}),
    Claim("dfedpgp.personal", "dfedpgp", "§9 Table 4, §10.17(b)",
          "partial personalization (a personal classifier head) beats sharing the whole model",
          "CIFAR-10 Dir 0.3: DFedPGP 85.61, OSGP 83.14",
          (arm("DFedPGP", "dfedpgp-pull"), arm("shared all (OSGP)", "dfedpgp-pull", personal="none")),
          (("DFedPGP", ">", "shared all (OSGP)"),),
          note="the second arm is DFedPGP with every layer shared; personal test accuracy on each client's test "
               "split", index=("dfedpgp.17",), paper_values={"DFedPGP": 0.8561, "shared all (OSGP)": 0.8314}),
    Claim("dfedpgp.finetune", "dfedpgp", "§9 Table 1, §10.17(a)",
          "DFedPGP beats a global decentralized method made personal by local fine-tuning (DFedAvgM + fine-tuning)",
          "CIFAR-10 Dir 0.3 (Table 1, seed L161-175): DFedPGP 85.61, DFedAvgM 82.49, FedBABU (fine-tunes 5 times, "
          "L385) 83.26",
          (arm("DFedPGP", "dfedpgp-pull"),
           arm("DFedAvgM + fine-tuning", "dfedavgm", finetune=5, K_v=None, **{**SYMMETRIC, "weights": "uniform"}),
           arm("DFedAvgM, no fine-tuning", "dfedavgm", finetune=0, K_v=None, **{**SYMMETRIC, "weights": "uniform"})),
          (("DFedPGP", ">", "DFedAvgM + fine-tuning"),),
          note="personal test accuracy on each client's own test split for all three; DFedAvgM (momentum 0.9, "
               "symmetric k-regular gossip) is trained with DFedPGP's schedule, then each client takes 5 SGD steps "
               "of batch 32 on its own data from its final model (dfltheory.empirical.finetune); the third arm, not "
               "decided, is DFedAvgM's final models without fine-tuning", index=("dfedpgp.17",),
          deviations=("fine-tuning: 5 minibatch steps (FedBABU's 5 fine-tuning passes read as steps)",)),
    Claim("dfedpgp.K_u", "dfedpgp", "§6 Remark 1, §9 Table 8, §10.6",
          "more local epochs K_u on the shared part speed convergence (Remark 1); K_u = 5 is the best of the grid "
          "[1, 3, 5, 8] (Table 8)",
          "no accuracy given (Remark 1, seed L157; Table 8 'Local Interval' [1, 3, 5, 8], best 5, L469)",
          tuple(arm(f"K_u={k}", "dfedpgp-pull", K=k) for k in (1, 3, 5, 8)),
          (("K_u=5", ">", "K_u=1"), ("K_u=5", ">", "K_u=3"), ("K_u=5", ">", "K_u=8")),
          note="K is DFedPGP's K_u in epochs (K_v = 1 personal epoch first), as the paper's Local Interval",
          index=("dfedpgp.6",), varies=("K",)),
    Claim("dfedpgp.clients", "dfedpgp", "§9 Fig. 3b, §10.8, §10.17(f)",
          "fewer clients give higher accuracy (more data per client), although the bound's q predicts the opposite",
          "no number (Fig. 3b, seed L242): 5 and 10 clients above 50, 100 and 200",
          (arm("m/2 clients", "dfedpgp-pull", scale={"n": 0.5}), arm("m clients", "dfedpgp-pull"),
           arm("2m clients", "dfedpgp-pull", scale={"n": 2.0})),
          (("m/2 clients", ">", "m clients"), ("m clients", ">", "2m clients")),
          note="m/2, m, 2m clients split digits' 1,348 training images (50, 100, 200 at the full size); local work "
               "in epochs, so more data per client is more steps per round (the paper's mechanism); the same k "
               "neighbours", index=("dfedpgp.8", "dfedpgp.17"), varies=("n",), large=True),
    Claim("dfedpgp.neighbours", "dfedpgp", "§9 Fig. 3a, §10.7, §10.17(e)",
          "more neighbours give higher accuracy: the largest neighbour count is best",
          "no number (Fig. 3a, seed L240): 2, 5, 10, 20, 40 in-neighbours of 100, best at 40",
          (arm("k/2", "dfedpgp-pull", scale={"k": 0.5}), arm("k", "dfedpgp-pull"),
           arm("2k", "dfedpgp-pull", scale={"k": 2.0}), arm("4k", "dfedpgp-pull", scale={"k": 4.0})),
          (("4k", ">", "k/2"), ("4k", ">", "k"), ("4k", ">", "2k")),
          note="k = max(2, round(m/10)) in-neighbours: 5, 10, 20, 40 of 100 clients at the full size",
          index=("dfedpgp.7", "dfedpgp.17"), large=True),
)

#: the card's §10 testable claims (docs/claims.md): (number, claim, status, tests, command, note); a test named
#: without its file is in tests/bounds/test_<paper>.py (:func:`dfltheory.verify.claims_index.card_items`)
CARD = [
    (1, "push-sum invariants; mu = 1 and the failed identity under the row-stochastic rule", "asserted",
     (PROP + "test_push_sum_conserves_sums_and_debiased_values_reach_the_mean",
      ENG + "test_dfedpgp_never_mixes_personal_parameters_and_mixes_shared_ones",
      CLAIMS_TEST + "test_row_stochastic_rule_keeps_mu_at_one_and_moves_the_mean")),
    (2, "delta_emp in (0, 1]; = 1 for doubly stochastic P", "asserted",
     (TOPO.format("pushsum") + "test_papers_random_out_graph_matches_the_card_simulation",
      TOPO.format("pushsum") + "test_measured_rate_of_a_fixed_matrix_is_its_slem")),
    (3, "the paper's C, q are vacuous", "asserted", ("test_paper_constants_are_vacuous_for_the_experiments_topology",)),
    (4, "empirical q is small; q_emp ~ |lambda_2(P)| for a fixed P", "asserted",
     (TOPO.format("pushsum") + "test_papers_random_out_graph_matches_the_card_simulation",
      TOPO.format("pushsum") + "test_measured_rate_of_a_fixed_matrix_is_its_slem")),
    (5, "monotonicity of Theorem 1 / Corollary 1", "asserted", ("test_monotonicity_of_theorem_and_corollary",)),
    (6, "K_u contradiction (Remark 1 vs Lemma 3)", "asserted",
     ("test_corollary1_reference_values_and_K_u_trend",
      "test_corollary1_with_lemma3_constants_grows_explosively_in_K_u"), "dfltheory claims dfedpgp",
     "the bounds; the measured trend in K_u is the training claim `dfedpgp.K_u`"),
    (7, "connectivity claim (Remark 2) comes from the diameter", "asserted",
     ("test_remark2_neighbour_claim_comes_from_the_diameter_only",), "dfltheory claims dfedpgp",
     "the bound; Fig. 3a's ordering in training is `dfedpgp.neighbours`"),
    (8, "client-count claim: q falls as m grows", "asserted", ("test_lemma3_q_decreases_with_more_clients",),
     "dfltheory claims dfedpgp", "the bound; Fig. 3b's ordering in training is `dfedpgp.clients`"),
    (9, "no linear speed-up: m absent", "asserted",
     ("test_no_client_count_and_topology_only_through_L_vu_at_leading_order",)),
    (10, "topology in the leading term only through L_vu", "asserted",
     ("test_no_client_count_and_topology_only_through_L_vu_at_leading_order",)),
    (11, "Corollary dominates Theorem", "asserted", ("test_corollary_dominates_theorem",)),
    (12, "rate -1/2 once T4/T5 hold", "asserted", ("test_explicit_bound_rate_at_corollary_step_sizes",)),
    (13, "Lemma 2 as printed is false for K_u >= 34", "asserted", ("test_lemma2_counterexample_from_K_u_34",)),
    (14, "learning-rate conditions vs the experiments", "asserted",
     ("test_violations_of_the_cifar_setting", "test_violations_of_the_epoch_reading_and_column_stochastic_delta")),
    (15, "T4 feasibility: minimal T", "asserted", ("test_T4_under_the_schedule_is_a_threshold_on_T",)),
    (16, "table checks (Table 7 speed-ups, '-' entries, Table 4 = Table 1, 86.50 typo)", "asserted",
     (CLAIMS_TEST + "test_table_arithmetic_dfedpgp",)),
    (17, "training: (a) vs DFedAvg + fine-tuning, (b) personalization, (c) directed, (e) neighbours, (f) clients",
     "training", (), "dfltheory claims dfedpgp", "(a) against DFedAvg + fine-tuning only, not the paper's other "
     "baselines; (d) rounds to target and (g) Tiny-ImageNet are not run"),
    (18, "which gradient to log (biased and de-biased)", "asserted",
     (ENG + "test_dfedpgp_metrics_are_theorem_1s_quantities", QUANT + "test_dfedpgp_measures_theorem_1s_deltas")),
]


def register() -> None:
    """The claims into ``claims`` and the report, through the function a user's plugin calls."""
    from dfltheory.papers.dfedpgp import PAPER
    from dfltheory.verify.claims import register_claims
    from dfltheory.verify.claims_index import register_card

    register_claims(PAPER, CLAIMS, base=BASE, rounds=ROUNDS, quantity=QUANTITY, deviations=DEVIATIONS,
                    setting=SETTING, origin=__name__)
    register_card(card_items(PAPER, CARD), personal_metric=True, origin=__name__)
