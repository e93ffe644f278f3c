"""A table's columns named after a record's fields: a row read into its record and a
record written as values, both by field name (procrastinate's ``from_row``).

One ``Columns`` per record type gives a table its column list (for SELECT, INSERT and
SET clauses) and the values to bind, so that no value is read or written at another
column's place and a new table needs one declaration. A field is stored under its own
name unless ``column`` renames it (``start_ms`` in ``start_at``); ``read``/``write``
convert a field's stored value (an enum's string); a field in ``parts`` is a record of
its own whose columns are spliced in. Positions are worked out once, at import: reading
a row costs about what building its record by hand does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields as dataclass_fields
from operator import attrgetter
from typing import Any, Generic, TypeVar

__all__ = ["Columns"]

R = TypeVar("R")


class Columns(Generic[R]):
    """The columns of ``record``'s fields (all of them, in order, unless ``fields``)."""

    __slots__ = ("_get", "_make", "_options", "_reads", "_whole", "_writes", "fields", "names")

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
        names: list[str] = []
        #: per field: its first position in a row, and its part or reading converter
        self._reads: list[tuple[int, Columns[Any] | None, Callable[[Any], Any] | None]] = []
        self._writes: list[tuple[str, Columns[Any] | None, Callable[[Any], Any] | None]] = []
        for name in self.fields:
            part = parts.get(name)
            self._reads.append((len(names), part, read.get(name)))
            self._writes.append((name, part, write.get(name)))
            names.extend(part.names if part else [column.get(name, name)])
        self.names: tuple[str, ...] = tuple(names)
        #: no part and no converter: a row slice is the record's arguments as they are
        self._whole = not (parts or read or write)
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

    def read(self, row: Sequence[Any], start: int = 0) -> R:
        """The record whose columns begin at ``start`` in ``row``."""
        if self._whole:
            return self._make(*row[start : start + len(self.names)])
        args = []
        for at, part, convert in self._reads:
            if part is not None:
                args.append(part.read(row, start + at))
            elif convert is not None:
                args.append(convert(row[start + at]))
            else:
                args.append(row[start + at])
        return self._make(*args)

    def values(self, record: R) -> tuple[Any, ...]:
        """``record``'s values, in the order of ``names``."""
        if self._whole:
            got = self._get(record)
            return got if len(self.fields) > 1 else (got,)
        values: list[Any] = []
        for name, part, convert in self._writes:
            value = getattr(record, name)
            if part is not None:
                values.extend(part.values(value))
            else:
                values.append(value if convert is None else convert(value))
        return tuple(values)

    def index(self, name: str) -> int:
        """The position of column ``name`` in a row of these columns."""
        return self.names.index(name)
