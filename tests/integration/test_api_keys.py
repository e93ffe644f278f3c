"""API keys: shown once, stored hashed, verified in constant time, revocable."""

from __future__ import annotations

import pytest
from tests.pg import table_rows

from tickwork import ConfigError, Engine


def test_created_key_verifies_until_revoked(engine: Engine) -> None:
    key = engine.create_api_key("ci")
    key_id = engine.verify_api_key(key)
    assert key_id is not None and key.startswith(f"tw_{key_id}_")
    assert engine.revoke_api_key("ci")
    assert engine.verify_api_key(key) is None
    assert not engine.revoke_api_key("ci")


def test_key_id_is_live_until_revoked(engine: Engine) -> None:
    # What a dashboard session asks: it keeps the key's id, never its secret.
    key_id = engine.verify_api_key(engine.create_api_key("ci"))
    assert key_id is not None and engine.console.api_key_id_is_live(key_id)
    assert not engine.console.api_key_id_is_live("000000000000")
    engine.revoke_api_key("ci")
    assert not engine.console.api_key_id_is_live(key_id)


@pytest.mark.parametrize("mangle", [lambda k: k[:-1] + ("A" if k[-1] != "A" else "B"),
                                    lambda k: k.upper(), lambda k: "", lambda k: k + "x",
                                    lambda k: "tw_000000000000_" + k.split("_", 2)[2]])  # fmt: skip
def test_wrong_keys_do_not_verify(engine: Engine, mangle: object) -> None:
    key = engine.create_api_key("ci")
    assert engine.verify_api_key(mangle(key)) is None  # type: ignore[operator]


def test_secret_is_not_stored(engine: Engine) -> None:
    key = engine.create_api_key("ci")
    secret = key.split("_", 2)[2]
    rows = table_rows(engine.url, "tickwork_api_keys")
    assert len(rows) == 1
    assert secret not in repr(rows)


def test_live_names_are_unique_and_reusable_after_revoke(engine: Engine) -> None:
    engine.create_api_key("ci")
    with pytest.raises(ConfigError):
        engine.create_api_key("ci")
    engine.revoke_api_key("ci")
    engine.create_api_key("ci")
    keys = sorted((k.name, k.revoked_at is None) for k in engine.list_api_keys())
    assert keys == [("ci", False), ("ci", True)]


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_bad_names_are_refused(engine: Engine, name: str) -> None:
    with pytest.raises(ConfigError):
        engine.create_api_key(name)
    assert engine.list_api_keys() == []


def test_revoke_by_id(engine: Engine) -> None:
    key = engine.create_api_key("ops")
    key_id = engine.verify_api_key(key)
    assert key_id is not None and engine.revoke_api_key(key_id)
    assert engine.verify_api_key(key) is None
