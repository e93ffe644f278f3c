"""The store contract for notes on state changes and ``pause_after_failures`` (DESIGN §3),
on every backend: ``set_schedule_state(note=)`` and the count ``finish_run`` keeps."""

from __future__ import annotations

import pytest
from tests.contract.test_schedules_contract import HOUR, T0, record, register

from tickwork import RunStatus
from tickwork._store import ClaimRequest, Ended, LeaseLost, NewRun, Store
from tickwork._values.clock import from_ms, to_ms
from tickwork._values.models import Decision, ScheduleState

LEASE = 30_000


def state_of(store: Store, key: str = "k") -> tuple[ScheduleState, str | None, int]:
    """(state, note, state_changed_at in ms) of a schedule."""
    info = store.schedules.get_schedule(key)
    assert info is not None and info.state_changed_at is not None
    return info.state, info.note, to_ms(info.state_changed_at)


def entries(store: Store, key: str = "k") -> list[tuple[Decision, str, str | None, int]]:
    """The history, oldest first, as (decision, reason, run_id, decided_at in ms)."""
    return [
        (e.decision, e.reason, e.run_id, to_ms(e.decided_at))
        for e in reversed(store.schedules.schedule_history(key))
    ]


def end_run(
    store: Store,
    run_id: str,
    status: RunStatus,
    *,
    key: str = "k",
    at: int = T0,
    error: str | None = "RuntimeError: boom",
) -> Ended:
    """Insert a run of schedule ``key``, claim it and end it as ``status``."""
    store.runs.insert_run(
        NewRun(run_id, "wf", "1", None, 0, "default", at, at, schedule_key=key, schedule_revision=1)
    )
    (claimed,) = store.runs.claim_runs(
        ClaimRequest(
            now_ms=at,
            lease_ms=LEASE,
            worker="w1",
            pools=("default",),
            limits={"wf": None},
            limit=1,
            idle=True,
        )
    )
    assert claimed.info.id == run_id
    return store.runs.finish_run(
        run_id=run_id,
        token=claimed.lease_token,
        status=status,
        result_json=None if status is RunStatus.FAILED else "1",
        error=error if status is RunStatus.FAILED else None,
        now_ms=at + 1,
        running=claimed.info,
    )


# -- notes -------------------------------------------------------------------------------


def test_a_new_schedule_changed_state_when_it_was_created(store: Store) -> None:
    register(store)
    assert state_of(store) == (ScheduleState.ACTIVE, None, T0)


@pytest.mark.parametrize(
    ("actions", "decision"),
    [
        (["pause"], Decision.PAUSED),
        (["pause", "resume"], Decision.RESUMED),
        (["deactivate"], Decision.DEACTIVATED),
        (["deactivate", "activate"], Decision.ACTIVATED),
    ],
)
def test_a_state_change_keeps_its_note_and_instant_and_is_recorded_with_it(
    store: Store, actions: list[str], decision: Decision
) -> None:
    register(store)
    for n, action in enumerate(actions, start=1):
        assert store.schedules.set_schedule_state(
            "k", action=action, now_ms=T0 + n, note=f"why {n}"
        )
    last = len(actions)
    _, note, changed_at = state_of(store)
    assert (note, changed_at) == (f"why {last}", T0 + last)
    assert entries(store)[-1] == (decision, f"why {last}", None, T0 + last)
    assert len(entries(store)) == last


def test_a_change_without_a_note_forgets_the_last_note_and_is_recorded_without_one(
    store: Store,
) -> None:
    register(store)
    store.schedules.set_schedule_state("k", action="pause", now_ms=T0 + 1, note="incident 42")
    store.schedules.set_schedule_state("k", action="resume", now_ms=T0 + 2)
    assert state_of(store) == (ScheduleState.ACTIVE, None, T0 + 2)
    assert entries(store) == [
        (Decision.PAUSED, "incident 42", None, T0 + 1),
        (Decision.RESUMED, "", None, T0 + 2),
    ]


def test_change_schedule_state_says_whether_it_changed(store: Store) -> None:
    register(store)
    assert store.schedules.change_schedule_state("k", action="pause", now_ms=T0 + 1) is True
    assert (
        store.schedules.change_schedule_state("k", action="pause", now_ms=T0 + 2, note="x") is False
    )
    assert store.schedules.change_schedule_state("nope", action="pause", now_ms=T0 + 3) is None
    assert state_of(store) == (ScheduleState.PAUSED, None, T0 + 1)
    assert len(entries(store)) == 1  # nothing written when nothing changed


def test_applying_the_state_a_schedule_has_keeps_its_note_and_instant(store: Store) -> None:
    register(store)
    store.schedules.set_schedule_state("k", action="pause", now_ms=T0 + 1, note="incident 42")
    assert (
        store.schedules.set_schedule_state("k", action="pause", now_ms=T0 + 2, note="another")
        is True
    )
    assert state_of(store) == (ScheduleState.PAUSED, "incident 42", T0 + 1)
    assert len(entries(store)) == 1


def test_registering_with_paused_changes_the_state_without_a_note(store: Store) -> None:
    register(store)
    store.schedules.set_schedule_state("k", action="deactivate", now_ms=T0 + 1, note="migration")
    store.schedules.set_schedule_state("k", action="activate", now_ms=T0 + 2, note="done")
    register(store, at=T0 + 3, paused=True)
    assert state_of(store) == (ScheduleState.PAUSED, None, T0 + 3)
    register(store, at=T0 + 4, paused=True)  # already paused: nothing changes
    assert state_of(store) == (ScheduleState.PAUSED, None, T0 + 3)


# -- pause_after_failures ----------------------------------------------------------------


def test_failed_runs_in_a_row_pause_the_schedule_naming_the_last_run_and_error(
    store: Store,
) -> None:
    register(store, record(pause_after_failures=3))
    for n in range(2):
        assert end_run(store, f"r{n}", RunStatus.FAILED).auto_paused is None
    assert state_of(store)[0] is ScheduleState.ACTIVE
    ended = end_run(store, "r2", RunStatus.FAILED, at=T0 + HOUR, error="KeyError: 'day'")
    state, note, changed_at = state_of(store)
    assert state is ScheduleState.PAUSED and changed_at == T0 + HOUR + 1
    assert note is not None and "r2" in note and "KeyError: 'day'" in note and "3" in note
    assert entries(store) == [(Decision.AUTO_PAUSED, note, "r2", T0 + HOUR + 1)]
    assert ended.auto_paused is not None and ended.auto_paused.run_id == "r2"
    assert ended.auto_paused.decided_at == from_ms(T0 + HOUR + 1)
    assert ended.run.status is RunStatus.FAILED
    assert store.firing.next_schedule_due_ms(pools=("default",), workflows=("wf",)) is None


def test_a_completed_run_resets_the_count(store: Store) -> None:
    register(store, record(pause_after_failures=2))
    end_run(store, "r0", RunStatus.FAILED)
    end_run(store, "r1", RunStatus.COMPLETED)
    end_run(store, "r2", RunStatus.FAILED)
    assert state_of(store)[0] is ScheduleState.ACTIVE
    end_run(store, "r3", RunStatus.FAILED)
    assert state_of(store)[0] is ScheduleState.PAUSED


def test_a_cancelled_run_neither_counts_nor_resets(store: Store) -> None:
    register(store, record(pause_after_failures=2))
    end_run(store, "r0", RunStatus.FAILED)
    end_run(store, "r1", RunStatus.CANCELLED)
    assert state_of(store)[0] is ScheduleState.ACTIVE
    end_run(store, "r2", RunStatus.FAILED)
    assert state_of(store)[0] is ScheduleState.PAUSED


def test_without_the_option_failures_never_pause(store: Store) -> None:
    register(store)
    for n in range(5):
        assert end_run(store, f"r{n}", RunStatus.FAILED).auto_paused is None
    assert state_of(store)[0] is ScheduleState.ACTIVE
    assert entries(store) == []


def test_a_state_change_starts_the_count_afresh(store: Store) -> None:
    register(store, record(pause_after_failures=2))
    end_run(store, "r0", RunStatus.FAILED)
    end_run(store, "r1", RunStatus.FAILED)
    assert state_of(store)[0] is ScheduleState.PAUSED
    store.schedules.set_schedule_state("k", action="resume", now_ms=T0 + 10)
    end_run(store, "r2", RunStatus.FAILED)
    assert state_of(store)[0] is ScheduleState.ACTIVE
    end_run(store, "r3", RunStatus.FAILED)
    assert state_of(store)[0] is ScheduleState.PAUSED
    assert [e[2] for e in entries(store)] == ["r1", None, "r3"]  # the resume in between


def test_a_paused_schedule_is_not_paused_again_by_failures(store: Store) -> None:
    register(store, record(pause_after_failures=1))
    store.schedules.set_schedule_state("k", action="pause", now_ms=T0, note="by hand")
    assert end_run(store, "r0", RunStatus.FAILED).auto_paused is None
    assert state_of(store) == (ScheduleState.PAUSED, "by hand", T0)


def test_an_ending_refused_for_a_lost_lease_counts_nothing(store: Store) -> None:
    register(store, record(pause_after_failures=1))
    store.runs.insert_run(NewRun("r0", "wf", "1", None, 0, "default", T0, T0, schedule_key="k"))
    store.runs.claim_runs(
        ClaimRequest(
            now_ms=T0,
            lease_ms=LEASE,
            worker="w1",
            pools=("default",),
            limits={"wf": None},
            limit=1,
            idle=True,
        )
    )
    with pytest.raises(LeaseLost):
        store.runs.finish_run(
            run_id="r0", token="stale", status=RunStatus.FAILED, result_json=None,
            error="x", now_ms=T0 + 1,
        )  # fmt: skip
    assert state_of(store)[0] is ScheduleState.ACTIVE and entries(store) == []


def test_a_run_of_a_removed_schedule_ends_as_usual(store: Store) -> None:
    register(store, record(pause_after_failures=1))
    store.runs.insert_run(NewRun("r0", "wf", "1", None, 0, "default", T0, T0, schedule_key="k"))
    (claimed,) = store.runs.claim_runs(
        ClaimRequest(
            now_ms=T0,
            lease_ms=LEASE,
            worker="w1",
            pools=("default",),
            limits={"wf": None},
            limit=1,
            idle=True,
        )
    )
    assert store.schedules.delete_schedule("k")
    ended = store.runs.finish_run(
        run_id="r0", token=claimed.lease_token, status=RunStatus.FAILED, result_json=None,
        error="x", now_ms=T0 + 1,
    )  # fmt: skip
    assert ended.run.status is RunStatus.FAILED and ended.auto_paused is None
