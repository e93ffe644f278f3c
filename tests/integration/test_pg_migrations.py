"""A fleet starting at once on PostgreSQL: every process migrates the schema and registers
the same schedules at the same instant, and all of them succeed with one result.

Migrations take turns under a transaction-scoped advisory lock (each finds the work done
by the first); a schedule key registered by many processes at once is stored once, as
revision 1 (the unique key decides; the losers see the winner's row as "unchanged").
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pytest
from tests.pg import fresh_schema

from tickwork import Context, Engine
from tickwork._store import migrations

pytestmark = pytest.mark.postgres

PROCESSES = 10
#: the versions of the PostgreSQL migrations, each to be recorded once
_MIGRATIONS = [version for version, _ in migrations.pending("postgres", 0)]
T = TypeVar("T")

# Each process connects first (the clock's first reading asks the database), then waits
# for the "go" file, so that all ten call migrate() within a few milliseconds.
MIGRATE = """
import sys, time
from pathlib import Path
from tickwork import Engine

engine = Engine(sys.argv[1])
engine.clock.now()
Path(sys.argv[2] + ".ready." + sys.argv[3]).touch()
while not Path(sys.argv[2]).exists():
    time.sleep(0.002)
print(engine.migrate())
engine.close()
"""


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_schema() as url:
        yield url


def _schema_rows(url: str) -> list[tuple[int, int]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT version, COUNT(*) FROM tickwork_schema GROUP BY version ORDER BY version"
        ).fetchall()


def _at_once(count: int, work: Callable[[int], T]) -> list[T]:
    """``work(i)`` on ``count`` threads released together; their results, or the first error."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        raise errors[0]
    return results


def test_ten_processes_migrating_a_fresh_schema_at_once_all_succeed_once(
    pg_url: str, tmp_path: Path
) -> None:
    """Ten processes call migrate() together: each returns the same version, and each
    migration is recorded once."""
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE, pg_url, str(go), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(PROCESSES)
    ]
    try:
        for _ in range(6000):  # every process connected (30 s at most)
            if len(list(tmp_path.glob("go.ready.*"))) == PROCESSES or any(
                p.poll() is not None for p in procs
            ):
                break
            threading.Event().wait(0.005)
        go.touch()
        outputs = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for p, (_out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err
    versions = {int(out.strip().splitlines()[-1]) for out, _ in outputs}
    rows = _schema_rows(pg_url)
    assert versions == {rows[-1][0]}
    assert rows == [(version, 1) for version in _MIGRATIONS]


def test_ten_engines_migrating_at_once_in_threads_all_succeed_once(pg_url: str) -> None:
    """The same with ten Engines (ten connection pools) in one process."""
    engines = [Engine(pg_url) for _ in range(PROCESSES)]
    try:
        versions = _at_once(PROCESSES, lambda i: engines[i].migrate())
    finally:
        for engine in engines:
            engine.close()
    rows = _schema_rows(pg_url)
    assert set(versions) == {rows[-1][0]}
    assert rows == [(version, 1) for version in _MIGRATIONS]


def test_ten_workers_registering_the_same_schedules_at_once_store_each_once(
    pg_url: str,
) -> None:
    """Ten Engines register the same 20 schedules at the same instant (a fleet deployed at
    once): none fails, each key is stored once, as revision 1."""
    keys = [f"same-{i:02d}" for i in range(20)]
    engines = [Engine(pg_url) for _ in range(PROCESSES)]
    for engine in engines:

        @engine.workflow("wf")
        def wf(ctx: Context, input: Any = None) -> None:
            return None

    engines[0].migrate()

    def register(i: int) -> list[str]:
        return [engines[i].schedule("wf", {"k": k}, every="1h", key=k) for k in keys]

    try:
        registered = _at_once(PROCESSES, register)
        assert registered == [keys] * PROCESSES
        stored = engines[0].list_schedules()
        assert [s.key for s in stored] == keys
        assert {s.revision for s in stored} == {1}
        assert {(s.input["k"], s.key) for s in stored} == {(k, k) for k in keys}
    finally:
        for engine in engines:
            engine.close()
