"""Modules of this folder that worker processes import as files, loaded by the tests too.

Loaded by path, so that it does not depend on how pytest arranges ``sys.path``, under the
name the app files import them by (a neighbour of the app file in the worker).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).parent


def load_neighbour(name: str) -> ModuleType:
    """The module ``name``.py of this folder, loaded once."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
