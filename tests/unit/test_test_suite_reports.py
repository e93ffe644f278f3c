"""A newcomer's ``pytest`` says why tests were skipped, and what to install for them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_summary_names_each_skip_reason_with_the_projects_options(tmp_path: Path) -> None:
    (tmp_path / "test_skipping.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('n', range(3))\n"
        "def test_needs_something(n):\n"
        "    pytest.skip('set SOMETHING_URL to run')\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"),
         "--rootdir", str(tmp_path), "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SKIPPED [3]" in result.stdout and "set SOMETHING_URL to run" in result.stdout


def _browser_test() -> ModuleType:
    path = ROOT / "tests" / "acceptance" / "browser.py"  # what every browser test uses
    spec = importlib.util.spec_from_file_location("dashboard_browser_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_browser_test_says_to_install_chromium_when_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = _browser_test()
    monkeypatch.setattr(browser, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"apt-get install chromium"):
        browser.need_chromium()
    monkeypatch.setenv("CI", "true")  # CI fails instead, saying the same
    with pytest.raises(pytest.fail.Exception, match=r"apt-get install chromium"):
        browser.need_chromium()
