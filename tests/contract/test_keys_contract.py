"""The API keys part of the store (``store.keys``), on every backend: only a hash is kept,
a live name is unique, a revoked key stays listed and no longer answers."""

from __future__ import annotations

from tickwork._store import Store
from tickwork._values.clock import from_ms

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z


def test_a_created_key_answers_with_its_hash_and_is_listed(store: Store) -> None:
    assert store.keys.create_api_key(key_id="k1", name="ci", secret_hash="h1", now_ms=T0)
    assert store.keys.api_key_hash("k1") == "h1"
    (info,) = store.keys.list_api_keys()
    assert (info.id, info.name, info.created_at, info.revoked_at) == ("k1", "ci", from_ms(T0), None)


def test_a_live_name_is_taken_once_and_nothing_is_stored_the_second_time(store: Store) -> None:
    assert store.keys.create_api_key(key_id="k1", name="ci", secret_hash="h1", now_ms=T0)
    assert not store.keys.create_api_key(key_id="k2", name="ci", secret_hash="h2", now_ms=T0)
    assert store.keys.api_key_hash("k2") is None
    assert [k.id for k in store.keys.list_api_keys()] == ["k1"]


def test_a_revoked_key_no_longer_answers_but_stays_listed_and_frees_its_name(
    store: Store,
) -> None:
    store.keys.create_api_key(key_id="k1", name="ci", secret_hash="h1", now_ms=T0)
    assert store.keys.revoke_api_key("ci", now_ms=T0 + 1000)
    assert store.keys.api_key_hash("k1") is None
    assert not store.keys.revoke_api_key("ci", now_ms=T0 + 2000)  # none live by that name
    assert store.keys.create_api_key(key_id="k2", name="ci", secret_hash="h2", now_ms=T0 + 3000)
    listed = store.keys.list_api_keys()
    assert [(k.id, k.revoked_at) for k in listed] == [("k1", from_ms(T0 + 1000)), ("k2", None)]


def test_revoking_by_id_takes_that_key_only(store: Store) -> None:
    store.keys.create_api_key(key_id="k1", name="ci", secret_hash="h1", now_ms=T0)
    store.keys.create_api_key(key_id="k2", name="deploy", secret_hash="h2", now_ms=T0 + 1)
    assert store.keys.revoke_api_key("k2", now_ms=T0 + 1000)
    assert store.keys.api_key_hash("k1") == "h1" and store.keys.api_key_hash("k2") is None
    assert not store.keys.revoke_api_key("nobody", now_ms=T0 + 1000)
