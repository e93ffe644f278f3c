"""Versioned schema migrations: ``<dialect>/NNNN_name.sql``, applied in order, once each."""

from __future__ import annotations

from importlib import resources

__all__ = ["pending", "statements"]


def _files(dialect: str) -> list[tuple[int, str]]:
    folder = resources.files(__package__).joinpath(dialect)
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            found.append((int(entry.name.split("_", 1)[0]), entry.name))
    return sorted(found)


def pending(dialect: str, current: int) -> list[tuple[int, str]]:
    """``(version, file name)`` of each migration newer than ``current``, in order."""
    return [(version, name) for version, name in _files(dialect) if version > current]


def statements(dialect: str, name: str) -> list[str]:
    """The SQL statements of one migration file (separated by ``;`` at a line end)."""
    text = resources.files(__package__).joinpath(dialect, name).read_text("utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return [p.strip().rstrip(";") for p in "\n".join(lines).split(";\n") if p.strip()]
