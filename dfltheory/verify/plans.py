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

from dfltheory.plugins import load_builtin


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
    # hyper-parameter -> (low, high): the T* search (dfltheory.verify.horizon_rows.horizon_rows) also chooses it
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
    # where the cited push-sum constants C, q come from (pushsum plans; the keys of the topology report its theorems
    # read are the paper's registration: dfltheory.bounds.catalog.topology_keys)
    pushsum_lemma: str = "Assran et al. 2019 Lemma 3"
    # the PEP model of the main theorem (a model of dfltheory.pep and its options) whose exact worst case is one of
    # the instruments that catch a planted error (dfltheory.verify.mutations.pep_instrument); None: none
    pep_model: tuple[str, Mapping[str, float]] | None = None
    # the symbols of its theorems that an estimate along a user's run gives (dfltheory.verify.estimators), in the
    # order printed, and the algorithms whose runs are read against its assumptions (its own, and the baselines)
    run_constants: tuple[str, ...] = ()
    runs_read_as: tuple[str, ...] = ()
    # options the report's digits network run of a target adds (dfltheory.verify.report_data.network_section)
    network_hp: Mapping[str, object] = field(default_factory=dict)
    # algorithm -> {symbol a run states: the theorems' symbol it is}, where a run's option is another symbol in this
    # paper's theorems (dfltheory.verify.report_data.run_values)
    run_symbols: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # the report's certificate table (dfltheory.verify.report_data.certificates_section): the PEP model its main
    # theorem covers and its options (K and eta inside the theorem's conditions), and the row's place in the table
    # (the cases sorted by it); None: no row
    certificate_case: tuple[str, Mapping[str, float]] | None = None
    certificate_order: int = 0
    # the worked example the report runs (dfltheory.verify.worked_example.WorkedExample); None: none
    example: object | None = None

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

#: the verification plan of every paper that has one, by paper: read it through :func:`plans`
PLANS: dict[str, PaperPlan] = {}
_LOADED: list[bool] = []  # the built-in plans are registered (once)


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
    plans()  # the built-in plans come first (a no-op while they are being registered)
    if not isinstance(plan, PaperPlan):
        raise ValueError(f"{where}{plan!r} is not a dfltheory.verify.PaperPlan")
    if plan.paper not in PAPERS:
        raise ValueError(f"{where}plan for unknown paper {plan.paper!r}; register the paper first "
                         "(dfltheory.bounds.register_paper)")
    if plan.paper in PLANS:
        raise ValueError(f"{where}paper {plan.paper!r} already has a verification plan")
    checks = [(plan.problem in PROBLEMS, f"problem {plan.problem!r}", f"one of {', '.join(PROBLEMS)}"),
              (bool(plan.targets), "no targets", "give at least one Target")]
    if plan.example is not None:
        from dfltheory.verify.worked_example import WorkedExample

        checks.append((isinstance(plan.example, WorkedExample), f"example {plan.example!r}",
                       "a dfltheory.verify.worked_example.WorkedExample, or None"))
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
    """Every registered verification plan by paper: the built-in ones (``dfltheory/papers/<id>/plan.py``, registered
    through :func:`register_plan` on first use, :func:`dfltheory.plugins.load_builtin`), then the plugins'."""
    if not _LOADED:
        _LOADED.append(True)
        try:
            load_builtin("plan")
        except BaseException:  # a failed load is not loaded: the next read fails again, never a partial table
            _LOADED.clear()
            raise
    return PLANS
