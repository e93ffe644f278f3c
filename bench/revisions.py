"""``--against REV``: measure this tree and another revision alike, interleaved.

Both sides are copies made the same way: ``git archive`` of a commit extracted into a
temporary folder. This side's commit is ``git stash create`` (the working tree's tracked
changes, staged or not, on top of HEAD), or HEAD when nothing changed; the other side's is
REV. Every measuring subprocess runs with ``PYTHONPATH=<copy>/src`` (any PYTHONPATH of the
caller's is replaced), so it imports tickwork from the copy, not from the checkout the
bench venv was installed from: each subprocess reports the ``tickwork.__file__`` it
imported, which is checked against its copy (and printed once per side).

Why copies on both sides: running one side from the checkout and the other from a git
worktree once showed a 15 % gap that vanished when both were copies made the same way.

Repetitions are interleaved: every measurement once for each side, then again, the order
of the two sides swapped every repetition (A B, B A, A B, ...), so that a change in the
machine's load, or a cache warmed by the previous trial, falls on both sides alike.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

S = TypeVar("S")

#: a measuring subprocess reports where tickwork came from under keys ending with this
FILE_KEY = "tickwork_file"


def _git(*args: str, cwd: Path) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout.strip()


def repository() -> Path:
    """The root of the checkout this bench script is in."""
    return Path(_git("rev-parse", "--show-toplevel", cwd=Path(__file__).resolve().parent))


def export(root: Path, commit: str, dest: Path) -> None:
    """``git archive commit | tar -x -C dest``: the commit's tracked files, nothing else."""
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "archive", commit], cwd=root, stdout=subprocess.PIPE)
    extract = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=False)
    assert archive.stdout is not None
    archive.stdout.close()
    if archive.wait() != 0 or extract.returncode != 0:
        raise SystemExit(f"could not copy {commit} into {dest}")


@dataclass
class Tree:
    """One side: a copy of a revision's tree."""

    label: str
    commit: str
    root: Path
    shown: set[str] = field(default_factory=set)

    def env(self) -> dict[str, str]:
        """The environment of a measuring subprocess: tickwork from this copy only."""
        return {**os.environ, "PYTHONPATH": str(self.root / "src"), "PYTHONHASHSEED": "0"}

    def check(self, result: dict[str, Any]) -> None:
        """Every ``*tickwork_file`` the subprocess reported is inside this copy; at least
        one is there. Prints each kind (key) the first time it is seen."""
        files = {key: value for key, value in result.items() if key.endswith(FILE_KEY)}
        if not files:
            raise SystemExit(f"{self.label}: the measurement did not report tickwork.__file__")
        for key, value in files.items():
            if not Path(value).resolve().is_relative_to(self.root.resolve()):
                raise SystemExit(f"{self.label}: {key} is {value}, not in the copy {self.root}")
        for key in files.keys() - self.shown:
            self.shown.add(key)
            print(f"  {self.label}: {key} {files[key]}", file=sys.stderr)


@contextlib.contextmanager
def trees(against: str) -> Iterator[tuple[Tree, Tree]]:
    """(this, other): copies of the working tree's tracked files and of ``against``."""
    root = repository()
    other_commit = _git("rev-parse", "--verify", f"{against}^{{commit}}", cwd=root)
    this_commit = _git("stash", "create", cwd=root) or _git("rev-parse", "HEAD", cwd=root)
    untracked = _git("ls-files", "--others", "--exclude-standard", "src", cwd=root)
    if untracked:
        print(f"warning: untracked files under src/ are not in the copy (git add them):\n"
              f"{untracked}", file=sys.stderr)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="tickwork-against-") as tmp:
        this = Tree("this", this_commit, Path(tmp) / "this")
        other = Tree(against, other_commit, Path(tmp) / "other")
        for tree in (this, other):
            export(root, tree.commit, tree.root)
        yield this, other


def describe(this: Tree, other: Tree) -> str:
    """Which commits the two copies hold, for the report's header."""
    return (f"this = working tree as commit {this.commit[:10]} (git stash create, or HEAD), "
            f"{other.label} = {other.commit[:10]}; both copied by git archive, "
            "interleaved (A B, B A, ...)")  # fmt: skip


@dataclass
class Comparison:
    """One figure (e.g. runs/s of one configuration) measured on both sides."""

    name: str
    higher_is_better: bool = True
    this: list[float] = field(default_factory=list)
    other: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Job(Generic[S]):
    """One measurement: ``compared`` ones run once per side and repetition, the others
    (no tickwork in them, e.g. the floor) once per repetition, on this side."""

    spec: S
    compared: bool = True


def interleave(
    jobs: Sequence[Job[S]],
    this: Tree,
    other: Tree,
    repeat: int,
    run: Callable[[S, Tree], dict[str, Any]],
    figures: Callable[[S, dict[str, Any]], dict[str, float | None]],
    lower_is_better: Callable[[str], bool] = lambda _name: False,
) -> list[Comparison]:
    """Run every job ``repeat`` times on both sides, interleaved; the figures, in order.

    ``run(spec, tree)`` measures in a subprocess with ``tree.env()`` and returns its result
    (with its ``*tickwork_file`` keys); ``figures`` names the numbers in a result (None: no
    number, e.g. nothing fired).
    """
    found: dict[str, Comparison] = {}
    for repetition in range(repeat):
        print(f"repetition {repetition + 1}/{repeat} ", end="", file=sys.stderr, flush=True)
        order = (this, other) if repetition % 2 == 0 else (other, this)
        for job in jobs:
            for tree in order if job.compared else (this,):
                result = run(job.spec, tree)
                if job.compared:
                    tree.check(result)
                for name, value in figures(job.spec, result).items():
                    comparison = found.setdefault(
                        name, Comparison(name, higher_is_better=not lower_is_better(name))
                    )
                    if value is not None:
                        (comparison.this if tree is this else comparison.other).append(value)
                print(".", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    return list(found.values())


def number(value: float) -> str:
    """A figure at a useful precision (rates in the thousands, milliseconds, percents)."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def spread(values: list[float]) -> str:
    return f"({number(min(values))}-{number(max(values))})" if values else ""


def noise(values: list[float]) -> float | None:
    """The min-max spread as a share of the median (None below two values)."""
    if len(values) < 2:
        return None
    middle = statistics.median(values)
    return (max(values) - min(values)) / abs(middle) if middle else None


def verdict(comparison: Comparison) -> str:
    """'within noise' when the two sides' min-max ranges overlap; else which is better.
    Needs three values a side at least (a range of one or two says little)."""
    this, other = comparison.this, comparison.other
    if len(this) < 3 or len(other) < 3:
        return ""
    if max(this) >= min(other) and max(other) >= min(this):
        return "within noise"
    this_higher = min(this) > max(other)
    return "better" if this_higher == comparison.higher_is_better else "worse"


def table(comparisons: Sequence[Comparison], other_label: str) -> list[str]:
    """Per figure: this side's median (min-max), the other's, this/other and the noise."""
    width = max([len(c.name) for c in comparisons] + [6])
    header = (
        f"{'figure':<{width}} {'this':>9} {'(min-max)':>17} {other_label[:9]:>9} "
        f"{'(min-max)':>17} {'this/' + other_label[:9]:>15} {'noise':>6}  verdict"
    )
    lines = [header, "-" * len(header)]
    for c in comparisons:
        mine = number(statistics.median(c.this)) if c.this else "-"
        theirs = number(statistics.median(c.other)) if c.other else "-"
        ratio = ""
        if c.this and c.other and statistics.median(c.other):
            ratio = f"{statistics.median(c.this) / statistics.median(c.other):.3f}"
        spreads = [n for n in (noise(c.this), noise(c.other)) if n is not None]
        wobble = f"{100 * max(spreads):.0f}%" if spreads else ""
        lines.append(
            f"{c.name:<{width}} {mine:>9} {spread(c.this):>17} {theirs:>9} "
            f"{spread(c.other):>17} {ratio:>15} {wobble:>6}  {verdict(c)}".rstrip()
        )
    lines.append(
        f"this/{other_label}: the ratio of the medians; noise: the wider min-max spread of the "
        "two sides, as a share of its median; 'within noise': the two ranges overlap."
    )
    if any(not c.higher_is_better for c in comparisons):
        lines.append("Figures marked (lower is better): a ratio below 1 means this is better.")
    return lines
