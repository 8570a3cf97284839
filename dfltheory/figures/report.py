"""The verification report, verdict first: one table per paper (each main theorem and its variants: conditions at
the paper's settings, stated against derived rate, bound-holds verdict on exact problems, bound against measured on
a network with estimated constants, the discrepancies found), then the sections with their figures.

``dfltheory report --out report`` writes ``report.html`` (self-contained: inline CSS, the PNG figures beside it),
``report.md`` and ``report.json`` there, from the Jinja2 templates in ``dfltheory/figures/templates``, and prints
its progress on stderr stage by stage. :func:`build_report` is the whole job: the sections are computed by
:mod:`dfltheory.verify.report_data`; this module draws their figures and writes the pages.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from dfltheory.figures.format import duration, formula
from dfltheory.verify.report_data import collect_failures, failed, report_command


def _spectral_gap_figure():
    from dfltheory.figures import plot_topology_constants

    ax = plot_topology_constants(("ring", "grid", "exponential", "watts-strogatz"), [16, 32, 64, 128, 256])
    ax.set_title("spectral gap 1 - lambda (Metropolis weights)")
    return ax


def _bound_vs_gap_figure(example):
    """The worked example's theorem (:class:`~dfltheory.verify.worked_example.WorkedExample`) for Q = 1, 2, 4
    against the spectral gap at its ``illustration`` values, the papers' topologies marked, and its terms at Q = 1."""
    import matplotlib.pyplot as plt
    import numpy as np

    from dfltheory.bounds import get
    from dfltheory.topology import analyze

    thm = get(example.theorem)
    values = dict(example.illustration)
    gaps = np.logspace(-4, 0, 300)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for Q in (1, 2, 4):
        left.plot(gaps, thm.evaluate(**values, Q=Q, lam=1 - gaps),
                  label=f"Q = {Q}" + (f" ({example.name})" if Q == 1 else ""))
    for name in ("ring", "grid", "exponential"):
        gap = analyze(name, 100)["spectral_gap"]
        left.axvline(gap, color="grey", lw=0.8, ls=":")
        left.annotate(f"{name}, n = 100", (gap, 0.97), xycoords=("data", "axes fraction"), rotation=90,
                      va="top", ha="right", fontsize="x-small", color="grey")
    left.set(xscale="log", yscale="log", xlabel="spectral gap 1 - lambda", ylabel="bound on min_t E||grad f||^2",
             title=f"{example.gossip_name} {example.theorem_name}, T = {values['T']:g}")
    left.legend(fontsize="small")
    for name, vals in thm.evaluate_terms(**values, Q=1, lam=1 - gaps).items():
        right.plot(gaps, vals, "--", label=name)
    right.plot(gaps, thm.evaluate(**values, Q=1, lam=1 - gaps), "k-", label="bound (sum)")
    right.set(xscale="log", yscale="log", xlabel="spectral gap 1 - lambda",
              ylabel="term of the bound on min_t E||grad f||^2", title="its terms at Q = 1")
    right.legend(fontsize="small")
    fig.suptitle(example.illustration_text or ", ".join(f"{k} = {v:g}" for k, v in values.items()
                                                         if k not in ("T", "f0_minus_fstar")), fontsize="small")
    return left


def _predicted_vs_measured_figure(training: dict, name: str):
    from dfltheory.figures import plot_predicted_vs_measured

    ax = plot_predicted_vs_measured(training["metrics"], training["theorem"], training["constants"])
    ax.set_title(f"{name} on least squares, ring: bound vs measured")
    return ax


def figures(out: Path, training: dict | None, sweeps: dict | None = None, failures: list | None = None,
            papers=()) -> dict[str, str]:
    """Draw and save the report's own figures into ``out``; returns file name -> caption of those drawn. A figure
    that raises is left out and appended to ``failures`` (with the command that draws the report again)."""
    import matplotlib

    matplotlib.use("Agg")
    from dfltheory.figures import plot_rate_in_T, plot_topology_sweep
    from dfltheory.figures.axes import save_figure
    from dfltheory.verify.report_data import worked_example

    draw = {"spectral_gap.png": (_spectral_gap_figure, "Spectral gap 1 − λ against n (Metropolis weights).")}
    declared = worked_example()  # the report's illustration: the first registered paper's worked example
    example = declared[1] if declared else None
    if example is not None:
        draw["bound_vs_spectral_gap.png"] = (lambda: _bound_vs_gap_figure(example),
                                             f"{example.gossip_name} {example.theorem_name} against the spectral "
                                             "gap for Q = 1, 2, 4, the papers' topologies at n = 100 marked, and its "
                                             "terms at Q = 1.")
    if training is not None and example is not None:
        draw["predicted_vs_measured.png"] = (lambda: _predicted_vs_measured_figure(training, example.name),
                                             f"{example.name} on least squares, ring: the bound against the measured "
                                             "running minimum.")
    if sweeps is not None and example is not None:
        draw["topology_sweep.png"] = (lambda: plot_topology_sweep(sweeps["topology"]),
                                      "Measured and bound relative to the complete graph, per topology.")
        draw["rate_in_T.png"] = (lambda: plot_rate_in_T(sweeps["rate"]),
                                 f"Measured and bound against the horizon T under {example.corollary_name}'s "
                                 "schedule.")
    drawn = {}
    for name, (fn, caption) in draw.items():
        try:
            save_figure(fn(), out / name)
            drawn[name] = caption
        except Exception as err:  # one figure: recorded, the others are drawn
            keep = ("train",) if name not in ("spectral_gap.png", "bound_vs_spectral_gap.png") else ()
            _failed_figure(failures, name, err, report_command(papers, *keep))
    return drawn


def _failed_figure(failures: list | None, name: str, err: BaseException, command: str) -> None:
    import matplotlib.pyplot as plt

    plt.close("all")
    row = failed("figures", name, err, command)
    if failures is None:
        raise err
    failures.append(row)


class Progress:
    """Stage-by-stage progress on ``stream`` (stderr): ``[3/8] verification runs ... 12/40 runs, ETA 1 min``."""

    def __init__(self, stages: tuple[str, ...], stream=None):
        """``stream``: where to print (stderr by default; False for nowhere)."""
        self.stages, self.k, self.times = stages, 0, {}
        self.stream = sys.stderr if stream is None else (stream or None)
        self.t0 = self.started = self.last = time.perf_counter()

    def _say(self, text: str, end: str = "\n") -> None:
        if self.stream:
            print(text, file=self.stream, end=end, flush=True)

    def stage(self, name: str) -> None:
        """Close the stage running (its time) and open ``name``."""
        self.close()
        self.k = self.stages.index(name) + 1
        self.t0 = time.perf_counter()
        self._say(f"[{self.k}/{len(self.stages)}] {name} ...")

    def close(self) -> None:
        if self.k and self.stages[self.k - 1] not in self.times:
            self.times[self.stages[self.k - 1]] = time.perf_counter() - self.t0
            self._say(f"[{self.k}/{len(self.stages)}] {self.stages[self.k - 1]}: done in "
                      f"{duration(self.times[self.stages[self.k - 1]])}")

    def skip(self, name: str, why: str) -> None:
        self.close()
        self.k = self.stages.index(name) + 1
        self.times[name] = 0.0
        self._say(f"[{self.k}/{len(self.stages)}] {name}: skipped ({why})")

    def step(self, *args, **kwargs) -> None:
        """A callback for a stage's inner loop: ``step(done, total)``, with optional words (a unit, or the name of
        an inner part such as verify's ``"dfedsam: bound-holds runs"``) and an optional float, the seconds left
        as the caller estimates them; or ``step(text)``. Prints the count and the time left (the caller's
        estimate, or the rate so far within the part), at most one line per 5 s unless a part starts or ends."""
        head = f"[{self.k}/{len(self.stages)}] {self.stages[self.k - 1]} ..." if self.k else ""
        nums = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        left = next((float(a) for a in args if isinstance(a, float)), None)
        text = " ".join(str(a) for a in args if isinstance(a, str))
        new = text != getattr(self, "_part", None)
        if new:  # a new inner part: its own clock
            self._part, self._part_t0 = text, time.perf_counter()
        if len(nums) >= 2 and nums[1]:
            done, total = nums[:2]
            if not new and done < total and time.perf_counter() - self.last < 5:
                return
            if left is None and done:
                left = (time.perf_counter() - self._part_t0) / done * (total - done)
            eta = f", ETA {duration(left)}" if left is not None and done < total else ""
            unit = "" if text.endswith(("runs", "steps")) else " steps"
            text = f"{text}{':' if text else ''} {done}/{total}{unit if not text else ''}{eta}".strip()
        self.last = time.perf_counter()
        self._say(f"{head} {text}".rstrip())

    @property
    def wall(self) -> float:
        return time.perf_counter() - self.started


def verification_figures(result: dict, out: Path) -> dict:
    """Draw the figures of verify's results (overlays, rate in T, topology dependence) into ``out/verify/figures``
    with :func:`dfltheory.figures.verification.render`; ``result["figures"]`` then holds paths relative to ``out``.
    Results without overlays (a hand-written file) keep their own ``figures``."""
    from dfltheory.figures.verification import render

    if "overlays" not in result:
        return result
    drawn = render(result, out / "verify")
    return {**result, "figures": {paper: [f"verify/{f}" for f in files] for paper, files in drawn.items()}}


def certificate_figure(rows: list[dict], out: Path) -> str | None:
    """One log-log panel per algorithm over T: the paper's bound, the certificate's bound (every T) and the fixed-T
    worst case (where solved), saved as ``out/pep/certificates.png``; its path relative to ``out`` (None: no rows)."""
    import matplotlib.pyplot as plt

    from dfltheory.figures.axes import save_figure

    algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
    if not algorithms:
        return None
    fig, axes = plt.subplots(1, len(algorithms), figsize=(3.2 * len(algorithms), 3.0), squeeze=False)
    for ax, algorithm in zip(axes[0], algorithms):
        mine = [r for r in rows if r["algorithm"] == algorithm]
        curves = (("paper_bound", f"paper ({mine[0]['theorem']})", "s--"),
                  ("certificate", "certificate (every T)", "o-"), ("worst_case", "worst case (PEP)", "^:"))
        for key, label, style in curves:
            pts = [(r["T"], r[key]) for r in mine if r.get(key) is not None]
            if pts:
                ax.loglog(*zip(*pts), style, label=label, markersize=4)
        ax.set_xlabel("rounds T")
        ax.set_ylabel("bound on the quantity")
        ax.set_title(f"{algorithm}, K = {mine[0]['K']}, eta = {mine[0]['eta']:g}", fontsize=9)
        ax.legend(fontsize=6)
    (out / "pep").mkdir(parents=True, exist_ok=True)
    return str(Path(save_figure(axes[0][0], out / "pep" / "certificates.png")).relative_to(out))


def claims_figures(result: dict, out: Path) -> dict:
    """Draw one figure per paper of the claims' results into ``out/claims/figures``, and the partition their runs
    train on; ``result["figures"]`` then holds {paper: path relative to ``out``}, ``partition_figure`` the path."""
    from dfltheory.figures.claims import render as draw

    from dfltheory.figures.axes import save_figure
    from dfltheory.figures.partition import plot_label_counts

    drawn = draw(result, out / "claims")
    figures = {p: str(Path(f).relative_to(out)) for p, f in drawn.items()}
    partition = None
    if result.get("partition"):
        ax = plot_label_counts(result["partition"]["counts"], title=result["partition"]["title"])
        partition = str(Path(save_figure(ax, out / "claims" / "figures" / "partition.png")).relative_to(out))
    return {**result, "figures": figures, "partition_figure": partition}


def machine(device: str = "cpu") -> dict:
    import torch

    from dfltheory import __version__

    return {"version": __version__, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "torch": torch.__version__, "device": device}


def with_formulas(experiments: list[dict]) -> list[dict]:
    """The papers' settings with each condition's relation written for a reader (``formula``)."""
    return [{**e, "conditions": [{**c, "formula": formula(c["relation"])} for c in e["conditions"]]}
            for e in experiments]


def readable_network(network: dict) -> dict:
    """The digits network's rows with their failed and undecided conditions written for a reader."""
    return {**network, "rows": [{**row, **{key: [formula(c) for c in row[key]] for key in ("failed", "undecided")
                                           if key in row}} for row in network["rows"]]}


def _figure_stage(rep: dict, out: Path, failures: list, papers) -> None:
    """The figures of every section into ``out``, each section's guarded: one that raises is a failure of the
    stage 'figures', the section keeps its tables."""
    steps = []
    if rep["verification"] is not None:
        steps.append(("verification", "verify", lambda: verification_figures(rep["verification"], out)))
    if rep["claims"] is not None:
        steps.append(("claims", "claims", lambda: claims_figures(rep["claims"], out)))
    if rep.get("pep") and rep["pep"].get("certificates"):
        rows = [r for r in rep["pep"]["certificates"] if r.get("status") != "failed"]
        steps.append(("pep", "pep", lambda: {**rep["pep"], "certificate_figure": certificate_figure(rows, out)}))
    for key, stage, draw in steps:
        try:
            rep[key] = draw()
        except Exception as err:
            _failed_figure(failures, f"the figures of {key}", err, report_command(papers, stage))
    rep["figures"] = figures(out, rep["training"], rep["sweeps"], failures, papers)


def build_report(out: str | Path, train: bool = True, n: int = 100, verify: bool | dict = True,
                 size: str = "default", network: bool | dict = True, stream=None, papers=None,
                 pep: bool | dict = True, claims: bool | dict = True, claims_size: str = "default") -> dict:
    """Compute every section (:func:`dfltheory.verify.report_data.report_data`, whose arguments these are), draw
    the figures and write ``report.html``, ``report.md`` and ``report.json`` into ``out``, with the theorem pages
    (``theorems/*.html``) the report links to: the folder is self-contained and can be moved.

    Progress goes to ``stream`` (stderr by default; False for none). ``papers`` restricts every section to those
    papers (default: all five papers and the plugins'). A case or stage that fails is recorded (``failures``: the
    header lists them, each section shows its own in red with the command that reproduces it) and the report goes
    on; only a report that cannot be written raises."""
    from dfltheory.figures.render import write
    from dfltheory.figures.theorem_pages import write_pages
    from dfltheory.figures.verdicts import paper_tables
    from dfltheory.verify.report_data import STAGES, check_papers, report_data, restrict

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    papers = check_papers(papers)
    prog = Progress(STAGES + ("figures", "writing the report"), stream=stream)
    if isinstance(verify, dict) and papers:
        verify = restrict(verify, papers)
    rep, notes = report_data(out, prog, train=train, n=n, verify=verify, size=size, network=network, papers=papers,
                             pep=pep, claims=claims, claims_size=claims_size)
    prog.stage("figures")
    fig_failures = []
    _figure_stage(rep, out, fig_failures, papers)
    prog.stage("writing the report")
    rep["experiments"] = with_formulas(rep["experiments"])
    if rep["network"] is not None and not isinstance(network, dict):  # given results are written already
        rep["network"] = readable_network(rep["network"])
    try:
        pages = write_pages(out, papers)
    except Exception as err:  # the report keeps its links to nowhere rather than ending
        pages = {}
        _failed_figure(fig_failures, "the theorem pages (theorems/*.html)", err, report_command(papers))
    rep["verdicts"] = paper_tables(out, rep["experiments"], rep["rates"], rep["verification"], rep["network"],
                                   papers=papers, pages=pages)
    rep["stage_failures"] = rep.get("stage_failures", []) + fig_failures
    rep["failures"] = collect_failures(rep)
    device = (rep["verification"] or {}).get("device", "cpu")
    seeds = sorted(set((rep["verification"] or {}).get("seeds", [])) | {0})
    rep["header"] = {**machine(device), "seeds": seeds, "stage_seconds": prog.times, "notes": notes,
                     "size": (rep["verification"] or {}).get("size"), "papers": list(papers or ())}
    prog.close()
    rep["header"]["wall_seconds"] = prog.wall
    write(out, rep)
    prog._say(f"wrote {out / 'report.html'}, {out / 'report.md'}, {out / 'report.json'} in {duration(prog.wall)}")
    return rep
