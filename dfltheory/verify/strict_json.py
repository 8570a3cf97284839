"""Strict JSON: a verification's results (numpy scalars, NaN, infinities, tuples, paths) as what ``json.dumps``
writes and every JSON reader reads (:func:`json_safe`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np


def json_safe(obj):
    """``obj`` as strict JSON: mappings with string keys, tuples and sets as lists, numpy scalars as Python numbers,
    NaN as None, infinities as the strings 'inf'/'-inf', any other number by ``float`` and anything else not JSON
    (a path) by its ``str``."""
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    try:
        return json_safe(float(obj))  # a 0-d tensor, a Fraction
    except (TypeError, ValueError):
        return str(obj)
