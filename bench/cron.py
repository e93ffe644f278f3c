"""Cron evaluation speed: tickwork vs cronsim vs croniter, occurrences per second.

Ten expressions, each in UTC, America/New_York and Australia/Lord_Howe (a 30-minute DST
change), from 2024-01-01. Two measures, both interleaved across the three libraries and
repeated; the best round is printed (other processes only ever slow a round down, so the
best is the steadiest estimate on a shared machine):

- iter: one iterator, N successive occurrences (tickwork ``parse(expr, tz).iter(start)``,
  cronsim ``CronSim(expr, start)``, croniter ``croniter(expr, start).get_next``);
  occurrences/s = N / time, building the iterator included.
- next: N single "next occurrence after t" calls from N different starts, a new
  iterator each time (what a scheduler does after each firing); tickwork's ``parse`` is
  cached, the others build their object every call.

tickwork answers aware UTC datetimes; cronsim and croniter answer in the start's zone, and
their results are used as they come (no conversion is timed for them). croniter is run
with ``implement_cron_bug=True`` (Debian's day-of-month/day-of-week rule) and
``second_at_beginning=True`` for six fields. The "same" columns compare the first 300
occurrences as instants with tickwork's: cronsim 2.8 differs on purpose in a few DST cases
(see tests/unit/test_cron_dst.py), croniter has its own DST rules.

Usage (from the repository root; croniter is never a tickwork dependency)::

    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -e . croniter
    bench/.venv/bin/python bench/cron.py            # about 4 minutes on 2 cores
    bench/.venv/bin/python bench/cron.py --quick    # about 20 seconds
"""

from __future__ import annotations

import argparse
import gc
import itertools
import platform
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from importlib import metadata
from zoneinfo import ZoneInfo

from cronsim import CronSim

from tickwork import cron as tickwork_cron

try:
    from croniter import croniter
except ImportError:  # pragma: no cover - depends on the venv
    croniter = None

EXPRESSIONS = [
    "* * * * *",
    "*/5 * * * *",
    "0 * * * *",
    "0 9 * * 1-5",
    "30 2 * * *",
    "15,45 8-18 * * MON-FRI",
    "0 0 1 * *",
    "0 0 13 * 5",
    "*/10 * * * * *",
    "0 0 29 2 *",
]
ZONES = ["UTC", "America/New_York", "Australia/Lord_Howe"]
START = datetime(2024, 1, 1, tzinfo=UTC)
Factory = Callable[[datetime], Iterator[datetime]]


def factories(expr: str, zone: str) -> dict[str, Factory]:
    """For each library, a function from a start instant to an iterator of occurrences."""
    tz = UTC if zone == "UTC" else ZoneInfo(zone)

    def tickwork(start: datetime) -> Iterator[datetime]:
        return tickwork_cron.parse(expr, zone).iter(start)

    def cronsim(start: datetime) -> Iterator[datetime]:
        return CronSim(expr, start.astimezone(tz))

    found: dict[str, Factory] = {"tickwork": tickwork, "cronsim": cronsim}
    if croniter is not None:
        six = len(expr.split()) == 6

        def croniter_(start: datetime) -> Iterator[datetime]:
            it = croniter(
                expr, start.astimezone(tz), implement_cron_bug=True, second_at_beginning=six
            )
            return iter(lambda: it.get_next(datetime), None)

        found["croniter"] = croniter_
    return found


def time_iter(factory: Factory, count: int) -> float:
    gc.collect()
    began = time.perf_counter()
    it = factory(START)
    for _ in range(count):
        next(it)
    return time.perf_counter() - began


def time_next(factory: Factory, starts: list[datetime]) -> float:
    gc.collect()
    began = time.perf_counter()
    for start in starts:
        next(factory(start))
    return time.perf_counter() - began


def same(mine: Factory, theirs: Factory, count: int = 300) -> str:
    """Whether the first ``count`` occurrences are the same instants (else where not)."""
    a = list(itertools.islice(mine(START), count))
    b = [when.astimezone(UTC) for when in itertools.islice(theirs(START), count)]
    for index, (x, y) in enumerate(zip(a, b, strict=True), start=1):
        if x != y:
            return f"no (#{index})"
    return "yes"


def calibrate(factory: Factory, budget: float) -> int:
    """How many occurrences take about ``budget`` seconds with ``factory``."""
    count = 50
    while True:
        spent = time_iter(factory, count)
        if spent >= budget / 4 or count >= 200_000:
            return max(20, min(200_000, int(count * budget / max(spent, 1e-9))))
        count *= 4


def measure(expr: str, zone: str, repeat: int, budget: float) -> dict[str, object]:
    libs = factories(expr, zone)
    for factory in libs.values():  # warm-up: imports, parse caches, zone data
        time_iter(factory, 20)
    count = calibrate(libs["cronsim"], budget)
    step = timedelta(seconds=9_973)  # starts spread over the year, a prime number apart
    starts = [START + step * k for k in range(max(20, count // 8))]
    rates: dict[str, dict[str, list[float]]] = {name: {"iter": [], "next": []} for name in libs}
    for round_ in range(repeat):
        order = list(libs)[round_ % len(libs) :] + list(libs)[: round_ % len(libs)]
        for name in order:
            rates[name]["iter"].append(count / time_iter(libs[name], count))
            rates[name]["next"].append(len(starts) / time_next(libs[name], starts))
    row: dict[str, object] = {"expr": expr, "zone": zone, "count": count}
    for name, by_measure in rates.items():
        for what, values in by_measure.items():
            row[f"{name} {what}"] = max(values)
        if name != "tickwork":
            row[f"{name} same"] = same(libs["tickwork"], libs[name])
    return row


def table(rows: list[dict[str, object]], what: str, peers: list[str]) -> str:
    head = ["expression", "zone", "tickwork/s", *(f"{p}/s" for p in peers)]
    head += [f"vs {p}" for p in peers]
    if what == "iter":
        head += [f"same as {p}" for p in peers]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        mine = float(row[f"tickwork {what}"])  # type: ignore[arg-type]
        cells = [f"`{row['expr']}`", str(row["zone"]), f"{mine:,.0f}"]
        cells += [f"{float(row[f'{p} {what}']):,.0f}" for p in peers]  # type: ignore[arg-type]
        cells += [f"{mine / float(row[f'{p} {what}']):.2f}x" for p in peers]  # type: ignore[arg-type]
        if what == "iter":
            cells += [str(row[f"{p} same"]) for p in peers]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, shorter runs")
    parser.add_argument("--repeat", type=int, default=None, help="rounds (default 7, quick 3)")
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 7)
    budget = 0.02 if args.quick else 0.08
    if croniter is None:
        print("croniter is not installed, so it is left out. To include it:")
        print("    bench/.venv/bin/pip install croniter   # never a tickwork dependency\n")
    peers = ["cronsim"] + (["croniter"] if croniter is not None else [])
    versions = ", ".join(f"{name} {metadata.version(name)}" for name in ["tickwork", *peers])
    print(f"Python {platform.python_version()} on {platform.machine()}; {versions}")
    print(f"best of {repeat} interleaved rounds; from {START:%Y-%m-%d}\n")
    rows = []
    for expr, zone in itertools.product(EXPRESSIONS, ZONES):
        rows.append(measure(expr, zone, repeat, budget))
        print(f"  measured {expr!r} in {zone}", file=sys.stderr)
    print("iter: occurrences/s from one iterator\n")
    print(table(rows, "iter", peers))
    print("\nnext: single next-occurrence calls/s, a fresh start each time\n")
    print(table(rows, "next", peers))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
