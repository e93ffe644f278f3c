"""Issue 30's proof: a new schedule option is one field of ``ScheduleSpec`` with its bound.

A copy of the package gets one line, a ``colour`` field bounded to 1 to 10 characters, and
nothing else; a script run against the copy registers schedules with it through
``Engine.schedule``, an ``Every`` declaration, the config file, the HTTP API (and its
OpenAPI document) and the ``Client``. Each face takes it, keeps it in the schedule's
definition (a change is a new revision) and refuses a value past its bound, storing
nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import tickwork

SCRIPT = Path(__file__).with_name("new_option_script.py")
ANCHOR = "    pause_after_failures: PauseAfterFailures | None = None\n"
FIELD = "    colour: Annotated[str, Field(min_length=1, max_length=10)] | None = None\n"


def test_a_new_option_is_one_field(tmp_path: Path) -> None:
    package = tmp_path / "copy" / "tickwork"
    shutil.copytree(Path(tickwork.__file__).parent, package)
    spec = package / "_rules/spec.py"
    source = spec.read_text()
    assert source.count(ANCHOR) == 1, "the spec's last field moved: update ANCHOR"
    spec.write_text(source.replace(ANCHOR, ANCHOR + FIELD))

    env = {**os.environ, "PYTHONPATH": str(package.parent)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])

    assert said["tickwork"].startswith(str(package))
    assert said["signature"] is True
    assert said["engine"] == [["red", 1], ["red", 1], ["blue", 2]]
    assert said["engine_refused"].startswith("ConfigError") and "colour" in said["engine_refused"]
    assert said["engine_refused_stored"] is None
    assert said["declared"] == ["green", 1]
    assert said["config"] == ["teal", 1]
    assert said["config_refused"].startswith("ConfigError") and "colour" in said["config_refused"]
    assert said["http"] == [200, ["navy", 1]]
    assert said["http_refused"] == 400 and said["http_refused_stored"] is None
    assert said["openapi"]["anyOf"][0]["maxLength"] == 10
    assert said["client"] == ["plum", 1]
    assert said["client_refused"].startswith("ConfigError") and "colour" in said["client_refused"]
