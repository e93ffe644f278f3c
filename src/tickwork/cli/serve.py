"""``tickwork serve APP``: the JSON API, metrics and dashboard of APP's engine (uvicorn)."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import click

from ._options import app_engine, database_option
from ._render import fail

__all__ = ["command"]

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def _run(app: Any, *, host: str, port: int, log_level: str) -> None:
    """Serve ``app`` until SIGINT or SIGTERM (uvicorn handles both)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level=log_level.lower(), server_header=False)


@click.command("serve")
@click.argument("app")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; only this machine can connect unless told otherwise.",
)
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535))
@click.option("--worker", is_flag=True, help="Also run a worker in this process.")
@click.option("--threads", default=8, show_default=True, help="Runs the --worker executes at once.")
@click.option("--no-dashboard", is_flag=True, help="Serve the API only, without the dashboard.")
@click.option(
    "--log-level",
    default="INFO",
    show_default=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
)
@database_option
def command(
    app: str,
    host: str,
    port: int,
    worker: bool,
    threads: int,
    no_dashboard: bool,
    log_level: str,
    database: str | None,
) -> None:
    """Serve the HTTP API, /metrics and the dashboard of APP (module:engine or
    path/to/app.py:engine) on http://HOST:PORT.

    Every route but /healthz needs an API key: create one with `tickwork apikey create`.
    The database is APP's engine's (--database when APP builds it with Engine()). With
    --worker, the same process also fires schedules and executes runs, and drains them
    when it stops.
    """
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")
    try:
        from ..server import create_app
    except ImportError as exc:
        fail(f"the server needs the server extra: pip install 'tickwork[server]' ({exc})", 2)
    with app_engine(app, database) as engine:
        if host not in _LOOPBACK:
            click.echo(f"note: listening on {host}: reachable from other machines", err=True)
        server_app = create_app(engine, dashboard=not no_dashboard)
        running = engine.worker(threads=threads) if worker else contextlib.nullcontext()
        with running:
            _run(server_app, host=host, port=port, log_level=log_level)
