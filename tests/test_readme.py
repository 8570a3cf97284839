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
