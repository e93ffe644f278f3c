"""A fleet of ``tickwork worker`` processes on PostgreSQL running ``pg_fleet_app``, and the
invariants its history must satisfy, shared by the chaos and restart tests.

The invariants, checked on the database and on the apps' ``fleet.log`` once every worker
has stopped (nothing about how long anything took):

- every occurrence of the window fired exactly once: each schedule's runs are exactly
  ``start + 1 s, ..., start + N s`` (no duplicate, none missed, consecutive ones 1 s
  apart), each with the id ``key@occurrence`` and one "started" history entry;
- no run lost: every run completed, with the expected result, in its first attempt (a
  take-over is not an attempt), its three checkpoints stored once each;
- no checkpointed step repeated: once a step's checkpoint was seen stored (a ``stored``
  line), that step is never entered again in that run (no later ``exec`` line).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row
from tests.acceptance.neighbours import load_neighbour

from tickwork import RunInfo, RunStatus
from tickwork.errors import StoreError

app = load_neighbour("pg_fleet_app")  # the workers import it as a file

HERE = Path(__file__).parent
APP = f"{HERE / 'pg_fleet_app.py'}:engine"
LOG = app.LOG
STEPS = app.STEPS
SECOND = timedelta(seconds=1)


@dataclass(frozen=True)
class Event:
    """One line of ``fleet.log``."""

    kind: str  # "exec" (a step function entered) or "stored" (its checkpoint is stored)
    run_id: str
    attempt: int
    step: str
    pid: int


def run_id_of(key: str, when: datetime) -> str:
    """DESIGN §3: key@<UTC ISO occurrence>, to the millisecond."""
    return f"{key}@{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond // 1000:03d}Z"


class Fleet:
    """``schedules`` one-second schedules over a window of ``seconds``, opening ``lead``
    seconds from now (on a whole second), run by workers started with ``start_worker``.

    The schedules are registered here, before any worker starts: the workers register
    them again, unchanged. Were the first registration a worker's, one slow to start
    under load could register after the window's first occurrence, which then never
    fires (a schedule's occurrences before its first registration never do)."""

    def __init__(
        self,
        harness: Any,
        *,
        schedules: int,
        seconds: int,
        lease: str = "5s",
        nap_ms: int = 20,
        threads: int = 4,
        lead: float = 3.0,
    ) -> None:
        self.harness = harness
        self.keys = app.keys(schedules)
        self.seconds = seconds
        self.threads = threads
        self.start = datetime.fromtimestamp(int(time.time() + lead) + 1, UTC)
        self.occurrences = [self.start + k * SECOND for k in range(1, seconds + 1)]
        self.env = {
            "FLEET_SCHEDULES": str(schedules),
            "FLEET_START_MS": str(int(self.start.timestamp() * 1000)),
            "FLEET_SECONDS": str(seconds),
            "FLEET_LEASE": lease,
            "FLEET_NAP_MS": str(nap_ms),
        }
        harness.engine.workflow(app.WORKFLOW)(app.fleet_steps)
        app.schedule_window(harness.engine, self.start, seconds, schedules)

    @property
    def total(self) -> int:
        return len(self.keys) * self.seconds

    def start_worker(self, env: dict[str, str] | None = None) -> Any:
        return self.harness.app_worker(APP, env={**self.env, **(env or {})}, threads=self.threads)

    def seconds_until_closed(self) -> float:
        """Seconds from now until the window's last occurrence."""
        return self.occurrences[-1].timestamp() - time.time()

    # -- looking -------------------------------------------------------------------------

    def completed(self) -> int:
        """How many runs are completed (0 while the database cannot be reached)."""
        try:
            return len(self.harness.engine.list_runs(status="completed", limit=10 * self.total))
        except StoreError:
            return 0

    def all_completed(self) -> bool:
        return self.completed() >= self.total

    def not_completed(self) -> str:
        """The runs not completed, for a failure's message: which, in what state, why."""
        runs = self.harness.engine.list_runs(limit=10 * self.total)
        late = [r for r in runs if r.status is not RunStatus.COMPLETED]
        lines = [f"{r.id} {r.status} attempt {r.attempt} error {r.error!r}" for r in late[:20]]
        # Occurrences never fired: each short schedule as stored, and its last decisions.
        fired = Counter(r.schedule_key for r in runs)
        window = f"{self.occurrences[0]:%H:%M:%S}..{self.occurrences[-1]:%H:%M:%S}"
        for key in [k for k in self.keys if fired[k] < self.seconds][:5]:
            lines.append(f"{key}: {fired[key]} of {self.seconds} fired in {window}; stored:")
            lines.append(f"  {self.stored_row(key)}")
            lines += [f"  {h}" for h in self.harness.engine.schedule_history(key, limit=3)]
        return f"{len(runs)} runs, {len(late)} not completed:\n" + "\n".join(lines)

    def stored_row(self, key: str) -> dict[str, Any] | None:
        """The schedule's row as stored, every column (its timing and firing state)."""
        with psycopg.connect(self.harness.url, autocommit=True, row_factory=dict_row) as conn:
            row = conn.execute("SELECT * FROM tickwork_schedules WHERE key = %s", (key,)).fetchone()
        return None if row is None else {k: v for k, v in row.items() if v is not None}

    def runs(self, key: str) -> list[RunInfo]:
        runs = self.harness.engine.list_runs(schedule_key=key, limit=10 * self.total)
        return sorted(runs, key=lambda run: (run.scheduled_for, run.id))

    def events(self) -> list[Event]:
        path = self.harness.dir / LOG
        if not path.exists():
            return []
        events = []
        for line in path.read_text().splitlines():
            kind, run_id, attempt, step, pid = line.split(" ")
            events.append(Event(kind, run_id, int(attempt), step, int(pid)))
        return events

    def in_step(self) -> bool:
        """True while some step has been entered and its checkpoint not seen stored."""
        entered: Counter[tuple[str, str]] = Counter()
        for event in self.events():
            entered[(event.run_id, event.step)] += 1 if event.kind == "exec" else -1
        return any(n > 0 for n in entered.values())

    def stored_steps(self) -> dict[str, list[tuple[str, str, str]]]:
        """Every stored checkpoint, by run: (kind, name, status) in order."""
        with psycopg.connect(self.harness.url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT run_id, kind, name, status FROM tickwork_steps ORDER BY run_id, seq"
            ).fetchall()
        found: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        for run_id, kind, name, status in rows:
            found[run_id].append((kind, name, status))
        return found

    # -- the invariants ------------------------------------------------------------------

    def check(self, *, killed: frozenset[int] = frozenset()) -> dict[str, int]:
        """Assert every invariant of the module docstring; return a few counts.

        With ``killed`` (pids that were SIGKILLed): a step entered more than once was
        entered each time but the last by one of them (nothing else interrupts a step).
        """
        engine = self.harness.engine
        expected_ids = set()
        for key in self.keys:
            schedule = engine.get_schedule(key)
            assert schedule is not None, key
            assert schedule.revision == 1, f"{key}: re-registration by the workers changed it"
            assert schedule.next_fire_at is None, f"{key}: the window is not over"
            runs = self.runs(key)
            occurrences = [run.scheduled_for for run in runs]
            twice = [when for when, n in Counter(occurrences).items() if n > 1]
            assert not twice, f"{key}: occurrences fired more than once: {twice}"
            missed = sorted(set(self.occurrences) - set(occurrences))
            assert not missed, f"{key}: occurrences never fired: {missed}"
            assert occurrences == self.occurrences, f"{key}: unexpected runs {occurrences}"
            for run in runs:
                assert run.scheduled_for is not None
                assert run.id == run_id_of(key, run.scheduled_for)
                assert run.status == "completed", (run.id, run.status, run.error)
                assert run.attempt == 1, (run.id, run.attempt, run.error)
                assert run.result == {"key": key, "value": len(key) + 6}, run.id
                expected_ids.add(run.id)
            history = engine.schedule_history(key, limit=10 * self.seconds)
            assert Counter(h.decision for h in history) == {"started": self.seconds}, key
            assert {h.run_id for h in history} == {run.id for run in runs}, key

        stored = self.stored_steps()
        assert set(stored) == expected_ids
        for run_id, steps in stored.items():
            assert steps == [("step", s, "completed") for s in STEPS], (run_id, steps)

        events = self.events()
        assert {e.run_id for e in events} == expected_ids
        entered: dict[tuple[str, str], list[Event]] = defaultdict(list)
        seen_stored: set[tuple[str, str]] = set()
        for event in events:
            assert event.attempt == 1, event
            where = (event.run_id, event.step)
            if event.kind == "stored":
                seen_stored.add(where)
            else:
                assert where not in seen_stored, f"{where} entered after its checkpoint: {event}"
                entered[where].append(event)
        assert set(entered) == {(run_id, step) for run_id in expected_ids for step in STEPS}
        repeated = {where: execs for where, execs in entered.items() if len(execs) > 1}
        if killed:
            for where, execs in repeated.items():
                interrupted = [e.pid for e in execs[:-1]]
                assert set(interrupted) <= killed, (
                    f"{where} entered again though no SIGKILL interrupted it: {execs}"
                )
        return {
            "runs": len(expected_ids),
            "step executions": sum(len(execs) for execs in entered.values()),
            "steps entered again": len(repeated),
            "worker pids that executed steps": len({e.pid for e in events if e.kind == "exec"}),
        }
