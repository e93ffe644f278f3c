"""``tickwork serve APP``: the JSON API, metrics and dashboard of APP's engine (uvicorn)."""

from __future__ import annotations

import contextlib
from typing import Any

import click

from ._logging import configure as configure_logging
from ._logging import log_format_option, log_level_option
from ._options import app_engine, database_option
from ._render import fail

__all__ = ["command"]

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def _run(app: Any, *, host: str, port: int, log_level: str) -> None:
    """Serve ``app`` until SIGINT or SIGTERM (uvicorn handles both)."""
    import uvicorn

    # log_config=None: uvicorn's records go to the handler ``tickwork serve`` set up
    # (readable or JSON lines), not to uvicorn's own.
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level.lower(),
        log_config=None,
        server_header=False,
    )


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
@log_level_option
@log_format_option
@database_option
def command(
    app: str,
    host: str,
    port: int,
    worker: bool,
    threads: int,
    no_dashboard: bool,
    log_level: str,
    log_format: str,
    database: str | None,
) -> None:
    """Serve the HTTP API, /metrics and the dashboard of APP (module:engine or
    path/to/app.py:engine) on http://HOST:PORT.

    Every route but /healthz needs an API key: create one with `tickwork apikey create`.
    The database is APP's engine's (--database when APP builds it with Engine()). With
    --worker, the same process also fires schedules and executes runs, and drains them
    when it stops.
    """
    configure_logging(log_level, log_format)
    try:
        from ..server import create_app
    except ImportError as exc:
        fail(f"the server needs the server extra: pip install 'tickwork[server]' ({exc})", 2)
    with app_engine(app, database) as engine:
        engine.migrate()  # an unreachable database is said now, not at the first request
        if host not in _LOOPBACK:
            click.echo(f"note: listening on {host}: reachable from other machines", err=True)
        server_app = create_app(engine, dashboard=not no_dashboard)
        running = engine.worker(threads=threads) if worker else contextlib.nullcontext()
        with running:
            _run(server_app, host=host, port=port, log_level=log_level)
