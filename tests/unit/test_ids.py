"""Run ids of runs started without one: UUIDv7, time-ordered, unique."""

from __future__ import annotations

import os
import threading
import uuid

from tickwork._values.ids import new_run_id

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


def test_run_ids_never_repeat_across_refills_and_threads() -> None:
    """The random bits come from a buffer of ``os.urandom`` refilled every ~400 ids."""
    ids: list[str] = []

    def make() -> None:
        ids.extend(new_run_id(T0) for _ in range(2_000))

    threads = [threading.Thread(target=make) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == len(ids) == 8_000


def test_a_forked_child_never_hands_out_its_parents_next_ids() -> None:
    new_run_id(T0)  # the parent's buffer is filled
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        os.close(read)
        os.write(write, ",".join(new_run_id(T0) for _ in range(5)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read().split(",")
    os.waitpid(pid, 0)
    parent = [new_run_id(T0) for _ in range(5)]
    assert len(child) == 5 and not set(child) & set(parent)
