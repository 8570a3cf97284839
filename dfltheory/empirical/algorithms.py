"""The algorithms of the six cards as (local rule, communication rule) pairs; each reads like its pseudocode. The
baselines are defined here, a paper's own algorithms (dfedsam, dfedsgpsm, ...) in
``dfltheory/papers/<id>/algorithms.py``; both are registered through :func:`register_algorithm` when the table is first
read (:func:`dfltheory.plugins.load_builtin`).

Every algorithm is derived from its step program (:mod:`dfltheory.program`; :func:`from_program`): the program is
its one definition, and the hand-written rules it was built from before are the test oracle
(:mod:`dfltheory.testing.handwritten`). The table entry maps the engine's hyper-parameter names to the program's
(``momentum`` -> ``alpha``) and keeps the Algorithm's other fields. dfedcata's programs
declare the engine's sequential schedule (``Program.sequential``) and take the run's clip and weight decay
themselves (the public code clips between the anchor pull and the weight decay).

| name          | local rule                                  | communication                  | source |
|---------------|---------------------------------------------|--------------------------------|--------|
| dpsgd         | one SGD step (K = 1) from x^t               | parallel_gossip(W): W x^t + (z - x^t) | Lian et al. 2017 Algorithm 1; cards dfedcata, dfedsgpsm §3.3 |
| dpsgd-atc     | one SGD step (K = 1)                        | gossip(W) of the stepped models | card dfedsam §3.3 [INTERP] (= DFedAvg with K = 1) |
| dfedavg       | K SGD steps                                 | gossip(W)                      | card dfedsam §3.3 (Sun et al. 2022) |
| dfedavgm      | K SGD steps with heavy-ball momentum        | gossip(W)                      | card dfedsam §3.3 |
| dfedsam       | K SAM steps, eq. (3)                        | gossip(W), eq. (4)             | seed 001 L76-90, card dfedsam §3.1 |
| dfedsam-mgs   | K SAM steps, eq. (3)                        | multi_gossip(Q), eq. (5)       | seed 001 L85-90, card dfedsam §3.1 |
| dfedadmm      | K steps on the augmented Lagrangian, eq. (6) | dual update, message z, gossip | seed 004 box L123-131, card dfedadmm §3.2 |
| dfedadmm-sam  | same with SAM gradients (box lines 10-13)   | same                           | idem |
| dfedcata      | K steps on f_i + lam_pen/2 ||x - y_i||^2    | Nesterov extrapolation (beta, A/B) | card dfedcata §3.1-3.2 |
| fedavg        | K SGD steps, participants only              | server_average                 | card dfedsam §3.3 |
| fedprox       | K steps on f_i + mu/2 ||x - x^t||^2         | server_average                 | card dfedcata §3.3 |
| fedsam        | K SAM steps                                 | server_average                 | card dfedsam §3.3 |
| scaffold      | K steps corrected by c - c_i                | server_average + control update| card dfedcata §3.3 (Karimireddy et al. 2020) |
| dfedsgpsm     | K SAM + momentum steps at z = x/w           | push_sum (column-stochastic P) | seed 000 L80-108, card dfedsgpsm §3.1 |
| sgp           | one SGD step at z = x/w                     | push_sum                       | card dfedsgpsm §3.3 (Assran et al. 2019) |
| dfedsgpsm-s   | as dfedsgpsm                                | push_sum, P(t) from the losses | seed 000 App. A.1 eq. (2), L285-289, card dfedsgpsm §3.2 |
| dfedpgp       | K_v steps on v (u fixed), K_u steps on u at z = u/mu | push_sum of u only (v personal) | seed 003 Algorithm 1 L100, card dfedpgp §3.1 |
| dfedpgp-pull  | as dfedpgp                                  | row-stochastic pull of u, eq. (6) | seed 003 L362-366, card dfedpgp §7, §11 A2 |
"""

from __future__ import annotations

import re

from collections.abc import Callable, Mapping

from dfltheory.constraints import INF, Interval, check
from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R
from dfltheory.empirical.composed import Algorithm
from dfltheory.empirical.program_rules import algorithm as program_algorithm
from dfltheory.program import PROGRAMS
from dfltheory.plugins import Registry, load_builtin, load_once


def decay_rule(hp: dict) -> list[R.Transform]:
    """Optional L2 weight decay (``weight_decay``)."""
    return [R.weight_decay(hp["weight_decay"])] if hp.get("weight_decay") else []


def clip_rule(hp: dict, eps: float = R.EPS) -> list[R.Transform]:
    """Optional clipping of the local direction (``clip``)."""
    return [R.clip(hp["clip"], eps)] if hp.get("clip") else []


def extras(hp: dict) -> list[R.Transform]:
    """Optional modifiers shared by every algorithm: weight decay, then clipping."""
    return decay_rule(hp) + clip_rule(hp)


def _server(hp: dict) -> C.CommRule:
    return C.server_average(hp.get("server_weights"))


#: the hyper-parameters' ranges the table checks (a program takes any number: a penalty of 0 would divide by 0),
#: the ones the hand-written rules refused
HYPER_RANGES = {
    "rho": Interval(0, INF, closed="left", meaning="the SAM radius"),
    "momentum": Interval(0, 1, closed="left", meaning="the local heavy-ball momentum"),
    "lam_pen": Interval(0, INF, closed="neither", meaning="DFedADMM's penalty lambda: its local step divides by it"),
    "Q": Interval(1, INF, closed="left", meaning="gossip steps per round"),
    "mu": Interval(0, INF, closed="left", meaning="the proximal coefficient"),
    "K_v": Interval(0, INF, closed="left", meaning="personal local steps per round"),
    "lr_v": Interval(0, INF, closed="neither", meaning="the personal learning rate"),
    "clip": Interval(0, INF, closed="neither", meaning="the largest norm of a local step's direction"),
}


def check_hyper(name: str, value, shown: str | None = None):
    """``value`` if it lies in ``HYPER_RANGES[name]``, else the ValueError of :func:`dfltheory.constraints.check`,
    naming the option ``shown`` (default ``name``)."""
    return check(shown or name, value, HYPER_RANGES[name])


def from_program(program: str, name: str, hp: dict, given: dict | None = None, **fields) -> Algorithm:
    """The algorithm ``name`` of the table derived from the step program ``program`` (:mod:`dfltheory.program`) at
    the program's hyper-parameters ``given``, its direction followed by the run's :func:`extras` (read from
    ``hp``); ``fields``: the Algorithm's other fields (``params``: the names the engine, the CLI and the cache
    keys know)."""
    return program_algorithm(PROGRAMS[program], given, name=name, extras=tuple(extras(hp)), **fields)


def dpsgd(hp):
    """D-PSGD as Lian et al. 2017 wrote it (Algorithm 1; X_{k+1} = X_k W - gamma dF(X_k; xi_k)):
    x_i <- sum_l w_il x_l - eta grad F_i(x_i; xi_i), the gradient at the unmixed point, mixing and step in parallel
    (program ``dpsgd``; cards dfedcata §3.3, dfedsgpsm §3.3). With local epochs one epoch, the papers' baseline
    setting (dfedsgpsm.md §8, seed 000 L275; dfedsam.md B.3)."""
    return from_program("dpsgd", "dpsgd", hp, params={})


def dpsgd_atc(hp):
    """D-PSGD in the adapt-then-combine order, x_i <- sum_l w_il (x_l - eta g_l): one SGD step, then gossip of the
    stepped models (card dfedsam §3.3 [INTERP of the standard form]; DFedAvg with K = 1, the model the PEP's
    ``dpsgd`` and DFedSAM Theorem 4.1 at rho = 0 describe). ``dpsgd`` was this order before issue 32; its runs are
    this algorithm's, number for number."""
    return from_program("dpsgd-atc", "dpsgd-atc", hp, params={})


def dfedavg(hp):
    """K local SGD steps, then x_i^{t+1} = sum_l w_il x_{l,K}^t (card dfedadmm §3.3; DFedSAM with rho = 0)."""
    return from_program("dfedavg", "dfedavg", hp, params={})


def dfedavgm(hp):
    """DFedAvg with local heavy-ball momentum (0.9 in all papers; card dfedsam §8), the program's alpha."""
    beta = hp.get("momentum", 0.9)
    check_hyper("momentum", beta)
    return from_program("dfedavgm", "dfedavgm", hp, {"alpha": beta}, params={"momentum": beta})


def _centralized(program: str, hp: dict, given: dict, **fields) -> Algorithm:
    """A server algorithm derived from its program: the participants' fraction ``participation`` (0.1) and the
    server's weights ``server_weights`` (FedAvg's n_i-weighted average; None: uniform)."""
    from dfltheory.program import PROGRAMS

    participation = hp.get("participation", 0.1)
    return program_algorithm(PROGRAMS[program], given, extras=tuple(extras(hp)),
                             server_weights=hp.get("server_weights"), participation=participation, **fields)


def fedavg(hp):
    """Sampled clients run K SGD steps; the server averages them (global lr 1; program ``fedavg``)."""
    return _centralized("fedavg", hp, {})


def fedprox(hp):
    """FedAvg on the local objective f_i(x) + (mu/2)||x - x^t||^2 (program ``fedprox``)."""
    mu = hp.get("mu", 0.01)
    check_hyper("mu", mu)
    return _centralized("fedprox", hp, {"mu": mu}, params={"mu": mu})


def fedsam(hp):
    """FedAvg with local SAM steps (Qu et al. 2022); rho = 0.1 as in card dfedadmm §8 (program ``fedsam``)."""
    rho = hp.get("rho", 0.1)
    check_hyper("rho", rho)
    return _centralized("fedsam", hp, {"rho": rho}, params={"rho": rho})


def scaffold(hp):
    """SCAFFOLD with option-II control variates and global lr 1 (program ``scaffold``)."""
    return _centralized("scaffold", hp, {})


def sgp(hp):
    """SGP (Assran et al. 2019; card dfedsgpsm §3.3): one SGD step on x with the gradient at z = x/w (with local
    epochs one epoch, the papers' setting, seed 000 L275), push-sum (program ``sgp``)."""
    return from_program("sgp", "sgp", hp, params={})


#: the baselines the papers compare with (the papers' own algorithms are in dfltheory/papers/<id>/algorithms.py)
BASELINES = {"dpsgd": dpsgd, "dpsgd-atc": dpsgd_atc, "dfedavg": dfedavg, "dfedavgm": dfedavgm, "fedavg": fedavg,
             "fedprox": fedprox, "fedsam": fedsam, "scaffold": scaffold, "sgp": sgp}


def _load_builtins() -> None:
    """The built-in algorithms, registered when the table is first read: the baselines, then each built-in paper's
    own (:func:`dfltheory.plugins.load_builtin`), each through :func:`register_algorithm`; then fixed."""
    def register():
        for name, factory in BASELINES.items():
            register_algorithm(name, factory, origin=__name__)
        load_builtin("algorithms")

    load_once(_LOADING, register, ALGORITHMS)  # a plugin adds algorithms; it cannot replace or remove a built-in one


_LOADING: list[bool] = []
#: every registered algorithm: name -> factory(hp) -> Algorithm (the built-in ones, fixed, then the plugins')
ALGORITHMS: dict[str, Callable[[dict], Algorithm]] = Registry("algorithm", load=_load_builtins)
ALGORITHM_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
#: algorithm -> {an option's former name: its name today}, as each registration declares (``renamed=``)
RENAMED_OPTIONS: dict[str, dict[str, str]] = {}
#: algorithm -> the options its factory read at registration (with its defaults)
READS: dict[str, frozenset[str]] = {}


def register_algorithm(name: str, factory: Callable[[dict], Algorithm], *, origin: str = "",
                       renamed: Mapping[str, str] | None = None) -> None:
    """Make ``factory`` the algorithm ``name`` of ``train``, ``verify``, ``claims`` and :func:`make`.

    ``factory(hp)`` takes the hyper-parameters given (a dict; read them with ``hp.get(key, default)``, so that the
    ones it does not read are reported as unused) and returns an :class:`Algorithm`: a local rule of
    :mod:`dfltheory.empirical.rules` composed with a communication rule of :mod:`dfltheory.empirical.communication`,
    named ``name``. It is called once here with no hyper-parameters (its defaults) to check it. ``origin`` (a plugin
    file) is named in the errors, ValueErrors that name the problem and the fix. ``renamed``: {former name: name
    today} of options the algorithm took under another name before (a stored config or an old sweep file giving the
    former name is read under today's: :func:`current_names`); a former name must be one no registered algorithm reads.
    The Algorithm's ``warning(lr, lr_decay, K, rounds)``, if set, says why a run's step sizes make the algorithm
    degenerate (the train command prints it once)."""
    if not isinstance(origin, str):
        raise ValueError(f"algorithm {name!r}: origin={origin!r} must be a string (the plugin file, __file__)")
    where = f"{origin}: " if origin else ""
    if not isinstance(name, str) or not ALGORITHM_NAME.match(name):
        raise ValueError(f"{where}algorithm name {name!r} must be lower-case letters, digits, '-' or '_', starting "
                         "with a letter")
    if name in ALGORITHMS:
        raise ValueError(f"{where}algorithm {name!r} is already registered; choose another name")
    is_table = renamed is None or isinstance(renamed, Mapping)
    if not is_table or not all(isinstance(k, str) and isinstance(v, str) and k != v
                               for k, v in dict(renamed or {}).items()):
        raise ValueError(f"{where}algorithm {name!r}: renamed={renamed!r} must map an option's former name to its "
                         "name today (strings, e.g. {'lam': 'lam_pen'})")
    renamed = dict(renamed or {})
    live = sorted(old for old in renamed if any(old in read for read in READS.values()))
    if live:  # a name another algorithm still reads: reading it as this one's former name would take it from that one
        users = sorted(n for n, read in READS.items() if live[0] in read)
        raise ValueError(f"{where}algorithm {name!r}: renamed gives {live[0]!r} as a former name, but "
                         f"{', '.join(users)} read{'s' if len(users) == 1 else ''} an option of that name; a former "
                         "name must be one no algorithm reads today")
    if not callable(factory):
        raise ValueError(f"{where}algorithm {name!r}: the factory must be a function hp -> Algorithm, got {factory!r}")
    try:
        algo = factory(defaults := _Reads({}))
    except Exception as err:  # noqa: BLE001  a user's factory: its failure is the plugin's error
        raise ValueError(f"{where}algorithm {name!r}: its factory fails with its default hyper-parameters "
                         f"({type(err).__name__}: {err}); it must accept a dict hp and return an Algorithm") from None
    if not isinstance(algo, Algorithm) or algo.name != name:
        raise ValueError(f"{where}algorithm {name!r}: the factory returned {type(algo).__name__} "
                         f"{getattr(algo, 'name', '')!r}; return Algorithm({name!r}, local_rule, communication_rule)")
    if not isinstance(algo.local, R.Transform) or not isinstance(algo.comm, C.CommRule):
        raise ValueError(f"{where}algorithm {name!r}: its local rule is {type(algo.local).__name__} and its "
                         f"communication rule {type(algo.comm).__name__}; give a rule of dfltheory.empirical.rules "
                         "(e.g. R.sgd()) and one of dfltheory.empirical.communication (e.g. C.gossip())")
    if algo.K is not None and (isinstance(algo.K, bool) or not isinstance(algo.K, int) or algo.K < 1):
        raise ValueError(f"{where}algorithm {name!r}: K={algo.K!r} must be a number of local steps >= 1, or None")
    if isinstance(algo.participation, bool) or not isinstance(algo.participation, (int, float)) \
            or not 0 < algo.participation <= 1:
        raise ValueError(f"{where}algorithm {name!r}: participation={algo.participation!r} must be the fraction of "
                         "clients per round, in (0, 1]")
    taken = sorted(set(renamed) & set(defaults.read))
    if taken:
        raise ValueError(f"{where}algorithm {name!r}: renamed gives {taken[0]!r} as a former name, but its factory "
                         "still reads it; a former name is one the algorithm no longer reads")
    ALGORITHMS[name] = factory
    READS[name] = frozenset(defaults.read)
    if renamed:
        RENAMED_OPTIONS[name] = renamed


def renamed_options(name: str) -> dict[str, str]:
    """{former name: name today} of the options algorithm ``name`` took under another name (empty if none, or for a
    name that is no algorithm)."""
    if name in ALGORITHMS:  # reading the table registers the built-in algorithms
        return dict(RENAMED_OPTIONS.get(name, {}))
    return {}


def former_names() -> frozenset[str]:
    """Every option name some algorithm took before it was renamed (``lam``: DFedADMM's penalty, ``lam_pen`` today)."""
    return frozenset(old for name in names() for old in RENAMED_OPTIONS.get(name, {}))


class FormerNameConflict(ValueError):
    """A config gives an option under its former name and under today's, with different values."""


def current_names(cfg, where: str = "the config", warn=None, flag=str, stored: bool = False) -> dict:
    """``cfg`` (a run config) with every option its algorithm took under a former name (the algorithm's registration
    declares them: :func:`renamed_options`) under today's name, in the former one's place; a former name the
    config's algorithm does not read (``lam`` given to dfedavg) is dropped, as it changed nothing.

    ``stored``: ``cfg`` was written before the rename (a run's config.json, a stored result: the train command wrote
    every option, the former name included, null where not given): there the former name is what the algorithm read
    and today's name, if also given, was ignored, so the former one's value (None: the default) is taken. Otherwise
    (a command line, a file, the API) ``warn(text)``, if given, is told of each former name given a value, each
    option shown as ``flag(name)``, and a former name and today's given different values is a
    :class:`FormerNameConflict` (a ValueError) naming both.
    """
    old = former_names() & set(cfg)
    if not old:
        return dict(cfg)
    algo = cfg.get("algo")
    renamed, reads = renamed_options(algo), READS.get(algo, frozenset())
    targets = {renamed[name] for name in old if name in renamed}
    out = {}
    for name, value in cfg.items():  # in cfg's order: today's name takes the former one's place
        if name in old and name not in reads:
            new = renamed.get(name)
            if new is None:
                if warn and value is not None and not stored:
                    warn(f"{where}: {algo} does not use {flag(name)} (the former name of another algorithm's "
                         "option); ignored")
                continue
            if stored:
                out[new] = value
                continue
            if value is None:
                continue
            if cfg.get(new) is not None and cfg[new] != value:
                raise FormerNameConflict(f"{where} gives {flag(name)} {value!r} and {flag(new)} {cfg[new]!r}: "
                                         f"{flag(name)} is the former name of {flag(new)} for {algo}; give "
                                         f"{flag(new)} alone")
            if warn:
                warn(f"{where}: {flag(name)} is the former name of {flag(new)} for {algo}; write {flag(new)}")
            out[new] = value
        elif name in targets and stored:
            out.setdefault(name, None)  # keep the place; the former name's value fills it
        elif name not in out or value is not None:
            out[name] = value
    if stored:
        out = {k: v for k, v in out.items() if v is not None or k not in targets}
    return out


def cache_form(cfg) -> dict:
    """``cfg`` as it is hashed into a cache key: as given, with a mark where it gives an option under the name it
    has today that its algorithm took under a former name (DFedADMM's ``lam_pen``): before the rename that option was
    ignored by the algorithm, so a key of before must not be read back as today's run. A config without such an
    option (every one that gives the former name, or neither) keeps the key it had."""
    renamed = renamed_options(cfg.get("algo"))
    given = sorted(new for new in renamed.values() if cfg.get(new) is not None)
    return {**cfg, "_renamed": given} if given else dict(cfg)


def register_program(program, *, origin: str = "") -> None:
    """Make the step program ``program`` an algorithm of ``train`` (:func:`register_algorithm`): its factory reads
    the program's hyper-parameters from the run's options (``hp.get(name, default)``)."""

    def factory(hp):
        given = {k: hp.get(k, v) for k, v in program.params.items()}
        return program_algorithm(program, {k: v for k, v in given.items() if v is not None},
                                 fresh=bool(hp.get("fresh_gossip", False)))

    register_algorithm(program.name, factory, origin=origin)


def names() -> tuple[str, ...]:
    """The registered algorithms' names."""
    return tuple(ALGORITHMS)


def make(name: str, **hp) -> Algorithm:
    """Build a named algorithm; hyper-parameters not given take the papers' values (see each factory)."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choose one of {', '.join(ALGORITHMS)}")
    if former_names() & set(hp):  # an option under its former name: read under today's, with a FutureWarning
        import warnings

        hp = current_names({**hp, "algo": name}, f"make({name!r})",
                           warn=lambda text: warnings.warn(text, FutureWarning, stacklevel=4))
        hp.pop("algo")
    hp = _Reads({k: v for k, v in hp.items() if v is not None})
    if "participation" in hp and not 0 < hp["participation"] <= 1:
        raise ValueError(f"participation is the fraction of clients per round, in (0, 1]; got {hp['participation']}")
    hp.read.clear()
    algo = ALGORITHMS[name](hp)
    algo.unused = tuple(sorted(set(hp) - set(hp.read)))
    algo.hyper = dict(hp.read)
    return algo


class _Reads(dict):
    """The hyper-parameters given to a factory, remembering the ones it reads and the value each took (the given
    one or the factory's default); the others are ``unused``."""

    def __init__(self, values):
        super().__init__(values)
        self.read: dict[str, object] = {}

    def get(self, key, default=None):
        self.read[key] = value = super().get(key, default)
        return value

    def __getitem__(self, key):
        self.read[key] = value = super().__getitem__(key)
        return value
