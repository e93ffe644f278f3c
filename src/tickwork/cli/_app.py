"""Finding the user's Engine from ``module:attribute`` or ``path/to/file.py:attribute``.

``--database`` reaches an app through the environment: while the app is imported,
``$TICKWORK_DATABASE_URL`` is the URL given, which an app's ``Engine()`` reads. An app
whose engine names a database of its own (``Engine("sqlite:///app.db")``) is refused with
``--database``, rather than the option being silently ignored.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from .._engine import Engine
from .._values.hints import close_names, did_you_mean
from ..errors import StoreError, TickworkError

__all__ = ["load_engine"]

_ENV = "TICKWORK_DATABASE_URL"


def load_engine(spec: str, database: str | None = None) -> Engine:
    """Import the engine named by ``spec`` (on ``database`` when given);
    ``click.BadParameter`` when it cannot be found, or is bound to another database."""
    target, _, attribute = spec.rpartition(":")
    if not target or not attribute:
        raise click.BadParameter(f"{spec!r}: expected module:engine or path/to/app.py:engine")
    try:
        with _database_env(database):
            module = _import(target)
    except (ImportError, OSError) as exc:
        raise click.BadParameter(f"cannot import {target!r}: {exc}") from exc
    except StoreError:
        raise  # the app is fine, its database is not: said as such (``_exit``)
    except TickworkError as exc:  # the app's own engine refused something at import
        raise click.BadParameter(f"cannot import {target!r}: {exc}") from exc
    engine = getattr(module, attribute, None)
    if not isinstance(engine, Engine):
        engines = [name for name, value in vars(module).items() if isinstance(value, Engine)]
        hint = did_you_mean(close_names(attribute, engines) or engines[:1])
        raise click.BadParameter(
            f"{target!r} has no tickwork Engine named {attribute!r}" + (f"; {hint}" if hint else "")
        )
    if database is not None and engine.url != database:
        engine.close()
        raise click.BadParameter(
            f"{spec}'s engine uses its own database ({engine.url!r}), not --database "
            f"{database!r}: drop --database, or build the engine with Engine() so that it "
            f"takes --database (or ${_ENV})"
        )
    return engine


@contextlib.contextmanager
def _database_env(database: str | None) -> Iterator[None]:
    """``$TICKWORK_DATABASE_URL`` set to ``database`` for the duration (when given)."""
    if database is None:
        yield
        return
    before = os.environ.get(_ENV)
    os.environ[_ENV] = database
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_ENV, None)
        else:
            os.environ[_ENV] = before


def _import(target: str) -> object:
    if target.endswith(".py") or "/" in target:
        path = Path(target).resolve()
        if not path.is_file():
            raise ImportError(f"no file {str(path)!r}")
        # The app's own folder comes first so it can import its neighbours.
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {str(path)!r}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        return module
    if "" not in sys.path:
        sys.path.insert(0, "")  # like `python -m`: modules in the working folder are found
    return importlib.import_module(target)
