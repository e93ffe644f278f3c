"""Child runs: an album resized by a run per image, at most 4 at a time, then joined.

    tickwork worker examples/album.py:engine            # in one terminal
    tickwork runs start album --app examples/album.py:engine \
        --input '["a.png", "b.png", "c.png", "d.png", "e.png"]' --wait   # in another

``album`` starts the cover's resize as a child run, maps ``resize`` over the other images
(one child run each, inserted in one transaction, at most 4 runnable at once) and waits
for all of them: its worker is free while it waits, and the last child to end wakes it.
Kill the worker at any point and start it again: no image is resized twice and the album
completes once. ``tickwork runs list --parent <album's run id>`` lists its children.
"""

from __future__ import annotations

from tickwork import Context, Engine

engine = Engine()  # sqlite:///tickwork.db in the current folder, or $TICKWORK_DATABASE_URL


def shrink(image: str) -> str:
    return image.replace(".png", ".small.png")


@engine.workflow("resize")
def resize(ctx: Context, image: str) -> str:
    return ctx.step("shrink", shrink, image)  # stored: never shrunk twice


@engine.workflow("album")
def album(ctx: Context, images: list[str]) -> dict[str, object]:
    cover = ctx.start("resize", images[0], key="cover")  # one child run
    thumbs = ctx.map("resize", images[1:], max_parallel=4)  # one per image, in order
    return {"cover": ctx.wait(cover), "thumbs": thumbs}
