"""Typed records at the package's interfaces: a dataclass whose fields are the schema of a dict that is written as
JSON or hashed (a run config, a verdict, a claim's row, a report section), read and written without changing it.

A record's field is declared with :func:`entry`: its type (the annotation) and a one-line doc. A key the dict does
not give stays :data:`UNSET` and out of :meth:`Record.to_dict`, a given ``None`` is kept, and a record read by
:meth:`Record.from_dict` writes its keys back in the order it read them, so that
``Rec.from_dict(d).to_dict() == d`` holds key for key and in order (JSON files and hashes of them stay the same). A
key the record does not declare is a ValueError naming it. :func:`schema_table` writes a record's fields as the
Markdown table of the documentation (docs/schema.md, generated).

A bottom-layer module: each pillar declares its records in its own layer with it.
"""

from __future__ import annotations

from dataclasses import MISSING, field, fields
from typing import Any


class _Unset:
    """A key the dict does not give."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def entry(doc: str, default=UNSET):
    """A record's field: ``doc`` is its one line in the schema; absent from the dict by default (:data:`UNSET`)."""
    return field(default=default, metadata={"doc": doc})


class Record:
    """Base of the records (each a ``@dataclass``): the dict form, key for key (see the module docstring)."""

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_dict(cls, data):
        """The record of ``data`` (a dict); a key that is not a field is a ValueError naming it and the fields."""
        if not isinstance(data, dict):
            raise ValueError(f"a {cls.__name__} is read from a dict, got {type(data).__name__}")
        names = cls.keys()
        unknown = [k for k in data if k not in names]
        if unknown:
            raise ValueError(f"{cls.__name__}: {unknown[0]!r} is not one of its keys; use {', '.join(names)} "
                             "(docs/schema.md)")
        missing = [f.name for f in fields(cls) if f.default is MISSING and f.name not in data]
        if missing:
            raise ValueError(f"{cls.__name__}: {missing[0]!r} is required; give it")
        record = cls(**data)
        object.__setattr__(record, "_order", tuple(data))  # to_dict writes the keys back in this order
        return record

    def to_dict(self) -> dict:
        """The given fields as a dict: in the order :meth:`from_dict` read them, else in the fields' order."""
        order = getattr(self, "_order", ())
        names = [*order, *(n for n in self.keys() if n not in order)]
        return {n: getattr(self, n) for n in names if getattr(self, n) is not UNSET}


def schema_rows(cls) -> list[tuple[str, str, str]]:
    """(key, type, doc) of each field of record ``cls``, in its order."""
    return [(f.name, str(f.type), f.metadata.get("doc", "")) for f in fields(cls)]


def schema_table(cls, allowed: dict | None = None) -> str:
    """The Markdown table of record ``cls``: one row per key with its type and doc, and with ``allowed`` (key -> a
    constraint of :mod:`dfltheory.constraints`) a column of the values each key takes."""
    head = ["key", "type", "meaning"] + (["allowed"] if allowed else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, kind, doc in schema_rows(cls):
        cells = [f"`{name}`", "`" + kind.replace("|", "\\|") + "`", doc]  # a | inside a cell ends it
        if allowed:
            cells.append(allowed[name].allowed() if name in allowed else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
