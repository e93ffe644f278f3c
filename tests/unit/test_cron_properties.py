"""Properties of cron evaluation, checked on random expressions, zones and instants.

Instants are drawn half the time within two days of a DST change, where the bugs live.
The reference for agreement is cronsim's own zone-aware evaluation, except where cronsim
2.8 is known to go wrong (wildcard jobs around the 30-minute and 02:45 changes of
Lord_Howe and Chatham and around changes at midnight, and six-field fixed-time jobs, which
tickwork treats as five-field ones, see test_cron_dst.py); there a brute-force walk over
every minute is the reference.
"""

from __future__ import annotations

import functools
import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from cronsim import CronSim
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tickwork import cron
from tickwork.errors import ConfigError, CronError

# cronsim evaluates these zones' changes (whole hours, away from midnight) like Debian cron.
PLAIN_ZONES = [
    "UTC",
    "America/New_York",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Dublin",
    "Asia/Kolkata",
]
# Here cronsim's zone-aware walk misplaces wildcard jobs: 30-minute and 02:45 changes, and
# changes at midnight (it runs "* 0 * * *" at 01:00 on a day that skips midnight).
ODD_ZONES = [
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "America/Sao_Paulo",
    "America/Santiago",
    "Asia/Tehran",
]
ALL_ZONES = PLAIN_ZONES + ODD_ZONES  # fmt: skip

SPECS = {  # field: (low, high, names)
    "second": (0, 59, ()),
    "minute": (0, 59, ()),
    "hour": (0, 23, ()),
    "dom": (1, 31, ()),
    "month": (1, 12, ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
                      "NOV", "DEC")),
    "dow": (0, 7, ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")),
}  # fmt: skip


@st.composite
def values(draw: st.DrawFn, field: str) -> str:
    low, high, names = SPECS[field]
    number = draw(st.integers(low, high))
    if names and number - (field == "month") < len(names) and draw(st.booleans()):
        name = names[number - (field == "month")]
        return "".join(draw(st.sampled_from([c.lower(), c])) for c in name)
    return str(number)


# The calendar words, in the only fields that take them, written as cronsim writes them.
WORDS = {"dom": ["L", "LW"], "dow": ["nL", "n#k"]}


@st.composite
def words(draw: st.DrawFn, field: str) -> str:
    kind = draw(st.sampled_from(WORDS[field]))
    if kind == "nL":
        return f"{draw(st.integers(0, 7))}{draw(st.sampled_from('Ll'))}"
    if kind == "n#k":
        return f"{draw(values('dow'))}#{draw(st.integers(1, 5))}"
    return draw(st.sampled_from([kind, kind.lower()]))


@st.composite
def items(draw: st.DrawFn, field: str) -> str:
    low, high, _ = SPECS[field]
    step = draw(st.integers(1, min(high - low + 1, 15)))
    kinds = ["*", "*/n", "a", "a-b", "a-b/n", "a/n", "*/larger"] + (
        ["word"] if field in WORDS else []
    )
    kind = draw(st.sampled_from(kinds))
    if kind == "*":
        return "*"
    if kind == "*/n":
        return f"*/{step}"
    if kind == "*/larger":  # a step larger than the field: Debian runs the start value only
        return f"*/{draw(st.integers(high - low + 2, 120))}"
    if kind == "word":
        return draw(words(field))
    first = draw(values(field))
    if kind == "a":
        return first
    if kind == "a/n":
        return f"{first}/{step}"
    last = draw(values(field))
    if _number(field, first) > _number(field, last):
        first, last = last, first
    return f"{first}-{last}" if kind == "a-b" else f"{first}-{last}/{step}"


def _number(field: str, text: str) -> int:
    _, _, names = SPECS[field]
    if text.isdigit():
        return int(text)
    return names.index(text.upper()) + (field == "month")


@st.composite
def fields(draw: st.DrawFn, field: str) -> str:
    return ",".join(draw(st.lists(items(field), min_size=1, max_size=3)))


@st.composite
def expressions(draw: st.DrawFn, six: bool | None = None, with_words: bool = False) -> str:
    parts = [draw(fields(name)) for name in ("minute", "hour", "dom", "month", "dow")]
    if with_words:  # at least one calendar word, in either day field
        where = draw(st.sampled_from([2, 4]))
        field = "dom" if where == 2 else "dow"
        listed = [*parts[where].split(","), draw(words(field))]
        parts[where] = ",".join(draw(st.permutations(listed)))
    if six if six is not None else draw(st.integers(0, 4)) == 0:
        parts.insert(0, draw(fields("second")))
    return " ".join(parts)


@functools.cache
def changes(zone: str) -> tuple[datetime, ...]:
    """The instants at which the zone's offset changes, 2015-2034."""
    if zone == "UTC":
        return ()
    tz, found = ZoneInfo(zone), []
    when, offset = datetime(2015, 1, 1, tzinfo=UTC), None
    while when.year < 2035:
        now = when.astimezone(tz).utcoffset()
        if offset is not None and now != offset:
            low, high = when - timedelta(hours=6), when
            while high - low > timedelta(seconds=1):
                middle = low + (high - low) / 2
                low, high = (
                    (middle, high) if middle.astimezone(tz).utcoffset() == offset else (low, middle)
                )
            found.append(high)
        offset, when = now, when + timedelta(hours=6)
    return tuple(found)


@st.composite
def instants(draw: st.DrawFn, zone: str) -> datetime:
    """Any instant from 1975 to 2100, or one within two days of a change of ``zone``."""
    near = changes(zone)
    if near and draw(st.booleans()):
        base = draw(st.sampled_from(near))
        return base + timedelta(seconds=draw(st.integers(-2 * 86400, 2 * 86400)))
    seconds = draw(st.integers(0, 125 * 365 * 86400))
    micro = draw(st.sampled_from([0, 0, 1, 500_000]))
    return datetime(1975, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds, microseconds=micro)


def valid(expr: str, zone: str) -> cron.CronExpr:
    try:
        return cron.parse(expr, zone)
    except CronError:
        assume(False)
        raise


def is_fixed(expr: str) -> bool:
    parts = expr.split()
    return not (parts[-5].startswith("*") or parts[-4].startswith("*"))


def fixed_time(data: st.DataObject, expr: str) -> str:
    """``expr`` with a fixed minute and hour: a value drawn where it had a wildcard (drawn,
    not filtered: most expressions have one, and filtering them tripped Hypothesis's
    filter_too_much health check)."""
    parts = expr.split()
    for at, top in ((-5, 59), (-4, 23)):
        if parts[at].startswith("*"):
            parts[at] = str(data.draw(st.integers(0, top)))
    fixed = " ".join(parts)
    assert is_fixed(fixed)
    return fixed


def cronsim_after(expr: str, zone: str, after: datetime, count: int) -> list[datetime]:
    """cronsim's occurrences after ``after``; it can start from the wrong pass of a
    repeated hour, so what is not after ``after`` is dropped."""
    tz = UTC if zone == "UTC" else ZoneInfo(zone)
    found: list[datetime] = []
    for when in itertools.islice(CronSim(expr, after.astimezone(tz)), count + 60):
        instant = when.astimezone(UTC)
        if instant > after and (not found or instant > found[-1]):
            found.append(instant)
        if len(found) == count:
            break
    return found


def brute_force(expr: str, zone: str, start: datetime, end: datetime) -> list[datetime]:
    """Every minute in (start, end] at which Debian cron runs a five-field ``expr``: the
    minutes whose wall time matches (only the first pass for a fixed-time job), and, for
    a fixed-time job, the end of each gap that skips a matching wall time."""
    sim, tz, fixed = CronSim(expr, datetime(2000, 1, 1)), ZoneInfo(zone), is_fixed(expr)

    def matches(wall: datetime) -> bool:
        return (wall.month in sim.months and sim.match_day(wall.date())
                and wall.hour in sim.hours and wall.minute in sim.minutes)  # fmt: skip

    found = set()
    minute = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while minute <= end:
        local = minute.astimezone(tz)
        if matches(local) and not (fixed and local.fold):
            found.add(minute)
        before = (minute - timedelta(minutes=1)).astimezone(tz).utcoffset()
        gap = local.utcoffset() - before  # type: ignore[operator]
        if fixed and gap > timedelta(0):
            skipped = (minute + before).replace(tzinfo=None)  # first wall time skipped
            while skipped < (minute + local.utcoffset()).replace(tzinfo=None):  # type: ignore[operator]
                if matches(skipped):
                    found.add(minute)
                skipped += timedelta(minutes=1)
        minute += timedelta(minutes=1)
    return sorted(found)


SETTINGS = settings(deadline=None, max_examples=150)


@SETTINGS
@given(st.data(), expressions(), st.sampled_from(ALL_ZONES))
def test_next_is_strictly_increasing(data: st.DataObject, expr: str, zone: str) -> None:
    parsed = valid(expr, zone)
    start = data.draw(instants(zone))
    found = list(itertools.islice(parsed.iter(start), 15))
    assert all(when.tzinfo is UTC for when in found)
    assert all(a < b for a, b in zip([start, *found], found, strict=False))
    assert parsed.next(start) == found[0]


@SETTINGS
@given(st.data(), expressions(), st.sampled_from(ALL_ZONES))
def test_prev_of_next_is_next(data: st.DataObject, expr: str, zone: str) -> None:
    parsed = valid(expr, zone)
    start = data.draw(instants(zone))
    for when in itertools.islice(parsed.iter(start), 5):
        assert parsed.prev(when) == when
        assert parsed.prev(when + timedelta(microseconds=1)) == when


@SETTINGS
@given(st.data(), expressions(), st.sampled_from(ALL_ZONES))
def test_next_of_prev_is_after_the_instant(data: st.DataObject, expr: str, zone: str) -> None:
    parsed = valid(expr, zone)
    at = data.draw(instants(zone))
    latest = parsed.prev(at)
    assert latest <= at
    assert parsed.next(latest) > at


@SETTINGS
@given(st.data(), expressions(), st.sampled_from(PLAIN_ZONES))
def test_agrees_with_cronsim(data: st.DataObject, expr: str, zone: str) -> None:
    assume(zone == "UTC" or len(expr.split()) == 5 or not is_fixed(expr))
    parsed = valid(expr, zone)
    start = data.draw(instants(zone))
    theirs = cronsim_after(expr, zone, start, 12)
    assert list(itertools.islice(parsed.iter(start), len(theirs))) == theirs


@SETTINGS
@given(st.data(), expressions(six=False), st.sampled_from(ODD_ZONES))
def test_fixed_time_jobs_agree_with_cronsim_in_odd_zones(
    data: st.DataObject, expr: str, zone: str
) -> None:
    expr = fixed_time(data, expr)
    parsed = valid(expr, zone)
    start = data.draw(instants(zone))
    theirs = cronsim_after(expr, zone, start, 12)
    assert list(itertools.islice(parsed.iter(start), len(theirs))) == theirs


@settings(deadline=None, max_examples=60)
@given(st.data(), expressions(six=False), st.sampled_from([*ODD_ZONES, "America/New_York"]))
def test_agrees_with_a_minute_by_minute_walk_around_changes(
    data: st.DataObject, expr: str, zone: str
) -> None:
    parsed = valid(expr, zone)
    start = data.draw(st.sampled_from(changes(zone))) - timedelta(
        minutes=data.draw(st.integers(0, 180))
    )
    end = start + timedelta(hours=5)
    mine = list(itertools.takewhile(lambda when: when <= end, parsed.iter(start)))
    assert mine == brute_force(expr, zone, start, end)


@settings(deadline=None, max_examples=300)
@given(
    st.one_of(
        st.text(max_size=40),
        st.lists(
            st.text(alphabet="0123456789*/-,@LW#?ADEFJMNOSTUabcdfjmnostu\u0661\uff15", max_size=6),
            max_size=8,
        ).map(" ".join),
    ),
    st.one_of(st.sampled_from(ALL_ZONES), st.text(max_size=20)),
)
def test_random_strings_raise_nothing_but_config_error(expr: str, zone: str) -> None:
    try:
        parsed = cron.parse(expr, zone)
    except ConfigError:
        return
    parsed.next(datetime(2024, 1, 1, tzinfo=UTC))
    parsed.explain()


@settings(deadline=None, max_examples=150)
@given(
    expressions(),
    st.sampled_from(ALL_ZONES),
    st.datetimes(timezones=st.sampled_from([UTC, ZoneInfo("Asia/Tokyo"), ZoneInfo("Etc/GMT+12")])),
)
def test_any_instant_gives_an_occurrence_or_a_config_error(
    expr: str, zone: str, when: datetime
) -> None:
    parsed = valid(expr, zone)
    for method in (parsed.next, parsed.prev):
        try:
            found = method(when)
        except ConfigError:
            continue
        assert found.tzinfo is UTC


# --- the calendar words (L, LW, 5L, 1#2) -------------------------------------------------


@SETTINGS
@given(st.data(), expressions(with_words=True), st.sampled_from(PLAIN_ZONES))
def test_calendar_words_next_agrees_with_cronsim(data: st.DataObject, expr: str, zone: str) -> None:
    assume(zone == "UTC" or len(expr.split()) == 5 or not is_fixed(expr))
    parsed = valid(expr, zone)
    start = data.draw(instants(zone))
    theirs = cronsim_after(expr, zone, start, 12)
    assert list(itertools.islice(parsed.iter(start), len(theirs))) == theirs


@SETTINGS
@given(st.data(), expressions(six=False, with_words=True), st.sampled_from(ALL_ZONES))
def test_calendar_words_at_fixed_times_agree_with_cronsim_in_every_zone(
    data: st.DataObject, expr: str, zone: str
) -> None:
    expr = fixed_time(data, expr)
    parsed = valid(expr, zone)
    start = data.draw(instants(zone))
    theirs = cronsim_after(expr, zone, start, 12)
    assert list(itertools.islice(parsed.iter(start), len(theirs))) == theirs


@SETTINGS
@given(st.data(), expressions(with_words=True))
def test_calendar_words_prev_agrees_with_cronsim_reverse_in_utc(
    data: st.DataObject, expr: str
) -> None:
    parsed = valid(expr, "UTC")
    at = data.draw(instants("UTC"))
    # cronsim's reverse walk starts strictly before its start; prev includes `at`.
    theirs = next(CronSim(expr, at.replace(microsecond=0) + timedelta(seconds=1), reverse=True))
    assert parsed.prev(at) == theirs


@SETTINGS
@given(st.data(), expressions(with_words=True), st.sampled_from(PLAIN_ZONES))
def test_calendar_words_prev_is_cronsims_last_occurrence_at_or_before(
    data: st.DataObject, expr: str, zone: str
) -> None:
    """In a zone, cronsim's reverse walk is not the reference (it loses the pass of a
    repeated hour), so its forward walk is: prev(at) is one of its occurrences and it has
    none between prev(at) and at."""
    assume(zone == "UTC" or len(expr.split()) == 5 or not is_fixed(expr))
    parsed = valid(expr, zone)
    at = data.draw(instants(zone))
    latest = parsed.prev(at)
    assert latest <= at
    assert cronsim_after(expr, zone, latest - timedelta(seconds=1), 1) == [latest]
    assert cronsim_after(expr, zone, latest, 1)[0] > at
