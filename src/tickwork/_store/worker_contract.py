"""The workers part of the store contract (``store.workers``): each worker's record.
``sql_workers.py`` implements it on both backends.
"""

from __future__ import annotations

from typing import Protocol

from .._values.models import (
    WorkerInfo,
)
from .._values.records import WorkerRecord

__all__ = ["WorkerStore"]


class WorkerStore(Protocol):
    """Workers' records: renewed while they live, kept a while after."""

    def renew_worker(self, worker: WorkerRecord, *, now_ms: int) -> None:
        """Record ``worker`` as seen at ``now_ms``: insert its row, or rewrite it whole (what
        it serves may have grown; a stop recorded earlier is forgotten). In the same short
        write, forget at most ``_liveness.FORGET_BATCH`` workers not seen for
        ``_liveness.FORGET_AFTER_MS``, oldest first (rows another renewal holds are left to
        it)."""
        ...

    def stop_worker(self, worker_id: str, *, now_ms: int) -> bool:
        """Record that the worker stopped gracefully at ``now_ms`` (listed, not alive, until
        forgotten). False when there is no such worker."""
        ...

    def list_workers(self, *, now_ms: int) -> list[WorkerInfo]:
        """The workers seen within ``_liveness.FORGET_AFTER_MS`` of ``now_ms``, gone ones
        included, oldest start first; ``alive`` as ``_liveness.worker_alive`` says at
        ``now_ms``."""
        ...
