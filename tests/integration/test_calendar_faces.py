"""Business calendars through the HTTP API and the ``Client`` (DESIGN §3, issue 32): the
same calendars, holidays and errors as ``Engine``'s, on both backends. Bad input is a 4xx
and stores nothing; a calendar that schedules use is not deleted (409 naming them)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
from tests.integration.test_api import Api, error_of
from tests.integration.test_client import server_url

from tickwork import CalendarInUse, Client, ConfigError, Context, Engine, Holiday
from tickwork.server import create_app

__all__ = ["server_url"]  # the fixture, shared with the Client's tests


def noop(ctx: Context) -> None:
    return None


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    engine.workflow("noop")(noop)
    return engine


@pytest.fixture
def api(app_engine: Engine) -> Api:
    return Api(create_app(app_engine), app_engine.create_api_key("tests"))


@pytest.fixture
def client(app_engine: Engine, server_url: str) -> Iterator[Client]:
    with Client(server_url, api_key=app_engine.create_api_key("client"), timeout=10) as client:
        yield client


def put(api: Api, name: str, body: dict[str, Any]) -> Any:
    return api.request("PUT", f"/api/v1/calendars/{name}", json=body)


# -- the API ---------------------------------------------------------------------------


def test_put_stores_the_calendar_as_the_engine_would(api: Api, app_engine: Engine) -> None:
    response = put(
        api, "acme", {"holidays": ["2026-12-31", "2026-12-24"], "weekend": ["FRI", "SAT"]}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    stored = app_engine.get_calendar("acme")
    assert stored is not None and stored.weekend == ("FRI", "SAT")
    assert stored.holidays == (date(2026, 12, 24), date(2026, 12, 31))
    assert body == {
        "name": "acme",
        "weekend": ["FRI", "SAT"],
        "holidays": ["2026-12-24", "2026-12-31"],
        "country": None,
        "subdivision": None,
        "updated_at": body["updated_at"],
    }
    assert api.get("/api/v1/calendars/acme").json() == body
    assert api.get("/api/v1/calendars").json() == {"calendars": [body]}


def test_put_with_no_body_fields_takes_the_engines_defaults(api: Api, app_engine: Engine) -> None:
    assert put(api, "plain", {}).status_code == 200
    stored = app_engine.get_calendar("plain")
    assert stored is not None and (stored.weekend, stored.holidays) == (("SAT", "SUN"), ())


def test_get_with_a_year_answers_its_holidays_as_the_cli_does(api: Api) -> None:
    put(api, "uk", {"country": "GB", "subdivision": "ENG", "holidays": ["2026-12-24"]})
    response = api.get("/api/v1/calendars/uk", params={"year": 2026})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["calendar"], body["year"], body["country"]) == ("uk", 2026, "GB")
    december = [h for h in body["holidays"] if h["date"].startswith("2026-12")]
    assert december == [
        {"date": "2026-12-24", "name": ""},
        {"date": "2026-12-25", "name": "Christmas Day"},
        {"date": "2026-12-26", "name": "Boxing Day"},
        {"date": "2026-12-28", "name": "Boxing Day (observed)"},
    ]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"holidays": ["24/12/2026"]}, "Bad holiday '24/12/2026'"),
        ({"weekend": ["SAT", "Caturday"]}, "'Caturday' is not a day of the week"),
        ({"weekend": ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]}, "no business day"),
        ({"subdivision": "ENG"}, "needs a country"),
        ({"country": "XX"}, "country='XX'"),
        ({"country": "GB", "subdivision": "ZZZ"}, "subdivision ZZZ"),
    ],
)
def test_bad_values_are_400_and_store_nothing(
    api: Api, app_engine: Engine, body: dict[str, Any], words: str
) -> None:
    before = app_engine.calendar("acme", holidays=["2026-12-24"])
    response = put(api, "acme", body)
    assert response.status_code == 400, response.text
    error = error_of(response)
    assert error["code"] == "CONFIG_ERROR" and words in error["message"]
    assert app_engine.list_calendars() == [before]


def test_a_bad_name_is_400_and_stores_nothing(api: Api, app_engine: Engine) -> None:
    response = put(api, "-dash-first", {})
    assert response.status_code == 400 and "Bad calendar name" in error_of(response)["message"]
    assert app_engine.list_calendars() == []


@pytest.mark.parametrize(
    "body",
    [
        b'{"holidays": "2026-12-24"}',
        b'{"holidays": [20261224]}',
        b'{"weekend": "SAT"}',
        b'{"country": 44}',
        b'{"colour": "red"}',
        b"[1]",
        b"{not json",
    ],
)
def test_a_body_of_the_wrong_shape_is_422_and_stores_nothing(
    api: Api, app_engine: Engine, body: bytes
) -> None:
    response = api.request(
        "PUT", "/api/v1/calendars/acme", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert error_of(response)["code"] in ("CONFIG_ERROR", "MALFORMED_BODY")
    assert app_engine.list_calendars() == []


def test_a_country_without_the_servers_extra_is_400_naming_it(
    api: Api, app_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "holidays", None)  # import holidays -> ImportError
    response = put(api, "uk", {"country": "GB", "subdivision": "ENG"})
    assert response.status_code == 400
    assert "pip install 'tickwork[holidays]'" in error_of(response)["message"]
    assert app_engine.list_calendars() == []


def test_a_year_never_resolved_on_a_server_without_the_extra_is_400_naming_it(
    api: Api, app_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    app_engine.calendar("uk", country="GB", subdivision="ENG")  # stores 2026 and 2027
    monkeypatch.setitem(sys.modules, "holidays", None)
    refused = api.get("/api/v1/calendars/uk", params={"year": 2040})
    assert refused.status_code == 400
    assert "pip install 'tickwork[holidays]'" in error_of(refused)["message"]
    stored = api.get("/api/v1/calendars/uk", params={"year": 2027})
    assert {"date": "2027-12-25", "name": "Christmas Day"} in stored.json()["holidays"]


@pytest.mark.parametrize(("method", "query"), [("GET", ""), ("GET", "?year=2026"), ("DELETE", "")])
def test_an_unknown_calendar_is_404_naming_the_database(
    api: Api, app_engine: Engine, method: str, query: str
) -> None:
    response = api.request(method, f"/api/v1/calendars/nope{query}")
    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "CALENDAR_NOT_FOUND"
    assert error["message"] == f"No calendar 'nope' in {app_engine.console.where}"


@pytest.mark.parametrize("year", ["0", "10000", "twenty", "2026.5", ""])
def test_a_bad_year_is_400(api: Api, year: str) -> None:
    put(api, "acme", {})
    response = api.get(f"/api/v1/calendars/acme?year={year}")
    assert response.status_code == 400 and "year" in error_of(response)["message"]


def test_delete_removes_it(api: Api, app_engine: Engine) -> None:
    put(api, "acme", {})
    response = api.request("DELETE", "/api/v1/calendars/acme")
    assert response.status_code == 200 and response.json() == {"name": "acme", "deleted": True}
    assert app_engine.list_calendars() == []


def test_deleting_a_calendar_schedules_use_is_409_naming_them(api: Api, app_engine: Engine) -> None:
    app_engine.calendar("uk")
    for key in ("b-report", "a-report"):
        app_engine.schedule("noop", every="1h", key=key, calendar="uk")
    app_engine.schedule("noop", every="1h", key="other")
    response = api.request("DELETE", "/api/v1/calendars/uk")
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "CALENDAR_IN_USE"
    assert error["details"] == {"calendar": "uk", "schedules": ["a-report", "b-report"]}
    assert "'a-report', 'b-report'" in error["message"]
    assert [c.name for c in app_engine.list_calendars()] == ["uk"]


def test_the_routes_need_a_live_key(api: Api) -> None:
    for method, path in [
        ("GET", "/api/v1/calendars"),
        ("GET", "/api/v1/calendars/acme?year=2026"),
        ("PUT", "/api/v1/calendars/acme"),
        ("DELETE", "/api/v1/calendars/acme"),
    ]:
        assert api.request(method, path, key=None, json={}).status_code == 401
    assert put(api, "acme", {}).status_code == 200


# -- the engine's refusal, which the API and Client pass on ---------------------------------


def test_engine_refuses_to_delete_a_calendar_schedules_use(
    app_engine: Engine,
) -> None:
    app_engine.calendar("uk")
    app_engine.schedule("noop", every="1h", key="a-report", calendar="uk")
    with pytest.raises(CalendarInUse) as caught:
        app_engine.delete_calendar("uk")
    assert (caught.value.calendar, caught.value.schedules) == ("uk", ("a-report",))
    app_engine.unschedule("a-report")  # once nothing uses it, it goes
    assert app_engine.delete_calendar("uk") is True


def test_a_calendar_no_schedule_uses_is_deleted(app_engine: Engine) -> None:
    app_engine.calendar("uk")
    app_engine.schedule("noop", every="1h", key="a-report")  # no calendar of its own
    assert app_engine.delete_calendar("uk") is True


# -- the Client ------------------------------------------------------------------------


def test_client_calendars_are_the_engines(client: Client, app_engine: Engine) -> None:
    made = client.calendar(
        "uk",
        holidays=["2026-12-24", date(2026, 12, 31)],
        country="GB",
        subdivision="ENG",
        weekend=["sun", "sat"],
    )
    assert made == app_engine.get_calendar("uk") == client.get_calendar("uk")
    assert made.weekend == ("SAT", "SUN") and made.country == "GB"
    assert client.list_calendars() == app_engine.list_calendars() == [made]
    assert client.calendar_holidays("uk", 2026) == app_engine.calendar_holidays("uk", 2026)
    assert Holiday(date(2026, 12, 25), "Christmas Day") in client.calendar_holidays("uk", 2026)
    assert client.get_calendar("nope") is None
    assert client.delete_calendar("uk") is True
    assert client.delete_calendar("uk") is False
    assert app_engine.list_calendars() == []


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"name": "a b"}, "Bad calendar name"),
        ({"holidays": ["24/12/2026"]}, "Bad holiday '24/12/2026'"),
        ({"holidays": "2026-12-24"}, "Bad holidays"),
        ({"weekend": "SAT"}, "Bad weekend"),
        ({"subdivision": "ENG"}, "needs a country"),
        ({"country": "XX"}, "country='XX'"),
    ],
)
def test_client_refuses_what_the_engine_refuses_and_stores_nothing(
    client: Client, app_engine: Engine, kwargs: dict[str, Any], words: str
) -> None:
    kwargs = dict(kwargs)  # the table's dicts are shared by both backends' cases
    name = kwargs.pop("name", "acme")
    with pytest.raises(ConfigError, match=words):
        app_engine.calendar(name, **kwargs)
    with pytest.raises(ConfigError, match=words):
        client.calendar(name, **kwargs)
    assert app_engine.list_calendars() == []


@pytest.mark.parametrize("name", ["a/b", "..", ".", "a b", "a\nb", "é"])
def test_client_answers_as_the_engine_for_names_no_calendar_has(
    client: Client, app_engine: Engine, name: str
) -> None:
    assert client.get_calendar(name) is app_engine.get_calendar(name) is None
    assert client.delete_calendar(name) is app_engine.delete_calendar(name) is False
    with pytest.raises(ConfigError, match="No calendar"):
        client.calendar_holidays(name, 2026)


def test_client_holidays_errors_are_the_engines(client: Client, app_engine: Engine) -> None:
    for year in (0, 10_000, True):
        with pytest.raises(ConfigError, match="Bad year"):
            client.calendar_holidays("acme", year)
    with pytest.raises(ConfigError, match="No calendar 'nope'") as remote:
        client.calendar_holidays("nope", 2026)
    with pytest.raises(ConfigError) as local:
        app_engine.calendar_holidays("nope", 2026)
    assert str(remote.value) == str(local.value)


def test_client_delete_of_a_calendar_in_use_raises_the_engines_error(
    client: Client, app_engine: Engine
) -> None:
    app_engine.calendar("uk")
    app_engine.schedule("noop", every="1h", key="b-report", calendar="uk")
    with pytest.raises(CalendarInUse) as caught:
        client.delete_calendar("uk")
    assert (caught.value.calendar, caught.value.schedules) == ("uk", ("b-report",))
    assert app_engine.get_calendar("uk") is not None


def test_client_async_twins_are_the_blocking_calls(client: Client, app_engine: Engine) -> None:
    async def scenario() -> None:
        made = await client.calendar_async("acme", holidays=["2026-12-24"])
        assert await client.get_calendar_async("acme") == made
        assert await client.list_calendars_async() == [made]
        assert await client.calendar_holidays_async("acme", 2026) == (
            Holiday(date(2026, 12, 24), ""),
        )
        assert await client.delete_calendar_async("acme") is True
        assert await client.get_calendar_async("acme") is None

    asyncio.run(scenario())
    assert app_engine.list_calendars() == []


def test_engine_async_twins_are_the_blocking_calls(app_engine: Engine) -> None:
    async def scenario() -> None:
        made = await app_engine.calendar_async("acme", weekend=["FRI", "SAT"])
        assert await app_engine.list_calendars_async() == [made]
        assert await app_engine.get_calendar_async("acme") == made
        assert await app_engine.calendar_holidays_async("acme", 2026) == ()
        assert await app_engine.delete_calendar_async("acme") is True

    asyncio.run(scenario())


# -- previews with a calendar (issue 47) --------------------------------------------------


def test_engine_preview_counts_business_day_words_on_a_stored_calendar(
    app_engine: Engine,
) -> None:
    """``0 17 LBD * *`` on calendar acme, whose 31 December is a holiday: the last
    business day of December is the 30th."""
    app_engine.calendar("acme", holidays=["2026-12-31"])
    after = datetime(2026, 11, 1, tzinfo=UTC)
    found = app_engine.preview(cron="0 17 LBD * *", calendar="acme", after=after, count=3)
    assert found == [
        datetime(2026, 11, 30, 17, tzinfo=UTC),
        datetime(2026, 12, 30, 17, tzinfo=UTC),
        datetime(2027, 1, 29, 17, tzinfo=UTC),
    ]
    with pytest.raises(ConfigError, match="No calendar 'nope'"):
        app_engine.preview(cron="0 17 LBD * *", calendar="nope", after=after)
    with pytest.raises(ConfigError, match="on_holiday must be one of"):
        app_engine.preview(cron="0 9 * * *", calendar="acme", on_holiday="later")
    with pytest.raises(ConfigError, match="needs a calendar"):
        app_engine.preview(cron="0 9 * * *", on_holiday="next")


def test_the_apis_preview_marks_what_the_calendar_skips_and_moves(
    api: Api, app_engine: Engine
) -> None:
    app_engine.calendar("acme", holidays=["2026-12-25"])
    params = {"cron": "0 9 * * *", "after": "2026-12-24T00:00:00Z", "count": "3"}
    moved = api.get("/api/v1/cron/preview", params={**params, "calendar": "acme",
                                                    "on_holiday": "next"})  # fmt: skip
    assert moved.status_code == 200, moved.text
    answer = moved.json()
    assert (answer["calendar"], answer["on_holiday"]) == ("acme", "next")
    first, christmas, saturday = answer["occurrences"]
    assert "holiday" not in first
    assert christmas["holiday"] == "moved"
    assert christmas["runs_at"] == "2026-12-28T09:00:00.000Z"
    assert "2026-12-25 is a holiday" in christmas["holiday_reason"]
    assert saturday["holiday"] == "moved" and "weekend day" in saturday["holiday_reason"]
    skipped = api.get("/api/v1/cron/preview", params={**params, "calendar": "acme"}).json()
    assert skipped["occurrences"][1]["holiday"] == "skipped"
    assert "runs_at" not in skipped["occurrences"][1]
    words = api.get(
        "/api/v1/cron/preview", params={"cron": "0 17 LBD * *", "calendar": "acme"}
    ).json()
    assert words["description"] == (
        "At 17:00 on the last business day of the month (calendar acme)"
    )
    missing = api.get("/api/v1/cron/preview", params={**params, "calendar": "nope"})
    assert missing.status_code == 400 and "No calendar 'nope'" in error_of(missing)["message"]


def test_client_preview_with_a_calendar_is_the_engines(client: Client, app_engine: Engine) -> None:
    app_engine.calendar("acme", holidays=["2026-12-31"])
    after = datetime(2026, 11, 1, tzinfo=UTC)
    asked = {"cron": "0 17 LBD * *", "calendar": "acme", "after": after, "count": 4}
    assert client.preview(**asked) == app_engine.preview(**asked)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="needs a calendar"):
        client.preview(cron="0 9 * * *", on_holiday="next")
    with pytest.raises(ConfigError, match="No calendar 'nope'"):
        client.preview(cron="0 9 * * *", calendar="nope")
