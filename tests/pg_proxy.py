"""A TCP proxy in front of the test PostgreSQL server, which a test can cut off: an
outage for the processes connected through it, and for no one else sharing the server
(stopping the server would break every other suite using it).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit


class Proxy:
    """Forwards connections from a local port to the server. ``cut()`` closes every
    forwarded connection and refuses new ones until ``restore()``."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._listener = socket.create_server(("127.0.0.1", 0))
        user = f"{parts.username}@" if parts.username else ""
        netloc = f"{user}127.0.0.1:{self._listener.getsockname()[1]}"
        self.url = urlunsplit(parts._replace(netloc=netloc))
        self._up = True
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            self._up = False
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self._sockets.clear()

    def restore(self) -> None:
        with self._lock:
            self._up = True

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                up = self._up
            if not up:  # refused: the client sees the connection closed at once
                client.close()
                continue
            try:
                server = socket.create_connection(self._upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.update((client, server))
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            with self._lock:
                self._sockets.discard(source)
                self._sockets.discard(target)


@contextlib.contextmanager
def proxied(url: str) -> Iterator[Proxy]:
    """A ``Proxy`` to the server of ``url`` (its ``url`` names the same database and
    options through the proxy), closed afterwards."""
    proxy = Proxy(url)
    try:
        yield proxy
    finally:
        proxy.close()
