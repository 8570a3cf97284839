"""Read a user's mixing matrix (W, or a push-sum P) from a file: ``load_matrix(path)``.

Formats, by suffix: ``.npy`` (numpy.save; no pickles), ``.csv`` (n rows of n comma-separated numbers, no header;
numpy.savetxt(path, W, delimiter=",") writes one), ``.mtx`` (Matrix Market, scipy.io.mmwrite; read as a sparse
matrix when stored as coordinates). Every problem raises ValueError naming the file, what is wrong and the fix.
The size a .npy or .mtx header declares is checked (square, and :mod:`memory`) before the entries are read.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dfltheory.topology import memory
from dfltheory.topology.spectral import check_matrix, check_shape, check_stochastic

FORMATS = (".npy", ".csv", ".mtx")
KINDS = "a .npy, .csv or .mtx file"
FIXES = {".npy": "write it with numpy.save(path, W)",
         ".csv": "write n rows of n comma-separated numbers, no header (numpy.savetxt(path, W, delimiter=','))",
         ".mtx": "write it with scipy.io.mmwrite(path, W)"}


def _declared(path: Path) -> tuple[tuple, float, str] | None:
    """(shape, stored entries, 'dense' or 'sparse') as the header of a .npy or .mtx file declares them, read without
    reading the entries; None for a .csv (no header)."""
    suffix = path.suffix.lower()
    if suffix == ".npy":
        with open(path, "rb") as fh:
            if fh.read(6) != b"\x93NUMPY":
                raise ValueError("no .npy header (the file was not written by numpy.save)")
        shape = np.load(path, mmap_mode="r", allow_pickle=False).shape  # maps the file: reads the header alone
        return shape, float(np.prod(shape, dtype=float)), "dense"
    if suffix == ".mtx":
        import scipy.io

        rows, cols, entries, layout, _, symmetry = scipy.io.mminfo(path)
        stored = "dense" if layout == "array" else "sparse"
        return (rows, cols), float(entries) * (1 if symmetry == "general" else 2), stored
    return None


def _read(path: Path):
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return np.load(path, allow_pickle=False)
    if suffix == ".csv":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an empty file: numpy warns, the shape check below says it clearly
            return np.loadtxt(path, delimiter=",", dtype=float, ndmin=2)
    import scipy.io

    return scipy.io.mmread(path)


def load_matrix(path, stochastic: bool = True):
    """The matrix stored in ``path`` (.npy, .csv or .mtx): a float64 ndarray, or a scipy.sparse CSR array for a
    coordinate .mtx file.

    Checked as every mixing matrix is (:func:`spectral.check_matrix`): square, n >= 2, finite, no negative entry;
    with ``stochastic`` (the default) also row- or column-stochastic to 1e-9 (:func:`spectral.check_stochastic`:
    a W with W 1 = 1, or a push-sum P with 1^T P = 1^T)."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"matrix file {str(path)!r} does not exist; give the path of {KINDS}")
    if not path.is_file():
        raise ValueError(f"matrix file {str(path)!r} is not a regular file; give the path of {KINDS}")
    if path.stat().st_size == 0:
        raise ValueError(f"matrix file {str(path)!r} is empty; write the n x n matrix into it")
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"matrix file {str(path)!r}: unknown type {path.suffix or '(no suffix)'!r}; save the "
                         "matrix as .npy (numpy.save), .csv (numpy.savetxt with delimiter=',') or .mtx "
                         "(scipy.io.mmwrite)")
    declared = _unless_unreadable(_declared, path)
    if declared is not None:
        shape, entries, stored = declared
        try:  # before a byte of the entries is read: a header may declare n = 10^9 with two entries
            memory.check("matrix", check_shape(shape), analysis=False, nnz=entries, stored=stored)
        except ValueError as err:
            raise ValueError(f"matrix file {str(path)!r}: {err}") from None
    W = _unless_unreadable(_read, path)
    return check_file_matrix(sp.csr_array(W) if sp.issparse(W) else np.asarray(W), path, stochastic)


def _unless_unreadable(read, path: Path):
    """read(path), with whatever numpy/scipy raise on a bad file (ValueError, OSError, EOFError, IndexError, ...)
    turned into one ValueError naming the file and how to write it."""
    try:
        return read(path)
    except Exception as err:
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"matrix file {str(path)!r} cannot be read as a {path.suffix} matrix ({detail}); "
                         + FIXES[path.suffix.lower()]) from err


def check_file_matrix(W, path, stochastic: bool = True, where: str = ""):
    """``W`` read from ``path`` checked as :func:`load_matrix` checks it (real entries, :func:`spectral.check_matrix`,
    and with ``stochastic`` :func:`spectral.check_stochastic`); ``where`` places it in the file (a sequence's
    round), and every error names the file."""
    name = f"matrix file {str(path)!r}{where}"
    if W.dtype.kind not in "biuf":
        raise ValueError(f"{name} holds {W.dtype} entries, not real numbers; store the weights as floats")
    try:
        W = check_matrix(W)
        if stochastic:
            check_stochastic(W)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
    return W
