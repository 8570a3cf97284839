"""DFedSAM's experimental claims (card §9-§10): each compares arms (an algorithm and its options) by a test
over seeds on the data plans of :mod:`dfltheory.verify.claims`, with the paper's own options, rounds, recorded
quantity and the deviations every claim shares."""

from __future__ import annotations

from dfltheory.verify.claims import Claim, SYMMETRIC, Trend, arm

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


def register() -> None:
    """The claims into ``claims`` and the report, through the function a user's plugin calls."""
    from dfltheory.papers.dfedsam import PAPER
    from dfltheory.verify.claims import register_claims

    register_claims(PAPER, CLAIMS, base=BASE, rounds=ROUNDS, quantity=QUANTITY, deviations=DEVIATIONS,
                    setting=SETTING, origin=__name__)
