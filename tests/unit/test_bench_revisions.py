"""bench/revisions.py, behind every benchmark's ``--against REV``: each side's subprocesses
import tickwork from that side's copy, and the verdict reads the two sides' ranges."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = "import json, tickwork; print(json.dumps({'tickwork_file': tickwork.__file__}))"


def _revisions() -> ModuleType:
    """bench/revisions.py (bench/ is scripts, not a package)."""
    name = "bench_revisions"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "revisions.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


def _in_git_checkout() -> bool:
    found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True)
    return found.returncode == 0


@pytest.mark.skipif(not _in_git_checkout(), reason="needs the repository's git history")
def test_each_side_imports_tickwork_from_its_own_copy_not_the_checkout() -> None:
    """A subprocess run with a side's environment imports tickwork from that side's copy
    (not from the checkout this test's tickwork is installed from), and the check refuses
    a result that came from anywhere else."""
    revisions = _revisions()
    with revisions.trees("HEAD") as (this, other):
        for tree, elsewhere in ((this, other), (other, this)):
            out = subprocess.run(
                [sys.executable, "-c", PROBE], env=tree.env(), cwd=ROOT,
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            result = json.loads(out.stdout)
            assert Path(result["tickwork_file"]).is_relative_to(tree.root / "src")
            tree.check(result)
            with pytest.raises(SystemExit, match="not in the copy"):
                elsewhere.check(result)
        with pytest.raises(SystemExit, match="did not report"):
            this.check({"rate": 1.0})
    assert not this.root.exists() and not other.root.exists()


def test_the_verdict_says_within_noise_only_when_the_ranges_overlap() -> None:
    """Overlapping min-max ranges are 'within noise'; apart, the side with the better
    values (higher or lower, as the figure says) is named; below three values, nothing."""
    revisions = _revisions()
    compare = revisions.Comparison
    assert revisions.verdict(compare("rate", True, [10, 12, 14], [13, 15, 16])) == "within noise"
    assert revisions.verdict(compare("rate", True, [20, 21, 22], [10, 11, 12])) == "better"
    assert revisions.verdict(compare("ms", False, [20, 21, 22], [10, 11, 12])) == "worse"
    assert revisions.verdict(compare("ms", False, [1, 2, 3], [10, 11, 12])) == "better"
    assert revisions.verdict(compare("rate", True, [20, 21], [10, 11])) == ""
