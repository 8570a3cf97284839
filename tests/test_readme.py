"""The README's Python examples run as written and give what the README says they give."""

import re
from pathlib import Path

import pytest

README = (Path(__file__).parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def run_block(block: str) -> dict:
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)
    return scope


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


def test_readme_check_example_gives_its_numbers():
    scope = run_block(BLOCKS[0])
    assert scope["c"]["lambda"] == pytest.approx(0.998684, abs=1e-6)  # ring of 100, docs/topology.md
    res = scope["res"]
    assert res.value > 0 and res.dominant_term == "topology" and all(v.holds for v in res.conditions)
    assert scope["thm"].largest("eta", K=5, L=10) == pytest.approx(1 / (10 * 5 * 10))  # eta <= 1/(10 K L)
    assert "thm.solve(\"eta\", \"paper\", K=5, L=10).text()   # the paper's conditions alone: 'eta in (0, 0.002]'" \
        in BLOCKS[0] and scope["thm"].solve("eta", "paper", K=5, L=10).text() == "eta in (0, 0.002]"


def test_readme_property_test_example_passes_and_can_fail():
    scope = run_block(BLOCKS[1])
    # hypothesis draws its examples when the test is called: its assertion raises on a counterexample
    assert scope["test_gossip_contracts_by_lambda"]() is None
    wrong = BLOCKS[1].replace("spectrum(W).lam * dev(X)", "0.5 * spectrum(W).lam * dev(X)")
    assert wrong != BLOCKS[1]
    with pytest.raises(AssertionError):  # a contraction claimed too strong is caught by the same property
        run_block(wrong)["test_gossip_contracts_by_lambda"]()


def test_readme_plugin_example_registers_a_paper_that_check_and_verify_accept():
    from dfltheory.bounds import get
    from dfltheory.testing.registries import isolated
    from dfltheory.verify.instances import resolve_targets

    block = next(b for b in BLOCKS if "register_paper" in b)
    with isolated():
        run_block(block)
        check = get("minisgd.thm1").check(eta=0.1, L=1, T=100, sigma_l=1, m=8, f0_minus_fstar=1)
        assert check.value == pytest.approx(0.2 + 0.0125) and all(v.holds for v in check.conditions)
        assert [t.theorem for t in resolve_targets(["minisgd"])["minisgd"]] == ["minisgd.thm1"]
    with pytest.raises(KeyError):
        get("minisgd.thm1")  # gone with the block
