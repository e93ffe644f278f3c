"""Run ids of runs started without one: UUIDv7, time-ordered, unique."""

from __future__ import annotations

import uuid

from tickwork._ids import new_run_id

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z


def test_run_id_is_a_uuid7_whose_time_is_the_start() -> None:
    run_id = new_run_id(T0)
    parsed = uuid.UUID(run_id)
    assert len(run_id) == 32 and parsed.hex == run_id
    assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
    assert parsed.int >> 80 == T0


def test_run_ids_sort_by_start_and_never_repeat() -> None:
    ids = [new_run_id(T0 + ms) for ms in range(50) for _ in range(20)]
    assert len(set(ids)) == len(ids)
    assert [i[:12] for i in ids] == sorted(i[:12] for i in ids)
    assert new_run_id(T0) < new_run_id(T0 + 1)
