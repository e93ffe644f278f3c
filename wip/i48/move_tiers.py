"""Move tickwork's flat private modules into tier folders and rewrite every reference.

Usage: python move_tiers.py REPO   (run at the repo root's parent or anywhere)
Fails loudly if a top-level private module is not placed in TIERS or KEEP.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

TIERS: dict[str, list[str]] = {
    "_values": [
        "_records", "_events", "_event_flow", "_retry", "_business_days", "_holidays",
        "_cron_walk", "_ids", "_durations", "_models", "_buckets", "_clock", "_logs",
        "_tracebacks", "_hints", "_wire_values", "_checkpoints", "_checks", "_urls",
        "_infos", "_choices", "_wire_shapes",
    ],
    "_rules": [
        "_planning", "_policy", "_preview", "_spec", "_retention", "_liveness",
        "_calendars", "_occurrences", "_registry",
    ],
    "_runtime": ["_runtime", "_executor", "_context", "_hooks"],
    "_services": [
        "_runs", "_scheduling", "_worker", "_pruning", "_event_ops", "_calendar_ops",
        "_calendar_days", "_calendar_wait", "_heartbeat", "_deadlines", "_firing",
        "_console", "_apikeys",
    ],
    "_edge": [
        "_async_api", "_declared", "_handle", "_wire", "_event_wire",
        "_calendar_wire", "_twins",
    ],
}
#: top-level private modules that stay where they are
KEEP = {"_engine", "_client", "_store"}
#: a leaf name other than the module's name without its underscore
LEAF = {"_runtime": "core"}

DOCS = {
    "_values": "Values: frozen records, durations, ids, the clock; they import only each other.",
    "_rules": "Pure rules: decisions over plain values, no I/O; they import only values.",
    "_runtime": "The runtime: the parts one engine shares, one attempt of a run, its context.",
    "_services": "Services: each concept's operations over the runtime and the store.",
    "_edge": "The edge: what the entry points (Engine, Client) share or hand work to.",
}


def main(repo: Path) -> None:
    pkg = repo / "src" / "tickwork"
    present = {p.stem for p in pkg.glob("_*.py") if p.stem not in ("__init__", "__main__")}
    present |= {p.name for p in pkg.glob("_*") if p.is_dir() and p.name != "__pycache__"}
    moves: dict[str, str] = {}  # old dotted -> new dotted (without "tickwork.")
    for tier, mods in TIERS.items():
        for m in mods:
            if m in present:
                moves[m] = f"{tier}.{LEAF.get(m, m.lstrip('_'))}"
    unplaced = present - set(moves) - KEEP - set(TIERS)
    if unplaced:
        sys.exit(f"not placed: {sorted(unplaced)}")
    # old file -> new file, and each new file's old module (for relative imports)
    old_of: dict[Path, str] = {}
    for p in pkg.rglob("*.py"):
        old_of[p] = module_of(p, pkg)
    tmp_runtime = None
    if "_runtime" in moves:  # the module _runtime.py and the folder _runtime/ collide
        tmp_runtime = pkg / "_runtime_core_tmp.py"
        git(repo, "mv", str(pkg / "_runtime.py"), str(tmp_runtime))
    for tier in TIERS:
        (pkg / tier).mkdir(exist_ok=True)
        init = pkg / tier / "__init__.py"
        init.write_text(f'"""{DOCS[tier]}"""\n')
        git(repo, "add", str(init))
    new_old: dict[Path, str] = {}
    for p, old in old_of.items():
        name = old.split(".")[1] if old.count(".") >= 1 else None
        src = p
        if name == "_runtime" and old == "tickwork._runtime":
            src = tmp_runtime
        if old.count(".") == 1 and name in moves:
            dest = pkg / (moves[name].replace(".", "/") + ".py")
            git(repo, "mv", str(src), str(dest))
            new_old[dest] = old
        else:
            new_old[p] = old
    for tier in TIERS:
        new_old[pkg / tier / "__init__.py"] = f"tickwork.{tier}"
    full = {f"tickwork.{k}": f"tickwork.{v}" for k, v in moves.items()}
    for p, old in new_old.items():
        new_mod = module_of(p, pkg)
        text = p.read_text()
        out = rewrite_relative(text, old, new_mod, p.name == "__init__.py", full, p)
        out = rewrite_absolute(out, full)
        out = rewrite_paths(out, moves)
        if out != text:
            p.write_text(out)
    for folder in ("tests", "bench", "examples", "docs"):
        for p in (repo / folder).rglob("*"):
            if p.suffix in (".py", ".md", ".toml", ".txt") and p.is_file():
                rewrite_file(p, full, moves)
    for p in [repo / "README.md", repo / "pyproject.toml", repo / "Makefile",
              *sorted((repo / ".ci").glob("*"))]:
        if p.is_file():
            rewrite_file(p, full, moves)
    for p in pkg.rglob("*"):
        if p.suffix in (".html", ".md", ".toml") and p.is_file():
            rewrite_file(p, full, moves)
    tb = pkg / "_values" / "tracebacks.py"
    if tb.exists():  # its folder is now a tier below the package: fold the whole package
        t = tb.read_text()
        old = "TICKWORK_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep"
        new = "TICKWORK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep"
        assert old in t, "tracebacks: TICKWORK_DIR line changed"
        tb.write_text(t.replace(old, new))
    print(f"moved {len(moves)} modules")


def module_of(p: Path, pkg: Path) -> str:
    parts = list(p.relative_to(pkg.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def rewrite_file(p: Path, full: dict[str, str], moves: dict[str, str]) -> None:
    text = p.read_text()
    out = rewrite_from_tickwork_import(text, full)
    out = rewrite_absolute(out, full)
    out = rewrite_paths(out, moves)
    if out != text:
        p.write_text(out)


FROM_RE = re.compile(r"^(\s*)from (\.+)([\w.]*) import (.+)$", re.M)


def rewrite_relative(
    text: str, old: str, new: str, is_init: bool, full: dict[str, str], path: Path
) -> str:
    old_pkg = old.split(".") if is_init else old.split(".")[:-1]
    new_pkg = new.split(".") if is_init else new.split(".")[:-1]

    def repl(m: re.Match[str]) -> str:
        indent, dots, rest, names = m.groups()
        base = old_pkg[: len(old_pkg) - (len(dots) - 1)]
        target = ".".join(base + ([rest] if rest else []))
        if not rest:
            # "from . import _clock": the names may be modules that moved
            moved = [n for n in split_names(names) if f"{target}.{n.split(' as ')[0]}" in full]
            if moved:
                if "(" in names:
                    sys.exit(f"{path}: multi-line 'from . import' of moved modules: {m.group(0)}")
                lines = []
                kept = [n for n in split_names(names) if n not in moved]
                if kept:
                    lines.append(f"{indent}from {relative(new_pkg, target)} import {', '.join(kept)}")
                for n in moved:
                    orig, _, alias = n.partition(" as ")
                    dest = full[f"{target}.{orig}"]
                    parent, leaf = dest.rsplit(".", 1)
                    lines.append(
                        f"{indent}from {relative(new_pkg, parent)} import {leaf} as {alias or orig}"
                    )
                return "\n".join(lines)
        target = map_module(target, full)
        return f"{indent}from {relative(new_pkg, target)} import {names}"

    return FROM_RE.sub(repl, text)


def split_names(names: str) -> list[str]:
    names = names.strip().strip("()").strip()
    return [n.strip() for n in names.split(",") if n.strip()]


def map_module(target: str, full: dict[str, str]) -> str:
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        if head in full:
            return ".".join([full[head], *parts[i:]])
    return target


def relative(from_pkg: list[str], target: str) -> str:
    t = target.split(".")
    common = 0
    while common < min(len(from_pkg), len(t)) and from_pkg[common] == t[common]:
        common += 1
    dots = "." * (len(from_pkg) - common + 1)
    return dots + ".".join(t[common:])


ABS_RE = re.compile(r"\btickwork\.(_[a-z_]+)\b(?!\.py)")


def rewrite_absolute(text: str, full: dict[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        key = f"tickwork.{m.group(1)}"
        return full.get(key, m.group(0))

    return ABS_RE.sub(repl, text)


FROM_TW_RE = re.compile(r"^(\s*)from tickwork import ([\w, ]+?)\s*$", re.M)


def rewrite_from_tickwork_import(text: str, full: dict[str, str]) -> str:
    """``from tickwork import Engine, _clock``: the moved modules get lines of their own."""

    def repl(m: re.Match[str]) -> str:
        indent, names = m.groups()
        kept, lines = [], []
        for n in split_names(names):
            name, _, alias = n.partition(" as ")
            dest = full.get(f"tickwork.{name.strip()}")
            if dest is None:
                kept.append(n)
                continue
            parent, leaf = dest.rsplit(".", 1)
            lines.append(f"{indent}from {parent} import {leaf} as {alias.strip() or name.strip()}")
        if not lines:
            return m.group(0)
        if kept:
            lines.insert(0, f"{indent}from tickwork import {', '.join(kept)}")
        return "\n".join(lines)

    return FROM_TW_RE.sub(repl, text)


PATH_RE = re.compile(r"(?<![\w/])((?:src/)?(?:tickwork/)?)(_[a-z_]+)\.py\b")


def rewrite_paths(text: str, moves: dict[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        prefix, name = m.groups()
        if name not in moves:
            return m.group(0)
        return f"{prefix}{moves[name].replace('.', '/')}.py"

    return PATH_RE.sub(repl, text)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
