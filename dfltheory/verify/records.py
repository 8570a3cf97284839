"""The verify layer's results as typed records (:class:`dfltheory.records.Record`): a theorem's :class:`Verdict`
against training, a claim's row (:class:`ClaimResult`) and the report's sections (:class:`ReportSections` and the
fixed-shape sections). Each field is a key of the JSON these are written as (``verify.json``, ``docs/claims-*.json``,
the report's data), with its type and meaning; docs/schema.md is generated from them
(``python -m dfltheory.verify.schema``). A key a producer does not give stays out of the dict: the records read and
write the dicts unchanged, key for key and in order.
"""

from __future__ import annotations

from dataclasses import dataclass

from dfltheory.records import Record, entry

__all__ = ["CatalogSection", "ClaimResult", "NetworkSection", "PepSection", "ReportSections", "TopologySection",
           "Verdict"]


@dataclass(frozen=True)
class Verdict(Record):
    """A theorem's bound against the measured quantity of its runs (:func:`dfltheory.verify.judging.verdict`, with
    :func:`~dfltheory.verify.judging.trivial_fields` and the evidence of
    :func:`~dfltheory.verify.judging.judged_verdict`; a row of ``verify.json``'s ``verdicts`` adds where it was judged;
    an informative run's ``at`` adds ``T``)."""

    theorem: str = entry("the theorem's id (e.g. <paper>.thm1)")
    paper: str = entry("the paper's id")
    variant: str = entry("the theorem's variant, '(judged on the proof's functional)' appended where it is")
    main: bool = entry("whether the theorem is the paper's main one")
    setting: str = entry("the setting's label (constants family, topology, step)")
    problem: str = entry("the problem the runs train")
    topology: str = entry("the topology's label")
    m: int = entry("clients")
    T: int = entry("the horizon judged (rounds)")
    hyper: dict = entry("the runs' step, K and the plan's symbols")
    constants: str = entry("the constants family (how L, sigma, ... are known)")
    command: str = entry("the `dfltheory train` command of seed 0")
    algo: str = entry("the algorithm trained")
    bound: float | None = entry("the bound at the run's constants; None where the conditions fail")
    dominant: str | None = entry("the bound's largest term")
    paper_conditions_hold: bool = entry("the paper's conditions hold at the setting")
    all_conditions_hold: bool = entry("the paper's and the derived conditions hold")
    failed: list = entry("the conditions that fail or are undecided, as text")
    formula_value: float | str = entry("the formula's value where the conditions fail (then no bound; 'inf' as text)")
    verdict: str = entry("holds, violated, inconclusive, vacuous, conditions fail, diverged or not testable")
    note: str = entry("the smallest T the conditions admit, the interval's round, a counter-example's command")
    ratio: float = entry("bound / measured mean")
    trivial: dict | None = entry("the trivial level of the measured functional (dfltheory.verify.trivial)")
    informative: bool = entry("the bound is below the trivial level and was compared")
    big_o: bool = entry("the theorem is stated as O(.): its constants taken as 1, indicative only")
    label: str = entry("the verdict's label against the trivial level")
    measured: float = entry("the measured functional's mean over the seeds")
    ci: list = entry("its 95 % interval [low, high]")
    estimate: dict = entry("the estimate (dfltheory.verify.measures.Estimate.to_dict)")
    functional: str = entry("the functional judged (min or average over t of the measured quantity)")
    term_shares: dict = entry("each term's share of the bound")
    c_star: dict = entry("{factor, instrument, lower}: the largest factor the bound could shrink by undetected")
    proof_functional: bool = entry("judged on the proof's functional rather than the printed one")
    instance_rationale: str = entry("why this instance")
    values: dict = entry("every symbol the bound was evaluated at")
    kinds: dict = entry("how each problem constant is known")
    T_star: int | None = entry("T*: where the bound starts to say something (dfltheory.verify.horizons)")


@dataclass(frozen=True)
class ClaimResult(Record):
    """One claim's row (:func:`dfltheory.verify.claims.evaluate`, :func:`~dfltheory.verify.claims.verdicts`; the
    ``claims`` of ``docs/claims-*.json``)."""

    id: str = entry("the claim's id (<paper>.<name>)")
    paper: str = entry("the paper's id")
    section: str = entry("where the paper states it")
    statement: str = entry("the claim in the paper's words")
    paper_number: str = entry("the paper's table or figure")
    paper_values: dict = entry("the paper's own numbers, arm -> value")
    metric: str = entry("the metric compared (test_acc, rounds_to_target, ...)")
    metric_label: str = entry("the metric in words")
    target: float | None = entry("rounds-to-target's accuracy target; None for other metrics")
    curve_metric: str = entry("the per-round record the curves show")
    quantity: str = entry("the paper's measured quantity")
    note: str = entry("the claim's note")
    index: list = entry("the index items the claim tests")
    finding: str = entry("the finding the claim belongs to (counted once)")
    m: int = entry("clients")
    eval_every: int = entry("rounds between measurements")
    deviations: list = entry("how the run deviates from the paper's setting")
    arms: list = entry("each arm's label, config, command, per-seed values, mean, spectral gap, movement")
    pairs: list = entry("each pair's test and verdict (Holm inside the claim)")
    trends: list = entry("each trend's rank correlation and verdict")
    verdict: str = entry("agrees, contradicted, inconclusive, paper's effect excluded, underpowered, not testable")
    calibration: dict | None = entry("the rule on the paper's own numbers with the measured noise")
    reason: str = entry("the verdict's reason")
    verdict_study: str = entry("the verdict under Holm over every test of the run")
    cache: int = entry("the cohorts' cache format the row was run with")
    rejudged: bool = entry("the stored values were judged again by today's rules")
    stale: str | None = entry("why the stored row no longer measures the claim as it is now (None: it does)")


@dataclass(frozen=True)
class TopologySection(Record):
    """The report's topology constants (:func:`dfltheory.verify.report_data.topology_section`)."""

    n: int = entry("clients")
    rows: dict = entry("topology -> its weights and constants (lambda, spectral gap, psi, ...)")


@dataclass(frozen=True)
class CatalogSection(Record):
    """The theorem catalog's counts (:func:`dfltheory.verify.report_data.catalog_section`)."""

    count: int = entry("theorems")
    by_paper: dict = entry("paper -> theorems")
    by_kind: dict = entry("kind -> theorems")
    by_tag: dict = entry("tag -> theorems")


@dataclass(frozen=True)
class NetworkSection(Record):
    """A digits network per paper (:func:`dfltheory.verify.report_data.network_section`)."""

    rounds: int = entry("rounds of each run")
    n: int = entry("clients")
    points: int = entry("points of the estimators")
    iters: int = entry("iterations of the estimators")
    rows: list = entry("one row per paper: the run, its estimated constants, the bound and its conditions")


@dataclass(frozen=True)
class PepSection(Record):
    """The PEP worst cases (:func:`dfltheory.verify.report_data.pep_section`)."""

    rows: list = entry("one worst case per theorem's algorithm against its bound")
    certificates: list = entry("the proved one-round certificates")
    certificate_figure: str = entry("the certificates' figure (added by the report's figure stage)")


@dataclass(frozen=True)
class ReportSections(Record):
    """Every section of the report (:func:`dfltheory.verify.report_data.report_data`; None: not run, the notes say
    why), and what ``report.json`` adds to them."""

    papers: list = entry("the papers the report is restricted to (empty: all)")
    stage_failures: list = entry("stages that raised: stage, case, error, command")
    topology: dict = entry("TopologySection")
    catalog: dict = entry("CatalogSection")
    rates: list = entry("stated against derived rates, per corollary")
    experiments: list = entry("the papers' settings against their conditions")
    verification: dict | None = entry("`dfltheory verify`'s result (verdicts: Verdict rows)")
    network: dict | None = entry("NetworkSection")
    training: dict | None = entry("the least-squares runs: config, runs, estimates")
    sweeps: dict | None = entry("the least-squares sweeps (topology, ...)")
    pep: dict | None = entry("PepSection")
    claims: dict | None = entry("`dfltheory claims`'s result (claims: ClaimResult rows)")
    claims_stored: list = entry("the committed plans' results (docs/claims-<plan>.json), the chosen papers' rows")
    figures: dict = entry("the figures' files (added in report.json by dfltheory.figures.report)")
    verdicts: dict = entry("the per-paper verdict tables (added in report.json)")
    failures: list = entry("every failed case and stage (added in report.json)")
    header: dict = entry("machine, seeds, stage seconds, notes, size, papers (added in report.json)")


#: the records whose schema docs/schema.md shows, in its order
RECORDS = (Verdict, ClaimResult, ReportSections, TopologySection, CatalogSection, NetworkSection, PepSection)
