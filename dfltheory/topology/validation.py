"""Check a mixing matrix against Definition 1 of seeds 001/004 (Sun, Li & Wang 2022, Definition 1).

Definition 1 (seed 001 L100, seed 004 L139; dfedsam.md §5.1, dfedadmm.md §5.1), W in [0, 1]^{m x m}:
(i)   graph:      w_ij = 0 if i != j and (i, j) is not an edge, w_ij > 0 otherwise;
(ii)  symmetry:   W = W^T;
(iii) null space: null{I - W} = span{1};
(iv)  spectral:   I >= W > -I (all eigenvalues in (-1, 1]).
The report adds row, column and double stochasticity. Each property carries its violation (0 when it holds), so
``strict=True`` can raise an error that names the failing property and says by how much it fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from dfltheory.topology.checks import number
from dfltheory.topology.spectral import check_matrix

PROPERTIES = ("graph", "symmetry", "null_space", "spectral", "row_stochastic", "column_stochastic",
              "doubly_stochastic")
DEFINITION_1 = ("graph", "symmetry", "null_space", "spectral")


@dataclass
class ValidationReport:
    """Outcome of :func:`validate`: ``ok[p]`` and ``violation[p]`` for every property p of PROPERTIES."""

    n: int
    ok: dict = field(default_factory=dict)
    violation: dict = field(default_factory=dict)
    detail: dict = field(default_factory=dict)

    @property
    def definition1(self) -> bool:
        """All four properties of Definition 1 hold (graph support counts only when a graph was given)."""
        return all(self.ok[p] is not False for p in DEFINITION_1)

    def __getattr__(self, name):
        ok = self.__dict__.get("ok", {})
        name = {"symmetric": "symmetry"}.get(name, name)
        if name in ok:
            return ok[name]
        raise AttributeError(name)

    def failures(self) -> list[str]:
        return [p for p in PROPERTIES if self.ok.get(p) is False]

    def __str__(self) -> str:
        lines = [f"mixing matrix, n = {self.n}: Definition 1 {'holds' if self.definition1 else 'fails'}"]
        for p in PROPERTIES:
            state = {True: "ok", False: "FAILS", None: "n/a"}[self.ok[p]]
            extra = f" (violation {self.violation[p]:.3g}; {self.detail[p]})" if self.ok[p] is False else ""
            lines.append(f"  {p:18s} {state}{extra}")
        return "\n".join(lines)


def validate(W, strict: bool = False, graph=None, atol: float = 1e-9) -> ValidationReport:
    """Report every property of Definition 1 plus stochasticity; with ``strict`` raise ValueError on the first failure.

    ``graph``: optional adjacency (array or networkx graph) for property (i); without it (i) is reported as None.
    Not square, NaN/inf or negative entries always raise (no property of a mixing matrix is defined then)."""
    W = check_matrix(W)
    atol = number(atol, "atol", low=0, meaning="the tolerance of every property")
    W = W.toarray() if sp.issparse(W) else np.asarray(W, dtype=float)
    n = W.shape[0]
    one = np.ones(n)
    rep = ValidationReport(n)

    def put(name, violation, detail, applicable=True, ok=None):
        rep.ok[name] = None if not applicable else bool(violation <= atol) if ok is None else bool(ok)
        rep.violation[name] = float(violation) if applicable else 0.0
        rep.detail[name] = detail

    if graph is None:
        put("graph", 0.0, "no graph given", applicable=False)
    else:
        import networkx as nx

        if isinstance(graph, nx.Graph):  # edge u -> v means W[v, u] > 0
            A = nx.to_numpy_array(graph, nodelist=range(n)).T if len(graph) == n else np.zeros((0, 0))
        else:  # an adjacency in W's orientation
            A = np.asarray(graph)
        if A.shape != (n, n):
            raise ValueError(f"the graph does not have the {n} nodes of W")
        support = (A != 0) | np.eye(n, dtype=bool)
        outside = np.abs(W[~support]).max(initial=0.0)
        inside = W[support]
        missing = max(0.0, -inside.min(initial=1.0)) if inside.size else 0.0
        zeros = int(np.sum(inside <= 0))
        put("graph", max(outside, float(zeros > 0)), f"max |w| off the graph {outside:.3g}, {zeros} zero weights "
            "on edges or the diagonal" + (f" (min {missing:.3g})" if missing else ""))

    asym = float(np.abs(W - W.T).max())
    put("symmetry", asym, f"max |W - W^T| = {asym:.3g}")
    rows = float(np.abs(W @ one - 1).max())
    cols = float(np.abs(one @ W - 1).max())
    put("row_stochastic", rows, f"max |W 1 - 1| = {rows:.3g}")
    put("column_stochastic", cols, f"max |1^T W - 1^T| = {cols:.3g}")
    put("doubly_stochastic", max(rows, cols), f"max row/column-sum error {max(rows, cols):.3g}")

    # (iii) null{I - W} = span{1}: (I - W) 1 = 0 and the null space is one-dimensional
    sv = np.linalg.svd(np.eye(n) - W, compute_uv=False)
    second_smallest = float(sv[-2])
    null_dim_excess = second_smallest <= 1e-9
    put("null_space", max(rows, 1.0 if null_dim_excess else 0.0),
        f"||(I - W) 1||_inf = {rows:.3g}, second smallest singular value of I - W = {second_smallest:.3g}"
        + (" (null space has dimension >= 2: disconnected graph)" if null_dim_excess else ""))

    # (iv) I >= W > -I, on the symmetric part's spectrum (W must be symmetric for the ordering to be meaningful)
    ev = np.linalg.eigvalsh((W + W.T) / 2)
    above = float(ev.max()) - 1.0
    below = -1.0 + atol - float(ev.min())  # W > -I strictly: the smallest eigenvalue must exceed -1
    put("spectral", max(above, below, 0.0), f"eigenvalues in [{ev.min():.6g}, {ev.max():.6g}], need (-1, 1]",
        ok=above <= atol and below < 0)
    rep.detail["eigenvalue_range"] = (float(ev.min()), float(ev.max()))

    if strict and rep.failures():
        p = rep.failures()[0]
        raise ValueError(f"mixing matrix fails '{p}' by {rep.violation[p]:.3g}: {rep.detail[p]}")
    return rep
