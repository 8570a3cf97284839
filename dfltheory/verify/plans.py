"""What is run for each paper: the algorithm behind every main theorem and variant, the measured quantity, the
problem, the topologies and the hyper-parameters other than the step size.

A :class:`Target` is one (theorem or named variant, algorithm, measured quantity); a :class:`PaperPlan` groups the
targets of one paper with the settings they share. The step size (``eta``; ``eta_u`` for DFedPGP) is not part of a
plan: :mod:`dfltheory.verify.holds` takes the largest value that the conditions of every target of the paper admit
at the run's constants, and a fraction of it.

Push-sum constants (DFedSGPSM, DFedPGP) enter twice: ``cited`` takes C and q from the lemma the paper cites
(Assran et al. 2019 Lemma 3; for DFedPGP seed 003 L525-527), ``measured`` from the graph sequence itself
(:func:`dfltheory.topology.pushsum.measured`): two lines of every verdict, labelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Target:
    """One theorem (or named variant) against one algorithm's runs."""

    theorem: str
    algo: str
    measure: str  # a key of dfltheory.verify.measures.MEASURES
    hp: Mapping[str, object] = field(default_factory=dict)  # algorithm options besides the step size and K
    main: bool = False  # the paper's printed main theorem (the others are named variants)


@dataclass(frozen=True)
class Topo:
    name: str
    weights: str
    params: Mapping[str, object] = field(default_factory=dict)

    @property
    def label(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in self.params.items())
        return self.name + (f"({extra})" if extra else "")


@dataclass(frozen=True)
class PaperPlan:
    paper: str
    problem: str  # a name of dfltheory.verify.problems.PROBLEMS
    step: str  # the theorem symbol of the step size: 'eta' or 'eta_u'
    K: int
    symbols: Mapping[str, object]  # hyper-parameter symbols: numbers, or functions of the other values (L, ...)
    topologies: tuple[Topo, ...]
    targets: tuple[Target, ...]
    pushsum: bool = False  # C, q, delta from the push-sum lemma and from the measured graph sequence
    rate: str | None = None  # the corollary whose schedule gives the rate in T
    config: Mapping[str, str] = field(default_factory=dict)  # symbol -> run option it sets (besides eta -> lr)
    untestable: Mapping[str, str] = field(default_factory=dict)  # main theorem -> why training cannot test it
    # hyper-parameter -> (low, high): the T* search (dfltheory.verify.holds.horizon_rows) also chooses it
    # continuously in that span (log scale, dfltheory.verify.horizons.tuned_horizon) for the main theorem and the
    # theorems of ``tuned``, keeping the value with the smallest T* (a row labelled 'tuned'), which the informative
    # runs may use
    tune: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    tuned: tuple[str, ...] = ()  # theorems besides the main one whose T* is also searched with ``tune``
    # the measured functional of the proof where it differs from the printed statement's: target theorem -> measure
    proof_measure: Mapping[str, str] = field(default_factory=dict)
    # further problems on which T* is computed; the informative runs take the problem and instance whose T* is
    # smallest (synthetic-robust-common: f* = 0 exactly, no lower-bound slack in f(x^0) - f*)
    informative_problems: tuple[str, ...] = ()
    # theorem symbol -> the problem constant that gives it, where the proof needs another than the symbol's own
    constant_of: Mapping[str, str] = field(default_factory=dict)

    def target(self, theorem: str) -> Target:
        for t in self.targets:
            if t.theorem == theorem:
                return t
        raise KeyError(theorem)


UNDIRECTED = (Topo("ring", "metropolis"), Topo("exponential", "metropolis"), Topo("full", "metropolis"))
# directed graphs whose push-sum matrices are only column-stochastic come first: on a regular digraph (the directed
# exponential graph, the one-peer exponential graph) P is doubly stochastic, the weights stay 1 and push-sum is
# plain gossip; the random graph is redrawn every round (time-varying)
DIRECTED = (Topo("k-out", "push-sum", {"k": 3}), Topo("random", "push-sum", {"k": 1}),
            Topo("exponential-directed", "push-sum"))

SAM = {"rho": 0.01}

#: the verification plan of every paper that has one, by paper: read it through :func:`plans`
PLANS: dict[str, PaperPlan] = {}
_BUILTIN: dict[str, PaperPlan] = {
    "dfedsgpsm": PaperPlan(
        "dfedsgpsm", "synthetic-robust", "eta", K=4, pushsum=True, rate="dfedsgpsm.cor1.exact",
        informative_problems=("synthetic-robust-common",),
        symbols={"alpha": 0.5, "rho": 0.01}, config={"alpha": "momentum", "rho": "rho"},
        topologies=DIRECTED,
        targets=(Target("dfedsgpsm.thm1", "dfedsgpsm", "avg", main=True),
                 Target("dfedsgpsm.thm1.corrected", "dfedsgpsm", "avg"),
                 Target("dfedsgpsm.thm1.consistent", "dfedsgpsm", "avg"),
                 Target("dfedsgpsm.thm1.alpha_tilde", "dfedsgpsm", "avg"))),
    "dfedsam": PaperPlan(
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
        targets=(Target("dfedsam.thm4.1", "dfedsam", "min", main=True),
                 Target("dfedsam.thm4.1.E2", "dfedsam", "min"),
                 Target("dfedsam.thm4.1.proofE2", "dfedsam", "min"),
                 Target("dfedsam.thm4.1.proofE3", "dfedsam", "min"),
                 Target("dfedsam.thm4.1.corrected", "dfedsam", "min"),
                 Target("dfedsam.thm4.1.corrected_consensus", "dfedsam", "min"),
                 Target("dfedsam.thm4.1.tight", "dfedsam", "min"))),
    "dfedcata": PaperPlan(
        "dfedcata", "synthetic-robust", "eta", K=4, rate="dfedcata.cor1",
        informative_problems=("synthetic-robust-common",),
        symbols={"beta": 0.5, "lam_pen": 0.05, "lam_pen_inv": 20.0, "Delta0": 0.0},
        config={"beta": "beta", "lam_pen": "lam_pen"},
        topologies=UNDIRECTED,
        untestable={"dfedcata.thm2": (
            "Theorem 2's printed formula is lost (seed L67-70, card §6.5): the catalog holds a Hardt-type template "
            "whose topology factor Gamma_lam has no formula in the paper, for the decaying step c/(tK + k) and a "
            "loss bounded by U; no number can be compared with a measured stability gap")},
        targets=(Target("dfedcata.thm1", "dfedcata", "avg_p", {"mode": "B"}, main=True),
                 Target("dfedcata.thm1.consensus", "dfedcata", "avg_p", {"mode": "B"}),
                 Target("dfedcata.thm1.invpen", "dfedcata", "avg_p", {"mode": "B"}),
                 Target("dfedcata.thm1.novr", "dfedcata", "avg_p", {"mode": "B"}),
                 Target("dfedcata.thm1.A", "dfedcata", "avg", {"mode": "A"}))),
    "dfedpgp": PaperPlan(
        "dfedpgp", "synthetic-personal", "eta_u", K=2, pushsum=True, rate="dfedpgp.cor1",
        symbols={"K_u": 2, "K_v": 2, "eta_v": lambda v: 1 / (8 * v["L_v"] + 8) / v["K_v"] / 2},
        config={"eta_v": "lr_v", "K_v": "K_v"},
        # both steps free (issue 33 item 4; Corollary 1 shrinks eta_v as O(1/sqrt(T))): eta_v is also chosen for T*
        tune={"eta_v": (1e-7, 1e-1)},
        tuned=("dfedpgp.thm1.explicit", "dfedpgp.thm1.explicit_corrected", "dfedpgp.thm1.explicit_u"),
        topologies=DIRECTED,
        targets=(Target("dfedpgp.thm1", "dfedpgp", "avg_pgp", main=True),
                 Target("dfedpgp.thm1.eq33", "dfedpgp", "avg_pgp"),
                 Target("dfedpgp.thm1.explicit", "dfedpgp", "avg_pgp"),
                 Target("dfedpgp.thm1.explicit_corrected", "dfedpgp", "avg_pgp"),
                 Target("dfedpgp.thm1.explicit_u", "dfedpgp", "avg_pgp"))),
    "dfedadmm": PaperPlan(
        "dfedadmm", "synthetic-robust", "eta", K=4, rate="dfedadmm.cor1.derived",
        informative_problems=("synthetic-robust-common",),
        # lam_pen = 1/(192 L): half the largest value Theorem 1 admits (lam_pen <= 1/(96 L)), so that the steps
        # lam_pen/K <= eta <= 1/(96 K L) form an interval rather than one point
        symbols={"lam_pen": lambda v: 1 / (192 * v["L"]), "rho": 0.01}, config={"lam_pen": "lam", "rho": "rho"},
        topologies=UNDIRECTED,
        # at lam_pen = 1/(192 L) the consensus-drift term alone keeps Theorem 1 above ||grad f(x^0)||^2 at every T
        # (eta >= lam_pen / K pins the step); a smaller lam_pen lowers the admissible steps with it: lam_pen is
        # chosen continuously (issue 33 item 5; it was one of 5 values)
        tune={"lam_pen": (1e-5, 1e-2)},
        targets=(Target("dfedadmm.thm1", "dfedadmm-sam", "avg_w", main=True),
                 Target("dfedadmm.thm1.corrected", "dfedadmm-sam", "avg_w"),
                 Target("dfedadmm.thm1.normalized", "dfedadmm-sam", "avg_w"),
                 Target("dfedadmm.thm1.dfedadmm", "dfedadmm", "avg_w"))),
}


def register_plan(plan: PaperPlan, *, origin: str = "") -> None:
    """Make ``dfltheory verify`` (and the report) test a paper's theorems: ``plan.paper`` a paper of the catalog,
    each target's theorem one of its ids, its algorithm a registered one, its measure a key of
    :data:`dfltheory.verify.measures.MEASURES` and the problem one of :data:`dfltheory.verify.problems.PROBLEMS`.
    ``origin`` (a plugin file) is named in the errors, ValueErrors that name the problem and the fix."""
    from dfltheory.bounds import PAPERS, catalog
    from dfltheory.empirical.algorithms import ALGORITHMS
    from dfltheory.verify.measures import MEASURES
    from dfltheory.verify.problems import PROBLEMS

    where = f"{origin}: " if origin else ""
    if origin != __name__:
        plans()  # the built-in plans come first
    if not isinstance(plan, PaperPlan):
        raise ValueError(f"{where}{plan!r} is not a dfltheory.verify.PaperPlan")
    if plan.paper not in PAPERS:
        raise ValueError(f"{where}plan for unknown paper {plan.paper!r}; register the paper first "
                         "(dfltheory.bounds.register_paper)")
    if plan.paper in PLANS:
        raise ValueError(f"{where}paper {plan.paper!r} already has a verification plan")
    checks = [(plan.problem in PROBLEMS, f"problem {plan.problem!r}", f"one of {', '.join(PROBLEMS)}"),
              (bool(plan.targets), "no targets", "give at least one Target")]
    for t in plan.targets:
        checks += [(t.theorem in catalog() and catalog()[t.theorem].paper == plan.paper,
                    f"target theorem {t.theorem!r}", f"an id of paper {plan.paper!r}"),
                   (t.algo in ALGORITHMS, f"target algorithm {t.algo!r}", "a registered algorithm"),
                   (t.measure in MEASURES, f"target measure {t.measure!r}", f"one of {', '.join(MEASURES)}")]
    for ok, what, fix in checks:
        if not ok:
            raise ValueError(f"{where}verification plan of {plan.paper!r}: {what} is not valid; give {fix}")
    if not any(t.main for t in plan.targets):
        raise ValueError(f"{where}verification plan of {plan.paper!r}: no target is the main theorem; mark one "
                         "Target(..., main=True)")
    PLANS[plan.paper] = plan


def resolve(symbols: Mapping[str, object], values: Mapping[str, float]) -> dict[str, float]:
    """The plan's hyper-parameter symbols as numbers: callables are evaluated on ``values`` plus the numbers
    already resolved (in the plan's order)."""
    out: dict[str, float] = {}
    for name, v in symbols.items():
        out[name] = float(v({**values, **out})) if isinstance(v, Callable) else v
    return out


def plans() -> dict[str, PaperPlan]:
    """Every registered verification plan by paper: the built-in ones (registered through :func:`register_plan` on
    first use, which loads the catalog), then the plugins'."""
    if not PLANS.keys() & _BUILTIN.keys():
        for plan in _BUILTIN.values():
            register_plan(plan, origin=__name__)
    return PLANS
