"""``examples/album.py`` does what its docstring says: the cover and every image resized by
a child run each, the album's result in the images' order, no image shrunk twice."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tickwork import RunStatus
from tickwork.testing import engine_for_test

ALBUM = Path(__file__).parents[2] / "examples" / "album.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("album_example", ALBUM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_album_example_resizes_each_image_in_a_child_run_and_joins_them() -> None:
    album = load()
    images = ["a.png", "b.png", "c.png", "d.png", "e.png", "f.png"]
    with engine_for_test(album.engine) as engine:
        handle = engine.start("album", images)
        engine.run_until_idle()
        assert handle.result() == {
            "cover": "a.small.png",
            "thumbs": [image.replace(".png", ".small.png") for image in images[1:]],
        }
        children = engine.list_runs(parent=handle.id)
        assert len(children) == len(images)
        assert {c.status for c in children} == {RunStatus.COMPLETED}
