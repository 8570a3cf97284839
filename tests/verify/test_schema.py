"""docs/schema.md is generated from the typed records (python -m dfltheory.verify.schema > docs/schema.md)."""

from __future__ import annotations

from pathlib import Path

from dfltheory.empirical.run_config import RunConfig
from dfltheory.verify.records import Verdict
from dfltheory.verify.schema import markdown

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_schema_is_the_generated_one():
    assert (ROOT / "docs" / "schema.md").read_text() == markdown(), \
        "docs/schema.md is stale: run python -m dfltheory.verify.schema > docs/schema.md"


def test_every_field_is_a_row_and_the_train_ranges_are_the_checked_ones():
    text = markdown()
    for record in (RunConfig, Verdict):
        for key in record.keys():
            assert f"| `{key}` |" in text, key
    assert "| `lr` | `float \\| None` | local learning rate eta | a finite number > 0 |" in text
    assert "docs/schema.md" in (ROOT / "docs" / "verify.md").read_text()  # verify.md points here
