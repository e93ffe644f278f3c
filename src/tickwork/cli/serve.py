"""``tickwork serve APP``: the JSON API, metrics and dashboard of APP's engine (uvicorn).

The address is bound here, before the engine's worker starts and before uvicorn runs:
a port in use is one ``error:`` line and exit 2 (an option the machine refuses), not
uvicorn's log and its startup-failure code 3 (ours: "no such schedule, run or API key").
The app's declared schedules and subscriptions are registered at start, as a worker
does, firing nothing: a new user who serves the quick start's app and lists the
schedules sees them (docs/behaviour.md, "Serving").
"""

from __future__ import annotations

import contextlib
import errno
import logging
import signal
import socket
import threading
from collections.abc import Iterator
from typing import Any

import click

from ._exit import EXIT_INVALID
from ._logging import configure as configure_logging
from ._logging import log_format_option, log_level_option
from ._options import app_engine, database_option
from ._render import fail

__all__ = ["command"]

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_LOG = logging.getLogger("tickwork.serve")


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, as uvicorn would bind it; a refusal (a port in use,
    a privileged port, an address not of this machine) is ``error:`` and exit 2."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: restarts
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        fail(f"cannot listen on {where}: {reason or exc} (--host/--port)", EXIT_INVALID)
    return sock


def _run(
    app: Any, *, sock: socket.socket, host: str, port: int, log_level: str, sigterm: _Sigterm
) -> None:
    """Serve ``app`` on ``sock`` until SIGINT or SIGTERM (uvicorn handles both)."""
    import uvicorn

    # log_config=None: uvicorn's records go to the handler ``tickwork serve`` set up
    # (readable or JSON lines), not to uvicorn's own.
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level.lower(),
        log_config=None,
        server_header=False,
    )
    server = sigterm.server = uvicorn.Server(config)
    if sigterm.received:  # before there was a server to stop
        return
    bound = sock.getsockname()[1]  # --port 0: the one the system chose
    _LOG.info("listening on http://%s:%d (Ctrl-C to stop)", host, bound)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises SIGINT again once stopped
        server.run(sockets=[sock])
    if not server.started:  # the app's startup failed: uvicorn logged why
        raise SystemExit(1)


class _Sigterm:
    """A SIGTERM at any instant stops the server, then the ``--worker`` drain, as SIGINT
    does.

    uvicorn handles SIGTERM while it serves, then raises it again once stopped; with the
    default handler that killed the process there (exit 143), before the worker drained
    its runs in flight, and so did a SIGTERM before uvicorn served. This handler takes
    either: it stops the server (``should_exit``, which uvicorn reads at every turn) or
    keeps it from serving. A further SIGTERM during the drain exits at once, as the
    default does (the runs' leases then expire)."""

    def __init__(self) -> None:
        self.received = False
        self.server: Any = None  # uvicorn's Server, once made

    def __call__(self, signum: int, _frame: object) -> None:
        _LOG.info("%s received, draining", signal.Signals(signum).name)
        self.received = True
        if self.server is not None:
            self.server.should_exit = True
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    @contextlib.contextmanager
    def installed(self) -> Iterator[_Sigterm]:
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.signal(signal.SIGTERM, self)
        try:
            yield self
        finally:
            if signal.getsignal(signal.SIGTERM) is self:  # none came
                signal.signal(signal.SIGTERM, previous)


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
    The database is APP's engine's (--database when APP builds it with Engine()). APP's
    declared schedules and subscriptions are registered at start (nothing fires). With
    --worker, the same process also fires schedules and executes runs, and drains them
    when it stops; without it, `tickwork worker APP` does that.
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
        sock = _listen(host, port)
        with contextlib.closing(sock), _Sigterm().installed() as sigterm:
            server_app = create_app(engine, dashboard=not no_dashboard)
            if worker:
                running: contextlib.AbstractContextManager[object] = engine.worker(threads=threads)
            else:
                # What a worker does at its start, so the API lists the declared schedules.
                engine.sync_schedules()
                engine.sync_subscriptions()
                _LOG.info(
                    "no worker in this process: schedules fire and runs execute where "
                    "`tickwork worker` (or `serve --worker`) runs"
                )
                running = contextlib.nullcontext()
            with running:
                _run(
                    server_app, sock=sock, host=host, port=port, log_level=log_level,
                    sigterm=sigterm,
                )  # fmt: skip
