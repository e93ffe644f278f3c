"""A failed run's traceback, where a person reads it (``tickwork runs show``, the
dashboard's run page, a worker's readable log lines), keeps its indentation, shows the
user's frames and folds tickwork's own into one line; the stored traceback stays whole.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from tests.browser import Browser

from tickwork import Context, Engine, RunStatus
from tickwork.server import create_app

WAIT = 60.0  # seconds: a bound on waiting, never a timing assertion
TICKWORK = Path(sys.executable).parent / "tickwork"


def parse(rows: list[int]) -> list[int]:
    for row in rows:
        if row < 0:
            raise ValueError(f"negative row {row}")
    return rows


def nightly(ctx: Context) -> list[int]:
    return list(ctx.step("parse", parse, [1, -2]))


def failed_run(url: str) -> str:
    """A run of ``nightly`` that failed for good, in the database at ``url``; its id."""
    with Engine(url) as engine:
        engine.workflow("nightly")(nightly)
        run_id = engine.start("nightly").id
        engine.run_until_idle()
        run = engine.get_run(run_id)
        assert run is not None and run.status is RunStatus.FAILED
        assert run.traceback is not None and "_runtime/executor.py" in run.traceback  # kept whole
    return run_id


def assert_folded(text: str, indent: str) -> None:
    """``text`` shows the traceback's user frames at their indentation (under ``indent``)
    and tickwork's frames as one line each run."""
    assert re.search(
        rf'^{indent}  File ".*test_traceback_display.py", line \d+, in nightly$', text, re.M
    )
    assert re.search(rf'^{indent}  File ".*", line \d+, in parse$', text, re.M)
    # Python's own layout: the source line four spaces in, the exception at the margin.
    assert re.search(rf'^{indent}    raise ValueError\(f"negative row {{row}}"\)$', text, re.M)
    assert re.search(rf"^{indent}ValueError: negative row -2$", text, re.M)
    assert re.search(rf"^{indent}  … \d+ frames? in tickwork …$", text, re.M)
    assert "_runtime/executor.py" not in text and "_runtime/context.py" not in text


def test_runs_show_prints_the_traceback_indented_with_tickworks_frames_folded(
    sqlite_url: str,
) -> None:
    """``tickwork runs show`` prints the traceback four spaces in, each line keeping its
    own indentation (it was stripped), tickwork's frames folded."""
    run_id = failed_run(sqlite_url)
    shown = subprocess.run(
        [TICKWORK, "runs", "show", run_id, "--database", sqlite_url],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    traceback = shown.stdout.split("traceback:\n", 1)[1]
    assert_folded(traceback, "    ")
    # The failed try, below the steps: its last frame and its exception, indented too.
    assert re.search(r"^parse, try 1 failed: ValueError: negative row -2$", shown.stdout, re.M)
    assert re.search(r'^      File ".*", line \d+, in parse\n        raise', shown.stdout, re.M)


def test_the_run_page_shows_the_traceback_folded_and_unwrapped(sqlite_url: str) -> None:
    """The dashboard's run page shows the folded traceback, lines at their indentation,
    in a block that never wraps a line (a wrapped line would start at the margin)."""
    run_id = failed_run(sqlite_url)
    with Engine(sqlite_url) as engine, ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        page = browser.get("/run", params={"id": run_id}).text
        css = browser.get("/static/dashboard.css").text
    [traceback] = re.findall(
        r'<details class="traceback"><summary>Traceback</summary><pre>(.*?)</pre>', page, re.S
    )[:1]
    assert_folded(traceback.replace("&#34;", '"'), "")
    assert re.search(r"details\.traceback pre \{[^}]*white-space: pre;", css)


APP = """
from tests.integration.test_traceback_display import nightly
from tickwork import Engine

engine = Engine()
engine.workflow("nightly")(nightly)
"""


def test_a_workers_readable_log_folds_the_failed_runs_traceback(
    tmp_path: Path, sqlite_url: str
) -> None:
    """``tickwork worker``'s "failed" line is followed by the traceback, tickwork's
    frames folded and the user's at their indentation."""
    app = tmp_path / "app.py"
    app.write_text(APP)
    with Engine(sqlite_url) as engine:
        engine.workflow("nightly")(nightly)
        run_id = engine.start("nightly").id
    root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if k != "TICKWORK_DATABASE_URL"}
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    worker = subprocess.Popen(
        [TICKWORK, "worker", f"{app}:engine", "--database", sqlite_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        with Engine(sqlite_url) as engine:
            deadline = time.monotonic() + WAIT
            while (run := engine.get_run(run_id)) and run.status is not RunStatus.FAILED:
                assert worker.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        worker.send_signal(signal.SIGINT)
        output, _ = worker.communicate(timeout=WAIT)
    assert worker.returncode == 0, output
    failed = output.split(f"run {run_id} failed: ValueError: negative row -2\n", 1)[1]
    # Indented under its record (so no line of it can pass for a record of its own).
    assert failed.startswith("  Traceback (most recent call last):\n"), output
    assert_folded(failed, "  ")
