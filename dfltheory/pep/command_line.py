"""The command line of a Python call of the PEP pillar: the ``--set`` names (:data:`SETTABLE`) and
:func:`equivalent_command` (the ``dfltheory pep`` / ``dfltheory certify`` line a failed row of the report shows).

A module of its own, below both :mod:`dfltheory.pep.commands` (the parser) and :mod:`dfltheory.pep.certify` /
:mod:`dfltheory.pep.table` (which print it), so that none of them imports another in a circle."""

from __future__ import annotations

#: --set names and the worst_case keyword each one sets.
SETTABLE = {"L": "L", "f0_minus_fstar": "Delta", "Delta": "Delta", "sigma_g": "sigma_g", "B": "B", "rho": "rho",
            "Q": "Q", "lam_pen": "lam_pen", "beta": "beta", "alpha": "alpha", "sigma_l": None}


def equivalent_command(command: str, algorithm: str, m: int, K: int, T, eta: float, **kw) -> str:
    """The ``dfltheory pep`` / ``dfltheory certify`` command line of a Python call (a failed row of the report shows
    it): ``kw`` of ``worst_case`` / ``certify`` (W, spectral, lam, time_varying and the --set names). An explicit W
    that is W(lam) = lam I + (1 - lam) 11^T/m is ``--lambda lam``; any other is ``--matrix W.npy`` (to be saved)."""
    import numpy as np

    parts = ["dfltheory", command, algorithm, "--m", str(m), "--K", str(K), "--eta", f"{eta:g}"]
    if T is not None:
        parts += ["--T"] + [str(t) for t in (T if isinstance(T, (list, tuple)) else [T])]
    if kw.get("W") is not None:
        W = np.asarray(kw["W"], dtype=float)
        lam = (W[0, 0] * m - 1) / (m - 1) if W.ndim == 2 else None
        if lam is not None and np.allclose(W, lam * np.eye(m) + (1 - lam) / m, rtol=0, atol=1e-12):
            parts += ["--lambda", f"{lam:g}"]
        else:
            parts += ["--matrix", "W.npy"]
    elif kw.get("spectral") is not None or kw.get("lam") is not None:
        lo, hi = kw["spectral"] if kw.get("spectral") is not None else (-kw["lam"], kw["lam"])
        parts += ["--lambda-range", f"{lo:g}", f"{hi:g}"] + (["--time-varying"] if kw.get("time_varying") else [])
    names = {v: k for k, v in SETTABLE.items() if v and k != "Delta"}
    sets = [f"{names[k]}={v:g}" for k, v in kw.items() if k in names and v is not None]
    return " ".join(parts + (["--set", *sets] if sets else []))
