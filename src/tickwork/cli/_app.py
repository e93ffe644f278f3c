"""Finding the user's Engine from ``module:attribute`` or ``path/to/file.py:attribute``."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import click

from .._engine import Engine

__all__ = ["load_engine"]


def load_engine(spec: str) -> Engine:
    """Import the engine named by ``spec``; ``click.BadParameter`` when it cannot be found."""
    target, _, attribute = spec.rpartition(":")
    if not target or not attribute:
        raise click.BadParameter(f"{spec!r}: expected module:engine or path/to/app.py:engine")
    try:
        module = _import(target)
    except (ImportError, OSError) as exc:
        raise click.BadParameter(f"cannot import {target!r}: {exc}") from exc
    engine = getattr(module, attribute, None)
    if not isinstance(engine, Engine):
        raise click.BadParameter(f"{target!r} has no tickwork Engine named {attribute!r}")
    return engine


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
