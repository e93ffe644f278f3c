"""The README runs as written: every ```python and ```sh block of README.md is run, in
order, in one folder, as a reader who follows it from the top would run them; so does
every block of docs/events.md, in a folder of its own. No python block uses a name it
never defines (ruff's F821), which running alone misses in a function never called.

The folder starts as a copy of ``examples/`` and nothing else (so the SQLite default,
``tickwork.db``, is the quick start's database there), with no ``$TICKWORK_*`` set. Each
block runs as a fresh process (``python block.py``, or ``bash`` with ``set -euo
pipefail``). Afterwards the quick start's database holds the example's own schedule only:
a block that writes keeps to a database of its own.

How a block runs is said by an HTML comment on the line before its fence, if any:

- none: the block runs as it is;
- ``<!-- continues the block above -->`` (python): the previous python block runs first,
  in the same process (the two joined), as a reader who pastes them in order would;
- ``<!-- run until interrupted: SIGINT after N s -->`` (sh): after N seconds the block's
  processes get SIGINT, as from Ctrl-C; the block must then end with exit code 0 (a
  worker or a server that drains and stops);
- ``<!-- run with a server: COMMAND -->``: COMMAND (``tickwork serve APP ...``) serves
  from the same folder while the block runs, with a new API key (created in the
  database COMMAND names with ``--database``, if it does) in ``$TICKWORK_API_KEY``;
- ``<!-- not run: REASON -->``: skipped, saying REASON (a server or a PostgreSQL of the
  reader's, an install).

Any other comment there fails the test, so a misspelt marker cannot skip a block. The
server's default port, 8787, is replaced by a free port in every block (and ``tickwork
serve`` is given it), so that a server already on 8787 is no matter.
A block fails when it exits non-zero or prints an API error body (``{"error": ...``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.pg import base_url

from tickwork import Overlap
from tickwork.cli import main
from tickwork.server.openapi import openapi_document

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: the documents whose blocks run as written, each in a folder of its own
DOCUMENTS = ("README.md", "docs/events.md")
BIN = Path(sys.executable).parent  # the install's python and tickwork
TIMEOUT = 180  # seconds a block may take: reached only when something hangs

_FENCE = re.compile(r"^```(\S*)\s*$")
_COMMENT = re.compile(r"^<!--\s*(.*?)\s*-->$")
_MARKERS = {
    "continues": re.compile(r"^continues the block above$"),
    "interrupt": re.compile(r"^run until interrupted: SIGINT after (\d+) s$"),
    "server": re.compile(r"^run with a server: (tickwork serve .+)$"),
    "skip": re.compile(r"^not run: (.+)$"),
}


@dataclass(frozen=True)
class Block:
    document: str  # its path from the repository's root
    language: str
    line: int  # of the opening fence, counted from 1
    text: str
    marker: str | None  # the comment before the fence, if any

    @property
    def name(self) -> str:
        return f"{self.language}-line{self.line}"

    @property
    def where(self) -> str:
        return f"{self.document} line {self.line}"

    def directive(self) -> tuple[str | None, re.Match[str] | None]:
        """(kind, match) of the marker; ``ValueError`` for a comment that is no marker."""
        if self.marker is None:
            return None, None
        for kind, pattern in _MARKERS.items():
            match = pattern.match(self.marker)
            if match:
                return kind, match
        raise ValueError(f"{self.where}: unknown marker <!-- {self.marker} -->")


def document_blocks(document: str) -> list[Block]:
    """Every fenced block of ``document`` with its language and the marker before it."""
    text = (ROOT / document).read_text("utf-8")
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        start = index
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
        before = lines[start - 1].strip() if start > 0 else ""
        comment = _COMMENT.match(before)
        blocks.append(
            Block(
                document=document,
                language=fence.group(1),
                line=start + 1,
                text="\n".join(lines[start + 1 : end]) + "\n",
                marker=comment.group(1) if comment else None,
            )
        )
        index = end + 1
    return blocks


BLOCKS = document_blocks("README.md")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKWORK_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("VIRTUAL_ENV", None)
    return env


@dataclass
class Folder:
    """A reader's fresh folder: a copy of ``examples/``, nothing else."""

    path: Path
    env: dict[str, str]
    port: int

    def source(self, block: Block) -> str:
        text = block.text.replace("8787", str(self.port))
        return text.replace("tickwork serve ", f"tickwork serve --port {self.port} ")


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return Folder(tmp_path, _environment(), _free_port())


def _database_option(command: str) -> list[str]:
    """``--database URL`` of a ``tickwork serve`` command line, if it has one."""
    words = shlex.split(command)
    if "--database" in words:
        return ["--database", words[words.index("--database") + 1]]
    return []


def _run(
    command: list[str], folder: Folder, *, interrupt_after: float | None = None
) -> tuple[int, str, str]:
    """Run ``command`` in its own process group (its background children too, which are
    ended afterwards); output goes to files, which a background child may keep open."""
    out_path, err_path = folder.path / "stdout.txt", folder.path / "stderr.txt"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        process = subprocess.Popen(
            command,
            cwd=folder.path,
            env=folder.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            if interrupt_after is not None:
                try:
                    process.wait(timeout=interrupt_after)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGINT)
            code = process.wait(timeout=TIMEOUT)
        finally:
            _end_group(process)
    return code, out_path.read_text("utf-8"), err_path.read_text("utf-8")


def _end_group(process: subprocess.Popen[bytes]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def _server(command: str, folder: Folder) -> Iterator[None]:
    """``command`` serving from ``folder`` on its port, with an API key in the env."""
    created = subprocess.run(
        [
            BIN / "tickwork",
            "apikey",
            "create",
            f"readme-{uuid.uuid4().hex[:6]}",
            *_database_option(command),
        ],
        cwd=folder.path,
        env=folder.env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    folder.env["TICKWORK_API_KEY"] = created.stdout.splitlines()[-1]
    log = (folder.path / "server.txt").open("wb")
    process = subprocess.Popen(
        [*shlex.split(command), "--port", str(folder.port)],
        cwd=folder.path,
        env=folder.env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{folder.port}/healthz"):
                    break
            except (urllib.error.URLError, ConnectionError):
                output = (folder.path / "server.txt").read_text("utf-8")
                assert process.poll() is None, f"{command} ended:\n{output}"
                assert time.monotonic() < deadline, f"{command} never answered:\n{output}"
                time.sleep(0.1)
        yield
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        finally:
            _end_group(process)
            log.close()


def _python_chain(block: Block) -> list[Block]:
    """The block, after the blocks it continues (each marked so), in order."""
    chain = [block]
    blocks = document_blocks(block.document)
    while chain[0].directive()[0] == "continues":
        earlier = [b for b in blocks if b.language == "python" and b.line < chain[0].line]
        assert earlier, f"{chain[0].where}: no python block above to continue"
        chain.insert(0, earlier[-1])
    return chain


def _python_source(block: Block, folder: Folder) -> str:
    return "\n".join(folder.source(b) for b in _python_chain(block))


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_block_is_python_or_sh_with_a_known_marker(document: str) -> None:
    blocks = document_blocks(document)
    assert blocks, f"{document} has no code blocks?"
    for block in blocks:
        assert block.language in {"python", "sh"}, (
            f"{block.where}: a ```{block.language} block; say python or sh, "
            "so that this test runs it"
        )
        kind, _ = block.directive()  # ValueError for an unknown marker
        if kind == "continues":
            assert block.language == "python", f"{block.where}: continues is python's"
        if kind == "interrupt":
            assert block.language == "sh", f"{block.where}: interrupt is for sh"


@pytest.mark.parametrize("document", DOCUMENTS)
def test_no_python_block_uses_a_name_it_never_defines(document: str, tmp_path: Path) -> None:
    """A reader pastes a block (with those it continues) and it runs: a name used inside a
    workflow that no run of the block reaches (``send_welcome``) is found all the same."""
    for block in document_blocks(document):
        if block.language != "python" or block.directive()[0] == "skip":
            continue
        source = "\n".join(b.text for b in _python_chain(block))
        script = tmp_path / "block.py"
        script.write_text(source, "utf-8")
        checked = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F821",
             "--output-format", "concise", str(script)],
            capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip
        assert checked.returncode == 0, f"{block.where}:\n{source}\n{checked.stdout}"


def test_the_first_two_commands_install_and_run_the_example_worker_then_the_tests() -> None:
    """The quick start stays what a newcomer needs: install and run the example's worker on
    the SQLite default; then run the tests, with the very command CI runs."""
    install, tests = BLOCKS[0], BLOCKS[1]
    assert "pip install -e '.[dev]'" in install.text
    assert "tickwork worker examples/hello.py:engine" in install.text
    assert "--database" not in install.text and "TICKWORK_DATABASE_URL" not in install.text
    assert tests.text.strip().startswith(".venv/bin/python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests.text.strip() in [line.strip() for line in ci], ".ci/run runs another command"


def test_the_readme_runs_in_order_in_one_folder(folder: Folder) -> None:
    """Every block not marked "not run", top to bottom in one folder; then the quick
    start's database (the example app's ``tickwork.db``) holds the example's own schedule
    and nothing that a later block registered for its own demonstration."""
    ran = [block for block in BLOCKS if block.directive()[0] != "skip"]
    assert ran, "README.md has no block to run?"
    for block in ran:
        _run_block(block, folder)
    database = folder.path / "tickwork.db"
    assert database.exists(), "no block ran the quick start's example app"
    with sqlite3.connect(database) as conn:
        keys = {key for (key,) in conn.execute("SELECT key FROM tickwork_schedules")}
    assert keys == {"heartbeat"}, f"the quick start's database holds {sorted(keys)}"


def test_docs_events_runs_in_order_in_one_folder(folder: Folder) -> None:
    """docs/events.md's blocks not marked "not run", top to bottom in a folder of their
    own (its opening example's SQLite default, ``tickwork.db``, is that folder's)."""
    ran = [b for b in document_blocks("docs/events.md") if b.directive()[0] != "skip"]
    assert ran, "docs/events.md has no block to run?"
    for block in ran:
        _run_block(block, folder)


def _run_block(block: Block, folder: Folder) -> None:
    kind, match = block.directive()
    if block.language == "python":
        script = folder.path / "block.py"
        script.write_text(_python_source(block, folder), "utf-8")
        command = [sys.executable, str(script)]
    else:
        script = folder.path / "block.sh"
        script.write_text("set -euo pipefail\n" + folder.source(block), "utf-8")
        command = ["bash", str(script)]
    with _server(match.group(1), folder) if kind == "server" and match else _nothing():
        after = float(match.group(1)) if kind == "interrupt" and match else None
        code, out, err = _run(command, folder, interrupt_after=after)
    where = f"{block.where}:\n{script.read_text('utf-8')}\n--- stdout\n{out}"
    assert code == 0, f"{where}\n--- stderr\n{err}\nexit code {code}"
    assert '{"error"' not in out, where


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def test_the_postgresql_schema_tip_creates_the_schema_then_migrates_into_it() -> None:
    """The README's two steps (CREATE SCHEMA, then the URL's search_path) work as said,
    on a schema of the test database named like the README's but unique to this test;
    without the first step, migrating fails naming the missing schema (issue 28; the
    README's quote of PostgreSQL's own words is for its rewrite to update)."""
    import psycopg

    url = base_url()
    (block,) = [b for b in BLOCKS if "CREATE SCHEMA" in b.text]
    create = re.search(r"-c '(CREATE SCHEMA [^']*)'", block.text)
    options = re.search(r"\?(options=-csearch_path%3Dtickwork)'", block.text)
    assert create and options, block.text
    schema = f"tickwork_readme_{uuid.uuid4().hex[:8]}"
    separator = "&" if "?" in url else "?"
    schema_url = f"{url}{separator}{options.group(1).replace('tickwork', schema)}"

    missing = CliRunner().invoke(main, ["db", "upgrade", "--database", schema_url])
    assert missing.exit_code == 4  # as an unreachable database, naming the schema
    assert f"no schema of its search_path ({schema}) exists" in missing.output
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(create.group(1).replace("tickwork", schema))  # type: ignore[arg-type]
        upgraded = CliRunner().invoke(main, ["db", "upgrade", "--database", schema_url])
        assert upgraded.exit_code == 0, upgraded.output
        with psycopg.connect(url) as conn:
            tables = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            ).fetchall()
        assert ("tickwork_runs",) in tables
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # type: ignore[arg-type]


def test_the_api_table_names_every_query_parameter_of_the_api() -> None:
    """Each GET route's query parameters (from the OpenAPI document) are in its row of the
    README's route table: ``before`` of ``GET /api/v1/runs`` with the others."""
    rows = [line for line in README.read_text("utf-8").splitlines() if line.startswith("| `")]
    for path, operations in openapi_document()["paths"].items():
        get = operations.get("get")
        if not isinstance(get, dict):
            continue
        names = [p["name"] for p in get.get("parameters", []) if p.get("in") == "query"]
        if not names:
            continue
        braces = re.compile(r"\{[^}]*\}")  # {id} in the README is {run_id} in the API
        route = re.compile(re.escape(braces.sub("{}", f"GET {path}")) + "[`?]")
        (row,) = [r for r in rows if route.search(braces.sub("{}", r))]
        missing = [name for name in names if f"{name}=" not in row]
        assert not missing, f"README's row for GET {path} lacks {missing}: {row}"
    runs_row = next(r for r in rows if "GET /api/v1/runs?" in r)
    assert "next_before" in runs_row


def test_the_readme_overlap_bullet_names_every_overlap_policy() -> None:
    """A reader choosing ``overlap=`` sees every value there is (it lacked buffer_all)."""
    (bullet,) = [
        b for b in README.read_text("utf-8").split("\n- ") if b.startswith('`overlap="allow"`')
    ]
    missing = [o.value for o in Overlap if f'"{o.value}"' not in bullet]
    assert not missing, f"README's overlap bullet lacks {missing}"


@pytest.mark.parametrize("document", ["README.md", "docs/behaviour.md"])
def test_the_user_documents_refer_only_to_documents_the_reader_has(document: str) -> None:
    text = (ROOT / document).read_text("utf-8")
    for phrase in ("DESIGN.md", "§", "issues show", "session of", "the brief"):
        assert phrase not in text, f"{document} mentions {phrase!r}"
    assert not re.search(r"\bissue \d+", text), f"{document} cites an issue"
    for target in re.findall(r"\]\(([^)#:]+)\)", text):  # relative links: files in the repo
        assert (ROOT / Path(document).parent / target).exists(), f"{document} links {target}"
    for named in re.findall(r"`((?:docs|bench|examples|tests)/[\w./-]+)`", text):
        assert (ROOT / named).exists(), f"{document} names {named}, which is not there"
