"""The PEP and certificate interpreters of the step programs (dfltheory.pep.program_pep) against the numbers of the
hand-written models they replaced (issue 35 item 2): ``worst_case`` and ``certify`` now build their problems from
the programs; each value below was computed by the previous ``problem._build`` / ``certify._round`` (commit ae9e7e0)
on the same instance. A plugin's program gets train, pep and certify with no further code."""

from pathlib import Path

import numpy as np
import pytest

from dfltheory import plugins
from dfltheory.pep import certify, worst_case
from dfltheory.pep.program_pep import one_round, rounds
from dfltheory.pep.problem import METRICS, program_params, register_pep_model, register_program
from dfltheory.program import PROGRAMS, Metric, NotExpressible, Program, Slot
from dfltheory.testing.registries import isolated

W = [[0.75, 0.25], [0.25, 0.75]]  # W(0.5), m = 2
P = [[0.5, 1 / 3], [0.5, 2 / 3]]  # column-stochastic, not doubly stochastic: push-sum weights != 1
P3 = [[0.5, 0, 1 / 3], [0.5, 0.5, 1 / 3], [0, 0.5, 1 / 3]]
CLASS = (-0.5, 0.5)
BASE = dict(m=2, eta=0.1, sigma_g=1.0, B=2.0)
GT = str(Path(__file__).parents[1] / "plugins" / "gradient_tracking.py")

#: (model, instance, worst case by the hand-written _build): every model, both mixings, sequences, sigma_g = 0 at every
#: point, gap='last', Q = 2, DFedCata's xi-weighted PEP, push-sum on a P with weights != 1
WORST_CASES = [
    ("dpsgd", dict(K=1, T=3, W=W), 1.4553751188076136),
    ("dpsgd", dict(K=1, T=3, spectral=CLASS), 1.4553751188076136),
    ("dpsgd-atc", dict(K=1, T=3, W=W), 1.4470794934601328),
    ("dfedavg", dict(K=2, T=3, W=W), 1.1810135129791097),
    ("dfedavg", dict(K=1, T=3, spectral=CLASS), 1.4470794952304726),
    ("dfedavg", dict(K=1, T=3, W=W, sigma_g=0.0, heterogeneity_at="all"), 1.4388489211326283),
    ("dfedavg", dict(K=1, T=3, W=[W, np.eye(2).tolist()]), 1.447079493459675),
    ("dfedavg", dict(K=1, T=4, spectral=CLASS, time_varying=True, m=3, sigma_g=0.5), 1.2702844256209547),
    ("dfedavg", dict(K=1, T=3, W=W, gap="last"), 4.000000891876495),
    ("dfedavg-mgs", dict(K=1, T=3, W=W, Q=2), 1.4429561005831357),
    ("dfedavg-mgs", dict(K=1, T=4, spectral=CLASS, Q=2), 1.2694329373188415),
    ("dfedsam-unnormalized", dict(K=1, T=3, W=W, rho=0.05), 1.4609438064486466),
    ("dfedsam-unnormalized", dict(K=2, T=2, spectral=CLASS, rho=0.05), 1.4744142482035585),
    ("dfedadmm", dict(K=2, T=3, W=W, eta=0.05, lam_pen=0.1), 1.651658299483613),
    ("dfedadmm", dict(K=1, T=3, spectral=CLASS, eta=0.01, lam_pen=0.01), 1.960472526725732),
    ("dfedadmm-sam-unnormalized", dict(K=1, T=3, W=W, eta=0.05, lam_pen=0.1, rho=0.05), 1.6487481315191705),
    ("dfedcata-a", dict(K=1, T=3, W=W, lam_pen=1.0, beta=0.3), 1.6443926376573061),
    ("dfedcata-a", dict(K=2, T=3, spectral=CLASS, lam_pen=1.0, beta=0.3), 1.4238299256706504),
    ("dfedcata-b", dict(K=1, T=3, W=W, lam_pen=1.0, beta=0.3), 1.5156174601039667),
    ("dfedcata-b", dict(K=1, T=3, spectral=CLASS, lam_pen=1.0, beta=0.3, xi_weight=0.5), 1.5149032231650628),
    ("dfedcata-b", dict(K=1, T=3, W=W, lam_pen=1.0, beta=0.3, sigma_g=0.0), 1.5145156577707288),
    ("sgp", dict(K=1, T=3, W=P), 1.644213967854902),
    ("sgp", dict(K=1, T=3, spectral=CLASS), 1.6447225060599664),
    ("dfedsgpm", dict(K=2, T=3, W=P, eta=0.02, alpha=0.5), 1.8130579919028829),
    ("dfedsgpm", dict(K=1, T=3, m=3, W=P3, alpha=0.5), 1.644991820600292),
    ("dfedsgpm", dict(K=1, T=3, W=[P, W], alpha=0.5), 1.6442139686984338),
    ("dfedsgpsm-unnormalized", dict(K=1, T=3, W=P, alpha=0.5, rho=0.05), 1.6525703367335214),
]

#: (model, instance, e, tau, bound at T = 5) of the hand-written one-round certificate: one case per family
CERTIFICATES = [
    ("dfedavg", dict(K=1, T=5, W=W), 0.004966097390621371, 0.09083883035327744, 1.1812800179342233),
    ("dpsgd", dict(K=1, T=5, lam=0.5), 0.010395279424908921, 0.08671733458868403, 1.2299195053196492),
    ("dfedsam-unnormalized", dict(K=1, T=5, W=W, rho=0.05), 0.0034522215659080757, 0.08963517489792139,
     1.180851282584263),
    ("dfedadmm", dict(K=1, T=5, W=W, eta=0.01, lam_pen=0.01), 6.757539813406765e-05, 0.009913719390169717,
     1.9225122217215898),
    ("dfedcata-a", dict(K=1, T=5, W=W, lam_pen=1.0, beta=0.3), 0.00262677665285338, 0.0927458255446254,
     1.3921032478811526),
    ("dfedcata-b", dict(K=1, T=5, W=W, lam_pen=1.0, beta=0.3), 0.006214035261223216, 0.1262894258752567,
     1.2336006103005666),
    ("dfedsgpm", dict(K=2, T=5, W=W, eta=0.02, alpha=0.5), 0.0016487806223040025, 0.04756121554237325,
     1.6600117915916266),
]


@pytest.mark.parametrize("name,kw,value", WORST_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(WORST_CASES)])
def test_the_derived_worst_case_is_the_hand_written_one(name, kw, value):
    r = worst_case(name, **{**BASE, **kw})
    assert r.value == pytest.approx(value, rel=1e-5)
    assert r.diagnostics["interpolation"]["interpolable"]


@pytest.mark.parametrize("name,kw,e,tau,bound", CERTIFICATES, ids=[c[0] for c in CERTIFICATES])
def test_the_derived_certificate_is_the_hand_written_one(name, kw, e, tau, bound):
    c = certify(name, **{**BASE, **kw})
    assert c.check["proved"]
    assert c.bound(5) == pytest.approx(bound, rel=1e-5)
    assert c.tau == pytest.approx(tau, rel=1e-4) and c.e == pytest.approx(e, rel=1e-4, abs=1e-9)


def test_the_potential_is_read_from_the_programs_state():
    from dfltheory.pep.certify import POTENTIALS

    assert POTENTIALS["dfedadmm"] == ("admm-state", ("x_i - x_bar", "ghat_i - ghat_bar"),
                                      ("x_bar - x_bar_prev", "ghat_bar"))
    assert POTENTIALS["dfedcata-b"] == ("cata-state", ("a_i - a_bar", "a_prev_i - a_prev_bar"), ("a_bar - a_prev_bar",))
    assert POTENTIALS["dfedcata-a"][1:] == (("y_i - y_bar",), ())
    assert POTENTIALS["dfedsgpm"][1:] == POTENTIALS["dfedavg"][1:] == (("x_i - x_bar",), ())  # momentum is reset


def test_normalised_sam_is_declared_not_expressible_and_its_relaxation_is():
    """SAM's g/||g|| is a declared nonlinear step: the PEP interpreter refuses it; the -unnormalized program runs."""
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    problem = PEP()
    fs = [problem.declare_function(SmoothFunction, L=1.0) for _ in range(2)]
    x0 = problem.set_initial_point()
    query = lambda i, p: fs[i].oracle(p)  # noqa: E731
    for name in ("dfedsam", "dfedadmm-sam", "dfedsgpsm"):
        program = PROGRAMS[name]
        with pytest.raises(NotExpressible, match="normalised step"):
            rounds(program, program_params(program, lam_pen=0.1), query, None, 2, 1, 2, 0.1, x0, [], lambda t, p: None)
    ok = PROGRAMS["dfedsam-unnormalized"]
    rounds(ok, program_params(ok, rho=0.05, Q=1), query, _identity(), 2, 1, 2, 0.1, x0, [], lambda t, p: None)


def _by_loss(ops, s, p):
    s["x"] = ops.push_sum_by_loss(s["x"])


@pytest.mark.parametrize("name,given", [("fedavg", {}), ("scaffold", {}), ("dfedpgp", {"K_v": 1}), ("by-loss", {}),
                                        ("dfedcata-a", {"lam_pen": 0.1, "beta": 0.5, "clip": 0.5})])
def test_a_torch_only_step_is_refused_by_name_never_an_attribute_error(name, given):
    """The algebra's torch-only steps (dfltheory.program.TORCH_ONLY: a server's average and sum, the split's masks,
    clipping, push-sum by losses) refuse the PEP with NotExpressible naming the step and the way out; DFedCata's
    program without clipping (its default, and with weight decay, a linear step) is a PEP model."""
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    from dfltheory.program import TORCH_ONLY

    problem = PEP()
    fs = [problem.declare_function(SmoothFunction, L=1.0) for _ in range(2)]
    x0 = problem.set_initial_point()
    query = lambda i, p: fs[i].oracle(p)  # noqa: E731
    program = PROGRAMS[name] if name in PROGRAMS else Program(  # DFedSGPSM-S's communication (its SAM is refused first)
        name, "push-sum by losses", PROGRAMS["dfedavg"].direction, _by_loss, mixing="push-sum")
    params = program.bind(**{k: v for k, v in given.items() if k in program.params})
    with pytest.raises(NotExpressible, match=r"step ops\.(\w+) .*is torch only: no PEP expresses it; train") as err:
        rounds(program, params, query, _identity(), 2, 2, 3, 0.1, x0, [], lambda t, p: None)
    assert err.match("|".join(TORCH_ONLY))
    if name == "dfedcata-a":
        ok = program_params(program, lam_pen=0.1, beta=0.5)
        rounds(program, ok, query, _identity(), 2, 2, 3, 0.1, x0, [], lambda t, p: None)
        decayed = program.bind(lam_pen=0.1, beta=0.5, weight_decay=0.01)
        rounds(program, decayed, query, _identity(), 2, 2, 3, 0.1, x0, [], lambda t, p: None)


def _identity():
    from dfltheory.pep.mixing import ExplicitMixing

    return ExplicitMixing(np.eye(2))


@pytest.fixture
def gradient_tracking():
    """tests/plugins/gradient_tracking.py loaded, its program removed afterwards with the other registries."""
    before = set(PROGRAMS)
    with isolated():
        plugins.load(GT)
        assert set(PROGRAMS) > before
        yield
    assert set(PROGRAMS) == before  # isolated() restores the programs with every other registry


def test_a_plugin_program_gets_train_pep_and_certify(gradient_tracking, tmp_path):
    """Gradient tracking and D-PSGD with a heavy-ball momentum, new algorithms written once as programs: trained (a
    few rounds, the public runner), their fixed-T worst cases and certificates, which lie above the worst cases."""
    from dfltheory.empirical import runner
    from dfltheory.empirical.rundir import read_records

    for algo in ("gt-atc", "dpsgd-hb"):
        runner.run({"dataset": "synthetic-robust", "n": 4, "rounds": 3, "K": 1, "lr": 0.05, "topology": "ring",
                    "progress": False, "algo": algo, "out": tmp_path / algo})
        losses = [r["train_loss"] for r in read_records(tmp_path / algo / "metrics.jsonl")]
        assert len(losses) >= 2 and np.all(np.isfinite(losses)) and losses[-1] < losses[0]
    r = worst_case("gt-atc", 2, 1, 3, 0.1, W=W, sigma_g=1.0, B=2.0)
    assert 0 < r.value < 2.0 and r.diagnostics["interpolation"]["interpolable"]
    from dfltheory.pep.compare import compare

    cmp = compare(r)  # no theorem attached: no built-in theorem's bound is borrowed
    assert cmp["theorem"] is None and cmp["bound"] is None and "no theorem is attached to 'gt-atc'" in cmp["reason"]
    c = certify("gt-atc", 2, 1, 0.1, W=W, sigma_g=1.0, B=2.0, T=3)
    assert c.potential == "program state" and c.components["agent"] == ["x_i - x_bar", "y_i - y_bar", "g_i - g_bar"]
    assert c.bound(3) >= r.value * (1 - 1e-6)
    for T, hb in ((3, 1.3552018), (5, 0.9488083)):  # momentum alpha = 0.5: an informative certificate, proved
        r = worst_case("dpsgd-hb", 2, 1, T, 0.1, W=W, sigma_g=1.0, B=2.0, alpha=0.5)
        c = certify("dpsgd-hb", 2, 1, 0.1, W=W, sigma_g=1.0, B=2.0, alpha=0.5, T=T)
        assert r.value == pytest.approx(hb, rel=1e-5)
        assert c.check["proved"] and r.value * (1 - 1e-6) <= c.bound(T) <= 1.6 * r.value
        assert c.components == {"agent": ["x_i - x_bar", "v_i - v_bar"], "common": ["v_bar"]}
    with pytest.raises(ValueError, match="does not read lam_pen"):
        worst_case("dpsgd-hb", 2, 1, 3, 0.1, W=W, lam_pen=0.1)
    with pytest.raises(ValueError, match="runs K = 1"):
        worst_case("dpsgd-hb", 2, 2, 3, 0.1, W=W)


def test_gradient_tracking_without_mixing_is_gradient_descent_on_each_f_i(gradient_tracking):
    """With W = I the tracker is each agent's own gradient (y = g telescopes): the program's PEP is DFedAvg's at K = 1,
    W = I, an independent check of the plugin's derived PEP."""
    kw = dict(sigma_g=1.0, B=2.0, W=np.eye(2).tolist())
    assert worst_case("gt-atc", 2, 1, 3, 0.1, **kw).value == pytest.approx(
        worst_case("dfedavg", 2, 1, 3, 0.1, **kw).value, rel=1e-5)
    # with mixing the means agree for two rounds (x^1 is D-PSGD's, mean(y^1) = mean grad f_i(x_i^1)), then the
    # trackers differ from the own gradients: T = 4 tells the two algorithms apart
    for T, same in ((3, True), (4, False)):
        gt = worst_case("gt-atc", 2, 1, T, 0.1, W=W, sigma_g=1.0, B=2.0).value
        assert (gt == pytest.approx(worst_case("dfedavg", 2, 1, T, 0.1, W=W, sigma_g=1.0, B=2.0).value,
                                    rel=1e-5)) is same


def test_a_theorem_must_bound_the_models_quantity():
    """min_t <= (1/T) sum_t: a theorem on the average may judge a min model; a min theorem cannot judge an average."""
    average = Program("avg-dfedavg", "DFedAvg measured by the average", PROGRAMS["dfedavg"].direction,
                      PROGRAMS["dfedavg"].communicate, metric=Metric("average"), params={"Q": 1})
    with isolated():
        with pytest.raises(ValueError, match="bounds the min"):
            register_program(average, theorem="dfedsam.thm4.1")
        with pytest.raises(ValueError, match="bounds the min"):
            register_pep_model("admm-vs-min", "dfedadmm", "DFedADMM against a min theorem", theorem="dfedsam.thm4.1")
        register_pep_model("avg-judges-min", "dfedavg", "DFedAvg against an average theorem",
                           theorem="dfedadmm.thm1")
        assert METRICS["avg-judges-min"] == "min"
        with pytest.raises(ValueError, match="measures the 'average'"):
            register_program(average, metric="min")
    assert "avg-dfedavg" not in PROGRAMS


def test_a_model_of_the_last_iterate_bounds_its_last_round():
    """Metric('last'): ||grad f(x_bar^{T-1})||^2, at least the min over t (the same problem, one term of the min); at
    T = 1 both are 2 L Delta."""
    dfedavg = PROGRAMS["dfedavg"]
    last = Program("dfedavg-last", "DFedAvg, last round", dfedavg.direction, dfedavg.communicate,
                   metric=Metric("last"), params={"Q": 1})
    with isolated():
        before = set(PROGRAMS)
        try:
            register_program(last)
            assert METRICS["dfedavg-last"] == "last"
            kw = dict(W=W, sigma_g=1.0, B=2.0)
            assert worst_case("dfedavg-last", 2, 1, 1, 0.1, **kw).value == pytest.approx(2.0, rel=1e-5)
            assert worst_case("dfedavg-last", 2, 1, 3, 0.1, **kw).value > 1.001 * worst_case(
                "dfedavg", 2, 1, 3, 0.1, **kw).value
        finally:
            for name in set(PROGRAMS) - before:
                del PROGRAMS[name]


def test_a_program_states_its_slots_and_parameters():
    with pytest.raises(ValueError, match="init must be"):
        Slot("v", init="one")
    with pytest.raises(ValueError, match="either a slot or built by start"):
        Program("bad", "no x", PROGRAMS["dfedavg"].direction, PROGRAMS["dfedavg"].communicate, slots=(Slot("v"),))
    with pytest.raises(ValueError, match="needs lam_pen"):
        PROGRAMS["dfedadmm"].bind()
    with pytest.raises(ValueError, match="not \\['mu'\\]"):
        PROGRAMS["dfedavg"].bind(mu=1.0)


def test_a_program_whose_name_is_taken_is_refused_before_anything_is_registered():
    """A program named like a training algorithm that is no program (dfedcata) is refused whole, the same way twice:
    no registry keeps a half-registered program."""
    import dataclasses

    from dfltheory.pep.problem import ALGORITHMS, register_program

    clash = dataclasses.replace(PROGRAMS["dfedavg"], name="dfedcata")
    with isolated():
        for _ in range(2):
            with pytest.raises(ValueError, match="algorithm name 'dfedcata' is taken"):
                register_program(clash)
        assert "dfedcata" not in PROGRAMS and "dfedcata" not in ALGORITHMS
