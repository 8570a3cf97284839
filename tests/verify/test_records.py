"""The verify layer's typed records read and write its JSON unchanged: verify.json's verdict rows, the committed
claims results, the report's sections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dfltheory.verify.records import ClaimResult, ReportSections, Verdict

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = json.loads((Path(__file__).with_name("records_fixture.json")).read_text())


def _same(record_type, rows) -> int:
    for row in rows:
        back = record_type.from_dict(row).to_dict()
        assert json.dumps(back) == json.dumps(row)  # every key, value and the order
    return len(rows)


def test_verify_json_verdict_rows_and_informative_verdicts_round_trip():
    assert _same(Verdict, FIXTURE["verdicts"]) == 6 and _same(Verdict, FIXTURE["informative_at"]) == 2


@pytest.mark.parametrize("plan", ["mnist", "fashion-mnist", "full"])
def test_the_committed_claims_rows_round_trip(plan):
    rows = json.loads((ROOT / "docs" / f"claims-{plan}.json").read_text())["claims"]
    assert _same(ClaimResult, rows) >= 1


def test_a_key_outside_the_schema_is_refused_by_name():
    with pytest.raises(ValueError, match="Verdict: 'bund' is not one of its keys"):
        Verdict.from_dict({"verdict": "holds", "bund": 1.0})
    with pytest.raises(ValueError, match="ClaimResult: 'verdicts' is not one of its keys"):
        ClaimResult.from_dict({"id": "x", "verdicts": []})


def test_report_data_returns_the_sections_of_its_record(monkeypatch, tmp_path):
    from dfltheory.verify import report_data as data

    class Quiet:
        def stage(self, name): ...

        def skip(self, name, why): ...

        def step(self, *args): ...

    monkeypatch.setattr(data, "rates_section", lambda *a, **k: [])  # not under test: for time
    monkeypatch.setattr(data, "experiments_section", lambda *a, **k: [])
    rep, _ = data.report_data(tmp_path, Quiet(), train=False, n=8, verify=False, network=False, pep=False,
                              claims=False)
    assert list(rep) == [k for k in ReportSections.keys() if k in rep] and "claims_stored" in rep
    assert list(rep["topology"]) == ["n", "rows"] and rep["topology"]["n"] == 8 and rep["topology"]["rows"]
    assert list(rep["catalog"]) == ["count", "by_paper", "by_kind", "by_tag"] and rep["catalog"]["count"] > 10
