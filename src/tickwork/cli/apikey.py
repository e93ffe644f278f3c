"""``tickwork apikey create|list|revoke``: keys for the HTTP API and the dashboard."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from .._values.hints import not_found
from ._options import database_option, json_option, open_engine
from ._render import echo_json, fail, print_table, printable

__all__ = ["command"]


def _when(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


@click.group("apikey")
def command() -> None:
    """Create, list and revoke API keys."""


@command.command("create")
@click.argument("name")
@database_option
@json_option
def create(name: str, database: str | None, as_json: bool) -> None:
    """Create a key named NAME and print it: it is shown only this once.

    The key itself is on the last line, alone, for scripts: `tickwork apikey create ci |
    tail -n1`. Only a hash of it is stored.
    """
    with open_engine(database, create=True) as engine:
        key = engine.create_api_key(name)
        key_id = engine.verify_api_key(key)
    if as_json:
        echo_json({"id": key_id, "name": name, "key": key})
        return
    click.echo(
        f"Created API key {printable(repr(name))} (id {key_id}). "
        "Keep it secret; it is shown only now:"
    )
    click.echo(key)


@command.command("list")
@database_option
@json_option
def list_(database: str | None, as_json: bool) -> None:
    """Every key, revoked ones included (never their secrets)."""
    with open_engine(database) as engine:
        keys = engine.list_api_keys()
    if as_json:
        echo_json(
            [
                {"id": k.id, "name": k.name, "created_at": k.created_at, "revoked_at": k.revoked_at}
                for k in keys
            ]
        )
        return
    if not keys:
        click.echo(
            f"No API keys in {engine.console.where}: `tickwork apikey create NAME` makes one."
        )
        return
    print_table(
        ["id", "name", "created (UTC)", "revoked (UTC)"],
        [(k.id, k.name, _when(k.created_at), _when(k.revoked_at)) for k in keys],
    )


@command.command("revoke")
@click.argument("name_or_id")
@database_option
def revoke(name_or_id: str, database: str | None) -> None:
    """Revoke the live key with this name or id: requests with it are refused at once."""
    with open_engine(database) as engine:
        if not engine.revoke_api_key(name_or_id):
            fail(not_found("live API key", name_or_id, engine.console.where), code=3)
    click.echo(f"{printable(name_or_id)}: revoked")
