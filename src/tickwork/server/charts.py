"""The dashboard's pictures, drawn on the server as inline SVG: plain values in, markup out.

- ``run_strip``: a schedule's recent runs, one mark each (colour: status; height: duration).
- ``step_timeline``: a run's checkpoints on a time axis, with failed tries, back-offs
  between them and durable sleeps.
- ``lateness_chart`` / ``duration_chart``: a schedule's runs over time, one bar each.

Why SVG drawn here: no script runs in the browser but ``live.js`` and the
Content-Security-Policy forbids inline styles, so every picture is markup whose colours
come from classes in ``dashboard.css`` (the badges' colours). Horizontal positions are
percentages of the picture's width and text sizes are pixels, so a picture fills a phone's
screen or a wide one without its text shrinking or stretching. Every text embedded (ids,
step names, times) is escaped here; the result is ``Markup`` the templates print as is.
Each mark carries a ``<title>`` (shown on hover) and links to its run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from markupsafe import Markup, escape

from .._values.checkpoints import wait_what, waiting_for
from .._values.clock import from_ms
from .._values.models import ACTIVE_STATUSES, Decision, HistoryEntry, RunInfo, RunStatus, StepInfo
from .display import format_elapsed, format_utc

__all__ = [
    "STRIP_RUNS",
    "duration_chart",
    "lateness_chart",
    "run_strip",
    "started_apart",
    "step_timeline",
]

STRIP_RUNS = 30  # marks in a schedule's strip: the newest at the right end
STRIP_HEIGHT = 28  # px
MIN_MARK = 3  # px: the shortest run still shows
CHART_PLOT = 64  # px: a chart's bars, between its top label and its time axis
ROW = 34  # px: one checkpoint of a run's timeline (its label, then its bar)
#: runs a person started, left out of the lateness chart, as its label counts them
_APART = {Decision.BACKFILLED: "backfilled", Decision.TRIGGERED: "run now"}


def run_strip(runs: Sequence[RunInfo], *, now: datetime, root: str = "") -> Markup:
    """A schedule's recent ``runs`` (newest first, as ``list_runs`` gives them) as a strip
    of ``STRIP_RUNS`` slots, oldest at the left. A finished run's mark is as tall as its
    duration within the strip; a running or sleeping one as its time so far, outlined; a
    pending one a small outlined box."""
    if not runs:
        return Markup('<span class="muted">no runs yet</span>')
    shown = list(reversed(runs[:STRIP_RUNS]))
    lengths = [_run_ms(r, now) for r in shown]
    longest = max((ms for ms in lengths if ms is not None), default=0)
    first_slot = STRIP_RUNS - len(shown)
    slot = 100 / STRIP_RUNS
    marks = []
    for i, (run, ms) in enumerate(zip(shown, lengths, strict=True)):
        height = MIN_MARK if ms is None else _scaled(ms, longest, STRIP_HEIGHT - 2)
        x = (first_slot + i) * slot
        kind = "open" if run.status in ACTIVE_STATUSES else "done"
        marks.append(
            _link(
                run.id,
                root,
                _strip_title(run, ms),
                f'<rect class="hit" x="{x:.3f}%" y="0" width="{slot:.3f}%" '
                f'height="{STRIP_HEIGHT}"/>'
                f'<rect class="mark {kind} {escape(run.status)}" x="{x + slot * 0.15:.3f}%" '
                f'y="{STRIP_HEIGHT - 1 - height:.1f}" width="{slot * 0.7:.3f}%" '
                f'height="{height:.1f}"/>',
            )
        )
    counts = ", ".join(
        f"{n} {status}" for status in RunStatus if (n := sum(r.status == status for r in shown))
    )
    label = f"The last {len(shown)} runs, oldest first: {counts}"
    return _svg(
        "strip",
        STRIP_HEIGHT,
        label,
        f'<line class="axis" x1="0" x2="100%" y1="{STRIP_HEIGHT - 0.5}" '
        f'y2="{STRIP_HEIGHT - 0.5}"/>' + "".join(marks),
    )


def step_timeline(run: RunInfo, steps: Sequence[StepInfo], *, now: datetime) -> Markup:
    """A run's ``steps`` on one time axis, from its start to its end (or ``now``, or the
    wake time of a sleep still ahead): one row per checkpoint, its failed tries, the
    back-offs between them and its sleeps each a mark of their own."""
    if not steps:
        return Markup("")
    end = run.finished_at or now
    # The last checkpoint may be what the run waits on: a sleep, or a failed try's back-off.
    rows = [_step_marks(step, end, run.status if step is steps[-1] else None) for step in steps]
    instants = [run.started_at or run.created_at, end]
    instants += [at for marks in rows for m in marks for at in (m.start, m.end)]
    axis = _Axis(min(instants), max(instants))
    body = [axis.grid(len(steps) * ROW)]
    for i, (step, marks) in enumerate(zip(steps, rows, strict=True)):
        y = i * ROW
        body.append(
            f'<g class="row"><text class="label" x="0" y="{y + 12}">{escape(step.name)}'
            f'<tspan class="muted"> {escape(_step_words(step, marks))}</tspan></text>'
            + "".join(axis.bar(m, y + 16, 12) for m in marks)
            + "</g>"
        )
    if run.finished_at is None:
        body.append(axis.now_line(now, len(steps) * ROW))
    height = len(steps) * ROW + 18
    body.append(axis.labels(len(steps) * ROW + 14))
    kinds = sorted({m.kind for marks in rows for m in marks})
    label = f"Timeline of {len(steps)} checkpoints: {', '.join(kinds)}"
    return _svg("timeline", height, label, "".join(body))


def started_apart(history: Iterable[HistoryEntry]) -> dict[str, Decision]:
    """The runs a person started rather than the schedule's time (``run now``: triggered;
    ``backfill``: backfilled), by id, from the schedule's history entries."""
    return {
        entry.run_id: entry.decision
        for entry in history
        if entry.run_id is not None and entry.decision in _APART
    }


def lateness_chart(
    runs: Sequence[RunInfo], *, apart: Mapping[str, Decision] | None = None, root: str = ""
) -> Markup:
    """How late each of a schedule's ``runs`` (newest first) was created after the
    occurrence it is for, oldest at the left; runs started by hand have no occurrence.

    The runs in ``apart`` (``started_apart``) are left out, counted in the chart's label:
    a backfilled run is created days after its occurrence, a run started now for the
    current one minutes after, and neither says how late the scheduler is.
    """
    apart = apart or {}
    left_out = Counter(apart[r.id] for r in runs if r.id in apart)
    bars = [
        _Bar(
            r,
            max(0, (r.created_at - r.scheduled_for) // _MS),
            f"{r.id}\noccurrence {format_utc(r.scheduled_for)}\n"
            f"created {_late_or_early(r.created_at - r.scheduled_for)}",
            "mark late",
        )
        for r in reversed(runs)
        if r.scheduled_for is not None and r.id not in apart
    ]
    note = ", ".join(f"{n} {_APART[d]}" for d, n in sorted(left_out.items()))
    note = f"left out: {note}" if note else ""
    return _bar_chart(bars, "Lateness", "no runs of an occurrence yet", root, note=note)


def _late_or_early(late: timedelta) -> str:
    """A run decided ahead (``Engine(fire_ahead=...)``) was created before its occurrence."""
    if late < timedelta(0):
        return f"{format_elapsed(-late)} early (fired ahead)"
    return f"{format_elapsed(late)} late"


def duration_chart(runs: Sequence[RunInfo], *, root: str = "") -> Markup:
    """How long each of a schedule's finished ``runs`` (newest first) took, from its start
    to its end, oldest at the left; coloured by status."""
    bars = [
        _Bar(
            r,
            (r.finished_at - r.started_at) // _MS,
            f"{r.id}\n{r.status} {format_utc(r.finished_at)}\n"
            f"took {format_elapsed(r.finished_at - r.started_at)}",
            f"mark done {r.status}",
        )
        for r in reversed(runs)
        if r.started_at is not None and r.finished_at is not None
    ]
    return _bar_chart(bars, "Duration", "no finished runs yet", root)


# -- the parts ----------------------------------------------------------------------------

_MS = timedelta(milliseconds=1)


def _svg(kind: str, height: int, label: str, body: str) -> Markup:
    return Markup(
        f'<svg class="chart {kind}" height="{height}" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">{body}</svg>'
    )


def _link(run_id: str, root: str, title: str, body: str) -> str:
    href = f"{root}/run?id={quote(run_id, safe='')}"
    return f'<a href="{escape(href)}"><title>{escape(title)}</title>{body}</a>'


def _scaled(value: int, largest: int, full: float) -> float:
    """``value``'s height out of ``full`` (``largest`` is full height), never below
    ``MIN_MARK``: a run that took no time still shows."""
    if largest <= 0:
        return MIN_MARK
    return MIN_MARK + (full - MIN_MARK) * value / largest


def _run_ms(run: RunInfo, now: datetime) -> int | None:
    """A run's duration, or its time so far; None before it started."""
    if run.started_at is None:
        return None
    return max(0, ((run.finished_at or now) - run.started_at) // _MS)


def _strip_title(run: RunInfo, ms: int | None) -> str:
    took = "not started" if ms is None else format_elapsed(timedelta(milliseconds=ms))
    if run.status in ACTIVE_STATUSES and ms is not None:
        took += " so far"
    return f"{run.id}\n{run.status} · created {format_utc(run.created_at)}\n{took}"


# -- bar charts ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Bar:
    run: RunInfo
    ms: int
    title: str
    kind: str


def _bar_chart(bars: list[_Bar], name: str, empty: str, root: str, note: str = "") -> Markup:
    """One bar per value, newest at the right end; the largest value labelled at the top
    (and ``note`` beside it), the newest run's time at the bottom right and the oldest's
    under its bar."""
    if not bars:
        said = f"{empty} ({note})" if note else empty
        return Markup(f'<p class="muted">{escape(said)}</p>')
    top, base = 16, 16 + CHART_PLOT
    largest = max(b.ms for b in bars)
    most = format_elapsed(timedelta(milliseconds=largest))
    slots = max(len(bars), 20)  # a few runs are not drawn as fat blocks
    slot = 100 / slots
    first_x = (slots - len(bars)) * slot
    body = [
        f'<text class="label" x="0" y="11">{escape(name)}'
        f'<tspan class="muted"> · max {escape(most)}{escape(" · " + note if note else "")}'
        "</tspan></text>",
        f'<line class="grid" x1="0" x2="100%" y1="{top + 0.5}" y2="{top + 0.5}"/>',
        f'<line class="axis" x1="0" x2="100%" y1="{base + 0.5}" y2="{base + 0.5}"/>',
    ]
    for i, bar in enumerate(bars):
        height = _scaled(bar.ms, largest, CHART_PLOT)
        x = first_x + i * slot
        body.append(
            _link(
                bar.run.id,
                root,
                bar.title,
                f'<rect class="hit" x="{x:.3f}%" y="{top}" width="{slot:.3f}%" '
                f'height="{CHART_PLOT}"/>'
                f'<rect class="{escape(bar.kind)}" x="{x + slot * 0.15:.3f}%" '
                f'y="{base - height:.1f}" width="{slot * 0.7:.3f}%" height="{height:.1f}"/>',
            )
        )
    if first_x <= 40:  # room for the oldest run's time under its bar, clear of the newest's
        body.append(
            f'<text class="tick" x="{first_x:.3f}%" y="{base + 14}">'
            f"{escape(_day_time(bars[0].run.created_at))}</text>"
        )
    body.append(
        f'<text class="tick end" x="100%" y="{base + 14}">'
        f"{escape(_day_time(bars[-1].run.created_at))} UTC</text>"
    )
    label = f"{name} of the last {len(bars)} runs, oldest first; the largest {most}"
    label += f"; {note}" if note else ""
    return _svg(f"bars {name.lower()}", base + 18, label, "".join(body))


def _day_time(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


# -- a run's timeline ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Mark:
    kind: str  # "step", "try" (a failed try), "backoff", "sleep", "now"
    status: str  # a badge's class: completed, failed, sleeping...
    start: datetime
    end: datetime
    title: str


def _step_marks(step: StepInfo, end: datetime, waiting: RunStatus | None) -> list[_Mark]:
    """What one checkpoint draws: a sleep from its start to its wake time; a ``now()``
    at its instant; a step's failed tries, the back-off after each, its last try.
    ``waiting``: the run's status when this is its last checkpoint (what it waits on)."""
    if step.kind == "sleep" and type(step.result) is int:
        wake = from_ms(step.result)
        if waiting is RunStatus.SLEEPING:
            title = f"{step.name}: sleeping, wakes at {format_utc(wake)}"
            return [_Mark("sleep", "sleeping", step.started_at, wake, title)]
        wake = min(wake, end)  # a run cancelled while asleep: its sleep ended there
        title = f"{step.name}: slept {format_elapsed(wake - step.started_at)}"
        return [_Mark("sleep", "completed", step.started_at, wake, title)]
    if step.kind == "now":
        return [_Mark("now", "completed", step.started_at, step.started_at, step.name)]
    if step.kind == "event":  # a wait, drawn as a sleep is: from its start to its event
        wait = waiting_for(step)
        if wait is not None:  # still waiting, or ended with its run (cancelled)
            status = "waiting" if waiting is RunStatus.WAITING else "completed"
            title = f"{step.name}: waits for {wait_what(wait)}"
            return [_Mark("sleep", status, step.started_at, end, title)]
        title = f"{step.name}: waited {format_elapsed(step.finished_at - step.started_at)}"
        return [_Mark("sleep", "completed", step.started_at, step.finished_at, title)]
    marks: list[_Mark] = []
    tries = list(step.tries)
    for i, t in enumerate(tries):
        marks.append(
            _Mark("try", "failed", t.started_at, t.finished_at,
                  f"{step.name}: try {t.attempt} failed after "
                  f"{format_elapsed(t.finished_at - t.started_at)}\n{t.error}")
        )  # fmt: skip
        after = tries[i + 1].started_at if i + 1 < len(tries) else None
        if after is None and step.status == "completed":
            after = step.started_at
        if after is None and waiting is RunStatus.PENDING:
            after = end  # its next try is still to come
        if after is not None and after > t.finished_at:
            marks.append(
                _Mark("backoff", "pending", t.finished_at, after,
                      f"{step.name}: back-off {format_elapsed(after - t.finished_at)} "
                      f"before try {t.attempt + 1}")
            )  # fmt: skip
    if step.status == "completed" or not tries:
        took = format_elapsed(step.finished_at - step.started_at)
        marks.append(
            _Mark("step", step.status, step.started_at, step.finished_at,
                  f"{step.name}: {step.status} in {took} (try {step.attempts})")
        )  # fmt: skip
    return marks


def _step_words(step: StepInfo, marks: list[_Mark]) -> str:
    """What a row says beside its name: how long, how many tries, how long it slept."""
    if step.kind == "now":
        return "now()"
    if step.kind == "sleep":
        return f"sleep {format_elapsed(marks[0].end - marks[0].start)}"
    if step.kind == "event":
        took = format_elapsed(marks[0].end - marks[0].start)
        return f"waiting {took} so far" if marks[0].status == "waiting" else f"waited {took}"
    words = format_elapsed(step.finished_at - step.started_at)
    if step.tries:
        failed = len(step.tries)
        words += f", {failed} failed {'try' if failed == 1 else 'tries'}"
    return words


def _clock_time(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%H:%M:%S")


class _Axis:
    """Instants from ``start`` to ``end`` as percentages of the picture's width."""

    def __init__(self, start: datetime, end: datetime) -> None:
        self.start = start
        self.span_ms = max(1, (end - start) // _MS)

    def x(self, at: datetime) -> float:
        return min(100.0, max(0.0, 100 * ((at - self.start) // _MS) / self.span_ms))

    def bar(self, mark: _Mark, y: int, height: int) -> str:
        x = self.x(mark.start)
        title = f"<title>{escape(mark.title)}</title>"
        if mark.kind == "now":
            return (
                f'<g class="tl now-read">{title}<line x1="{x:.3f}%" x2="{x:.3f}%" '
                f'y1="{y - 2}" y2="{y + height + 2}"/></g>'
            )
        width = max(0.4, self.x(mark.end) - x)  # a step of no time still shows
        x = min(x, 100 - width)
        thin = 4 if mark.kind == "backoff" else 0  # a wait, not work: a thinner bar
        return (
            f'<g class="tl {mark.kind} {escape(mark.status)}">{title}'
            f'<rect x="{x:.3f}%" y="{y + thin}" width="{width:.3f}%" '
            f'height="{height - 2 * thin}"/></g>'
        )

    def grid(self, height: int) -> str:
        return "".join(
            f'<line class="grid" x1="{p}%" x2="{p}%" y1="0" y2="{height}"/>' for p in (0, 50, 100)
        )

    def now_line(self, now: datetime, height: int) -> str:
        x = self.x(now)
        return (
            f'<g class="tl now-line"><title>now, {escape(format_utc(now))}</title>'
            f'<line x1="{x:.3f}%" x2="{x:.3f}%" y1="0" y2="{height}"/></g>'
        )

    def labels(self, y: int) -> str:
        half = timedelta(milliseconds=self.span_ms / 2)
        return (
            f'<text class="tick" x="0" y="{y}">{escape(_clock_time(self.start))} UTC</text>'
            f'<text class="tick mid" x="50%" y="{y}">+{escape(format_elapsed(half))}</text>'
            f'<text class="tick end" x="100%" y="{y}">'
            f"+{escape(format_elapsed(half * 2))}</text>"
        )
