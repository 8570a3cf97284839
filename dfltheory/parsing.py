"""The command line's text, shared by every pillar: what it reads (counts such as ``--n 1e6``, ``key=value,...``
options, ``NAME:key=value,...`` specs) and what it writes (JSON-safe values, durations a reader counts in).

A bottom-layer module: it imports no pillar and nothing heavy (numpy values are recognised without importing numpy),
so that any layer may call it and a command's parser costs nothing to build.
"""

from __future__ import annotations

import math
import sys


def integer(text: str) -> int:
    """argparse type of a count: an integer, also in exponent form (--n 1e6); 2.5, nan and inf are refused."""
    try:
        return int(text)
    except ValueError:
        value = float(text)  # a ValueError here is argparse's "invalid integer value: '...'"
        if not value.is_integer():
            raise
        return int(value)


def parse_params(text: str | None) -> dict:
    """'key=value,key=value' -> params; values become int, float, or stay strings (None or '' -> {})."""
    params = {}
    for item in filter(None, (text or "").split(",")):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key:
            raise ValueError(f"bad parameter {item!r} in {text!r}; write key=value,key=value")
        for cast in (int, float):
            try:
                params[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            params[key] = value
    return params


def parse_spec(text: str) -> tuple[str, dict]:
    """'name:key=value,key=value' -> (name, params) (see :func:`parse_params`)."""
    name, _, rest = text.partition(":")
    return name, parse_params(rest)


def jsonable(value):
    """``value`` for ``json.dumps``: numpy arrays and scalars as lists and Python numbers, infinities as the strings
    'inf' and '-inf', inside dicts, lists and tuples too."""
    np = sys.modules.get("numpy")  # without numpy loaded there is no numpy value to convert
    if np is not None and isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def duration(seconds: float) -> str:
    """Seconds as a reader counts them: '40 s', '68.3 minutes', '31.7 years' (an estimate's unit)."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.3g} {unit}"
    return f"{seconds:.0f} s"
