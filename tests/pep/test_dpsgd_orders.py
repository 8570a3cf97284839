"""D-PSGD in its two orders (issue 32 item 6): ``dpsgd``, Lian et al. 2017's Algorithm 1 (x^{t+1} = W x^t - eta grad
f(x^t): the gossip and the gradient at the unmixed point in parallel), and ``dpsgd-atc``, step then mix
(x^{t+1} = W (x^t - eta grad f(x^t)), DFedAvg with K = 1, the model dfedsam.thm4.1 covers). Their worst cases differ
where W mixes, agree where it does not (W = I: gradient descent on each f_i, PEPit's own example), the worst-case
example of ``dpsgd`` replays Lian's recursion (and not the other), and its certificate holds, checked by the
separately written round. Also: the PEP registries refuse a plugin that replaces a built-in model."""

import numpy as np
import pytest

from dfltheory.pep import W_lambda, certify, compare, register_pep_model, worst_case
from dfltheory.pep import interpolation
from dfltheory.pep import problem as P
from dfltheory.testing.registries import isolated

SET = dict(sigma_g=1.0, B=2.0)
TOL = 1e-5


def test_the_two_orders_differ_where_w_mixes():
    """m = 2, W(0.5), eta = 0.1: one round reaches the same mean (x_bar^1 = x^0 - eta grad f(x^0) in both); from the
    second on, Lian's order, whose gradient step is not mixed, has the larger worst case. The numbers of docs/pep.md
    (dpsgd-atc at T = 5: 1.1469, the report's certificate case)."""
    W = W_lambda(2, 0.5)
    values = {a: [worst_case(a, 2, 1, T, 0.1, W=W, **SET).value for T in (2, 3, 5)] for a in ("dpsgd", "dpsgd-atc")}
    lian, atc = values["dpsgd"], values["dpsgd-atc"]
    assert lian[0] == pytest.approx(atc[0], rel=TOL)
    assert lian[1] == pytest.approx(1.45538, rel=1e-4) and atc[1] == pytest.approx(1.44708, rel=1e-4)
    assert lian[2] == pytest.approx(1.16788, rel=1e-4) and atc[2] == pytest.approx(1.14688, rel=1e-4)
    assert all(a > b * (1 + 1e-3) for a, b in zip(lian[1:], atc[1:])), values
    over_class = worst_case("dpsgd", 2, 1, 5, 0.1, spectral=(-0.5, 0.5), **SET).value
    assert over_class >= lian[2] * (1 - TOL)  # W(0.5) belongs to the class (on m = 2, the class is W(lam) only)


@pytest.mark.parametrize("gamma, n", [(1.0, 2), (0.5, 3)])
def test_identity_is_gradient_descent_in_both_orders(gamma, n):
    """W = I: both orders are gradient descent on each f_i. One agent (PEPit's own initial condition f(x_0) - f(x_n)
    <= 1): PEPit's example; two agents with sigma_g = 0 everywhere (every f_i has f's gradient): the same; two
    heterogeneous agents: the two orders are one PEP."""
    from PEPit.examples.nonconvex_optimization.gradient_descent import wc_gradient_descent

    ref, _ = wc_gradient_descent(L=1.0, gamma=gamma, n=n, wrapper="cvxpy", solver="CLARABEL", verbose=-1)
    for algorithm in ("dpsgd", "dpsgd-atc"):
        one = worst_case(algorithm, 1, 1, n + 1, gamma, W=np.eye(1), gap="last").value
        two = worst_case(algorithm, 2, 1, n + 1, gamma, W=np.eye(2), sigma_g=0.0, heterogeneity_at="all",
                         gap="last").value
        assert one == pytest.approx(ref, rel=TOL) and two == pytest.approx(ref, rel=TOL), (algorithm, one, two, ref)
    lian, atc = (worst_case(a, 2, 1, 4, 0.1, W=np.eye(2), **SET).value for a in ("dpsgd", "dpsgd-atc"))
    assert lian == pytest.approx(atc, rel=TOL)


def _replay(example, W, eta, T, parallel):
    """Run D-PSGD on the worst-case example's own gradients (each f_i's queried triples): Lian's order when
    ``parallel``, else step then mix. Returns min_t ||grad f(x_bar^t)||^2, or None where an iterate is not a point
    where the example knows f_i's gradient (the example is not a run of that order)."""
    m = len(example["functions"])
    scale = max(1.0, max(float(np.abs(d["x"]).max()) for d in example["functions"]))

    def grad(i, x):
        d = example["functions"][i]
        gap = np.linalg.norm(d["x"] - x, axis=1)
        k = int(np.argmin(gap))
        return d["g"][k] if gap[k] <= 1e-4 * scale else None

    X = [example["functions"][0]["x"][0]] * m  # the first query of every f_i is at x^0 = x_bar^0
    metric = []
    for t in range(T):
        xbar = np.mean(X, axis=0)
        gs = [grad(i, xbar) for i in range(m)]
        if any(g is None for g in gs):
            return None
        metric.append(float(np.sum(np.mean(gs, axis=0) ** 2)))
        if t == T - 1:
            break
        G = [grad(i, X[i]) for i in range(m)]
        if any(g is None for g in G):
            return None
        if parallel:
            X = [sum(W[i, j] * X[j] for j in range(m)) - eta * G[i] for i in range(m)]
        else:
            Z = [X[j] - eta * G[j] for j in range(m)]
            X = [sum(W[i, j] * Z[j] for j in range(m)) for i in range(m)]
    return min(metric)


def test_the_worst_case_example_is_a_run_of_lians_order(monkeypatch):
    """The example PEPit factors out of the dpsgd solve, replayed by a per-agent loop of Lian's recursion on the
    example's own gradients, reaches every point the PEP queried and the PEP's value; the step-then-mix loop leaves
    them (its second round's points are not where the example knows a gradient): the model is Lian's."""
    captured = []
    extract = interpolation.extract

    def spy(*args, **kwargs):
        captured.append(extract(*args, **kwargs))
        return captured[-1]

    monkeypatch.setattr(interpolation, "extract", spy)
    W, T, eta = W_lambda(2, 0.5), 4, 0.1
    r = worst_case("dpsgd", 2, 1, T, eta, W=W, **SET)
    example = captured[-1]
    assert r.diagnostics["interpolation"]["interpolable"]
    assert _replay(example, W, eta, T, parallel=True) == pytest.approx(r.primal, rel=1e-4)
    assert _replay(example, W, eta, T, parallel=False) is None
    atc = worst_case("dpsgd-atc", 2, 1, T, eta, W=W, **SET)  # and the other way round
    assert _replay(captured[-1], W, eta, T, parallel=False) == pytest.approx(atc.primal, rel=1e-4)
    assert _replay(captured[-1], W, eta, T, parallel=True) is None


@pytest.mark.parametrize("mixing", [dict(W=W_lambda(2, 0.5)), dict(lam=0.5)], ids=["W(0.5)", "class"])
def test_lians_certificate_holds_and_the_separate_round_agrees(mixing):
    """The certificate of Lian's order lies above its fixed-T worst case (within 6 %), is proved exactly, and on an
    explicit W the separately written round (dfltheory.pep.separate, Lian's recursion by hand) reaches its e; it is
    not the step-then-mix one (a larger e: the unmixed gradient step adds disagreement)."""
    T = 5
    cert = certify("dpsgd", 2, 1, 0.1, T=T, **mixing, **SET)
    atc = certify("dpsgd-atc", 2, 1, 0.1, T=T, **mixing, **SET)
    spectral = {"spectral": (-mixing["lam"], mixing["lam"])} if "lam" in mixing else mixing
    worst = worst_case("dpsgd", 2, 1, T, 0.1, **spectral, **SET).value
    assert worst * (1 - TOL) <= cert.bound(T) <= 1.06 * worst, (cert.bound(T), worst)
    assert cert.check["proved"] and cert.e > 1.5 * atc.e
    assert cert.bound(T) == pytest.approx(1.22992, rel=1e-3) and atc.bound(T) == pytest.approx(1.18128, rel=1e-3)
    if "W" in mixing:
        assert cert.check["separate"] is not None and cert.check["separate_error"] == ""
        assert cert.e * (1 - 1e-4) <= cert.check["separate"] <= cert.e * (1 + 1e-4) + 1e-9


def test_lians_order_has_no_theorem_and_both_take_one_step_per_round():
    r = worst_case("dpsgd", 2, 1, 3, 0.1, W=W_lambda(2, 0.5), **SET)
    out = compare(r, lam=0.5)
    assert out["bound"] is None and "Lian" in out["reason"] and "dpsgd-atc" in out["reason"]
    atc = compare(worst_case("dpsgd-atc", 2, 1, 3, 0.1, W=W_lambda(2, 0.5), **SET), lam=0.5)
    assert atc["theorem"] == "dfedsam.thm4.1" and atc["bound"] > atc["worst_case"]
    for algorithm in ("dpsgd", "dpsgd-atc"):
        with pytest.raises(ValueError, match=f"^{algorithm} is one local step and one gossip step"):
            worst_case(algorithm, 2, 2, 3, 0.1, W=W_lambda(2, 0.5))
        with pytest.raises(ValueError, match="K = Q = 1"):
            certify(algorithm, 2, 1, 0.1, W=W_lambda(2, 0.5), Q=2, T=3)


@pytest.mark.parametrize("kwargs, says", [
    (dict(description=None), r"^PEP model 'mine': description must be a non-empty string .*got None; give "
                             r"description='\.\.\.'$"),
    (dict(description="  "), "description must be a non-empty string"),
    (dict(origin=None), r"^PEP model 'mine': origin must be a string \(the plugin's file, origin=__file__; '' for "
                        r"none\), got None$"),
    (dict(origin=3), "origin must be a string"),
])
def test_register_pep_model_checks_its_strings(kwargs, says):
    with isolated():
        with pytest.raises(ValueError, match=says):
            register_pep_model("mine", **{"like": "dpsgd", "description": "mine", "origin": "", **kwargs})
        assert "mine" not in P.ALGORITHMS and "mine" not in P.LIKE


def test_a_user_model_like_dpsgd_runs_lians_order():
    with isolated():
        register_pep_model("mine-lian", "dpsgd", "Lian's D-PSGD under my name", origin="x.py")
        mine = worst_case("mine-lian", 2, 1, 3, 0.1, W=W_lambda(2, 0.5), **SET)
        assert mine.value == worst_case("dpsgd", 2, 1, 3, 0.1, W=W_lambda(2, 0.5), **SET).value
        assert mine.settings["algorithm"] == "mine-lian"
    assert "mine-lian" not in P.ALGORITHMS  # isolated() removed it


@pytest.mark.parametrize("registry, key", [("ALGORITHMS", "dpsgd"), ("METRICS", "dpsgd-atc"), ("_POINT", "dfedadmm")])
def test_the_pep_registries_refuse_replacing_a_built_in_entry(registry, key):
    mapping = getattr(P, registry)
    before = mapping[key]
    with pytest.raises(ValueError, match=f"^the built-in PEP model.* {key!r} cannot be replaced by a plugin"):
        mapping[key] = "something else"
    with pytest.raises(ValueError, match="cannot be removed"):
        del mapping[key]
    with pytest.raises(ValueError, match="cannot be removed"):
        mapping.pop(key)
    assert mapping[key] is before
    with isolated():
        mapping["a-new-one"] = before  # a new name is a plugin's to add
    assert "a-new-one" not in mapping


def test_a_plugin_replacing_a_built_in_pep_model_is_named(tmp_path):
    from dfltheory import plugins

    bad = tmp_path / "bad_pep.py"
    bad.write_text("from dfltheory.pep import problem\nproblem.ALGORITHMS['dpsgd'] = (1, 'not Lian')\n")
    sneaky = tmp_path / "sneaky_pep.py"
    sneaky.write_text("from dfltheory.pep import problem\ndict.__setitem__(problem.METRICS, 'dpsgd', 'average')\n")
    with isolated():
        with pytest.raises(ValueError, match=r"bad_pep.py \(line 2\): the built-in PEP model 'dpsgd' cannot be "
                                             r"replaced by a plugin; register yours under a new name"):
            plugins.load(str(bad))
        try:
            with pytest.raises(ValueError, match=r"sneaky_pep.py \(line 2\): the plugin changed the built-in PEP "
                                                 r"model's metric 'dpsgd'"):
                plugins.load(str(sneaky))
        finally:
            dict.__setitem__(P.METRICS, "dpsgd", "min")  # behind the mapping's methods, as the plugin did
    assert P.ALGORITHMS["dpsgd"][1].startswith("D-PSGD as Lian et al. 2017 wrote it") and P.METRICS["dpsgd"] == "min"
