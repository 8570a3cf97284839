"""dfltheory.records: a record's dict form is the dict it was read from, key for key and in order."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from dfltheory.records import UNSET, Record, entry, schema_table


@dataclass(frozen=True)
class Pair(Record):
    """A test record."""

    a: int = entry("the first")
    b: float | None = entry("the second")
    c: str = entry("the third", default="x")


def test_from_dict_to_dict_is_the_identity_in_keys_and_order():
    for d in ({"b": None, "a": 1, "c": "x"}, {"c": "x"}, {"c": "y", "b": 2.0, "a": 3}):
        back = Pair.from_dict(d).to_dict()
        assert back == d and json.dumps(back) == json.dumps(d)
    assert Pair.from_dict({"a": 1}).to_dict() == {"a": 1, "c": "x"}  # a declared default is written
    assert list(Pair(b=2.0, a=1).to_dict()) == ["a", "b", "c"] and Pair(b=2.0).a is UNSET  # built: fields' order


def test_an_unknown_key_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="Pair: 'z' is not one of its keys; use a, b, c"):
        Pair.from_dict({"a": 1, "z": 2})
    with pytest.raises(ValueError, match="read from a dict, got list"):
        Pair.from_dict([1])


def test_schema_table_has_one_row_per_field_with_type_and_doc():
    table = schema_table(Pair).splitlines()
    assert table[2:] == ["| `a` | `int` | the first |", "| `b` | `float \\| None` | the second |",
                         "| `c` | `str` | the third |"]
