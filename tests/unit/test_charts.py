"""The dashboard's pictures (server/charts.py): what each mark stands for, read back from
the SVG text as a browser would parse it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tickwork import Decision, HistoryEntry, RunInfo, RunStatus, StepInfo
from tickwork._values.models import StepTry
from tickwork.server.charts import (
    STRIP_RUNS,
    duration_chart,
    lateness_chart,
    run_strip,
    started_apart,
    step_timeline,
)

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SVG = "{http://www.w3.org/2000/svg}"
EVIL = "<script>alert('x')</script>&\""


def s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def run(
    n: int,
    took: float | None = 1.0,
    status: RunStatus = RunStatus.COMPLETED,
    *,
    late: float | None = 0.5,
    run_id: str | None = None,
) -> RunInfo:
    """The n-th run of a schedule firing every minute, created ``late`` s after its
    occurrence (None: started by hand), taking ``took`` s (None: not started)."""
    occurrence = T0 + s(60 * n)
    created = occurrence + s(late or 0)
    started = None if took is None else created
    finished = None if took is None or status not in _ENDED else created + s(took)
    return RunInfo(
        id=run_id or f"sched@{n}", workflow="report", version="1", status=status, input=None,
        result=None, error=None, attempt=1, priority=0, pool="default", schedule_key="sched",
        scheduled_for=None if late is None else occurrence, created_at=created,
        started_at=started, finished_at=finished,
    )  # fmt: skip


_ENDED = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED}


def newest_first(runs: list[RunInfo]) -> list[RunInfo]:
    return sorted(runs, key=lambda r: r.created_at, reverse=True)


def parse(markup: str) -> ET.Element:
    return ET.fromstring(str(markup))


def links(svg: ET.Element) -> list[ET.Element]:
    return svg.findall(f"{SVG}a")


def mark_of(link: ET.Element) -> ET.Element:
    """The visible rect of a mark (the other one is its hit area)."""
    [rect] = [r for r in link.findall(f"{SVG}rect") if "hit" not in r.get("class", "")]
    return rect


def title(element: ET.Element) -> str:
    node = element.find(f"{SVG}title")
    assert node is not None and node.text is not None
    return node.text


def x_of(rect: ET.Element) -> float:
    return float(rect.get("x", "").rstrip("%"))


# -- a schedule's strip -------------------------------------------------------------------


def test_strip_has_one_mark_per_run_up_to_the_last_thirty() -> None:
    for count in (1, 7, STRIP_RUNS, STRIP_RUNS + 12):
        runs = newest_first([run(n) for n in range(count)])
        assert len(links(parse(run_strip(runs, now=T0)))) == min(count, STRIP_RUNS)


def test_strip_marks_go_oldest_to_newest_left_to_right_each_linking_to_its_run() -> None:
    runs = newest_first([run(n) for n in range(5)])
    marks = links(parse(run_strip(runs, now=T0, root="/ops")))
    assert [m.get("href") for m in marks] == [f"/ops/run?id=sched%40{n}" for n in range(5)]
    xs = [x_of(mark_of(m)) for m in marks]
    assert xs == sorted(xs) and xs[-1] > 90  # the newest at the right end


def test_strip_heights_follow_durations_and_colours_follow_status() -> None:
    took = [3.0, 0.0, 12.5, 1.0, 7.0]
    statuses = [RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.COMPLETED,
                RunStatus.CANCELLED, RunStatus.FAILED]  # fmt: skip
    runs = newest_first(
        [run(n, t, st) for n, (t, st) in enumerate(zip(took, statuses, strict=True))]
    )
    rects = [mark_of(m) for m in links(parse(run_strip(runs, now=T0)))]
    heights = [float(r.get("height", "")) for r in rects]
    assert sorted(range(5), key=lambda i: heights[i]) == sorted(range(5), key=lambda i: took[i])
    assert heights[1] > 0  # a run that took no time still shows
    assert [r.get("class", "").split()[-1] for r in rects] == [str(st) for st in statuses]


def test_strip_shows_runs_in_flight_distinctly() -> None:
    now = T0 + s(600)
    in_flight = [run(1, None, RunStatus.PENDING), run(2, 5.0, RunStatus.RUNNING),
                 run(3, 5.0, RunStatus.SLEEPING)]  # fmt: skip
    runs = newest_first([run(0, 2.0), *in_flight])
    rects = [mark_of(m) for m in links(parse(run_strip(runs, now=now)))]
    classes = [set(r.get("class", "").split()) for r in rects]
    assert "done" in classes[0] and "open" not in classes[0]
    assert all("open" in c for c in classes[1:])
    assert [c - {"mark", "open"} for c in classes[1:]] == [{"pending"}, {"running"}, {"sleeping"}]
    # running for most of ten minutes so far: taller than the finished 2 s run
    assert float(rects[2].get("height", "")) > float(rects[0].get("height", ""))


def test_strip_hover_names_the_run_its_status_time_and_duration() -> None:
    [mark] = links(parse(run_strip([run(0, 2.5, RunStatus.FAILED)], now=T0)))
    text = title(mark)
    assert "sched@0" in text and "failed" in text and "2026-03-01 12:00:00 UTC" in text
    assert "2.5 s" in text


def test_strip_of_no_runs_says_so_without_a_picture() -> None:
    assert "<svg" not in run_strip([], now=T0)
    assert "no runs yet" in run_strip([], now=T0)


def test_strip_escapes_what_it_embeds() -> None:
    markup = str(run_strip([run(0, run_id=EVIL)], now=T0, root="/x"))
    assert "<script>" not in markup
    [mark] = links(parse(markup))
    assert EVIL in title(mark)  # escaped in the text, the same text once parsed
    assert mark.get("href") == "/x/run?id=%3Cscript%3Ealert%28%27x%27%29%3C%2Fscript%3E%26%22"


# -- a run's timeline ---------------------------------------------------------------------


def step(name: str, start: float, end: float, **fields: Any) -> StepInfo:
    values: dict[str, Any] = {
        "run_id": "r", "name": name, "kind": "step", "status": "completed", "result": None,
        "error": None, "attempts": 1, "started_at": T0 + s(start), "finished_at": T0 + s(end),
    }  # fmt: skip
    values.update(fields)
    return StepInfo(**values)


def failed_try(attempt: int, start: float, end: float) -> StepTry:
    return StepTry(attempt, f"boom {attempt}", None, T0 + s(start), T0 + s(end))


def sleep(name: str, at: float, wake: float) -> StepInfo:
    wake_ms = int((T0 + s(wake)).timestamp() * 1000)
    return step(name, at, at, kind="sleep", result=wake_ms)


def started(status: RunStatus = RunStatus.COMPLETED, end: float | None = 100.0) -> RunInfo:
    return replace(run(0, None, status), started_at=T0,
                   finished_at=None if end is None else T0 + s(end))  # fmt: skip


def rows(svg: ET.Element) -> list[ET.Element]:
    return svg.findall(f"{SVG}g[@class='row']")


def marks(row: ET.Element) -> list[tuple[str, float, float]]:
    """(kind and status, x %, width %) of each mark of a row."""
    found = []
    for g in row.findall(f"{SVG}g"):
        rect = g.find(f"{SVG}rect")
        assert rect is not None
        kind = " ".join(g.get("class", "").split()[1:])
        found.append((kind, x_of(rect), float(rect.get("width", "").rstrip("%"))))
    return found


def test_timeline_has_one_row_per_checkpoint_on_one_axis() -> None:
    steps = [step("fetch", 0, 20), step("store", 20, 100)]
    svg = parse(step_timeline(started(), steps, now=T0 + s(500)))
    [fetch], [store] = (marks(r) for r in rows(svg))
    assert fetch == ("step completed", 0.0, 20.0)
    assert store == ("step completed", 20.0, 80.0)
    ticks = [t.text for t in svg.findall(f"{SVG}text[@class]") if "tick" in t.get("class", "")]
    assert ticks == ["12:00:00 UTC", "+50 s", "+1 min 40 s"]


def test_timeline_shows_failed_tries_and_the_back_offs_between_them() -> None:
    tries = (failed_try(1, 0, 10), failed_try(2, 30, 40))
    steps = [step("push", 80, 100, attempts=3, tries=tries)]
    [row] = rows(parse(step_timeline(started(), steps, now=T0 + s(500))))
    assert marks(row) == [
        ("try failed", 0.0, 10.0),
        ("backoff pending", 10.0, 20.0),
        ("try failed", 30.0, 10.0),
        ("backoff pending", 40.0, 40.0),
        ("step completed", 80.0, 20.0),
    ]
    label = row.find(f"{SVG}text")
    assert label is not None and "2 failed tries" in "".join(label.itertext())


def test_timeline_of_a_run_waiting_to_retry_shows_the_back_off_up_to_now() -> None:
    tries = (failed_try(1, 0, 10),)
    steps = [step("push", 0, 10, status="failed", error="boom 1", tries=tries)]
    now = T0 + s(40)
    svg = parse(step_timeline(started(RunStatus.PENDING, None), steps, now=now))
    [row] = rows(svg)
    assert marks(row) == [("try failed", 0.0, 25.0), ("backoff pending", 25.0, 75.0)]
    assert svg.find(f"{SVG}g[@class='tl now-line']") is not None


def test_timeline_shows_a_sleep_up_to_its_wake_time_even_ahead_of_now() -> None:
    steps = [step("fetch", 0, 10), sleep("cool-down", 10, 100)]
    svg = parse(step_timeline(started(RunStatus.SLEEPING, None), steps, now=T0 + s(50)))
    _, nap = rows(svg)
    assert marks(nap) == [("sleep sleeping", 10.0, 90.0)]
    [g] = nap.findall(f"{SVG}g")
    assert "wakes at 2026-03-01 12:01:40 UTC" in title(g)
    now_line = svg.find(f"{SVG}g[@class='tl now-line']/{SVG}line")
    assert now_line is not None and now_line.get("x1") == "50.000%"


def test_timeline_of_a_finished_run_shows_how_long_it_slept() -> None:
    steps = [sleep("nap", 0, 30), step("after", 30, 40)]
    svg = parse(step_timeline(started(end=40), steps, now=T0 + s(500)))
    nap, _ = rows(svg)
    assert marks(nap) == [("sleep completed", 0.0, 75.0)]
    assert "slept 30 s" in title(nap.findall(f"{SVG}g")[0])
    assert svg.find(f"{SVG}g[@class='tl now-line']") is None


def test_timeline_shows_a_wait_from_its_start_to_now_then_to_its_event() -> None:
    waits = {"names": ["order.paid"], "match": {"order_id": 7}, "until": None, "since": 0}
    wait = step("order.paid", 10, 10, kind="event", status="waiting", result=waits)
    svg = parse(step_timeline(started(RunStatus.WAITING, None), [wait], now=T0 + s(50)))
    [row] = rows(svg)
    assert marks(row) == [("sleep waiting", 20.0, 80.0)]  # not a 0 ms step
    assert "waits for order.paid where order_id = 7" in title(row.findall(f"{SVG}g")[0])
    label = row.find(f"{SVG}text")
    assert label is not None and "waiting 40 s so far" in "".join(label.itertext())
    came = step("order.paid", 10, 30, kind="event", result={"id": "p7"})
    [row] = rows(parse(step_timeline(started(end=40), [came], now=T0 + s(500))))
    assert marks(row) == [("sleep completed", 25.0, 50.0)]
    label = row.find(f"{SVG}text")
    assert label is not None and "waited 20 s" in "".join(label.itertext())


def test_timeline_of_no_steps_is_nothing() -> None:
    assert step_timeline(started(), [], now=T0) == ""


def test_timeline_escapes_step_names_and_errors() -> None:
    tries = (StepTry(1, EVIL, None, T0, T0 + s(1)),)
    markup = str(step_timeline(started(), [step(EVIL, 2, 3, attempts=2, tries=tries)], now=T0))
    assert "<script>" not in markup
    [row] = rows(parse(markup))
    label = row.find(f"{SVG}text")
    assert label is not None and label.text == EVIL
    assert EVIL in title(row.findall(f"{SVG}g")[0])


# -- a schedule's lateness and durations --------------------------------------------------


def test_lateness_chart_has_a_bar_per_run_of_an_occurrence_ordered_by_lateness() -> None:
    late = [0.2, 4.0, 1.0, None, 0.0]  # None: a run started by hand
    runs = newest_first([run(n, 1.0, late=x) for n, x in enumerate(late)])
    svg = parse(lateness_chart(runs))
    bars = links(svg)
    assert [b.get("href") for b in bars] == ["/run?id=sched%400", "/run?id=sched%401",
                                             "/run?id=sched%402", "/run?id=sched%404"]  # fmt: skip
    heights = [float(mark_of(b).get("height", "")) for b in bars]
    assert sorted(heights) == [heights[3], heights[0], heights[2], heights[1]]
    assert "4 s late" in title(bars[1])
    assert all(mark_of(b).get("class") == "mark late" for b in bars)
    assert "max 4 s" in "".join(svg.itertext())


def test_lateness_chart_says_a_run_fired_ahead_was_early_not_late() -> None:
    """Engine(fire_ahead=...): created before its occurrence, a bar of nothing."""
    runs = newest_first([run(0, 1.0, late=2.0), run(1, 1.0, late=-0.5)])
    bars = links(parse(lateness_chart(runs)))
    assert "created 500 ms early (fired ahead)" in title(bars[1])
    assert "late" not in title(bars[1])
    assert float(mark_of(bars[1]).get("height", "")) < float(mark_of(bars[0]).get("height", ""))


def entry(run_id: str, decision: Decision) -> HistoryEntry:
    return HistoryEntry("sched", T0, decision, "why", run_id, 1, T0)


def test_lateness_chart_leaves_out_backfilled_and_run_now_runs_and_counts_them() -> None:
    """A run backfilled for an occurrence three days back, and one started now for the
    current occurrence, have no bar (the largest stays the fired runs' 4 s) and are
    counted in the label; the fired runs keep theirs."""
    backfilled = run(1, late=3 * 86_400.0, run_id="sched@old")
    run_now = run(5, late=30.0, run_id="sched@now")
    fired = [run(n, late=x) for n, x in ((2, 0.5), (3, 4.0), (4, 1.0))]
    history = [
        entry("sched@old", Decision.BACKFILLED),
        entry("sched@now", Decision.TRIGGERED),
        entry("sched@3", Decision.STARTED),
        entry("sched@4", Decision.ALREADY_STARTED),  # a run now that found a run: fired
    ]
    apart = started_apart(history)
    assert apart == {"sched@old": Decision.BACKFILLED, "sched@now": Decision.TRIGGERED}
    svg = parse(lateness_chart(newest_first([backfilled, run_now, *fired]), apart=apart))
    assert [b.get("href") for b in links(svg)] == [f"/run?id=sched%40{n}" for n in (2, 3, 4)]
    text = "".join(svg.itertext())
    assert "max 4 s" in text and "left out: 1 backfilled, 1 run now" in text
    assert "left out: 1 backfilled, 1 run now" in svg.get("aria-label", "")


def test_lateness_chart_of_backfilled_runs_only_says_they_were_left_out() -> None:
    """No bar is left: no picture, and the words say why."""
    runs = [run(n, late=86_400.0) for n in range(3)]
    apart = {r.id: Decision.BACKFILLED for r in runs}
    shown = str(lateness_chart(newest_first(runs), apart=apart))
    assert "<svg" not in shown and "left out: 3 backfilled" in shown


def test_duration_chart_has_a_bar_per_finished_run_ordered_by_duration() -> None:
    runs = newest_first([run(0, 3.0), run(1, 9.0, RunStatus.FAILED),
                         run(2, 5.0, RunStatus.RUNNING), run(3, 1.0)])  # fmt: skip
    bars = links(parse(duration_chart(runs)))
    assert len(bars) == 3
    heights = [float(mark_of(b).get("height", "")) for b in bars]
    assert heights[1] > heights[0] > heights[2]
    assert "failed" in mark_of(bars[1]).get("class", "")


@pytest.mark.parametrize("chart", [lateness_chart, duration_chart])
def test_charts_of_no_runs_say_so_without_a_picture(chart: Any) -> None:
    empty = str(chart([]))
    assert "<svg" not in empty and "no" in empty
    assert "<svg" not in str(chart([run(0, None, RunStatus.PENDING, late=None)]))


@pytest.mark.parametrize("chart", [lateness_chart, duration_chart])
def test_charts_escape_what_they_embed(chart: Any) -> None:
    markup = str(chart([run(0, run_id=EVIL)]))
    assert "<script>" not in markup
    [bar] = links(parse(markup))
    assert EVIL in title(bar)
