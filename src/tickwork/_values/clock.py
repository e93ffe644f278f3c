"""The only module that reads wall time or sleeps.

Everything else takes "now" from a ``Clock`` so that ``tickwork.testing.FakeClock`` can
drive the whole engine (trio's ``MockClock`` is the model).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

log = logging.getLogger("tickwork")

__all__ = [
    "LAST_MS",
    "MAX_ROUND_TRIP_NS",
    "Clock",
    "Reading",
    "ReferenceClock",
    "SystemClock",
    "capped",
    "from_ms",
    "monotonic",
    "now_ms",
    "sleep",
    "steady_ns",
    "to_ms",
    "wait",
]


@runtime_checkable
class Clock(Protocol):
    """A source of "now" as an aware UTC datetime."""

    def now(self) -> datetime: ...


def _steady_clock() -> Callable[[], int]:
    """Nanoseconds on a clock nobody steps (``date``, an NTP step) that keeps counting
    through a suspend: Linux's CLOCK_BOOTTIME, else the monotonic clock. Bound once, at
    import: what reads it is never the wall clock, whatever happens to ``time`` later."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is not None:
        return functools.partial(time.clock_gettime_ns, boottime)
    return time.monotonic_ns


_steady_ns = _steady_clock()

#: how far the wall clock may drift from the steady one before it counts as a step
STEP_TOLERANCE_NS = 1_000_000_000
#: how long a step of the wall clock is not followed (a VM resumed with a stale clock, a
#: mistaken ``date``, corrected soon after): past it, the step is the machine's new time
STEP_GRACE_NS = 600 * 1_000_000_000


class SystemClock:
    """The machine's clock, kept steady: the wall time advanced by the steady clock.

    While the two agree (within a second, NTP's gentle slewing included) this is the wall
    time. When the wall clock *steps* (an operator's ``date``, NTP stepping, a VM resumed
    with a stale clock), acting on it would fire schedules early or late and make live
    leases look expired: the step is reported (a warning) and not followed for ten
    minutes; a step that lasts longer is taken as the machine's new time, with a warning.
    """

    def __init__(self) -> None:
        # (wall ns, steady ns) at the last agreement; (steady ns when a step was first
        # seen, or None). Tuples, replaced whole: threads read them without a lock.
        self._anchor = (time.time_ns(), _steady_ns())
        self._step: int | None = None

    def now_ns(self) -> int:
        steady = _steady_ns()
        wall = time.time_ns()
        anchor_wall, anchor_steady = self._anchor
        kept = anchor_wall + (steady - anchor_steady)
        gap = wall - kept
        if -STEP_TOLERANCE_NS <= gap <= STEP_TOLERANCE_NS:
            self._anchor, self._step = (wall, steady), None
            return wall
        first_seen = self._step
        if first_seen is None:
            self._step = steady
            log.warning(
                "the wall clock stepped by %+.1f s; keeping time from the steady "
                "clock for up to %d min (restart to adopt the new time at once)",
                gap / 1e9,
                STEP_GRACE_NS // 60_000_000_000,
            )
            return kept
        if steady - first_seen < STEP_GRACE_NS:
            return kept
        log.warning("the wall clock's step of %+.1f s lasted: adopting it", gap / 1e9)
        self._anchor, self._step = (wall, steady), None
        return wall

    def now(self) -> datetime:
        return _EPOCH + timedelta(microseconds=self.now_ns() // 1000)

    def now_ms(self) -> int:
        """UTC epoch milliseconds, without a datetime."""
        return self.now_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
#: the last instant tickwork stores, in epoch milliseconds: datetime's last millisecond,
#: 9999-12-31T23:59:59.999Z. Past it a stored instant could not be read back as a datetime
#: (``runs show`` crashed on "year 10048"), so every instant made from a duration is
#: refused past it (``_durations.instant_after``) or, derived from options already
#: accepted, capped at it (``capped``).
LAST_MS = 253_402_300_799_999
_FIRST_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z
_LAST = datetime.max.replace(tzinfo=UTC)
_FIRST = datetime.min.replace(tzinfo=UTC)


def to_ms(when: datetime) -> int:
    """An aware datetime as UTC epoch milliseconds (how every store keeps instants).

    Integer arithmetic, so no float rounding: sub-millisecond parts are truncated.
    """
    if when.tzinfo is None:
        raise ValueError(f"naive datetime {when!r}: pass an aware datetime")
    return (when - _EPOCH) // _MS


def now_ms(clock: Clock) -> int:
    """``clock``'s "now" as UTC epoch milliseconds; the real clock's without a datetime
    (it is read several times per step)."""
    if type(clock) is SystemClock:
        return clock.now_ns() // 1_000_000
    return to_ms(clock.now())


def ms_reader(clock: Clock) -> Callable[[], int]:
    """``now_ms(clock)`` as a function of nothing, for a reader on every step's path: the
    real clock's own method, with no call in between."""
    if type(clock) is SystemClock:
        return clock.now_ms
    return functools.partial(now_ms, clock)


def from_ms(ms: int) -> datetime:
    """UTC epoch milliseconds as an aware UTC datetime; an instant past datetime's range
    (none is stored since ``LAST_MS``, an older database may hold one) reads as its end,
    so no page or command crashes on it."""
    if _FIRST_MS <= ms <= LAST_MS:
        return _EPOCH + ms * _MS
    return _LAST if ms > LAST_MS else _FIRST


def capped(ms: int) -> int:
    """An instant derived from options already accepted (a retry's back-off, a jitter, a
    deadline, a debounce), kept at ``LAST_MS`` at the latest: so late it never comes."""
    return ms if ms <= LAST_MS else LAST_MS


#: seconds on a clock that never goes back, for measuring how long things take (the
#: function itself, not a wrapper: every checkpoint reads it)
monotonic: Callable[[], float] = time.monotonic


def sleep(seconds: float) -> None:
    """Block the calling thread (connection back-off, a poll of SQLite's write lock)."""
    time.sleep(seconds)


def wait(event: threading.Event, seconds: float) -> bool:
    """Wait until ``event`` is set or ``seconds`` pass; True when it was set."""
    return event.wait(max(0.0, seconds))


#: the longest round trip of a reference's reading that may replace the last sync. A
#: reading is anchored where its answer arrived, so the clock runs behind the reference
#: by up to its round trip (never ahead). Reading one row takes well under a millisecond
#: on a LAN and tens across regions; a longer one waited for something else (a server
#: stalled or restarting, a network that dropped packets), and would hold the fleet's
#: firings and lease expiries back by as much until the next sync.
MAX_ROUND_TRIP_NS = 250_000_000
#: how soon a sync is tried again after a reading too slow to use
RETRY_NS = 1_000_000_000


@dataclass(frozen=True)
class Reading:
    """A reference's time, with the steady clock's readings when the query that read it
    was sent and when its answer arrived: the round trip of that query alone (a wait for
    a pooled connection before it is no part of it)."""

    ms: int
    sent_ns: int
    received_ns: int


def steady_ns() -> int:
    """The steady clock (see ``_steady_clock``), for timing a ``Reading``'s round trip."""
    return _steady_ns()


class ReferenceClock:
    """A reference clock (a fleet's database server), read between syncs off the steady
    clock.

    Every worker of a fleet then agrees on "now" within the round trip of one query, so
    a machine whose clock runs ahead cannot fire an occurrence early or take a live lease.
    At each sync (every ``refresh`` seconds) the reference's time is noted with the
    steady clock's reading when its answer arrived; between syncs, now is that time plus
    the steady clock's advance since. The reference read its time before it answered, so
    this clock is never ahead of it, and behind by at most the reading's round trip: a
    reading slower than ``MAX_ROUND_TRIP_NS`` replaces no sync (only the absence of one)
    and another is tried a second later. The machine's wall clock plays no part, so
    stepping it changes nothing. Until the first sync succeeds, the local clock stands in;
    while the reference cannot be reached, the last sync stays in use.

    ``reference`` returns a ``Reading`` when it can time its own query (the store's,
    which excludes its wait for a connection); a plain number of milliseconds is timed
    here, around the whole call.
    """

    def __init__(self, reference: Callable[[], int | Reading], *, refresh: float = 30.0) -> None:
        self._reference = reference
        self._refresh_ns = int(refresh * 1_000_000_000)
        self._local = SystemClock()
        #: (reference ns, steady ns) at the last sync, or None before one succeeded
        self._synced: tuple[int, int] | None = None
        #: the steady clock's reading when the next sync is due (None: at once)
        self._due: int | None = None
        self._lock = threading.Lock()

    def now(self) -> datetime:
        due = self._due
        if (due is None or _steady_ns() >= due) and self._lock.acquire(blocking=False):
            try:
                self._sync()
            finally:
                self._lock.release()
        synced = self._synced
        if synced is None:
            return self._local.now()
        reference_ns, at = synced
        return _EPOCH + timedelta(microseconds=(reference_ns + _steady_ns() - at) // 1000)

    def _sync(self) -> None:
        before = _steady_ns()
        self._due = before + self._refresh_ns
        try:
            reading = self._reference()
        except Exception:  # unreachable now: keep the last sync, try again later
            return
        if not isinstance(reading, Reading):
            reading = Reading(reading, before, _steady_ns())
        slow = reading.received_ns - reading.sent_ns > MAX_ROUND_TRIP_NS
        if slow:
            self._due = min(self._due, _steady_ns() + RETRY_NS)
        if not slow or self._synced is None:
            self._synced = (reading.ms * 1_000_000, reading.received_ns)

    def __repr__(self) -> str:
        return "ReferenceClock()"
