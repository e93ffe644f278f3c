"""Database URLs read without opening them: a SQLite URL's parts, the URL as messages
show it, and whether a SQLite file a command only looks at exists.

Apart from the store so that ``Engine`` (which must not reach into the store) and the
store's own dialects read a URL the same way.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

from ..errors import ConfigError, StoreUnreachable

__all__ = ["parse_sqlite_url", "require_existing", "shown_url"]

_SYNCHRONOUS = {"off", "normal", "full", "extra"}


def parse_sqlite_url(url: str) -> tuple[Path | None, str, float]:
    """``sqlite:///relative.db`` or ``sqlite:////abs/path.db`` -> (path, synchronous, timeout);
    the path is None for ``sqlite://`` and ``sqlite:///:memory:`` (in memory).

    ``?synchronous=full`` makes every commit survive a power cut (WAL with ``normal``, the
    default, survives any process crash, which is what tickwork promises).
    """
    parts = urlsplit(url)
    if parts.scheme != "sqlite" or parts.netloc or not parts.path.startswith("/"):
        if parts.scheme == "sqlite" and not parts.netloc and not parts.path:
            return None, "normal", 30.0  # sqlite://, as SQLAlchemy reads it: in memory
        raise ConfigError(
            f"Bad SQLite URL {url!r}: expected sqlite:///path/to/file.db "
            "(or sqlite:// for a private database in memory)"
        )
    path = parts.path[1:]
    if path == ":memory:":
        return None, "normal", 30.0
    if not path:
        raise ConfigError(f"Bad SQLite URL {url!r}: name a file, or sqlite:// for memory")
    query = parse_qs(parts.query)
    unknown = set(query) - {"synchronous", "timeout"}
    if unknown:
        raise ConfigError(f"Bad SQLite URL {url!r}: unknown option(s) {sorted(unknown)}")
    synchronous = query.get("synchronous", ["normal"])[-1].lower()
    if synchronous not in _SYNCHRONOUS:
        raise ConfigError(f"Bad SQLite URL {url!r}: synchronous must be one of {_SYNCHRONOUS}")
    try:
        timeout = float(query.get("timeout", ["30"])[-1])
    except ValueError:
        raise ConfigError(f"Bad SQLite URL {url!r}: timeout must be seconds") from None
    return Path(path), synchronous, timeout


def shown_url(url: str) -> str:
    """The URL as messages name the database: as given, without its password."""
    parts = urlsplit(url)
    if parts.password is None and "password=" not in parts.query:
        return url
    if parts.password is not None:
        credentials, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{credentials.partition(':')[0]}:***@{host}")
    query = "&".join(
        "password=***" if pair.startswith("password=") else pair for pair in parts.query.split("&")
    )
    return urlunsplit(parts._replace(query=query))


def require_existing(url: str) -> None:
    """``StoreUnreachable`` when ``url`` names a SQLite file that does not exist (opening
    it would create an empty database); nothing for any other URL."""
    if urlsplit(url).scheme != "sqlite":
        return
    path = parse_sqlite_url(url)[0]
    if path is None or path.exists():
        return
    full = path.absolute()
    if not full.parent.is_dir():  # as opening it would say
        raise StoreUnreachable(
            f"SQLite file {str(path)!r}", f"its folder {str(full.parent)!r} does not exist"
        )
    raise StoreUnreachable(f"SQLite file {str(full)!r}", "no such file")
