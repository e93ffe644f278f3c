"""Workers in SQL (migrations 0007, 0023): each worker's own row, renewed by its heartbeat.

A renewal is one short write of the worker's own row (an upsert, so a row removed while
the worker could not reach the database comes back) plus the removal of a bounded batch
of rows not renewed for a day. Whether a worker is alive is ``_liveness``'s rule, applied
as rows are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._rules.liveness import FORGET_BATCH, seen_since_ms, worker_alive
from .._values.clock import from_ms
from .._values.ids import canonical_json, from_json
from .._values.models import WorkerInfo
from .._values.records import WorkerRecord
from .columns import Columns
from .transaction import Database, Transaction

__all__ = ["WORKER", "WORKER_COLUMNS", "WorkersSql"]


def _names(names: tuple[str, ...]) -> str:
    """A worker's pools or workflows as stored: a JSON list."""
    return canonical_json(list(names))


def _tuple(stored: str) -> tuple[str, ...]:
    return tuple(from_json(stored))


def _waiting_json(waiting: tuple[tuple[str, str], ...]) -> str | None:
    """The schedules a worker holds back as stored (migration 0023): a JSON object of key
    to calendar, NULL for none."""
    return canonical_json(dict(waiting)) if waiting else None


def _waiting(stored: str | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(from_json(stored).items())) if stored else ()


#: a worker as it records itself
WORKER: Columns[WorkerRecord] = Columns(
    WorkerRecord,
    column={"started_ms": "started_at"},
    read={"pools": _tuple, "workflows": _tuple, "waiting": _waiting},
    write={"pools": _names, "workflows": _names, "waiting": _waiting_json},
)
#: a worker's row: its record, then what its renewals and its stop change
WORKER_COLUMNS = (*WORKER.names, "last_seen", "stopped_at")
_LAST_SEEN, _STOPPED_AT = len(WORKER.names), len(WORKER.names) + 1

# A worker records itself, or renews its record: everything it says is written again (it
# may serve workflows registered since), and a stop it had recorded is forgotten.
UPSERT_WORKER = f"""
INSERT INTO tickwork_workers ({", ".join(WORKER_COLUMNS)})
VALUES ({", ".join("?" * (len(WORKER_COLUMNS) - 1))}, NULL)
ON CONFLICT (id) DO UPDATE SET
    host = excluded.host, pid = excluded.pid, pools = excluded.pools,
    workflows = excluded.workflows, version = excluded.version,
    started_at = excluded.started_at, renew_ms = excluded.renew_ms,
    waiting = excluded.waiting, last_seen = excluded.last_seen, stopped_at = NULL
"""
# Forget a bounded batch of workers not seen for a day, oldest first, on the last_seen
# index ({lock}: PostgreSQL skips rows another worker's renewal is removing).
FORGET_GONE = """
DELETE FROM tickwork_workers WHERE id IN (
    SELECT id FROM tickwork_workers WHERE last_seen < ? ORDER BY last_seen LIMIT ?{lock}
)
"""
# A worker that stops gracefully says so: not alive from now, kept for a day.
STOP_WORKER = "UPDATE tickwork_workers SET stopped_at = ?, last_seen = ? WHERE id = ?"
# The workers seen within the last day, oldest start first.
SELECT_WORKERS = f"""
SELECT {", ".join(WORKER_COLUMNS)} FROM tickwork_workers WHERE last_seen >= ?
ORDER BY started_at, id
"""


def _info(row: Sequence[Any], now_ms: int) -> WorkerInfo:
    worker, last_seen, stopped = WORKER.read(row), row[_LAST_SEEN], row[_STOPPED_AT]
    return WorkerInfo(
        id=worker.id,
        host=worker.host,
        pid=int(worker.pid),
        pools=worker.pools,
        workflows=worker.workflows,
        version=worker.version,
        started_at=from_ms(worker.started_ms),
        last_seen=from_ms(last_seen),
        alive=worker_alive(
            last_seen_ms=last_seen,
            renew_ms=worker.renew_ms,
            stopped=stopped is not None,
            now_ms=now_ms,
        ),
        stopped_at=None if stopped is None else from_ms(stopped),
        waiting_for_calendars=worker.waiting,
    )


class WorkersSql:
    """``WorkerStore`` over a dialect's ``Database``."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def renew_worker(self, worker: WorkerRecord, *, now_ms: int) -> None:
        values = (*WORKER.values(worker), now_ms)
        forget = FORGET_GONE.format(lock=self._db.lock_suffix)

        def work(tx: Transaction) -> None:
            tx.execute(UPSERT_WORKER, *values)
            tx.execute(forget, seen_since_ms(now_ms), FORGET_BATCH)

        self._db.write(work)

    def stop_worker(self, worker_id: str, *, now_ms: int) -> bool:
        def work(tx: Transaction) -> bool:
            tx.execute(STOP_WORKER, now_ms, now_ms, worker_id)
            return tx.rowcount == 1

        return self._db.write(work)

    def list_workers(self, *, now_ms: int) -> list[WorkerInfo]:
        with self._db.read() as tx:
            rows = tx.execute(SELECT_WORKERS, seen_since_ms(now_ms)).fetchall()
        return [_info(row, now_ms) for row in rows]
