"""The store contract in SQL, shared by every backend: composed parts over one ``Database``.

Each part owns its statements (named constants with a comment each, ``?`` placeholders)
and reads and writes through the dialect's ``Database`` (``transaction.py``): runs, leases
and checkpoints (``sql_runs.py``, with the latest runs of many schedules at once from
``recent_runs.py``), schedules (``sql_schedules.py``), firing them and when the firing
loop is next due (``sql_firing.py``), deadlines (``sql_deadlines.py``), API keys
(``sql_keys.py``), calendars (``sql_calendars.py``), workers (``sql_workers.py``), events
(``sql_events.py``), pruning (``sql_prune.py``), what the database holds
(``sql_storage.py``) and aggregates (``stats.py``). ``SqlStore`` is the ``Store`` they
make together: its parts are its attributes (``store.runs.finish_run(...)``), each the
implementation of its part's Protocol (``contract.py`` lists them). Decisions stay in
Python; the SQL only reads and writes. Where the dialects differ, a part calls its
``Database``'s method for it and never asks which one it has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar

from .._values.models import Stats
from .sql_calendars import CalendarsSql
from .sql_children import ChildrenSql
from .sql_deadlines import DeadlinesSql
from .sql_events import EventsSql
from .sql_firing import FiringSql
from .sql_keys import ApiKeysSql
from .sql_prune import PruneSql
from .sql_runs import RunsSql
from .sql_schedules import SchedulesSql
from .sql_storage import StorageSql
from .sql_workers import WorkersSql
from .stats import StatsSql
from .transaction import Database, Transaction

__all__ = ["SqlStore"]

T = TypeVar("T")


class SqlStore:
    """The ``Store``: each part over the one ``Database``, and ``read_stats``.

    A dialect subclasses it to open its ``Database`` and add what only it offers (the
    fleet's clock and LISTEN on PostgreSQL, the log's copy on SQLite); every difference
    in how the contract is carried out is a method of the ``Database``.
    """

    #: "sqlite" or "postgres", set by the dialect's subclass (for people and tests: no
    #: part reads it)
    dialect: ClassVar[str]

    def __init__(self, db: Database) -> None:
        self._db = db
        self.runs = RunsSql(db)
        self.schedules = SchedulesSql(db)
        self.firing = FiringSql(db)
        self.deadlines = DeadlinesSql(db)
        self.keys = ApiKeysSql(db)
        self.calendars = CalendarsSql(db)
        self.workers = WorkersSql(db)
        self.events = EventsSql(db, self.runs)  # an emit inserts and claims runs
        self.children = ChildrenSql(db, self.runs)  # a map inserts and claims runs
        self.pruning = PruneSql(db)
        self.storage = StorageSql(db)
        self._stats = StatsSql(db)

    # -- for tests: a write on the database beneath ----------------------------------------

    def _write(self, work: Callable[[Transaction], T]) -> T:
        """Run ``work`` in a write transaction and return what it returns."""
        return self._db.write(work)

    def migrate(self) -> int:
        return self._db.migrate()

    def read_stats(self, *, now_ms: int) -> Stats:
        """The fleet's counters, histograms and gauges; see ``StatsSource``."""
        return self._stats.read_stats(now_ms=now_ms)
