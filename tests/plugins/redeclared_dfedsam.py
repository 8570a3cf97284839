"""DFedSAM Theorem 4.1 and the DFedSAM algorithm declared again through the public API, under the paper id 'mysam'
(issue 25 item 4): the terms from the paper module's public expressions, the algorithm from the public rules."""

from dfltheory.bounds import COMMON, Theorem, get, register_paper
from dfltheory.papers.dfedsam import theorems as paper
from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R
from dfltheory.empirical.algorithms import Algorithm, register_algorithm
from dfltheory.pep import register_pep_model
from dfltheory.verify.plans import PaperPlan, Target, plans, register_plan

f0, T = COMMON["f0_minus_fstar"].symbol, COMMON["T"].symbol
printed = get("dfedsam.thm4.1")  # only for the wording and the conditions' text: the formula is written below

THEOREM = Theorem(
    id="mysam.thm4.1", paper="mysam", kind="theorem", title="DFedSAM Theorem 4.1, declared by a plugin",
    quantity=printed.quantity,
    terms={"optimization": 2 * f0 / (T * paper.DEN), "drift": paper.ALPHA_DRIFT, "sam_radius": paper.ALPHA_RHO,
           "topology": paper.PHI * paper.BETA},
    variables=printed.variables, source=printed.source, conditions=printed.conditions,
    assumptions=printed.assumptions)
register_paper("mysam", "DFedSAM again, through the plugin path", [THEOREM], sigma_g_form=paper.SIGMA_G_FORM,
               origin=__file__)


def mysam(hp) -> Algorithm:
    rho = hp.get("rho", 0.01)
    return Algorithm("mysam", R.chain(R.sam(rho)), C.gossip(), params={"rho": rho})


register_algorithm("mysam", mysam, origin=__file__)
builtin = plans()["dfedsam"]
register_plan(PaperPlan("mysam", builtin.problem, builtin.step, K=builtin.K, symbols=builtin.symbols,
                        topologies=builtin.topologies, config=builtin.config, constant_of=builtin.constant_of,
                        informative_problems=builtin.informative_problems, tune=builtin.tune,
                        proof_measure={"mysam.thm4.1": builtin.proof_measure["dfedsam.thm4.1"]},
                        targets=(Target("mysam.thm4.1", "mysam", "min", main=True),)), origin=__file__)
register_pep_model("mysam-pep", like="dfedsam-unnormalized", theorem="mysam.thm4.1",
                   description="DFedSAM's PEP model, declared by a plugin", origin=__file__)
