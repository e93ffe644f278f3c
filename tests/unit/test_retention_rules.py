"""Retention's pure rules (``_retention``): which cutoff applies, what fits in a batch."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tickwork._rules.retention import (
    BATCH_ROWS,
    LEAST_BATCH_ROWS,
    MOST_ROWS_PER_S,
    Cutoffs,
    PrunePosition,
    Take,
    candidate_limit,
    check_retention,
    cutoffs,
    give_way_s,
    next_budget,
    take_within,
)
from tickwork.errors import ConfigError

NOW = 1_772_366_400_000
DAY = 86_400_000


def test_retention_is_a_duration_or_none() -> None:
    assert check_retention("30d") == 30 * DAY
    assert check_retention(timedelta(hours=1)) == 3_600_000
    assert check_retention(None) is None
    for bad in ("0s", "-1d", "soon", 0, True, 1.5):
        with pytest.raises(ConfigError, match="retention"):
            check_retention(bad)


def test_a_workflows_own_retention_overrides_the_engines() -> None:
    found = cutoffs(
        now_ms=NOW,
        retention_ms=30 * DAY,
        workflow_retention_ms={"short": 2 * DAY, "long": 90 * DAY, "plain": None},
    )
    assert found.for_workflow("short") == NOW - 2 * DAY
    assert found.for_workflow("long") == NOW - 90 * DAY
    assert found.for_workflow("plain") == NOW - 30 * DAY  # no retention of its own
    assert found.for_workflow("unknown") == NOW - 30 * DAY  # not registered here
    assert found.history_ms == NOW - 30 * DAY


def test_no_engine_retention_keeps_everything_but_workflows_with_their_own() -> None:
    found = cutoffs(now_ms=NOW, retention_ms=None, workflow_retention_ms={"short": DAY, "x": None})
    assert found.for_workflow("short") == NOW - DAY
    assert found.for_workflow("x") is None
    assert found.for_workflow("unknown") is None
    assert found.history_ms is None
    assert found.prunes_anything
    assert not cutoffs(now_ms=NOW, retention_ms=None, workflow_retention_ms={}).prunes_anything


def test_older_than_replaces_every_retention() -> None:
    found = cutoffs(
        now_ms=NOW, retention_ms=None, workflow_retention_ms={"long": 90 * DAY}, older_than_ms=DAY
    )
    assert found == Cutoffs(runs_ms=NOW - DAY, history_ms=NOW - DAY)
    assert found.for_workflow("long") == NOW - DAY


def test_runs_go_whole_while_they_fit_the_budget() -> None:
    take = take_within([("a", 3), ("b", 3), ("c", 3)], 9, fresh=True)
    assert take.run_ids == ("a", "b") and take.rows == 8 and not take.complete
    take = take_within([("a", 3), ("b", 4)], 9, fresh=True)
    assert take.run_ids == ("a", "b") and take.rows == 9 and take.complete
    assert take_within([], 9, fresh=True).complete


def test_a_run_heavier_than_a_batch_loses_its_steps_first() -> None:
    take = take_within([("heavy", 2_500), ("b", 0)], BATCH_ROWS, fresh=True)
    assert take.run_ids == () and take.steps_of == "heavy" and take.steps == BATCH_ROWS
    assert take.rows == BATCH_ROWS and not take.complete
    # Once the rest fits, the run goes whole with it.
    take = take_within([("heavy", 999), ("b", 0)], BATCH_ROWS, fresh=True)
    assert take.run_ids == ("heavy",) and take.rows == BATCH_ROWS
    # Not in a batch that removed something already: it waits for a fresh one.
    take = take_within([("heavy", 2_500)], 400, fresh=False)
    assert take == Take(complete=False)


def test_candidates_asked_for_match_the_weight_of_runs_seen() -> None:
    assert candidate_limit(1_000, 1.0) == 1_000
    assert candidate_limit(1_000, 4.0) == 250
    assert candidate_limit(1_000, 5_000.0) == 1
    assert candidate_limit(10, 0.5) == 10  # never more than the budget
    assert candidate_limit(0, 4.0) == 0


def test_a_pass_walks_runs_then_history_then_ends() -> None:
    start = PrunePosition()
    assert (start.phase, start.done) == ("runs", False)
    assert start.at("wf", 5) == PrunePosition("runs", "wf", past=False, floor_ms=5)
    assert start.at("wf", 5).after("wf") == PrunePosition("runs", "wf", past=True)
    history = start.at("wf", 5).next_phase()
    assert (history.phase, history.name, history.floor_ms) == ("history", None, None)
    assert history.next_phase().done


def test_the_pause_between_batches_is_half_as_long_as_the_batch_within_bounds() -> None:
    assert give_way_s(0.004) == 0.002
    assert give_way_s(0.0) == 0.001
    assert give_way_s(3.0) == 0.1


def test_a_paced_pass_removes_no_more_rows_a_second_than_its_pace() -> None:
    # 1,000 rows in 10 ms at 25,000 rows/s: the batch and its pause take 40 ms.
    assert give_way_s(0.010, 1_000, 25_000) == pytest.approx(0.030)
    assert give_way_s(0.010, 1_000, MOST_ROWS_PER_S) == pytest.approx(
        1_000 / MOST_ROWS_PER_S - 0.010
    )
    # A slow batch is paced already: half as long again, as without a pace.
    assert give_way_s(0.080, 1_000, 25_000) == 0.040
    assert give_way_s(0.010, 0, 25_000) == 0.005  # nothing removed: nothing to pace


@pytest.mark.parametrize("removed", [0, 1, 50, 999, 1_000])
@pytest.mark.parametrize("elapsed_ms", [0, 1, 5, 20, 60, 250])
def test_with_a_pace_a_batch_and_its_pause_stay_within_it(removed: int, elapsed_ms: int) -> None:
    elapsed_s = elapsed_ms / 1000
    pause = give_way_s(elapsed_s, removed, 25_000)
    assert 0.001 <= pause <= 0.1
    assert pause >= give_way_s(elapsed_s)  # never less room for the others than unpaced
    assert removed / (elapsed_s + pause) <= 25_000 * (1 + 1e-9)


def test_where_writes_take_turns_the_budget_fits_the_target_duration() -> None:
    assert next_budget(250, 250, 0.010, None) == BATCH_ROWS  # no target: the full budget
    assert next_budget(400, 400, 0.010, 0.005) == 200  # twice too slow: half as many
    assert next_budget(100, 100, 0.001, 0.005) == 200  # grows twofold at most
    assert next_budget(800, 800, 0.001, 0.005) == BATCH_ROWS  # never above the cap
    assert next_budget(100, 100, 1.0, 0.005) == LEAST_BATCH_ROWS  # a slow disk still moves
    assert next_budget(400, 10, 0.010, 0.005) == 400  # a short batch says nothing new
