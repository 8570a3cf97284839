"""The index of the cards' §10 testable claims (104 in all): each claim -> the tests (``file::function``) or the
command that checks it, and its status. ``docs/claims.md`` is generated from :data:`INDEX` by :func:`markdown`
(``python -m dfltheory.verify.claims_index [CLAIMS_JSON]``), and ``tests/verify/test_claims.py`` checks that every
test named here exists and that the document is the one this table generates, so the index cannot rot.

Statuses:

* ``asserted``: a test asserts the claim as the card states it;
* ``in part``: a test asserts part of it (the note says which part is open);
* ``not yet``: nothing checks it;
* ``training``: an experimental claim, run by ``dfltheory claims`` (:mod:`dfltheory.verify.claims`; the verdict
  at the default size is shown) or ``dfltheory verify`` (docs/verify.md).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

STATUSES = ("asserted", "in part", "not yet", "training")
B = "tests/bounds/test_{}.py::"
ENG = "tests/empirical/test_engine.py::"
TRAIN = "tests/empirical/test_train.py::"
TOPO = "tests/topology/test_{}.py::"
PROP = "tests/testing/test_properties.py::"
QUANT = "tests/verify/test_quantities.py::"
HOLDS = "tests/verify/test_holds.py::"
CLAIMS_TEST = "tests/verify/test_claims.py::"


@dataclass(frozen=True)
class Item:
    paper: str
    number: int
    title: str
    status: str
    tests: tuple[str, ...] = ()
    command: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.paper}.{self.number}"


def _items(paper: str, rows) -> list[Item]:
    b = B.format(paper)
    out = []
    for number, title, status, tests, *rest in rows:
        tests = tuple(t if "::" in t else b + t for t in tests)
        command, note = (rest + ["", ""])[:2]
        out.append(Item(paper, number, title, status, tests, command, note))
    return out


SGPSM = _items("dfedsgpsm", [
    (1, "Lemma 1 identity of the momentum local phase", "asserted", ("test_lemma1_identity_on_simulated_momentum",)),
    (2, "K <= alpha_tilde < K/(1-alpha); printed first term below the proof's", "asserted",
     ("test_alpha_tilde_closed_form_and_bounds", "test_printed_first_term_is_below_what_the_proof_gives")),
    (3, "monotonicity of thm1_paper", "asserted", ("test_theorem1_monotonicity_signs",)),
    (4, "momentum in the bound: interior minimiser vs none in the corrected reading", "asserted",
     ("test_momentum_in_the_bound",)),
    (5, "non-vanishing floor as T -> oo (0.03 L^2 at rho = 0.1)", "asserted", ("test_non_vanishing_floor_as_T_grows",)),
    (6, "Corollary 1 rate Theta(T^-1/2) and its limit", "asserted", ("test_corollary1_exact_substitution_and_rate",)),
    (7, "missing B^2 term in C_2", "asserted", ("test_corollary1_exact_substitution_and_rate",)),
    (8, "learning-rate condition vs the experiments", "asserted",
     ("test_experiment_settings_violate_the_step_size_conditions",)),
    (9, "corollary horizon T > 64/delta^2", "asserted", ("test_lemma_corollary_remark_conditions",)),
    (10, "descent-positivity L eta alpha_tilde < 1 not implied by eta < 1/(KL)", "asserted",
     ("test_descent_condition_not_implied_by_papers_step_size",)),
    (11, "Lemma 3 arithmetic", "asserted", ("test_lemma3_arithmetic_claims",)),
    (12, "push-sum mass conservation", "asserted",
     (ENG + "test_push_sum_weights_keep_their_sum_and_debias",
      PROP + "test_push_sum_conserves_sums_and_debiased_values_reach_the_mean")),
    (13, "push-sum de-biasing; the bias of naive averaging", "asserted",
     (PROP + "test_push_sum_conserves_sums_and_debiased_values_reach_the_mean",
      CLAIMS_TEST + "test_push_sum_without_its_weights_is_biased_on_the_papers_random_topology")),
    (14, "delta facts (delta <= 1, = 1 doubly stochastic, ~0.07-0.10 at n = 100)", "asserted",
     (TOPO.format("pushsum") + "test_papers_random_out_graph_matches_the_card_simulation",
      TOPO.format("pushsum") + "test_measured_rate_of_a_fixed_matrix_is_its_slem")),
    (15, "Remark 1 monotonicity; q_emp and delta_emp against the neighbour count", "asserted",
     ("test_remark1_q_by_hand_and_monotone_in_delta_window", "tests/verify/test_lemmas_on_runs.py::"
      "test_dfedsgpsm_measured_push_sum_constants_against_the_neighbour_count"), "",
     "found in part false: q_emp falls and delta_emp rises with k = 10, 20, 30, 50, but the fitted C_emp does not "
     "fall (17.3, 11.1, 13.1, 9.9), so Theorem 1 at the measured constants rises from k = 20 to 30 (card §10.15)"),
    (16, "Lemma 4 plateau against measured max_i ||z_i - x_bar||", "asserted",
     ("test_lemma4_decays_to_plateau", "tests/verify/test_lemmas_on_runs.py::"
      "test_dfedsgpsm_lemma4_plateau_against_the_measured_spread"), "",
     "synthetic-logistic, random 3-out: the measured spread is at most 0.025 of the bound"),
    (17, "Lemma 3 drift on a synthetic problem", "asserted",
     ("tests/verify/test_lemmas_on_runs.py::test_dfedsgpsm_lemma3_drift_on_a_run",), "",
     "both C_1: bound / measured about 1e3 on synthetic-logistic"),
    (18, "special cases: SGP (K = 1, alpha = rho = 0), DFedSGPM, OSGP", "asserted",
     (ENG + "test_reductions", "test_asyng_reduction"), "",
     "through DFedPGP with every layer shared, which equals both DFedSGPSM(rho = alpha = 0) and, at K = 1, SGP"),
    (19, "effective step eta/w_i: stability vs the minimum weight", "asserted",
     ("tests/verify/test_lemmas_on_runs.py::"
      "test_dfedsgpsm_effective_step_is_eta_over_w_and_stability_against_the_minimum_weight",), "",
     "the z-step is eta/w_i exactly; the stable eta L falls with w_min (2.0, 1.6, 0.7 at w_min = 1, 0.11, 0.031) "
     "but stays 7-11 times the per-step prediction 2 w_min"),
    (20, "Table 1 ordering: DFedSGPSM > SGP > D-PSGD", "training", (), "dfltheory claims dfedsgpsm"),
    (21, "Table 2 increments: +momentum > 0, +SAM > 0, +selection ~ 0", "training", (), "dfltheory claims dfedsgpsm"),
    (22, "Fig. 2: best alpha = 0.7 (rho, participation not run)", "training", (), "dfltheory claims dfedsgpsm"),
    (23, "non-IID ordering Dir 0.3 <= Dir 0.6 <= IID in Table 1 (26 of 27)", "asserted",
     (CLAIMS_TEST + "test_table_arithmetic_dfedsgpsm",), "", "the table's numbers; not re-run"),
])

SAM = _items("dfedsam", [
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
])

CATA = _items("dfedcata", [
    (1, "beta-monotonicity of the leading term; interior minimiser of the bound", "asserted",
     ("test_remark1_beta_tightens_the_leading_term_but_not_the_full_bound",)),
    (2, "heterogeneity enters only at O(1/T)", "asserted", ("test_heterogeneity_enters_at_order_one_over_T",)),
    (3, "no spectral term in Theorem 1; Xi > 0 depends on lambda", "asserted",
     ("test_remark1_delta0_vanishes_and_no_spectral_term",
      "tests/verify/test_lemmas_on_runs.py::test_dfedcata_consensus_term_xi_is_positive_and_grows_with_lambda"), "",
     "reading B: Xi ordered by lambda, 0 on the full graph; reading A: Xi > 0 on the full graph, grows on the grid"),
    (4, "condition violation at the paper's settings", "asserted", ("test_paper_settings_violate_the_conditions",)),
    (5, "the Corollary needs huge T when beta is large", "asserted", ("test_cor1_needs_huge_T_for_large_beta",)),
    (6, "Variant A leaves the mean unchanged", "asserted",
     ("test_reading_A_leaves_the_mean_unchanged", ENG + "test_nesterov_mode_A_keeps_the_mean_mode_B_does_not")),
    (7, "Variant B gives heavy-ball mean dynamics (Lemma 6)", "asserted",
     ("test_reading_B_auxiliary_sequence_is_plain_sgd",)),
    (8, "Lemma 2 closed form; gamma in (0, 1)", "asserted",
     ("test_lem2_closed_form_matches_prox_sgd_steps", "test_lem2_reference_value_and_gamma_range")),
    (9, "reductions: DFedAvg, decentralized FedProx, FedInit", "asserted",
     (ENG + "test_reductions",
      "tests/empirical/test_reductions.py::test_dfedcata_with_beta_zero_is_decentralized_fedprox",
      "tests/empirical/test_reductions.py::test_dfedcata_with_beta_zero_and_the_averaging_matrix_is_fedprox",
      "tests/empirical/test_reductions.py::test_dfedcata_mode_A_with_the_averaging_matrix_is_fedinit")),
    (10, "Hardt limit of Theorem 2 and its monotonicity", "asserted",
     ("test_thm2_hardt_limit", "test_thm2_monotonicity")),
    (11, "kappa_lambda monotone, against Remark 2", "asserted",
     ("test_thm2_placeholder_increases_with_lambda",
      "test_kappa_lambda_is_the_smallest_lemma16_constant_and_monotone")),
    (12, "Table III accuracy not monotone in lambda (Spearman)", "training", (), "dfltheory claims dfedcata",
     "six topologies at m = 10 on digits, DFedCata in reading B; with the authors' sequential schedule instead the "
     "accuracy follows the gap (rho = +1.00, exact p = 0.003; one default-size run of that variant)"),
    (13, "convergence speed independent of the spectral gap", "training", (), "dfltheory claims dfedcata",
     "rounds to 90 % on digits against the gap, DFedCata (reading B) and DFedAvg; with the sequential schedule "
     "DFedCata's speed follows the gap (rho = +0.94, exact p = 0.017; one default-size run of that variant)"),
    (14, "synchronous Variant A expansive on static sparse graphs", "asserted",
     (ENG + "test_nesterov_mode_A_amplifies_disagreement_when_W_has_negative_eigenvalues",
      "tests/verify/test_lemmas_on_runs.py::test_dfedcata_sequential_sweep_spectral_radii_match_the_card",
      "tests/verify/test_lemmas_on_runs.py::test_dfedcata_synchronous_reading_A_diverges_on_static_ring_and_grid_and_"
      "the_sequential_schedule_does_not"), "",
     "training diverges on the static code ring and grid at beta = 0.9 (synthetic-logistic, m = 16)"),
    (15, "the code's sequential aggregation as a stabilizer", "asserted",
     ("tests/verify/test_lemmas_on_runs.py::test_dfedcata_sequential_sweep_spectral_radii_match_the_card",
      "tests/verify/test_lemmas_on_runs.py::test_dfedcata_synchronous_reading_A_diverges_on_static_ring_and_grid_and_"
      "the_sequential_schedule_does_not"), "",
     "the sweep radii of the card to 1e-3; training at this scale (synthetic-logistic, m = 16), not Table III's "
     "CIFAR-10 ring"),
    (16, "Variant B stability: min eig(W) > -1/(1+2 beta)", "asserted",
     (CLAIMS_TEST + "test_dfedcata_reading_B_consensus_is_stable_iff_the_smallest_eigenvalue_is_above_the_threshold",)),
    (17, "Table II ratios = DFedAvg rounds / method rounds", "asserted",
     (CLAIMS_TEST + "test_table_arithmetic_dfedcata",)),
    (18, "text margins vs Table I (2.07, not 2.5; 4.64, not 4.7)", "asserted",
     (CLAIMS_TEST + "test_table_arithmetic_dfedcata",)),
    (19, "ablation consistency of Tables IV and V", "asserted", (CLAIMS_TEST + "test_table_arithmetic_dfedcata",)),
    (20, "beta ablation monotone up to saturation", "training", (), "dfltheory claims dfedcata",
     "final accuracy only; rounds to 75 % are not measured"),
])

PGP = _items("dfedpgp", [
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
])

ADMM = _items("dfedadmm", [
    (1, "main text = appendix", "asserted", ("test_main_text_equals_appendix_form",)),
    (2, "monotone in psi, diverges as psi -> 1", "asserted", ("test_theorem1_increasing_in_psi_and_infinite_at_one",)),
    (3, "asymptotic topology independence", "asserted", ("test_topology_independence_for_large_T",)),
    (4, "kappa range", "asserted", ("test_kappa_range",)),
    (5, "hidden sqrt(K) in the Corollary", "asserted", ("test_hidden_sqrt_K_in_the_corollary",)),
    (6, "SAM term orders", "asserted", ("test_sam_term_orders_under_the_schedule",)),
    (7, "gamma range", "asserted", ("test_gamma_range_and_reference_values",)),
    (8, "Lemma 6's contraction claim", "asserted", ("test_lemma6_bracket_with_the_papers_a_is_false",)),
    (9, "(1 + 1/(K-1))^K < 5", "asserted", ("test_the_power_bound_of_lemma6",)),
    (10, "conditions at the paper's hyper-parameters", "asserted",
     ("test_experiments_violate_the_step_size_condition", "test_experiments_that_break_L_free_conditions")),
    (11, "algorithm identities (a)-(e)", "asserted",
     ("test_gamma_sum_identity_and_algorithm_identities", ENG + "test_admm_message_identity",
      QUANT + "test_dfedadmm_measures_the_auxiliary_sequence_w",
      "tests/verify/test_lemmas_on_runs.py::"
      "test_dfedadmm_identities_d_e_hold_for_doubly_stochastic_W_and_fail_for_a_row_stochastic_one"), "",
     "(d), (e) fail under 3 random in-neighbours with uniform weights: errors 0.57 and 0.93 times the step"),
    (12, "eta = lambda degeneracy (a restart every local step)", "asserted",
     (ENG + "test_admm_aux_sequence_is_xbar_when_lr_equals_lam", TRAIN + "test_admm_collapse_warning",
      "tests/empirical/test_reductions.py::test_dfedadmm_at_eta_equal_lambda_restarts_every_local_step",
      "tests/empirical/test_reductions.py::test_dfedadmm_with_one_local_step_at_eta_equal_lambda_is_dpsgd")),
    (13, "Lemma 4/5 and R1 bounds on a synthetic problem", "asserted",
     ("test_lemmas_4_5_eq22_and_lemma9", "tests/verify/test_lemmas_on_runs.py::"
      "test_dfedadmm_lemmas_4_5_10_and_R1_hold_on_a_run"), "",
     "synthetic-logistic, ring: bound / measured about 880 (Lemma 4), 50 (Lemma 5), 520 (R1)"),
    (14, "Lemma 8: consensus error below 2 C2/(1-psi)^2 on four topologies", "asserted",
     ("tests/verify/test_lemmas_on_runs.py::"
      "test_dfedadmm_lemma8_consensus_error_on_four_topologies_and_its_exponent_in_one_minus_psi",), "",
     "holds with 1.3-1.9e5 to spare; the measured exponent in (1 - psi) is -1.90 (the bound's: -2)"),
    (15, "Lemma 10", "asserted",
     ("test_lemma10_and_eq23", "tests/verify/test_lemmas_on_runs.py::"
      "test_dfedadmm_lemmas_4_5_10_and_R1_hold_on_a_run"), "", "bound / measured about 930 on the run"),
    (16, "whole bound vs measurement", "training",
     (HOLDS + "test_quick_gives_every_main_theorem_a_verdict_with_a_number",),
     "dfltheory verify dfedadmm"),
    (17, "accuracy increases Ring < Full (falls with psi)", "training", (), "dfltheory claims dfedadmm",
     "ring and full only"),
    (18, "Table 1: DFedADMM-SAM best; DFedADMM vs DFedAvg", "training", (), "dfltheory claims dfedadmm"),
    (19, "Tables 3-5: fewest rounds to target", "asserted",
     ("tests/bounds/test_table_arithmetic.py::"
      "test_dfedadmm_or_its_sam_variant_needs_the_fewest_rounds_in_all_27_columns",), "",
     "the tables' numbers; not re-run (rounds to a target are not measured here)"),
    (20, "Fig. 3: K, lambda, rho, m ablations", "training", (), "dfltheory claims dfedadmm",
     "K, lambda, rho (three of the six radii) and m (DFedADMM-SAM)"),
    (21, "CIFAR-10 IID - Dir 0.3 gaps (DFedSAM 2.34, not 2.41)", "asserted",
     (CLAIMS_TEST + "test_table_arithmetic_dfedadmm",)),
])

INDEX: tuple[Item, ...] = tuple(SGPSM + SAM + CATA + PGP + ADMM)
CARDS = {"dfedsgpsm": 23, "dfedsam": 22, "dfedcata": 20, "dfedpgp": 18, "dfedadmm": 21}  # §10 items per card


def counts() -> dict[str, int]:
    c = Counter(i.status for i in INDEX)
    return {s: c.get(s, 0) for s in STATUSES}


def _results(result: dict | None) -> dict[str, list[dict]]:
    """card item ('dfedsam.18') -> the claim rows of ``result`` that answer it."""
    from dfltheory.verify.claims import CLAIMS

    rows = {c["id"]: c for c in (result or {}).get("claims", [])}
    out: dict[str, list[dict]] = {}
    for claim in CLAIMS.values():
        for key in claim.index:
            out.setdefault(key, []).append(rows.get(claim.id, {"id": claim.id}))
    return out


def _arms(r: dict) -> str:
    """'label mean ± std, ...' of a claim row (accuracy in %)."""
    s = 100.0 if r["metric"] in ("test_acc", "local_test_acc") else 1.0
    def own(a):  # the clients' own models beside x_bar (DFedPGP's metric is already theirs)
        x = a.get("local_test_acc_mean")
        return (f" (own models {100 * x:.3g})" if x is not None and r["metric"] == "test_acc"
                and r["paper"] != "dfedpgp" and a.get("finetune") is None else "")

    arms = [f"{a['label']} {s * a['mean']:.3g} ± {s * (a['std'] or 0.0):.2g}{own(a)}" if a["mean"] is not None
            else f"{a['label']} {a['status']}" for a in r["arms"]]
    from dfltheory.verify.claims import trend_text

    return ", ".join(arms + [trend_text(t) for t in r.get("trends", ())])


def _result_cell(rows: list[dict]) -> str:
    return "<br>".join(f"`{r['id']}`: **{r['verdict']}** ({_arms(r)})" if "verdict" in r else f"`{r['id']}`"
                       for r in rows)


def _tests(r: dict) -> str:
    """Each part of a claim row: the difference, its test's Holm-adjusted p and the smallest detectable effect."""
    from dfltheory.verify.claims import shown_in

    s, unit = shown_in(r["metric"])
    out = []
    for p in r["pairs"]:
        if p.get("difference") is None:
            out.append(f"{p['a']} {p['relation']} {p['b']}: {p['why']}")
            continue
        moving = ", still moving" if p.get("moving") else ""
        paper = f", the paper's {s * p['paper_effect']:+.3g}{unit}" if p.get("paper_effect") is not None else ""
        study = (f" (study-wide: {p['verdict_study']})" if p.get("verdict_study", p["verdict"]) != p["verdict"]
                 else "")
        out.append(f"{p['a']} {p['relation']} {p['b']}: {s * p['difference']:+.3g}{unit}, p_Holm "
                   f"{p['p_holm']:.2g}, detectable {s * p['detectable']:.3g}{unit}{paper}{moving}: {p['verdict']}"
                   f"{study}")
    for t in r.get("trends", ()):
        if t.get("rho") is None:
            out.append(f"trend ({t['metric']}): {t.get('why', 'undefined')}")
        elif t["relation"] == "=" and "inversions" in t:
            inv = ", ".join(f"{x['a']} over {x['b']} {s * x['difference']:+.3g}{unit}" if "difference" in x
                            else f"{x['a']} over {x['b']}: {x['why']}" for x in t["inversions"])
            out.append(f"does not follow the gap ({t['metric']}, {len(t['arms'])} arms; rho {t['rho']:+.2f} "
                       f"descriptive): the paper's inversions {inv}; p_Holm {t.get('p_holm', 1.0):.2g}: {t['verdict']}")
        else:
            rho = "undefined" if t.get("rho") is None else f"{t['rho']:+.2f}"
            interval = (f" [{t['interval'][0]:+.2f}, {t['interval'][1]:+.2f}]" if t.get("interval") else "")
            out.append(f"trend ({t['metric']} vs gap, {len(t['arms'])} arms): mean rho {rho}{interval}, p_Holm "
                       f"{t.get('p_holm', 1.0):.2g}: {t['verdict']}")
    return "<br>".join(out)


def _training_section(result: dict) -> list[str]:
    from dfltheory.verify.claims import RULE

    from dfltheory.verify.claims import findings
    from dfltheory.verify.stats import VERDICTS

    found = result.get("findings") or findings(result["claims"])
    counts_ = Counter(f["verdict"] for f in found)
    study = Counter(f.get("verdict_study", f["verdict"]) for f in found)
    repeated = [f for f in found if len(f["claims"]) > 1]
    data = "" if result.get("plan", "digits") == "digits" else f"--data {result['plan']} "
    lines = [f"## Training claims: `dfltheory claims {data}--size {result['size']} --jobs {result['workers']}`", "",
             f"m = {result['m']} clients ({result['m_large']} for the topology, neighbour and client-count claims), "
             f"T = {result['rounds']} rounds, {result['seeds']} seeds per arm (each seed its own partition, initial "
             f"model, graph and minibatches), {result['problem']}, the papers' settings (dfltheory/verify/claims.py); "
             f"{result['cohorts']} cohorts ({result['runs']} runs), {result['cohort_seconds'] / 60:.0f} min of "
             f"training summed over the cohorts (each on one CPU thread; {result['workers']} processes at a time, "
             f"{result['machine_note']}). Rule: {RULE}. Accuracies in % (x_bar's, and the clients' own models in "
             "brackets; DFedPGP's is the personal accuracy). A pair marked 'still moving' changed by more than the "
             "effect tested over the last 20 % of the rounds.", "",
             f"**Verdicts** ({len(result['claims'])} claims, {len(found)} findings: "
             + ("; ".join(f"{', '.join(f['claims'][1:])} counted with {f['claims'][0]}" for f in repeated) or "each "
                "claim its own") + "): " + ", ".join(f"{counts_.get(v, 0)} {v}" for v in VERDICTS) + ". Study-wide "
             "(Holm over every test of the run): " + ", ".join(f"{study.get(v, 0)} {v}" for v in VERDICTS) + ".", "",
             "A rule must agree with the paper's own numbers before it may contradict them: each claim's rule is fed "
             "the paper's printed numbers plus the measured per-seed noise (200 simulations; column 'calibration': "
             "how often it then agrees / calls them contradicted); a 'contradicted' the rule also gives the paper's "
             "numbers more than 10 % of the time is void.", ""] + ([
             f"{result['rejudged']}.", ""] if result.get("rejudged") else []) + [
             "| claim | section | paper's number | measured here (mean ± std) | tests | calibration | verdict | why |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["claims"]:
        why = "" if r["verdict"] == "agrees" else r["reason"]
        if r.get("stale"):
            why = f"stored verdict, not judged again: {r['stale']}" + (f"; {why}" if why else "")
        cal = r.get("calibration")
        cal = (f"agrees {100 * cal['agrees']:.0f} %, contradicted {100 * cal['contradicted']:.0f} %" if cal
               else "no paper numbers")
        study = (f" (study-wide: {r['verdict_study']})" if r.get("verdict_study", r["verdict"]) != r["verdict"]
                 else "")
        lines.append(f"| `{r['id']}` (m = {r['m']}): {r['statement']} | {r['section']} | {r['paper_number']} | "
                     f"{_arms(r)} | {_tests(r)} | {cal} | **{r['verdict']}**{study} | {why} |")
    lines += ["", "### What still differs from each paper, per claim", ""]
    lines += [f"* `{r['id']}`: " + "; ".join(r["deviations"]) for r in result["claims"]]
    return lines + [""]


def _issue34_section() -> list[str]:
    """How the rules were calibrated on the papers' own numbers (issue 34 item 4), and the DFedSGPSM-S collapse."""
    from dfltheory.verify.claims import CALIBRATION_LEVEL, CLAIMS

    sgpsm = CLAIMS["dfedsgpsm.table2"]
    collapse = sgpsm.note[sgpsm.note.index("DFedSGPSM-S collapses"):]
    return ["### The rules against the papers' own numbers (issue 34)", "",
            "* 'Does not follow the spectral gap' (DFedCata's Table III and Fig. 4) is tested on the inversions the "
            "paper names (WS and ER above Full, Exp below Grid; ER faster than Full): the earlier rule, 'the mean "
            "per-seed Spearman rho lies inside (-0.5, 0.5)', called the paper's own Table III 'contradicted' (its "
            "rank correlation with the gaps is about +0.5: the ring is far below the rest). Fed the paper's tables "
            "with the measured per-seed noise, every trend rule now agrees "
            "(`tests/verify/test_claims.py::test_each_trend_rule_agrees_with_the_papers_own_table`), and no rule "
            f"calls a paper's printed numbers contradicted more than {100 * CALIBRATION_LEVEL:.0f} % of the time "
            "(`test_no_rule_contradicts_the_papers_own_numbers`); a rule that would may not contradict them (the "
            "claim becomes inconclusive).",
            "* 'Inconclusive' is split: *paper's effect excluded* (the one-sided test of 'difference >= the paper's "
            "printed effect' rejects, Holm inside the claim) and *underpowered* (the smallest effect detectable at "
            "80 % power exceeds the paper's effect, or the equivalence margin).",
            "* Family-wise policy: each claim is one family (Holm at 0.05 over its tests), as each paper states each "
            "claim; beside it, the study-wide verdict applies Holm at 0.05 over every test of every claim of the run.",
            "* One finding counted once: `dfedadmm.lambda` repeats `dfedadmm.printed` (the degenerate eta/lambda at "
            "the printed eta = 0.1 and small lambda); the verdict counts are over findings.",
            "* The clients' own models' accuracy is stored per seed (`local_values`), and `dfedsam.topology` is judged "
            "on it (gossip with a symmetric W keeps x_bar; the paper's 15-point spread is the local models'). Speed "
            "claims, and the runs they share, are measured every round.",
            f"* {collapse}.", ""]


#: the plans beside digits, each with its heading and what it runs (issue 34 items 2 and 3)
_PLAN_TEXT = {
    "mnist": ("MNIST, where the papers ran it", "DFedSGPSM's Table 1, DFedADMM's Tables 1 and 2; the other claims' "
              "tables are CIFAR", "the papers' learning rate, decay, rho, momentum, lambda, neighbours and rounds "
              "(cards §8), weight decay 5e-4 for DFedADMM's DFedAvg", "MNIST/raw"),
    "fashion-mnist": ("Fashion-MNIST: DFedSAM's landscape claim (its Fig. 2)", "FedAvg against DFedAvg in the same "
                      "setting, judged on lambda_max of the Hessian of f at x_bar after training, per seed; `dfltheory "
                      "plot landscape RUN` draws one run's filter-normalised slice", "DFedSAM's main setting (card "
                      "§8: lr 0.1 decayed by 0.998, weight decay 5e-4, FedAvg sampling 10 % of the clients; the "
                      "split is not an official one)", "FashionMNIST/raw"),
}


def _plan_section(name: str, result: dict | None) -> list[str]:
    """A plan beside digits: its claims, sizes, what each size scales down, the cost estimate; the results where
    ``result`` (docs/claims-<plan>.json) is given."""
    from dfltheory.verify.claims import PLANS, estimate, select

    plan = PLANS[name]
    heading, what, settings, raw = _PLAN_TEXT[name]
    chosen = select(["all"], plan)
    lines = [f"## {heading}: `dfltheory claims --data {name} [--size cpu|gpu]`", "",
             f"Claims: {', '.join(f'`{c.id}`' for c in chosen)} ({what}). Problem: {plan.problem}; {settings}. "
             f"Data: `dfltheory data fetch {name}`, then `--data-root DIR` (DIR/{raw}). The cost is printed before "
             "anything trains.", "", "| size | m | rounds | seeds | local epochs | model | measured every | cohorts "
             "(runs) | estimate | what it scales down |", "|---|---|---|---|---|---|---|---|---|---|"]
    for size_name, size in plan.sizes.items():
        if size_name == "quick":
            continue
        device = "cpu" if size_name == "cpu" else "cuda"
        cost = estimate(chosen, size, device, plan, workers=2 if size_name == "cpu" else 1)
        none = "nothing: the papers' settings"
        hours = (f"{cost['cpu_hours']:.2f} CPU-hours ({cost['hours']:.2f} h on 2 cores)" if size_name == "cpu"
                 else f"{cost['device_hours']:.1f} GPU-hours (assumed throughput)")
        lines.append(f"| {size_name} | {size.m} | {size.rounds} | {size.seeds} | {size.K or 5} | "
                     f"{size.model or plan.common['model']} | {size.eval_every} rounds | {cost['cohorts']} "
                     f"({cost['runs']}) | {hours} | {'; '.join(size.deviations) or none} |")
    lines.append("")
    if result:
        lines += _training_section(result)
    else:
        lines += [f"Results: not yet run (`dfltheory claims --data {name} --size cpu --jobs 2 --out claims-{name}`, "
                  f"then `docs/claims-{name}.json`).", ""]
    return lines


def markdown(result: dict | None = None, mnist: dict | None = None, fashion: dict | None = None) -> str:
    """docs/claims.md: counts, then one table per card; ``result`` (of :func:`dfltheory.verify.claims.run_claims`)
    fills the verdicts of the training claims; ``mnist`` and ``fashion`` (the MNIST and Fashion-MNIST plans'
    results, docs/claims-mnist.json and docs/claims-fashion-mnist.json) add their tables."""
    c = counts()
    by = _results(result)
    lines = ["# The cards' §10 testable claims: what checks each one", "",
             "Generated by `python -m dfltheory.verify.claims_index docs/claims-full.json > docs/claims.md` from "
             "`dfltheory/verify/claims_index.py`; `tests/verify/test_claims.py` checks that every test named here "
             "exists and that this file is up to date.", "",
             f"**{len(INDEX)} claims**: {c['asserted']} asserted by a test, {c['in part']} in part, {c['not yet']} "
             f"not yet, {c['training']} need training (run by `dfltheory claims` or `dfltheory verify`).", ""]
    if result:
        lines += _training_section(result)
    lines += _issue34_section() + _plan_section("mnist", mnist) + _plan_section("fashion-mnist", fashion)
    for paper, n in CARDS.items():
        lines += [f"## {paper} (card §10, {n} claims)", "", "| # | claim | status | checked by | result / open part |",
                  "|---|---|---|---|---|"]
        for item in (i for i in INDEX if i.paper == paper):
            checks = [f"`{t}`" for t in item.tests] + ([f"`{item.command}`"] if item.command else [])
            res = _result_cell(by.get(item.key, [])) if item.status == "training" else ""
            extra = "<br>".join(x for x in (res, item.note) if x)
            lines.append(f"| {item.number} | {item.title} | {item.status} | {'<br>'.join(checks) or '-'} | "
                         f"{extra or '-'} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m dfltheory.verify.claims_index [CLAIMS_JSON [MNIST_JSON [FASHION_JSON]]]
    res, mn, fa = (json.loads(Path(a).read_text()) if a else None for a in (sys.argv[1:] + ["", "", ""])[:3])
    sys.stdout.write(markdown(res, mn, fa))
