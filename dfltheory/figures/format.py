"""Numbers, formulas and ranges as a reader sees them in the report (Markdown and HTML alike).

* :func:`num`      4 significant digits, powers of ten as ``1.5×10⁻⁴``, ``0 (round-off)`` for a round-off zero of
                   a quantity that is exactly 0, ``—`` for a missing value;
* :func:`formula`  a sympy expression or relation (or its ``sstr`` text) on one line in Unicode:
                   ``-32*K**2*L**2*eta**3 + K*eta > 0`` becomes ``−32·K²·L²·η³ + K·η > 0``;
* :func:`interval` a solved range (``L in [0.05, inf)``) as ``L ≥ 0.05``;
* :func:`slug`     the anchor GitHub gives a Markdown heading;
* :func:`duration` seconds as ``12 s``, ``3 min 44 s``.
"""

from __future__ import annotations

import math
import re

import sympy as sp

__all__ = ["num", "ratio", "formula", "interval", "slug", "duration", "ROUND_OFF"]

#: below this absolute value a quantity known to be exactly 0 is shown as a round-off zero
ROUND_OFF = 1e-12

_SUP = str.maketrans("0123456789-+.()/", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺·⁽⁾ᐟ")
_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "eta": "η", "kappa": "κ", "lam": "λ",
          "lambda": "λ",
          "rho": "ρ", "sigma": "σ", "psi": "ψ", "Phi": "Φ", "Delta": "Δ", "Gamma": "Γ", "Xi": "Ξ", "xi": "ξ",
          "tau": "τ", "mu": "μ", "zeta": "ζ", "theta": "θ", "epsilon": "ε", "omega": "ω"}
#: symbol names that read better as what they stand for
_NAMES = {"f0_minus_fstar": "(f(x⁰) − f⋆)", "x0_sq_mean": "‖x⁰‖²"}
_WORD = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(sorted(_GREEK, key=len, reverse=True)) + r")(?=_|\b)")


def _sup(text: str) -> str:
    return text.translate(_SUP)


def num(x, zero_exact: bool = False, digits: int = 4) -> str:
    """``x`` for a reader: ``None`` -> ``—``, booleans -> ``yes``/``no``, integers with thousands separators, floats
    to ``digits`` significant digits with powers of ten written out; with ``zero_exact`` (the quantity is exactly 0
    in exact arithmetic, e.g. lambda of the complete graph) a value below :data:`ROUND_OFF` is ``0 (round-off)``."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}" if abs(x) >= 10_000 else str(x)
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "undefined (NaN)"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if zero_exact and abs(x) < ROUND_OFF:
        return "0 (round-off)" if x != 0 else "0"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        text = f"{x:.{digits}g}"
        if "e" not in text:
            return text.replace("-", "−")
    mantissa, exp = f"{x:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    power = "10" + _sup(str(int(exp)))
    return (power if mantissa == "1" else f"{mantissa}×{power}").replace("-", "−")


def ratio(x) -> str:
    """A ratio such as bound/measured: ``×300``, ``×1.2×10⁵``."""
    return "—" if x is None else "×" + num(x)


def formula(expr) -> str:
    """One line of Unicode for a sympy expression or relation (or the ``sstr`` text of one)."""
    text = expr if isinstance(expr, str) else sp.sstr(expr)
    for name, shown in _NAMES.items():
        text = text.replace(name, shown)
    text = _WORD.sub(lambda m: _GREEK[m.group(1)], text).replace("**", "^")
    text = re.sub(r"\^\((-?\d+(?:/\d+)?)\)|\^(\d+)(?![\w.])", lambda m: _sup(m.group(1) or m.group(2)), text)
    text = text.replace("sqrt(", "√(").replace("*", "·").replace("<=", "≤").replace(">=", "≥")
    text = text.replace("!=", "≠").replace("oo", "∞").replace(" - ", " − ")
    return re.sub(r"(^|[(\s])-", lambda m: m.group(1) + "−", text)


_RANGE = re.compile(r"^(?P<name>\w+) in (?P<lo>[\[(])(?P<a>[^,]+), (?P<b>[^\])]+)(?P<hi>[\])])$")


def interval(text: str | None) -> str:
    """A solved range (``L in [0.05, inf)``, ``eta in (0, 0.002]``, a union ``... U ...``) in words and symbols:
    ``L ≥ 0.05``, ``0 < η ≤ 0.002``; a sympy set that is not an interval keeps its text, with Unicode symbols."""
    if text is None:
        return "—"
    parts, pieces = [], str(text).split(" U ")
    name = pieces[0].split(" in ")[0] if " in " in pieces[0] else None
    for piece in pieces:
        piece = piece.strip()
        if name and not piece.startswith(name + " in "):
            piece = f"{name} in {piece}"
        m = _RANGE.match(piece)
        if not m:
            parts.append(formula(piece.replace(" in ", " ∈ ")))
            continue
        name, a, b = formula(m["name"]), m["a"].strip(), m["b"].strip()
        lo = "≤" if m["lo"] == "[" else "<"
        hi = "≤" if m["hi"] == "]" else "<"
        a_inf, b_inf = a in ("-inf", "-oo"), b in ("inf", "oo")
        fa, fb = (num(float(v)) if _is_number(v) else formula(v) for v in (a, b))
        if a_inf and b_inf:
            parts.append(f"every {name}")
        elif b_inf:
            parts.append(f"{name} {'≥' if lo == '≤' else '>'} {fa}")
        elif a_inf:
            parts.append(f"{name} {hi} {fb}")
        else:
            parts.append(f"{fa} {lo} {name} {hi} {fb}")
    return " or ".join(parts)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def duration(seconds: float) -> str:
    """``0.4 s``, ``12 s``, ``3 min 44 s``, ``14 min``."""
    if seconds < 1:
        return f"{seconds:.1f} s"
    whole = round(seconds)  # rounded once, so that 299.7 s reads 5 min 0 s, never 4 min 60 s
    if whole < 60:
        return f"{whole} s"
    return f"{round(whole / 60)} min" if whole >= 600 else f"{whole // 60} min {whole % 60} s"
