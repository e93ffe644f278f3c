"""Optional store capabilities, declared as Protocols and asked with isinstance."""

from __future__ import annotations

from tickwork._store import Listening, NewRun, ReferenceTime, StatsSource, Store

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z


def test_only_postgresql_listens_and_gives_a_reference_time(store: Store) -> None:
    postgres = type(store).__name__ == "PostgresStore"
    assert isinstance(store, Listening) is postgres
    assert isinstance(store, ReferenceTime) is postgres
    if isinstance(store, ReferenceTime):
        assert store.database_now_ms() > T0


def test_stats_count_runs_by_workflow_and_status(store: Store) -> None:
    assert isinstance(store, StatsSource)
    for run_id, workflow in (("a", "wf"), ("b", "wf"), ("c", "other")):
        store.runs.insert_run(NewRun(run_id, workflow, "1", None, 0, "default", T0, T0))
    stats = store.read_stats(now_ms=T0)
    assert stats.runs == {("wf", "pending"): 2, ("other", "pending"): 1}
    assert stats.run_durations == {} and stats.schedules == {}
