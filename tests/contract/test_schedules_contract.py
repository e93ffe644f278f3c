"""The store contract for schedules: registration, firing, state, triggers, on every backend."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

import pytest

from tickwork import RunStatus
from tickwork._rules.occurrences import occurrences_of
from tickwork._rules.planning import Plan, PlanInput, plan
from tickwork._store import ClaimRequest, DueSchedule, FireResult, NewRun, ScheduleRecord, Store
from tickwork._values.clock import to_ms
from tickwork._values.ids import occurrence_run_id
from tickwork._values.models import Decision, Overlap, ScheduleState, Triggered

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
MINUTE = 60_000
HOUR = 60 * MINUTE
POOLS = ("default",)
WORKFLOWS = ("wf",)


def record(key: str = "k", **changes: object) -> ScheduleRecord:
    fields: dict[str, object] = dict(
        key=key, workflow="wf", version="1", input_json='{"n":1}', cron=None, every_ms=HOUR,
        timezone="UTC", overlap="allow", catchup=1, catchup_window_ms=None, jitter_ms=None,
        pool="default", priority=0, retry_json=None, start_ms=None, end_ms=None,
    )  # fmt: skip
    fields.update(changes)
    definition = repr(sorted((k, v) for k, v in fields.items() if k != "key"))
    return ScheduleRecord(**fields, definition=definition)  # type: ignore[arg-type]


def register(
    store: Store,
    rec: ScheduleRecord | None = None,
    *,
    at: int = T0,
    on_conflict: str = "update",
    paused: bool | None = None,
) -> tuple[str, int]:
    done = store.schedules.upsert_schedule(
        rec or record(), now_ms=at, on_conflict=on_conflict, paused=paused
    )
    return done.outcome, done.revision


def decide(due: DueSchedule, now_ms: int) -> Plan:
    """The real planner, as the engine hands it to ``fire_due``."""
    rec = due.record
    state = PlanInput(
        key=rec.key, overlap=Overlap(rec.overlap), catchup=rec.catchup,
        catchup_window_ms=rec.catchup_window_ms, jitter_ms=rec.jitter_ms, end_ms=rec.end_ms,
        next_fire_ms=due.firing.next_fire_ms, buffered_ms=due.firing.buffered_ms,
        paused_ms=due.firing.paused_ms, resumed_ms=due.firing.resumed_ms,
        active_run_ids=due.active_run_ids, now_ms=now_ms,
    )  # fmt: skip
    return plan(state, occurrences_of(rec, due.anchor_ms))


def fire(
    store: Store,
    at: int,
    *,
    limit: int = 100,
    pools: tuple[str, ...] = POOLS,
    workflows: tuple[str, ...] = WORKFLOWS,
    decider: Callable[[DueSchedule, int], Plan] = decide,
) -> FireResult:
    return store.firing.fire_due(
        now_ms=at, pools=pools, workflows=workflows, limit=limit, decide=decider
    )


def next_fire_ms(store: Store, key: str = "k") -> int | None:
    info = store.schedules.get_schedule(key)
    assert info is not None
    return None if info.next_fire_at is None else to_ms(info.next_fire_at)


def decisions(store: Store, key: str = "k") -> list[tuple[Decision, int]]:
    """The history, oldest first, as (decision, occurrence)."""
    entries = reversed(store.schedules.schedule_history(key))
    return [(entry.decision, to_ms(entry.occurrence)) for entry in entries]


def due(store: Store) -> int | None:
    return store.firing.next_schedule_due_ms(pools=POOLS, workflows=WORKFLOWS)


# -- upsert_schedule ---------------------------------------------------------------------


def test_new_key_is_created_active_at_revision_one_due_one_interval_later(store: Store) -> None:
    assert register(store) == ("created", 1)
    info = store.schedules.get_schedule("k")
    assert info is not None
    assert (info.state, info.revision, info.workflow) == (ScheduleState.ACTIVE, 1, "wf")
    assert next_fire_ms(store) == T0 + HOUR
    assert due(store) == T0 + HOUR
    stored = store.schedules.get_schedule_record("k")
    assert stored is not None and stored.anchor_ms == T0 and stored.record == record()


def test_same_definition_again_changes_nothing(store: Store) -> None:
    register(store)
    assert register(store, at=T0 + 30 * MINUTE) == ("unchanged", 1)
    info = store.schedules.get_schedule("k")
    assert info is not None and to_ms(info.updated_at) == T0
    assert next_fire_ms(store) == T0 + HOUR


def test_other_definition_updates_in_place_bumps_revision_and_keeps_next(store: Store) -> None:
    register(store)
    assert register(store, record(input_json='{"n":2}'), at=T0 + MINUTE) == ("updated", 2)
    info = store.schedules.get_schedule("k")
    assert info is not None and info.input == {"n": 2} and info.revision == 2
    assert next_fire_ms(store) == T0 + HOUR  # the timing did not change


def test_other_timing_is_placed_afresh_from_now(store: Store) -> None:
    register(store)
    assert register(store, record(every_ms=MINUTE), at=T0 + 30 * MINUTE)[0] == "updated"
    assert next_fire_ms(store) == T0 + 31 * MINUTE
    assert due(store) == T0 + 31 * MINUTE


def test_other_definition_with_keep_is_kept_unchanged(store: Store) -> None:
    register(store)
    assert register(store, record(input_json="2"), on_conflict="keep") == ("kept", 1)
    info = store.schedules.get_schedule("k")
    assert info is not None and info.input == {"n": 1}


def test_other_definition_with_error_is_a_conflict_that_changes_nothing(store: Store) -> None:
    register(store)
    outcome = register(store, record(input_json="2"), on_conflict="error", paused=True)
    assert outcome == ("conflict", 1)
    info = store.schedules.get_schedule("k")
    assert info is not None and info.input == {"n": 1} and info.state is ScheduleState.ACTIVE


def test_created_paused_is_never_due(store: Store) -> None:
    assert register(store, paused=True) == ("created", 1)
    info = store.schedules.get_schedule("k")
    assert info is not None and info.state is ScheduleState.PAUSED
    assert due(store) is None
    assert fire(store, T0 + 5 * HOUR).fired == 0


def test_registering_with_paused_false_resumes_a_paused_schedule(store: Store) -> None:
    register(store, paused=True)
    assert register(store, at=T0 + MINUTE, paused=False) == ("unchanged", 1)
    info = store.schedules.get_schedule("k")
    assert info is not None and info.state is ScheduleState.ACTIVE
    assert due(store) == T0 + HOUR


def test_racing_registrations_of_one_key_create_it_once(store: Store) -> None:
    racers = 8
    start = threading.Barrier(racers)
    outcomes: list[tuple[str, int]] = []
    failures: list[BaseException] = []

    def race() -> None:
        start.wait()
        try:
            outcomes.append(register(store))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=race) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []
    assert sorted(outcomes) == [("created", 1)] + [("unchanged", 1)] * (racers - 1)
    assert [info.key for info in store.schedules.list_schedules()] == ["k"]


# -- fire_due ----------------------------------------------------------------------------


def test_nothing_fires_before_the_first_occurrence(store: Store) -> None:
    register(store)
    result = fire(store, T0 + HOUR - 1)
    assert (result.fired, result.run_ids, result.errors) == (0, [], [])


def test_due_occurrence_starts_its_run_records_it_and_advances(store: Store) -> None:
    register(store)
    result = fire(store, T0 + HOUR)
    run_id = occurrence_run_id("k", T0 + HOUR)
    assert (result.fired, result.run_ids, result.errors) == (1, [run_id], [])
    run = store.runs.get_run(run_id)
    assert run is not None and run.status is RunStatus.PENDING
    assert (run.schedule_key, run.schedule_revision, run.input) == ("k", 1, {"n": 1})
    assert run.scheduled_for is not None and to_ms(run.scheduled_for) == T0 + HOUR
    assert decisions(store) == [(Decision.STARTED, T0 + HOUR)]
    assert next_fire_ms(store) == T0 + 2 * HOUR
    info = store.schedules.get_schedule("k")
    assert info is not None and info.last_run_id == run_id
    assert fire(store, T0 + HOUR).fired == 0  # advanced: not due again


def test_an_occurrence_whose_run_exists_is_recorded_as_already_started(store: Store) -> None:
    register(store)
    run_id = occurrence_run_id("k", T0 + HOUR)
    store.runs.insert_run(NewRun(run_id, "wf", "1", None, 0, "default", T0, T0))
    result = fire(store, T0 + HOUR)
    assert (result.fired, result.run_ids) == (1, [])
    assert decisions(store) == [(Decision.ALREADY_STARTED, T0 + HOUR)]
    assert next_fire_ms(store) == T0 + 2 * HOUR


@pytest.mark.parametrize(
    ("pools", "workflows", "fired"),
    [(("default",), ("wf",), 1), (("other",), ("wf",), 0), (("default",), ("other",), 0)],
)
def test_only_schedules_of_the_given_pools_and_workflows_fire(
    store: Store, pools: tuple[str, ...], workflows: tuple[str, ...], fired: int
) -> None:
    register(store)
    assert fire(store, T0 + HOUR, pools=pools, workflows=workflows).fired == fired
    found = store.firing.next_schedule_due_ms(pools=pools, workflows=workflows)
    assert found == (None if fired == 0 else T0 + 2 * HOUR)


def test_limit_bounds_the_schedules_fired_per_call(store: Store) -> None:
    for key in ("a", "b", "c"):
        register(store, record(key))
    assert fire(store, T0 + HOUR, limit=2).fired == 2
    assert fire(store, T0 + HOUR, limit=2).fired == 1
    assert fire(store, T0 + HOUR, limit=2).fired == 0


def test_a_raising_decide_postpones_that_schedule_alone(store: Store) -> None:
    register(store, record("broken"))
    register(store, record("fine"))
    boom = ValueError("boom")

    def decider(schedule: DueSchedule, now_ms: int) -> Plan:
        if schedule.record.key == "broken":
            raise boom
        return decide(schedule, now_ms)

    now = T0 + HOUR
    result = fire(store, now, decider=decider)
    assert result.fired == 2
    assert result.errors == [("broken", boom)]
    assert result.run_ids == [occurrence_run_id("fine", now)]
    assert store.schedules.schedule_history("broken") == []
    assert due(store) == now + MINUTE  # looked at again a minute later
    assert fire(store, now + MINUTE - 1).fired == 0
    assert fire(store, now + MINUTE).run_ids == [occurrence_run_id("broken", now)]


def test_runs_the_plan_cancels_are_cancelled_or_asked_to_stop(store: Store) -> None:
    register(store)
    for run_id in ("idle", "busy"):
        store.runs.insert_run(NewRun(run_id, "wf", "1", None, 0, "default", T0, T0))
    claimed = store.runs.claim_runs(
        ClaimRequest(
            now_ms=T0, lease_ms=HOUR, worker="w", pools=POOLS, limits={"wf": 1}, limit=1, idle=True
        )
    )
    busy = claimed[0].info.id
    idle = "idle" if busy == "busy" else "busy"

    def cancelling(schedule: DueSchedule, now_ms: int) -> Plan:
        return Plan(cancel_run_ids=[idle, busy], next_fire_ms=now_ms + HOUR)

    fire(store, T0 + HOUR, decider=cancelling)
    idle_run = store.runs.get_run(idle)
    assert idle_run is not None and idle_run.status is RunStatus.CANCELLED
    held = store.runs.renew_leases(tokens={busy: claimed[0].lease_token}, now_ms=T0, lease_ms=HOUR)
    assert held == {busy: True}  # still running, asked to stop


def test_a_buffered_occurrence_is_due_when_the_run_in_flight_ends(store: Store) -> None:
    register(store, record(overlap="buffer_one"))
    first = fire(store, T0 + HOUR).run_ids[0]
    assert fire(store, T0 + 2 * HOUR).run_ids == []  # buffered behind the first run
    assert due(store) == T0 + 3 * HOUR
    assert store.runs.cancel_run(first, now_ms=T0 + 2 * HOUR + 5)
    assert due(store) == T0 + 2 * HOUR + 5
    assert fire(store, T0 + 2 * HOUR + 5).run_ids == [occurrence_run_id("k", T0 + 2 * HOUR)]


# -- state changes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actions", "state"),
    [
        (["pause"], ScheduleState.PAUSED),
        (["pause", "resume"], ScheduleState.ACTIVE),
        (["deactivate"], ScheduleState.INACTIVE),
        (["pause", "deactivate"], ScheduleState.INACTIVE),
        (["deactivate", "activate"], ScheduleState.ACTIVE),
        (["deactivate", "resume"], ScheduleState.INACTIVE),  # resume does not activate
    ],
)
def test_state_changes(store: Store, actions: list[str], state: ScheduleState) -> None:
    register(store)
    for action in actions:
        assert store.schedules.set_schedule_state("k", action=action, now_ms=T0 + MINUTE)
    info = store.schedules.get_schedule("k")
    assert info is not None and info.state is state


@pytest.mark.parametrize("action", ["pause", "deactivate"])
def test_paused_and_inactive_schedules_are_never_due(store: Store, action: str) -> None:
    register(store)
    store.schedules.set_schedule_state("k", action=action, now_ms=T0 + MINUTE)
    assert due(store) is None
    assert fire(store, T0 + 10 * HOUR).fired == 0


def test_applying_the_state_a_schedule_has_changes_nothing(store: Store) -> None:
    register(store)
    assert store.schedules.set_schedule_state("k", action="pause", now_ms=T0 + MINUTE)
    assert store.schedules.set_schedule_state("k", action="pause", now_ms=T0 + 2 * MINUTE)
    assert (
        store.schedules.set_schedule_state("k", action="activate", now_ms=T0 + 3 * MINUTE) is True
    )
    store.schedules.set_schedule_state("k", action="activate", now_ms=T0 + 4 * MINUTE)
    info = store.schedules.get_schedule("k")
    assert info is not None and to_ms(info.updated_at) == T0 + 3 * MINUTE


def test_state_change_of_an_unknown_key_is_false(store: Store) -> None:
    assert store.schedules.set_schedule_state("nope", action="pause", now_ms=T0) is False


def test_resume_leaves_missed_occurrences_to_catchup_as_missed_while_paused(
    store: Store,
) -> None:
    register(store)
    store.schedules.set_schedule_state("k", action="pause", now_ms=T0 + 10 * MINUTE)
    store.schedules.set_schedule_state("k", action="resume", now_ms=T0 + 4 * HOUR + 30 * MINUTE)
    assert next_fire_ms(store) == T0 + HOUR  # kept: the missed ones are decided next
    fire(store, T0 + 4 * HOUR + 30 * MINUTE)
    assert decisions(store) == [
        (Decision.PAUSED, T0 + 10 * MINUTE),  # every state change is in the history
        (Decision.RESUMED, T0 + 4 * HOUR + 30 * MINUTE),
        (Decision.MISSED_PAUSED, T0 + HOUR),
        (Decision.STARTED, T0 + 4 * HOUR),
    ]


def test_activate_starts_afresh_from_now(store: Store) -> None:
    register(store)
    store.schedules.set_schedule_state("k", action="deactivate", now_ms=T0 + MINUTE)
    store.schedules.set_schedule_state("k", action="activate", now_ms=T0 + 5 * HOUR + 30 * MINUTE)
    assert next_fire_ms(store) == T0 + 6 * HOUR
    fire(store, T0 + 6 * HOUR)
    assert decisions(store) == [
        (Decision.DEACTIVATED, T0 + MINUTE),
        (Decision.ACTIVATED, T0 + 5 * HOUR + 30 * MINUTE),
        (Decision.STARTED, T0 + 6 * HOUR),  # none while inactive
    ]


# -- trigger, history, delete, next due --------------------------------------------------


def occurrence_run(key: str, occurrence: int, now: int) -> NewRun:
    return NewRun(
        occurrence_run_id(key, occurrence), "wf", "1", None, 0, "default", now, now,
        schedule_key=key, schedule_revision=1, scheduled_for_ms=occurrence,
    )  # fmt: skip


def test_trigger_starts_the_occurrence_once_and_records_each_call(store: Store) -> None:
    register(store)
    now = T0 + 90 * MINUTE
    run = occurrence_run("k", T0 + HOUR, now)
    trigger = functools.partial(
        store.firing.trigger_schedule, "k", occurrence_ms=T0 + HOUR, run=run
    )
    assert trigger(now_ms=now, reason="run now") == Triggered(run.id, True, RunStatus.PENDING)
    again = trigger(now_ms=now + 1, reason="run now")
    assert again == Triggered(run.id, False, RunStatus.PENDING)
    assert decisions(store) == [
        (Decision.TRIGGERED, T0 + HOUR),
        (Decision.ALREADY_STARTED, T0 + HOUR),
    ]
    assert len(store.runs.list_runs(schedule_key="k")) == 1
    info = store.schedules.get_schedule("k")
    assert info is not None and info.last_run_id == run.id
    assert info.last_fire_at is not None and to_ms(info.last_fire_at) == now  # not now + 1


def test_trigger_of_an_unknown_key_is_none_and_starts_nothing(store: Store) -> None:
    run = occurrence_run("nope", T0, T0)
    assert (
        store.firing.trigger_schedule(
            "nope", now_ms=T0, occurrence_ms=T0, run=run, reason="run now"
        )
        is None
    )
    assert store.runs.get_run(run.id) is None


def test_history_is_newest_first_and_limited(store: Store) -> None:
    register(store)
    for hour in (1, 2, 3):
        fire(store, T0 + hour * HOUR)
    newest = store.schedules.schedule_history("k", limit=2)
    assert [to_ms(entry.occurrence) for entry in newest] == [T0 + 3 * HOUR, T0 + 2 * HOUR]


def test_delete_removes_the_schedule_and_its_history_but_not_its_runs(store: Store) -> None:
    register(store)
    run_id = fire(store, T0 + HOUR).run_ids[0]
    assert store.schedules.delete_schedule("k") is True
    assert store.schedules.get_schedule("k") is None and store.schedules.schedule_history("k") == []
    assert store.runs.get_run(run_id) is not None
    assert store.schedules.delete_schedule("k") is False


def test_next_schedule_due_is_the_earliest_among_active_schedules(store: Store) -> None:
    assert due(store) is None
    register(store, record("slow", every_ms=2 * HOUR))
    register(store, record("fast", every_ms=HOUR), at=T0 + 10 * MINUTE)
    assert due(store) == T0 + 70 * MINUTE
    store.schedules.set_schedule_state("fast", action="pause", now_ms=T0 + 20 * MINUTE)
    assert due(store) == T0 + 2 * HOUR
    assert store.firing.next_schedule_due_ms(pools=(), workflows=WORKFLOWS) is None
