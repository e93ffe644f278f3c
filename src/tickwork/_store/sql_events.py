"""Events in SQL (migration 0015): emit, subscriptions, and runs that wait (DESIGN §9).

An emit is one transaction: the event's row (its id unique: a second emit of the id
finds it and answers what the first started), one run per matching subscription (run ids
derived from the event and the subscription, so a race of emitters inserts each once),
and every waiting run it matches woken. The decisions (does the payload match, what is
the run's input) are ``_events``'s pure functions, called here on the rows read.

A wait and an emit of its name both lock the name's row in ``tickwork_event_names``
first: a wait that looks back for an event already emitted and then registers cannot
miss an emit committing in between (PostgreSQL's transactions see only what committed
before each statement; SQLite's writes take turns anyway).

The look back's "since" is the store's order of inserts (migration 0022): each event
takes a position, each run records the last one taken at its insert (``run_rows.EVENT_MARK``),
and a wait takes the events after its mark; docs/events.md says why that is exact on
PostgreSQL too. Every delivery, by an emit or a look back, is added to the event's woke.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from .._values.clock import LAST_MS, from_ms
from .._values.event_flow import (
    Buffer,
    Flow,
    SubscriptionDecision,
    buffered,
    decided_on_event,
    decided_on_flush,
    flow_run_id,
)
from .._values.events import event_run_id, event_to_json, map_input, match_key, match_paths, matches
from .._values.ids import JSON, canonical_json
from .._values.models import Event, RunStatus
from .._values.records import NewRun
from .claim_records import ClaimRequest, Ended, LeaseLost
from .event_records import Emitted, NewEvent, NewWait, SubscriptionRecord
from .flow_history import PRUNE_DECISIONS, SELECT_DECISIONS, decision_from_row, record_decision
from .joins import WAKE_QUEUED, WAKE_RUN
from .run_inserts import insert_run_row
from .run_rows import claimed_runs, run_from_row
from .sql_runs import REQUEUE_HELD, RESCHEDULE_RUN, RunsSql
from .transaction import Database, Transaction

__all__ = ["NEVER_MS", "NEXT_BUFFER_DUE", "EventsSql"]

#: a wait without a timeout is due at this instant (year 9999): never, in practice
NEVER_MS = LAST_MS

# Store the event unless its id exists (emit is idempotent by id), with the runs its
# plain subscriptions start (known before: their ids derive from the event's).
INSERT_EVENT = """
INSERT INTO tickwork_events (id, name, payload, emitted_at, started, woke)
VALUES (?, ?, ?, ?, ?, '[]')
ON CONFLICT (id) DO NOTHING
"""
# What an earlier emit of the id did.
SELECT_OUTCOME = "SELECT name, started, woke FROM tickwork_events WHERE id = ?"
# ... and what this one did, once done.
SET_OUTCOME = "UPDATE tickwork_events SET started = ?, woke = ? WHERE id = ?"
# Count an emit of the name (tickwork_events_total), locking its row (see the docstring).
COUNT_EMIT = """
INSERT INTO tickwork_event_names (name, emitted) VALUES (?, 1)
ON CONFLICT (name) DO UPDATE SET emitted = tickwork_event_names.emitted + 1
"""
# Lock the name's row for a wait, counting nothing.
LOCK_NAME = """
INSERT INTO tickwork_event_names (name, emitted) VALUES (?, 0)
ON CONFLICT (name) DO UPDATE SET emitted = tickwork_event_names.emitted
"""
# The emits of every name: tickwork_events_total{name}.
SELECT_EMIT_COUNTS = "SELECT name, emitted FROM tickwork_event_names WHERE emitted > 0"
_SUBSCRIPTION_COLUMNS = (
    "key, event_name, workflow, version, match, input_map, pool, priority, retry, declared,"
    " created_at, flow"
)
# The subscriptions of an event name (tickwork_subscriptions_name).
SELECT_SUBSCRIPTIONS_OF = f"""
SELECT {_SUBSCRIPTION_COLUMNS} FROM tickwork_subscriptions WHERE event_name = ? ORDER BY key
"""
SELECT_SUBSCRIPTION = f"SELECT {_SUBSCRIPTION_COLUMNS} FROM tickwork_subscriptions WHERE key = ?"
SELECT_SUBSCRIPTIONS = f"SELECT {_SUBSCRIPTION_COLUMNS} FROM tickwork_subscriptions ORDER BY key"
# Register or redefine a subscription by key (the time it was first made kept).
UPSERT_SUBSCRIPTION = f"""
INSERT INTO tickwork_subscriptions ({_SUBSCRIPTION_COLUMNS})
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET event_name = excluded.event_name, flow = excluded.flow,
    workflow = excluded.workflow, version = excluded.version, match = excluded.match,
    input_map = excluded.input_map, pool = excluded.pool, priority = excluded.priority,
    retry = excluded.retry, declared = excluded.declared
"""
DELETE_SUBSCRIPTION = "DELETE FROM tickwork_subscriptions WHERE key = ?"
_EVENT_COLUMNS = "id, name, payload, emitted_at, started, woke"
# One event by id.
SELECT_EVENT = f"SELECT {_EVENT_COLUMNS} FROM tickwork_events WHERE id = ?"
# The newest events, of one name or of all (a page: {where} and keyset below a position).
LIST_EVENTS = f"""
SELECT {_EVENT_COLUMNS} FROM tickwork_events {{where}}
ORDER BY emitted_at DESC, id DESC LIMIT ?
"""
# Debounce and batch (_values/event_flow.py): a subscription's buffer for one key value, ...
SELECT_BUFFER = """
SELECT first_event, first_at, due_at, payloads, events FROM tickwork_event_buffers
WHERE subscription = ? AND grp = ?
"""
# ... written after an event ...
UPSERT_BUFFER = """
INSERT INTO tickwork_event_buffers (subscription, grp, first_event, first_at, due_at, payloads,
    events)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (subscription, grp) DO UPDATE SET due_at = excluded.due_at,
    payloads = excluded.payloads, events = excluded.events
"""
# ... and gone with its run (only the one that began with first_event).
DELETE_BUFFER = """
DELETE FROM tickwork_event_buffers WHERE subscription = ? AND grp = ? AND first_event = ?
"""
# The buffers due, soonest first (tickwork_event_buffers_due), and the next due.
SELECT_DUE_BUFFERS = """
SELECT subscription, grp, first_event, first_at, due_at, payloads, events
FROM tickwork_event_buffers WHERE due_at <= ? ORDER BY due_at LIMIT ?
"""
NEXT_BUFFER_DUE = "SELECT MIN(due_at) FROM tickwork_event_buffers"
# Retention: the oldest events emitted before the cutoff, a batch at a time (their names'
# counts stay in tickwork_event_names).
PRUNE_EVENTS = """
DELETE FROM tickwork_events WHERE id IN (
    SELECT id FROM tickwork_events WHERE emitted_at < ? ORDER BY emitted_at, id LIMIT ?)
"""
# A wait's look back (DESIGN §9: "since" in the store's order of inserts): the events of a
# name stored after a position in the events' order (migration 0022), oldest first ...
EVENTS_AFTER = """
SELECT id, name, payload, emitted_at, seq FROM tickwork_events
WHERE name = ? AND seq > ? ORDER BY seq
"""
# ... where that position is the run's mark, taken at its insert, or (since="wait") the
# last position taken now ...
SELECT_RUN_MARK = "SELECT event_mark FROM tickwork_runs WHERE id = ?"
SELECT_LAST_MARK = "SELECT last FROM tickwork_event_order"
# ... or, for a run stored before 0022 (no mark), the rule it had: emitted from an instant
# on, in the order of (emitted_at, id).
EVENTS_SINCE = """
SELECT id, name, payload, emitted_at, emitted_at FROM tickwork_events
WHERE name = ? AND emitted_at >= ? ORDER BY emitted_at, id
"""
# The look back's delivery, recorded on the event beside the emit's (no lost update: every
# writer of an event's woke holds its name's row, LOCK_NAME or COUNT_EMIT).
SELECT_WOKE = "SELECT woke FROM tickwork_events WHERE id = ?"
SET_WOKE = "UPDATE tickwork_events SET woke = ? WHERE id = ?"
# The shapes of waits on a name, and a shape's waits for one match key (by index).
SELECT_SHAPES = "SELECT paths FROM tickwork_wait_shapes WHERE name = ?"
SELECT_WAITS = (
    "SELECT run_id, step FROM tickwork_waits WHERE name = ? AND paths = ? AND match_key = ?"
)
INSERT_SHAPE = """
INSERT INTO tickwork_wait_shapes (name, paths) VALUES (?, ?) ON CONFLICT (name, paths) DO NOTHING
"""
INSERT_WAIT = """
INSERT INTO tickwork_waits (run_id, name, paths, match_key, step) VALUES (?, ?, ?, ?, ?)
"""
DELETE_WAITS = "DELETE FROM tickwork_waits WHERE run_id = ?"
# The wait's checkpoint: "waiting" (its result: what it waits for, until when) or
# "completed" (the event, or null when it timed out); its started_at is kept.
WRITE_WAIT_STEP = """
INSERT INTO tickwork_steps (run_id, kind, name, seq, status, result, error, attempts,
    started_at, finished_at)
VALUES (?, 'event', ?, ?, ?, ?, NULL, 1, ?, ?)
ON CONFLICT (run_id, kind, name) DO UPDATE SET status = excluded.status,
    result = excluded.result, finished_at = excluded.finished_at
"""
DELIVER = """
UPDATE tickwork_steps SET status = 'completed', result = ?, finished_at = ?
WHERE run_id = ? AND kind = 'event' AND name = ?
"""


def subscription_from_row(row: Sequence[Any]) -> SubscriptionRecord:
    return SubscriptionRecord(
        key=row[0], event_name=row[1], workflow=row[2], version=row[3], match_json=row[4],
        input_json=row[5], pool=row[6], priority=int(row[7]), retry_json=row[8],
        declared=bool(row[9]), created_ms=int(row[10]), flow_json=row[11],
    )  # fmt: skip


def stored_event_from_row(row: Sequence[Any]) -> tuple[Event, list[str], list[str]]:
    """An event's row: the event, the runs it started and those it woke."""
    event = Event(
        name=row[1], id=row[0], payload=json.loads(row[2]), emitted_at=from_ms(int(row[3]))
    )
    return event, json.loads(row[4]), json.loads(row[5])


class EventsSql:
    """Events, subscriptions and waits over a dialect's ``Database``."""

    __slots__ = ("_db", "_runs")

    def __init__(self, db: Database, runs: RunsSql) -> None:
        self._db = db
        #: the claims inside a transaction: an executor's next run, taken with the runs an
        #: emit starts (``RunsSql.straight_claim``) or as its current one starts waiting
        self._runs = runs

    # -- emit ------------------------------------------------------------------------------

    def emit(self, event: NewEvent, *, then_claim: ClaimRequest | None = None) -> Emitted:
        """Store ``event``, start a run of every matching subscription and wake every
        waiting run it matches, in one transaction; idempotent by the event's id."""

        def work(tx: Transaction) -> tuple[Emitted, list[Any]]:
            payload = json.loads(event.payload_json)
            subscribed = self._subscribed(tx, event.name, payload)
            plain = [event_run_id(s.key, event.id) for s in subscribed if s.flow_json is None]
            tx.execute(
                INSERT_EVENT, event.id, event.name, event.payload_json, event.emitted_ms,
                canonical_json(plain),
            )  # fmt: skip
            if tx.rowcount != 1:  # emitted before: answer what that emit did
                name, started, woke = tx.execute(SELECT_OUTCOME, event.id).fetchone()
                first = Emitted(name, tuple(json.loads(started)), tuple(json.loads(woke)), False)
                return first, []
            tx.execute(COUNT_EMIT, event.name)
            sooner: list[bool] = []  # a buffer due sooner than the loops know of
            # The runs woken first: they are candidates of the claim made with the inserts.
            woke = self._wake_waiting(tx, event, payload)
            claim = self._runs.straight_claim(tx, then_claim)
            started = self._start_subscribed(tx, claim.insert, event, payload, subscribed, sooner)
            if woke or started != plain:  # a batch's run, or runs woken: not in the insert
                tx.execute(SET_OUTCOME, canonical_json(started), canonical_json(woke), event.id)
            if started or woke:
                self._db.notify(tx, "runs")
            if sooner:  # every worker's firing loop reads the buffers' next due time again
                self._db.notify(tx, "events")
            emitted = Emitted(event.name, tuple(started), tuple(woke), True, bool(sooner))
            return emitted, claim.taken() if started or woke else []

        emitted, taken = self._db.write(work)
        if not taken or then_claim is None:
            return emitted
        return Emitted(
            emitted.name, emitted.started, emitted.woke, emitted.new, emitted.buffered,
            claimed_runs(taken, then_claim.now_ms),
        )  # fmt: skip

    def _subscribed(self, tx: Transaction, name: str, payload: JSON) -> list[SubscriptionRecord]:
        """The subscriptions of ``name`` whose match ``payload`` matches, by key."""
        rows = tx.execute(SELECT_SUBSCRIPTIONS_OF, name).fetchall()
        subs = [subscription_from_row(row) for row in rows]
        return [sub for sub in subs if matches(payload, _loaded(sub.match_json))]

    def _start_subscribed(
        self,
        tx: Transaction,
        insert: Callable[[NewRun], bool],
        event: NewEvent,
        payload: JSON,
        subscribed: list[SubscriptionRecord],
        sooner: list[bool],
    ) -> list[str]:
        started = []
        for sub in subscribed:
            if sub.flow_json is not None:
                started += self._buffer(tx, insert, sub, event, payload, sooner)
                continue
            value = map_input(payload, _loaded(sub.input_json))
            run_id = event_run_id(sub.key, event.id)
            # False: a pruned event's run kept; it is still its run
            _start(insert, sub, run_id, value, event.emitted_ms)
            started.append(run_id)
        return started

    def _buffer(
        self,
        tx: Transaction,
        insert: Callable[[NewRun], bool],
        sub: SubscriptionRecord,
        event: NewEvent,
        payload: JSON,
        sooner: list[bool],
    ) -> list[str]:
        """Debounce or batch: the event joins its buffer; a full batch starts its run.

        ``sooner`` gets True when the buffer is new or now due sooner (a subscription
        redefined with a shorter debounce): only then can a firing loop be sleeping past
        it. A debounce extended or a batch joined moves its due time later or not at all,
        and a loop that wakes for the old time finds nothing due and reads the new one."""
        flow = Flow.from_json(json.loads(sub.flow_json or "{}"))
        group = canonical_json(None) if flow.key is None else _group(payload, flow.key)
        row = tx.execute(SELECT_BUFFER + self._db.lock_row, sub.key, group).fetchone()
        before = None if row is None else _buffer_of(row)
        after, full = buffered(flow, before, event.id, payload, event.emitted_ms)
        decided = decided_on_event(flow, sub.key, before, after, full, event.id)
        record_decision(tx, sub.key, group, decided, event.emitted_ms)
        if not full:
            if before is None or after.due_ms < before.due_ms:
                sooner.append(True)
            tx.execute(
                UPSERT_BUFFER, sub.key, group, after.first_event, after.first_ms, after.due_ms,
                canonical_json(list(after.payloads)), after.count,
            )  # fmt: skip
            return []
        if before is not None:
            tx.execute(DELETE_BUFFER, sub.key, group, before.first_event)
        run_id, _ = _start_flushed(insert, sub, flow, after, event.emitted_ms)
        return [run_id]

    def flush_due(self, *, now_ms: int, limit: int) -> list[str]:
        """Start the runs of the buffers due at ``now_ms``, each once across the fleet:
        its row is deleted in the transaction that inserts its run."""

        def work(tx: Transaction) -> list[str]:
            started = []
            for sub_key, group, first, first_at, due, payloads, count in tx.execute(
                SELECT_DUE_BUFFERS + self._db.lock_row, now_ms, limit
            ).fetchall():
                tx.execute(DELETE_BUFFER, sub_key, group, first)
                if tx.rowcount != 1:
                    continue  # another worker took it
                buffer = Buffer(
                    first, int(first_at), int(due), tuple(json.loads(payloads)), int(count)
                )
                row = tx.execute(SELECT_SUBSCRIPTION, sub_key).fetchone()
                if row is None:  # unsubscribed since: its events start nothing
                    decided = decided_on_flush(None, sub_key, buffer, started=False)
                    record_decision(tx, sub_key, group, decided, now_ms)
                    continue
                sub = subscription_from_row(row)
                flow = Flow.from_json(json.loads(sub.flow_json or "{}"))
                run_id, new = _start_flushed(
                    functools.partial(insert_run_row, tx), sub, flow, buffer, now_ms
                )
                decided = decided_on_flush(flow, sub_key, buffer, started=new)
                record_decision(tx, sub_key, group, decided, now_ms)
                started.append(run_id)
            if started:
                self._db.notify(tx, "runs")
            return started

        return self._db.write(work)

    def next_flush_ms(self) -> int | None:
        with self._db.read() as tx:
            (due,) = tx.execute(NEXT_BUFFER_DUE).fetchone()
        return None if due is None else int(due)

    def _wake_waiting(self, tx: Transaction, event: NewEvent, payload: JSON) -> list[str]:
        waiting: dict[str, str] = {}
        for (paths,) in tx.execute(SELECT_SHAPES, event.name).fetchall():
            key = match_key(payload, json.loads(paths), of_match=False)
            if key is not None:
                waiting.update(tx.execute(SELECT_WAITS, event.name, paths, key).fetchall())
        if not waiting:
            return []
        delivered = event_to_json(event.id, event.name, payload, event.emitted_ms)
        # In the order of their ids: two emits waking the same runs lock their queue rows
        # in one order, never crosswise (PostgreSQL).
        return [
            run_id
            for run_id, step in sorted(waiting.items())
            if self._deliver(tx, run_id, step, delivered, event.emitted_ms)
        ]

    def _deliver(self, tx: Transaction, run_id: str, step: str, event: str, now_ms: int) -> bool:
        """Hand ``event`` to a waiting run; False (its waits forgotten) when it no longer
        waits: it timed out, was cancelled, or an emit before this one woke it."""
        tx.execute(WAKE_QUEUED, now_ms, run_id)
        woken = tx.rowcount == 1
        tx.execute(DELETE_WAITS, run_id)
        if woken:
            tx.execute(WAKE_RUN, run_id)
            tx.execute(DELIVER, event, now_ms, run_id, step)
        return woken

    # -- waits -----------------------------------------------------------------------------

    def wait_run(self, wait: NewWait, *, then_claim: ClaimRequest | None) -> Ended:
        """Suspend a held run until an event: delivered at once (the run pending again)
        when one already emitted matches, else registered and the run ``waiting`` until
        ``until_ms``. ``LeaseLost`` when the run is no longer held under ``token``."""

        def work(tx: Transaction) -> tuple[Any, list[Any]]:
            for name in sorted(set(wait.names)):
                tx.execute(LOCK_NAME, name)
            # After the names' locks: an emit that held one has committed, and is before
            # this wait's mark or found by its look back.
            mark = self._mark(tx, wait)
            found = self._look_back(tx, wait, mark)
            status = RunStatus.PENDING if found is not None else RunStatus.WAITING
            due = wait.now_ms if found is not None else wait.until_ms or NEVER_MS
            tx.execute(REQUEUE_HELD, str(status), due, wait.run_id, wait.token)
            if tx.rowcount != 1:
                raise LeaseLost(wait.run_id)
            row = tx.execute(
                RESCHEDULE_RUN, str(status), wait.attempt, None, False, wait.run_id
            ).fetchone()
            tx.execute(DELETE_WAITS, wait.run_id)
            if found is not None:
                step_status, result = "completed", found[1]
                self._record_woke(tx, found[0], wait.run_id)
            else:
                step_status = "waiting"
                # What it waits for, kept where its faces read it (_values/checkpoints.py),
                # and where its look back began (a wait taken up again keeps it).
                result = canonical_json({
                    "names": list(wait.names), "match": wait.match,
                    "until": wait.until_ms, "since": wait.since_ms, "after": mark,
                })  # fmt: skip
                self._register(tx, wait)
            tx.execute(
                WRITE_WAIT_STEP, wait.run_id, wait.step, wait.seq, step_status, result,
                wait.now_ms, wait.now_ms,
            )  # fmt: skip
            return row, self._runs.claim_in(tx, then_claim)

        row, taken = self._db.write(work)
        claimed = claimed_runs(taken, then_claim.now_ms) if taken and then_claim else []
        return Ended(run_from_row(row), claimed)

    @staticmethod
    def _mark(tx: Transaction, wait: NewWait) -> int | None:
        """The position in the events' order the look back starts after: the wait's own
        (taken up again), the run's (``since="run"``) or the last taken (``"wait"``);
        None for a run stored before migration 0022, which has none."""
        if wait.after is not None:
            return wait.after
        if wait.since_run:
            found = tx.execute(SELECT_RUN_MARK, wait.run_id).fetchone()
            return None if found is None or found[0] is None else int(found[0])
        return int(tx.execute(SELECT_LAST_MARK).fetchone()[0])

    def _look_back(
        self, tx: Transaction, wait: NewWait, mark: int | None
    ) -> tuple[str, str] | None:
        """The first event of the wait's names stored after ``mark`` (with no mark: emitted
        at ``since_ms`` or later) that it matches: its id and its checkpoint's JSON."""
        best: tuple[int, str, str] | None = None  # (its place in the order, id, JSON)
        for name in wait.names:
            if mark is None:
                rows = tx.execute(EVENTS_SINCE, name, wait.since_ms).fetchall()
            else:
                rows = tx.execute(EVENTS_AFTER, name, mark).fetchall()
            for event_id, ev_name, payload, emitted, order in rows:
                if event_id in wait.seen:
                    continue
                value = json.loads(payload)
                if matches(value, wait.match):
                    if best is None or (int(order), event_id) < best[:2]:
                        at = int(emitted)
                        best = (int(order), event_id, event_to_json(event_id, ev_name, value, at))
                    break
        return None if best is None else (best[1], best[2])

    @staticmethod
    def _record_woke(tx: Transaction, event_id: str, run_id: str) -> None:
        """The look back's delivery on the event: ``woke`` lists every run it was handed to."""
        (woke,) = tx.execute(SELECT_WOKE, event_id).fetchone()
        runs = json.loads(woke)
        if run_id not in runs:
            tx.execute(SET_WOKE, canonical_json([*runs, run_id]), event_id)

    def _register(self, tx: Transaction, wait: NewWait) -> None:
        paths = sorted(wait.match or {})
        shape = match_paths(wait.match)
        key = match_key(wait.match or {}, paths, of_match=True)
        for name in sorted(set(wait.names)):
            tx.execute(INSERT_SHAPE, name, shape)
            tx.execute(INSERT_WAIT, wait.run_id, name, shape, key, wait.step)

    # -- subscriptions ---------------------------------------------------------------------

    def upsert_subscriptions(self, records: Sequence[SubscriptionRecord]) -> None:
        def work(tx: Transaction) -> None:
            for r in records:
                tx.execute(
                    UPSERT_SUBSCRIPTION, r.key, r.event_name, r.workflow, r.version,
                    r.match_json, r.input_json, r.pool, r.priority, r.retry_json,
                    int(r.declared), r.created_ms, r.flow_json,
                )  # fmt: skip

        self._db.write(work)

    def delete_subscription(self, key: str) -> bool:
        def work(tx: Transaction) -> bool:
            tx.execute(DELETE_SUBSCRIPTION, key)
            return bool(tx.rowcount == 1)

        return self._db.write(work)

    def list_subscriptions(self) -> list[SubscriptionRecord]:
        with self._db.read() as tx:
            return [
                subscription_from_row(row) for row in tx.execute(SELECT_SUBSCRIPTIONS).fetchall()
            ]

    # -- reads -----------------------------------------------------------------------------

    def get_event(self, event_id: str) -> tuple[Event, list[str], list[str]] | None:
        with self._db.read() as tx:
            row = tx.execute(SELECT_EVENT, event_id).fetchone()
        return None if row is None else stored_event_from_row(row)

    def list_events(
        self, *, name: str | None, limit: int
    ) -> list[tuple[Event, list[str], list[str]]]:
        where, params = ("WHERE name = ?", [name]) if name is not None else ("", [])
        with self._db.read() as tx:
            rows = tx.execute(LIST_EVENTS.format(where=where), *params, limit).fetchall()
        return [stored_event_from_row(row) for row in rows]

    def subscription_history(self, key: str, *, limit: int) -> list[SubscriptionDecision]:
        with self._db.read() as tx:
            rows = tx.execute(SELECT_DECISIONS, key, limit).fetchall()
        return [decision_from_row(row) for row in rows]

    def prune_events(self, *, before_ms: int, limit: int) -> int:
        def work(tx: Transaction) -> int:
            tx.execute(PRUNE_EVENTS, before_ms, limit)
            removed = int(tx.rowcount)
            if removed < limit:  # then the subscriptions' decisions of that age
                tx.execute(PRUNE_DECISIONS, before_ms, limit - removed)
                removed += int(tx.rowcount)
            return removed

        return self._db.write_alone(work)

    def emit_counts(self) -> dict[str, int]:
        with self._db.read() as tx:
            return {name: int(n) for name, n in tx.execute(SELECT_EMIT_COUNTS).fetchall()}


def _start(
    insert: Callable[[NewRun], bool], sub: SubscriptionRecord, run_id: str, value: JSON, now_ms: int
) -> bool:
    """Insert a subscription's run with input ``value`` by ``insert`` (``insert_run_row``
    or a claim's: ``StraightClaim.insert``); False when its id exists."""
    run = NewRun(
        id=run_id, workflow=sub.workflow, version=sub.version,
        input_json=None if value is None else canonical_json(value), priority=sub.priority,
        pool=sub.pool, created_ms=now_ms, available_ms=now_ms, retry_json=sub.retry_json,
    )  # fmt: skip
    return insert(run)


def _start_flushed(
    insert: Callable[[NewRun], bool],
    sub: SubscriptionRecord,
    flow: Flow,
    buffer: Buffer,
    now_ms: int,
) -> tuple[str, bool]:
    """A buffer's run: the last payload (debounce) or the list of them (batch); its id,
    and False when it existed already."""
    mapping = _loaded(sub.input_json)
    inputs = [map_input(p, mapping) for p in buffer.payloads]
    value = inputs[-1] if flow.debounce_ms is not None else inputs
    run_id = flow_run_id(sub.key, flow, buffer.first_event)
    return run_id, _start(insert, sub, run_id, value, now_ms)


def _group(payload: JSON, key: str) -> str:
    """The buffer of a payload: the value at the flow's key path (null when absent)."""
    found = match_key(payload, [key], of_match=False)
    return canonical_json(None) if found is None else found


def _buffer_of(row: Sequence[Any]) -> Buffer:
    return Buffer(row[0], int(row[1]), int(row[2]), tuple(json.loads(row[3])), int(row[4]))


def _loaded(text: str | None) -> Any:
    return None if text is None else json.loads(text)
