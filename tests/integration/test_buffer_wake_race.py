"""A run that ends while another worker's firing pass decides its schedule still wakes the
occurrence buffered behind it (PostgreSQL: the two transactions really overlap).

Found by the backfill fleet: a ``buffer_all`` queue stopped draining for good. The ending
run's wake-up did nothing when the schedule was already due (a pass would see the run
ended, it assumed), but the pass that took the schedule at that instant had read the run
as unfinished: it wrote the schedule's next due time past the buffered occurrence (none at
all for a schedule whose window had ended), and nothing woke it again. An ending run now
always takes its schedule's row when something is buffered, so a pass either waits for it
or skips the schedule (``SKIP LOCKED``) and a later pass sees the run ended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.pg import fresh_schema
from tests.timeline import START, at, rid

from tickwork import Context, Engine, RunStatus
from tickwork._store import ClaimRequest, Store, open_store
from tickwork._values.clock import to_ms
from tickwork.testing import FakeClock


@pytest.fixture
def url() -> Iterator[str]:
    with fresh_schema() as url:
        yield url


class HeldBeforeCommit:
    """Wraps a store's writes: until ``release`` is set, each does all its statements and
    then waits for it before it commits (its locks held, its changes not yet seen by
    others); ``reached`` tells that the first got there."""

    def __init__(self, store: Store) -> None:
        self.reached, self.release = threading.Event(), threading.Event()
        db = store._db  # type: ignore[attr-defined]
        write = db.write

        def held(work: Callable[[Any], Any]) -> Any:
            def then_wait(tx: Any) -> Any:
                result = work(tx)
                self.reached.set()
                assert self.release.wait(30), "never released"
                return result

            return write(then_wait)

        db.write = held


class Buffered:
    """Schedule "k" (every 10 min) with the run of 12:10 held by another worker's store
    (``finisher``) and 12:20 buffered behind it; the clock at 12:30, when the schedule is
    due again and the run of 12:10 ends."""

    def __init__(self, url: str, overlap: str) -> None:
        self.clock = FakeClock(START)
        self.finisher = open_store(url)
        self.engine = engine = Engine(url, clock=self.clock, lease="30s")

        @engine.workflow("job")
        def job(ctx: Context) -> None:
            return None

        engine.schedule("job", None, key="k", every="10m", overlap=overlap)
        self.clock.set(at(10))
        assert engine.tick() == [rid(10)]
        (self.claim,) = self.finisher.runs.claim_runs(
            ClaimRequest(
                now_ms=to_ms(at(10)),
                lease_ms=60_000,
                worker="other",
                pools=["default"],
                limits={"job": None},
                limit=1,
                idle=True,
            )
        )
        self.clock.set(at(20))
        assert engine.tick() == []  # 12:20 waits behind the run of 12:10
        self.clock.set(at(30))

    def end_the_run(self) -> None:
        self.finisher.runs.finish_run(
            run_id=rid(10), token=self.claim.lease_token, status=RunStatus.COMPLETED,
            result_json="null", error=None, now_ms=to_ms(at(30)),
        )  # fmt: skip

    def close(self) -> None:
        self.engine.close()
        self.finisher.close()


@pytest.fixture(params=["buffer_one", "buffer_all"])
def buffered(url: str, request: pytest.FixtureRequest) -> Iterator[Buffered]:
    setup = Buffered(url, request.param)
    try:
        yield setup
    finally:
        setup.close()


def test_a_pass_while_the_runs_end_is_uncommitted_leaves_the_buffered_occurrence_due(
    buffered: Buffered,
) -> None:
    held = HeldBeforeCommit(buffered.finisher)
    ending = threading.Thread(target=buffered.end_the_run)
    ending.start()
    try:
        assert held.reached.wait(30)
        during = buffered.engine.tick()  # reads the run as unfinished, or skips "k"
    finally:
        held.release.set()
        ending.join()
    after = buffered.engine.tick()  # the same instant, once the run's end is committed
    assert rid(20) in during + after, (during, after)


def test_a_run_ending_during_a_pass_that_holds_its_schedule_wakes_it_after_the_pass(
    buffered: Buffered,
) -> None:
    held = HeldBeforeCommit(buffered.engine._runtime.store)
    during: list[str] = []
    passing = threading.Thread(target=lambda: during.extend(buffered.engine.tick()))
    passing.start()
    try:
        assert held.reached.wait(30)  # the pass read the run as unfinished; not committed
        ending = threading.Thread(target=buffered.end_the_run)
        ending.start()
        # Give the end time to be written: with the fix it waits for the pass's lock on
        # the schedule; without it, it commits now and its wake-up is lost to the pass.
        ending.join(1.0)
    finally:
        held.release.set()
        passing.join()
    ending.join()
    # The same instant, the run ended: 12:20 starts once, in this tick or in the held one
    # (which looks again when the end's wake-up made the schedule due before it finished).
    after = buffered.engine.tick()
    assert during + after == [rid(20)], (during, after)
