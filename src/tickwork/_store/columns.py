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
        "_converts", "_flat", "_get_columns", "_make", "_options", "_parts", "_position",
        "_readable",
        "fields", "names", "paths", "writers",
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
        # Writing: every column's attribute path from the record ("firing.state" in a part)
        # and the columns stored otherwise, so that ``values`` is one C call however
        # nested (a schedule's row was three calls and a loop per registration).
        paths: list[str] = []
        #: (column position, converter) of the columns not stored as the record holds them
        self.writers: list[tuple[int, Callable[[Any], Any]]] = []
        for name, (at, part) in zip(self.fields, self._parts, strict=True):
            if part is None:
                paths.append(name)
                if name in write:
                    self.writers.append((at, _writer(write[name])))
            else:
                paths.extend(f"{name}.{path}" for path in part.paths)
                self.writers.extend((at + i, convert) for i, convert in part.writers)
        #: each column's attribute path from the record, in the order of ``names``
        self.paths: tuple[str, ...] = tuple(paths)
        self._get_columns = attrgetter(*paths)

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
        got = self._get_columns(record)
        if len(self.names) == 1:
            got = (got,)
        if not self.writers:
            return got
        stored = list(got)
        for i, convert in self.writers:
            stored[i] = convert(stored[i])
        return tuple(stored)

    def index(self, name: str) -> int:
        """The position of column ``name`` in a row of these columns."""
        return self.names.index(name)


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
    # by member (a str or int enum's member is also found by its value): an enum's
    # ``.value`` is a descriptor, and a schedule's row writes nine of them
    values = {member: member.value for member in kind}

    def value(member: Any) -> Any:
        try:
            return values[member]
        except (KeyError, TypeError):  # neither a member nor its value: Enum's own error
            return kind(member).value

    return value
