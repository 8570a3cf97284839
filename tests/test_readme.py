"""The README's Python examples run as written."""

import re
from pathlib import Path

README = (Path(__file__).parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


def test_readme_python_examples_run():
    for block in BLOCKS:
        scope: dict = {}
        exec(compile(block, "README.md", "exec"), scope)
        for name, obj in scope.items():
            if name.startswith("test_") and callable(obj):
                obj()  # a hypothesis test runs its examples when called
