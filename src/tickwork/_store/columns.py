"""A table's columns named after a record's fields: a row read into its record and a
record written as values, both by field name (procrastinate's ``from_row``).

One ``Columns`` per record type gives a table its column list (for SELECT, INSERT and
SET clauses) and the values to bind, so that no value is read or written at another
column's place and a new table needs one declaration. A field is stored under its own
name unless ``column`` renames it (``start_ms`` in ``start_at``); ``read``/``write``
convert a field's stored value (an enum class: a member from its value, and back); a
field in ``parts`` is a record of its own whose columns are spliced in. Positions are
worked out once, at import: reading a row costs about what building its record by hand
does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields as dataclass_fields
from enum import Enum
from operator import attrgetter
from typing import Any, Generic, TypeVar

__all__ = ["Columns"]

R = TypeVar("R")


class Columns(Generic[R]):
    """The columns of ``record``'s fields (all of them, in order, unless ``fields``)."""

    __slots__ = (
        "_converts", "_flat", "_get", "_make", "_options", "_parts", "_position", "_readable",
        "_stores",
        "fields", "names",
    )  # fmt: skip

    def __init__(
        self,
        record: Callable[..., R],
        *,
        column: Mapping[str, str] | None = None,
        read: Mapping[str, Callable[[Any], Any]] | None = None,
        write: Mapping[str, Callable[[Any], Any]] | None = None,
        parts: Mapping[str, Columns[Any]] | None = None,
        fields: Sequence[str] | None = None,
    ) -> None:
        column, read, write, parts = column or {}, read or {}, write or {}, parts or {}
        self._options = {"column": column, "read": read, "write": write, "parts": parts}
        self.fields: tuple[str, ...] = tuple(
            fields or [field.name for field in dataclass_fields(record)]  # type: ignore[arg-type]
        )
        self._make = record
        every = [field.name for field in dataclass_fields(record)]  # type: ignore[arg-type]
        #: a row is read into the record by position: only a leading run of its fields
        #: can be (a later field left out would take an earlier one's value)
        self._readable = list(self.fields) == every[: len(self.fields)]
        self._position = {name: i for i, name in enumerate(self.fields)}
        names: list[str] = []
        #: per field: its first column in a row and its part (None: a column of its own)
        self._parts: list[tuple[int, Columns[Any] | None]] = []
        for name in self.fields:
            part = parts.get(name)
            self._parts.append((len(names), part))
            names.extend(part.names if part else [column.get(name, name)])
        self.names: tuple[str, ...] = tuple(names)
        #: no part: field i is column i, so a row's slice is the record's arguments, but
        #: for the few converted (reading) or stored otherwise (writing)
        self._flat = not any(name in parts for name in self.fields)
        kept = self.fields
        self._converts = [(i, _reader(read[name])) for i, name in enumerate(kept) if name in read]
        self._stores = [(i, _writer(write[name])) for i, name in enumerate(kept) if name in write]
        self._get = attrgetter(*self.fields)

    def select(self, alias: str = "") -> str:
        """The column list, each name prefixed with ``alias.`` when given."""
        prefix = f"{alias}." if alias else ""
        return ", ".join(prefix + name for name in self.names)

    def assign(self) -> str:
        """The SET clause that writes every column from a placeholder."""
        return ", ".join(f"{name} = ?" for name in self.names)

    def without(self, *fields: str) -> Columns[R]:
        """These columns but ``fields`` (to write: a SET that leaves the key alone)."""
        kept = [name for name in self.fields if name not in fields]
        return Columns(self._make, fields=kept, **self._options)  # type: ignore[arg-type]

    def read(self, row: Sequence[Any], start: int = 0, **given: Any) -> R:
        """The record whose columns begin at ``start`` in ``row``; ``given`` fields take
        the values given instead of the row's (as a claim leaves a run)."""
        if not self._readable:
            raise TypeError(f"{self._make} leaves out a field before its last: write-only")
        if self._flat:
            args = list(row[start : start + len(self.names)])
        else:
            args = [
                row[start + at] if part is None else part.read(row, start + at)
                for at, part in self._parts
            ]
        for i, convert in self._converts:
            args[i] = convert(args[i])
        if given:
            for name, value in given.items():
                args[self._position[name]] = value
        return self._make(*args)

    def values(self, record: R) -> tuple[Any, ...]:
        """``record``'s values, in the order of ``names``."""
        if not self._flat:
            values: list[Any] = []
            for (_, part), value in zip(self._parts, self._get_all(record), strict=True):
                values.extend((value,) if part is None else part.values(value))
            return tuple(values)
        if not self._stores:
            return self._get_all(record)
        stored = list(self._get_all(record))
        for i, convert in self._stores:
            stored[i] = convert(stored[i])
        return tuple(stored)

    def index(self, name: str) -> int:
        """The position of column ``name`` in a row of these columns."""
        return self.names.index(name)

    def _get_all(self, record: R) -> tuple[Any, ...]:
        got = self._get(record)
        return got if len(self.fields) > 1 else (got,)


def _reader(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``convert``, but an enum's members looked up by value in a dict: ``Enum(value)``
    costs five times as much, and a firing pass reads four enums a schedule."""
    if not (isinstance(convert, type) and issubclass(convert, Enum)):
        return convert
    members = {member.value: member for member in convert}

    def member(value: Any) -> Any:
        found = members.get(value)
        return convert(value) if found is None else found  # unknown: Enum's own error

    return member


def _writer(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``convert``, but an enum class stores its member's value (a text naming a member,
    as tests pass, is looked up first)."""
    if not (isinstance(convert, type) and issubclass(convert, Enum)):
        return convert
    kind = convert

    def value(member: Any) -> Any:
        return member.value if isinstance(member, kind) else kind(member).value

    return value
