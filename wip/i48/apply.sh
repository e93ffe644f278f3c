#!/bin/bash
# apply.sh REPO: move the private modules into tier folders, install the contracts, format
set -euo pipefail
R=$(cd "$1" && pwd)
python3 /work/tools/move_tiers.py "$R"
python3 - "$R" <<'PY'
import sys
p = sys.argv[1] + "/pyproject.toml"
s = open(p).read()
i = s.index("[tool.importlinter]")
open(p, "w").write(s[:i] + open("/work/tools/importlinter.toml").read())
PY
cd "$R"
.venv/bin/ruff check --fix -q src tests bench examples || true
.venv/bin/ruff format -q src tests bench examples
