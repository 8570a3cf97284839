"""One table of worst case against bound for every algorithm a theorem covers (issue 14 §4, the report's section).

:func:`pep_table` solves a fixed set of small instances (m = 3 agents, K = 2 local steps unless the algorithm
fixes K, T = 3 or 4 rounds, L = Delta = 1, sigma_g = 1, B = 2) in both mixing representations (a class row for every
family: DFedAvg, DFedADMM, DFedCata A and B, DFedSGPM) and on the papers' random topology (a new draw each round, and
the time-varying class that holds every draw), and
returns one JSON-safe row per (instance, reading of the theorem). Step sizes satisfy each theorem's conditions
(dfedadmm.thm1 needs eta <= 1/(96 K L) and eta <= lam_pen <= K eta). About 25-35 s on 2 shared cores
(benchmarks/bench_pep.py times it).
"""

from __future__ import annotations

import math
import time

import numpy as np

from dfltheory.pep.compare import compare
from dfltheory.pep.problem import worst_case
from dfltheory.pep.sweep import W_lambda

__all__ = ["INSTANCES", "P_DIRECTED", "pep_table", "random_sequence"]

#: A column-stochastic, non-symmetric P on 3 agents (1 -> 2, 2 -> 3, 3 -> all; self-loops): push-sum's instance.
P_DIRECTED = np.array([[1 / 2, 0, 1 / 3], [1 / 2, 1 / 2, 1 / 3], [0, 1 / 2, 1 / 3]])


def random_sequence(m: int, rounds: int, seed: int, symmetric: bool) -> np.ndarray:
    """The papers' random topology (dfltheory.topology 'random', k = 1 neighbour per agent, a new draw each round):
    an (rounds, m, m) stack of Metropolis W_t on the symmetrized draws (gossip) or push-sum P_t on the directed ones."""
    from dfltheory.topology import build

    topo = build("random", m, weights="metropolis" if symmetric else "push-sum", seed=seed, k=1,
                 **({"direction": "undirected"} if symmetric else {}))
    return np.stack([topo.matrix(t) for t in range(rounds)])

_COMMON = dict(m=3, sigma_g=1.0, B=2.0)
#: (algorithm, keyword arguments of worst_case, mixing label, lambda for the theorem: None takes it from the mixing,
#: the largest over a sequence's rounds; push-sum's delta, C, q come from the mixing, see compare)
INSTANCES = [
    ("dfedavg", dict(K=2, T=4, eta=0.05, W=W_lambda(3, 0.5)), "W(0.5)", 0.5),
    ("dfedavg", dict(K=2, T=4, eta=0.05, spectral=(-0.5, 0.5)), "class [-0.5, 0.5]", 0.5),
    ("dpsgd-atc", dict(K=1, T=4, eta=0.1, W=W_lambda(3, 0.5)), "W(0.5)", 0.5),
    ("dfedavg-mgs", dict(K=2, T=4, eta=0.05, Q=2, W=W_lambda(3, 0.9)), "W(0.9)", 0.9),
    ("dfedadmm", dict(K=2, T=4, eta=0.005, lam_pen=0.01, W=W_lambda(3, 0.5)), "W(0.5)", 0.5),
    ("dfedadmm", dict(K=2, T=4, eta=0.005, lam_pen=0.01, spectral=(-0.5, 0.5)), "class [-0.5, 0.5]", 0.5),
    ("dfedadmm-sam-unnormalized", dict(K=2, T=3, eta=0.005, lam_pen=0.01, rho=0.05, W=W_lambda(3, 0.5)), "W(0.5)",
     0.5),
    ("dfedcata-a", dict(K=2, T=4, eta=0.05, lam_pen=1.0, beta=0.3, W=W_lambda(3, 0.5)), "W(0.5)", 0.5),
    ("dfedcata-b", dict(K=2, T=4, eta=0.05, lam_pen=1.0, beta=0.3, W=W_lambda(3, 0.5)), "W(0.5)", 0.5),
    ("dfedcata-a", dict(K=2, T=3, eta=0.05, lam_pen=1.0, beta=0.3, spectral=(-0.5, 0.5)), "class [-0.5, 0.5]", 0.5),
    ("dfedcata-b", dict(K=2, T=3, eta=0.05, lam_pen=1.0, beta=0.3, spectral=(-0.5, 0.5)), "class [-0.5, 0.5]", 0.5),
    ("dfedsgpm", dict(K=2, T=4, eta=0.02, alpha=0.5, W=P_DIRECTED), "directed P (push-sum)", None),
    ("dfedsgpm", dict(K=2, T=4, eta=0.02, alpha=0.5, spectral=(-0.5, 0.5)), "class [-0.5, 0.5] (w = 1)", 0.5),
    ("dfedsgpm", dict(K=2, T=4, eta=0.02, alpha=0.5, W=random_sequence(3, 3, 1, symmetric=False)),
     "random directed P_t, seed 1 (a new draw each round)", None),
    ("dfedavg", dict(K=2, T=4, eta=0.05, W=random_sequence(3, 3, 1, symmetric=True)),
     "random symmetric W_t, seed 1 (a new draw each round)", None),
    ("dfedavg", dict(K=2, T=4, eta=0.05, spectral=(-2 / 3, 2 / 3), time_varying=True),
     "time-varying class [-2/3, 2/3] (every sequence, each draw above included)", None),
]


def _instance(algorithm: str, kw: dict, mixing: str) -> str:
    keys = ("K", "T", "eta", "Q", "lam_pen", "beta", "rho", "alpha")
    text = ", ".join(f"{k} = {kw[k]:g}" for k in keys if k in kw)
    return f"m = 3, {text}, sigma_g = 1, B = 2, L = Delta = 1; {mixing}"


def _command(algorithm: str, kw: dict) -> str:
    """The ``dfltheory pep`` command of an instance (a random sequence: its topology and seed 1)."""
    from dfltheory.pep.command_line import equivalent_command

    kw = dict(kw)
    K, T, eta = kw.pop("K"), kw.pop("T"), kw.pop("eta")
    W = kw.get("W")
    text = equivalent_command("pep", algorithm, _COMMON["m"], K, T, eta, **kw, sigma_g=_COMMON["sigma_g"],
                              B=_COMMON["B"])
    if W is not None and np.asarray(W).ndim == 3:  # random_sequence(3, 3, 1, symmetric): the papers' topology
        symmetric = np.allclose(W[0], W[0].T)
        topo = ("--topology random:k=1,direction=undirected --weights metropolis" if symmetric else
                "--topology random:k=1 --weights push-sum") + " --seed 1"
        text = text.replace("--matrix W.npy", topo)
    elif W is not None and np.array_equal(np.asarray(W), P_DIRECTED):
        text = text.replace("W.npy", "P.npy") + "   (P.npy: np.save of dfltheory.pep.table.P_DIRECTED)"
    return text


def _finite(v):
    return None if v is None or not math.isfinite(v) else float(v)


def pep_table(instances=None) -> list[dict]:
    """Rows: algorithm, instance, quantity, worst_case, theorem, bound, ratio (bound / worst case), status ('holds',
    'candidate counter-example: ...' with the interpolation check's verdict and the value the worst-case example
    realizes, 'no bound: ...', or 'failed' with ``error`` (the cause) and ``command`` (the equivalent ``dfltheory
    pep``): one instance's failure is its row, never the table's end), seconds. Readings with a consensus term c Xi
    (DFedCata) compare the bound b with the worst case of the average minus c Xi (column worst_case)."""
    from dfltheory.pep.problem import metric_text

    rows = []
    for algorithm, kw, mixing, lam in instances or INSTANCES:
        base = dict(algorithm=algorithm, instance=_instance(algorithm, kw, mixing), quantity=metric_text(algorithm))
        start = time.perf_counter()
        try:
            r = worst_case(algorithm, **_COMMON, **kw)
            c = compare(r, lam)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as err:  # a failed solve (or any error of one case) is its row, never the table's end
            rows.append(dict(base, worst_case=None, theorem=None, bound=None, ratio=None, status="failed",
                             error=" ".join(str(err).split()) or type(err).__name__, command=_command(algorithm, kw),
                             seconds=round(time.perf_counter() - start, 2)))
            continue
        check = c["interpolation"]
        for reading in [c] + c["variants"]:
            worst = reading.get("worst_case_minus_xi", None if "xi_weight" in reading else r.value)
            if reading["bound"] is None:
                status = f"no bound: {reading['reason']}"
            elif reading["ratio"] is None:
                status = f"not compared: {reading['reason']}"
            elif reading["finding"]:
                realized = check["recomputed"]
                status = ("candidate counter-example: " +
                          ("the worst-case example is interpolable" if check["interpolable"] else
                           "the worst-case example FAILS the interpolation check") +
                          f", realizes {realized:.6g} " + (">" if realized > reading["bound"] else "<=") + " the bound"
                          + ("" if check["realizable_mixing"] else
                             "; its consensus steps are not those of one W of the class (the relaxation)"))
            else:
                status = "holds"
            rows.append(dict(base, worst_case=_finite(worst), theorem=reading["theorem"],
                             bound=_finite(reading["bound"]), ratio=_finite(reading["ratio"]), status=status,
                             seconds=round(time.perf_counter() - start, 2)))
    return rows
