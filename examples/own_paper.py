"""Your own paper, as a plugin: a theorem that is not in the catalog and an algorithm variant that is not in the
table, through check, verify, pep and the report, without editing dfltheory (docs/extending.md).

    dfltheory --plugin examples/own_paper.py bounds show minisgd.thm1
    dfltheory --plugin examples/own_paper.py check minisgd.thm1 --set eta=0.1 L=1 T=100 sigma_l=1 m=8 f0_minus_fstar=1
    dfltheory --plugin examples/own_paper.py train --algo dfedavg-normalized --dataset digits --n 8 --out runs/nrm
    dfltheory --plugin examples/own_paper.py verify minisgd --size quick --out verify-minisgd
    dfltheory --plugin examples/own_paper.py pep minisgd-dpsgd --m 2 --K 1 --T 5 --eta 0.5 --lambda 0
    dfltheory --plugin examples/own_paper.py claims minisgd --size quick --out claims-minisgd

The theorem (minibatch SGD's nonconvex rate; Ghadimi and Lan 2013, Theorem 2.1 in the form of Bottou, Curtis and
Nocedal 2018, Theorem 4.10): for f = (1/m) sum_i f_i L-smooth and bounded below by f*, D-PSGD in the
adapt-then-combine order (``dpsgd-atc``: step, then mix) on the complete graph with W = 11^T/m is minibatch SGD on f,
x_bar^{t+1} = x_bar^t - eta (1/m) sum_i g_i, whose m independent gradients have variance at most sigma_l^2 each (Lian
et al.'s order, ``dpsgd``, takes client i's gradient at its own x_i^t, which W = 11^T/m does not make the average,
so it is not minibatch SGD). For eta <= 1/L,

    (1/T) sum_{t<T} E||grad f(x_bar^t)||^2  <=  2 (f(x_bar^0) - f*) / (eta T)  +  L eta sigma_l^2 / m.

Proof sketch: L-smoothness gives E f(x_bar^{t+1}) <= f(x_bar^t) - eta (1 - L eta/2) ||grad f||^2 + L eta^2 sigma_l^2
/(2m) (the average of m independent gradients has variance sigma_l^2/m); with eta <= 1/L, 1 - L eta/2 >= 1/2;
sum over t < T, divide by eta T / 2, and use f(x_bar^T) >= f*. It holds with equality in the noise term on a
quadratic with isotropic noise, so the toolkit's verdict can be informative.

The variant: DFedAvg whose local step is normalized, x <- x - eta g/||g|| (a rule written here from the public
building blocks: a Transform composed after the gradient oracle, then gossip).
"""

from __future__ import annotations

import sympy as sp

from dfltheory.bounds import COMMON, Condition, Source, Theorem, register_paper
from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R
from dfltheory.empirical.algorithms import Algorithm, register_algorithm
from dfltheory.pep import register_pep_model
from dfltheory.verify.claims import Arm, Claim, register_claims
from dfltheory.verify.plans import PaperPlan, Target, Topo, register_plan

PAPER = "minisgd"
SOURCE = Source("Ghadimi & Lan 2013, SIAM J. Optim. 23(4); Bottou, Curtis & Nocedal 2018, SIAM Rev. 60(2)",
                "Thm 2.1 / Thm 4.10", "nonconvex SGD rate", tag="SEED")
V = {n: COMMON[n] for n in ("eta", "T", "L", "sigma_l", "m", "f0_minus_fstar")}
eta, T, L, sigma_l, m, f0 = (V[n].symbol for n in ("eta", "T", "L", "sigma_l", "m", "f0_minus_fstar"))

MINISGD = Theorem(
    id="minisgd.thm1", paper=PAPER, kind="theorem",
    title="minibatch SGD (D-PSGD on the complete graph, W = 11^T/m): nonconvex rate for eta <= 1/L",
    quantity="(1/T) sum_{t<T} E||grad f(x_bar^t)||^2",
    terms={"optimization": 2 * f0 / (eta * T), "noise": L * eta * sigma_l**2 / m},
    variables=tuple(V.values()), source=SOURCE,
    conditions=(Condition(sp.LessThan(eta, 1 / L, evaluate=False), "eta <= 1/L", SOURCE),),
    assumptions=("f = (1/m) sum_i f_i is L-smooth and bounded below by f*",
                 "unbiased stochastic gradients with variance at most sigma_l^2, independent over clients"),
)
register_paper(PAPER, "Minibatch SGD's nonconvex rate (a user's paper: examples/own_paper.py)", [MINISGD],
               origin=__file__)


class normalized(R.Transform):
    """d / ||d|| per client (a normalized local step; EPS avoids 0/0)."""

    name = "normalized"

    def direction(self, d, ctx):
        return d / (d.norm(dim=1, keepdim=True) + R.EPS)


def dfedavg_normalized(hp) -> Algorithm:
    """K normalized local SGD steps, then one gossip step with W."""
    return Algorithm("dfedavg-normalized", R.sgd(normalized()), C.gossip())


register_algorithm("dfedavg-normalized", dfedavg_normalized, origin=__file__)

# verify: D-PSGD step-then-mix (K = 1) on the complete graph, whose Metropolis weights are 11^T/m, on a problem whose
# L and sigma_l are certified; the step is the largest the condition admits (eta = 1/L) and a fraction of it
register_plan(PaperPlan(
    PAPER, "synthetic-robust-common", "eta", K=1, symbols={}, topologies=(Topo("full", "metropolis"),),
    targets=(Target("minisgd.thm1", "dpsgd-atc", "avg", main=True),)), origin=__file__)

# pep: the worst case of D-PSGD step-then-mix (the model 'dpsgd-atc' of dfltheory pep) compared with this theorem
register_pep_model("minisgd-dpsgd", like="dpsgd-atc", theorem="minisgd.thm1",
                   description="D-PSGD, compared with minibatch SGD's nonconvex rate (examples/own_paper.py)",
                   origin=__file__)

# claims: an experimental claim, tested over seeds like the papers' (dfltheory claims minisgd): the normalized step
# reaches DFedAvg's test accuracy (an equivalence within one accuracy point), on digits and a ring
register_claims(PAPER, [Claim(
    id="minisgd.normalized", paper=PAPER, section="example", paper_number="(a user's claim)",
    statement="DFedAvg with a normalized local step reaches the test accuracy of DFedAvg",
    arms=(Arm("DFedAvg", {"algo": "dfedavg"}), Arm("DFedAvg-normalized", {"algo": "dfedavg-normalized"})),
    pairs=(("DFedAvg-normalized", "=", "DFedAvg"),))],
    base={"decay": 1.0, "topology": "ring", "weights": "metropolis"}, rounds=100,
    deviations=("a claim of this example, not of a paper",), origin=__file__)

