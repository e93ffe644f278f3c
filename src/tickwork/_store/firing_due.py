"""When the firing loop is next due, in one statement: its schedules' next occurrence,
the next deadline to check and the next debounce/batch buffer to flush.

An idle worker reads this once a poll (`_worker.py`); read as three transactions, it was
nine round trips a second on PostgreSQL (BEGIN, SELECT, COMMIT each). Now it is one
statement the dialect runs outside any transaction (``Database.read_rows``): one round
trip. The three reads are the owners' own statements (``sql_schedules``,
``sql_deadlines``, ``sql_events``), each an index seek; each row says which it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from .sql_deadlines import NEXT_DEADLINE
from .sql_events import NEXT_BUFFER_DUE
from .sql_schedules import FIRST_DUE_ROWS, FIRST_SCHEDULES_DUE, NEXT_SCHEDULE_DUE, first_due
from .transaction import Database, in_filters

__all__ = ["FiringDueSql"]

# The deadlines' and the buffers' next due times, one row each ('d', 'b').
OTHERS = f"""
SELECT 'd', ({NEXT_DEADLINE.strip()}), NULL
UNION ALL SELECT 'b', ({NEXT_BUFFER_DUE.strip()}), NULL
"""
# With them, the schedules' next due time ('s'); {filters} as in NEXT_SCHEDULE_DUE.
WITH_NEXT_SCHEDULE = f"SELECT 's', ({NEXT_SCHEDULE_DUE.strip()}), NULL UNION ALL {OTHERS}"
# With them, the first due schedules and their policy ('s' rows), for fire_ahead.
WITH_FIRST_SCHEDULES = (
    f"SELECT 's', due_at, overlap FROM ({FIRST_SCHEDULES_DUE.strip()}) AS first_due"
    f" UNION ALL {OTHERS}"
)


class FiringDueSql:
    """``FiringStore`` over a dialect's ``Database``."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def next_firing_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        db = self._db
        if not pools or not workflows:
            rows = db.read_rows(OTHERS)
        elif ahead_ms:
            statement = WITH_FIRST_SCHEDULES.format(filters=in_filters(pools, workflows))
            rows = db.read_rows(statement, *pools, *workflows, FIRST_DUE_ROWS)
        else:
            statement = WITH_NEXT_SCHEDULE.format(filters=in_filters(pools, workflows))
            rows = db.read_rows(statement, *pools, *workflows)
        schedules = sorted(
            (int(due), policy) for kind, due, policy in rows if kind == "s" and due is not None
        )
        dues = [int(due) for kind, due, _ in rows if kind != "s" and due is not None]
        if schedules:
            first = first_due(schedules, ahead_ms) if ahead_ms else schedules[0][0]
            if first is not None:
                dues.append(first)
        return min(dues) if dues else None
