"""DFedSGPSM's experimental claims (card §9-§10): each compares arms (an algorithm and its options) by a test
over seeds on the data plans of :mod:`dfltheory.verify.claims`, with the paper's own options, rounds, recorded
quantity and the deviations every claim shares."""

from __future__ import annotations

from dfltheory.verify.claims import Claim, PUSH_OUT, SYMMETRIC, arm
from dfltheory.verify.claims_index import CLAIMS_TEST, ENG, PROP, TOPO, card_items

#: the paper's values (card §8); "decay" is its per-round factor, over its ``ROUNDS`` (rescaled to the run's rounds)
BASE = {"decay": 0.998, "rho": 0.1, "momentum": 0.9, **PUSH_OUT}  # dfedsgpsm.md §8 (MNIST)
#: the rounds the paper ran (card §8), over which its learning-rate decay is spread
ROUNDS = 300
#: the theorem's measured quantity (docs/verify.md), drawn beside the metric
QUANTITY = "grad_norm_sq"
#: the data and model of its main experiments (card §8), named where a plan runs others
SETTING = "MNIST and the 200-200 MLP"
#: what every claim still does differently from the paper, on any data (docs/claims.md)
DEVIATIONS = ()

CLAIMS = (
    Claim("dfedsgpsm.table1", "dfedsgpsm", "§9 Table 1, §10.20",
          "DFedSGPSM beats SGP, and SGP beats D-PSGD (asymmetric beats symmetric under the same local optimizer)",
          "MNIST Dir 0.3: DFedSGPSM 98.51, SGP 94.55, D-PSGD 94.36",
          (arm("DFedSGPSM", "dfedsgpsm"), arm("SGP", "sgp"), arm("D-PSGD", "dpsgd", **SYMMETRIC)),
          (("DFedSGPSM", ">", "SGP"), ("SGP", ">", "D-PSGD")),
          note="SGP and D-PSGD take one local epoch (their rule), DFedSGPSM 5, as in the paper; D-PSGD on a "
               "k-regular graph, SGP on k out-neighbours: the same neighbour budget; D-PSGD in Lian et al. 2017's "
               "order (the gradient at the unmixed point, X W - gamma G(X): dpsgd), as this card gives it",
          index=("dfedsgpsm.20",), paper_values={"DFedSGPSM": 0.9851, "SGP": 0.9455, "D-PSGD": 0.9436},
          data=("digits", "mnist")),
    Claim("dfedsgpsm.table2", "dfedsgpsm", "§9 Table 2, §10.21",
          "module ablation: momentum helps OSGP, SAM helps further, neighbour selection changes little",
          "CIFAR-10 Dir 0.3: OSGP 76.59, +momentum 78.72, +SAM 81.31, +selection 81.35",
          (arm("OSGP", "dfedsgpsm", rho=0.0, momentum=0.0), arm("DFedSGPM", "dfedsgpsm", rho=0.0),
           arm("DFedSGPSM", "dfedsgpsm"),
           arm("DFedSGPSM-S", "dfedsgpsm-s", topology="neighbour-selection", topology_params="k={k}")),
          (("DFedSGPM", ">", "OSGP"), ("DFedSGPSM", ">", "DFedSGPM"), ("DFedSGPSM-S", "=", "DFedSGPSM")),
          note="OSGP = DFedSGPSM with alpha = 0, rho = 0 (card §10.18); DFedSGPM with rho = 0; DFedSGPSM-S picks k "
               "out-neighbours from the losses (its seeds train one by one: its graph couples all clients). "
               "DFedSGPSM-S collapses to chance in some seeds (2 of 10 at the full size): real, not a defect of the "
               "code: once one client's loss spikes (seed 2, round 26: 19.9 against at most 2.4 before), the logits "
               "|f_i - f_j| of eq. (2) dwarf the draw's noise, every client picks that one (in-degree 49 of 49), "
               "the clients nobody picks keep 1/(k+1) of their push-sum weight per round (0 to 33 of them with no "
               "in-neighbour; w_min 0.36 -> 8e-7 by round 44), their z-step eta/w_i explodes and their losses (up "
               "to 5e5) keep the selection locked (docs/claims.md; test_neighbour_selection_locks_on_a_loss_spike)",
          index=("dfedsgpsm.21",), paper_setting="CIFAR-10 and the CNN", paper_rounds=500,
          paper_values={"OSGP": 0.7659, "DFedSGPM": 0.7872, "DFedSGPSM": 0.8131, "DFedSGPSM-S": 0.8135}),
    Claim("dfedsgpsm.alpha", "dfedsgpsm", "§9 Fig. 2a, §10.22",
          "momentum alpha = 0.7 gives the best final accuracy among {0.1, ..., 0.9}",
          "best at alpha = 0.7 (no number)",
          (arm("alpha=0.1", "dfedsgpsm", momentum=0.1), arm("alpha=0.7", "dfedsgpsm", momentum=0.7),
           arm("alpha=0.9", "dfedsgpsm", momentum=0.9)),
          (("alpha=0.7", ">", "alpha=0.1"), ("alpha=0.7", ">", "alpha=0.9")), index=("dfedsgpsm.22",),
          deviations=("three of the paper's five alphas {0.1, 0.3, 0.5, 0.7, 0.9}",),
          paper_setting="CIFAR-10 and the CNN (Fig. 2a)", paper_rounds=500),
)

#: the card's §10 testable claims (docs/claims.md): (number, claim, status, tests, command, note); a test named
#: without its file is in tests/bounds/test_<paper>.py (:func:`dfltheory.verify.claims_index.card_items`)
CARD = [
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
]


def register() -> None:
    """The claims into ``claims`` and the report, through the function a user's plugin calls."""
    from dfltheory.papers.dfedsgpsm import PAPER
    from dfltheory.verify.claims import register_claims
    from dfltheory.verify.claims_index import register_card

    register_claims(PAPER, CLAIMS, base=BASE, rounds=ROUNDS, quantity=QUANTITY, deviations=DEVIATIONS,
                    setting=SETTING, origin=__name__)
    register_card(card_items(PAPER, CARD), origin=__name__)
