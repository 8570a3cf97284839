"""Planted errors (mutation testing, issue 33 item 3): which instrument catches a wrong bound, and by how much a
bound may be too small before one does.

A *mutant* of a theorem is its bound with one planted error: the whole bound x 1/2 and x 1/10, each term dropped in
turn, the spectral-gap exponent halved ((1 - gap) -> (1 - gap)^(1/2), gap = lambda, psi or q), the T exponent
changed (T -> T^(3/2)) and the K exponent changed (K -> K^(3/2)); the conditions stay the paper's. An instrument
*catches* a mutant where the mutant's value is below what the instrument proves the true quantity reaches:

* ``training``: the lower end of the measured 95 % interval of the functional the bound is judged on (the
  informative run at T = 2 T*, :mod:`dfltheory.verify.informative`);
* ``pep``: the exact worst case of the theorem's function class at small m, K, T (:func:`dfltheory.pep.problem.
  worst_case`, at sigma_l = 0, where the theorem's bound at the same values is a bound on it too; the instance is
  the one of a small grid that makes bound / worst case smallest).

The certificate (:func:`certificate_floor`) works from above: a proved one-round certificate bounds the worst case of
the class, so a mutant at or above it is still a valid bound at that instance and cannot be caught there by anything
(``holds_by_certificate`` per row; ``floor`` = bound / certificate, below which no planted factor can be caught).

A mutant that is not below the original at the instrument's values (dropping a term that is 0 there, a T exponent
on a term that does not decay) cannot be caught by any upper-bound check: its row says so (factor <= 1).

The detection threshold c* of a verdict: the smallest factor c such that bound / c is caught, by the best
instrument: c* = bound / (the instrument's lower value); bound / (c* x 1.5) is caught, bound / (c* / 1.5) is not.
The bound's own looseness against the exact worst case is the floor of c* by PEP.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import sympy as sp

#: the symbol of each paper's spectral gap (1 - gap enters the bound): gossip lambda, DFedADMM psi, push-sum q
GAP = ("lam", "psi", "q")


def mutants(thm) -> list[tuple[str, object]]:
    """(label, mutated theorem) of every planted error of ``thm`` (module docstring); a mutation that changes
    nothing (no gap symbol, no K) is left out."""
    out = [("bound x 1/2", _scaled(thm, sp.Rational(1, 2), "half")),
           ("bound x 1/10", _scaled(thm, sp.Rational(1, 10), "tenth"))]
    if len(thm.terms) > 1:
        for name in thm.terms:
            out.append((f"term '{name}' dropped", _replace(thm, f"drop_{name}",
                                                           {k: v for k, v in thm.terms.items() if k != name})))
    for name in GAP:
        if name in thm.symbols:
            g = thm.symbols[name].symbol
            new = {k: v.subs(g, 1 - sp.sqrt(1 - g)) for k, v in thm.terms.items()}
            if any(new[k] != thm.terms[k] for k in new):
                out.append((f"gap exponent halved: (1 - {name}) -> (1 - {name})^(1/2)", _replace(thm, f"gap_{name}",
                                                                                           new)))
    for name in ("T", "K"):
        if name in thm.symbols:
            x = thm.symbols[name].symbol
            new = {k: v.subs(x, x ** sp.Rational(3, 2)) for k, v in thm.terms.items()}
            if any(new[k] != thm.terms[k] for k in new):
                out.append((f"{name} exponent changed: {name} -> {name}^(3/2)", _replace(thm, f"exp_{name}", new)))
    return out


def _replace(thm, tag: str, terms: Mapping):
    return dataclasses.replace(thm, id=f"{thm.id}.mutant_{tag}", variant=f"mutant: {tag}", terms=dict(terms))


def _scaled(thm, factor, tag: str):
    return _replace(thm, tag, {k: v * factor for k, v in thm.terms.items()})


def value(thm, values: Mapping[str, float]) -> float | None:
    """The bound of ``thm`` at ``values`` (the symbols it has), None where a condition fails or it is not finite."""
    vals = {k: v for k, v in values.items() if k in thm.symbols}
    try:
        check = thm.check("all", **vals)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return float(check.value) if check.all_ok and math.isfinite(check.value) else None


def shares(thm, values: Mapping[str, float]) -> dict[str, float]:
    """Each term's share of the bound at ``values`` (term / bound)."""
    vals = {k: v for k, v in values.items() if k in thm.symbols}
    terms = dict(thm.check("all", **vals).terms)
    total = sum(terms.values())
    return {k: float(v) / total for k, v in terms.items()} if total > 0 else {}


def c_star(bound: float | None, lowers: Mapping[str, float | None]) -> dict:
    """{"factor", "instrument"}: c* = bound / lower of the instrument whose lower value is largest (the best one);
    None where no instrument has a positive lower value or there is no bound."""
    found = {k: v for k, v in lowers.items() if v is not None and v > 0 and math.isfinite(v)}
    if bound is None or not found:
        return {"factor": None, "instrument": None}
    best = max(found, key=found.get)
    return {"factor": bound / found[best], "instrument": best}


def table(thm, instruments: Mapping[str, tuple[Mapping[str, float], float]],
          certified: tuple[Mapping[str, float], float] | None = None) -> dict:
    """The mutation table of ``thm``: ``instruments`` name -> (the symbol values at which it judges, the lower value
    it proves: the interval's lower end, the worst case). Each row: the mutation, ``factor`` = bound / mutant at the
    first instrument that has a bound (how much smaller the mutant is; <= 1: not smaller, no upper-bound check can
    catch it), ``caught_by`` the first instrument whose lower value is above the mutant (None: none); with
    ``certified`` (the values and a proved upper bound on the worst case there: :func:`certificate_floor`) also
    ``holds_by_certificate``, whether the mutant is at or above it (then nothing can catch it there)."""
    rows = []
    for label, mutant in mutants(thm):
        factor, caught = None, None
        for name, (values, lower) in instruments.items():
            b, m = value(thm, values), value(mutant, values)
            if b is None or m is None:
                continue
            if factor is None:
                factor = b / m if m > 0 else math.inf
            if lower is not None and m < lower:
                caught = name
                break
        row = {"mutation": label, "factor": factor, "caught_by": caught}
        if certified is not None:
            m = value(mutant, certified[0])
            row["holds_by_certificate"] = m is not None and m >= certified[1]
        rows.append(row)
    return {"theorem": thm.id, "rows": rows}


def pep_model(theorem: str) -> tuple[str, Mapping[str, float]] | None:
    """The PEP model of a main theorem and its options (its plan's ``pep_model``, dfltheory.pep.compare): the bound
    of the theorem covers the model at sigma_l = 0 (DFedSAM's at rho = 0: DFedAvg); None where it has none."""
    from dfltheory.verify.plans import plans

    return next((plan.pep_model for plan in plans().values()
                 if any(t.main and t.theorem == theorem for t in plan.targets)), None)


#: the small PEP instances tried (m = 2 clients, K = 2 local steps): horizons, mixing classes [-lam, lam], the
#: gradient bound B (sigma_g = B / 2; B = 1.41 was the sharpest of the three on every main theorem) and fractions of
#: the largest admissible step (the horizons T are the size's pep_T)
PEP_GRID = {"T": (4,), "lam": (0.5,), "B": (1.0, 1.41, 2.0), "fractions": (1.0, 0.5)}


def pep_instrument(theorem: str, grid: Mapping = PEP_GRID, m: int = 2, K: int = 2) -> dict | None:
    """The PEP instrument of a main theorem: among the small instances of ``grid``, the one where bound / exact
    worst case is smallest; {"values" (the theorem's symbols there), "worst", "bound", "ratio", "settings",
    "failed" (solves that failed, never counted)}; None where the theorem has no PEP model."""
    from dfltheory.bounds import get
    from dfltheory.pep.compare import theorem_values
    from dfltheory.pep.problem import PEPSolveError, worst_case

    model = pep_model(theorem)
    if model is None:
        return None
    algorithm, options = model
    thm = get(theorem)
    best, failed = None, []
    for T in grid["T"]:
        for lam in grid["lam"]:
            for B in grid["B"]:
                probe = _probe_values(thm, algorithm, options, m, K, T, lam, B)
                try:
                    from dfltheory.verify.horizons import largest_inside

                    top = largest_inside(thm, "eta", probe, T)
                except ValueError:
                    continue
                for frac in grid["fractions"]:
                    eta = top * frac
                    if value(thm, {**probe, "eta": eta}) is None:
                        continue
                    try:
                        result = worst_case(algorithm, m, K, T, eta, 1.0, 1.0, spectral=(-lam, lam), sigma_g=B / 2,
                                            B=B, **options)
                    except (PEPSolveError, ValueError) as err:
                        failed.append(f"T={T}, eta={eta:.3g}: {' '.join(str(err).split())[:160]}")
                        continue
                    values, _ = theorem_values(result, lam)
                    if values is None:
                        continue
                    bound = value(thm, values)
                    if bound is None or result.value <= 0:
                        continue
                    ratio = bound / result.value
                    if best is None or ratio < best["ratio"]:
                        best = {"values": values, "worst": float(result.value), "bound": bound, "ratio": ratio,
                                "options": dict(options),
                                "settings": {"algorithm": algorithm, "m": m, "K": K, "T": T, "eta": eta,
                                             "spectral": [-lam, lam], "L": 1.0, "Delta": 1.0, "B": B,
                                             "sigma_g": B / 2, **options}}
    if best is not None:
        best["failed"] = failed
    return best


def _probe_values(thm, algorithm: str, options: Mapping, m: int, K: int, T: int, lam: float, B: float) -> dict:
    """The theorem's symbol values at a PEP instance before its step is known (for the admissible steps)."""
    vals = dict(K=K, T=T, L=1.0, m=m, Q=1, rho=0.0, sigma_l=0.0, sigma_g=B / 2, B=B, lam=lam, psi=lam,
                f0_minus_fstar=1.0, G_het=B / 2, B_het=1.0, Delta0=0.0, x0_sq_mean=0.0, delta=1.0,
                C=math.sqrt(m - 1), q=lam, **options)
    return {k: v for k, v in vals.items() if k in thm.symbols}


def mutation_tables(informative: list[dict], pep_T: tuple[int, ...] = (4,)) -> list[dict]:
    """One mutation table per main theorem of the informative entries (:func:`dfltheory.verify.informative.informative`,
    finished): the instruments are the informative run (its printed functional; DFedSAM also the proof's average) and,
    where the theorem has a PEP model and ``pep_T`` is not empty, the PEP worst case at those horizons. Each table:
    ``rows`` (:func:`table`), ``c_star`` (the best instrument's), ``instrument``, ``c_stars`` (every instrument's) and
    ``note``. The main verdicts' ``c_star`` is updated to the best instrument's."""
    from dfltheory.bounds import get

    out = []
    for entry in informative:
        thm = get(entry["theorem"])
        if thm.big_o and entry.get("T_star_of") and entry["T_star_of"] != thm.id:
            thm = get(entry["T_star_of"])  # an O(.) main theorem: the explicit variant whose T* set the run is judged
        instruments, note = {}, []
        verdicts = [v for v in entry.get("verdicts", ()) if v["theorem"] == thm.id]
        judge = entry.get("_judge")
        if judge and verdicts:
            _, _, values, step, eta, T_run, *_ = judge
            at = {**values, step: eta, "T": T_run}
            for v in verdicts:
                name = "training (proof's functional)" if v["proof_functional"] else "training"
                instruments[name] = (at, v["at"]["ci"][0])
        else:
            note.append(f"no informative run ({entry.get('status')}: {entry.get('note', '')})")
        pep = pep_instrument(thm.id, {**PEP_GRID, "T": pep_T}) if pep_T else None
        if pep is not None:
            instruments["pep"] = (pep["values"], pep["worst"])
            note.append(f"PEP: {pep['settings']['algorithm']} m = {pep['settings']['m']}, K = {pep['settings']['K']}, "
                        f"T = {pep['settings']['T']}, eta = {pep['settings']['eta']:.3g}, lambda in "
                        f"{pep['settings']['spectral']}, B = {pep['settings']['B']}, sigma_g = "
                        f"{pep['settings']['sigma_g']}: worst case {pep['worst']:.4g}, bound {pep['bound']:.4g}"
                        + (f" ({len(pep['failed'])} solves failed, not counted)" if pep["failed"] else ""))
        elif pep_T:
            note.append("no PEP model of this theorem's algorithm (dfltheory.pep)" if pep_model(thm.id) is None
                        else "no PEP instance of the grid admits a step or solves")
        if thm.big_o:
            note.append("stated as O(.): its constants are unknown, so no planted error can be caught")
        stars = {}
        for name, (values, lower) in instruments.items():
            b = value(thm, values)
            stars[name] = b / lower if b is not None and lower is not None and lower > 0 else None
        known = {k: v for k, v in stars.items() if v is not None}
        best = min(known, key=known.get) if known else None
        for v in verdicts:  # the verdict's threshold: the best instrument's
            v["at"]["c_star"] = {"factor": known[best] if best else None, "instrument": best, "by_instrument": stars}
        cert = certificate_floor(thm, pep) if pep is not None else None
        if cert is not None:
            note.append(cert["note"])
        certified = (pep["values"], cert["bound"]) if cert is not None and cert["bound"] is not None else None
        out.append({"theorem": thm.id, **table(thm, instruments, certified), "c_star": known[best] if best else None,
                    "instrument": best, "c_stars": stars, "certificate": cert, "note": "; ".join(note)})
    return out


def certificate_floor(thm, pep: Mapping) -> dict:
    """The third instrument, from above: the proved one-round certificate (:func:`dfltheory.pep.certify.certify`) at
    the PEP instrument's instance bounds the worst case of the whole class from above, so a mutant at or above it is
    still a valid bound there and no instrument can catch it on that instance. {"bound" (the certified bound at T;
    None where no certificate was proved), "floor" = the theorem's bound / the certified bound (errors by a smaller
    factor are provably out of reach there; the PEP's c* is at least this), "note"}. A failed or unproved certificate
    is said, never used."""
    from dfltheory.pep.certify import certify
    from dfltheory.pep.problem import PEPSolveError

    st = pep["settings"]
    options = dict(pep.get("options", {}))  # every option of the model's worst case: the same instance
    try:
        cert = certify(st["algorithm"], st["m"], st["K"], st["eta"], st["L"], st["Delta"],
                       spectral=tuple(st["spectral"]), sigma_g=st["sigma_g"], B=st["B"], T=st["T"], **options)
    except (PEPSolveError, ValueError) as err:
        return {"bound": None, "floor": None, "note": f"certificate: none ({' '.join(str(err).split())[:200]})"}
    if not cert.check.get("proved"):
        return {"bound": None, "floor": None, "note": "certificate: not proved exactly, not used"}
    bound = cert.bound(int(st["T"]))
    floor = pep["bound"] / bound if bound > 0 else None
    return {"bound": bound, "floor": floor, "worst": pep["worst"],
            "note": f"certificate ({cert.potential}, proved): {bound:.4g} >= worst case {pep['worst']:.4g} at the "
                    f"PEP instance; a planted error by a factor up to {floor:.3g} is still a valid bound there: no "
                    "instrument can catch it at this instance" if floor else f"certificate: {bound:.4g}"}
