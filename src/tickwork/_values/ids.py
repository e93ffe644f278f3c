"""Identity: canonical JSON and the ids derived from it.

Canonical JSON (sorted keys, no whitespace, no NaN) is what the stores keep and what
derived ids hash, so the same value yields the same bytes on every machine and Python.
"""

from __future__ import annotations

import functools
import hashlib
import json
import json.scanner
import os
import re
import threading
import uuid
from datetime import date
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

from ..errors import ConfigError, InputValidationError

__all__ = [
    "JSON",
    "MAX_JSON_DEPTH",
    "canonical_json",
    "from_json",
    "jitter_ms",
    "new_run_id",
    "new_worker_id",
    "occurrence_run_id",
    "schedule_key",
]

JSON = Any  # a JSON value: None, bool, int, float, str, list, dict with str keys


#: the deepest a stored JSON value nests (lists and objects): half the 200 levels pydantic
#: reads JSON to (the HTTP API's bodies), far under Python's recursion limit (1000) that
#: json's encoder and decoder stop at, so whatever is stored is read back anywhere
MAX_JSON_DEPTH = 100

# One encoder for every call (``json.dumps`` with options builds a new one each time).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)
# The surrogate check's: the text as UTF-8 would carry it.
_UNICODE = json.JSONEncoder(ensure_ascii=False)


def canonical_json(
    value: JSON, *, what: str = "value", error: type[ConfigError] = InputValidationError
) -> str:
    """``value`` as canonical JSON text; ``error`` (``InputValidationError`` unless told:
    a result is no input) when it is not JSON, nests deeper than ``MAX_JSON_DEPTH`` or
    holds a lone surrogate (no UTF-8 text: a database refuses it, or keeps what no face
    shows back). The one encoder of what users store: inputs, payloads, results."""
    try:
        text = _encode(value)
    except RecursionError:
        raise error(f"{what} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (TypeError, ValueError) as exc:
        raise error(f"{what} is not a JSON value: {exc}") from exc
    # Both checks look only when the text could fail them (found at C speed): a value
    # nested 100 deep has 100 brackets, and a surrogate is escaped as \udxxx.
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _deeper(value, MAX_JSON_DEPTH):
        raise error(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
    if "\\ud" in text:
        try:
            _UNICODE.encode(value).encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = exc.object[exc.start : exc.end]
            raise error(f"{what} holds a lone surrogate {bad!r}: not Unicode text") from None
    return text


def _encode(value: JSON) -> str:
    if c_make_encoder is None:  # an interpreter without json's C accelerator
        return _CANONICAL.encode(value)
    # What _CANONICAL.encode does, minus its two Python calls and a closure built at
    # each (every checkpoint's result comes here): the C encoder over a fresh set of
    # markers (circular references are refused as before, thread by thread).
    c = _CANONICAL
    encode = c_make_encoder(
        {}, c.default, encode_basestring_ascii, None, c.key_separator, c.item_separator,
        c.sort_keys, c.skipkeys, c.allow_nan,
    )  # fmt: skip
    return "".join(encode(value, 0))


def _deeper(value: JSON, most: int) -> bool:
    """Whether ``value`` nests lists and objects more than ``most`` levels deep."""
    stack = [(value, 1)] if isinstance(value, dict | list | tuple) else []
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > most:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return False


# json.loads goes through two Python calls (loads, decode) before its C scanner: text
# this module wrote itself (canonical, no surrounding blanks) is handed to the scanner.
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # a decoder is its context


def from_canonical_json(text: str) -> JSON:
    """The value of text ``canonical_json`` made (a step's result read back at once)."""
    value, end = _SCAN(text, 0)
    if end != len(text):  # never for canonical_json's text; say so rather than guess
        raise ValueError(f"not canonical JSON: {text[:80]!r}")
    return value


def from_json(text: str | None) -> JSON:
    """The value of stored JSON text (``None`` stays ``None``)."""
    return None if text is None else json.loads(text)


def new_run_id(now_ms: int) -> str:
    """A fresh run id for a run started at ``now_ms`` without one: a UUIDv7, 32 hex digits.

    Time-ordered (48 bits of UTC milliseconds, then 74 random bits), so new runs land at
    the end of every index keyed by run id instead of on a random page each: a commit
    dirties a few pages, not one per run. Python's ``uuid`` has no ``uuid7`` before 3.14.
    """
    value = (now_ms & _MS_BITS) << 80 | int.from_bytes(_RANDOM.take(10), "big")
    value = value & ~(0xF << 76) | 0x7 << 76  # version 7
    value = value & ~(0x3 << 62) | 0x2 << 62  # RFC 9562 variant
    return f"{value:032x}"


_MS_BITS = (1 << 48) - 1


class _RandomBytes:
    """``os.urandom``'s bytes, read 4 KiB at a time.

    Each ``os.urandom`` is a system call that lets go of the GIL, and a thread taking it
    back while executor threads run waits up to the interpreter's switch interval (5 ms):
    one read per id made a started or emitted run's id cost ~0.24 ms beside a busy
    worker. One read now serves ~400 ids; a forked child forgets the parent's bytes, so
    it never hands out the same ids."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bytes = b""
        self._at = 0

    def take(self, n: int) -> bytes:
        with self._lock:
            at = self._at
            if at + n > len(self._bytes):
                self._bytes, at = os.urandom(4096), 0
            self._at = at + n
            return self._bytes[at : at + n]

    def forget(self) -> None:
        self._lock = threading.Lock()  # (a lock held by another thread at the fork)
        self._bytes, self._at = b"", 0


_RANDOM = _RandomBytes()
os.register_at_fork(after_in_child=_RANDOM.forget)


def new_worker_id() -> str:
    """A fresh lease-owner token: unique per worker process and engine."""
    return uuid.uuid4().hex[:16]


def occurrence_run_id(key: str, occurrence_ms: int) -> str:
    """The run id of one occurrence of a schedule: the key and the instant in UTC.

    The same on every worker, so the store's unique run id makes a second insert of the
    same occurrence impossible (arq and DBOS do the same).
    """
    # Integer arithmetic, and the date and the time of day remembered: strftime was the
    # slowest part of firing thousands at once, and those mostly share both.
    days, ms = divmod(occurrence_ms, 86_400_000)
    return f"{key}@{_day(days)}T{_time_of_day(ms)}Z"


@functools.lru_cache(maxsize=64)
def _day(days: int) -> str:
    """``YYYY-MM-DD`` of the day ``days`` after 1970-01-01."""
    day = date.fromordinal(_EPOCH_ORDINAL + days)
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"


@functools.lru_cache(maxsize=4096)
def _time_of_day(ms: int) -> str:
    """``HH:MM:SS.mmm`` of the millisecond ``ms`` of a day."""
    seconds, ms = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{ms:03d}"


_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def jitter_ms(key: str, occurrence_ms: int, jitter: int) -> int:
    """A delay in ``[0, jitter)`` derived from (key, occurrence): every worker agrees."""
    digest = hashlib.sha256(f"{key}\x00{occurrence_ms}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % jitter


def schedule_key(workflow: str, definition: dict[str, JSON]) -> str:
    """A key derived from a schedule's identity, stable across processes and versions.

    ``definition`` holds the cadence (every / cron + timezone), the input and, when set,
    pool and priority; its canonical JSON is hashed, so key order and spacing never matter.
    """
    digest = hashlib.sha256(canonical_json([workflow, definition]).encode()).hexdigest()
    readable = re.sub(r"[\s/\x00-\x1f]", "-", workflow)[:100]
    return f"{readable}-{digest[:12]}"
