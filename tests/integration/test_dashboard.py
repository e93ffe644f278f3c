"""The dashboard in-process: login and sessions, CSRF, what each page shows, actions.

The app is ``create_app(engine)``: the dashboard beside the API, as ``tickwork serve``
runs it. Requests go through httpx's ASGI transport (from a blocking portal, so tests stay
synchronous); the engine runs on a FakeClock, so every time shown is known in advance.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from starlette.applications import Starlette
from tests.browser import CSRF, Browser

from tickwork import Context, Engine
from tickwork.server import create_app, pages
from tickwork.server.display import format_elapsed, format_relative
from tickwork.server.pages import RUNS_LIMIT, SCHEDULES_PER_PAGE
from tickwork.testing import FakeClock

DASH = "\N{EN DASH}"  # in the pager's range of schedules shown


def three_steps(ctx: Context, input: dict[str, Any] | None = None) -> dict[str, Any]:
    a = ctx.step("fetch", lambda: {"rows": 3, "note": "<b>bold</b>"})
    ctx.step("transform", lambda: a["rows"] * 2)
    ctx.step("store", lambda: "ok")
    return {"stored": a["rows"]}


def broken(ctx: Context) -> None:
    ctx.step("explode", _explode)


def _explode() -> None:
    raise RuntimeError("disk <full> & on fire")


@pytest.fixture
def app(engine: Engine) -> Starlette:
    engine.workflow("report")(three_steps)
    engine.workflow("broken")(broken)
    return create_app(engine)


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


@pytest.fixture
def browser(app: Starlette, stack: ExitStack) -> Browser:
    return Browser(app, stack)


@pytest.fixture
def key(engine: Engine) -> str:
    return engine.create_api_key("dashboard")


@pytest.fixture
def logged_in(browser: Browser, key: str) -> Browser:
    assert browser.login(key).status_code == 303
    return browser


@pytest.fixture
def scheduled(engine: Engine, clock: FakeClock) -> dict[str, str]:
    """Two schedules, one of which has fired once and completed."""
    every = engine.schedule("report", {"day": "today"}, every="15m", key="every-15m")
    cron = engine.schedule(
        "report", None, cron="0 9 * * 1-5", timezone="Europe/London", key="weekday-report"
    )
    clock.advance("16m")
    engine.tick()
    engine.run_until_idle()
    return {"every": every, "cron": cron}


def state(engine: Engine) -> tuple[object, ...]:
    """Everything an action could change: schedules (state, revision) and runs."""
    schedules = [(s.key, s.state, s.next_fire_at, s.last_run_id) for s in engine.list_schedules()]
    runs = [(r.id, r.status) for r in engine.list_runs(limit=10_000)]
    return tuple(schedules), tuple(runs)


def text(response: httpx.Response) -> str:
    """The page's text without tags, entities decoded, spaces collapsed; without its
    pictures (their hover titles are not text a person reads on the page)."""
    words = re.sub(r"<svg.*?</svg>", " ", response.text, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", words)).split())


# -- login and sessions --------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/runs", "/run?id=x", "/schedule?key=x"])
def test_pages_send_a_visitor_without_a_session_to_the_login_page(
    browser: Browser, path: str
) -> None:
    response = browser.get(path)
    assert response.status_code == 303
    assert response.headers["location"].startswith("/login")
    if path != "/":
        assert response.headers["location"] == "/login?" + urlencode({"next": path})


def test_login_with_a_good_key_gives_a_strict_httponly_session_cookie(
    browser: Browser, key: str
) -> None:
    response = browser.login(key)
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookie = next(
        c for c in response.headers.get_list("set-cookie") if c.startswith("tickwork_session=")
    )
    attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= attributes
    assert "secure" not in attributes  # plain http here
    assert key.split("_", 2)[2] not in cookie  # the key's secret never goes to the browser
    assert browser.get("/").status_code == 200


def test_session_cookie_is_secure_over_https(app: Starlette, stack: ExitStack, key: str) -> None:
    browser = Browser(app, stack, base_url="https://testserver")
    response = browser.login(key)
    cookie = next(
        c for c in response.headers.get_list("set-cookie") if c.startswith("tickwork_session=")
    )
    assert "secure" in {part.strip().lower() for part in cookie.split(";")}
    assert browser.get("/").status_code == 200


@pytest.mark.parametrize("bad", ["", "nonsense", "tw_000000000000_" + "A" * 43])
def test_login_with_a_bad_key_is_refused(browser: Browser, key: str, bad: str) -> None:
    response = browser.login(bad)
    assert response.status_code == 401
    assert "not valid" in response.text
    assert "tickwork_session" not in browser.client.cookies
    assert browser.get("/").status_code == 303


def test_login_with_a_revoked_key_is_refused(browser: Browser, engine: Engine, key: str) -> None:
    engine.revoke_api_key("dashboard")
    assert browser.login(key).status_code == 401
    assert browser.get("/").status_code == 303


def test_login_form_without_its_token_is_refused(browser: Browser, key: str) -> None:
    browser.get("/login")
    for token in ["", "0" * 64]:
        response = browser.post("/login", data={"key": key, "csrf": token})
        assert response.status_code == 403
        assert "tickwork_session" not in browser.client.cookies


def test_login_returns_to_the_page_asked_for_but_never_to_another_site(
    browser: Browser, key: str
) -> None:
    token = CSRF.findall(browser.get("/login?next=/runs").text)[0]
    response = browser.post("/login", data={"key": key, "csrf": token, "next": "/runs"})
    assert response.headers["location"] == "/runs"
    for target in ["//evil.example/", "https://evil.example/", "/\\evil.example"]:
        assert browser.get("/login", params={"next": target}).headers["location"] == "/"


def test_revoking_the_key_ends_its_sessions_at_once(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    token = logged_in.csrf()
    engine.revoke_api_key("dashboard")
    assert logged_in.get("/").status_code == 303
    assert logged_in.get("/login/status").json() == {"logged_in": False}
    before = state(engine)
    data = {"csrf": token, "key": scheduled["every"], "action": "pause"}
    response = logged_in.post("/schedule/action", data=data)
    assert response.status_code == 303 and response.headers["location"].startswith("/login")
    assert state(engine) == before


def test_session_expires_after_twelve_hours(logged_in: Browser, clock: FakeClock) -> None:
    clock.advance("11h59m")
    assert logged_in.get("/").status_code == 200
    clock.advance("1m")
    assert logged_in.get("/").status_code == 303


@pytest.mark.parametrize(
    "forge",
    [
        lambda v: v[:-1] + ("0" if v[-1] != "0" else "1"),  # signature changed
        lambda v: "ffffffffffff" + v[12:],  # another key id
        lambda v: v.replace(v.split(".")[1], str(int(v.split(".")[1]) + 10**6)),  # longer life
        lambda v: "garbage",
    ],
)
def test_forged_session_cookies_are_refused(
    logged_in: Browser, forge: Callable[[str], str]
) -> None:
    value = logged_in.client.cookies["tickwork_session"]
    logged_in.client.cookies.set("tickwork_session", forge(value))
    assert logged_in.get("/").status_code == 303


def test_a_session_signed_by_another_server_secret_is_refused(
    engine: Engine, stack: ExitStack, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TICKWORK_SECRET", "one")
    first = Browser(create_app(engine), stack)
    first.login(key)
    monkeypatch.setenv("TICKWORK_SECRET", "two")
    second = Browser(create_app(engine), stack)
    second.client.cookies.set("tickwork_session", first.client.cookies["tickwork_session"])
    assert second.get("/").status_code == 303
    monkeypatch.setenv("TICKWORK_SECRET", "one")
    third = Browser(create_app(engine), stack)
    third.client.cookies.set("tickwork_session", first.client.cookies["tickwork_session"])
    assert third.get("/").status_code == 200  # the same secret: sessions survive a restart


def test_logout_ends_the_session_even_for_a_kept_copy_of_the_cookie(logged_in: Browser) -> None:
    kept = logged_in.client.cookies["tickwork_session"]
    response = logged_in.post("/logout", data={"csrf": logged_in.csrf()})
    assert response.status_code == 303 and response.headers["location"] == "/login"
    assert logged_in.get("/").status_code == 303
    logged_in.client.cookies.set("tickwork_session", kept)
    assert logged_in.get("/").status_code == 303


def test_logout_needs_the_csrf_token(logged_in: Browser) -> None:
    assert logged_in.post("/logout", data={"csrf": "x"}).status_code == 403
    assert logged_in.get("/logout").status_code == 405
    assert logged_in.get("/").status_code == 200


def test_login_status_answers_without_changing_anything(browser: Browser, key: str) -> None:
    assert browser.get("/login/status").json() == {"logged_in": False}
    browser.login(key)
    assert browser.get("/login/status").json() == {"logged_in": True}


# -- CSRF and methods ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "action", ["pause", "resume", "trigger", "new_run", "deactivate", "activate"]
)
@pytest.mark.parametrize("token", [None, "", "wrong", "0" * 64])
def test_actions_without_the_right_csrf_token_are_refused_and_change_nothing(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str], action: str, token: str | None
) -> None:
    if action == "resume":
        engine.pause(scheduled["every"])
    if action == "activate":
        engine.deactivate(scheduled["every"])
    before = state(engine)
    data = {"key": scheduled["every"], "action": action, "next": "/"}
    if token is not None:
        data["csrf"] = token
    response = logged_in.post("/schedule/action", data=data)
    assert response.status_code == 403
    assert "nothing was changed" in response.text
    assert state(engine) == before


def test_another_sessions_csrf_token_is_refused(
    app: Starlette, stack: ExitStack, engine: Engine, key: str, scheduled: dict[str, str]
) -> None:
    alice, mallory = Browser(app, stack), Browser(app, stack)
    alice.login(key)
    mallory.login(engine.create_api_key("mallory"))
    before = state(engine)
    data = {"csrf": mallory.csrf(), "key": scheduled["every"], "action": "pause"}
    assert alice.post("/schedule/action", data=data).status_code == 403
    assert state(engine) == before


def test_cancel_without_the_csrf_token_is_refused(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    run_id = engine.start("report").id
    assert logged_in.post("/run/cancel", data={"id": run_id}).status_code == 403
    assert engine.get_run(run_id).status == "pending"  # type: ignore[union-attr]


def test_get_never_changes_anything(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    run_id = engine.start("report").id
    token = logged_in.csrf()
    before = state(engine)
    for action in ["pause", "trigger", "deactivate"]:
        query = {"csrf": token, "key": scheduled["every"], "action": action}
        assert logged_in.get("/schedule/action", params=query).status_code == 405
    assert logged_in.get("/run/cancel", params={"csrf": token, "id": run_id}).status_code == 405
    extra = {"action": "pause", "csrf": token}
    for path, params in [("/", {}), ("/runs", {}), ("/run", {"id": run_id}),
                         ("/schedule", {"key": scheduled["every"]})]:  # fmt: skip
        assert logged_in.get(path, params={**params, **extra}).status_code == 200
    assert state(engine) == before


# -- actions -------------------------------------------------------------------------------


def test_pause_resume_deactivate_activate_with_the_token(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    key = scheduled["cron"]
    for action, expected in [("pause", "paused"), ("resume", "active"),
                             ("deactivate", "inactive"), ("activate", "active")]:  # fmt: skip
        response = logged_in.act(key, action)
        assert response.status_code == 303 and response.headers["location"] == "/"
        assert engine.get_schedule(key).state == expected  # type: ignore[union-attr]
        assert f"{key}: {action}d." in text(logged_in.get("/"))


def test_run_now_starts_the_current_occurrence_and_links_to_it(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    key = scheduled["cron"]
    response = logged_in.act(key, "trigger", next=f"/schedule?key={key}")
    assert response.headers["location"] == f"/schedule?key={key}"
    [run] = engine.list_runs(schedule_key=key)
    page = logged_in.get(response.headers["location"])
    assert f"{key}: started run {run.id}" in text(page)
    assert f'href="/run?id={quote(run.id, safe="")}"' in page.text
    assert "Start a new run" not in page.text
    assert "started run" not in text(logged_in.get("/"))  # shown once


def test_run_now_on_an_occurrence_that_ran_says_so_and_offers_a_new_run(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    key = scheduled["every"]  # its 12:15 occurrence ran and completed
    [ran] = engine.list_runs(schedule_key=key)
    page = logged_in.get(logged_in.act(key, "trigger").headers["location"])
    assert f"{key}: occurrence already ran: run {ran.id} (completed)" in text(page)
    assert engine.list_runs(schedule_key=key) == [ran]  # nothing started
    assert 'value="new_run">Start a new run</button>' in page.text
    logged_in.act(key, "new_run")
    runs = engine.list_runs(schedule_key=key)
    assert len(runs) == 2 and runs[0].id != ran.id and runs[0].status == "pending"


def test_cancel_a_pending_run(logged_in: Browser, engine: Engine) -> None:
    run_id = engine.start("report").id
    page = logged_in.get("/run", params={"id": run_id})
    assert "Cancel</button>" in page.text
    data = {"csrf": CSRF.findall(page.text)[-1], "id": run_id, "next": f"/run?id={run_id}"}
    assert logged_in.post("/run/cancel", data=data).status_code == 303
    assert engine.get_run(run_id).status == "cancelled"  # type: ignore[union-attr]
    assert "Cancel</button>" not in logged_in.get("/run", params={"id": run_id}).text


def test_action_on_a_vanished_schedule_says_so(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    token = logged_in.csrf()
    engine.unschedule(scheduled["every"])
    data = {"csrf": token, "key": scheduled["every"], "action": "pause", "next": "/"}
    logged_in.post("/schedule/action", data=data)
    assert f"No schedule '{scheduled['every']}'." in text(logged_in.get("/"))


# -- pages ---------------------------------------------------------------------------------


def test_schedules_page_shows_cadence_zone_next_and_last_fire_and_state(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    engine.pause(scheduled["cron"])
    page = text(logged_in.get("/"))
    # now is 12:16 UTC on Sunday 2026-03-01; the interval's 12:15 occurrence was fired at
    # 12:16 (Last fire: when its run was created)
    assert (
        "every-15m report Every 15 min UTC 2026-03-01 12:30:00 in 14 min "
        "2026-03-01 12:16:00 now completed active Pause Run now Deactivate"
    ) in page
    assert (
        "weekday-report report At 09:00 on Monday through Friday 0 9 * * 1-5 Europe/London "
        "2026-03-02 09:00:00 in 20 h 44 min (paused) never — paused Resume Run now "
        "Deactivate"
    ) in page
    engine.deactivate(scheduled["cron"])
    page = text(logged_in.get("/"))
    assert "— (inactive) never — inactive Run now Activate" in page


def test_schedules_page_shows_a_hundred_at_a_time_with_banners_about_all(
    logged_in: Browser, engine: Engine
) -> None:
    count = SCHEDULES_PER_PAGE + 5
    for n in range(count):
        engine.schedule("report", every="1h", key=f"s{n:03d}")

    def shown(page: str) -> list[str]:
        return re.findall(r'<td data-label="Schedule"><a href="[^"]*">(s\d+)<', page)

    first = logged_in.get("/").text
    assert shown(first) == [f"s{n:03d}" for n in range(SCHEDULES_PER_PAGE)]
    assert f"Schedules 1{DASH}{SCHEDULES_PER_PAGE} of {count}" in text(logged_in.get("/"))
    assert "Previous schedules" not in first
    following = html.unescape(re.findall(r'href="([^"]*)" rel="next">Next schedules', first)[0])
    second = logged_in.get(following)
    assert shown(second.text) == [f"s{n:03d}" for n in range(SCHEDULES_PER_PAGE, count)]
    assert f"Schedules {SCHEDULES_PER_PAGE + 1}{DASH}{count} of {count}" in text(second)
    assert "Next schedules" not in second.text and "Previous schedules" in second.text
    # No worker serves them: the banner counts every schedule, on each page, and names
    # the first ten.
    assert f"No live worker serves {count} active schedule(s)" in text(second)
    assert "s009 : no worker" in text(second) and "s010 : no worker" not in text(second)
    assert f"and {count - 10} more" in text(second)
    # A page past the end (schedules removed since) is the last one; nonsense is the first.
    assert shown(logged_in.get("/", params={"page": "99"}).text) == shown(second.text)
    for nonsense in ("0", "-1", "two", "9" * 5000):
        assert shown(logged_in.get("/", params={"page": nonsense}).text) == shown(first)


def test_schedules_page_has_no_pager_while_its_schedules_fit_on_one(
    logged_in: Browser, scheduled: dict[str, str]
) -> None:
    page = logged_in.get("/").text
    assert "Next schedules" not in page and f"Schedules 1{DASH}" not in page


def test_schedule_page_shows_definition_history_and_upcoming(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    page = text(logged_in.get("/schedule", params={"key": "weekday-report"}))
    assert "Cadence At 09:00 on Monday through Friday 0 9 * * 1-5" in page
    assert "Time zone Europe/London" in page
    upcoming = re.findall(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC) (\w{3} [^ ]+ [^ ]+ GMT)", page)
    assert [u[0] for u in upcoming][:5] == [
        f"2026-03-{day:02} 09:00:00 UTC" for day in (2, 3, 4, 5, 6)
    ]
    assert "No decisions yet" in page

    page = text(logged_in.get("/schedule", params={"key": "every-15m"}))
    assert 'Input { "day": "today" }' in page
    run_id = "every-15m@2026-03-01T12:15:00.000Z"
    assert f"2026-03-01 12:15:00 UTC started due 1 {run_id} 2026-03-01 12:16:00 UTC" in page
    for when in ["12:30", "12:45", "13:00", "13:15", "13:30"]:
        assert f"2026-03-01 {when}:00 UTC" in page


def test_schedule_page_marks_what_its_calendar_does_to_the_next_occurrences(
    logged_in: Browser, engine: Engine
) -> None:
    engine.calendar("office", holidays=[date(2026, 3, 3)])  # a Tuesday
    engine.schedule("report", cron="0 9 * * *", key="office-days", calendar="office",
                    on_holiday="next")  # fmt: skip
    page = text(logged_in.get("/schedule", params={"key": "office-days"}))
    assert "Calendar office ; on a day off: move to the next business day" in page
    assert (
        'href="/calendar?name=office"'
        in logged_in.get("/schedule", params={"key": "office-days"}).text
    )
    assert (
        "2026-03-03 09:00:00 UTC in 1 d 21 h holiday moved calendar 'office': 2026-03-03 is "
        "a holiday: moved to 2026-03-04 (on_holiday=next)"
    ) in page
    assert "2026-03-02 09:00:00 UTC in 21 h 2026-03-03" in page  # unmarked
    assert "DST" not in page  # a UTC schedule: no policy to speak of


def test_schedule_page_marks_what_dst_does_to_the_next_occurrences(
    logged_in: Browser, engine: Engine
) -> None:
    # New York skips 02:00-03:00 on Sunday 2026-03-08: that Sunday's 02:30 does not run.
    engine.schedule("report", cron="30 2 * * SUN", timezone="America/New_York", key="night",
                    dst_gap="skip", dst_repeat="both")  # fmt: skip
    page = text(logged_in.get("/schedule", params={"key": "night"}))
    assert "DST skipped time: skip; repeated time: both" in page
    assert "Calendar none: every day is a business day" in page
    assert (
        "2026-03-08 07:00:00 UTC Sun 2026-03-08 03:00:00 EDT in 6 d 19 h skipped "
        "DST: 02:30 does not exist that day; skipped (dst_gap=skip)"
    ) in page
    assert "2026-03-15 06:30:00 UTC Sun 2026-03-15 02:30:00 EDT in 13 d 18 h 2026-03-22" in page


def test_schedule_page_history_explains_missed_occurrences(
    logged_in: Browser, engine: Engine, clock: FakeClock, scheduled: dict[str, str]
) -> None:
    engine.pause("every-15m")
    clock.advance("1h")
    engine.resume("every-15m")
    engine.tick()
    page = text(logged_in.get("/schedule", params={"key": "every-15m"}))
    assert "missed paused" in page
    assert "Every 15 min" in page


def test_unknown_schedule_and_run_are_not_found(logged_in: Browser) -> None:
    assert logged_in.get("/schedule", params={"key": "nope"}).status_code == 404
    assert logged_in.get("/run", params={"id": "nope"}).status_code == 404
    assert logged_in.get("/run").status_code == 404


def test_runs_page_filters_by_status_workflow_and_schedule(
    logged_in: Browser, engine: Engine, scheduled: dict[str, str]
) -> None:
    engine.start("report", run_id="manual-report")
    engine.start("broken", run_id="manual-broken")
    engine.run_until_idle()
    scheduled_run = "every-15m@2026-03-01T12:15:00.000Z"

    def shown(**params: str) -> set[str]:
        page = logged_in.get("/runs", params=params).text
        return {html.unescape(i) for i in re.findall(r'class="mono" href="[^"]*">([^<]+)<', page)}

    assert shown() == {"manual-report", "manual-broken", scheduled_run}
    assert shown(status="failed") == {"manual-broken"}
    assert shown(status="completed") == {"manual-report", scheduled_run}
    assert shown(workflow="broken") == {"manual-broken"}
    assert shown(schedule="every-15m") == {scheduled_run}
    assert shown(status="completed", workflow="report", schedule="every-15m") == {scheduled_run}
    assert shown(status="running") == set()
    page = logged_in.get("/runs", params={"status": "bogus"})
    assert page.status_code == 200 and "Unknown status" in page.text


def test_runs_page_pages_to_older_runs_keeping_the_filters(
    logged_in: Browser, engine: Engine, clock: FakeClock
) -> None:
    limit = RUNS_LIMIT
    for n in range(limit + 2):
        engine.start("report", run_id=f"r{n:03d}")
        clock.advance("1s")
    engine.start("broken", run_id="other")  # newest, filtered out below

    def shown(page: str) -> list[str]:
        return [html.unescape(i) for i in re.findall(r'class="mono" href="[^"]*">([^<]+)<', page)]

    first = logged_in.get("/runs", params={"workflow": "report"}).text
    assert shown(first) == [f"r{n:03d}" for n in range(limit + 1, 1, -1)]
    older = html.unescape(re.findall(r'href="([^"]*)" rel="next">Older runs', first)[0])
    assert "workflow=report" in older and "before=r002" in older
    second = logged_in.get(older).text
    assert shown(second) == ["r001", "r000"]
    assert "Older runs" not in second and "Newest runs" in second


def test_runs_page_suggests_the_first_schedule_keys_only(
    logged_in: Browser, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schedule filter's suggestions: the first keys in key order, at most
    ``SUGGESTED_KEYS`` of them (each view reads them: 10,000 schedules cost 150 ms a view
    when they were read whole); a key past them still filters when typed."""
    monkeypatch.setattr(pages, "SUGGESTED_KEYS", 3)
    for key in ("d-nightly", "a-hourly", "c-weekly", "b-daily", "e-monthly"):
        engine.schedule("report", None, every="1h", key=key)
    run_id = engine.trigger("e-monthly")
    page = logged_in.get("/runs").text
    datalist = re.findall(r'<datalist id="schedule-keys">(.*?)</datalist>', page)[0]
    assert re.findall(r'<option value="([^"]*)">', datalist) == ["a-hourly", "b-daily", "c-weekly"]
    filtered = logged_in.get("/runs", params={"schedule": "e-monthly"}).text
    shown = re.findall(r'class="mono" href="[^"]*">([^<]+)<', filtered)
    assert [html.unescape(run) for run in shown] == [run_id]


def test_run_page_shows_steps_with_timings_input_result_and_attempts(
    logged_in: Browser, engine: Engine, clock: FakeClock
) -> None:
    run_id = engine.start("report", {"day": "<today>"}, run_id="r/1?&#x").id
    engine.run_until_idle()
    response = logged_in.get("/run", params={"id": run_id})
    page = text(response)
    assert "completed" in page
    assert 'Input { "day": "<today>" }' in page
    assert 'Result { "stored": 3 }' in page
    assert (
        "1 fetch completed 2026-03-01 12:00:00 UTC 2026-03-01 12:00:00 UTC 0 ms 1 "
        '{ "note": "<b>bold</b>", "rows": 3 }'
    ) in page
    assert "2 transform completed" in page and "3 store completed" in page
    assert "Cancel" not in page


def test_run_page_says_when_a_sleep_wakes_then_how_long_it_slept(
    logged_in: Browser, engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow()
    def waits(ctx: Context) -> None:
        ctx.now()
        ctx.sleep("cool-down", "30m")

    run_id = engine.start("waits").id
    engine.run_until_idle()
    clock.advance("4m")
    page = text(logged_in.get("/run", params={"id": run_id}))
    assert "cool-down (sleep) sleeping" in page
    assert "wakes at 2026-03-01 12:30:00 UTC (in 26 min)" in page
    assert "2026-03-01 12:00:00 UTC" in page  # what now() read
    assert "1772" not in page  # never epoch milliseconds
    clock.advance("30m")
    engine.run_until_idle()
    page = text(logged_in.get("/run", params={"id": run_id}))
    assert "slept 30 min" in page and "wakes at" not in page
    assert "cool-down (sleep) completed" in page


def test_run_page_shows_the_error_of_a_failed_run(logged_in: Browser, engine: Engine) -> None:
    run_id = engine.start("broken").id
    engine.run_until_idle()
    page = text(logged_in.get("/run", params={"id": run_id}))
    assert "failed" in page
    assert "Error RuntimeError: disk <full> & on fire" in page
    assert "explode failed" in page


# -- escaping, headers, live refresh -------------------------------------------------------


def test_everything_from_the_store_is_escaped(logged_in: Browser, engine: Engine) -> None:
    evil = "<img src=x onerror=alert(1)>"
    key = "<i>k&'\""
    engine.schedule("report", {"x": evil}, every="1h", key=key)
    run_id = engine.start("broken", run_id='"><script>alert(1)</script>').id
    engine.run_until_idle()
    pages = [
        logged_in.get("/"),
        logged_in.get("/schedule", params={"key": key}),
        logged_in.get("/runs"),
        logged_in.get("/run", params={"id": run_id}),
    ]
    for page in pages:
        assert page.status_code == 200
        for raw in [evil, key, "<script>alert", "<full>"]:
            assert raw not in page.text
    assert "&lt;i&gt;k&amp;&#39;&#34;" in pages[0].text
    assert "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in pages[3].text
    assert "disk &lt;full&gt; &amp; on fire" in pages[3].text


def test_keys_and_run_ids_with_url_characters_round_trip(
    logged_in: Browser, engine: Engine
) -> None:
    key = "a?b#c%d&e=..+"
    engine.schedule("report", None, every="1h", key=key)
    page = logged_in.get("/").text
    link = re.search(r'href="(/schedule\?key=[^"]+)"', page)
    assert link is not None
    assert key in text(logged_in.get(html.unescape(link.group(1))))
    logged_in.act(key, "pause")
    assert engine.get_schedule(key).state == "paused"  # type: ignore[union-attr]


@pytest.mark.parametrize("path", ["/", "/login", "/runs"])
def test_responses_carry_a_strict_content_security_policy(logged_in: Browser, path: str) -> None:
    response = logged_in.get(path, follow_redirects=True)
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "frame-ancestors 'none'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "unsafe-inline" not in policy
    assert not re.search(r"<[^>]*\son\w+\s*=", response.text)  # no inline event handlers
    assert not re.search(r"<script(?![^>]*\ssrc=)", response.text)  # no inline scripts


def test_forbidden_responses_carry_the_policy_too(logged_in: Browser) -> None:
    response = logged_in.post("/schedule/action", data={"csrf": "x"})
    assert response.status_code == 403
    assert "script-src 'self'" in response.headers["content-security-policy"]


def test_list_pages_ask_for_live_refresh_and_the_script_is_served(
    logged_in: Browser, engine: Engine
) -> None:
    assert 'data-refresh="2500"' in logged_in.get("/").text
    assert 'data-refresh="2500"' in logged_in.get("/runs").text
    assert 'src="/static/live.js"' in logged_in.get("/").text
    script = logged_in.get("/static/live.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert logged_in.get("/static/dashboard.css").status_code == 200
    run_id = engine.start("report").id
    assert 'data-refresh="2500"' in logged_in.get("/run", params={"id": run_id}).text
    engine.run_until_idle()
    assert "data-refresh" not in logged_in.get("/run", params={"id": run_id}).text


def test_a_refresh_does_not_consume_the_message_of_the_last_action(
    logged_in: Browser, scheduled: dict[str, str]
) -> None:
    logged_in.act(scheduled["every"], "pause")
    refreshed = logged_in.get("/", headers={"X-Tickwork-Refresh": "1"})
    assert "every-15m: paused." not in text(refreshed)
    assert "every-15m: paused." in text(logged_in.get("/"))


# -- formatting ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(0, "now"), (42, "in 42 s"), (-42, "42 s ago"), (240, "in 4 min"), (299, "in 4 min 59 s"),
     (3600 + 300, "in 1 h 5 min"), (-7200, "2 h ago"), (86_400 * 3 + 7200, "in 3 d 2 h")],
)  # fmt: skip
def test_relative_times_read_like_speech(seconds: int, expected: str) -> None:
    from datetime import timedelta

    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert format_relative(now + timedelta(seconds=seconds), now) == expected


@pytest.mark.parametrize(
    ("ms", "expected"),
    [(0, "0 ms"), (850, "850 ms"), (2400, "2.4 s"), (245_000, "4 min 5 s"),
     (7_380_000, "2 h 3 min")],
)  # fmt: skip
def test_elapsed_times_read_like_speech(ms: int, expected: str) -> None:
    from datetime import timedelta

    assert format_elapsed(timedelta(milliseconds=ms)) == expected
