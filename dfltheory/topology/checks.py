"""The one validator of the numbers the topology pillar takes, from Python and from the command line, with their
ranges (:data:`ARGUMENTS`) and the generators' default neighbour counts (:func:`default_k`).

``number(value, name, ...)`` returns the value or raises one ValueError of one shape, naming the argument (or the
command-line option), the range, what the number means and what was given::

    --d must be a finite number > 0 (the model dimension in the SGP bound on C), got nan

NaN, infinities, booleans, strings and numbers outside the range are refused alike; an integer argument takes an
int (or numpy integer) and nothing else, so 2.5 is never truncated to 2 behind the user's back.
"""

from __future__ import annotations

import math

from dfltheory.constraints import Interval, check, closed_ends

INF = math.inf


def number(value, name: str, low: float = -INF, high: float = INF, low_open: bool = False, high_open: bool = False,
           integer: bool = False, meaning: str = ""):
    """``value`` as an int (``integer``) or a float, if it is a finite number in the range between ``low`` and
    ``high`` (open or closed at each end); else ValueError ``NAME must be ... (MEANING), got VALUE``
    (:func:`dfltheory.constraints.check` with this :class:`~dfltheory.constraints.Interval`)."""
    check(name, value, Interval(low, high, closed_ends(low_open, high_open), integer, meaning))
    return int(value) if integer else float(value)


#: Neighbours per client of the random generators (graphs.py) when k is not given: the papers' values.
DEFAULT_K = {"watts-strogatz": 8, "k-out": 10, "random": 10, "neighbour-selection": 10, "code-random": 9,
             "code-ws": 8}


def default_k(name: str, n: int) -> int:
    """The k of topology ``name`` on n clients when none is given: DEFAULT_K[name] (10 for a name without one),
    at most n - 1, so that the default works for every n >= 2."""
    return min(DEFAULT_K.get(name, 10), n - 1)


#: The numeric arguments of :func:`dfltheory.topology.analyze`, given on the command line as --n, --seed, --Q,
#: --horizon, --d and --K-u: name -> the range and meaning :func:`number` checks.
ARGUMENTS = {
    "n": dict(low=2, integer=True, meaning="the number of clients"),
    "seed": dict(low=0, integer=True, meaning="the seed of random topologies"),
    "Q": dict(low=1, integer=True, meaning="gossip steps per round"),
    "horizon": dict(low=1, integer=True, meaning="rounds analysed for time-varying topologies and push-sum"),
    "d": dict(low=0, low_open=True, meaning="the model dimension in the SGP bound on C"),
    "K_u": dict(low=1, integer=True, meaning="local steps on u in seed 003's q"),
}


def arguments(cli: bool = False, **values) -> None:
    """Check each of ``values`` (names of :data:`ARGUMENTS`; None, the default, is not checked); the error names the
    argument, or with ``cli`` the command-line option (``K_u`` -> ``--K-u``)."""
    for key, value in values.items():
        if value is not None:
            number(value, f"--{key.replace('_', '-')}" if cli else key, **ARGUMENTS[key])
