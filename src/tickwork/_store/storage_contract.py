"""The storage part of the store contract (``store.storage``): what the database holds.
``sql_storage.py`` implements it on both backends.
"""

from __future__ import annotations

from typing import Protocol

from .._rules.retention import Cutoffs
from .._values.models import (
    StorageStats,
)

__all__ = ["StorageStore"]


class StorageStore(Protocol):
    """What the database holds, and what pruning would remove."""

    def storage_stats(self, *, cutoffs: Cutoffs) -> StorageStats:
        """Rows and bytes per tickwork table, the oldest ended run's end, and the rows
        ``prune_batch`` would remove under ``cutoffs`` (ended runs; history entries beyond
        each schedule's ``KEEP_HISTORY`` newest), read in one transaction."""
        ...
