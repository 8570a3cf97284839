import math

import numpy as np
import pytest

from dfltheory.topology import analyze, build, pushsum
from dfltheory.topology.weights import push_sum


def _P(n, edges):
    A = np.zeros((n, n))
    for u, v in edges:
        A[v, u] = 1
    return push_sum(A).toarray()


def test_D_and_a():
    mats = [_P(4, [(0, 1), (0, 2), (0, 3)]), _P(4, [(1, 0)])]
    assert pushsum.max_column_nnz(mats) == 4
    assert pushsum.min_positive_weight(mats) == pytest.approx(0.25)


def test_sliding_window_can_exceed_disjoint_blocks():
    a, b = _P(2, [(0, 1)]), _P(2, [(1, 0)])
    mats = [a, b, b, a]
    assert pushsum.window_B(mats, "disjoint") == 2
    assert pushsum.window_B(mats, "sliding") == 3
    assert pushsum.window_B([a, a, a], "sliding") == math.inf


def test_window_diameter_of_a_directed_cycle():
    mats = [_P(5, [(i, (i + 1) % 5) for i in range(5)])]
    assert pushsum.window_diameter(mats, 1) == 4.0
    assert pushsum.window_diameter(mats, math.inf) == math.inf


def test_sgp_form_against_the_card_numbers():
    # dfedpgp.md §5.8, m = 100, D = 11, B = 1 (tau = 0 form)
    assert pushsum.sgp_constants(100, 11, 1, 1)["vacuous"]  # lambda = -8.09
    r2 = pushsum.sgp_constants(100, 11, 2, 1)
    assert r2["lambda"] == pytest.approx(0.17355, abs=1e-5) and r2["q"] == pytest.approx(0.55780, abs=1e-5)
    r3 = pushsum.sgp_constants(100, 11, 3, 1)
    assert r3["lambda"] == pytest.approx(0.92487, abs=1e-5) and r3["q"] == pytest.approx(0.98066, abs=1e-5)


def test_pgp_form_against_the_card_table():
    # dfedpgp.md §5.8 first row: K_u = 1, Delta = 3, d0 = 11.17e6 (ResNet-18; the card rounds it to 1.1e7)
    r = pushsum.sgp_constants(100, 11, 3, 1, d=11.17e6, K_u=1)
    assert r["lambda"] == pytest.approx(0.999943552607, abs=1e-12)
    assert r["one_minus_q"] == pytest.approx(8.06411e-6, rel=1e-5)
    assert r["C"] == pytest.approx(1.1843e10, rel=1e-3)
    deep = pushsum.sgp_constants(100, 11, 4, 1, d=1.1e7, K_u=20)  # 1 - q = 3.9e-88: far below machine epsilon
    assert deep["log10_one_minus_q"] == pytest.approx(math.log10(3.92279e-88), abs=1e-3)


def test_remark1_form():
    r = pushsum.remark1_q(0.5, 2, 1)
    assert r["q"] == pytest.approx(0.75 ** (1 / 3)) and not r["vacuous"]


def test_nedic_olshevsky_form():
    r = pushsum.nedic_olshevsky_constants(2, 1)  # (1 - 2^-2)^(1/2)
    assert r["q"] == pytest.approx(math.sqrt(0.75)) and r["C"] == 4 and not r["vacuous"]
    deep = pushsum.nedic_olshevsky_constants(100, 1)  # 1 - q = 10^-200 / 100: exact in log space
    assert deep["log10_one_minus_q"] == pytest.approx(-202.0)
    assert pushsum.nedic_olshevsky_constants(100, math.inf)["vacuous"]


def test_measured_rate_of_a_fixed_matrix_is_its_slem():
    topo = build("exponential-directed", 16, weights="push-sum")
    r = analyze("exponential-directed", 16, weights="push-sum", horizon=80)
    assert r["q_measured"] == pytest.approx(topo.spectrum().lam, rel=0.05)
    assert r["delta"] == pytest.approx(1.0)  # circulant: doubly stochastic, weights stay 1


def test_papers_random_out_graph_matches_the_card_simulation():
    # dfedsgpsm.md §5.3: n = 100, 10 random out-neighbours + self: D = 11, Delta 3-4, |lambda_2| ~ 0.35,
    # q_emp ~ 0.31, delta_emp ~ 0.07-0.16 (dfedpgp.md §5.2)
    r = analyze("random", 100, weights="push-sum", k=10, horizon=20)
    assert r["D"] == 11 and r["a"] == pytest.approx(1 / 11)
    assert r["B"] <= 2 and 3 <= r["Delta"] <= 5
    assert 0.3 < r["lambda_mean"] < 0.42
    assert 0.2 < r["q_measured"] < 0.45
    assert 0.03 < r["delta"] < 0.5
    assert r["q_measured"] < r["q"] < 1  # the worst-case constant is far looser than what happens
    assert r["log10_one_minus_q_no"] == pytest.approx(-202.0) and r["C_no"] == 4  # B = 1 on every round


def test_row_stochastic_code_rule_has_no_push_sum_constants():
    r = analyze("code-ws", 100, weights="default")
    assert r["C"] is None and r["q"] is None and r["delta"] is None
    assert "not column-stochastic" in r["notes"]["push_sum"]


def test_kernel_starts_at_its_maximum_and_full_graph_mixes_in_one_round():
    e, wmin = pushsum.product_kernel([np.full((5, 5), 0.2)], horizon=3)
    assert e[0] == pytest.approx(2 * 4 / 5) and np.allclose(e[1:], 0) and np.allclose(wmin, 1)
    q, C = pushsum.fit_rate(e)
    assert q == 0.0 and C == pytest.approx(e[0])


def test_vacuous_means_no_usable_rate():
    """Vacuous iff the lemma gives no q, or q = 1 as a double (1 - q < 2^-54): the ring's 1 - q = 2.7e-24 is vacuous
    (the README calls it so; `topology ring` printed `vacuous False`), the 10-out random graph's 1.4e-3 is not."""
    ring = analyze("ring", 100)
    assert ring["one_minus_q"] == pytest.approx(2.73128543e-24, rel=1e-6) and ring["q"] == 1.0
    assert ring["vacuous"] is True and "q = 1 as a double" in ring["notes"]["C"]
    assert "halves only every 10^23.4 rounds" in ring["notes"]["C"]
    rnd = analyze("random", 100, weights="push-sum", horizon=10)
    assert rnd["q"] < 1 and rnd["vacuous"] is False
    r = pushsum.sgp_constants(100, 11, 3, 1, d=1.0, K_u=1)  # 1 - q = 8e-6: small but a rate
    assert not r["vacuous"]
    for omq_exponent in (15, 17):  # around double precision: 1 - q = 10^-15 is a rate, 10^-17 is not
        E = 1.0
        r = pushsum._form(E, math.log(2 * 10.0 ** -omq_exponent), 1.0, 2.0, "sgp")
        assert r["vacuous"] == (r["q"] == 1.0) == (omq_exponent == 17)
